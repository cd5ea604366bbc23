"""The confidence bands and the decision tree, the regeneration guidance and the review reason.

``band_of`` maps the confidence score onto the bands 0.90 / 0.75 / 0.50 / 0.30; ``recommend`` is
the decision tree on those bands, used by :func:`guardrail.decision.decide` when no claim is
flagged. Pure functions.
"""

from __future__ import annotations

from guardrail.config import ConfidenceLadder, HandlingThresholds, ScoringCutoffs
from guardrail.report import (
    Accept,
    AcceptWithFlags,
    Action,
    CoherenceResult,
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

DEFAULT_CUTOFFS = ScoringCutoffs()
"""The default cut-offs of the recommendation texts."""
DEFAULT_LADDER = ConfidenceLadder()
"""The default confidence ladder (a config's own is ``GuardrailConfig.confidence``)."""


def band_of(confidence: float, thresholds: HandlingThresholds) -> Action:
    """The confidence band the score alone falls in."""
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
    cutoffs: ScoringCutoffs = DEFAULT_CUTOFFS,
    ladder: ConfidenceLadder = DEFAULT_LADDER,
) -> list[str]:
    """Instructions for the LLM: each unaddressed question, contradicted value and flagged span
    at least ``ladder.named`` sure (pass ``flags=[]`` when the claims are named otherwise)."""
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
        if flag.confidence >= ladder.named:
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
    cutoffs: ScoringCutoffs = DEFAULT_CUTOFFS,
    thresholds: HandlingThresholds | None = None,
    ladder: ConfidenceLadder = DEFAULT_LADDER,
) -> str:
    """Why a person must look at this answer: the real reason first; the confidence is called
    too low only when it is below the regenerate band."""
    reasons: list[str] = []
    if unchecked:
        reasons.append("Could not check the answer: " + "; ".join(unchecked) + ".")
    floor = (thresholds or HandlingThresholds()).regenerate
    if confidence < floor:
        reasons.append(
            f"Overall confidence {confidence * 100:.0f}% is below the regenerate band "
            f"({floor * 100:.0f}%)."
        )
    if coherence is not None and coherence.score < cutoffs.incoherent_below:
        reasons.append(f"Response is incoherent (coherence {coherence.score * 100:.0f}%).")
    strong = [f for f in flags if f.confidence > ladder.blocking]
    if strong:
        reasons.append(f"{len(strong)} high-confidence hallucination(s) detected.")
    if factual is not None:
        n_contra = factual.stats.contradicted
        n_hist = factual.stats.history_conflicts
        if n_contra or n_hist:
            reasons.append(
                f"Response contradicts {n_contra} known fact(s) and {n_hist} dialogue turn(s)."
            )
    if not reasons:
        reasons.append(f"Overall confidence {confidence * 100:.0f}%.")
    return " ".join(reasons)


def recommend(
    confidence: float,
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag],
    corrections: list[Correction],
    thresholds: HandlingThresholds,
    unchecked: list[str] | None = None,
    cutoffs: ScoringCutoffs = DEFAULT_CUTOFFS,
    ladder: ConfidenceLadder = DEFAULT_LADDER,
) -> Recommendation:
    """The decision tree on the confidence bands. ``unchecked`` (fail-closed) lists checks that could not run:
    such an answer is sent to human review whatever its score."""
    if unchecked:
        return HumanReview(
            reason=human_review_reason(
                confidence, coherence, factual, flags, unchecked, cutoffs, thresholds, ladder
            )
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
        spans += [f.span for f in flags if ladder.noted <= f.confidence < ladder.blocking]
        severity = Severity.MEDIUM if len(spans) > 3 else Severity.LOW
        return AcceptWithFlags(flags=spans, severity=severity)
    if confidence >= thresholds.correct:
        fixes = [c for c in corrections if c.type is not CorrectionType.ANNOTATION]
        return CorrectAndDeliver(corrections=fixes)
    if confidence >= thresholds.regenerate:
        items = regeneration_guidance(coherence, factual, flags, cutoffs, ladder)
        if not items:
            items = ["Please answer again using only facts stated in the provided evidence."]
        return Regenerate(guidance=" ".join(items), items=items)
    return HumanReview(
        reason=human_review_reason(
            confidence,
            coherence,
            factual,
            flags,
            cutoffs=cutoffs,
            thresholds=thresholds,
            ladder=ladder,
        )
    )
