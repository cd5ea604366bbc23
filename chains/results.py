"""Typed results of the guarded chains: each attempt with its report, the answer or an escalation."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from guardrail.inputs import Passage
from guardrail.report import Action, GuardReport, VerdictLabel
from guardrail.tracing import feedback_items


class OnFail(StrEnum):
    """What a wrapped chain does when the guardrail does not let its answer through.

    An answer "passes" when the recommendation is ``accept``, ``accept_with_flags`` or
    ``correct_and_deliver`` (the delivered text is then the original, annotated or corrected
    answer). It "fails" on ``regenerate`` and ``human_review``.
    """

    RAISE = "raise"
    """Raise :class:`guardrail.errors.GuardrailRejected` carrying the report, so
    ``with_fallbacks`` / ``with_retry`` can react."""
    CORRECTED = "corrected"
    """Deliver ``report.corrected`` (the KB-corrected text) instead. When nothing is left to
    show — every claim removed (the text is empty), or the answer could not be checked
    (verdict ``UNVERIFIED``) — it behaves as ``raise``: an empty or unchecked text is never
    delivered."""
    ANNOTATED = "annotated"
    """Deliver ``report.annotated`` (the answer with its flags marked inline) instead; as
    ``corrected``, it behaves as ``raise`` when nothing is left to show."""
    REPORT = "report"
    """Return the :class:`~guardrail.report.GuardReport` instead of the chain's output."""
    REGENERATE = "regenerate"
    """Run the chain again with the guardrail's guidance (the rejected answer and what to fix)
    until an answer passes, up to ``max_attempts`` answers; ``human_review``, or the attempts
    running out, ends the loop as :class:`OnExhausted` says (see :mod:`chains.regenerate`)."""

    def fallback_text(self, report: GuardReport) -> str | None:
        """The text this policy delivers for a report with no ``delivered_text``:
        ``report.corrected`` (``corrected``) or ``report.annotated`` (``annotated``) when it
        holds anything checked to show; ``None`` otherwise — the caller then raises, as
        ``raise`` does. ``None`` for an empty text (every claim removed) and for an answer
        that could not be checked (verdict ``UNVERIFIED``: never delivered as checked)."""
        if report.verdict.label is VerdictLabel.UNVERIFIED:
            return None
        if self is OnFail.CORRECTED:
            text = report.corrected
        elif self is OnFail.ANNOTATED:
            text = report.annotated
        else:
            return None
        return text if text.strip() else None


class OnExhausted(StrEnum):
    """What a regenerate loop does when no answer passed: the attempts ran out, or a check
    asked for a person (``human_review``)."""

    RAISE = "raise"
    """Raise :class:`guardrail.errors.GuardrailRejected` carrying the last report and every
    attempt (``.attempts``: answer, report, guidance)."""
    HUMAN_REVIEW = "human_review"
    """Return the :class:`GuardedAnswer` the guarded RAG chain returns when it escalates:
    ``answer`` is ``None``, ``action`` is ``human_review``, ``escalation`` says why and
    ``attempts`` holds every attempt."""


#: Where a guarded chain puts the report: the key of a dict output, and of an agent message's
#: ``additional_kwargs`` (as JSON; read it back with :func:`report_of`).
REPORT_KEY = "guardrail_report"

#: Actions whose ``report.delivered_text`` may be shown to the user.
DELIVERABLE: frozenset[Action] = frozenset(
    {Action.ACCEPT, Action.ACCEPT_WITH_FLAGS, Action.CORRECT_AND_DELIVER}
)


class Attempt(BaseModel):
    """One generate → check round of a regenerate loop (the guarded RAG chain, a wrapped chain,
    the agent middleware)."""

    number: int
    """1-based attempt number."""
    guidance: str | None = None
    """The regeneration guidance this attempt was prompted with (``None`` on attempt 1)."""
    answer: str
    """What the chat model answered."""
    report: GuardReport | None = None
    """The guardrail's report on ``answer`` (``None`` when the answer was empty; also for the
    earlier attempts in the agent middleware's ``GuardrailRejected.attempts``, whose reports
    the agent does not keep: ``run_id`` names the check run whose output it is)."""
    error: str | None = None
    """Why the answer could not be checked (e.g. the model returned nothing)."""
    run_id: str | None = None
    """The id of the ``guardrail`` run that checked ``answer`` (its feedback is recorded there
    by :class:`guardrail.tracing.FeedbackRecorder`)."""
    output: Any = Field(default=None, exclude=True, repr=False)
    """The wrapped chain's own output for this attempt (``with_guardrail``; not serialised)."""

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


class Outcome(BaseModel):
    """What the guardrail decided for one call of a wrapped chain, as the chain's top run shows
    it (``outputs["guardrail"]``), with where to find the feedback it recorded."""

    action: Action
    """The final action (``human_review`` when the call escalated)."""
    verdict: str
    """The verdict label of the last report (``VERIFIED``, ``UNVERIFIED``, ...)."""
    confidence: float
    """The confidence of the last report."""
    attempts: int = 1
    """How many answers were checked (more than 1 after regenerations)."""
    delivered: bool
    """Whether an answer was returned for the user."""
    feedback: dict[str, float | str] = Field(default_factory=dict)
    """The feedback the guardrail records (:data:`guardrail.tracing.FEEDBACK_KEYS`:
    ``guardrail.action``, ``guardrail.verdict``, ``guardrail.confidence``), key → value."""
    feedback_run_id: str | None = None
    """The ``guardrail`` run that checked the last answer: the run the feedback is on."""

    @classmethod
    def of(
        cls,
        report: GuardReport,
        attempts: int = 1,
        run_id: str | None = None,
        action: Action | None = None,
        delivered: bool | None = None,
    ) -> Outcome:
        """The outcome of a call whose last check gave ``report`` (``action`` / ``delivered``:
        when the call ended otherwise than the report says, e.g. escalated)."""
        final = action if action is not None else report.action
        feedback = {str(i["key"]): i.get("value", i.get("score")) for i in feedback_items(report)}
        return cls(
            action=final,
            verdict=report.verdict.label.value,
            confidence=report.confidence,
            attempts=attempts,
            delivered=report.delivered_text is not None if delivered is None else delivered,
            feedback=feedback,
            feedback_run_id=run_id,
        )


def report_of(message: Any) -> GuardReport | None:
    """The :class:`~guardrail.report.GuardReport` on a checked answer: an agent message
    checked by :func:`chains.agent_middleware.guardrail_middleware` (its
    ``additional_kwargs["guardrail_report"]``, JSON) or a wrapped chain's dict output
    (``output["guardrail_report"]``); ``None`` when it holds none.

    Example::

        result = agent.invoke({"messages": [("user", "Who leads Atlas?")]})
        report = report_of(result["messages"][-1])
    """
    if isinstance(message, dict):
        found = message.get(REPORT_KEY)
    else:
        found = (getattr(message, "additional_kwargs", None) or {}).get(REPORT_KEY)
    if found is None or isinstance(found, GuardReport):
        return found
    return GuardReport.model_validate(found)
