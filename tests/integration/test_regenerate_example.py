"""``examples/regenerate_existing_chain.py`` runs offline as a user would run it (subprocess):
real retrieval, knowledge base and guardrail; the scripted chat model stands in for Groq."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_regenerate_existing_chain_example() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GROQ_API_KEY", "LANGSMITH_API_KEY")}
    env |= {"HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "regenerate_existing_chain.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        "guarded_chain.attempt.1: 'The Atlas project is led by Maria Garcia from the London "
        "office.' -> regenerate"
    )
    assert "Maria Garcia" in lines[1] and "quoting the rejected answer: True" in lines[2]
    assert lines[3] == "guarded_chain.attempt.2: 'John Smith leads the Atlas project.' -> accept"
    assert lines[4].startswith("top run outcome: action=accept")
    assert lines[-1] == "delivered: John Smith leads the Atlas project."
