"""Imports run one way (#29 item 3): ``chains`` and the faces (CLI, service, integrations) sit
on the core; no core module imports ``chains`` or a face, at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "guardrail"
FACES = ("cli", "service", "integrations")
"""The packages of ``guardrail`` that face users; they may import ``chains``."""
FORBIDDEN = ("chains", *(f"guardrail.{face}" for face in FACES))


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
