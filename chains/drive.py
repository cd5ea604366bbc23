"""Sans-IO logic written once, run by thin sync and async drivers.

The shared logic of a guarded stream, the regenerate loop and the middleware is a generator
that yields a :class:`Call` where it needs a Runnable invoked or a custom event dispatched, and
receives the result (or has the call's exception raised at that ``yield``). :class:`Driven`
runs it: ``drive``/``run`` make each call synchronously, ``adrive``/``arun`` await its async
form. So the sync and async paths cannot drift apart: they are one piece of code.

Example::

    def steps(x):
        doubled = yield Call.invoke(runnable, x, None)
        yield f"got {doubled}"
        return doubled

    list(Driven(steps(2)).drive())            # ["got 4"], runnable.invoke(2, None)
    [s async for s in Driven(steps(2)).adrive()]   # the same, await runnable.ainvoke(2, None)
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeAlias, TypeVar

from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.runnables import RunnableConfig

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Call:
    """A call that sans-IO logic needs made: ``sync(*args, **kwargs)`` by a sync driver,
    ``await asynch(*args, **kwargs)`` by an async one (see :class:`Driven`)."""

    sync: Callable[..., Any]
    asynch: Callable[..., Awaitable[Any]]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def invoke(cls, runnable: Any, input: Any, config: RunnableConfig | None) -> Call:
        """``runnable.invoke(input, config)`` / ``await runnable.ainvoke(input, config)``."""
        return cls(runnable.invoke, runnable.ainvoke, (input, config))

    @classmethod
    def event(cls, name: str, data: Any, config: RunnableConfig) -> Call:
        """Dispatch the custom event ``name`` (``dispatch_custom_event`` /
        ``adispatch_custom_event``) with ``config``."""
        sync = functools.partial(dispatch_custom_event, name, data, config=config)
        return cls(sync, functools.partial(adispatch_custom_event, name, data, config=config))


#: Sans-IO logic: a generator yielding :class:`Call` steps (it receives each call's result, or
#: has its exception raised at that ``yield``) and outputs ``T``; it returns ``R``.
Logic: TypeAlias = Generator["Call | T", Any, R]


class Driven(Generic[T, R]):
    """Sans-IO logic written once, run by a thin sync or async driver.

    :meth:`drive` / :meth:`adrive` make each call the logic yields (``invoke`` / ``await
    ainvoke``) and yield its other outputs; :meth:`run` / :meth:`arun` drive logic that yields
    only calls and return what it returns. An ``Exception`` a call raises is raised inside the
    logic where it asked for the call, so the logic handles or propagates it; :attr:`result`
    is what the logic returned.
    """

    result: R

    def __init__(self, logic: Logic[T, R]) -> None:
        self._logic = logic
        self._reply: Any = None
        self._error: Exception | None = None

    def reply(self, value: Any) -> None:
        """The result of the last call, sent into the logic at its next step."""
        self._reply = value

    def fail(self, error: Exception) -> None:
        """The exception of the last call, raised inside the logic at its next step."""
        self._error = error

    def steps(self) -> Iterator[Call | T]:
        """The logic's steps, each resumed with the outcome of the call before it."""
        while True:
            reply, error = self._reply, self._error
            self._reply, self._error = None, None
            try:
                step = self._logic.send(reply) if error is None else self._logic.throw(error)
            except StopIteration as stop:
                self.result = stop.value
                return
            yield step

    def _made(self, call: Call) -> None:
        try:
            self.reply(call.sync(*call.args, **call.kwargs))
        except Exception as exc:  # noqa: BLE001 - raised again inside the logic
            self.fail(exc)

    async def _amade(self, call: Call) -> None:
        try:
            self.reply(await call.asynch(*call.args, **call.kwargs))
        except Exception as exc:  # noqa: BLE001 - raised again inside the logic
            self.fail(exc)

    @staticmethod
    def _only_call(step: Call | T) -> Call:
        if not isinstance(step, Call):
            raise TypeError(f"this logic is run for its result, yet it yielded {step!r}")
        return step

    def drive(self) -> Generator[T, None, R]:
        """Sync driver: make each call, yield each output; returns the logic's result."""
        for step in self.steps():
            if isinstance(step, Call):
                self._made(step)
            else:
                yield step
        return self.result

    async def adrive(self) -> AsyncIterator[T]:
        """Async driver: await each call, yield each output (then see :attr:`result`)."""
        for step in self.steps():
            if isinstance(step, Call):
                await self._amade(step)
            else:
                yield step

    def run(self) -> R:
        """Sync driver of logic that yields only calls: its result."""
        for step in self.steps():
            self._made(self._only_call(step))
        return self.result

    async def arun(self) -> R:
        """Async :meth:`run`."""
        for step in self.steps():
            await self._amade(self._only_call(step))
        return self.result


def mapped(logic: Logic[Any, R], fn: Callable[[Any], Any]) -> Logic[Any, R]:
    """``logic`` with each output ``x`` replaced by ``fn(x)`` (dropped when ``None``); its
    calls, their results and their exceptions pass through unchanged."""
    inner: Driven[Any, R] = Driven(logic)
    for step in inner.steps():
        if isinstance(step, Call):
            try:
                inner.reply((yield step))
            except Exception as exc:  # noqa: BLE001 - raised again inside the logic
                inner.fail(exc)
        elif (out := fn(step)) is not None:
            yield out
    return inner.result
