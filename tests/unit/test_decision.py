"""The decision: verdict, flags and recommendation agree; repairs are required before delivery."""

from __future__ import annotations

import math

import pytest

from guardrail.config import DecisionConfig, HandlingThresholds
from guardrail.decision import (
    Checked,
    claim_outcomes,
    consistent_verdict,
    decide,
    find_problems,
    mark_fixes,
)
from guardrail.errors import ConfigError
from guardrail.hallucination import flags as build
from guardrail.hallucination.calibration import (
    FEATURES,
    ClaimCalibrator,
    EvidenceIndex,
    claim_features,
    fit_logistic,
)
from guardrail.report import (
    Action,
    Claim,
    ClaimStatus,
    ClaimValidation,
    CoherenceIssue,
    CoherenceIssueType,
    CoherenceResult,
    Correction,
    CorrectionType,
    ExtractedClaim,
    FactualValidationResult,
    HallucinationType,
    Span,
    ValidationStatus,
    Verdict,
    VerdictLabel,
    VerifierScores,
)
from guardrail.verifiers.base import NLIPrediction

RESPONSE = "The paper was published in 2021. It has 12 authors."
T = HandlingThresholds()
D = DecisionConfig()


def claim(text: str, status: ClaimStatus, e: float, c: float, p: float | None = None) -> Claim:
    start = RESPONSE.index(text)
    return Claim(
        text=text,
        span=Span(start=start, end=start + len(text)),
        status=status,
        scores=VerifierScores(entailment=e, neutral=1 - e - c, contradiction=c),
        p_supported=p,
    )


S1 = "The paper was published in 2021."
S2 = "It has 12 authors."


def run(
    claims: list[Claim],
    verdict: VerdictLabel,
    confidence: float,
    corrections: list[Correction] | None = None,
    factual: FactualValidationResult | None = None,
    flags: list | None = None,
    unchecked: list[str] | None = None,
    granularity: str = "answer",
):
    """The decision as the pipeline makes it (these tests pin the all-or-nothing rule; the
    claim-level rule is in test_claim_delivery.py)."""
    config = DecisionConfig(granularity=granularity)  # type: ignore[arg-type]
    v = Verdict(label=verdict)
    problems = mark_fixes(find_problems(claims, flags or [], factual, v, config), corrections or [])
    rec, record = decide(
        Checked(
            confidence=confidence,
            problems=problems,
            claims=claim_outcomes(claims, corrections or []),
            coherence=None,
            factual=factual,
            flags=flags or [],
            corrections=corrections or [],
            unchecked=unchecked or [],
        ),
        thresholds=T,
        granularity=granularity,
    )
    return rec, record


@pytest.mark.parametrize("confidence", [0.95, 0.8, 0.6, 0.4, 0.2])
def test_supported_answer_with_no_finding_is_accepted_at_any_confidence(confidence: float) -> None:
    """An action never names what the report does not hold: every claim supported and no check
    found anything is ``accept``, whatever the confidence arithmetic gives (it stays on the
    report, and the record says which band it fell in)."""
    claims = [
        claim(S1, ClaimStatus.SUPPORTED, 0.9, 0.01, 0.9),
        claim(S2, ClaimStatus.SUPPORTED, 0.8, 0.1, 0.8),
    ]
    rec, record = run(claims, VerdictLabel.VERIFIED, confidence)
    assert rec.action == "accept"
    assert record.problems == [] and record.supported_fraction == 1.0
    assert "every claim supported and nothing found" in record.gate
    assert record.band == Action(decide_band(confidence))


def decide_band(confidence: float) -> str:
    from guardrail.decision import band_of

    return band_of(confidence, T).value


def _with_issue(span: Span | None) -> Checked:
    claims = [claim(S1, ClaimStatus.SUPPORTED, 0.9, 0.01, 0.9)]
    issue = CoherenceIssue(
        type=CoherenceIssueType.TOPIC_DRIFT, description="drifts", severity=0.4, span=span
    )
    return Checked(
        confidence=0.8,
        problems=[],
        claims=claim_outcomes(claims, []),
        coherence=CoherenceResult(score=0.5, issues=[issue]),
        factual=None,
        flags=[],
        corrections=[],
        unchecked=[],
    )


def test_accept_with_flags_carries_what_it_flags() -> None:
    """With a finding the confidence bands decide; ``accept_with_flags`` then names the issue's
    span, and with nothing the user could see flagged it is ``accept``."""
    span = Span(start=0, end=len(S1))
    rec, _ = decide(_with_issue(span), thresholds=T)
    assert rec.action == "accept_with_flags" and rec.flags == [span]
    rec, record = decide(_with_issue(None), thresholds=T)
    assert rec.action == "accept" and "nothing to flag" in record.gate
    assert record.band is Action.ACCEPT_WITH_FLAGS


