"""The sans-IO core of the chains (chains/drive.py): one piece of logic, a sync and an async
driver that must agree — outputs, results, and where a call's exception lands."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda

from chains.drive import Call, Driven, Logic, mapped


def _fails(x: int) -> int:
    raise ValueError(f"bad {x}")


DOUBLE = RunnableLambda(lambda x: x * 2)
FAILS = RunnableLambda(_fails)


def logic(x: int, runnable: Any = DOUBLE) -> Logic[str, int]:
    yield "start"
    try:
        value = yield Call.invoke(runnable, x, None)
    except ValueError as exc:
        yield f"handled {exc}"
        return -1
    yield f"got {value}"
    return value


def sync(gen: Logic[str, int]) -> tuple[list[str], int]:
    driven = Driven(gen)
    out = list(driven.drive())
    return out, driven.result


def asynchronous(gen: Logic[str, int]) -> tuple[list[str], int]:
    driven = Driven(gen)

    async def go() -> list[str]:
        return [s async for s in driven.adrive()]

    out = asyncio.run(go())
    return out, driven.result


@pytest.mark.parametrize("drive", [sync, asynchronous])
def test_both_drivers_make_the_calls_and_yield_the_outputs(drive: Any) -> None:
    assert drive(logic(3)) == (["start", "got 6"], 6)


@pytest.mark.parametrize("drive", [sync, asynchronous])
def test_a_failed_call_is_raised_inside_the_logic_where_it_asked(drive: Any) -> None:
    assert drive(logic(3, FAILS)) == (["start", "handled bad 3"], -1)


@pytest.mark.parametrize("drive", [sync, asynchronous])
def test_an_exception_the_logic_does_not_handle_propagates(drive: Any) -> None:
    def careless() -> Logic[str, int]:
        value = yield Call.invoke(FAILS, 1, None)
        return int(value)

    with pytest.raises(ValueError, match="bad 1"):
        drive(careless())


def test_run_returns_the_result_and_refuses_logic_that_yields_outputs() -> None:
    def only_calls() -> Logic[str, int]:
        a = yield Call.invoke(DOUBLE, 2, None)
        b = yield Call.invoke(DOUBLE, a, None)
        return int(b)

    assert Driven(only_calls()).run() == 8
    assert asyncio.run(Driven(only_calls()).arun()) == 8
    with pytest.raises(TypeError, match="yielded 'start'"):
        Driven(logic(1)).run()


def test_mapped_changes_outputs_and_passes_calls_through() -> None:
    shout = mapped(logic(5), lambda s: None if s == "start" else s.upper())
    assert sync(shout) == (["GOT 10"], 10)
    handled = mapped(logic(5, FAILS), str.upper)
    assert sync(handled) == (["START", "HANDLED BAD 5"], -1)
