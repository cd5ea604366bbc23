"""Streamed agent answers checked sentence by sentence: :func:`guard_agent`.

:func:`guard_agent` wraps a LangChain v1 agent (``create_agent``) so that ``stream`` /
``astream`` (and ``astream_events``) pass the final answer's tokens through as the model writes
them, check each sentence once complete against the turn's evidence (tool results, retriever
documents, knowledge base) — ``on_sentence_checked`` events, the ``streaming`` policy for a
failed sentence (``annotate`` / ``stop`` / ``buffer``) — and end with the report on the whole
answer (``Guardrail.invoke``'s; its ``delivered_text`` is what to keep on screen). Tool-calling
model turns are not shown. Complete answers are checked by
:func:`chains.agent_middleware.guardrail_middleware`.

Example::

    guarded = guard_agent(create_agent(model, tools=[search]), streaming="buffer")
    async for event in guarded.astream_events({"messages": [...]}, version="v2"):
        ...
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Never

from langchain_core.messages import AIMessageChunk, HumanMessage, ToolMessage, convert_to_messages
from langchain_core.runnables import Runnable, RunnableConfig

from chains.drive import Call, Logic
from chains.stream_checks import StreamingConfig
from chains.streaming import SentenceGuard, StreamsThroughGuard
from guardrail.inputs import Passage
from guardrail.pipeline import Guardrail


class GuardedAgent(StreamsThroughGuard, Runnable[Any, Any]):
    """An agent whose streamed final answer is checked sentence by sentence.

    ``invoke`` runs the agent unchanged (add
    :func:`chains.agent_middleware.guardrail_middleware` to check complete
    answers); ``stream`` / ``astream`` yield the final answer's text, then the
    :class:`~guardrail.report.GuardReport` on it. Build with :func:`guard_agent`.
    """

    def __init__(
        self,
        agent: Any,
        guardrail: Guardrail,
        streaming: StreamingConfig,
        model_node: str,
        retriever: Runnable[Any, Any] | None = None,
        knowledge_base: Any = None,
    ) -> None:
        self.agent = agent
        self.guardrail = guardrail
        self.retriever = retriever
        self.knowledge_base = knowledge_base
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
        if self.retriever is not None and query:
            found = yield Call.invoke(self.retriever, query, child)
            passages += [Passage.coerce(d) for d in found]
        base: dict[str, Any] = {"query": query, "passages": passages}
        if self.knowledge_base is not None:
            base["knowledge_base"] = self.knowledge_base
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
            state["guard"] = SentenceGuard(self.guardrail, base, self.streaming, child)
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
    config = StreamingConfig.load(settings)
    return GuardedAgent(agent, guard, config, model_node, retriever, knowledge_base)
