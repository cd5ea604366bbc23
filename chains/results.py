"""Typed results of the guarded chains: each attempt with its report, the answer or an escalation."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field

from guardrail.inputs import Passage
from guardrail.report import Action, GuardReport


class OnFail(str, Enum):
    """What a wrapped chain does when the guardrail does not let its answer through.

    An answer "passes" when the recommendation is ``accept``, ``accept_with_flags`` or
    ``correct_and_deliver`` (the delivered text is then the original, annotated or corrected
    answer). It "fails" on ``regenerate`` and ``human_review``.
    """

    RAISE = "raise"
    """Raise :class:`guardrail.errors.GuardrailRejected` carrying the report, so
    ``with_fallbacks`` / ``with_retry`` can react."""
    CORRECTED = "corrected"
    """Deliver ``report.corrected`` (the KB-corrected text) instead."""
    ANNOTATED = "annotated"
    """Deliver ``report.annotated`` (the answer with its flags marked inline) instead."""
    REPORT = "report"
    """Return the :class:`~guardrail.report.GuardReport` instead of the chain's output."""


#: Actions whose ``report.delivered_text`` may be shown to the user.
DELIVERABLE: frozenset[Action] = frozenset(
    {Action.ACCEPT, Action.ACCEPT_WITH_FLAGS, Action.CORRECT_AND_DELIVER}
)


class Attempt(BaseModel):
    """One generate → check round of the guarded RAG chain."""

    number: int
    """1-based attempt number."""
    guidance: str | None = None
    """The regeneration guidance this attempt was prompted with (``None`` on attempt 1)."""
    answer: str
    """What the chat model answered."""
    report: GuardReport | None = None
    """The guardrail's report on ``answer`` (``None`` when the answer was empty)."""
    error: str | None = None
    """Why the answer could not be checked (e.g. the model returned nothing)."""

    @property
    def action(self) -> Action:
        """The recommendation for this attempt (an unchecked attempt means ``regenerate``)."""
        return self.report.action if self.report is not None else Action.REGENERATE


class Escalation(BaseModel):
    """No answer is delivered: a person should look at the question."""

    reason: str
    """Why the answer was not delivered."""
    question: str
    attempts: int
    """How many answers were generated and rejected."""
    last_answer: str | None = None
    """The last rejected answer, for the reviewer (never to be shown to the user as is)."""
    report: GuardReport | None = None
    """The guardrail report on the last answer."""


class GuardedAnswer(BaseModel):
    """The result of the guarded RAG chain: the delivered answer or an escalation."""

    question: str
    answer: str | None = None
    """The checked text to show the user; ``None`` when escalated."""
    action: Action
    """The final action (``human_review`` when escalated)."""
    escalation: Escalation | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    """Every attempt, in order, with its report."""
    passages: list[Passage] = Field(default_factory=list)
    """The retrieved evidence, with cosine retrieval scores."""
    model: str = ""
    """Id of the chat model that wrote the answers."""

    @property
    def delivered(self) -> bool:
        """Whether an answer may be shown."""
        return self.answer is not None

    @property
    def report(self) -> GuardReport | None:
        """The report on the last checked attempt."""
        for attempt in reversed(self.attempts):
            if attempt.report is not None:
                return attempt.report
        return None
