"""A disk cache of verifier scores, so evaluation conditions share one verifier pass.

:class:`CachingVerifier` wraps any :class:`~guardrail.verifiers.base.Verifier`. Each pair is
keyed by ``sha256(model name, premise, hypothesis)`` in a SQLite table; ``predict`` looks the
batch up, sends only the misses (deduplicated, in one batch) to the wrapped verifier, stores
them and returns every prediction in order. It is itself a ``Verifier``, so it is injected with
``Guardrail(config, verifier=CachingVerifier(inner, "cache.sqlite"))``.

Example::

    cached = CachingVerifier(load_verifier(), "results/cache.sqlite")
    cached.predict([("The meeting is at 2pm.", "The meeting is at 2pm.")])
    cached.stats()        # {"hits": 0, "misses": 1}
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guardrail.errors import VerifierError
from guardrail.verifiers.base import NLIPrediction, Pair, Verifier

_SCHEMA = """
CREATE TABLE IF NOT EXISTS nli_scores (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    entailment REAL NOT NULL,
    neutral REAL NOT NULL,
    contradiction REAL NOT NULL
)
"""

#: SQLite limits the number of host parameters of one statement; stay well under it.
_CHUNK = 500


def pair_key(model: str, premise: str, hypothesis: str) -> str:
    """The cache key of one pair for one model."""
    h = hashlib.sha256()
    for part in (model, premise, hypothesis):
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


class CachingVerifier(Verifier):
    """A verifier that remembers the scores of ``inner`` in a SQLite file.

    Args:
        inner: the verifier to wrap.
        path: SQLite file (created with its folder); ``":memory:"`` for a process-local cache.
        model_name: the key's model name; default ``inner.name``. Change it whenever the
            weights change, or stale scores are returned.
    """

    def __init__(self, inner: Verifier, path: str | Path, model_name: str | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.languages = inner.languages
        self.max_tokens = inner.max_tokens
        self.model_name = model_name or inner.name
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = str(path)
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        except sqlite3.Error as exc:
            raise VerifierError(f"could not open the score cache {self.path}: {exc}") from exc

    def __getattr__(self, attr: str) -> Any:
        # Anything else (``count_tokens``, ``labels`` …) is the wrapped verifier's.
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def _lookup(self, keys: list[str]) -> dict[str, NLIPrediction]:
        found: dict[str, NLIPrediction] = {}
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, entailment, neutral, contradiction FROM nli_scores "
                f"WHERE key IN ({marks})",
                chunk,
            ).fetchall()
            for key, e, n, c in rows:
                found[key] = NLIPrediction(entailment=e, neutral=n, contradiction=c)
        return found

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        """Scores of ``pairs``, from the cache where present, else from the wrapped verifier."""
        if not pairs:
            return []
        keys = [pair_key(self.model_name, p, h) for p, h in pairs]
        with self._lock:
            found = self._lookup(sorted(set(keys)))
        todo: dict[str, Pair] = {}
        for key, pair in zip(keys, pairs, strict=True):
            if key not in found and key not in todo:
                todo[key] = pair
        if todo:
            fresh = self.inner.predict(list(todo.values()))
            if len(fresh) != len(todo):
                raise VerifierError(
                    f"{self.inner.name} returned {len(fresh)} predictions for {len(todo)} pairs"
                )
            rows = [
                (key, self.model_name, p.entailment, p.neutral, p.contradiction)
                for key, p in zip(todo, fresh, strict=True)
            ]
            with self._lock:
                try:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO nli_scores VALUES (?, ?, ?, ?, ?)", rows
                    )
                    self._conn.commit()
                except sqlite3.Error as exc:
                    raise VerifierError(f"could not write the score cache: {exc}") from exc
            found.update(zip(todo, fresh, strict=True))
        with self._lock:
            self._misses += len(todo)
            self._hits += len(keys) - len(todo)
        return [found[key] for key in keys]

    def stats(self) -> dict[str, int]:
        """Hits and misses (pairs) since this object was made, and rows on disk."""
        with self._lock:
            (rows,) = self._conn.execute("SELECT COUNT(*) FROM nli_scores").fetchone()
            return {"hits": self._hits, "misses": self._misses, "rows": int(rows)}

    def close(self) -> None:
        """Close the SQLite connection."""
        with self._lock:
            self._conn.close()
