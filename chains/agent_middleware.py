"""A LangChain v1 agent middleware: check the agent's final answer in an ``after_model`` hook.

Needs the ``langchain`` package (v1, ``pip install 'answer-guardrail[chains]'``); it is imported when
the middleware is built, not when this module is imported.

The hook looks at the model's last message. Tool calls pass through; a final answer is checked
against the evidence of this turn — the tool results since the last user message, plus the
documents of an optional ``retriever`` — and the knowledge base, if given. Then:

- when the report has text to show, the message text becomes ``report.delivered_text`` —
  exactly what ``Guardrail.invoke`` delivers for this answer (the original, or the annotated
  text with its removals and repairs);
- otherwise (``regenerate`` / ``human_review``) ``on_fail`` decides: ``raise``
  (``GuardrailRejected``), ``corrected`` / ``annotated`` text, or ``report`` (the text is kept
  and marked as failed).

The report is attached to the message as ``additional_kwargs["guardrail_report"]`` (JSON).

Streamed model output gets the same check while it streams: :func:`guard_agent` wraps the
agent so that ``stream`` / ``astream`` (and ``astream_events``) pass the final answer's tokens
through as the model writes them, check each sentence once complete against the turn's
evidence (tool results, retriever documents, knowledge base) — ``on_sentence_checked``
events, the ``streaming`` policy for a failed sentence (``annotate`` / ``stop`` / ``buffer``)
— and end with the report on the whole answer (``Guardrail.invoke``'s; its ``delivered_text``
is what to keep on screen). Tool-calling model turns are not shown.

Example::

    from langchain.agents import create_agent
    agent = create_agent(model, tools=[search], middleware=[guardrail_middleware()])
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from typing import Any, Never

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.runnables import Runnable, RunnableConfig

from chains.drive import Call, Driven, Logic
from chains.results import OnFail
from chains.stream_checks import StreamingConfig
from chains.streaming import SentenceGuard, StreamsThroughGuard
from guardrail.errors import GuardrailRejected, MissingDependencyError
from guardrail.inputs import Passage
from guardrail.pipeline import Guardrail
from guardrail.report import GuardReport


def turn_evidence(messages: list[BaseMessage]) -> tuple[str, list[Passage]]:
    """The last user question and the tool results that followed it (the turn's evidence)."""
    query, passages = "", []
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            query = message.text
            break
        if isinstance(message, ToolMessage) and message.text.strip():
            passages.append(Passage(text=message.text, source=f"tool:{message.name or '?'}"))
    return query, list(reversed(passages))


class GuardrailHook:
    """The check itself, independent of the langchain version (no per-call state)."""

    def __init__(
        self,
        guardrail: Guardrail,
        on_fail: OnFail,
        retriever: Runnable[Any, Any] | None,
        knowledge_base: Any,
    ) -> None:
        self.guardrail = guardrail
        self.on_fail = on_fail
        self.retriever = retriever
        self.knowledge_base = knowledge_base

    def guard_input(self, messages: list[BaseMessage]) -> Logic[Never, dict[str, Any] | None]:
        """The guardrail input for the final answer, or ``None`` when there is none to check
        (sans-IO: the retriever is a yielded call, awaited on the async path)."""
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        answer = messages[-1]
        if answer.tool_calls or not answer.text.strip():
            return None
        query, passages = turn_evidence(messages[:-1])
        if self.retriever is not None and query:
            found = yield Call(self.retriever.invoke, self.retriever.ainvoke, (query,))
            passages += [Passage.coerce(d) for d in found]
        data: dict[str, Any] = {"query": query, "response": answer.text, "passages": passages}
        if self.knowledge_base is not None:
            data["knowledge_base"] = self.knowledge_base
        return data

    def update(self, message: AIMessage, report: GuardReport) -> dict[str, Any]:
        """The state update replacing the answer message (same id) after the check."""
        delivered = report.delivered_text
        if delivered is not None:
            text = delivered
        elif self.on_fail is OnFail.RAISE:
            raise GuardrailRejected(
                f"the guardrail rejected the agent's answer ({report.action.value})", report
            )
        elif self.on_fail is OnFail.CORRECTED:
            text = report.corrected
        elif self.on_fail is OnFail.ANNOTATED:
            text = report.annotated
        else:
            text = message.text
        extra = {**message.additional_kwargs, "guardrail_report": report.model_dump(mode="json")}
        checked = AIMessage(
            id=message.id,
            content=text,
            additional_kwargs=extra,
            response_metadata=message.response_metadata,
        )
        return {"messages": [checked]}

    def _steps(self, state: Any) -> Logic[Never, dict[str, Any] | None]:
        messages = list(state["messages"])
        data = yield from self.guard_input(messages)
        if data is None:
            return None
        report = yield Call(self.guardrail.invoke, self.guardrail.ainvoke, (data,))
        return self.update(messages[-1], report)

    def __call__(self, state: Any) -> dict[str, Any] | None:
        return Driven(self._steps(state)).run()

    async def acall(self, state: Any) -> dict[str, Any] | None:
        return await Driven(self._steps(state)).arun()


@functools.cache
def _middleware_class() -> type[Any]:
    try:
        from langchain.agents.middleware import AgentMiddleware
    except ImportError as exc:
        raise MissingDependencyError("langchain", "chains") from exc

    class GuardrailAgentMiddleware(AgentMiddleware):  # type: ignore[misc]
        """Checks the agent's final answer after each model call."""

        def __init__(self, hook: GuardrailHook) -> None:
            super().__init__()
            self.hook = hook

        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            return self.hook(state)

        async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            return await self.hook.acall(state)

    return GuardrailAgentMiddleware


def guardrail_middleware(
    guardrail: Guardrail | None = None,
    on_fail: OnFail | str = OnFail.RAISE,
    retriever: Runnable[Any, Any] | None = None,
    knowledge_base: Any = None,
) -> Any:
    """A LangChain v1 ``AgentMiddleware`` running the guardrail on the agent's final answers."""
    hook = GuardrailHook(
        guardrail if guardrail is not None else Guardrail(),
        OnFail(on_fail),
        retriever,
        knowledge_base,
    )
    return _middleware_class()(hook)


class GuardedAgent(StreamsThroughGuard, Runnable[Any, Any]):
    """An agent whose streamed final answer is checked sentence by sentence.

    ``invoke`` runs the agent unchanged (add :func:`guardrail_middleware` to check complete
    answers); ``stream`` / ``astream`` yield the final answer's text, then the
    :class:`~guardrail.report.GuardReport` on it. Build with :func:`guard_agent`.
    """

    def __init__(
        self,
        agent: Any,
        hook: GuardrailHook,
        streaming: StreamingConfig,
        model_node: str,
    ) -> None:
        self.agent = agent
        self.hook = hook
        self.streaming = streaming
        self.model_node = model_node

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the agent as is."""
        return self.agent.invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async :meth:`invoke`."""
        return await self.agent.ainvoke(input, config, **kwargs)

    def _query(self, value: Any) -> str:
        messages = value.get("messages", []) if isinstance(value, dict) else value
        for message in reversed(convert_to_messages(messages)):
            if isinstance(message, HumanMessage):
                return message.text
        return ""

    def _base(
        self, query: str, tools: list[Passage], child: RunnableConfig
    ) -> Logic[Never, dict[str, Any]]:
        passages = list(tools)
        if self.hook.retriever is not None and query:
            found = yield Call.invoke(self.hook.retriever, query, child)
            passages += [Passage.coerce(d) for d in found]
        base: dict[str, Any] = {"query": query, "passages": passages}
        if self.hook.knowledge_base is not None:
            base["knowledge_base"] = self.hook.knowledge_base
        return base

    def _chunks(self, value: Any, state: dict[str, Any], child: RunnableConfig) -> Iterator[Any]:
        state |= {"query": self._query(value), "tools": []}
        chunks: Iterator[Any] = self.agent.stream(value, child, stream_mode="messages")
        return chunks

    def _achunks(
        self, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> AsyncIterator[Any]:
        state |= {"query": self._query(value), "tools": []}
        chunks: AsyncIterator[Any] = self.agent.astream(value, child, stream_mode="messages")
        return chunks

    def _text(self, chunk: Any, state: dict[str, Any]) -> tuple[str | None, Any]:
        """What a ``messages``-mode item means: the text of a final-answer chunk, or ``None``
        (tool results are recorded as evidence; tool-calling turns are dropped)."""
        message, meta = chunk
        if isinstance(message, ToolMessage) and message.text.strip():
            state["tools"].append(Passage(text=message.text, source=f"tool:{message.name or '?'}"))
            return None, None
        if not isinstance(message, AIMessageChunk) or meta.get("langgraph_node") != self.model_node:
            return None, None
        if message.id != state.get("id"):  # a new model turn
            state["id"], state["guard"], state["tool_turn"] = message.id, None, False
        if message.tool_call_chunks:
            state["guard"], state["tool_turn"] = None, True
        return (None if state["tool_turn"] else message.text), None

    def _guard(
        self, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> Logic[Never, SentenceGuard]:
        if state.get("guard") is None:
            base = yield from self._base(state["query"], state["tools"], child)
            state["guard"] = SentenceGuard(self.hook.guardrail, base, self.streaming, child)
        guard: SentenceGuard = state["guard"]
        return guard

    def _root(self, config: RunnableConfig | None) -> RunnableConfig:
        cfg: RunnableConfig = dict(config or {})  # type: ignore[assignment]
        cfg.setdefault("run_name", "guarded_agent")
        return cfg


def guard_agent(
    agent: Any,
    guardrail: Guardrail | None = None,
    streaming: StreamingConfig | dict[str, Any] | str | None = None,
    retriever: Runnable[Any, Any] | None = None,
    knowledge_base: Any = None,
    model_node: str = "model",
) -> GuardedAgent:
    """Wrap a LangChain v1 agent (``create_agent``) so its streamed answers are checked.

    Args:
        agent: the compiled agent graph.
        guardrail: the checker (``Guardrail()`` by default).
        streaming: the policy for a failed sentence (default: the guardrail config's
            ``streaming`` section if any, else ``annotate``).
        retriever: documents for the question, added to the tool results as evidence.
        knowledge_base: a knowledge base (handle or path) for fact validation.
        model_node: the graph node whose streamed messages are the model's (``"model"``).
    """
    guard = guardrail if guardrail is not None else Guardrail()
    settings = streaming if streaming is not None else getattr(guard.config, "streaming", None)
    hook = GuardrailHook(guard, OnFail.REPORT, retriever, knowledge_base)
    return GuardedAgent(agent, hook, StreamingConfig.load(settings), model_node)
