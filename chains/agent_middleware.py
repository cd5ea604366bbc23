"""A LangChain v1 agent middleware: check the agent's final answer, regenerate it with
guidance, or pause for a person.

Needs the ``langchain`` package (v1, ``pip install 'answer-guardrail[chains]'``); it is imported when
the middleware is built, not when this module is imported.

Which hook: ``after_agent``. LangChain's guardrails guide puts output checks there ("use after
agent hooks to validate final outputs once before returning to the user"): it runs once, when
the model has written a turn without tool calls, whereas ``after_model`` runs after every
model call, tool-calling turns included. Declared with ``can_jump_to=["model"]``, it can send
the agent back to the model within the same ``invoke``.

The final answer (the last message: a model turn without tool calls) is checked against the
evidence of this turn — the tool results since the last user message (or, with
``evidence="thread"``, every tool result of the thread: a follow-up question may rest on an
earlier turn's lookups), plus the documents of an optional ``retriever`` — and the knowledge
base, if given. Then:

- when the report has text to show, the message text becomes ``report.delivered_text`` —
  exactly what ``Guardrail.invoke`` delivers for this answer (the original, or the annotated
  text with its removals and repairs);
- ``on_fail="regenerate"`` (:attr:`~chains.results.OnFail.REGENERATE`): a ``regenerate``
  outcome removes the answer from the messages and jumps back to the model (``jump_to:
  "model"``); that model call — and any further model call until the next answer is checked —
  gets the :class:`~chains.regenerate.Regeneration`'s ``message`` (the rejected answer, quoted
  as data, and :func:`~chains.regenerate.guidance_text` of its report: the text ``GuardedRAG``
  and ``with_guardrail`` give) added to its system message, for that call only: the thread's
  messages keep the user's question and the turn's tool results as they were, so the
  regenerated answer is checked against the same evidence. After ``max_attempts`` answers the
  loop is exhausted: ``GuardrailRejected`` (:func:`chains.regenerate.rejection`, with
  ``attempts``), or a pause with ``human_review="interrupt"``;
- ``human_review="interrupt"``: a ``human_review`` outcome (or regeneration exhausted) pauses
  the agent with a LangGraph ``interrupt`` (:mod:`chains.agent_review`), resumed with
  ``Command(resume={"type": "approve" | "edit" | "reject", ...})``; needs a checkpointer;
- otherwise ``on_fail`` decides: ``raise`` (``GuardrailRejected``), ``corrected`` /
  ``annotated`` text (:meth:`~chains.results.OnFail.fallback_text`: ``raise`` when nothing
  checked is left to show — an empty text, or an answer that could not be checked), or
  ``report`` (the text is kept and marked as failed).

What follows a check is :func:`chains.regenerate.next_step` — the step of the loop every
guarded chain shares — on the answer's :class:`~chains.results.Attempt`; the agent runs that
loop across graph steps (check, jump to the model, check again) instead of in one call.

What a turn keeps between its checks: the agent's private state (``guardrail_attempts``,
``guardrail_retry``) holds, for each rejected answer, its number, the guidance it was written
with, the answer, the action and the id of the ``guardrail`` run that checked it (a
:class:`Tried`), and the pending :class:`~chains.regenerate.Regeneration` — never a report.
LangGraph passes the whole state to every model call, whose traced inputs would otherwise
hold each rejected answer's report (6 KB of JSON or more). The report of the answer being
checked is at hand in the check itself, so the interrupt value (``ReviewRequest.report``),
``GuardrailRejected.report`` and the last of ``GuardrailRejected.attempts`` carry it whole; an
earlier attempt in ``attempts`` has ``report=None`` and names its check run (``run_id``),
whose output in the trace is its report (what that report asked to fix is the next
attempt's ``guidance``).
The earlier reports are not kept elsewhere either: a middleware has no per-invoke place
outside the graph state (each node gets its own copy of the config, the LangGraph runtime is
frozen), and a table on the middleware would be mutable state shared by every thread.

The report is attached to the delivered message as ``additional_kwargs["guardrail_report"]``
(JSON; :func:`report_of`, the same function as :func:`chains.results.report_of`, turns it back
into a :class:`~guardrail.report.GuardReport`). The agent's result — the top run's output —
holds the outcome under ``"guardrail"``: :class:`~chains.results.Outcome`'s ``action``,
``verdict``, ``confidence`` and ``attempts`` (and ``review``, the reviewer's decision). Each
check is a ``guardrail`` run tagged ``attempt:N``; each regenerating model call runs inside a
``guardrail.regenerate`` run whose input is ``{"attempt": N, "guidance": ...}``.

Streamed model output gets the same check while it streams: :func:`guard_agent` (from
:mod:`chains.agent_streaming`, importable from here too) wraps the agent so that ``stream`` /
``astream`` pass the final answer's tokens through and check each sentence once complete.

Example::

    from langchain.agents import create_agent
    agent = create_agent(
        model, tools=[search],
        middleware=[guardrail_middleware(on_fail="regenerate", max_attempts=3)],
    )
"""

