"""The built wheel, installed as a user gets it: a fresh virtual environment, no torch, offline.

Builds the wheel with ``python -m build``, installs it (with ``constraints.txt``, from the
package registry) into a new venv, and there runs the README's Python snippet, ``guardrail
check`` on a supported and on an unsupported answer, and ``with_guardrail`` around a LangChain
runnable shaped like ``create_retrieval_chain``'s output. Needs the package registry for the
install (as CI has); the checks themselves run with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(OFFLINE)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build", reason="needs the dev extra's 'build' package")
    out = tmp_path_factory.mktemp("dist")
    done = _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (found,) = out.glob("answer_guardrail-*.whl")
    return found


@pytest.fixture(scope="module")
def env(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its base dependencies (no extras)."""
    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    python = root / "bin" / "python"
    done = _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "-c",
            str(ROOT / "constraints.txt"),
            str(wheel),
        ]
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root


def test_wheel_holds_the_models_and_nothing_of_the_repository(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    needed = [
        "guardrail/verifiers/bundled/model.onnx",
        "guardrail/verifiers/bundled/tokenizer.json",
        "guardrail/embeddings/all-MiniLM-L6-v2/model.onnx",
        "guardrail/embeddings/all-MiniLM-L6-v2/tokenizer.json",
        "guardrail/embeddings/all-MiniLM-L6-v2/1_Pooling/config.json",
        "guardrail/hallucination/data/calibration.json",
        "guardrail/service/static/index.html",
        "guardrail/service/static/app.js",
        "guardrail/py.typed",
    ]
    assert [n for n in needed if n not in names] == []
    assert any(n.startswith("guardrail/hallucination/data/calibrations/") for n in names)
    stray = [n for n in names if n.split("/")[0] in ("tests", "benchmarks", "examples", "docs",
                                                     "scripts", "checkpoints", "runs")]  # fmt: skip
    assert stray == []
    assert not any("results" in n.split("/") for n in names)


def test_torch_is_not_installed(env: Path) -> None:
    done = _run([str(env / "bin" / "python"), "-c", "import torch"])
    assert done.returncode != 0 and "No module named 'torch'" in done.stderr
    for name in ("transformers", "sentence_transformers"):
        probe = (
            f"import importlib.util, sys; sys.exit(importlib.util.find_spec({name!r}) is not None)"
        )
        assert _run([str(env / "bin" / "python"), "-c", probe]).returncode == 0, name


def readme_snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", text, re.S)
    assert match, "README.md has no python snippet"
    return match.group(1)


def test_readme_snippet_accepts_a_supported_answer(env: Path, tmp_path: Path) -> None:
    script = tmp_path / "snippet.py"
    script.write_text(
        readme_snippet()
        + "\nimport json, sys\n"
        + "json.dump({'action': str(report.recommendation.action), "
        "'label': report.verdict.label.value, 'delivered': report.delivered_text, "
        "'failed': [s.name for s in report.stages if s.status.value == 'failed'], "
        "'torch': 'torch' in sys.modules}, sys.stdout)\n",
        encoding="utf-8",
    )
    done = _run([str(env / "bin" / "python"), str(script)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {
        "action": "accept",
        "label": "VERIFIED",
        "delivered": "The meeting is at 2pm on Monday.",
        "failed": [],
        "torch": False,
    }


def _check(env: Path, response: str, cwd: Path) -> dict[str, object]:
    done = _run(
        [
            str(env / "bin" / "guardrail"),
            "check",
            "--format",
            "json",
            "--query",
            "When is the meeting?",
            "--response",
            response,
            "--passage",
            "The meeting with John is at 2pm on Monday in room 4B.",
        ],
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_cli_check_supported_and_unsupported(env: Path, tmp_path: Path) -> None:
    good = _check(env, "The meeting is at 2pm on Monday.", tmp_path)
    assert good["recommendation"]["action"] == "accept"  # type: ignore[index]
    assert good["delivered_text"] == "The meeting is at 2pm on Monday."
    bad = _check(env, "The meeting is at 5pm on Friday.", tmp_path)
    assert bad["verdict"]["label"] == "HALLUCINATION"  # type: ignore[index]
    assert bad["recommendation"]["action"] != "accept"  # type: ignore[index]
    assert bad["delivered_text"] != "The meeting is at 5pm on Friday."
    version = _run([str(env / "bin" / "guardrail"), "--version"], cwd=tmp_path)
    assert version.returncode == 0 and "answer-guardrail" in version.stdout


WRAPPED_APP = """
import json
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from chains import with_guardrail

EVIDENCE = "The project review meeting with John Smith is on Thursday at 10:00 in room 4B."

def app(inputs):  # the output shape of LangChain's create_retrieval_chain
    answer = {"good": "The review meeting with John Smith is on Thursday at 10:00.",
              "bad": "The review meeting with John Smith is on Friday at 15:00."}[inputs["which"]]
    return {"input": inputs["input"], "context": [Document(page_content=EVIDENCE)],
            "answer": answer}

guarded = with_guardrail(RunnableLambda(app), on_fail="report")
out = {}
for which in ("good", "bad"):
    result = guarded.invoke({"input": "When is the meeting with John?", "which": which})
    report = result["guardrail_report"]
    out[which] = [str(report.recommendation.action), report.delivered_text]
print(json.dumps(out))
"""


def test_with_guardrail_wraps_a_runnable_on_the_base_install(env: Path, tmp_path: Path) -> None:
    script = tmp_path / "wrapped.py"
    script.write_text(WRAPPED_APP, encoding="utf-8")
    done = _run([str(env / "bin" / "python"), str(script)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["good"][0] in ("accept", "accept_with_flags"), out
    assert out["good"][1] == "The review meeting with John Smith is on Thursday at 10:00."
    assert out["bad"][0] != "accept", out
    assert "Friday" not in (out["bad"][1] or ""), out


def test_a_stage_whose_package_is_absent_fails_at_construction(env: Path, tmp_path: Path) -> None:
    code = (
        "from guardrail import Guardrail, MissingDependencyError\n"
        "try:\n"
        "    Guardrail({'models': {'embedding_backend': 'torch'}})\n"
        "except MissingDependencyError as exc:\n"
        "    print('raised', exc.package, exc.install)\n"
    )
    done = _run([str(env / "bin" / "python"), "-c", code], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("raised sentence-transformers"), done.stdout
    assert "answer-guardrail[models]" in done.stdout
