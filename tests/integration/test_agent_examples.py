"""The agent examples run offline as a user would run them (subprocess, real guardrail).

Their chat model is a scripted tool-calling stand-in (they say so); retrieval, the tool, the
checkpointer and the guardrail are real.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run(*args: str, timeout: int = 600) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("GROQ_API_KEY", "LANGSMITH_API_KEY")}
    env |= {"HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_agent_regenerate() -> None:
    out = run(str(EXAMPLES / "agent_regenerate.py")).splitlines()
    assert out[0].startswith("attempt:1 'The project review meeting with John Smith is in room 9C")
    assert out[0].endswith("-> regenerate")
    assert out[1].startswith("attempt:2 ") and out[1].endswith("-> accept")
    assert out[2].startswith("regenerated (attempt 2) with guidance: ") and "9C" in out[2]
    assert out[3].startswith("outcome: accept (verdict VERIFIED") and "after 2 attempt(s)" in out[3]
    assert out[4] == "messages: HumanMessage, AIMessage, ToolMessage, AIMessage"
    assert out[5] == (
        "answer: The project review meeting with John Smith is on Thursday at 10:00 in room 4B."
    )


def test_agent_human_review() -> None:
    out = run(str(EXAMPLES / "agent_human_review.py"))
    assert out.count("paused: human_review for 'Can I expense a taxi to the airport?'") == 3
    assert "reasons: Could not check the answer: no evidence" in out
    assert "report: verdict UNVERIFIED" in out
    lines = out.splitlines()
    assert "approve -> Yes, taxis to the airport are always reimbursed in full." in lines
    assert "edit -> Taxis are reimbursed with a receipt; see the travel policy." in lines
    assert "reject -> I can't confirm that; Finance will get back to you." in lines
