"""Top-m window pruning: score each claim only against the windows most similar to it.

Claims and windows are embedded once per response (normalised), so cosine similarity is a dot
product; each claim keeps its ``m`` best windows. Cost then grows with the number of claims,
not with the size of the evidence.

Example::

    >>> import numpy as np
    >>> top_m_windows(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0]]), 1)
    [[1]]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from guardrail.hallucination.calibration import content_stems, content_words
from guardrail.text.sentences import split_sentences


def embed(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """Normalised embeddings of ``texts`` (one ``encode`` call), shape ``(len(texts), dim)``."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    vectors = embedder.encode(
        list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float32)


def top_m_windows(claim_vecs: np.ndarray, window_vecs: np.ndarray, m: int) -> list[list[int]]:
    """For each claim, the indices of its ``m`` most similar windows (best first).

    ``m <= 0`` or ``m >= number of windows`` keeps every window (in order).
    """
    n_windows = window_vecs.shape[0]
    if m <= 0 or m >= n_windows:
        return [list(range(n_windows)) for _ in range(claim_vecs.shape[0])]
    sims = claim_vecs @ window_vecs.T
    order = np.argsort(-sims, axis=1, kind="stable")[:, :m]
    return [[int(i) for i in row] for row in order]


def similar_pairs(vecs: np.ndarray, min_similarity: float, max_pairs: int) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, with cosine ≥ ``min_similarity``, most similar first."""
    n = vecs.shape[0]
    if n < 2 or max_pairs <= 0:
        return []
    sims = vecs @ vecs.T
    pairs = [
        (float(sims[i, j]), i, j)
        for i in range(n)
        for j in range(i + 1, n)
        if sims[i, j] >= min_similarity
    ]
    pairs.sort(key=lambda p: -p[0])
    return [(i, j) for _, i, j in pairs[:max_pairs]]


def shared_words(a: str, b: str) -> float:
    """Share of the shorter text's content words (crude stems) that the other also uses.

    Two sentences of one answer can only contradict each other when they say something about
    the same thing: "Anna lives in Berlin with her children" / "Anna lives alone in Berlin"
    share 3 of 4; "Orvik was founded in 2000 in Graz" / "Orvik operates 5 sites" share 1 of 3.
    """
    return stem_overlap(content_stems(a), content_stems(b))


def stem_overlap(sa: set[str], sb: set[str]) -> float:
    """:func:`shared_words` on stems already computed (0 when either side has none)."""
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


def nearest(
    query_vecs: np.ndarray, target_vecs: np.ndarray, k: int, min_similarity: float
) -> list[list[int]]:
    """For each query, up to ``k`` targets with cosine ≥ ``min_similarity`` (best first)."""
    if target_vecs.shape[0] == 0:
        return [[] for _ in range(query_vecs.shape[0])]
    sims = query_vecs @ target_vecs.T
    out = []
    for row in sims:
        order = np.argsort(-row, kind="stable")[:k]
        out.append([int(j) for j in order if row[j] >= min_similarity])
    return out


_NUMBER_RE = re.compile(r"\d[\d,.]*\d|\d")
_NAME_RE = re.compile(r"(?<=[\w,;:] )[A-Z][\w-]+")
SPECIFIC_WEIGHT = 2.0
"""Extra weight of a claim's numbers and mid-sentence capitalised words (names) in BM25."""


def lexical_terms(text: str) -> list[str]:
    """BM25 terms: content words cut to 5 letters, and numbers without separators."""
    return list(_lexical_terms(text))


@lru_cache(maxsize=2048)
def _lexical_terms(text: str) -> tuple[str, ...]:
    """:func:`lexical_terms`, read once per text (each window's sentences are indexed for
    every claim the window is a candidate for)."""
    words = [w[:5] for w in content_words(text)]
    return (*words, *(m.group(0).replace(",", "") for m in _NUMBER_RE.finditer(text)))


def _specific_terms(claim: str) -> set[str]:
    """The claim's numbers and names (mid-sentence capitalised words), as terms."""
    found = {m.group(0).replace(",", "") for m in _NUMBER_RE.finditer(claim)}
    for m in _NAME_RE.finditer(claim):
        found.update(lexical_terms(m.group(0)))
    return found


class LexicalIndex:
    """BM25 (k1 = 1.2, b = 0.75) over evidence windows, built once per check.

    A claim's numbers and names count ``SPECIFIC_WEIGHT`` times, so the window that states the
    claim's figure or name ranks first even when it shares few other words.

    Example::

        >>> idx = LexicalIndex(["Lyon is in France.", "The staff count is 120."])
        >>> idx.top("It employs 120 people.", 1)
        [1]
    """

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self._docs = [Counter(lexical_terms(t)) for t in texts]
        lengths = [sum(d.values()) for d in self._docs]
        self._avg = (sum(lengths) / len(lengths)) if lengths else 0.0
        self._lengths = lengths
        df: Counter[str] = Counter()
        for d in self._docs:
            df.update(d.keys())
        n = len(self._docs)
        self._idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self._k1, self._b = k1, b

    def scores(self, claim: str) -> list[float]:
        """BM25 score of every window for ``claim`` (0 for windows sharing no term)."""
        terms = Counter(lexical_terms(claim))
        specific = _specific_terms(claim)
        out = []
        for doc, length in zip(self._docs, self._lengths, strict=True):
            norm = self._k1 * (1 - self._b + self._b * length / self._avg) if self._avg else 1.0
            s = 0.0
            for term, q in terms.items():
                f = doc.get(term, 0)
                if f:
                    weight = SPECIFIC_WEIGHT if term in specific else 1.0
                    s += weight * q * self._idf[term] * f * (self._k1 + 1) / (f + norm)
            out.append(s)
        return out

    def top(self, claim: str, k: int) -> list[int]:
        """Indices of the ``k`` best windows for ``claim``, best first (ties: earlier first)."""
        scores = self.scores(claim)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return order[: max(0, k)]


def focus_sentences(window: str, claim: str) -> str | None:
    """The part of ``window`` a claim most likely rests on: its sentence sharing the most
    (BM25) terms with the claim, joined with the neighbouring sentence when that one holds
    claim words the first lacks. ``None`` when no sentence shares a term or the window is a
    single sentence (the window itself is then the short premise)."""
    sentences = split_sentences(window)
    if len(sentences) < 2:
        return None
    texts = [x.text for x in sentences]
    scores = LexicalIndex(texts).scores(claim)
    best = max(range(len(texts)), key=lambda i: (scores[i], -i))
    if scores[best] <= 0:
        return None
    wanted = set(content_words(claim))
    missing = wanted - set(content_words(texts[best]))
    pick = [best]
    if missing:
        gains = {
            j: len(missing & set(content_words(texts[j])))
            for j in (best - 1, best + 1)
            if 0 <= j < len(texts)
        }
        j = max(gains, key=lambda k: (gains[k], -k), default=None)
        if j is not None and gains[j] > 0:
            pick = sorted([best, j])
    first, last = sentences[pick[0]], sentences[pick[-1]]
    return window[first.start : last.end]
