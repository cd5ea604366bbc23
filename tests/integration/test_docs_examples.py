"""The documentation's runnable examples run, so the docs cannot drift from the code.

A code block in ``docs/**/*.md`` is runnable when its fence carries the ``runnable`` class::

    ```{.python .runnable}
    from guardrail import Guardrail
    ...
    ```

(``{.bash .runnable}`` for shell commands). Each block runs on its own, as a reader would paste
it, in a fresh directory that holds links to this checkout's ``.venv/`` and ``examples/`` (so
``.venv/bin/guardrail check --kb examples/data/john_smith_kb.json …`` works as written), with the
model hub off (``HF_HUB_OFFLINE=1``) and no API keys (the offline path of every example). Python
blocks run in ``.venv/bin/python``; shell blocks in ``bash -euo pipefail`` with ``.venv/bin`` on
``PATH``. A block fails on a non-zero exit, which its own ``assert`` lines turn into checks of
what the page says. The site renders the same blocks with a "tested" mark (``extra.css``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*\{(?P<attrs>[^}]*)\}\s*$")
LANGUAGES = {"python", "bash"}
#: Environment variables that would take an example off its offline path.
ONLINE = ("GROQ_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_TRACING",
          "RAY_ADDRESS", "GUARDRAIL_API_TOKEN")  # fmt: skip
TIMEOUT = 600


@dataclass(frozen=True)
class Block:
    """One runnable code block: where it is, its language and its code (dedented)."""

    page: str
    line: int
    language: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def runnable_blocks(docs: Path = DOCS) -> list[Block]:
    """Every fenced block whose attributes hold ``.runnable``, in page order."""
    blocks: list[Block] = []
    for path in sorted(docs.rglob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            classes = {a[1:] for a in m.group("attrs").split() if a.startswith(".")}
            indent, fence = m.group("indent"), m.group("fence")
            end = i + 1
            while end < len(lines) and lines[end].strip() != fence:
                end += 1
            if "runnable" in classes:
                language = next((c for c in classes if c in LANGUAGES), None)
                assert language, f"{path}:{i + 1}: a runnable block must be python or bash"
                body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip()
                        for ln in lines[i + 1 : end]]  # fmt: skip
                page = str(path.relative_to(docs))
                blocks.append(Block(page, i + 1, language, "\n".join(body) + "\n"))
            i = end + 1
    return blocks


def workdir(tmp: Path) -> Path:
    """A fresh directory that looks like the repository root to the examples."""
    for name in (".venv", "examples"):
        (tmp / name).symlink_to(ROOT / name)
    return tmp


def run_block(block: Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ONLINE}
    venv_bin = ROOT / ".venv" / "bin"
    env |= {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PATH": f"{venv_bin}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    if block.language == "python":
        script = cwd / "example.py"
        script.write_text(block.code, encoding="utf-8")
        python = venv_bin / "python" if (venv_bin / "python").exists() else Path(sys.executable)
        cmd = [str(python), str(script)]
    else:
        script = cwd / "example.sh"
        script.write_text(block.code, encoding="utf-8")
        cmd = ["bash", "-euo", "pipefail", str(script)]
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


BLOCKS = runnable_blocks()


@pytest.mark.integration
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_docs_example_runs(block: Block, tmp_path: Path) -> None:
    done = run_block(block, workdir(tmp_path))
    assert done.returncode == 0, (
        f"{block.id} ({block.language}) exited {done.returncode}\n--- code\n{block.code}"
        f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    )


def test_the_docs_have_runnable_examples() -> None:
    pages = {b.page for b in BLOCKS}
    assert len(BLOCKS) >= 10, BLOCKS
    for page in ("index.md", "get-started.md", "concepts/recommendations.md"):
        assert page in pages, f"{page} has no runnable example"
