"""Confidence score (seed 004 stage 5), as pure functions.

``confidence`` is the weighted mean of four components — coherence 0.25, factual 0.35,
hallucination absence 0.30, entity consistency 0.10 — minus severity penalties capped at 0.5.
A component that could not be computed (its stage skipped or failed) is left out and the
weights are renormalised over the rest; it is listed in ``ConfidenceBreakdown.missing``.

Each finding counts once, in the component of its home. A value the knowledge base records
differently is fact validation's finding (:mod:`guardrail.facts.compare`): it lowers the factual
component and carries the contradiction penalty. The WRONG_ATTRIBUTE flag that restates it
(:func:`~guardrail.hallucination.flags.wrong_attribute_flags`) and coherence's entity mismatch on
the same value are left out of the hallucination and entity components, coherence's score and
their penalties. Before, one wrong value lowered four components and drew three penalties.

The bands and the recommendation are in :mod:`guardrail.decision` (one place for both).
"""

from __future__ import annotations

from guardrail.coherence.checker import weighted_score
from guardrail.config import CoherenceWeights, ConfidenceWeights, ScoringCutoffs
from guardrail.report import (
    HALLUCINATION_SEVERITY,
    CoherenceResult,
    ConfidenceBreakdown,
    DimensionScore,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    Span,
    ValidationStatus,
)

SEED = ScoringCutoffs()
"""Seed 004's cut-offs (the defaults)."""


def kb_contradiction_spans(factual: FactualValidationResult | None) -> list[Span]:
    """The values fact validation found the knowledge base records differently."""
    if factual is None:
        return []
    return [
        v.claim.object_span or v.claim.span
        for v in factual.claim_validations
        if v.status is ValidationStatus.CONTRADICTED and v.kb_value is not None
    ]


def _overlaps(span: Span, spans: list[Span]) -> bool:
    return any(span.start < s.end and s.start < span.end for s in spans)


def counted_flags(
    flags: list[HallucinationFlag], factual: FactualValidationResult | None
) -> list[HallucinationFlag]:
    """``flags`` without the WRONG_ATTRIBUTE flags that restate a knowledge-base contradiction
    (same value span): that finding is counted by fact validation."""
    spans = {(s.start, s.end) for s in kb_contradiction_spans(factual)}
    return [
        f
        for f in flags
        if not (f.type is HallucinationType.WRONG_ATTRIBUTE and (f.span.start, f.span.end) in spans)
    ]


def counted_coherence(
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    weights: CoherenceWeights | None = None,
) -> CoherenceResult | None:
    """``coherence`` without its knowledge-base entity mismatches on values fact validation
    found contradicted: the entity dimension, the weighted score (``weights``, seed 004's by
    default) and the issues are recomputed without them. Unchanged when there are none."""
    spans = kb_contradiction_spans(factual)
    if coherence is None or not spans:
        return coherence
    entity = coherence.entity_consistency
    checked = entity.details.get("checked") or []

    def same_finding(check: dict[str, object]) -> bool:
        span = check.get("span")
        if check.get("consistent") or "knowledge base" not in str(check.get("source", "")):
            return False
        if not isinstance(span, (list, tuple)) or len(span) != 2:
            return False
        return _overlaps(Span(start=int(span[0]), end=int(span[1])), spans)

    kept = [c for c in checked if not same_finding(c)]
    if len(kept) == len(checked):
        return coherence
    consistent = sum(1 for c in kept if c.get("consistent"))
    new_entity = DimensionScore(
        score=round(consistent / len(kept) if kept else 1.0, 4),
        details={**entity.details, "checked": kept, "mismatches": len(kept) - consistent},
    )
    dropped = [c["span"] for c in checked if same_finding(c)]
    issues = [
        i
        for i in coherence.issues
        if not (
            i.type == "entity_mismatch"
            and i.span is not None
            and [i.span.start, i.span.end] in [list(d) for d in dropped]
        )
    ]
    score = weighted_score(
        weights or CoherenceWeights(),
        coherence.qud_relevance,
        coherence.topic_consistency,
        new_entity,
        coherence.discourse_coherence,
        coherence.reference_consistency,
    )
    return coherence.model_copy(
        update={"score": round(score, 4), "entity_consistency": new_entity, "issues": issues}
    )


def hallucination_score(flags: list[HallucinationFlag]) -> float:
    """1 − mean(confidence × type severity), floored at 0 (seed 004); 1.0 with no flags."""
    if not flags:
        return 1.0
    total = sum(f.confidence * HALLUCINATION_SEVERITY[f.type] for f in flags)
    return 1.0 - min(total / len(flags), 1.0)


def severity_penalty(
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag],
    cap: float = 0.5,
    cutoffs: ScoringCutoffs = SEED,
) -> float:
    """Seed 004 penalties: +0.1 per coherence issue of severity > 0.8, +0.15 per contradiction
    with confidence > 0.9, +0.1 per hallucination with confidence > 0.85; capped (the numbers
    are ``cutoffs``' defaults)."""
    c = cutoffs
    penalty = 0.0
    if coherence is not None:
        penalty += c.coherence_penalty * sum(
            1 for issue in coherence.issues if issue.severity > c.coherence_issue_severity
        )
    if factual is not None:
        penalty += c.kb_contradiction_penalty * sum(
            1
            for v in factual.claim_validations
            if v.status is ValidationStatus.CONTRADICTED and v.confidence > c.confidence.certain
        )
    penalty += c.flag_penalty * sum(1 for f in flags if f.confidence > c.confidence.penalised)
    return min(penalty, cap)


def confidence_score(
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag] | None,
    weights: ConfidenceWeights,
    penalty_cap: float = 0.5,
    cutoffs: ScoringCutoffs = SEED,
    coherence_weights: CoherenceWeights | None = None,
) -> ConfidenceBreakdown:
    """The weighted, penalised confidence; ``None`` inputs are components that did not run.
    A knowledge-base contradiction is counted once, by fact validation (module docstring);
    ``coherence_weights`` recompute coherence's score without its restatement."""
    coherence = counted_coherence(coherence, factual, coherence_weights)
    if flags is not None:
        flags = counted_flags(flags, factual)
    components: dict[str, float | None] = {
        "coherence": coherence.score if coherence is not None else None,
        "factual": factual.score if factual is not None else None,
        "hallucination": hallucination_score(flags) if flags is not None else None,
        "entity": coherence.entity_consistency.score if coherence is not None else None,
    }
    weight_of = weights.model_dump()
    present = {k: v for k, v in components.items() if v is not None}
    total_weight = sum(weight_of[k] for k in present)
    raw = sum(weight_of[k] * v for k, v in present.items()) / total_weight if total_weight else 0.0
    penalty = severity_penalty(coherence, factual, flags or [], penalty_cap, cutoffs)
    return ConfidenceBreakdown(
        coherence=components["coherence"],
        factual=components["factual"],
        hallucination=components["hallucination"],
        entity=components["entity"],
        raw=raw,
        penalty=penalty,
        missing=[k for k, v in components.items() if v is None],
    )


def final_confidence(breakdown: ConfidenceBreakdown) -> float:
    """``clamp(raw − penalty, 0, 1)``."""
    return max(0.0, min(1.0, breakdown.raw - breakdown.penalty))
