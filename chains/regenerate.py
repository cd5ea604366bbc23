"""The regenerate-with-guidance loop, written once for every guarded chain.

The guarded RAG chain (:class:`chains.guarded_rag.GuardedRAG`), a wrapped chain
(``with_guardrail(..., on_fail="regenerate")``) and the agent middleware share it, so the
guidance text, the attempt records and the escalation are the same everywhere:

- :func:`next_step` reads one :class:`~chains.results.Attempt` and says what comes next:
  deliver ``report.delivered_text``; regenerate with :func:`guidance_text` (only on a
  ``regenerate`` recommendation, or an empty answer); or escalate (``human_review``, or the
  last allowed attempt still failing);
- :func:`regenerate_loop` runs attempts until a step ends it (sans-IO, see
  :mod:`chains.drive`: each attempt is a yielded call, so ``invoke`` and ``ainvoke`` run the
  same code) and returns a :class:`LoopEnd`;
- a regeneration reaches the model as a :class:`Regeneration` (the rejected answer and what
  to fix) in the run's config — ``configurable[GUIDANCE_KEY]``, see :func:`attempt_config` —
  never in the chain's input, so the question, the retrieval queries and the question the
  guardrail checks stay the user's; :func:`chains.guidance.guided` shows it to the model;
- :func:`escalation` is the :class:`~chains.results.GuardedAnswer` a loop ends with when it
  escalates, :func:`rejection` the :class:`~guardrail.errors.GuardrailRejected` carrying every
  attempt.

Each attempt is its own child run, ``<prefix>.attempt.<number>`` (tag ``attempt:<number>``,
metadata ``guardrail_attempt`` and, on a regeneration, ``guardrail_guidance``).

Example (the loop around any attempt runnable)::

    def make(number: int, regeneration: Regeneration | None) -> Call:
        return Call.invoke(attempt, {"number": number}, attempt_config(child, "app", number,
                                                                      regeneration))

    end = Driven(regenerate_loop(make, max_attempts=3)).run()
    end.step.kind   # StepKind.DELIVER / StepKind.ESCALATE
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Never

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, patch_config
from pydantic import BaseModel, ConfigDict

from chains.drive import Call, Logic
from chains.generation import guidance_message
from chains.results import Attempt, Escalation, GuardedAnswer
from guardrail.errors import GuardrailRejected
from guardrail.inputs import Passage
from guardrail.report import Action, GuardReport

logger = logging.getLogger(__name__)

#: The ``configurable`` key holding the :class:`Regeneration` of the current attempt (``None``
#: on a first attempt).
GUIDANCE_KEY = "guardrail_regeneration"

#: The guidance after an answer that was empty (there is no report to take it from).
EMPTY_ANSWER_GUIDANCE = "Your answer was empty. Answer the question using the context."


class Regeneration(BaseModel):
    """What a regenerated attempt is told: the rejected answer and what to fix."""

    model_config = ConfigDict(frozen=True)

    number: int
    """The attempt this guidance is for (2 or more)."""
    rejected: str
    """The previous answer, which the guardrail rejected."""
    guidance: str
    """What to fix (:func:`guidance_text` of the previous attempt)."""

    @property
    def message(self) -> str:
        """The text the model is shown (:func:`chains.generation.guidance_message`): the
        rejected answer and the guidance, quoted as data."""
        return guidance_message(self.rejected, self.guidance)


def guidance_text(report: GuardReport | None) -> str:
    """What to fix, from the report on a rejected answer: the ``regenerate`` recommendation's
    guidance; :data:`EMPTY_ANSWER_GUIDANCE` when the answer was empty (no report); otherwise
    the reason the answer was not delivered."""
    if report is None:
        return EMPTY_ANSWER_GUIDANCE
    recommendation = report.recommendation
    guidance = getattr(recommendation, "guidance", None) or getattr(recommendation, "reason", None)
    return str(guidance or f"The fact checker recommends {report.action.value}.")


def regeneration_of(config: RunnableConfig | None) -> Regeneration | None:
    """The :class:`Regeneration` in a run's config (``None``: a first attempt, or no loop)."""
    found = ensure_config(config).get("configurable", {}).get(GUIDANCE_KEY)
    return found if isinstance(found, Regeneration) else None


def attempt_config(
    config: RunnableConfig,
    prefix: str,
    number: int,
    regeneration: Regeneration | None,
    *,
    in_config: bool = True,
) -> RunnableConfig:
    """The config of attempt ``number``'s child run: named ``<prefix>.attempt.<number>``,
    tagged ``attempt:<number>``, with metadata ``guardrail_attempt`` (and
    ``guardrail_guidance`` on a regeneration). ``in_config``: put ``regeneration`` in
    ``configurable[GUIDANCE_KEY]`` for the runs inside (``None`` on attempt 1, so a guarded
    chain nested in another's regeneration starts clean); off for a chain whose own prompt
    carries the guidance."""
    configurable = {GUIDANCE_KEY: regeneration} if in_config else None
    step = patch_config(config, run_name=f"{prefix}.attempt.{number}", configurable=configurable)
    step["tags"] = [*(config.get("tags") or []), f"attempt:{number}"]
    metadata = {**(config.get("metadata") or {}), "guardrail_attempt": number}
    if regeneration is not None:
        metadata["guardrail_guidance"] = regeneration.guidance
    step["metadata"] = metadata
    return step


