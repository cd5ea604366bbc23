"""Correction spans: several edits in one text, overlaps, offset mapping, annotations."""

from __future__ import annotations

import pytest

from guardrail.correction.annotate import annotation_edits, removal_edits
from guardrail.correction.edits import Edit, OffsetMap, apply_edits, resolve_overlaps
from guardrail.correction.factual import factual_edits
from guardrail.report import (
    ClaimValidation,
    CorrectionType,
    ExtractedClaim,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    Span,
    ValidationStatus,
)

TEXT = "Teh email is a@x.org. He joined in 2019 and works in Marketing."


def _claim(
    text: str, obj: str, status: ValidationStatus, kb: str | None, conf: float = 1.0
) -> ClaimValidation:
    start = TEXT.index(text)
    o_start = TEXT.index(obj, start)
    return ClaimValidation(
        claim=ExtractedClaim(
            text=text,
            subject="John Smith",
            predicate="x",
            object=obj,
            span=Span(start=start, end=start + len(text)),
            object_span=Span(start=o_start, end=o_start + len(obj)),
        ),
        status=status,
        confidence=conf,
        kb_value=kb,
    )


def test_several_edits_keep_spans_right() -> None:
    edits = [
        Edit(0, 3, "The"),  # shorter → longer would shift everything after it
        Edit(13, 20, "john.smith@company.com"),
        Edit(35, 39, "2020"),
        Edit(53, 62, "Engineering"),
        Edit(62, 62, " [unverified]"),  # insertion right after a replacement
    ]
    out = apply_edits(TEXT, edits)
    assert out == (
        "The email is john.smith@company.com. He joined in 2020 and works in "
        "Engineering [unverified]."
    )
    # the order the edits are given in does not matter
    assert apply_edits(TEXT, list(reversed(edits))) == out
    mapping = OffsetMap(edits)
    he = TEXT.index("He")
    assert out[mapping.map(he) : mapping.map(he) + 2] == "He"
    assert out[mapping.map(35) : mapping.map(35) + 4] == "2020"


def test_overlapping_edits_are_rejected_or_resolved_by_priority() -> None:
    a, b = Edit(0, 5, "X", priority=1), Edit(3, 8, "Y", priority=3)
    with pytest.raises(ValueError, match="overlapping"):
        apply_edits(TEXT, [a, b])
    assert resolve_overlaps([a, b]) == [b]
    # two insertions at the same point overlap; an insertion at a boundary does not
    assert Edit(4, 4, "i").overlaps(Edit(4, 4, "j"))
    assert not Edit(5, 5, "i").overlaps(Edit(0, 5, "r"))
    with pytest.raises(ValueError):
        Edit(5, 3, "bad")


def test_factual_edits_respect_confidence_and_span() -> None:
    factual = FactualValidationResult(
        claim_validations=[
            _claim(
                "Teh email is a@x.org", "a@x.org", ValidationStatus.CONTRADICTED, "b@y.com", 1.0
            ),
            _claim("He joined in 2019", "2019", ValidationStatus.CONTRADICTED, "2020", 0.6),
            _claim("works in Marketing", "Marketing", ValidationStatus.VERIFIED, "Marketing"),
        ]
    )
    edits = factual_edits(TEXT, factual, min_confidence=0.9)
    assert [(e.start, e.end, e.replacement) for e in edits] == [(13, 20, "b@y.com")]
    correction = edits[0].tag
    assert correction.type is CorrectionType.FACTUAL  # type: ignore[attr-defined]
    assert TEXT[correction.span.start : correction.span.end] == "a@x.org"  # type: ignore[attr-defined]
    # the low-confidence contradiction is annotated instead, at the end of its claim
    notes = annotation_edits(TEXT, factual, [], [(13, 20)], 0.5)
    assert len(notes) == 1
    assert notes[0].start == TEXT.index("2019") + 4
    assert "the record says 2020" in notes[0].replacement


def test_annotations_merge_and_skip_fixed_spans() -> None:
    factual = FactualValidationResult(
        claim_validations=[
            _claim("works in Marketing", "Marketing", ValidationStatus.UNVERIFIABLE, None)
        ]
    )
    span = Span(start=TEXT.index("Marketing"), end=TEXT.index("Marketing") + 9)
    flags = [
        HallucinationFlag(
            type=HallucinationType.UNSUPPORTED_CLAIM,
            span=span,
            content="Marketing",
            confidence=0.7,
            severity=0.5,
        ),
        HallucinationFlag(
            type=HallucinationType.FABRICATED_FACT,
            span=Span(start=0, end=3),
            content="Teh",
            confidence=0.4,
            severity=1.0,  # below the annotation threshold
        ),
    ]
    notes = annotation_edits(TEXT, factual, flags, [], 0.5)
    assert len(notes) == 1  # both notes end at the same point: one bracket
    out = apply_edits(TEXT, notes)
    assert out.endswith("Marketing [unverified; possible hallucination: unsupported claim].")
    # a flag on a span already corrected is not annotated
    assert annotation_edits(TEXT, None, flags[:1], [(span.start, span.end)], 0.5) == []


