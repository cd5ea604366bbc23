"""The surface the guides use: every ``guardrail`` or ``chains`` import in the docs, the README
and the examples comes from the package root or a face the reference's index page lists, and
names something that exists there."""

from __future__ import annotations

import ast
import enum
import importlib
import pkgutil
import re
import textwrap
import warnings
from pathlib import Path

import pytest

import chains
import guardrail

ROOT = Path(__file__).resolve().parents[2]
INDEX_PAGE = ROOT / "docs" / "reference" / "index.md"
FACES = (
    "guardrail",
    "chains",
    "guardrail.service",
    "guardrail.integrations.llama_index",
    "guardrail.integrations.otel",
    "guardrail.tracing",
    "guardrail.observability",
    "guardrail.store",
)
"""The modules a guide may import from, as the reference's index page lists them."""
FIRST_PARTY = ("guardrail", "chains")

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)",
    re.S | re.M,
)
"""A fenced block, indented (inside a list item) or not; ``info`` is what follows the fence."""
HEREDOC = re.compile(r"python[^\n]*<<-?\s*'?(?P<tag>\w+)'?\n(?P<body>.*?)^(?P=tag)$", re.S | re.M)
"""Python fed to an interpreter from a shell block (``python - <<'PY' … PY``)."""


def python_blocks(markdown: str) -> list[str]:
    """The Python source of every fenced Python block, and of every heredoc a shell block
    feeds to ``python``, dedented."""
    found: list[str] = []
    for match in FENCE.finditer(markdown):
        info, body = match.group("info").strip(), textwrap.dedent(match.group("body"))
        words = re.findall(r"[\w-]+", info)
        if "python" in words or words[:1] == ["py"]:
            found.append(body)
        elif {"bash", "sh", "console"} & set(words):
            found += [textwrap.dedent(h.group("body")) for h in HEREDOC.finditer(body)]
    return found


def first_party_imports(source: str) -> list[tuple[str, str | None]]:
    """``(module, name)`` of every import of ``guardrail`` or ``chains`` (``name`` is ``None``
    for ``import module``)."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.module, alias.name) for alias in node.names]
    return [(module, name) for module, name in found if module.split(".")[0] in FIRST_PARTY]


def sources() -> list[tuple[str, str]]:
    """``(where, python source)`` of every block of the docs and the README, and every example."""
    pages = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
    found = [
        (f"{page.relative_to(ROOT)} block {i}", block)
        for page in pages
        for i, block in enumerate(python_blocks(page.read_text(encoding="utf-8")), 1)
    ]
    examples = sorted((ROOT / "examples").glob("*.py"))
    return found + [(str(path.relative_to(ROOT)), path.read_text("utf-8")) for path in examples]


IMPORTS = [
    (where, module, name)
    for where, source in sources()
    for module, name in first_party_imports(source)
]


def test_the_faces_are_the_ones_the_reference_lists() -> None:
    table = INDEX_PAGE.read_text(encoding="utf-8").split("## Where names come from", 1)[1]
    listed = tuple(re.findall(r"^\| `([\w.]+)` \|", table, re.M))
    assert listed == FACES


def test_the_docs_import_guardrail_and_chains_in_many_places() -> None:
    wheres = {where.split(" block")[0] for where, _, _ in IMPORTS}
    assert len(IMPORTS) > 40
    assert {"README.md", "docs/how-to/verifier.md", "examples/guarded_rag.py"} <= wheres


@pytest.mark.parametrize(
    ("where", "module", "name"), IMPORTS, ids=[f"{w}:{m}:{n}" for w, m, n in IMPORTS]
)
def test_every_import_comes_from_a_face_and_names_something_there(
    where: str, module: str, name: str | None
) -> None:
    assert module in FACES, f"{where} imports from {module}, which is not a documented face"
    if name is not None:
        assert hasattr(importlib.import_module(module), name), f"{where}: {module}.{name}"


def test_an_indented_block_a_heredoc_and_a_submodule_import_are_found() -> None:
    page = textwrap.dedent(
        """\
        1. Write a stage:

           ```{.python .runnable}
           from guardrail.stages.base import StageUpdate
           ```

        ```bash
        .venv/bin/python - <<'PY'
        import guardrail.pipeline
        PY
        ```

        ```json
        {"from": "guardrail.report"}
        ```

        ~~~python
        import chains.retrieval
        ~~~
        """
    )
    found = [imp for block in python_blocks(page) for imp in first_party_imports(block)]
    assert found == [
        ("guardrail.stages.base", "StageUpdate"),
        ("guardrail.pipeline", None),
        ("chains.retrieval", None),
    ]
    assert not {module for module, _ in found} & set(FACES)


def test_the_root_exports_what_a_stage_or_verifier_author_needs() -> None:
    for name in ("GuardrailConfig", "Verifier", "NLIPrediction", "StageUpdate", "PipelineState"):
        assert name in guardrail.__all__
        assert getattr(guardrail, name).__name__ == name


def test_the_core_exports_nothing_about_chains() -> None:
    assert "LocalModelUnavailable" not in guardrail.__all__
    assert "LocalModelUnavailable" in chains.__all__
    assert chains.LocalModelUnavailable.__module__ == "chains.errors"
    assert issubclass(chains.LocalModelUnavailable, guardrail.ModelLoadError)


@pytest.mark.parametrize("module", ["guardrail", "guardrail.errors"])
def test_the_old_path_of_local_model_unavailable_warns_and_gives_the_chains_class(
    module: str,
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = importlib.import_module(module).LocalModelUnavailable
    assert found is chains.LocalModelUnavailable
    [warning] = caught
    assert warning.category is DeprecationWarning
    assert "from chains import LocalModelUnavailable" in str(warning.message)
    assert warning.filename == __file__


def enum_classes() -> list[type[enum.Enum]]:
    """Every enum defined in ``guardrail`` and ``chains``."""
    found: list[type[enum.Enum]] = []
    for package in (guardrail, chains):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            found += [
                value
                for value in vars(module).values()
                if isinstance(value, type)
                and issubclass(value, enum.Enum)
                and value.__module__ == info.name
            ]
    return found


def test_every_enum_is_a_str_enum_that_prints_its_value() -> None:
    enums = enum_classes()
    assert len(enums) >= 20
    assert [cls.__qualname__ for cls in enums if not issubclass(cls, enum.StrEnum)] == []
    action = guardrail.Action.CORRECT_AND_DELIVER
    assert (str(action), f"{action}") == ("correct_and_deliver", "correct_and_deliver")


def test_the_recommendation_action_is_the_action_enum_and_its_json_the_string() -> None:
    kinds = [
        guardrail.Accept(),
        guardrail.AcceptWithFlags(),
        guardrail.CorrectAndDeliver(),
        guardrail.Regenerate(guidance="say when"),
        guardrail.HumanReview(reason="no evidence"),
    ]
    assert [rec.action for rec in kinds] == list(guardrail.Action)
    for rec in kinds:
        assert type(rec.action) is guardrail.Action
        assert rec.model_dump_json().startswith(f'{{"action":"{rec.action.value}"')
        again = type(rec).model_validate_json(rec.model_dump_json())
        assert again.action is rec.action
    assert guardrail.Accept().action == "accept"


def test_an_unknown_root_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = guardrail.Nothing  # type: ignore[attr-defined]
