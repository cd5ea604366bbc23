"""One planner: the answer is planned in one place, whatever stages run.

``plan_answer`` is called from exactly one place in ``guardrail`` (the pipeline's plan step),
and the steps it is made of — finding the problems and planning the delivery — are called
from nowhere else.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "guardrail"
PLANNER = "plan_answer"
PLANNER_STEPS = ("find_problems", "plan_delivery")


def calls(source: str, name: str) -> list[str]:
    """The qualified names of the functions in ``source`` that call ``name`` (``<module>``
    for a call at module level), by the called name or attribute."""
    found: list[str] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = child.name if where == "<module>" else f"{where}.{child.name}"
            if isinstance(child, ast.Call):
                func = child.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if called == name:
                    found.append(where)
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return found


def callers(name: str) -> list[str]:
    """``module:function`` of every call of ``name`` in ``guardrail``."""
    return [
        f"{path.relative_to(PACKAGE).as_posix()}:{where}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for where in calls(path.read_text(encoding="utf-8"), name)
    ]


def test_the_answer_is_planned_in_one_place() -> None:
    assert callers(PLANNER) == ["pipeline.py:_plan_step.step"]


def test_problems_and_delivery_are_found_only_by_the_planner() -> None:
    for name in PLANNER_STEPS:
        assert callers(name) == [f"decision/plan.py:{PLANNER}"], name


def test_the_walk_finds_calls_by_name_and_attribute() -> None:
    source = (
        "import m\n"
        "def f():\n    return plan_answer(1)\n"
        "class C:\n    def g(self):\n        def h():\n            m.plan_answer()\n"
        "plan_answer()\n"
    )
    assert calls(source, "plan_answer") == ["f", "C.g.h", "<module>"]
    assert calls("def f():\n    plan_answers()\n", "plan_answer") == []