from __future__ import annotations

from typing import Any, Literal, Never, NotRequired, TypedDict
from uuid import uuid4

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs

from chains.agent_review import delivered, parse_decision, review_request
from chains.agent_streaming import GuardedAgent, guard_agent
from chains.drive import Call, Driven, Logic
from chains.regenerate import LoopEnd, LoopStep, Regeneration, StepKind, next_step, rejection
from chains.results import REPORT_KEY, Attempt, OnFail, Outcome, report_of
from guardrail.errors import ConfigError, GuardrailRejected, MissingDependencyError
from guardrail.inputs import Passage
from guardrail.pipeline import Guardrail
from guardrail.report import GuardReport

__all__ = [
    "Evidence",
    "GuardedAgent",
    "GuardrailHook",
    "Tried",
    "guard_agent",
    "guardrail_middleware",
    "outcome",
    "report_of",
    "turn_evidence",
]

Evidence = Literal["turn", "thread"]
"""Which tool results are the evidence of an answer: those since the last user message
(``turn``), or every tool result of the thread (``thread``)."""

#: The keys of the agent's outcome (the ``"guardrail"`` key of its result), besides ``review``.
OUTCOME_KEYS = frozenset({"action", "verdict", "confidence", "attempts"})


class Tried(TypedDict):
    """A rejected answer of this turn, as the agent's private state keeps it (no report: the
    report is the output of the ``guardrail`` run ``run_id`` in the trace)."""

    number: int
    guidance: str | None
    """The guidance the answer was written with (``None`` on attempt 1)."""
    answer: str
    action: str
    """The guardrail's action for the answer (``regenerate``: only that leads to another try)."""
    run_id: NotRequired[str | None]
    """The ``guardrail`` run that checked the answer."""


def turn_evidence(
    messages: list[BaseMessage], evidence: Evidence = "turn"
) -> tuple[str, list[Passage]]:
    """The last user question and the tool results that are its evidence: those that followed
    it (``turn``), or every tool result of the thread (``thread``)."""
    query, passages = "", []
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            query = query or message.text
            if evidence == "turn":
                break
        elif isinstance(message, ToolMessage) and message.text.strip():
            passages.append(Passage(text=message.text, source=f"tool:{message.name or '?'}"))
    return query, list(reversed(passages))


def outcome(report: GuardReport, attempts: int, review: str | None = None) -> dict[str, Any]:
    """The agent's outcome, shown on its top run (the ``"guardrail"`` key of its result):
    :class:`~chains.results.Outcome`'s ``action``, ``verdict``, ``confidence`` and
    ``attempts`` (as JSON), and ``review``, the reviewer's decision, after a pause."""
    found = Outcome.of(report, attempts)
    shown: dict[str, Any] = found.model_dump(mode="json", include=set(OUTCOME_KEYS))
    if review is not None:
        shown["review"] = review
    return shown


def attempt_of(tried: Tried) -> Attempt:
    """The :class:`~chains.results.Attempt` of an earlier answer of the turn (its report is
    not kept: ``run_id`` names the ``guardrail`` run whose output it is)."""
    return Attempt(
        number=tried["number"],
        guidance=tried["guidance"],
        answer=tried["answer"],
        run_id=tried.get("run_id"),
    )


def tried_of(attempt: Attempt) -> Tried:
    """What the agent's state keeps of a rejected :class:`~chains.results.Attempt`."""
    return Tried(
        number=attempt.number,
        guidance=attempt.guidance,
        answer=attempt.answer,
        action=attempt.action.value,
        run_id=attempt.run_id,
    )


