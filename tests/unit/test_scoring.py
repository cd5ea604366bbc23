"""The confidence score and the confidence bands: pure functions, each band boundary."""

from __future__ import annotations

import pytest

from guardrail.config import ConfidenceWeights, HandlingThresholds
from guardrail.decision import recommend, regeneration_guidance
from guardrail.report import (
    ClaimValidation,
    CoherenceIssue,
    CoherenceResult,
    Correction,
    CorrectionType,
    DimensionScore,
    ExtractedClaim,
    FactualStats,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    QUDRelevance,
    Span,
    ValidationStatus,
)
from guardrail.scoring import (
    confidence_score,
    final_confidence,
    hallucination_score,
    severity_penalty,
)

T = HandlingThresholds()


def flag(kind: HallucinationType, conf: float, content: str = "x") -> HallucinationFlag:
    return HallucinationFlag(
        type=kind,
        span=Span(start=0, end=len(content)),
        content=content,
        confidence=conf,
        severity=0.5,
    )


def contradiction(subject: str, attr: str, obj: str, kb: str, conf: float) -> ClaimValidation:
    claim = ExtractedClaim(
        text=f"{subject} {attr} {obj}",
        subject=subject,
        predicate=attr,
        object=obj,
        span=Span(start=0, end=10),
        attribute=attr,
    )
    return ClaimValidation(
        claim=claim, status=ValidationStatus.CONTRADICTED, confidence=conf, kb_value=kb
    )


@pytest.mark.parametrize(
    ("score", "action"),
    [
        (1.0, "accept"),
        (0.90, "accept"),
        (0.8999, "accept_with_flags"),
        (0.75, "accept_with_flags"),
        (0.7499, "correct_and_deliver"),
        (0.50, "correct_and_deliver"),
        (0.4999, "regenerate"),
        (0.30, "regenerate"),
        (0.2999, "human_review"),
        (0.0, "human_review"),
    ],
)
def test_band_boundaries(score: float, action: str) -> None:
    rec = recommend(score, None, None, [], [], T)
    assert rec.action == action


def test_unchecked_answer_is_never_accepted() -> None:
    rec = recommend(1.0, None, None, [], [], T, unchecked=["stage hallucination failed (boom)"])
    assert rec.action == "human_review"
    assert "boom" in rec.reason


def test_hallucination_score_weights_type_and_confidence() -> None:
    assert hallucination_score([]) == 1.0
    # fabricated fact (severity 1.0) at confidence 0.8 → 1 - 0.8
    assert hallucination_score([flag(HallucinationType.FABRICATED_FACT, 0.8)]) == pytest.approx(0.2)
    # unsupported (0.5) at 1.0 and temporal (0.7) at 1.0 → mean 0.6 → 0.4
    both = [
        flag(HallucinationType.UNSUPPORTED_CLAIM, 1.0),
        flag(HallucinationType.TEMPORAL_ERROR, 1.0),
    ]
    assert hallucination_score(both) == pytest.approx(0.4)


def test_penalties_are_capped_at_half() -> None:
    factual = FactualValidationResult(
        claim_validations=[contradiction("John", "email", "a", "b", 0.95) for _ in range(5)]
    )
    assert severity_penalty(None, factual, []) == pytest.approx(0.5)
    one = FactualValidationResult(claim_validations=[contradiction("J", "e", "a", "b", 0.95)])
    assert severity_penalty(None, one, []) == pytest.approx(0.15)
    low = FactualValidationResult(claim_validations=[contradiction("J", "e", "a", "b", 0.9)])
    assert severity_penalty(None, low, []) == 0.0
    coh = CoherenceResult(
        issues=[CoherenceIssue(type="topic_drift", description="d", severity=0.9)]
    )
    assert severity_penalty(
        coh, None, [flag(HallucinationType.FABRICATED_FACT, 0.9)]
    ) == pytest.approx(0.2)


