"""The delivery plan: what the decision tells the correction stage to remove and annotate.

Plain data, shared by :mod:`guardrail.decision` (which makes the plan,
:func:`~guardrail.decision.plan_answer`) and :mod:`guardrail.correction` (which applies it), so
that neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guardrail.report import Span


@dataclass(frozen=True)
class Removal:
    """A span to leave out of the delivered text, and why."""

    span: Span
    reason: str
    confidence: float
    claim_index: int | None = None


@dataclass(frozen=True)
class Note:
    """An annotation to insert after a span."""

    span: Span
    label: str
    confidence: float
    claim_index: int | None = None


@dataclass(frozen=True)
class DeliveryPlan:
    """What the correction stage should remove and annotate."""

    removals: list[Removal] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    annotated_claims: frozenset[int] = frozenset()
    """Claims that carry a note of their own (their generic unsupported-claim flag note is
    redundant)."""
