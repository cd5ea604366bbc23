"""Imports run one way: ``chains`` and the faces (CLI, service, integrations) sit
on the core; no core module imports ``chains`` or a face, at module level or inside a function.

And no import cycle anywhere in ``guardrail`` (imports inside functions count:
that is how a cycle hides); the checks (coherence, facts, hallucination, correction) import
neither each other nor the decision; run-time code never imports the export tooling."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "guardrail"
FACES = ("cli", "service", "integrations")
"""The packages of ``guardrail`` that face users; they may import ``chains``."""
FORBIDDEN = ("chains", *(f"guardrail.{face}" for face in FACES))
CHECKS = ("coherence", "facts", "hallucination", "correction")
"""The checks: packages of ``guardrail`` that import neither each other nor the decision."""
EXPORT_TOOLS = (
    "guardrail.verifiers.export",
    "guardrail.verifiers.preset_export",
    "guardrail.verifiers.card",
    "guardrail.verifiers.training",
)
"""Model training and export (torch, ``onnx``): for the CLI and scripts, never run time."""


def core_modules() -> list[Path]:
    """Every module of ``guardrail`` outside the faces."""
    return sorted(
        path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in FACES
    )


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, wherever it is written."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def is_forbidden(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in FORBIDDEN)


def test_the_core_is_the_package_minus_its_faces() -> None:
    modules = core_modules()
    assert PACKAGE / "pipeline.py" in modules and PACKAGE / "stages" / "base.py" in modules
    assert not any(p.relative_to(PACKAGE).parts[0] in FACES for p in modules)
    assert all((PACKAGE / face).is_dir() for face in FACES)


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_core_module_imports_chains_or_a_face(path: Path) -> None:
    wrong = [f"line {line}: {module}" for line, module in imported(path) if is_forbidden(module)]
    assert not wrong, f"{path.relative_to(PACKAGE)} imports upward: {wrong}"


def test_the_walk_catches_an_import_of_chains(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from chains.streaming import SentenceGuard\n")
    assert [m for _, m in imported(module) if is_forbidden(m)] == ["chains.streaming"]
    assert not is_forbidden("chainsaw")


def test_the_embedder_does_not_import_the_verifiers() -> None:
    """The ONNX embedder and the verifiers share their helpers through a neutral module
    (``guardrail.onnx_common``); neither imports the other."""
    onnx = PACKAGE / "embedding_onnx.py"
    assert not [m for _, m in imported(onnx) if m.startswith("guardrail.verifiers")]
    common = PACKAGE / "onnx_common.py"
    assert not [m for _, m in imported(common) if m.startswith("guardrail.verifiers")]
    from guardrail import onnx_common
    from guardrail.verifiers import encoding, export

    assert encoding.length_buckets is onnx_common.length_buckets
    assert encoding.read_json is onnx_common.read_json
    assert export.output_only is onnx_common.output_only


# -- the module graph ---------------------------------------------------------------------


def module_name(path: Path) -> str:
    """``guardrail.verifiers.loader`` for ``guardrail/verifiers/loader.py`` (a package by its
    ``__init__``)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The ``guardrail`` module ``name`` names, or the nearest package holding it."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def module_imports(name: str, modules: dict[str, Path] = MODULES) -> dict[str, int]:
    """The ``guardrail`` modules that module ``name`` imports (→ the first line), wherever
    the import is written: at the top, inside a function, under ``TYPE_CHECKING``.
    ``from pkg import sub`` is an import of the submodule ``pkg.sub``; relative imports are
    resolved."""
    path = modules[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        for target in targets:
            known = _known(target, modules) if target.startswith("guardrail") else None
            if known and known != name:
                found.setdefault(known, node.lineno)
    return found


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle (``a → b → … → a``) per strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, {}):
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_in(sorted(g), graph) for g in groups]


def _cycle_in(group: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A closed path through ``group``, from its first module back to it."""
    members, start = set(group), group[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, {})):
            if w == start:
                return [*paths[v], start]
            if w in members and w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    return [*group, start]  # pragma: no cover - a strongly connected group has a cycle


def _describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return (
        " -> ".join(f"{a} (line {graph[a][b]})" for a, b in itertools.pairwise(cycle))
        + f" -> {cycle[-1]}"
    )


def test_no_import_cycle_in_guardrail() -> None:
    graph = {name: module_imports(name) for name in MODULES}
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(c, graph) for c in cycles)


def test_the_cycle_finder_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    files = {
        "a": "from guardrail.pkg import b\n",
        "b": "def f():\n    from guardrail.pkg.c import thing\n",
        "c": "from . import a\n",
    }
    modules = {}
    for stem, text in files.items():
        (tmp_path / "pkg" / f"{stem}.py").write_text(text)
        modules[f"guardrail.pkg.{stem}"] = tmp_path / "pkg" / f"{stem}.py"
    graph = {name: module_imports(name, modules) for name in modules}
    assert graph["guardrail.pkg.b"] == {"guardrail.pkg.c": 2}
    assert import_cycles(graph) == [
        ["guardrail.pkg.a", "guardrail.pkg.b", "guardrail.pkg.c", "guardrail.pkg.a"]
    ]


def _check_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in (*CHECKS, "decision") else None


CHECK_MODULES = [m for m in MODULES if _check_of(m) in CHECKS]


@pytest.mark.parametrize("name", CHECK_MODULES)
def test_a_check_imports_neither_another_check_nor_the_decision(name: str) -> None:
    own = _check_of(name)
    wrong = [
        f"line {line}: {target}"
        for target, line in module_imports(name).items()
        if _check_of(target) not in (None, own)
    ]
    assert not wrong, f"{name} ({own}) imports across the checks: {wrong}"


def _is_export_tool(module: str) -> bool:
    return any(module == t or module.startswith(t + ".") for t in EXPORT_TOOLS)


RUNTIME_MODULES = [
    m for m in MODULES if not _is_export_tool(m) and not m.startswith("guardrail.cli")
]


@pytest.mark.parametrize("name", RUNTIME_MODULES)
def test_run_time_code_never_imports_the_export_tooling(name: str) -> None:
    wrong = [
        f"line {line}: {target}"
        for target, line in module_imports(name).items()
        if _is_export_tool(target)
    ]
    assert not wrong, f"{name} imports export tooling: {wrong}"


def test_the_checks_share_the_value_rule_through_a_neutral_module() -> None:
    from guardrail.coherence import entity
    from guardrail.facts import validator
    from guardrail.text import values

    assert entity.compare_values is values.compare_values is validator.compare_values
