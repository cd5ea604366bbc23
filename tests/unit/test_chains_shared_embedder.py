"""One embedder for the ready chains and the guardrail: the model loaded once, the
chain's texts embedded once. The loaders are replaced by counting fakes, so no model runs."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from langchain_core.language_models import FakeListChatModel

from chains.embeddings import DEFAULT_BACKEND, SentenceEmbeddings
from chains.guarded_rag import GuardedRAG
from chains.retrieval import PassageIndex, corpus_path
from guardrail import models
from guardrail.config import GuardrailConfig
from guardrail.embedding_cache import CachingEmbedder
from guardrail.embedding_onnx import OnnxEmbedder
from guardrail.pipeline import Guardrail

QUESTION = "When is the meeting with John?"


class HashEncoder:
    """Deterministic 16-d vectors; counts the texts it embeds."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, sentences: Any, **kwargs: Any) -> np.ndarray:
        texts = [sentences] if isinstance(sentences, str) else list(sentences)
        self.texts += texts
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.uint8) for t in texts
        ]
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), 16) + 1.0
        if kwargs.get("normalize_embeddings"):
            out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out[0] if isinstance(sentences, str) else out


class Loads:
    def __init__(self) -> None:
        self.onnx: list[str] = []
        self.torch: list[str] = []
        self.encoder = HashEncoder()


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loads]:
    """Count model loads behind :func:`guardrail.models.load_embedder` (process cache cleared
    before and after, so the fakes never outlive the test)."""
    counted = Loads()

    def onnx_load(path: Any, **_: Any) -> HashEncoder:
        counted.onnx.append(str(path))
        return counted.encoder

    def torch_load(path: str) -> HashEncoder:
        counted.torch.append(path)
        return counted.encoder

    models._load_onnx_embedder.cache_clear()
    monkeypatch.setattr(OnnxEmbedder, "from_sentence_transformer", onnx_load)
    monkeypatch.setattr(models, "_load_sentence_transformer", torch_load)
    yield counted
    models._load_onnx_embedder.cache_clear()


def test_the_chains_default_backend_is_the_guardrails() -> None:
    assert DEFAULT_BACKEND == GuardrailConfig().models.embedding_backend
    assert SentenceEmbeddings().backend == DEFAULT_BACKEND


def test_a_default_index_and_guardrail_load_one_embedding_model(loads: Loads) -> None:
    index = PassageIndex.from_paths([corpus_path()])  # default SentenceEmbeddings
    guard = Guardrail()
    embedder = guard.resources.embedder()
    embedder.encode(["The meeting is on Thursday."], normalize_embeddings=True)
    index.search(QUESTION, k=2)
    assert (len(loads.onnx), len(loads.torch)) == (1, 0)
    assert isinstance(embedder, CachingEmbedder) and embedder.inner is loads.encoder


def test_a_guarded_rag_on_the_guardrails_embedder_loads_once_and_embeds_once(
    loads: Loads,
) -> None:
    guard = Guardrail()
    embeddings = SentenceEmbeddings.of_guardrail(guard)
    assert loads.onnx == []  # nothing loads before the first use
    index = PassageIndex.from_paths([corpus_path()], embeddings)
    rag = GuardedRAG(index, llm=FakeListChatModel(responses=["x"]), guardrail=guard)
    passages = rag.retriever.invoke(QUESTION)
    assert passages and (len(loads.onnx), len(loads.torch)) == (1, 0)
    cache = guard.resources.embedder()
    assert isinstance(cache, CachingEmbedder) and cache.inner is loads.encoder
    before = len(loads.encoder.texts)
    # the check embeds the query and the passages the chain embedded: all from the cache
    cache.encode([QUESTION], normalize_embeddings=True)
    assert len(loads.encoder.texts) == before
    assert loads.encoder.texts.count(QUESTION) == 1


def test_an_injected_embedder_is_the_one_the_chain_uses(loads: Loads) -> None:
    from guardrail.stages.base import Backends

    mine = HashEncoder()
    guard = Guardrail(backends=Backends(embedder=mine))
    vectors = SentenceEmbeddings.of_guardrail(guard).embed_documents(["a text", "another"])
    assert len(vectors) == 2 and mine.texts == ["a text", "another"]
    assert loads.onnx == [] and loads.torch == []
