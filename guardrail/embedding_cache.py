"""An in-process cache of sentence embeddings, shared by the stages of one guardrail.

Evidence repeats: a RAG app retrieves the same passages for many questions, the regenerate loop
checks each new attempt against the same evidence, and evaluation conditions re-embed the same
windows. Each text's vector is computed once and kept (up to ``max_entries``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["CachingEmbedder", "embed_ahead"]

logger = logging.getLogger(__name__)


class CachingEmbedder:
    """An in-process cache around a sentence-transformer's ``encode``.

    Window pruning embeds every window of every passage, and the same passages come back again
    and again; this keeps each text's vector once. Calls
    with options other than ``normalize_embeddings`` / ``convert_to_numpy`` /
    ``show_progress_bar`` / ``batch_size`` go to the model uncached. Inject it with
    ``guard.resources.set("embedder", CachingEmbedder(load_embedder()))``.

    Args:
        inner: the ``SentenceTransformer`` (anything with a compatible ``encode``).
        max_entries: vectors kept; the cache is cleared when it would grow beyond.
    """

    _PASSTHROUGH = frozenset({"normalize_embeddings", "convert_to_numpy", "show_progress_bar",
                              "batch_size"})  # fmt: skip

    def __init__(self, inner: Any, max_entries: int = 200_000) -> None:
        self.inner = inner
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._vectors: dict[tuple[bool, str], Any] = {}

    def __getattr__(self, attr: str) -> Any:
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def encode(self, sentences: str | Sequence[str], **kwargs: Any) -> Any:
        """``inner.encode`` with per-text caching; same shapes and dtype as the model's."""
        import numpy as np

        if set(kwargs) - self._PASSTHROUGH or kwargs.get("convert_to_numpy") is False:
            return self.inner.encode(sentences, **kwargs)
        single = isinstance(sentences, str)
        texts = [sentences] if isinstance(sentences, str) else list(sentences)
        norm = bool(kwargs.get("normalize_embeddings", False))
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if (norm, t) not in self._vectors))
        if missing:
            opts = {k: v for k, v in kwargs.items() if k != "convert_to_numpy"}
            opts["show_progress_bar"] = False
            fresh = np.asarray(self.inner.encode(missing, convert_to_numpy=True, **opts))
            with self._lock:
                if len(self._vectors) + len(missing) > self.max_entries:
                    self._vectors.clear()
                for text, vec in zip(missing, fresh, strict=True):
                    self._vectors[(norm, text)] = vec
                found = {t: self._vectors[(norm, t)] for t in texts}
        else:
            with self._lock:
                found = {t: self._vectors[(norm, t)] for t in texts}
        if not texts:
            return self.inner.encode(sentences, **kwargs)
        out = np.stack([found[t] for t in texts])
        return out[0] if single else out


def embed_ahead(embedder: Any, texts: Sequence[str]) -> threading.Thread | None:
    """Start putting the normalised vectors of ``texts`` into ``embedder``'s cache on a thread
    of its own, and return the thread (join it before the vectors are read); ``None`` when
    there is nothing to do (no text, or ``embedder`` is not a :class:`CachingEmbedder`).

    The model runs on another core while the caller works (``Guardrail.prepare`` parses the
    response meanwhile); whoever then asks for a text's vector gets the cached one. A text's
    vector does not depend on the texts it is embedded with, so reading it from the cache
    gives what embedding it in the reader's own call would. A failure is left to the reader,
    which embeds the text itself and reports what goes wrong.
    """
    wanted = list(dict.fromkeys(t for t in texts if t.strip()))
    if not wanted or not isinstance(embedder, CachingEmbedder):
        return None

    def run() -> None:
        try:
            embedder.encode(wanted, normalize_embeddings=True, show_progress_bar=False)
        except Exception as exc:  # noqa: BLE001 - ahead of time only: the reader embeds again
            logger.debug("embedding ahead failed (%s); the stages embed on their own", exc)

    thread = threading.Thread(target=run, name="guardrail-embed-ahead", daemon=True)
    thread.start()
    return thread
