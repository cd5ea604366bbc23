"""Confidence score and recommendation (seed 004 stage 5), as pure functions.

``confidence`` is the weighted mean of four components — coherence 0.25, factual 0.35,
hallucination absence 0.30, entity consistency 0.10 — minus severity penalties capped at 0.5.
A component that could not be computed (its stage skipped or failed) is left out and the
weights are renormalised over the rest; it is listed in ``ConfidenceBreakdown.missing``.

``recommend`` maps the score onto the bands 0.90 / 0.75 / 0.50 / 0.30. Under the fail-closed
policy an answer whose checking stages did not all run is never accepted.
"""

from __future__ import annotations

from guardrail.config import ConfidenceWeights, HandlingThresholds, ScoringCutoffs
from guardrail.report import (
    HALLUCINATION_SEVERITY,
    Accept,
    AcceptWithFlags,
    Action,
    CoherenceResult,
    ConfidenceBreakdown,
    CorrectAndDeliver,
    Correction,
    CorrectionType,
    FactualValidationResult,
    HallucinationFlag,
    HumanReview,
    Recommendation,
    Regenerate,
    Severity,
    Span,
    ValidationStatus,
)

SEED = ScoringCutoffs()
"""Seed 004's cut-offs (the defaults)."""


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
            if v.status is ValidationStatus.CONTRADICTED
            and v.confidence > c.kb_contradiction_confidence
        )
    penalty += c.flag_penalty * sum(1 for f in flags if f.confidence > c.flag_confidence)
    return min(penalty, cap)


def confidence_score(
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag] | None,
    weights: ConfidenceWeights,
    penalty_cap: float = 0.5,
    cutoffs: ScoringCutoffs = SEED,
) -> ConfidenceBreakdown:
    """The weighted, penalised confidence; ``None`` inputs are components that did not run."""
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


def band_of(confidence: float, thresholds: HandlingThresholds) -> Action:
    """The seed 004 band the confidence alone falls in."""
    if confidence >= thresholds.accept:
        return Action.ACCEPT
    if confidence >= thresholds.flag:
        return Action.ACCEPT_WITH_FLAGS
    if confidence >= thresholds.correct:
        return Action.CORRECT_AND_DELIVER
    if confidence >= thresholds.regenerate:
        return Action.REGENERATE
    return Action.HUMAN_REVIEW


def regeneration_guidance(
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag],
    cutoffs: ScoringCutoffs = SEED,
) -> list[str]:
    """Instructions for the LLM: each unaddressed question, contradicted value and flagged span."""
    items: list[str] = []
    if coherence is not None and not coherence.qud_relevance.addresses_qud:
        items.append("Please directly address the user's question.")
    if factual is not None:
        for v in factual.claim_validations:
            if v.status is ValidationStatus.CONTRADICTED and v.kb_value is not None:
                predicate = v.claim.attribute or v.claim.predicate
                items.append(
                    f"For {v.claim.subject}'s {predicate}, the correct value is '{v.kb_value}'."
                )
                if v.turn_text:
                    items.append(
                        f"'{v.claim.text}' also conflicts with turn {v.turn_id}: \"{v.turn_text}\"."
                    )
            elif v.status is ValidationStatus.HISTORY_CONFLICT and v.turn_text:
                items.append(
                    f"'{v.claim.text}' conflicts with turn {v.turn_id}: \"{v.turn_text}\"."
                )
    for flag in flags:
        if flag.confidence >= cutoffs.guidance_flag_confidence:
            hint = ""
            if flag.suggestion:
                text = flag.suggestion.strip().rstrip(".")
                hint = f" ({text[:1].lower()}{text[1:]})"
            items.append(f"Please verify or remove: '{flag.content}'{hint}.")
    if coherence is not None:
        for issue in coherence.issues:
            if issue.severity > cutoffs.coherence_issue_severity and issue.type not in (
                "qud_not_addressed",
            ):
                items.append(issue.suggestion or issue.description)
    seen: set[str] = set()
    return [i for i in items if not (i in seen or seen.add(i))]  # type: ignore[func-returns-value]


def human_review_reason(
    confidence: float,
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag],
    unchecked: list[str] | None = None,
    cutoffs: ScoringCutoffs = SEED,
) -> str:
    """Why a person must look at this answer."""
    reasons = [f"Overall confidence too low: {confidence * 100:.0f}%."]
    if unchecked:
        reasons.append("Could not check the answer: " + "; ".join(unchecked) + ".")
    if coherence is not None and coherence.score < cutoffs.incoherent_below:
        reasons.append(f"Response is incoherent (coherence {coherence.score * 100:.0f}%).")
    strong = [f for f in flags if f.confidence > cutoffs.review_flag_confidence]
    if strong:
        reasons.append(f"{len(strong)} high-confidence hallucination(s) detected.")
    if factual is not None:
        n_contra = factual.stats.contradicted
        n_hist = factual.stats.history_conflicts
        if n_contra or n_hist:
            reasons.append(
                f"Response contradicts {n_contra} known fact(s) and {n_hist} dialogue turn(s)."
            )
    return " ".join(reasons)


def recommend(
    confidence: float,
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag],
    corrections: list[Correction],
    thresholds: HandlingThresholds,
    unchecked: list[str] | None = None,
    cutoffs: ScoringCutoffs = SEED,
) -> Recommendation:
    """Seed 004's decision tree. ``unchecked`` (fail-closed) lists checks that could not run:
    such an answer is sent to human review whatever its score."""
    if unchecked:
        return HumanReview(
            reason=human_review_reason(confidence, coherence, factual, flags, unchecked, cutoffs)
        )
    if confidence >= thresholds.accept:
        return Accept()
    if confidence >= thresholds.flag:
        spans: list[Span] = []
        if factual is not None:
            spans += [
                v.claim.span
                for v in factual.claim_validations
                if v.status is ValidationStatus.UNVERIFIABLE
            ]
        spans += [
            f.span
            for f in flags
            if cutoffs.uncertain_flag_low <= f.confidence < cutoffs.uncertain_flag_high
        ]
        severity = Severity.MEDIUM if len(spans) > 3 else Severity.LOW
        return AcceptWithFlags(flags=spans, severity=severity)
    if confidence >= thresholds.correct:
        fixes = [c for c in corrections if c.type is not CorrectionType.ANNOTATION]
        return CorrectAndDeliver(corrections=fixes)
    if confidence >= thresholds.regenerate:
        items = regeneration_guidance(coherence, factual, flags, cutoffs)
        if not items:
            items = ["Please answer again using only facts stated in the provided evidence."]
        return Regenerate(guidance=" ".join(items), items=items)
    return HumanReview(
        reason=human_review_reason(confidence, coherence, factual, flags, cutoffs=cutoffs)
    )
