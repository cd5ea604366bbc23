"""Runs whose traces show views of a step's values, not the values themselves.

LangChain's ``Runnable._call_with_config`` hands a step's input and output to the callback
handlers as they are; a pipeline step's values are the whole pipeline state (a spaCy parse,
shared caches), which a trace would show as token arrays and object reprs. :func:`call_traced`
does what ``_call_with_config`` does (a child run, its config and context for nested runnables,
errors recorded) but gives the handlers *views*: the step returns its value together with a
function building its outputs view, and the views are built only when some handler records
chain runs — an untraced call builds none.

:class:`StepRunnable` is one pipeline step as a Runnable on these terms; ``Guardrail`` runs one
per stage (``guardrail.<stage>``), then ``guardrail.confidence`` and
``guardrail.recommendation``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from langchain_core.callbacks.base import BaseCallbackManager
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    patch_config,
    run_in_executor,
    set_config_context,
)
from langchain_core.runnables.utils import coro_with_context

In = TypeVar("In")
Out = TypeVar("Out")

View = Callable[[], Any]
"""Builds a run's inputs or outputs view (called only when a handler records the run)."""


def records(manager: BaseCallbackManager) -> bool:
    """Whether any handler of ``manager`` records chain runs (so views are worth building)."""
    return any(not handler.ignore_chain for handler in manager.handlers)


def call_traced(
    name: str,
    func: Callable[[In, RunnableConfig], tuple[Out, View]],
    value: In,
    config: RunnableConfig | None,
    inputs: View,
) -> Out:
    """Run ``func(value, child_config)`` as the run ``name`` (or the config's ``run_name``).

    ``func`` returns its result and the view of its outputs; the run's inputs are ``inputs()``.
    Both views are built only when a handler records the run."""
    config = ensure_config(config)
    manager = get_callback_manager_for_config(config)
    recording = records(manager)
    run_manager = manager.on_chain_start(
        None,
        inputs() if recording else {},
        name=config.get("run_name") or name,
        run_id=config.pop("run_id", None),
    )
    try:
        child = patch_config(config, callbacks=run_manager.get_child())
        with set_config_context(child) as context:
            result, outputs = context.run(func, value, child)
    except BaseException as exc:
        run_manager.on_chain_error(exc)
        raise
    run_manager.on_chain_end(outputs() if recording else {})
    return result


async def acall_traced(
    name: str,
    func: Callable[[In, RunnableConfig], Awaitable[tuple[Out, View]]],
    value: In,
    config: RunnableConfig | None,
    inputs: View,
) -> Out:
    """Async :func:`call_traced`: ``func`` returns an awaitable of (result, outputs view)."""
    config = ensure_config(config)
    manager = get_async_callback_manager_for_config(config)
    recording = records(manager)
    run_manager = await manager.on_chain_start(
        None,
        inputs() if recording else {},
        name=config.get("run_name") or name,
        run_id=config.pop("run_id", None),
    )
    try:
        child = patch_config(config, callbacks=run_manager.get_child())
        with set_config_context(child) as context:
            result, outputs = await coro_with_context(func(value, child), context)
    except BaseException as exc:
        await run_manager.on_chain_error(exc)
        raise
    await run_manager.on_chain_end(outputs() if recording else {})
    return result


class StepRunnable(Runnable[Any, Any]):
    """A pipeline step whose run shows ``inputs(value)`` and the outputs view ``step`` returns.

    Args:
        name: the run name (``guardrail.<stage>``).
        step: ``value -> (result, outputs view)``; synchronous (``ainvoke`` runs it in the
            config's executor, off the event loop).
        inputs: ``value -> inputs view`` (plain JSON), called only when the run is recorded.
    """

    def __init__(
        self,
        name: str,
        step: Callable[[Any], tuple[Any, View]],
        inputs: Callable[[Any], dict[str, Any]],
    ) -> None:
        self.name = name
        self.step = step
        self.inputs = inputs

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the step on ``input`` as the child run ``name``."""
        return call_traced(
            self.get_name(),
            lambda value, _: self.step(value),
            input,
            config,
            lambda: self.inputs(input),
        )

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async :meth:`invoke` (the step runs in the config's executor)."""
        return await acall_traced(
            self.get_name(),
            lambda value, child: run_in_executor(child, self.step, value),
            input,
            config,
            lambda: self.inputs(input),
        )
