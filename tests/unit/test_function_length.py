"""Short functions where the logic lives: no function or method over 80 lines in the decision,
the stages, the pipeline, the hallucination detector or the service app."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "guardrail"
MAX_LINES = 80
"""The longest a function may be, from its ``def`` (decorators excluded) to its last line."""
CHECKED = (
    "decision",
    "stages",
    "pipeline.py",
    "hallucination/detector.py",
    "service/app.py",
)
"""Paths under ``guardrail/``: a package (every module in it) or one module."""


def modules(path: str) -> list[Path]:
    """The modules under ``guardrail/path`` (the module itself when it is a file)."""
    target = PACKAGE / path
    return sorted(target.rglob("*.py")) if target.is_dir() else [target]


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """``(qualified name, lines)`` of every function in ``source`` longer than ``limit``."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > limit:
                    found.append((name, lines))
            visit(child, f"{name}." if name != prefix else prefix)

    visit(ast.parse(source), "")
    return found


@pytest.mark.parametrize("path", CHECKED)
def test_no_function_is_longer_than_the_limit(path: str) -> None:
    found = modules(path)
    assert found, f"guardrail/{path} holds no module"
    long = [
        f"{module.relative_to(PACKAGE)}:{name} ({lines} lines)"
        for module in found
        for name, lines in long_functions(module.read_text(encoding="utf-8"))
    ]
    assert not long, f"functions over {MAX_LINES} lines: {long}"


def test_the_measure_counts_nested_functions_and_methods() -> None:
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_LINES))
    source = f"class A:\n    def f(self):\n        def g():\n            pass\n{body}\n"
    assert long_functions(source) == [("A.f", MAX_LINES + 3)]
    assert long_functions("def short():\n    return 1\n") == []