def test_removal_of_a_severely_flagged_sentence() -> None:
    first_end = TEXT.index(". ") + 1
    sentences = [(0, first_end), (first_end + 1, len(TEXT))]
    flag = HallucinationFlag(
        type=HallucinationType.CONTRADICTS_FACT,
        span=Span(start=23, end=39),
        content="x",
        confidence=0.95,
        severity=1.0,
    )
    edits = removal_edits(TEXT, sentences, [flag], removal_confidence=0.9)
    assert apply_edits(TEXT, edits) == "Teh email is a@x.org."
    assert edits[0].tag.type is CorrectionType.REMOVAL  # type: ignore[attr-defined]
    weak = flag.model_copy(update={"confidence": 0.6})
    assert removal_edits(TEXT, sentences, [weak], removal_confidence=0.9) == []


# --- repairs from the evidence: the article agrees, a verified repair settles its claim -------


def _repair(text: str, old: str, new: str) -> Edit:
    start = text.index(old)
    return Edit(start, start + len(old), new, 3)


def test_the_article_before_a_repaired_word_agrees_with_the_repair() -> None:
    from guardrail.correction.spelling import GRAMMAR_PRIORITY, articles_for_repairs

    text = "It went public through a process called an NYSE, or an offering."
    stale = Edit(text.index("an NYSE"), text.index("an NYSE") + 2, "a", GRAMMAR_PRIORITY)
    kept = articles_for_repairs(text, [stale], [_repair(text, "NYSE", "IPO")])
    assert kept == []  # "an" agrees with "IPO": the edit judged "NYSE" is dropped
    text = "She ate a pear before lunch."
    [fix] = articles_for_repairs(text, [], [_repair(text, "pear", "apple")])
    assert (text[fix.start : fix.end], fix.replacement) == ("a", "an")
    assert apply_edits(text, [fix, _repair(text, "pear", "apple")]) == (
        "She ate an apple before lunch."
    )


def _flag(
    kind: HallucinationType, claim: int, content: str = "x", confidence: float = 0.9
) -> HallucinationFlag:
    return HallucinationFlag(
        type=kind, span=Span(start=0, end=1), content=content, confidence=confidence,
        severity=0.5, claim_index=claim,
    )  # fmt: skip


def test_a_verified_repair_settles_its_claims_not_supported_flags_only() -> None:
    from guardrail.correction.factual import unsettled
    from guardrail.report import Correction

    flags = [
        _flag(HallucinationType.UNSUPPORTED_CLAIM, 0),
        _flag(HallucinationType.FABRICATED_FACT, 0, "2016"),
        _flag(HallucinationType.WRONG_ATTRIBUTE, 0, "Acme"),  # a finding of its own
        _flag(HallucinationType.FABRICATED_FACT, 1, "2017"),  # another claim
        # a date finding only as sure as the claim's own doubt: no finding on a supported claim
        _flag(HallucinationType.TEMPORAL_ERROR, 0, "1938", confidence=0.75),
        _flag(HallucinationType.TEMPORAL_ERROR, 0, "1939"),  # a sure one is a finding of its own
    ]

    def fix(verified: bool | None) -> Correction:
        return Correction(
            type=CorrectionType.FACTUAL, span=Span(start=0, end=1), original="Bob",
            replacement="Alice", confidence=0.8, source="evidence", claim_index=0,
            verified=verified,
        )  # fmt: skip

    assert [f.content for f in unsettled(flags, [fix(True)], 0.9)] == ["Acme", "2017", "1939"]
    assert unsettled(flags, [fix(False)], 0.9) == flags
    assert unsettled(flags, [fix(None)], 0.9) == flags


def test_a_repair_is_rechecked_as_the_claim_with_every_repair_inside_it() -> None:
    from guardrail.report import Claim, Correction
    from guardrail.stages.correction import _corrected

    response = "Intro. Bob Jones founded Acme in 1997 in Boston. Outro."
    start = response.index("Bob")
    claim = Claim(text="x", span=Span(start=start, end=response.index(" Outro")))

    def fix(old: str, new: str, kind: CorrectionType = CorrectionType.FACTUAL) -> Correction:
        at = response.index(old)
        return Correction(
            type=kind, span=Span(start=at, end=at + len(old)), original=old, replacement=new,
            confidence=0.8, source="evidence",
        )  # fmt: skip

    fixes = [fix("1997", "1998"), fix("Bob Jones", "Alice Smith"), fix("Outro", "End")]
    fixes.append(fix("Boston", "", CorrectionType.REMOVAL))  # not a value repair
    assert _corrected(response, claim, fixes) == "Alice Smith founded Acme in 1998 in Boston."