@pytest.mark.parametrize("confidence", [0.99, 0.92, 0.8, 0.6, 0.45])
def test_unsupported_claim_is_never_delivered_as_is(confidence: float) -> None:
    claims = [
        claim(S1, ClaimStatus.SUPPORTED, 0.9, 0.01, 0.9),
        claim(S2, ClaimStatus.UNSUPPORTED, 0.2, 0.1, 0.2),
    ]
    rec, record = run(claims, VerdictLabel.HALLUCINATION, confidence)
    assert rec.action == "regenerate"
    assert any(S2 in item for item in rec.items), rec.items  # the guidance names the claim
    assert [p.kind for p in record.problems] == ["unsupported"]
    assert record.supported_fraction == 0.5


def test_very_low_confidence_with_problems_goes_to_a_person() -> None:
    claims = [
        claim(S1, ClaimStatus.CONTRADICTED, 0.05, 0.9, 0.05),
        claim(S2, ClaimStatus.UNSUPPORTED, 0.1, 0.2, 0.1),
    ]
    rec, record = run(claims, VerdictLabel.HALLUCINATION, 0.2)
    assert rec.action == "human_review" and "unrepaired" in rec.reason
    assert "below the regenerate band" in record.gate


def test_a_one_claim_wrong_answer_is_regenerated_below_the_band() -> None:
    """Its confidence is that claim's score: the guidance names what to fix, so no person is
    needed — unless the answer is also incoherent."""
    claims = [claim(S1, ClaimStatus.CONTRADICTED, 0.05, 0.9, 0.05)]
    rec, record = run(claims, VerdictLabel.HALLUCINATION, 0.2)
    assert rec.action == "regenerate" and any(S1 in item for item in rec.items), rec
    assert "the guidance names it" in record.gate
    assert record.band is Action.HUMAN_REVIEW and record.overrides_band


def test_correct_and_deliver_only_when_every_problem_is_repaired() -> None:
    claims = [
        claim(S1, ClaimStatus.CONTRADICTED, 0.05, 0.9, 0.05),
        claim(S2, ClaimStatus.SUPPORTED, 0.9, 0.0, 0.9),
    ]
    year = Span(start=RESPONSE.index("2021"), end=RESPONSE.index("2021") + 4)
    fix = Correction(
        type=CorrectionType.FACTUAL,
        span=year,
        original="2021",
        replacement="2023",
        source="evidence",
        claim_index=0,
        verified=True,
    )
    rec, record = run(claims, VerdictLabel.HALLUCINATION, 0.7, corrections=[fix])
    assert rec.action == "correct_and_deliver" and rec.corrections == [fix]
    assert record.problems[0].fixed_by == "evidence (re-checked)"
    # the same edit, not confirmed by the re-check, repairs nothing
    unconfirmed = fix.model_copy(update={"verified": False})
    assert (
        run(claims, VerdictLabel.HALLUCINATION, 0.7, corrections=[unconfirmed])[0].action
        == "regenerate"
    )
    # a spelling fix elsewhere is no repair either
    spelling = Correction(
        type=CorrectionType.SPELLING, span=Span(start=0, end=3), original="The", replacement="The"
    )
    assert (
        run(claims, VerdictLabel.HALLUCINATION, 0.95, corrections=[spelling])[0].action
        == "regenerate"
    )


def test_removal_repairs_the_removed_sentence() -> None:
    claims = [
        claim(S1, ClaimStatus.SUPPORTED, 0.9, 0.0, 0.9),
        claim(S2, ClaimStatus.UNSUPPORTED, 0.1, 0.1, 0.1),
    ]
    start = RESPONSE.index(S2)
    removal = Correction(
        type=CorrectionType.REMOVAL,
        span=Span(start=start - 1, end=len(RESPONSE)),
        original=" " + S2,
        replacement="",
    )
    rec, record = run(claims, VerdictLabel.HALLUCINATION, 0.6, corrections=[removal])
    assert rec.action == "correct_and_deliver" and record.problems[0].fixed_by == "removal"


def kb_factual(confidence: float) -> FactualValidationResult:
    obj = Span(start=RESPONSE.index("12"), end=RESPONSE.index("12") + 2)
    extracted = ExtractedClaim(
        text=S2,
        subject="paper",
        predicate="has",
        object="12",
        span=claim(S2, ClaimStatus.SUPPORTED, 1, 0).span,
        object_span=obj,
        attribute="authors",
    )
    validation = ClaimValidation(
        claim=extracted, status=ValidationStatus.CONTRADICTED, confidence=confidence, kb_value="3"
    )
    return FactualValidationResult(score=0.5, claim_validations=[validation])


