"""Claim outcomes: what the delivered text does with each claim.

Every checked claim ends in exactly one :class:`~guardrail.report.ClaimOutcome`:

- ``supported`` → shown unmarked;
- ``uncertain`` → shown with an annotation (*Unverified* / *Uncertain*): not
  supported, but not confidently wrong either (``p_supported`` between ``remove_below`` and the
  claim threshold), or a non-blocking flag on it;
- ``repaired`` → a confident problem fixed in the text (a knowledge-base value, or an evidence
  value whose corrected claim the verifier re-checked and supports);
- ``removed`` → a confident problem with no repair: its sentence is left out, as a ``removal``
  correction with its span and reason;
- ``unverified`` → it could not be checked: annotated ``[unverified]``;
- ``not_checkworthy`` → it states no checkable fact: shown unmarked.

:func:`plan_delivery` (called by the planner, :func:`~guardrail.decision.plan_answer`; the
correction stage applies its plan) says which spans to remove and which to annotate; :func:`claim_outcomes` (used by the decision) reads the outcome of each claim off the
corrections actually made, so the report and the delivered text cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from guardrail.delivery import DeliveryPlan, Note, Removal
from guardrail.report import (
    Claim,
    ClaimOutcome,
    ClaimStatus,
    Correction,
    CorrectionType,
    Problem,
    Span,
)

UNCERTAIN_NOTE = "uncertain: not confirmed by the sources"
UNVERIFIED_NOTE = "unverified"


def _reason(problems: Sequence[Problem]) -> str:
    kinds = sorted({p.kind.replace("_", " ") for p in problems})
    return "; ".join(kinds)


def plan_delivery(
    claims: Sequence[Claim],
    problems: Sequence[Problem],
    *,
    remove: bool,
) -> DeliveryPlan:
    """Removals for unrepaired problems (``remove``: ``claim`` granularity) and notes for the
    claims shown although not supported.

    ``problems`` must carry ``fixed_by`` from the repairs already planned (see
    :func:`~guardrail.decision.problems.mark_fixes`); removals are never planned for repaired
    problems.
    """
    by_claim: dict[int, list[Problem]] = {}
    loose: list[Problem] = []
    for p in problems:
        if p.fixed_by is not None and p.fixed_by != "removal":
            continue
        if p.claim_index is not None and p.claim_index < len(claims):
            by_claim.setdefault(p.claim_index, []).append(p)
        else:
            loose.append(p)
    removals: list[Removal] = []
    if remove:
        for i, ps in sorted(by_claim.items()):
            removals.append(
                Removal(claims[i].span, _reason(ps), max(p.confidence for p in ps), claim_index=i)
            )
        for p in loose:
            removals.append(Removal(p.span, _reason([p]), p.confidence))
    removed = {r.claim_index for r in removals if r.claim_index is not None}
    notes: list[Note] = []
    for i, c in enumerate(claims):
        if i in removed:
            continue
        if c.status is ClaimStatus.UNVERIFIED:
            notes.append(Note(c.span, UNVERIFIED_NOTE, 0.5, claim_index=i))
        elif c.status in (ClaimStatus.UNSUPPORTED, ClaimStatus.CONTRADICTED):
            conf = 1.0 - c.p_supported if c.p_supported is not None else 0.5
            notes.append(Note(c.span, UNCERTAIN_NOTE, round(conf, 4), claim_index=i))
    return DeliveryPlan(
        removals=removals,
        notes=notes,
        annotated_claims=frozenset(n.claim_index for n in notes if n.claim_index is not None),
    )


def _covered(span: Span, by: Span) -> bool:
    """Whether most of ``span`` lies inside ``by``."""
    inside = max(0, min(span.end, by.end) - max(span.start, by.start))
    return inside * 2 > (span.end - span.start)


def claim_outcome(claim: Claim, corrections: Sequence[Correction]) -> ClaimOutcome:
    """What the corrected and annotated text does with ``claim``."""
    if claim.status is ClaimStatus.NOT_CHECKWORTHY:
        return ClaimOutcome.NOT_CHECKWORTHY
    mine = [c for c in corrections if c.span.overlaps(claim.span) or c.span == claim.span]
    if any(c.type is CorrectionType.REMOVAL and _covered(claim.span, c.span) for c in mine):
        return ClaimOutcome.REMOVED
    if claim.status is ClaimStatus.UNVERIFIED:
        return ClaimOutcome.UNVERIFIED
    if any(c.type is CorrectionType.ANNOTATION for c in mine):
        return ClaimOutcome.UNCERTAIN
    if any(c.type is CorrectionType.FACTUAL for c in mine):
        return ClaimOutcome.REPAIRED
    if claim.status is ClaimStatus.SUPPORTED:
        return ClaimOutcome.SUPPORTED
    return ClaimOutcome.UNCERTAIN  # not supported and nothing marks it: never "supported"


def claim_outcomes(claims: Sequence[Claim], corrections: Sequence[Correction]) -> list[Claim]:
    """The claims with ``outcome`` set from the corrections made."""
    return [c.model_copy(update={"outcome": claim_outcome(c, corrections)}) for c in claims]


def unmarked_unsupported(claims: Sequence[Claim], corrections: Sequence[Correction]) -> list[int]:
    """Claims the report calls unsupported or contradicted that the text would show with no
    mark (removal, repair or annotation): must be empty for anything delivered."""
    out = []
    for i, c in enumerate(claims):
        if c.status not in (ClaimStatus.UNSUPPORTED, ClaimStatus.CONTRADICTED):
            continue
        mine = [x for x in corrections if x.span.overlaps(c.span) or x.span == c.span]
        if not mine:
            out.append(i)
    return out


__all__ = [
    "DeliveryPlan",
    "Note",
    "Removal",
    "claim_outcome",
    "claim_outcomes",
    "plan_delivery",
    "unmarked_unsupported",
]