def test_a_rechecked_claim_counts_only_supported_and_sure_enough() -> None:
    from guardrail.report import Claim, ClaimStatus, VerifierScores
    from guardrail.stages.correction import _supported_at

    def judged(status: ClaimStatus, p: float | None, entailment: float = 0.9) -> Claim:
        scores = VerifierScores(entailment=entailment, neutral=0.05, contradiction=0.05)
        return Claim(
            text="x", span=Span(start=0, end=1), status=status, p_supported=p, scores=scores
        )

    assert _supported_at(judged(ClaimStatus.SUPPORTED, 0.7), 0.5)
    assert not _supported_at(judged(ClaimStatus.SUPPORTED, 0.45), 0.5)
    assert not _supported_at(judged(ClaimStatus.UNSUPPORTED, 0.9), 0.5)
    assert _supported_at(judged(ClaimStatus.SUPPORTED, None, 0.6), 0.5)  # uncalibrated
    assert not _supported_at(judged(ClaimStatus.SUPPORTED, None, 0.4), 0.5)


def test_a_claim_a_verified_repair_settled_counts_as_supported() -> None:
    from guardrail.inputs import GuardInput
    from guardrail.report import Claim, Correction
    from guardrail.stages.base import PipelineState
    from guardrail.stages.correction import _repaired

    response = "Maria Garcia leads Atlas. It started in 2019."
    claims = [
        Claim(text="Maria Garcia leads Atlas.", span=Span(start=0, end=25)),
        Claim(text="It started in 2019.", span=Span(start=26, end=45)),
    ]

    def fix(claim: int, verified: bool | None, start: int, end: int) -> Correction:
        return Correction(
            type=CorrectionType.FACTUAL, span=Span(start=start, end=end),
            original=response[start:end], replacement="x", confidence=0.8, source="evidence",
            claim_index=claim, verified=verified,
        )  # fmt: skip

    state = PipelineState(input=GuardInput(response=response), claims=claims)
    state.repairs = [fix(0, True, 0, 12), fix(1, False, 40, 44)]
    assert _repaired(state) == [claims[0].span]  # the refused repair settles nothing


def test_a_repaired_claim_is_judged_as_any_claim_names_checked_again() -> None:
    from guardrail.config import GuardrailConfig
    from guardrail.inputs import GuardInput
    from guardrail.report import ClaimStatus
    from guardrail.stages.base import Backends, PipelineState, Resources
    from guardrail.stages.hallucination import HallucinationStage
    from guardrail.verifiers.scripted import ScriptedVerifier

    right = "Alice Smith founded the rocket maker in a small garage."
    wrong = "Bob Jones founded the rocket maker in a small garage."  # a name told of another fact
    verifier = ScriptedVerifier({(None, right): "entailment", (None, wrong): "entailment"})
    config = GuardrailConfig()
    stage = HallucinationStage(config, Resources(config, Backends(verifier=verifier)))
    evidence = f"{right} Years later Bob Jones joined the firm as its cook."
    data = GuardInput(response="Carol Wu founded the rocket maker.", passages=[evidence])
    state = PipelineState(input=data, language="en")
    ok, bad = stage.judge_texts(state, [right, wrong])
    assert (ok.text, ok.status) == (right, ClaimStatus.SUPPORTED)
    # the verifier is fooled; the name check, run again on the repaired claim, is not
    assert bad.text == wrong and bad.status is not ClaimStatus.SUPPORTED
    assert stage.judge_texts(state, []) == []


def test_a_repair_the_recheck_refuses_is_not_put_in() -> None:
    from guardrail.config import GuardrailConfig
    from guardrail.inputs import GuardInput
    from guardrail.report import HALLUCINATION_SEVERITY, Claim, ClaimStatus, EvidencePointer
    from guardrail.stages.base import Backends, PipelineState, Resources
    from guardrail.stages.correction import RepairStage
    from guardrail.verifiers.scripted import ScriptedVerifier

    response, evidence = "Tom Berg leads the Atlas project.", "Priya Raman leads the Atlas project."
    claim = Claim(
        text=response, span=Span(start=0, end=len(response)), status=ClaimStatus.UNSUPPORTED,
        evidence=EvidencePointer(passage_index=0, snippet=evidence),
    )  # fmt: skip
    flag = HallucinationFlag(
        type=HallucinationType.WRONG_ATTRIBUTE, span=Span(start=0, end=8), content="Tom Berg",
        confidence=0.6, severity=HALLUCINATION_SEVERITY[HallucinationType.WRONG_ATTRIBUTE],
        claim_index=0, evidence=evidence, replacement="Priya Raman", evidence_value="Priya Raman",
    )  # fmt: skip
    data = GuardInput(query="Who leads Atlas?", response=response, passages=[evidence])
    verifier = ScriptedVerifier({(None, evidence): "entailment"})

    def repair(floor: float) -> tuple[list[str], list[bool | None]]:
        config = GuardrailConfig.load({"decision": {"recheck_min_entailment": floor}})
        stage = RepairStage(config, Resources(config, Backends(verifier=verifier)))
        state = PipelineState(input=data, language="en", claims=[claim], flags=[flag])
        update = stage.run(state)
        assert update.repair_edits is not None and update.repairs is not None
        put_in = [e.replacement for e in update.repair_edits.edits]
        return put_in, [c.verified for c in update.repairs if c.type is CorrectionType.FACTUAL]

    assert repair(0.0) == (["Priya Raman"], [True])
    assert repair(0.999) == ([], [False])  # refused: the answer keeps its words
