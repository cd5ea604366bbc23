"""``examples/llama_index_app.py`` runs offline as a user would run it (subprocess).

It builds a real LlamaIndex ``VectorStoreIndex`` over ``chains/data/corpus`` with the packaged
embeddings; its LLM is the deterministic ``ExtractiveLLM`` (no model, no network).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
pytest.importorskip("llama_index.core", reason="needs the llama-index extra")

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("GROQ_API_KEY", "OPENAI_API_KEY")}
    env |= {"HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "llama_index_app.py"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_llama_index_app_offline() -> None:
    out = run()
    assert "LlamaIndex answer: The project review meeting with John Smith is on Thursday" in out
    assert "source score" in out and "meetings.md" in out
    assert "passing: True" in out and "feedback: VERIFIED" in out
    assert "guarded answer: The project review meeting with John Smith" in out


def test_llama_index_app_rejects_a_wrong_room() -> None:
    out = run("--wrong")
    assert "room 7C" in out and "passing: False" in out
    assert "rejected: the guardrail rejected the answer" in out
