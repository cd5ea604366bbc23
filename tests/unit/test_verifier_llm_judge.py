"""The LLM-judge backend passes the verifier conformance tests on a fake chat model.

The chat model is FAKE: it stands in for Groq (ChatGroq), which needs the network. It derives
from langchain-core's ``GenericFakeChatModel`` and answers deterministically from the pair in
the prompt, so the judge's prompt building, structured-output parsing, batching and ordering
run for real. One variant answers through tool calls (the ``with_structured_output`` path, as
Groq does), the other in JSON text (the fallback path for models without tool calling).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from guardrail.errors import ConfigError, VerifierError
from guardrail.verifiers import Verifier, load_verifier
from guardrail.verifiers.llm_judge import LLMJudgeVerifier, NLIJudgement, load_prompt
from tests.verifier_conformance import OBVIOUS, VerifierConformance


def _judge(prompt: str) -> dict[str, Any]:
    """The fake judge's rule: word overlap between hypothesis and premise, negation cues."""
    premise = prompt.split("PREMISE:", 1)[1].split("HYPOTHESIS:", 1)[0]
    hypothesis = prompt.split("HYPOTHESIS:", 1)[1]
    p_words = set(re.findall(r"\w+", premise.lower()))
    h_words = set(re.findall(r"\w+", hypothesis.lower()))
    overlap = len(p_words & h_words) / max(1, len(h_words))
    lookup = {(p, h): g for p, h, g in OBVIOUS}
    gold = lookup.get((premise.strip(), hypothesis.strip()))
    label = gold or ("entailment" if overlap > 0.6 else "neutral")
    probs = {"entailment": 0.1, "neutral": 0.1, "contradiction": 0.1}
    probs[label] = 0.8
    return {"label": label, "confidence": 0.8, **probs}


class FakeToolCallingJudge(GenericFakeChatModel):
    """FAKE Groq: answers with a tool call carrying an ``NLIJudgement``."""

    messages: Any = iter(())

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        call = {"name": "NLIJudgement", "args": _judge(str(messages[-1].content)), "id": "1"}
        message = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])


class FakeTextJudge(GenericFakeChatModel):
    """FAKE chat model without tool calling: answers with JSON text."""

    messages: Any = iter(())

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        text = "```json\n" + json.dumps(_judge(str(messages[-1].content))) + "\n```"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


class TestLLMJudgeToolCalling(VerifierConformance):
    real_model = True  # the fake judge knows the OBVIOUS pairs, so the quality test runs too

    @pytest.fixture
    def verifier(self) -> Verifier:
        return LLMJudgeVerifier(FakeToolCallingJudge(), max_concurrency=3)


class TestLLMJudgeText(VerifierConformance):
    @pytest.fixture
    def verifier(self) -> Verifier:
        return LLMJudgeVerifier(FakeTextJudge(), max_concurrency=2)


def test_prompt_is_package_data() -> None:
    prompt = load_prompt()
    assert "{premise}" in prompt and "{hypothesis}" in prompt


def test_label_and_confidence_to_probabilities() -> None:
    pred = NLIJudgement(label="contradiction", confidence=0.9).to_prediction()
    assert pred.contradiction == pytest.approx(0.9)
    assert pred.entailment == pytest.approx(0.05) and pred.neutral == pytest.approx(0.05)
    low = NLIJudgement(label="neutral", confidence=0.1).to_prediction()
    assert low.label == "neutral"
    full = NLIJudgement(
        label="entailment", confidence=0.5, entailment=2 / 4, neutral=1 / 4, contradiction=1 / 4
    ).to_prediction()
    assert (full.entailment, full.neutral) == pytest.approx((0.5, 0.25))


def test_unparseable_answer_is_a_verifier_error() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(content="I think it is entailed.")]))
    with pytest.raises(VerifierError, match="pair 0"):
        LLMJudgeVerifier(model).predict([("a", "b")])


def test_load_verifier_accepts_a_chat_model() -> None:
    model = FakeToolCallingJudge()
    verifier = load_verifier(model)
    assert isinstance(verifier, LLMJudgeVerifier)
    assert load_verifier(model) is verifier


def test_unknown_llm_provider() -> None:
    with pytest.raises(ConfigError, match="llm:groq"):
        load_verifier("llm:nowhere:model")
