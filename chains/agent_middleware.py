"""A LangChain v1 agent middleware: check the agent's final answer in an ``after_model`` hook.

Needs the ``langchain`` package (v1, ``pip install 'guardrail[chains]'``); it is imported when
the middleware is built, not when this module is imported.

The hook looks at the model's last message. Tool calls pass through; a final answer is checked
against the evidence of this turn — the tool results since the last user message, plus the
documents of an optional ``retriever`` — and the knowledge base, if given. Then:

- a deliverable recommendation replaces the message text with the delivered text (annotated or
  corrected when the guardrail says so);
- otherwise ``on_fail`` decides: ``raise`` (``GuardrailRejected``), ``corrected`` /
  ``annotated`` text, or ``report`` (the text is kept and marked as failed).

The report is attached to the message as ``additional_kwargs["guardrail_report"]`` (JSON).

Example::

    from langchain.agents import create_agent
    agent = create_agent(model, tools=[search], middleware=[guardrail_middleware()])
"""

from __future__ import annotations

import functools
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable

from chains.results import DELIVERABLE, OnFail
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

    def guard_input(self, messages: list[BaseMessage]) -> dict[str, Any] | None:
        """The guardrail input for the final answer, or ``None`` when there is none to check."""
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        answer = messages[-1]
        if answer.tool_calls or not answer.text.strip():
            return None
        query, passages = turn_evidence(messages[:-1])
        if self.retriever is not None and query:
            passages += [Passage.coerce(d) for d in self.retriever.invoke(query)]
        data: dict[str, Any] = {"query": query, "response": answer.text, "passages": passages}
        if self.knowledge_base is not None:
            data["knowledge_base"] = self.knowledge_base
        return data

    def update(self, message: AIMessage, report: GuardReport) -> dict[str, Any]:
        """The state update replacing the answer message (same id) after the check."""
        if report.action in DELIVERABLE:
            text = report.delivered_text or message.text
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

    def __call__(self, state: Any) -> dict[str, Any] | None:
        messages = list(state["messages"])
        data = self.guard_input(messages)
        if data is None:
            return None
        return self.update(messages[-1], self.guardrail.invoke(data))

    async def acall(self, state: Any) -> dict[str, Any] | None:
        messages = list(state["messages"])
        data = self.guard_input(messages)
        if data is None:
            return None
        return self.update(messages[-1], await self.guardrail.ainvoke(data))


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