class StepKind(StrEnum):
    """What follows an attempt."""

    DELIVER = "deliver"
    """The answer passed: show ``text``."""
    REGENERATE = "regenerate"
    """Ask again with ``guidance``."""
    ESCALATE = "escalate"
    """Stop without an answer: ``reason`` says why (``exhausted``: the attempts ran out)."""


@dataclass(frozen=True)
class LoopStep:
    """The decision after one attempt (see :func:`next_step`)."""

    kind: StepKind
    text: str | None = None
    """The text to show (``DELIVER``)."""
    guidance: str | None = None
    """What to fix (``REGENERATE``; also on an exhausted ``ESCALATE``)."""
    reason: str | None = None
    """Why no answer is delivered (``ESCALATE``)."""
    exhausted: bool = False
    """``ESCALATE`` because the last allowed attempt still asked to regenerate."""


def next_step(attempt: Attempt, max_attempts: int) -> LoopStep:
    """What follows ``attempt`` in a loop of at most ``max_attempts`` answers.

    Only a ``regenerate`` recommendation (or an empty answer) is regenerated; an answer
    delivered repaired or with flags is delivered (``report.delivered_text``, exactly what
    ``Guardrail.invoke`` says to show); ``human_review`` escalates at once.
    """
    report = attempt.report
    if report is not None and (text := report.delivered_text) is not None:
        return LoopStep(StepKind.DELIVER, text=text)
    if report is not None and report.action is not Action.REGENERATE:
        reason = getattr(report.recommendation, "reason", None) or (
            f"the guardrail recommends {report.action.value}"
        )
        return LoopStep(StepKind.ESCALATE, reason=reason)
    guidance = guidance_text(report)
    if attempt.number >= max_attempts:
        why = (
            f"No acceptable answer after {attempt.number} attempt(s); "
            f"the last check still asked to regenerate: {guidance}"
        )
        return LoopStep(StepKind.ESCALATE, guidance=guidance, reason=why, exhausted=True)
    return LoopStep(StepKind.REGENERATE, guidance=guidance)


@dataclass(frozen=True)
class LoopEnd:
    """How a loop ended: every attempt, in order, and the step after the last one."""

    attempts: tuple[Attempt, ...]
    step: LoopStep

    @property
    def last(self) -> Attempt:
        """The last attempt."""
        return self.attempts[-1]

    @property
    def report(self) -> GuardReport | None:
        """The report on the last checked attempt."""
        return next((a.report for a in reversed(self.attempts) if a.report is not None), None)


#: Makes the call that runs attempt ``number`` with its regeneration (``None`` on attempt 1);
#: the call's result is the :class:`~chains.results.Attempt`.
AttemptCall = Callable[[int, Regeneration | None], Call]


def regenerate_loop(
    attempt: AttemptCall, max_attempts: int, done: Sequence[Attempt] = ()
) -> Logic[Never, LoopEnd]:
    """Run attempts after those in ``done`` until one is delivered or escalated (sans-IO)."""
    attempts = list(done)
    step = next_step(attempts[-1], max_attempts) if attempts else None
    while step is None or step.kind is StepKind.REGENERATE:
        number = len(attempts) + 1
        regeneration = None
        if step is not None:
            guidance = step.guidance or guidance_text(attempts[-1].report)
            regeneration = Regeneration(
                number=number, rejected=attempts[-1].answer, guidance=guidance
            )
        result: Attempt = yield attempt(number, regeneration)
        attempts.append(result)
        logger.info("attempt %d: %s", number, result.action.value)
        step = next_step(result, max_attempts)
    return LoopEnd(tuple(attempts), step)


def escalation(
    question: str, end: LoopEnd, passages: Sequence[Passage] = (), model: str = ""
) -> GuardedAnswer:
    """The result of a loop that escalates: no answer, ``human_review``, the reason, every
    attempt (the guarded RAG chain's escalation)."""
    last = end.last
    found = Escalation(
        reason=end.step.reason or "no acceptable answer",
        question=question,
        attempts=last.number,
        last_answer=last.answer or None,
        report=last.report,
    )
    return GuardedAnswer(
        question=question,
        action=Action.HUMAN_REVIEW,
        escalation=found,
        attempts=list(end.attempts),
        passages=list(passages),
        model=model,
    )


def rejection(end: LoopEnd) -> GuardrailRejected:
    """The error a loop that escalates raises: the reason, the last report and every attempt."""
    return GuardrailRejected(
        f"the guardrail rejected every answer: {end.step.reason}", end.report, end.attempts
    )
