"""Claim-level delivery: each claim supported, uncertain, repaired or removed, and the
answer's action following from its claims. Pure functions, no model."""

from __future__ import annotations

import pytest

from guardrail.config import DecisionConfig, GuardrailConfig, HandlingThresholds
from guardrail.correction.annotate import annotation_edits, planned_removal_edits
from guardrail.correction.edits import apply_edits
from guardrail.decision import (
    Checked,
    claim_guidance,
    claim_outcomes,
    decide,
    find_problems,
    human_review_reason,
    mark_fixes,
    plan_delivery,
    remove_below,
    unmarked_unsupported,
)
from guardrail.hallucination import flags as build
from guardrail.inputs import GuardInput, Passage
from guardrail.pipeline import unchecked_reasons
from guardrail.report import (
    CalibrationUsed,
    Claim,
    ClaimOutcome,
    ClaimStatus,
    ClaimValidation,
    Correction,
    CorrectionType,
    ExtractedClaim,
    FactualStats,
    FactualValidationResult,
    QUDRelevance,
    Span,
    StageRecord,
    StageStatus,
    ValidationStatus,
    Verdict,
    VerdictLabel,
    VerifierScores,
)
from guardrail.stages.base import PipelineState
from guardrail.stages.hallucination import readable_passages
from guardrail.verifiers.base import NLIPrediction

T = HandlingThresholds()
SENTENCES = [
    "AlphaCodium is a code generation method.",
    "It was developed by CodiumAI.",
    "It uses a multi-stage flow.",
    "It was acquired by Google in 2024.",
]
TEXT = " ".join(SENTENCES)
CUT = 0.25  # the remove_below the tests assume (the shipped value is checked separately)


def claims_with(p: list[float | None], status: list[ClaimStatus] | None = None) -> list[Claim]:
    out, start = [], 0
    for i, s in enumerate(SENTENCES[: len(p)]):
        start = TEXT.index(s, start)
        st = (status or [])[i] if status else None
        if st is None:
            st = ClaimStatus.SUPPORTED if (p[i] or 0) >= 0.47 else ClaimStatus.UNSUPPORTED
        out.append(
            Claim(
                text=s,
                span=Span(start=start, end=start + len(s)),
                status=st,
                p_supported=p[i],
                scores=VerifierScores(entailment=p[i] or 0.0, neutral=0.0, contradiction=0.0),
            )
        )
        start += len(s)
    return out


def sentences() -> list[tuple[int, int]]:
    out, start = [], 0
    for s in SENTENCES:
        start = TEXT.index(s, start)
        out.append((start, start + len(s)))
        start += len(s)
    return out


def deliver(claims: list[Claim], **kw: object) -> tuple[object, object, str, list[Claim]]:
    """The decision as the pipeline makes it, on a text corrected by the plan."""
    config = DecisionConfig()
    verdict = Verdict(label=VerdictLabel.HALLUCINATION)
    problems = find_problems(claims, [], None, verdict, config, CUT)
    plan = plan_delivery(claims, mark_fixes(problems, []), remove=True)
    edits = planned_removal_edits(TEXT, sentences(), plan.removals)
    removed = [(e.start, e.end) for e in edits]
    notes = annotation_edits(TEXT, None, [], removed, 0.5, claim_notes=plan.notes)
    notes = [n for n in notes if not any(s <= n.start < e for s, e in removed)]
    corrections = [e.tag for e in [*edits, *notes] if isinstance(e.tag, Correction)]
    problems = mark_fixes(problems, corrections)
    outcomes = claim_outcomes(claims, corrections)
    checked = Checked(
        confidence=float(kw.pop("confidence", 0.8)),  # type: ignore[arg-type]
        problems=problems,
        claims=outcomes,
        coherence=None,
        factual=None,
        flags=[],
        corrections=corrections,
        unchecked=[],
        delivered_qud=kw.pop("qud", None),  # type: ignore[arg-type]
        original=TEXT,
        corrected=apply_edits(TEXT, edits),
    )
    rec, record = decide(checked, thresholds=T, **kw)  # type: ignore[arg-type]
    return rec, record, apply_edits(TEXT, [*edits, *notes]), outcomes


def test_the_shipped_calibration_carries_remove_below_under_the_threshold() -> None:
    claims = [Claim(text="x", span=Span(start=0, end=1))]
    [cut] = remove_below(GuardrailConfig(), None, claims)
    assert cut is not None and 0.0 < cut < 0.47
    config = GuardrailConfig.load({"decision": {"remove_below": 0.1}})
    assert remove_below(config, None, claims) == [0.1]


