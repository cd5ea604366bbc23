"""Each piece of work once per request: for one ``invoke`` with the default offline
profile, the spaCy parses, verifier calls and embeddings are counted at the models."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest

from guardrail import Guardrail, default_stages
from guardrail.embedding_cache import CachingEmbedder
from guardrail.models import load_embedder

pytestmark = pytest.mark.integration

PASSAGE = "The meeting with John is at 2pm on Monday in room 4B. Sarah Lee will present."
TURNS = ["I need to see John Smith this week.", "John Smith is free on Monday afternoon."]
QUERY = "When is the meeting with John?"
RESPONSE = "The meeting with John is at 3pm on Monday. John works in Marketing."
INPUT: dict[str, Any] = {
    "query": QUERY,
    "response": RESPONSE,
    "passages": [PASSAGE],
    "dialogue": {
        "turns": [
            {"speaker": "user", "text": TURNS[0]},
            {"speaker": "assistant", "text": TURNS[1]},
        ],
        "entities": [{"name": "John Smith", "type": "person", "aliases": ["John"]}],
    },
    "knowledge_base": {
        "entities": [
            {
                "id": "E42",
                "name": "John Smith",
                "aliases": ["John"],
                "type": "person",
                "attributes": {"department": {"value": "Sales", "confidence": 1.0}},
            }
        ]
    },
}


class CountingNLP:
    """A spaCy pipeline that counts the texts it parses (full or partial pipelines)."""

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        self.parses: Counter[str] = Counter()

    def __call__(self, text: str) -> Any:
        self.parses[text] += 1
        return self.nlp(text)

    def pipe(self, texts: Iterable[str], **options: Any) -> Any:
        texts = list(texts)
        self.parses.update(texts)
        return self.nlp.pipe(texts, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.nlp, name)


class CountingVerifier:
    """A verifier that records each ``predict`` call's pairs."""

    def __init__(self, verifier: Any) -> None:
        self.verifier = verifier
        self.calls: list[list[tuple[str, str]]] = []

    def predict(self, pairs: Iterable[tuple[str, str]]) -> Any:
        pairs = list(pairs)
        self.calls.append(pairs)
        return self.verifier.predict(pairs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.verifier, name)


class CountingEmbedder:
    """An embedding model that counts the texts it encodes."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.texts: Counter[str] = Counter()

    def encode(self, texts: Any, *args: Any, **kwargs: Any) -> Any:
        self.texts.update([texts] if isinstance(texts, str) else list(texts))
        return self.embedder.encode(texts, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.embedder, name)


def counted(config: dict[str, Any] | None = None) -> tuple[Guardrail, Any, Any, Any]:
    """A default guardrail whose spaCy, verifier and embedding model count their work."""
    guard = Guardrail(config)
    resources = guard.resources
    nlp = CountingNLP(resources.nlp())
    verifier = CountingVerifier(resources.verifier())
    models = guard.config.models
    embedder = CountingEmbedder(load_embedder(models.embedding, models.embedding_backend))
    resources.set("nlp", nlp)
    resources.set("verifier", verifier)
    resources.set("embedder", CachingEmbedder(embedder, models.embedding_cache_size))
    return guard, nlp, verifier, embedder


@pytest.fixture(scope="module")
def first() -> tuple[Any, Any, Any, Any, Any]:
    guard, nlp, verifier, embedder = counted()
    report = guard.invoke(INPUT)
    return guard, report, nlp, verifier, embedder


def test_every_text_is_parsed_once(first: Any) -> None:
    _, report, nlp, _, _ = first
    assert [(s.name, s.status.value) for s in report.stages] == [
        (stage.name, "ran") for stage in default_stages()
    ]
    # coherence and fact validation both read the dialogue turns and the query: one parse each
    assert nlp.parses[RESPONSE] == 1
    assert all(nlp.parses[t] == 1 for t in TURNS)
    assert nlp.parses[QUERY] == 1
    assert max(nlp.parses.values()) == 1
    # a blank QUD-stack top is not parsed; the re-check reads the repaired claims (new texts:
    # the passage's 2pm, the record's Sales), judged as any claim, each parsed once
    repaired = ["The meeting with John is at 2pm on Monday.", "John works in Sales."]
    assert sorted(nlp.parses) == sorted([RESPONSE, *TURNS, QUERY, *repaired])


def test_every_text_is_embedded_once_and_passages_not_under_the_default_policy(first: Any) -> None:
    guard, _, _, _, embedder = first
    assert guard.config.hallucination.policy == "calibrated"
    assert max(embedder.texts.values()) == 1
    # the answer is embedded as its sentences (the QUD similarity reads their mean vector)
    sentences = ["The meeting with John is at 3pm on Monday.", "John works in Marketing."]
    assert all(t in embedder.texts for t in sentences) and RESPONSE not in embedder.texts
    assert all(t in embedder.texts for t in TURNS)
    # the calibrated policy does not read retrieval scores: the passage is not embedded for them
    assert PASSAGE not in embedder.texts


def test_no_pair_is_scored_twice_in_a_few_verifier_calls(first: Any) -> None:
    _, _, _, verifier, _ = first
    pairs = [p for call in verifier.calls for p in call]
    assert len(pairs) == len(set(pairs))
    # hallucination: the claims' batch (windows, KB facts, prior turns) and at most one
    # follow-up; correction: the re-check of the corrected claims, judged as any claim (their
    # first premises and at most one follow-up; no history call of its own)
    assert 1 <= len(verifier.calls) <= 4
    assert len(pairs) <= 10  # 2 claims: windows, the KB fact, 2 prior turns, 1 re-check each
    prior = [p for p in verifier.calls[0] if p[0] in TURNS]
    assert prior, "the hallucination plan checks claims against earlier turns"
    assert not any(p[0] in TURNS for call in verifier.calls[1:] for p in call)


def test_a_second_identical_request_reuses_every_score_and_vector(first: Any) -> None:
    guard, report, nlp, verifier, embedder = first
    calls, texts = len(verifier.calls), sum(embedder.texts.values())
    again = guard.invoke(INPUT)
    assert again.action == report.action
    assert len(verifier.calls) == calls  # the correction re-check too goes through the cache
    assert sum(embedder.texts.values()) == texts
    assert all(nlp.parses[t] == 2 for t in (RESPONSE, *TURNS, QUERY))


def test_ratio_policy_embeds_each_passage_once_for_its_retrieval_score() -> None:
    guard, _, _, embedder = counted({"hallucination": {"policy": "ratio"}})
    guard.invoke(INPUT)
    assert embedder.texts[PASSAGE] == 1 and max(embedder.texts.values()) == 1


def test_ainvoke_counts_the_same() -> None:
    guard, nlp, verifier, embedder = counted()
    asyncio.run(guard.ainvoke(INPUT))
    assert max(nlp.parses.values()) == 1 and max(embedder.texts.values()) == 1
    pairs = [p for call in verifier.calls for p in call]
    assert len(pairs) == len(set(pairs)) and len(verifier.calls) <= 4
