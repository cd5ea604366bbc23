"""The local-model probe: a llama.cpp that dies in a child process becomes
``LocalModelUnavailable`` with the reason, and the generation falls back to the extractive answer.

The probe's child code is injected: a child that kills itself with SIGILL stands for a llama.cpp
built for instructions the VM does not grant (AMX advertised, tile state not given).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import chains.generation as generation
from chains.errors import LocalModelUnavailable
from chains.extractive import ExtractiveChatModel
from chains.generation import (
    PROBE_TIMEOUT_ENV,
    SKIP_PROBE_ENV,
    answer_prompt,
    default_chat_model,
    probe_local_model,
)
from guardrail.errors import ModelLoadError

SIGILL_CHILD = "import os, signal; os.kill(os.getpid(), signal.SIGILL)"
OK_CHILD = "import sys; open(sys.argv[1] + '.runs', 'a').write('x')"
MEETING = "The project review meeting with John Smith is on Thursday at 10:00 in room 4B."


@pytest.fixture(autouse=True)
def fresh_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets an empty probe cache and no probe settings from the environment."""
    monkeypatch.setattr(generation, "_PROBE_RESULTS", {})
    monkeypatch.delenv(SKIP_PROBE_ENV, raising=False)
    monkeypatch.delenv(PROBE_TIMEOUT_ENV, raising=False)
    monkeypatch.delenv("GROQ_API_KEY", raising=False)


def test_a_child_dying_with_sigill_raises_local_model_unavailable_naming_sigill(
    tmp_path: Path,
) -> None:
    model = tmp_path / "model.gguf"
    with pytest.raises(LocalModelUnavailable) as caught:
        probe_local_model(model, code=SIGILL_CHILD)
    message = str(caught.value)
    assert isinstance(caught.value, ModelLoadError)
    assert message.startswith("the local model process died with SIGILL (illegal instruction):")
    assert "CMAKE_ARGS='-DGGML_NATIVE=OFF'" in message
    # Cached for the process: a second use does not probe again and fails the same way.
    with pytest.raises(LocalModelUnavailable, match="SIGILL"):
        probe_local_model(model, code=OK_CHILD)
    assert not Path(f"{model}.runs").exists()


def test_the_probe_runs_once_per_model_path(tmp_path: Path) -> None:
    first, second = tmp_path / "a.gguf", tmp_path / "b.gguf"
    for _ in range(3):
        probe_local_model(first, code=OK_CHILD)
    probe_local_model(second, code=OK_CHILD)
    assert Path(f"{first}.runs").read_text() == "x"
    assert Path(f"{second}.runs").read_text() == "x"


def test_a_child_exiting_non_zero_or_hanging_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = "import sys; sys.stderr.write('libggml: no such file\\n'); sys.exit(3)"
    with pytest.raises(LocalModelUnavailable, match="exited with code 3: libggml: no such file"):
        probe_local_model(tmp_path / "exit.gguf", code=failing)
    monkeypatch.setenv(PROBE_TIMEOUT_ENV, "0.5")
    with pytest.raises(LocalModelUnavailable, match=r"did not generate within 0\.5 s"):
        probe_local_model(tmp_path / "hang.gguf", code="import time; time.sleep(60)")


def test_the_probe_can_be_skipped_for_a_trusted_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SKIP_PROBE_ENV, "1")
    probe_local_model(tmp_path / "model.gguf", code=SIGILL_CHILD)  # no child, no error
    monkeypatch.setenv(SKIP_PROBE_ENV, "0")
    with pytest.raises(LocalModelUnavailable):
        probe_local_model(tmp_path / "model.gguf", code=SIGILL_CHILD)


def crashing_local_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """llama-cpp-python and the GGUF "installed", and the model dies with SIGILL when it runs."""
    monkeypatch.setattr(generation, "smollm2_gguf_path", lambda: tmp_path / "smollm2.gguf")
    monkeypatch.setattr(generation, "_require_llama_cpp", lambda: None)
    monkeypatch.setattr(generation, "PROBE_CODE", SIGILL_CHILD)

    def must_not_load(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the model was loaded in-process although its probe died")

    monkeypatch.setattr(generation, "_local_model", must_not_load)


def test_generation_falls_back_to_the_extractive_answer_when_the_model_dies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    crashing_local_model(monkeypatch, tmp_path)
    model = default_chat_model()
    assert isinstance(model, ExtractiveChatModel)
    assert model.reason == "the local model process died with SIGILL (illegal instruction)"
    assert "SIGILL" in caplog.text and "answering extractively" in caplog.text
    context = f"[1] The Q3 budget is due on Friday.\n\n[2] {MEETING}"
    answer = (answer_prompt() | model).invoke(
        {"context": context, "question": "When is the meeting with John?", "guidance": ""}
    )
    assert answer.text == MEETING
    with pytest.raises(LocalModelUnavailable, match="SIGILL"):
        default_chat_model(fallback=False)


def test_guardrail_ask_answers_extractively_with_a_one_line_notice_on_stderr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from guardrail.cli import main

    crashing_local_model(monkeypatch, tmp_path)
    config = {"disabled_stages": ["coherence", "claims", "fact_validation", "hallucination",
                                  "correction"], "failure_policy": "fail_open",
              "thresholds": {"accept": 0.0, "flag": 0.0, "correct": 0.0, "regenerate": 0.0}}  # fmt: skip
    path = tmp_path / "guard.json"
    path.write_text(json.dumps(config))
    assert main(["ask", "When is the meeting with John?", "--config", str(path)]) == 0
    captured = capsys.readouterr()
    notice = [line for line in captured.err.splitlines() if line.startswith("guardrail ask: note:")]
    assert len(notice) == 1 and "SIGILL (illegal instruction)" in notice[0]
    assert "ANSWER:     The project review meeting with John Smith is on Thursday" in captured.out
