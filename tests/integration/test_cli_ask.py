"""``guardrail ask`` end to end as a user runs it: it answers on any machine.

With a local model that generates here the answer comes from SmolLM2; with one that cannot run
(llama.cpp dying with SIGILL on a CPU it was not built for, or not installed) it comes from the
extractive fallback, with a one-line notice on stderr. Either way: exit code 0 and an answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
GUARDRAIL = str(Path(sys.executable).parent / "guardrail")
QUESTION = "When is the meeting with John?"


def ask(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("GROQ_API_KEY", "LANGSMITH_API_KEY")}
    base |= {"HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"} | env
    proc = subprocess.run(
        [GUARDRAIL, "ask", QUESTION, *args],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc


def test_guardrail_ask_answers_with_the_local_model_or_the_fallback() -> None:
    proc = ask("--format", "json")
    result = json.loads(proc.stdout)
    assert result["attempts"] and all(a["answer"].strip() for a in result["attempts"])
    assert (result["answer"] is None) == (result["escalation"] is not None)
    if result["generator_fallback"] is not None:
        # The fallback says so on stderr, in one line, and delivers the evidence sentence.
        notice = [ln for ln in proc.stderr.splitlines() if ln.startswith("guardrail ask: note:")]
        assert len(notice) == 1 and result["generator_fallback"] in notice[0]
        assert result["model"].startswith("extractive-fallback")
        assert "Thursday at 10:00" in (result["answer"] or "")
    else:
        assert result["model"].endswith(".gguf")
    text = ask("--max-attempts", "1").stdout
    answer_line = next(ln for ln in text.splitlines() if ln.startswith("ANSWER:"))
    assert answer_line.removeprefix("ANSWER:").strip()


def test_guardrail_ask_falls_back_when_the_local_model_probe_fails() -> None:
    # A probe that cannot finish in time stands for a local model that cannot generate here.
    proc = ask("--format", "json", GUARDRAIL_LOCAL_MODEL_PROBE_TIMEOUT="0.001")
    result = json.loads(proc.stdout)
    assert result["generator_fallback"]
    assert result["model"].startswith("extractive-fallback")
    assert "Thursday at 10:00" in (result["answer"] or "")
    notice = [ln for ln in proc.stderr.splitlines() if ln.startswith("guardrail ask: note:")]
    assert len(notice) == 1