def test_confidence_weights_and_missing_components() -> None:
    coh = CoherenceResult(score=0.8, entity_consistency=DimensionScore(score=0.6))
    fact = FactualValidationResult(score=0.5)
    b = confidence_score(coh, fact, [], ConfidenceWeights())
    assert b.raw == pytest.approx(0.25 * 0.8 + 0.35 * 0.5 + 0.30 * 1.0 + 0.10 * 0.6)
    assert b.missing == []
    # factual stage did not run: weights renormalised over the rest
    b2 = confidence_score(coh, None, [], ConfidenceWeights())
    assert b2.missing == ["factual"]
    assert b2.raw == pytest.approx((0.25 * 0.8 + 0.30 * 1.0 + 0.10 * 0.6) / 0.65)
    b3 = confidence_score(None, None, None, ConfidenceWeights())
    assert b3.raw == 0.0 and final_confidence(b3) == 0.0


def _wrong_value(span: Span, source: str = "knowledge base") -> CoherenceResult:
    """Coherence that found the value at ``span`` differs from the ``source``'s record."""
    check = {"entity": "John", "attribute": "department", "value": "Marketing",
             "known": "Sales", "source": source, "consistent": False,
             "span": [span.start, span.end]}  # fmt: skip
    good = {**check, "attribute": "email", "consistent": True, "span": [0, 4]}
    issue = CoherenceIssue(type="entity_mismatch", description="d", severity=0.9, span=span)
    return CoherenceResult(
        score=0.7,
        qud_relevance=QUDRelevance(score=1.0),
        topic_consistency=DimensionScore(score=1.0),
        entity_consistency=DimensionScore(score=0.5, details={"checked": [check, good]}),
        discourse_coherence=DimensionScore(score=0.5),
        reference_consistency=DimensionScore(score=1.0),
        issues=[issue],
    )


def _kb_contradiction_at(value: Span) -> FactualValidationResult:
    """Fact validation that found John's department recorded as Sales, not the value at
    ``value``."""
    validation = contradiction("John", "department", "Marketing", "Sales", 0.99)
    validation.claim.object_span = value
    return FactualValidationResult(score=0.0, claim_validations=[validation])


def _wrong_attribute(span: Span, content: str) -> HallucinationFlag:
    return HallucinationFlag(type=HallucinationType.WRONG_ATTRIBUTE, span=span,
                             content=content, confidence=1.0, severity=0.8)  # fmt: skip


def test_a_finding_counts_in_the_component_of_its_home() -> None:
    """The confidence takes the findings as the stages store them: a value the knowledge base
    records differently is fact validation's (no flag restates it, coherence leaves values on
    record to it), so it lowers the factual component and draws one penalty; the same kind of
    finding from another source counts where it was found."""
    value, elsewhere = Span(start=43, end=52), Span(start=60, end=65)
    fact = _kb_contradiction_at(value)
    b = confidence_score(CoherenceResult(), fact, [], ConfidenceWeights())
    assert b.hallucination == 1.0 and b.entity == 1.0 and b.factual == 0.0
    assert b.penalty == pytest.approx(0.15)  # the KB contradiction's penalty alone
    other = _wrong_attribute(elsewhere, "Paris")
    b = confidence_score(
        _wrong_value(elsewhere, source="registry"), fact, [other], ConfidenceWeights()
    )
    assert b.hallucination == pytest.approx(0.2)  # 1 − severity 0.8 × confidence 1.0
    assert b.entity == 0.5 and b.coherence == 0.7


def test_final_confidence_subtracts_penalty_and_clamps() -> None:
    fact = FactualValidationResult(
        score=0.2, claim_validations=[contradiction("J", "e", "a", "b", 0.99) for _ in range(4)]
    )
    b = confidence_score(None, fact, None, ConfidenceWeights())
    assert b.penalty == pytest.approx(0.5)
    assert final_confidence(b) == 0.0


