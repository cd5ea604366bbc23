"""The LangChain v1 side of :func:`chains.agent_middleware.guardrail_middleware`: the agent
state it adds and the ``AgentMiddleware`` whose hooks run the check.

Imports ``langchain`` (v1) at module level: :mod:`chains.agent_middleware` imports this module
only when a middleware is built.

Hooks:

- ``after_agent`` (``can_jump_to=["model"]``) checks the final answer once the model has
  written a turn without tool calls, and may send the agent back to the model;
- ``wrap_model_call`` adds the pending :class:`~chains.regenerate.Regeneration`'s ``message``
  (the rejected answer and the guidance, the text every guarded chain shows the model) to the
  system message of the model calls of a regeneration, each inside a ``guardrail.regenerate`` run (``{"attempt": N, "guidance": ...}``);
- ``before_agent`` clears what an earlier, failed run of the thread left behind and, with
  ``human_review="interrupt"``, fails the first call without a checkpointer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import OmitFromInput, PrivateStateAttr, hook_config
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.config import get_config
from langgraph.runtime import Runtime

from chains.agent_middleware import GuardrailHook, Tried
from chains.agent_review import require_checkpointer
from chains.regenerate import Regeneration


class GuardrailAgentState(AgentState[Any]):
    """The agent state with the guardrail's fields."""

    guardrail: NotRequired[Annotated[dict[str, Any] | None, OmitFromInput]]
    """The outcome of the last check (action, verdict, confidence, attempts, review): part of
    the agent's result, so its top run shows it."""
    guardrail_attempts: NotRequired[Annotated[list[Tried], PrivateStateAttr]]
    """This turn's rejected answers so far (number, guidance, answer, action, the id of the
    ``guardrail`` run that checked it — not the report: every model call's traced input holds
    the private state, see :mod:`chains.agent_middleware`)."""
    guardrail_retry: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]
    """The pending regeneration: a :class:`~chains.regenerate.Regeneration` as JSON (attempt
    number, rejected answer, guidance)."""


def with_guidance(system: SystemMessage | None, prompt: str) -> SystemMessage:
    """``system`` with ``prompt`` appended (a new system message when there is none)."""
    if system is None:
        return SystemMessage(content=prompt)
    if isinstance(system.content, str):
        return SystemMessage(content=f"{system.content}\n\n{prompt}" if system.content else prompt)
    return SystemMessage(content=[*system.content, {"type": "text", "text": prompt}])


def _answer_of(response: Any) -> str:
    messages = getattr(response, "result", None) or [response]
    return str(getattr(messages[0], "text", ""))


def _pending(request: ModelRequest[Any]) -> Regeneration | None:
    """The pending regeneration of the agent's state, if any."""
    retry = cast("dict[str, Any] | None", request.state.get("guardrail_retry"))
    return Regeneration.model_validate(retry) if retry else None


def _regeneration(regeneration: Regeneration) -> tuple[dict[str, Any], RunnableConfig]:
    """The traced input and config of a regenerating model call."""
    number = regeneration.number
    config: RunnableConfig = {
        "run_name": "guardrail.regenerate",
        "tags": [f"attempt:{number}"],
        "metadata": {"guardrail_attempt": number, "guardrail_guidance": regeneration.guidance},
    }
    return {"attempt": number, "guidance": regeneration.guidance}, config


class GuardrailAgentMiddleware(AgentMiddleware[GuardrailAgentState, Any, Any]):
    """Checks the agent's final answer; regenerates it with guidance or pauses for a person."""

    state_schema = GuardrailAgentState

    def __init__(self, hook: GuardrailHook) -> None:
        super().__init__()
        self.hook = hook

    # --- before the run -----------------------------------------------------------------

    def before_agent(
        self, state: GuardrailAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        if self.hook.human_review == "interrupt":
            require_checkpointer(dict(get_config()))
        if state.get("guardrail_attempts") or state.get("guardrail_retry"):
            return {"guardrail_attempts": [], "guardrail_retry": None}
        return None

    async def abefore_agent(
        self, state: GuardrailAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    # --- the model calls of a regeneration ------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        retry = _pending(request)
        if retry is None:
            return handler(request)
        guided = request.override(
            system_message=with_guidance(request.system_message, retry.message)
        )
        made: list[ModelResponse[Any]] = []

        def call(_: dict[str, Any]) -> dict[str, str]:
            made.append(handler(guided))
            return {"answer": _answer_of(made[0])}

        inputs, config = _regeneration(retry)
        RunnableLambda(call).invoke(inputs, config)
        return made[0]

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        retry = _pending(request)
        if retry is None:
            return await handler(request)
        guided = request.override(
            system_message=with_guidance(request.system_message, retry.message)
        )
        made: list[ModelResponse[Any]] = []

        async def call(_: dict[str, Any]) -> dict[str, str]:
            made.append(await handler(guided))
            return {"answer": _answer_of(made[0])}

        inputs, config = _regeneration(retry)
        await RunnableLambda(call).ainvoke(inputs, config)
        return made[0]

    # --- the final answer ---------------------------------------------------------------

    @hook_config(can_jump_to=["model"])
    def after_agent(
        self, state: GuardrailAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.hook(state, get_config())

    @hook_config(can_jump_to=["model"])
    async def aafter_agent(
        self, state: GuardrailAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return await self.hook.acall(state, get_config())
