"""The per-guardrail embedding cache: each text is encoded once, results keep shape and order."""

from __future__ import annotations

from typing import Any

import numpy as np

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
