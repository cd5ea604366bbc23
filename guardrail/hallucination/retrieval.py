"""Retrieval scores for passages given without one (the ``retrieval_score: embedding`` setting).

The adaptive threshold T(rs) reads the retrieval score. A retriever's own score is used
when the passage carries one; otherwise the score is the cosine of the query (or, without a
query, the response) and the passage in the guardrail's embedding model — the same
``all-MiniLM-L6-v2`` cosine a FAISS retriever over that model produces, and the one the evaluation
harness reports with. This is the one implementation: the pipeline, the CLI and the evaluation
runner all call it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from guardrail.hallucination.pruning import embed
from guardrail.inputs import GuardInput


def cosine_scores(embedder: Any, anchor: str, texts: Sequence[str]) -> list[float]:
    """Cosine of ``anchor`` and each text (one batched ``encode``), rounded to 6 places."""
    if not texts or not anchor.strip():
        return []
    vecs = embed(embedder, [anchor, *texts])
    return [round(float(vecs[0] @ v), 6) for v in vecs[1:]]


def with_retrieval_scores(data: GuardInput, embedder: Any) -> GuardInput:
    """``data`` with every unscored (or non-finite) passage given its query–passage cosine."""
    missing = [
        i
        for i, p in enumerate(data.passages)
        if p.text.strip() and (p.score is None or not math.isfinite(p.score))
    ]
    anchor = data.query if data.query.strip() else data.response
    if not missing or not anchor.strip():
        return data
    scores = cosine_scores(embedder, anchor, [data.passages[i].text for i in missing])
    passages = list(data.passages)
    for i, score in zip(missing, scores, strict=True):
        passages[i] = passages[i].model_copy(update={"score": score})
    return data.model_copy(update={"passages": passages})
