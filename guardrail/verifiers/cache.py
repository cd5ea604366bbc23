"""An in-process LRU cache of verifier scores, keyed on (model, premise, hypothesis).

The same pairs come back across calls: a regenerate loop re-checks an answer that keeps most of
its sentences against the same evidence, a RAG app retrieves the same passages for similar
questions, a batch re-checks repeated answers. :class:`ScoreCache` keeps the last
``max_entries`` predictions (least recently used evicted first) and is safe to share between
threads; :func:`cached_predict` scores only the misses, deduplicated, in one ``predict`` call.
:class:`CachedVerifier` wraps any verifier with one, for code that takes a verifier.

(``guardrail.evaluation.cache.CachingVerifier`` is the *disk* cache of the evaluation harness.)

Example::

    cache = ScoreCache(10_000)
    verifier = CachedVerifier(load_verifier(), cache)
    verifier.predict([("The meeting is at 2pm.", "The meeting is at 2pm.")])
    cache.stats()          # {"hits": 0, "misses": 1, "size": 1, "max_entries": 10000}
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from guardrail.errors import ConfigError, VerifierError
from guardrail.verifiers.base import NLIPrediction, Pair, Verifier
from guardrail.verifiers.encoding import check_pairs

__all__ = ["CachedVerifier", "ScoreCache", "cached_predict"]

Key = tuple[str, str, str]


class ScoreCache:
    """A bounded, thread-safe LRU map from ``(model, premise, hypothesis)`` to a prediction.

    Args:
        max_entries: predictions kept (at least 1).
    """

    def __init__(self, max_entries: int = 10_000) -> None:
        if max_entries < 1:
            raise ConfigError(f"score cache size must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._data: OrderedDict[Key, NLIPrediction] = OrderedDict()
        self._hits = 0
        self._misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def get_many(self, keys: Sequence[Key]) -> list[NLIPrediction | None]:
        """The cached prediction of each key (``None`` for a miss); hits become most recent."""
        out: list[NLIPrediction | None] = []
        with self._lock:
            for key in keys:
                pred = self._data.get(key)
                if pred is None:
                    self._misses += 1
                else:
                    self._hits += 1
                    self._data.move_to_end(key)
                out.append(pred)
        return out

    def put_many(self, items: Sequence[tuple[Key, NLIPrediction]]) -> None:
        """Store predictions, evicting the least recently used beyond ``max_entries``."""
        with self._lock:
            for key, pred in items:
                self._data[key] = pred
                self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def stats(self) -> dict[str, int]:
        """Hits, misses, current size and capacity."""
        with self._lock:
            return {
                "hits": self._hits,
                "misses": self._misses,
                "size": len(self._data),
                "max_entries": self.max_entries,
            }


def checked_prediction(value: Any) -> NLIPrediction:
    """``value`` as a valid :class:`NLIPrediction` (finite, non-negative scores), else a
    ``VerifierError`` saying what came back."""
    if isinstance(value, NLIPrediction):
        scores = (value.entailment, value.neutral, value.contradiction)
        if all(math.isfinite(v) for v in scores):
            return value
    try:
        return NLIPrediction.model_validate(
            value if isinstance(value, dict) else getattr(value, "__dict__", value)
        )
    except (ValueError, TypeError) as exc:
        raise VerifierError(
            f"verifier returned a malformed prediction {value!r}: expected finite "
            "entailment / neutral / contradiction probabilities"
        ) from exc


def cached_predict(verifier: Any, pairs: Sequence[Pair], cache: ScoreCache) -> list[NLIPrediction]:
    """``verifier.predict(pairs)`` through ``cache``: one call with the distinct misses only.

    Raises ``VerifierError`` when the verifier returns the wrong number of predictions; nothing
    is cached from a failed call.
    """
    model = str(getattr(verifier, "name", type(verifier).__name__))
    keys = [(model, p, h) for p, h in pairs]
    found = cache.get_many(keys)
    missing = list(dict.fromkeys(k for k, f in zip(keys, found, strict=True) if f is None))
    if missing:
        preds = list(verifier.predict([(p, h) for _, p, h in missing]))
        if len(preds) != len(missing):
            raise VerifierError(
                f"verifier returned {len(preds)} predictions for {len(missing)} pairs"
            )
        preds = [checked_prediction(p) for p in preds]  # nothing malformed is ever cached
        fresh = dict(zip(missing, preds, strict=True))
        cache.put_many(list(fresh.items()))
        found = [f if f is not None else fresh[k] for k, f in zip(keys, found, strict=True)]
    return [f for f in found if f is not None]


class CachedVerifier(Verifier):
    """A verifier whose scores go through a shared :class:`ScoreCache`.

    Args:
        inner: the verifier to wrap (its name, languages and token limit are kept).
        cache: the cache (shared between wrappers and threads); a new one when omitted.
    """

    def __init__(self, inner: Verifier, cache: ScoreCache | None = None) -> None:
        self.inner = inner
        self.cache = cache if cache is not None else ScoreCache()
        self.name = inner.name
        self.languages = inner.languages
        self.max_tokens = inner.max_tokens

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        return cached_predict(self.inner, check_pairs(pairs), self.cache)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def covers(self, language: str | None) -> bool:
        return self.inner.covers(language)
