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

from collections.abc import Sequence
from typing import Any

import numpy as np


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
