"""The per-guardrail embedding cache: each text is encoded once, results keep shape and order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from guardrail.config import GuardrailConfig
from guardrail.embedding_cache import CachingEmbedder
from guardrail.stages.base import Resources


class _CountingEncoder:
    """Deterministic character-count vectors; records which texts it was asked to encode."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        self.seen.extend(texts)
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


def test_each_text_is_encoded_once_and_order_is_kept() -> None:
    inner = _CountingEncoder()
    cache = CachingEmbedder(inner, max_entries=100)
    first = cache.encode(["aa", "b", "aa"], normalize_embeddings=True, convert_to_numpy=True)
    second = cache.encode(["b", "ccc"], normalize_embeddings=True, convert_to_numpy=True)
    assert inner.seen == ["aa", "b", "ccc"]
    assert first.shape == (3, 3) and np.array_equal(first[0], first[2])
    assert np.array_equal(second[0], first[1])
    assert cache.encode("aa", normalize_embeddings=True).shape == (3,)


def test_resources_wrap_the_embedder_unless_disabled(monkeypatch: Any) -> None:
    import guardrail.models as models

    backends: list[str] = []

    def fake(name: str, backend: str = "torch") -> _CountingEncoder:
        backends.append(backend)
        return _CountingEncoder()

    monkeypatch.setattr(models, "load_embedder", fake)
    assert isinstance(Resources(GuardrailConfig()).embedder(), CachingEmbedder)
    torch_cfg = GuardrailConfig.load({"models": {"embedding_backend": "torch"}})
    Resources(torch_cfg).embedder()
    assert backends == ["onnx", "torch"]  # ONNX by default, the setting reaches the loader
    off = GuardrailConfig.load({"models": {"embedding_cache_size": 0}})
    assert isinstance(Resources(off).embedder(), _CountingEncoder)


class _FailingEncoder:
    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        self.calls += 1
        raise RuntimeError("model down")


def test_texts_embedded_ahead_are_read_from_the_cache() -> None:
    from guardrail.embedding_cache import embed_ahead

    inner = _CountingEncoder()
    cache = CachingEmbedder(inner, max_entries=100)
    thread = embed_ahead(cache, ["The sky is blue.", " ", "The sky is blue.", "Why?"])
    assert thread is not None
    thread.join()
    assert inner.seen == ["The sky is blue.", "Why?"]  # blanks and repeats left out
    vectors = cache.encode(["Why?", "The sky is blue."], normalize_embeddings=True)
    assert inner.seen == ["The sky is blue.", "Why?"]  # nothing embedded twice
    fresh = CachingEmbedder(_CountingEncoder())
    expected = fresh.encode(["Why?", "The sky is blue."], normalize_embeddings=True)
    assert np.array_equal(vectors, expected)


def test_nothing_is_embedded_ahead_without_a_cache_or_texts() -> None:
    from guardrail.embedding_cache import embed_ahead

    inner = _CountingEncoder()
    assert embed_ahead(inner, ["The sky is blue."]) is None
    assert embed_ahead(CachingEmbedder(inner), ["", "  "]) is None
    assert inner.seen == []


def test_a_failure_ahead_leaves_the_reader_to_embed_and_report() -> None:
    from guardrail.embedding_cache import embed_ahead

    inner = _FailingEncoder()
    cache = CachingEmbedder(inner)
    thread = embed_ahead(cache, ["The sky is blue."])
    assert thread is not None
    thread.join()
    assert inner.calls == 1
    with pytest.raises(RuntimeError, match="model down"):  # the reader sees the failure
        cache.encode(["The sky is blue."], normalize_embeddings=True)
    assert inner.calls == 2


def test_the_coherence_stage_embeds_its_sentences_and_the_query_ahead() -> None:
    from guardrail.inputs import GuardInput
    from guardrail.stages.coherence import CoherenceStage

    cfg = GuardrailConfig()
    stage = CoherenceStage(cfg, Resources(cfg))
    data = GuardInput(query=" When is it? ", response="It is on Monday. Bring a pen.")
    assert list(stage.embeds_ahead(data)) == ["It is on Monday.", "Bring a pen.", "When is it?"]


@pytest.mark.parametrize("error", ["ModelLoadError", "OSError"])
def test_an_embedder_that_cannot_load_fails_its_stage_not_the_check(
    monkeypatch: pytest.MonkeyPatch, error: str
) -> None:
    import guardrail.models as models
    from guardrail import Backends, Guardrail
    from guardrail.errors import ModelLoadError
    from guardrail.verifiers.scripted import ScriptedVerifier
    from tests.reliability_strategies import shared_backends

    nlp, _ = shared_backends()

    def missing(*args: Any, **kwargs: Any) -> Any:
        kind = ModelLoadError if error == "ModelLoadError" else OSError
        raise kind("embedding model files are missing")

    monkeypatch.setattr(models, "load_embedder", missing)
    backends = Backends(verifier=ScriptedVerifier(default="entailment"), nlp=nlp)
    guard = Guardrail({"strict": False}, backends=backends)
    report = guard.invoke(
        {
            "query": "When was Orvik founded?",
            "response": "Orvik was founded in 1990.",
            "passages": ["Orvik was founded in 1990 in Lyon."],
        }
    )  # embedding ahead gives up quietly: the coherence stage loads the model and says why
    coherence = next(s for s in report.stages if s.name == "coherence")
    assert coherence.status.value == "failed"
    assert "files are missing" in (coherence.reason or "")