def test_guidance_names_values_questions_and_spans() -> None:
    coh = CoherenceResult(qud_relevance=QUDRelevance(score=0.1, addresses_qud=False))
    fact = FactualValidationResult(
        claim_validations=[
            contradiction("John Smith", "department", "Marketing", "Engineering", 1.0)
        ],
        stats=FactualStats(total=1, contradicted=1),
    )
    flags = [flag(HallucinationType.FABRICATED_FACT, 0.9, "released by Google")]
    items = regeneration_guidance(coh, fact, flags)
    text = " ".join(items)
    assert "directly address the user's question" in text
    assert "For John Smith's department, the correct value is 'Engineering'." in text
    assert "released by Google" in text
    rec = recommend(0.4, coh, fact, flags, [], T)
    assert rec.action == "regenerate" and "Engineering" in rec.guidance


def test_accept_with_flags_collects_uncertain_spans() -> None:
    unverifiable = ClaimValidation(
        claim=ExtractedClaim(
            text="t", subject="s", predicate="p", object="o", span=Span(start=3, end=9)
        ),
        status=ValidationStatus.UNVERIFIABLE,
    )
    fact = FactualValidationResult(claim_validations=[unverifiable])
    flags = [
        flag(HallucinationType.UNSUPPORTED_CLAIM, 0.6),
        flag(HallucinationType.UNSUPPORTED_CLAIM, 0.95),
    ]
    rec = recommend(0.8, None, fact, flags, [], T)
    assert rec.action == "accept_with_flags"
    assert [(s.start, s.end) for s in rec.flags] == [(3, 9), (0, 1)]
    assert rec.severity.value == "low"


def test_correct_and_deliver_carries_non_annotation_corrections() -> None:
    fix = Correction(
        type=CorrectionType.FACTUAL, span=Span(start=0, end=3), original="a", replacement="b"
    )
    note = Correction(
        type=CorrectionType.ANNOTATION,
        span=Span(start=0, end=3),
        original="a",
        replacement="a [unverified]",
    )
    rec = recommend(0.6, None, None, [], [fix, note], T)
    assert rec.action == "correct_and_deliver"
    assert rec.corrections == [fix]


def test_human_review_reason_counts_contradictions() -> None:
    fact = FactualValidationResult(
        claim_validations=[contradiction("J", "e", "a", "b", 1.0)],
        stats=FactualStats(total=3, contradicted=3, history_conflicts=2),
    )
    rec = recommend(
        0.1, CoherenceResult(score=0.2), fact, [flag(HallucinationType.FABRICATED_FACT, 0.9)], [], T
    )
    assert rec.action == "human_review"
    assert "10%" in rec.reason
    assert "contradicts 3 known fact(s) and 2 dialogue turn(s)" in rec.reason
    assert "incoherent" in rec.reason


def test_thresholds_must_be_ordered() -> None:
    with pytest.raises(ValueError):
        HandlingThresholds(accept=0.5, flag=0.75)


def test_entity_consistency_counts_once_in_the_confidence() -> None:
    from guardrail.config import CoherenceWeights
    from guardrail.report import DimensionScore

    coh = CoherenceResult(score=0.84, entity_consistency=DimensionScore(score=0.2))
    # the other four dimensions are at 1: without entity the coherence component is 1
    weights = ConfidenceWeights()
    once = confidence_score(coh, None, None, weights, coherence_weights=CoherenceWeights())
    assert once.coherence == pytest.approx(1.0) and once.entity == pytest.approx(0.2)
    twice = confidence_score(coh, None, None, weights)  # no coherence weights: as reported
    assert twice.coherence == pytest.approx(0.84)
    off = weights.model_copy(update={"entity": 0.0})
    alone = confidence_score(coh, None, None, off, coherence_weights=CoherenceWeights())
    assert alone.coherence == pytest.approx(0.84)  # no entity component: coherence keeps it
