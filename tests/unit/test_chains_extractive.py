"""The extractive answerer: the offline generator that always works.

No model is faked here: the extractive answerer is deterministic code. Where a test needs the
local model to be *missing*, ``local_chat_model`` raises the same ``MissingDependencyError``
it raises when llama-cpp-python is not installed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chains.extractive import NO_ANSWER, ExtractiveChatModel, extractive_answer, parse_prompt
from chains.generation import answer_prompt, default_chat_model, format_context, format_guidance
from guardrail.inputs import Passage

PASSAGES = [
    Passage(text="# People\n\nJohn Smith works in the Engineering department. He joined in 2020."),
    Passage(text="Sarah Lee works in Finance. Her email address is sarah.lee@company.com."),
    Passage(text="The project review meeting with John Smith is on Thursday at 10:00 in room 4B."),
]


def prompt_vars(question: str, previous: str | None = None, guidance: str | None = None) -> Any:
    return {
        "context": format_context(PASSAGES),
        "question": question,
        "guidance": format_guidance(previous, guidance),
    }


def test_answers_with_the_best_matching_sentences() -> None:
    assert extractive_answer("When is the meeting with John?", PASSAGES) == PASSAGES[2].text
    assert (
        extractive_answer("What is Sarah Lee's email address?", PASSAGES)
        == "Her email address is sarah.lee@company.com."
    )
    assert extractive_answer("Who likes pizza?", PASSAGES) == NO_ANSWER
    assert extractive_answer("Where is the meeting?", []) == NO_ANSWER


def test_reads_the_grounded_prompt_and_skips_a_rejected_answer() -> None:
    model = ExtractiveChatModel()
    chain = answer_prompt() | model
    first = chain.invoke(prompt_vars("Which department does John Smith work in?")).text
    assert first == "John Smith works in the Engineering department."
    again = chain.invoke(
        prompt_vars("Which department does John Smith work in?", first, "Check the department.")
    ).text
    assert again != first and again != NO_ANSWER
    question, passages, previous = parse_prompt(
        answer_prompt().format(**prompt_vars("Q?", "old answer.", "fix it"))
    )
    assert (question, previous, len(passages)) == ("Q?", "old answer.", 3)
    assert passages[1] == PASSAGES[1].text


def test_streams_word_by_word_and_is_deterministic() -> None:
    chain = answer_prompt() | ExtractiveChatModel()
    chunks = [c.content for c in chain.stream(prompt_vars("When is the meeting with John?"))]
    assert len(chunks) > 5 and "".join(chunks) == PASSAGES[2].text  # type: ignore[arg-type]
    assert chain.invoke(prompt_vars("When is the meeting?")).text == PASSAGES[2].text


def no_local_model(monkeypatch: pytest.MonkeyPatch) -> None:
    import chains.generation as generation

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise generation.MissingDependencyError("llama-cpp-python", "local-llm")

    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.setattr(generation, "local_chat_model", missing)


def test_default_model_falls_back_and_says_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    no_local_model(monkeypatch)
    model = default_chat_model()
    assert isinstance(model, ExtractiveChatModel)
    assert model.model_name == "extractive-fallback (llama-cpp-python is not installed)"
    assert "answering extractively" in caplog.text
    with pytest.raises(ImportError):
        default_chat_model(fallback=False)


def test_guardrail_ask_uses_the_fallback_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    from guardrail.cli import main

    no_local_model(monkeypatch)
    config = {"disabled_stages": ["coherence", "claims", "fact_validation", "hallucination",
                                  "correction"], "failure_policy": "fail_open",
              "thresholds": {"accept": 0.0, "flag": 0.0, "correct": 0.0, "regenerate": 0.0}}  # fmt: skip
    path = tmp_path / "guard.json"
    path.write_text(json.dumps(config))
    assert main(["ask", "When is the meeting with John?", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("note: no generative model available (llama-cpp-python is not installed)")
    assert "ANSWER:     The project review meeting with John Smith is on Thursday" in out
    assert (
        main(["ask", "When is the meeting with John?", "--config", str(path), "--format", "json"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["generator_fallback"] == "llama-cpp-python is not installed"
    assert data["model"].startswith("extractive-fallback")
