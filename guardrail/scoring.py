"""The confidence score (post-processing stage 5), as pure functions.

``confidence`` is the weighted mean of four components — coherence 0.25, factual 0.35,
hallucination absence 0.30, entity consistency 0.10 — minus severity penalties capped at 0.5.
A component that could not be computed (its stage skipped or failed) is left out and the
weights are renormalised over the rest; it is listed in ``ConfidenceBreakdown.missing``.

Each finding counts once, in the component of its home. A value the knowledge base records
differently is fact validation's finding (:mod:`guardrail.text.values`): it lowers the factual
component and carries the contradiction penalty. The hallucination stage does not restate it as
a flag (the report's WRONG_ATTRIBUTE flag on it is a view, :func:`guardrail.pipeline.report_flags`);
coherence's entity mismatch on the same value is left out of the entity component, coherence's
score and its penalty. Entity consistency is a dimension of the coherence score and a component
of its own: the confidence counts it in its own component (``weights.entity``) and leaves it
out of the coherence component (:func:`coherence_component`).

The bands and the recommendation are in :mod:`guardrail.decision` (one place for both).
"""

from __future__ import annotations

from guardrail.config import (
    CoherenceWeights,
    ConfidenceLadder,
    ConfidenceWeights,
    ScoringCutoffs,
)
from guardrail.report import (
    HALLUCINATION_SEVERITY,
    CoherenceResult,
    ConfidenceBreakdown,
    FactualValidationResult,
    HallucinationFlag,
    ValidationStatus,
)

DEFAULT_CUTOFFS = ScoringCutoffs()
"""The default cut-offs of the penalties."""
DEFAULT_LADDER = ConfidenceLadder()
"""The default confidence ladder (a config's own is ``GuardrailConfig.confidence``)."""


def hallucination_score(flags: list[HallucinationFlag]) -> float:
    """1 − mean(confidence × the type's severity weight), floored at 0; 1.0 with no flags."""
    if not flags:
        return 1.0
    total = sum(f.confidence * HALLUCINATION_SEVERITY[f.type] for f in flags)
    return 1.0 - min(total / len(flags), 1.0)


def severity_penalty(
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag],
    cap: float = 0.5,
    cutoffs: ScoringCutoffs = DEFAULT_CUTOFFS,
    ladder: ConfidenceLadder = DEFAULT_LADDER,
) -> float:
    """The severity penalties: +0.1 per coherence issue of severity > 0.8, +0.15 per contradiction
    with confidence > 0.9 (``ladder.certain``), +0.1 per hallucination with confidence > 0.85
    (``ladder.penalised``); capped (the numbers are the defaults)."""
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
            if v.status is ValidationStatus.CONTRADICTED and v.confidence > ladder.certain
        )
    penalty += c.flag_penalty * sum(1 for f in flags if f.confidence > ladder.penalised)
    return min(penalty, cap)


def confidence_score(
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag] | None,
    weights: ConfidenceWeights,
    penalty_cap: float = 0.5,
    cutoffs: ScoringCutoffs = DEFAULT_CUTOFFS,
    ladder: ConfidenceLadder = DEFAULT_LADDER,
    coherence_weights: CoherenceWeights | None = None,
) -> ConfidenceBreakdown:
    """The weighted, penalised confidence; ``None`` inputs are components that did not run.
    A knowledge-base contradiction is counted once, by fact validation (module docstring).
    With ``coherence_weights`` (``coherence.weights``), entity consistency counts once too:
    in its own component when ``weights.entity`` is on, and not again inside the coherence
    component (:func:`coherence_component`)."""
    components: dict[str, float | None] = {
        "coherence": coherence_component(coherence, weights, coherence_weights),
        "factual": factual.score if factual is not None else None,
        "hallucination": hallucination_score(flags) if flags is not None else None,
        "entity": coherence.entity_consistency.score if coherence is not None else None,
    }
    weight_of = weights.model_dump()
    present = {k: v for k, v in components.items() if v is not None}
    total_weight = sum(weight_of[k] for k in present)
    raw = sum(weight_of[k] * v for k, v in present.items()) / total_weight if total_weight else 0.0
    penalty = severity_penalty(coherence, factual, flags or [], penalty_cap, cutoffs, ladder)
    return ConfidenceBreakdown(
        coherence=components["coherence"],
        factual=components["factual"],
        hallucination=components["hallucination"],
        entity=components["entity"],
        raw=raw,
        penalty=penalty,
        missing=[k for k, v in components.items() if v is None],
    )


def coherence_component(
    coherence: CoherenceResult | None,
    weights: ConfidenceWeights,
    coherence_weights: CoherenceWeights | None,
) -> float | None:
    """The coherence component of the confidence: the coherence score, without its entity
    dimension when the confidence weighs entity consistency on its own (``weights.entity``
    > 0 and ``coherence_weights`` given)."""
    if coherence is None:
        return None
    if coherence_weights is None or weights.entity <= 0:
        return coherence.score
    from guardrail.coherence.checker import weighted_score

    return weighted_score(
        coherence_weights.model_copy(update={"entity": 0.0}),
        coherence.qud_relevance,
        coherence.topic_consistency,
        coherence.entity_consistency,
        coherence.discourse_coherence,
        coherence.reference_consistency,
    )


def final_confidence(breakdown: ConfidenceBreakdown) -> float:
    """``clamp(raw − penalty, 0, 1)``."""
    return max(0.0, min(1.0, breakdown.raw - breakdown.penalty))