def test_the_decision_reads_the_calibration_the_hallucination_stage_recorded() -> None:
    """The cut-off is the one of the calibration that scored each claim: a claim a language
    router sent to another verifier is judged by that verifier's ``remove_below``."""
    claims = [
        Claim(text="x", span=Span(start=0, end=1)),
        Claim(text="y", span=Span(start=2, end=3)),
    ]
    used = CalibrationUsed(
        label="cal", threshold=0.5, remove_below=0.3, routed_remove_below={1: None}
    )
    assert remove_below(GuardrailConfig(), used, claims) == [0.3, None]
    config = GuardrailConfig.load({"decision": {"remove_below": 0.1}})
    assert remove_below(config, used, claims) == [0.1, 0.1]  # the config's own wins


def test_one_invented_sentence_is_removed_and_the_rest_delivered_unmarked() -> None:
    rec, record, text, outcomes = deliver(claims_with([0.9, 0.8, 0.7, 0.05]))
    assert rec.action == "correct_and_deliver"  # type: ignore[attr-defined]
    assert text == " ".join(SENTENCES[:3])
    assert [c.outcome for c in outcomes] == [ClaimOutcome.SUPPORTED] * 3 + [ClaimOutcome.REMOVED]
    assert record.removed_claims == 1 and record.kept_share == 0.75  # type: ignore[attr-defined]
    removal = [c for c in rec.corrections if c.type is CorrectionType.REMOVAL]  # type: ignore[attr-defined]
    assert len(removal) == 1 and removal[0].original.strip() == SENTENCES[3]
    assert "unsupported" in (removal[0].message or "")


def test_an_uncertain_claim_is_annotated_not_removed() -> None:
    rec, _, text, outcomes = deliver(claims_with([0.9, 0.8, 0.7, 0.35]))
    assert rec.action == "accept_with_flags"  # type: ignore[attr-defined]
    assert SENTENCES[3].rstrip(".") + " [uncertain" in text
    assert outcomes[3].outcome is ClaimOutcome.UNCERTAIN
    assert all(c.outcome is ClaimOutcome.SUPPORTED for c in outcomes[:3])


def test_two_removals_at_the_end_leave_no_trailing_space() -> None:
    rec, _, text, _ = deliver(claims_with([0.9, 0.8, 0.1, 0.1]))
    assert rec.action == "correct_and_deliver"  # type: ignore[attr-defined]
    assert text == " ".join(SENTENCES[:2])


def test_a_one_claim_wrong_answer_is_regenerated() -> None:
    claims = claims_with([0.05])
    rec, record, _, _ = deliver(claims)
    assert rec.action == "regenerate"  # type: ignore[attr-defined]
    assert record.kept_share == 0.0  # type: ignore[attr-defined]
    assert sum(SENTENCES[0] in item for item in rec.items) == 1  # type: ignore[attr-defined]


def test_too_much_removed_or_the_question_lost_regenerates() -> None:
    rec, record, _, _ = deliver(claims_with([0.9, 0.1, 0.1, 0.1]))
    assert rec.action == "regenerate" and "min_kept_share" in record.gate  # type: ignore[attr-defined]
    lost = QUDRelevance(score=0.1, addresses_qud=False)
    rec, record, _, _ = deliver(claims_with([0.9, 0.8, 0.7, 0.05]), qud=lost)
    assert rec.action == "regenerate" and "does not answer" in record.gate  # type: ignore[attr-defined]
    assert "Please directly address the user's question." in rec.items  # type: ignore[attr-defined]
    # below the regenerate band the same answer goes to a person
    rec, _, _, _ = deliver(claims_with([0.9, 0.1, 0.1, 0.1]), confidence=0.2)
    assert rec.action == "human_review"  # type: ignore[attr-defined]


def test_all_or_nothing_granularity_regenerates_what_claim_level_delivers() -> None:
    claims = claims_with([0.9, 0.8, 0.7, 0.35])
    config = DecisionConfig(granularity="answer")
    verdict = Verdict(label=VerdictLabel.HALLUCINATION)
    problems = find_problems(claims, [], None, verdict, config)
    assert [p.claim_index for p in problems] == [3]
    checked = Checked(
        confidence=0.8, problems=problems, claims=claim_outcomes(claims, []), coherence=None,
        factual=None, flags=[], corrections=[], unchecked=[],
    )  # fmt: skip
    rec, record = decide(checked, thresholds=T, granularity="answer")
    assert rec.action == "regenerate" and record.granularity == "answer"


def test_nothing_flagged_follows_the_seed_bands_and_says_when_it_overrides() -> None:
    rec, record, text, _ = deliver(claims_with([0.9, 0.8, 0.7, 0.6]), confidence=0.95)
    assert rec.action == "accept" and text == TEXT  # type: ignore[attr-defined]
    assert record.overrides_band is None  # type: ignore[attr-defined]
    rec, record, _, _ = deliver(claims_with([0.9, 0.8, 0.7, 0.05]), confidence=0.35)
    assert rec.action == "correct_and_deliver"  # type: ignore[attr-defined]
    assert "regenerate band" in (record.overrides_band or "")  # type: ignore[attr-defined]