class GuardrailHook:
    """The check itself, independent of the langchain version (no per-call state: what a turn
    has tried so far lives in the agent's state)."""

    def __init__(
        self,
        guardrail: Guardrail,
        on_fail: OnFail | str,
        retriever: Runnable[Any, Any] | None,
        knowledge_base: Any,
        *,
        max_attempts: int = 3,
        human_review: Literal["interrupt"] | None = None,
        evidence: Evidence = "turn",
    ) -> None:
        try:
            self.on_fail = OnFail(on_fail)
        except ValueError:
            choices = [m.value for m in OnFail]
            raise ConfigError(f"on_fail must be one of {choices}, not {on_fail!r}") from None
        self.regenerate = self.on_fail is OnFail.REGENERATE
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ConfigError(f"max_attempts must be an integer >= 1, not {max_attempts!r}")
        if human_review not in (None, "interrupt"):
            raise ConfigError(f"human_review must be None or 'interrupt', not {human_review!r}")
        if evidence not in ("turn", "thread"):
            raise ConfigError(f"evidence must be 'turn' or 'thread', not {evidence!r}")
        self.guardrail = guardrail
        self.retriever = retriever
        self.knowledge_base = knowledge_base
        self.max_attempts = max_attempts if self.regenerate else 1
        self.human_review = human_review
        self.evidence: Evidence = evidence

    def guard_input(self, messages: list[BaseMessage]) -> Logic[Never, dict[str, Any] | None]:
        """The guardrail input for the final answer, or ``None`` when there is none to check
        (sans-IO: the retriever is a yielded call, awaited on the async path)."""
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        answer = messages[-1]
        if answer.tool_calls or not answer.text.strip():
            return None
        query, passages = turn_evidence(messages[:-1], self.evidence)
        if self.retriever is not None and query:
            found = yield Call(self.retriever.invoke, self.retriever.ainvoke, (query,))
            passages += [Passage.coerce(d) for d in found]
        data: dict[str, Any] = {"query": query, "response": answer.text, "passages": passages}
        if self.knowledge_base is not None:
            data["knowledge_base"] = self.knowledge_base
        return data

    # --- what the check leads to (state updates) ------------------------------------------

    def deliver(
        self, message: AIMessage, attempt: Attempt, text: str, review: str | None = None
    ) -> dict[str, Any]:
        """The state update replacing the answer message (same id) with ``text``."""
        report = attempt.report
        assert report is not None
        extra = {**message.additional_kwargs, REPORT_KEY: report.model_dump(mode="json")}
        if review is not None:
            extra["guardrail_review"] = review
        checked = AIMessage(
            id=message.id,
            content=text,
            name=message.name,
            additional_kwargs=extra,
            response_metadata=message.response_metadata,
        )
        return {
            "messages": [checked],
            "guardrail": outcome(report, attempt.number, review),
            "guardrail_attempts": [],
            "guardrail_retry": None,
        }

    def again(
        self, message: AIMessage, attempt: Attempt, tried: list[Tried], step: LoopStep
    ) -> dict[str, Any]:
        """The state update that removes the rejected answer and sends the agent back to the
        model; ``guardrail_retry`` holds the :class:`~chains.regenerate.Regeneration` (as
        JSON) whose ``message`` the next model calls get in their system message."""
        regeneration = Regeneration(
            number=attempt.number + 1, rejected=attempt.answer, guidance=step.guidance or ""
        )
        return {
            "messages": [RemoveMessage(id=str(message.id))],
            "guardrail_attempts": [*tried, tried_of(attempt)],
            "guardrail_retry": regeneration.model_dump(mode="json"),
            "jump_to": "model",
        }

    def fallback(self, message: AIMessage, attempt: Attempt) -> dict[str, Any]:
        """The state update for a failed answer that neither regenerates nor pauses: ``report``
        keeps the text; ``corrected`` / ``annotated`` deliver
        :meth:`~chains.results.OnFail.fallback_text`; ``raise`` — or nothing checked left to
        show — raises ``GuardrailRejected``."""
        report = attempt.report
        assert report is not None
        if self.on_fail is OnFail.REPORT:
            text: str | None = message.text
        else:
            text = self.on_fail.fallback_text(report)
        if text is None or not text.strip():
            left = "" if self.on_fail is OnFail.RAISE else "; nothing checked is left to show"
            raise GuardrailRejected(
                f"the guardrail rejected the agent's answer ({report.action.value}){left}", report
            )
        return self.deliver(message, attempt, text)

    # --- the check ----------------------------------------------------------------------

    def check(
        self, state: Any, config: RunnableConfig | None = None
    ) -> Logic[Never, dict[str, Any] | None]:
        """Check the final answer in ``state``; the state update it leads to (``None``: no
        final answer to check). What follows the check is :func:`chains.regenerate.next_step`
        — the step every guarded chain's loop takes. May raise ``GuardrailRejected``
        (:func:`chains.regenerate.rejection`) or pause (``interrupt``)."""
        messages = list(state["messages"])
        data = yield from self.guard_input(messages)
        retry = state.get("guardrail_retry") or None
        if data is None:  # no final answer to check: no outcome (nor one of an earlier turn)
            reset: dict[str, Any] = (
                {"guardrail_retry": None, "guardrail_attempts": []} if retry else {}
            )
            return {"guardrail": None, **reset} if state.get("guardrail") or reset else None
        answer: AIMessage = messages[-1]
        tried: list[Tried] = list(state.get("guardrail_attempts") or [])
        number = len(tried) + 1
        pending = Regeneration.model_validate(retry) if retry else None
        run_id = uuid4()
        child = merge_configs(
            config or {},
            {"tags": [f"attempt:{number}"], "metadata": {"guardrail_attempt": number}},
        )
        child["run_id"] = run_id
        report: GuardReport = yield Call(
            self.guardrail.invoke, self.guardrail.ainvoke, (data, child)
        )
        attempt = Attempt(
            number=number,
            guidance=pending.guidance if pending is not None else None,
            answer=answer.text,
            report=report,
            run_id=str(run_id),
        )
        step = next_step(attempt, self.max_attempts)
        if step.kind is StepKind.DELIVER:
            assert step.text is not None
            return self.deliver(answer, attempt, step.text)
        if step.kind is StepKind.REGENERATE:
            return self.again(answer, attempt, tried, step)
        exhausted = self.regenerate and step.exhausted
        if self.human_review == "interrupt":
            from langgraph.types import interrupt

            request = review_request(report, data["query"], answer.text, number, exhausted)
            decision = parse_decision(interrupt(request.model_dump(mode="json")))
            text = delivered(decision, answer.text)
            return self.deliver(answer, attempt, text, decision.type)
        if self.regenerate:
            raise rejection(LoopEnd((*map(attempt_of, tried), attempt), step))
        return self.fallback(answer, attempt)

    def __call__(self, state: Any, config: RunnableConfig | None = None) -> dict[str, Any] | None:
        return Driven(self.check(state, config)).run()

    async def acall(
        self, state: Any, config: RunnableConfig | None = None
    ) -> dict[str, Any] | None:
        return await Driven(self.check(state, config)).arun()