def test_kb_contradiction_overrides_a_verified_evidence_verdict() -> None:
    claims = [
        claim(S1, ClaimStatus.SUPPORTED, 0.9, 0.0, 0.9),
        claim(S2, ClaimStatus.SUPPORTED, 0.9, 0.0, 0.9),
    ]
    factual = kb_factual(0.95)
    v = Verdict(label=VerdictLabel.VERIFIED, reason="evidence fine")
    problems = find_problems(claims, [], factual, v, D)
    # one wrong value, one finding (fact validation's), one problem
    value = factual.claim_validations[0].claim.object_span
    assert [(p.kind, p.span, p.claim_index) for p in problems] == [("kb_contradiction", value, 1)]
    assert consistent_verdict(v, problems).label is VerdictLabel.HALLUCINATION
    rec, _ = run(claims, VerdictLabel.VERIFIED, 0.95, factual=factual)
    assert rec.action == "regenerate"  # never accepted while the KB says otherwise
    kb_fix = Correction(
        type=CorrectionType.FACTUAL,
        span=value,
        original="12",
        replacement="3",
        source="knowledge base (kb.json)",
        verified=None,
    )
    rec, record = run(claims, VerdictLabel.VERIFIED, 0.95, factual=factual, corrections=[kb_fix])
    assert rec.action == "correct_and_deliver", record


def test_weak_kb_conflict_does_not_block() -> None:
    claims = [claim(S2, ClaimStatus.SUPPORTED, 0.9, 0.0, 0.9)]
    assert find_problems(claims, [], kb_factual(0.5), Verdict(label=VerdictLabel.VERIFIED), D) == []


def test_flags_on_unchecked_claims_do_not_turn_unverified_into_hallucination() -> None:
    c = claim(S1, ClaimStatus.UNVERIFIED, 0.0, 0.0)
    c.scores = None
    flag = build.nonexistent_entity_flags(RESPONSE, c, 0, ["nothing here"])
    assert flag and flag[0].type is HallucinationType.FABRICATED_FACT
    assert find_problems([c], flag, None, Verdict(label=VerdictLabel.UNVERIFIED), D) == []


def test_unchecked_answer_goes_to_human_review_first() -> None:
    claims = [claim(S1, ClaimStatus.SUPPORTED, 0.9, 0.0, 0.9)]
    rec, record = run(claims, VerdictLabel.VERIFIED, 0.99, unchecked=["stage hallucination failed"])
    assert rec.action == "human_review" and "fail-closed" in record.gate


# --- calibration --------------------------------------------------------------------------


def test_features_see_invented_specifics_and_unknown_words() -> None:
    index = EvidenceIndex.of(["The paper was published in 2023 by three authors."])
    pred = NLIPrediction(entailment=0.6, neutral=0.3, contradiction=0.1)
    ok = claim_features("The paper was published in 2023.", pred, 0.1, index)
    bad = claim_features("The paper was published in 2021 in Nature.", pred, 0.1, index)
    assert ok["missing_specific"] == 0.0 and ok["missing_content"] == 0.0
    assert bad["missing_specific"] >= 1.0 and bad["missing_content"] > 0.0
    assert set(ok) == set(FEATURES)
    assert math.isclose(ok["logit_entail"], math.log(0.6 / 0.4), abs_tol=1e-3)


def test_a_word_swapped_into_a_copied_sentence_is_new_to_its_window() -> None:
    # QAGS-style: the summary copies an evidence sentence but swaps its subject for a name
    # found elsewhere in the article, so the evidence as a whole knows every word.
    window = "A fan called for the removal of a Fabregas banner from the Ken Friar bridge."
    other = "Arsene Wenger said the club would review its policy on banners."
    index = EvidenceIndex.of([window, other])
    pred = NLIPrediction(entailment=0.87, neutral=0.05, contradiction=0.08)
    swapped = "Wenger called for the removal of a Fabregas banner from the Ken Friar bridge."
    copied = "A fan called for the removal of a Fabregas banner."
    f_swapped = claim_features(swapped, pred, 0.08, index, best_window=window)
    f_copied = claim_features(copied, pred, 0.08, index, best_window=window)
    assert f_swapped["missing_content"] == 0.0  # every word occurs somewhere in the evidence
    assert f_swapped["novel_best"] > 0.0 and f_copied["novel_best"] == 0.0
    assert claim_features(swapped, pred, 0.08, index)["novel_best"] == 0.0  # no window given
    cal = ClaimCalibrator.load()
    if cal.weights.get("novel_best"):
        assert cal.probability(f_swapped) < cal.probability(f_copied)


