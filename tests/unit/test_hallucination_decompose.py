"""LLM claim decomposition, with langchain-core's fake chat models standing in for Groq."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models import FakeListChatModel

from guardrail.config import GuardrailConfig, HallucinationConfig
from guardrail.errors import ConfigError, VerifierError
from guardrail.hallucination.decompose import AtomicClaim, align, decompose_claims
from guardrail.inputs import GuardInput
from guardrail.stages.base import PipelineState, Resources
from guardrail.stages.claims import ClaimsStage

RESPONSE = "Ada Lovelace was born in 1815. She wrote the first published algorithm."


def fake_llm(claims: list[dict[str, str]]) -> FakeListChatModel:
    # FakeListChatModel has no tool calling: this exercises the JSON-prompt path.
    return FakeListChatModel(responses=[json.dumps({"claims": claims})])


def test_atomic_claims_are_pronoun_free_and_mapped_to_spans() -> None:
    llm = fake_llm(
        [
            {
                "text": "Ada Lovelace was born in 1815.",
                "source_sentence": "Ada Lovelace was born in 1815.",
            },
            {"text": "Ada Lovelace wrote the first published algorithm."},
        ]
    )
    claims = decompose_claims(RESPONSE, llm, HallucinationConfig(), response_language="en")
    assert [c.text for c in claims] == [
        "Ada Lovelace was born in 1815.",
        "Ada Lovelace wrote the first published algorithm.",
    ]
    # The second claim (pronoun resolved) is aligned back onto "She wrote ...".
    assert RESPONSE[claims[1].span.start : claims[1].span.end] == (
        "She wrote the first published algorithm."
    )
    assert claims[0].span.start == 0


def test_alignment_falls_back_to_the_most_similar_sentence() -> None:
    span = align(AtomicClaim(text="The algorithm was published first by Lovelace"), RESPONSE)
    assert RESPONSE[span.start : span.end] == "She wrote the first published algorithm."


def test_unparseable_output_is_a_typed_error() -> None:
    llm = FakeListChatModel(responses=["Sure! Here are the claims: Ada was born."])
    with pytest.raises(VerifierError, match="decomposition"):
        decompose_claims(RESPONSE, llm, HallucinationConfig())


def test_claims_stage_uses_the_injected_chat_model() -> None:
    config = GuardrailConfig(hallucination=HallucinationConfig(claim_source="llm"))
    resources = Resources(config)
    stage = ClaimsStage(config, resources)
    state = PipelineState(input=GuardInput(response=RESPONSE))
    with pytest.raises(ConfigError, match="claim_llm"):
        stage.run(state)
    resources.set("claim_llm", fake_llm([{"text": "Ada Lovelace was born in 1815."}]))
    out = stage.run(state)
    assert [c.text for c in out.claims or []] == ["Ada Lovelace was born in 1815."]
    assert out.language == "en"