def guardrail_middleware(
    guardrail: Guardrail | None = None,
    on_fail: OnFail | str = OnFail.RAISE,
    retriever: Runnable[Any, Any] | None = None,
    knowledge_base: Any = None,
    *,
    max_attempts: int = 3,
    human_review: Literal["interrupt"] | None = None,
    evidence: Evidence = "turn",
) -> Any:
    """A LangChain v1 ``AgentMiddleware`` running the guardrail on the agent's final answers.

    Args:
        guardrail: the checker (``Guardrail()`` by default).
        on_fail: what a failed answer does, an :class:`~chains.results.OnFail` or its value:
            ``regenerate`` (back to the model with the guidance, up to ``max_attempts``
            answers), ``raise``, ``corrected`` / ``annotated``
            (:meth:`~chains.results.OnFail.fallback_text`) or ``report``.
        retriever: documents for the question, added to the tool results as evidence.
        knowledge_base: a knowledge base (handle or path) for fact validation.
        max_attempts: answers per question with ``on_fail="regenerate"`` (the first included).
        human_review: ``"interrupt"`` pauses the agent for a person on a ``human_review``
            outcome or when regeneration is exhausted (needs a checkpointer; see
            :mod:`chains.agent_review`).
        evidence: ``"turn"`` (the tool results since the last user message) or ``"thread"``
            (every tool result of the thread, for follow-up questions).

    Raises:
        ConfigError: an unknown ``on_fail`` / ``human_review`` / ``evidence``, or
            ``max_attempts`` < 1.
    """
    hook = GuardrailHook(
        guardrail if guardrail is not None else Guardrail(),
        on_fail,
        retriever,
        knowledge_base,
        max_attempts=max_attempts,
        human_review=human_review,
        evidence=evidence,
    )
    try:
        from chains.agent_graph import GuardrailAgentMiddleware
    except ImportError as exc:
        raise MissingDependencyError("langchain", "chains") from exc
    return GuardrailAgentMiddleware(hook)