def test_a_claim_quoted_from_the_evidence_is_supported() -> None:
    index = EvidenceIndex.of(
        ["Claims must be submitted in Concur within 30 days.  Meals are paid."]
    )
    pred = NLIPrediction(entailment=0.3, neutral=0.3, contradiction=0.4)  # a confused verifier
    quoted = claim_features("claims must be submitted in Concur within 30 days", pred, 0.4, index)
    changed = claim_features("Claims must be submitted in Concur within 60 days.", pred, 0.4, index)
    cal = ClaimCalibrator.load()
    assert quoted["verbatim"] == 1.0 and cal.probability(quoted) >= 0.99
    assert changed["verbatim"] == 0.0 and cal.probability(changed) < cal.threshold


def test_a_quote_is_recognised_through_tokenised_evidence() -> None:
    # news and scraped text often come tokenised ("Non - binary", "2 - 0", "Tony 's")
    index = EvidenceIndex.of(
        [
            "Non - binary is a term used to describe people who do not consider themselves "
            "exclusively male or female . West Brom won 2 - 0 against Crystal Palace ."
        ]
    )
    pred = NLIPrediction(entailment=0.3, neutral=0.3, contradiction=0.4)
    quoted = (
        "Non-binary is a term used to describe people who do not consider themselves "
        "exclusively male or female."
    )
    assert claim_features(quoted, pred, 0.4, index)["verbatim"] == 1.0
    assert (
        claim_features("West Brom won 2-0 against Crystal Palace.", pred, 0.4, index)["verbatim"]
        == 1.0
    )
    # whole words only, and a changed word is not a quote
    assert claim_features("Brom won 2-0 against Crystal Pal.", pred, 0.4, index)["verbatim"] == 0.0
    assert (
        claim_features("West Brom won 3-0 against Crystal Palace.", pred, 0.4, index)["verbatim"]
        == 0.0
    )


def test_bundled_calibration_loads_and_is_monotone_in_entailment() -> None:
    cal = ClaimCalibrator.load()
    assert 0.0 < cal.threshold < 1.0 and set(cal.weights) <= set(FEATURES)
    base = dict.fromkeys(FEATURES, 0.0)
    low = cal.probability({**base, "logit_entail": -3.0})
    high = cal.probability({**base, "logit_entail": 3.0})
    assert 0.0 <= low < high <= 1.0


def test_bad_calibration_is_a_config_error(tmp_path) -> None:
    bad = tmp_path / "cal.json"
    bad.write_text('{"weights": {"nope": 1}, "bias": 0, "threshold": 0.5}')
    with pytest.raises(ConfigError, match="unknown features"):
        ClaimCalibrator.load(bad)
    with pytest.raises(ConfigError, match="not found"):
        ClaimCalibrator.load(tmp_path / "missing.json")


def test_fit_logistic_separates_and_orders_features() -> None:
    rows, labels = [], []
    for i in range(200):
        e = (i % 20) / 4.0 - 2.5
        missing = 1.0 if i % 3 == 0 else 0.0
        label = int(e - 2.0 * missing > 0)
        rows.append({"logit_entail": e, "missing_specific": missing})
        labels.append(label)
    weights, bias = fit_logistic(rows, labels, l2=0.1)
    assert weights["logit_entail"] > 0 and weights["missing_specific"] < 0
    cal = ClaimCalibrator(weights, bias, 0.5)
    acc = sum(
        (cal.probability(r) >= 0.5) == bool(y) for r, y in zip(rows, labels, strict=True)
    ) / len(rows)
    assert acc > 0.9
    with pytest.raises(ValueError):
        fit_logistic(rows[:3], [1, 1, 1])


def test_actions_are_the_five_bands() -> None:
    assert {a.value for a in Action} == {
        "accept",
        "accept_with_flags",
        "correct_and_deliver",
        "regenerate",
        "human_review",
    }


def test_a_quote_must_start_and_end_on_word_boundaries() -> None:
    # the flattened-text test this replaced matched inside words: "art is great" in "heart…"
    index = EvidenceIndex.of(["Her heart is great at pumping blood to the bridges of the town."])
    pred = NLIPrediction(entailment=0.3, neutral=0.3, contradiction=0.4)
    features = claim_features("art is great at pumping blood", pred, 0.4, index)
    assert features["verbatim"] == 0.0
    assert claim_features("pumping blood to the bridge", pred, 0.4, index)["verbatim"] == 0.0
    assert claim_features("heart is great at pumping blood", pred, 0.4, index)["verbatim"] == 1.0