def test_an_unsupported_claim_is_never_an_unmarked_supported_outcome() -> None:
    claims = claims_with([0.9, 0.3])
    assert [c.outcome for c in claim_outcomes(claims, [])] == [
        ClaimOutcome.SUPPORTED,
        ClaimOutcome.UNCERTAIN,
    ]
    assert unmarked_unsupported(claims, []) == [1]


def test_guidance_names_each_claim_once() -> None:
    claims = claims_with([0.05])
    pred = NLIPrediction(entailment=0.05, neutral=0.9, contradiction=0.05)
    flags = [build.unsupported_flag(TEXT, claims[0], 0, pred, 0.47, "", calibrated=True)]
    problems = find_problems(claims, flags, None, Verdict(label=VerdictLabel.HALLUCINATION),
                             DecisionConfig(), CUT)  # fmt: skip
    items = claim_guidance(problems, [claims[0]])
    assert sum(SENTENCES[0] in i for i in items) == 1


def test_the_threshold_message_compares_p_supported_with_the_claim_threshold() -> None:
    claim = claims_with([0.3])[0]
    pred = NLIPrediction(entailment=0.64, neutral=0.3, contradiction=0.06)
    flag = build.unsupported_flag(TEXT, claim, 0, pred, 0.47, "", calibrated=True)
    assert "p(supported) 0.30 < claim threshold 0.47" in flag.explanation
    assert "entailment 0.64" in flag.explanation and "0.64 <" not in flag.explanation
    flag = build.unsupported_flag(TEXT, claim, 0, pred, 0.7, "", calibrated=False)
    assert "best entailment 0.64 < T(rs) 0.70" in flag.explanation


@pytest.mark.parametrize("confidence", [0.98, 0.6])
def test_a_human_review_reason_never_calls_a_high_confidence_too_low(confidence: float) -> None:
    reason = human_review_reason(confidence, None, None, [], ["no evidence given"], thresholds=T)
    assert reason.startswith("Could not check the answer: no evidence given")
    assert "too low" not in reason and "below the regenerate band" not in reason
    low = human_review_reason(0.1, None, None, [], thresholds=T)
    assert "below the regenerate band" in low


def test_an_unverified_answer_with_a_kb_that_lacks_the_entity_is_not_delivered() -> None:
    """Nothing checkable (the KB lacks the entity, no passages) → human review."""
    response = "John's email is john.s@company.org"
    claim = ExtractedClaim(
        text=response, span=Span(start=0, end=len(response)), subject="John",
        predicate="email", object="john.s@company.org",
    )  # fmt: skip
    factual = FactualValidationResult(
        claim_validations=[ClaimValidation(claim=claim, status=ValidationStatus.UNVERIFIABLE)],
        stats=FactualStats(),
        score=0.5,
    )
    state = PipelineState(
        input=GuardInput(query="What is John's email?", response=response),
        factual=factual,
        verdict=Verdict(label=VerdictLabel.UNVERIFIED, reason="no evidence given"),
        stages=[
            StageRecord(name="fact_validation", status=StageStatus.RAN),
            StageRecord(name="hallucination", status=StageStatus.RAN),
        ],
    )
    reasons = unchecked_reasons(state, GuardrailConfig())
    assert reasons == ["no evidence given"]


class _EnglishOnly:
    name = "english-only"

    def covers(self, language: str | None) -> bool:
        return language == "en"


def test_evidence_in_a_language_the_verifier_does_not_read_makes_claims_unverified() -> None:
    data = GuardInput(
        query="When is the meeting?",
        response="The meeting is at 2pm.",
        passages=[Passage(text="会议定于周一下午两点在四楼会议室举行，约翰会出席。")],
    )
    kept, reason = readable_passages(data, _EnglishOnly(), "en")
    assert kept.passages == [] and "'zh'" in reason and "does not read" in reason
    both = data.model_copy(
        update={"passages": [*data.passages, Passage(text="The meeting is on Monday at 2pm.")]}
    )
    kept, _ = readable_passages(both, _EnglishOnly(), "en")
    assert [p.text for p in kept.passages] == ["The meeting is on Monday at 2pm."]


def test_a_supported_claim_is_not_annotated_unverified_because_the_kb_lacks_it() -> None:
    response = "The meeting is at 2pm."
    span = Span(start=0, end=len(response))
    claim = ExtractedClaim(text=response, span=span, subject="meeting", predicate="time",
                           object="2pm")  # fmt: skip
    factual = FactualValidationResult(
        claim_validations=[ClaimValidation(claim=claim, status=ValidationStatus.UNVERIFIABLE)],
        stats=FactualStats(),
        score=0.5,
    )
    assert annotation_edits(response, factual, [], [], 0.5, supported=[span]) == []
    assert [e.replacement for e in annotation_edits(response, factual, [], [], 0.5)] == [
        " [unverified]"
    ]
