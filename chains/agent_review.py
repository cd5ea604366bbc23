"""A person's review of an agent's answer, as a LangGraph pause (``interrupt`` / ``Command``).

With ``guardrail_middleware(..., human_review="interrupt")`` an answer the guardrail sends to a
person (a ``human_review`` outcome, or regeneration exhausted) pauses the agent with
``langgraph.types.interrupt(value)``; ``value`` is :class:`ReviewRequest` as JSON. The caller
resumes the same thread with ``agent.invoke(Command(resume=decision), config)``, ``decision``
one of::

    {"type": "approve"}                      # deliver the answer as it is
    {"type": "edit", "text": "..."}          # deliver the person's text instead
    {"type": "reject", "message": "..."}     # deliver this message instead

While paused, the thread's state still ends with the unchecked answer (LangGraph saves the state
before the pausing step): show the user nothing of a result holding ``__interrupt__``.

This follows LangChain's ``HumanInTheLoopMiddleware`` (an ``interrupt`` resumed with
``Command(resume=...)``); like it, it needs a checkpointer (:func:`require_checkpointer`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from guardrail.errors import ConfigError, InputError
from guardrail.report import GuardReport

#: The message delivered on ``{"type": "reject"}`` when the reviewer gives none.
REJECTED_MESSAGE = "I can't give a checked answer to this question; a person will follow up."


class ReviewRequest(BaseModel):
    """What the paused agent asks a person (the ``interrupt`` value, as JSON)."""

    action: str
    """The guardrail's action for the answer: ``human_review``, or ``regenerate`` when the
    regeneration attempts ran out."""
    question: str
    """The user's question (the last user message)."""
    answer: str
    """The answer the guardrail did not let through (never shown to the user as is)."""
    reasons: list[str] = Field(default_factory=list)
    """Why the answer needs a person, in words."""
    attempts: int = 1
    """How many answers the model wrote for this question (regenerations included)."""
    report: dict[str, Any]
    """The guardrail's report on ``answer`` (``GuardReport`` as JSON)."""
    decisions: list[str] = Field(default_factory=lambda: ["approve", "edit", "reject"])
    """The decision types :func:`parse_decision` accepts."""


class Approve(BaseModel):
    """Deliver the answer as the model wrote it."""

    type: Literal["approve"] = "approve"


class Edit(BaseModel):
    """Deliver the reviewer's text instead of the answer."""

    type: Literal["edit"] = "edit"
    text: str = Field(min_length=1)
    """The text to deliver."""


class Reject(BaseModel):
    """Deliver a message instead of the answer."""

    type: Literal["reject"] = "reject"
    message: str = REJECTED_MESSAGE
    """The message to deliver (:data:`REJECTED_MESSAGE` when not given)."""


ReviewDecision = Annotated[Approve | Edit | Reject, Field(discriminator="type")]
"""A reviewer's decision: :class:`Approve`, :class:`Edit` or :class:`Reject`."""

_DECISION: TypeAdapter[Approve | Edit | Reject] = TypeAdapter(ReviewDecision)


def reasons_of(report: GuardReport, attempts: int, exhausted: bool) -> list[str]:
    """Why ``report``'s answer goes to a person: the recommendation's reason or guidance,
    led by the attempt count when regeneration ran out."""
    rec = report.recommendation
    found: list[str] = []
    if exhausted:
        found.append(f"no acceptable answer after {attempts} attempt(s)")
    reason = getattr(rec, "reason", None)
    if reason:
        found.append(str(reason))
    items = list(getattr(rec, "items", None) or [])
    guidance = getattr(rec, "guidance", None)
    found += items or ([str(guidance)] if guidance else [])
    if not found and report.verdict.reason:
        found.append(report.verdict.reason)
    return found


def review_request(
    report: GuardReport, question: str, answer: str, attempts: int, exhausted: bool
) -> ReviewRequest:
    """The :class:`ReviewRequest` for ``answer`` (its report, question and reasons)."""
    return ReviewRequest(
        action=report.action.value,
        question=question,
        answer=answer,
        reasons=reasons_of(report, attempts, exhausted),
        attempts=attempts,
        report=report.model_dump(mode="json"),
    )


def parse_decision(value: Any) -> Approve | Edit | Reject:
    """The reviewer's decision from the ``Command(resume=...)`` value.

    Raises:
        InputError: ``value`` is none of ``{"type": "approve"}``, ``{"type": "edit", "text":
            ...}``, ``{"type": "reject", "message": ...}``.
    """
    if isinstance(value, Approve | Edit | Reject):
        return value
    try:
        return _DECISION.validate_python(value)
    except ValidationError as exc:
        raise InputError(
            f"cannot read the review decision {value!r}: resume with Command(resume=...) and "
            '{"type": "approve"}, {"type": "edit", "text": "..."} or '
            '{"type": "reject", "message": "..."}'
        ) from exc


def delivered(decision: Approve | Edit | Reject, answer: str) -> str:
    """The text the user sees after ``decision`` on ``answer``."""
    if isinstance(decision, Edit):
        return decision.text
    if isinstance(decision, Reject):
        return decision.message
    return answer


def require_checkpointer(config: dict[str, Any]) -> None:
    """Raise unless the running graph has a checkpointer (a pause must be saved to resume).

    Raises:
        ConfigError: no checkpointer; the message says how to add one.
    """
    from langgraph.constants import CONFIG_KEY_CHECKPOINTER

    if (config.get("configurable") or {}).get(CONFIG_KEY_CHECKPOINTER) is None:
        raise ConfigError(
            "guardrail_middleware(human_review='interrupt') needs a checkpointer to pause for a "
            "person: build the agent with create_agent(..., checkpointer=InMemorySaver()) "
            "(from langgraph.checkpoint.memory import InMemorySaver; a persistent one in "
            "production) and call it with config={'configurable': {'thread_id': ...}}"
        )
