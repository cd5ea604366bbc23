"""``guided(model)``: a chat model that hears the guardrail's guidance when an answer is regenerated.

A one-word change in a chain you already have::

    app = {"context": retriever | format_docs, "question": RunnablePassthrough()} \\
        | prompt | guided(model) | StrOutputParser()
    safe = with_guardrail(app, retriever=retriever, on_fail="regenerate", max_attempts=3)

On a first attempt (or outside a regenerate loop) the guided model *is* the model: same input,
same config, same run. On a regeneration the loop puts a
:class:`~chains.regenerate.Regeneration` (the rejected answer and what to fix) in the run's
config (``configurable["guardrail_regeneration"]``); the guided model adds its text
(:data:`chains.generation.GUIDANCE_PROMPT`) to the call's system message — appended to the
first message when that is a system message, else as a new system message before the rest —
for that call only. The chain's input is never touched, so the question, every retrieval query
and the question the guardrail checks stay the user's.

Anything that takes messages can be guided (a chat model, ``model.bind_tools(...)``); bind
tools or structured output *inside*: ``guided(model.bind_tools(tools))``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config

from chains.regenerate import regeneration_of


def as_messages(value: Any) -> list[BaseMessage]:
    """A chat model's input as messages (a prompt value, a string or message-likes)."""
    if isinstance(value, PromptValue):
        return value.to_messages()
    if isinstance(value, str):
        return [HumanMessage(content=value)]
    return convert_to_messages(value)


def with_system_text(messages: list[BaseMessage], text: str) -> list[BaseMessage]:
    """``messages`` with ``text`` on the system side: appended to a leading system message
    (one system message suits every provider), else a system message put first."""
    if messages and isinstance(messages[0], SystemMessage):
        first = messages[0]
        content = first.content
        merged: Any = (
            f"{content}\n\n{text}"
            if isinstance(content, str)
            else [*content, {"type": "text", "text": text}]
        )
        return [first.model_copy(update={"content": merged}), *messages[1:]]
    return [SystemMessage(content=text), *messages]


class GuidedModel(Runnable[Any, Any]):
    """A chat model (or any Runnable taking messages) shown the regeneration guidance in its
    run's config. Build with :func:`guided`; nothing per call is stored on it."""

    def __init__(self, model: Runnable[Any, Any]) -> None:
        self.model = model

    @property
    def InputType(self) -> Any:  # noqa: N802 - LangChain's name
        return self.model.InputType

    @property
    def OutputType(self) -> Any:  # noqa: N802 - LangChain's name
        return self.model.OutputType

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The wrapped model's name (the guided model adds no run of its own)."""
        return self.model.get_name(suffix, name=name)

    def prepared(self, value: Any, config: RunnableConfig) -> Any:
        """The model's input for this call: ``value`` itself, or its messages with the
        guidance on the system side on a regeneration."""
        regeneration = regeneration_of(config)
        if regeneration is None:
            return value
        return with_system_text(as_messages(value), regeneration.message)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """The model's answer, guided on a regeneration."""
        cfg = ensure_config(config)
        return self.model.invoke(self.prepared(input, cfg), cfg, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async :meth:`invoke`."""
        cfg = ensure_config(config)
        return await self.model.ainvoke(self.prepared(input, cfg), cfg, **kwargs)

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """The model's streamed answer, guided on a regeneration."""
        cfg = ensure_config(config)
        yield from self.model.stream(self.prepared(input, cfg), cfg, **kwargs)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        cfg = ensure_config(config)
        async for chunk in self.model.astream(self.prepared(input, cfg), cfg, **kwargs):
            yield chunk


def guided(model: Runnable[Any, Any]) -> GuidedModel:
    """Wrap a chat model so a regenerate loop's guidance reaches it (see :mod:`chains.guidance`).

    Example::

        chain = prompt | guided(ChatGroq(model="llama-3.1-8b-instant")) | StrOutputParser()
    """
    return GuidedModel(model)
