"""FAISS index mechanics without loading a model: a letter-count embedding (a real, if crude,
vector space) whose vectors are *not* unit length, to check the index still returns cosines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from chains.embeddings import NormalisedEmbeddings, cosine_scores, unit_embeddings
from chains.middleware import score_missing
from chains.retrieval import PassageIndex, corpus_path, kb_path, load_documents
from guardrail.inputs import Passage

TEXTS = ["the meeting is on thursday", "bananas are yellow", "john works in engineering"]


class LetterCounts(Embeddings):
    def _vec(self, text: str) -> list[float]:
        return [float(text.lower().count(c)) + 0.1 for c in "abcdefghijklmnopqrstuvwxyz"]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def cosine(a: list[float], b: list[float]) -> float:
    x, y = np.asarray(a), np.asarray(b)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def test_scores_are_cosines_even_for_unnormalised_embeddings(tmp_path: Path) -> None:
    emb = LetterCounts()
    index = PassageIndex.from_documents([Document(page_content=t) for t in TEXTS], emb)
    query = "when is the meeting"
    hits = index.search(query, k=3)
    expected = {t: cosine(emb.embed_query(query), emb.embed_query(t)) for t in TEXTS}
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.text], abs=1e-5)
    assert [h.text for h in hits] == sorted(TEXTS, key=lambda t: -expected[t])
    index.save(tmp_path / "i")
    again = PassageIndex.load(tmp_path / "i", emb)
    assert again.search(query, k=3) == hits


def test_normalised_embeddings_and_cosine_helper() -> None:
    emb = unit_embeddings(LetterCounts())
    assert isinstance(emb, NormalisedEmbeddings)
    assert np.linalg.norm(emb.embed_query("abc")) == pytest.approx(1.0)
    assert unit_embeddings(emb) is emb
    scores = cosine_scores(LetterCounts(), "meeting", TEXTS)
    assert scores[0] == pytest.approx(
        cosine(LetterCounts().embed_query("meeting"), LetterCounts().embed_query(TEXTS[0]))
    )


def test_shipped_corpus_and_kb_are_present() -> None:
    docs = load_documents([corpus_path()])
    names = {Path(d.metadata["source"]).name for d in docs}
    assert {"meetings.md", "people.md", "projects.md"} <= names
    assert any("meeting with John Smith is on Thursday" in d.page_content for d in docs)
    assert kb_path().exists()


def test_missing_and_non_finite_scores_are_filled_by_the_guardrail_rule() -> None:
    passages = [
        Passage(text=TEXTS[0], score=0.42),
        Passage(text=TEXTS[1]),
        Passage(text=TEXTS[2], score=float("nan")),
        Passage(text="   "),
    ]
    emb = LetterCounts()
    filled = score_missing("when is the meeting", passages, emb)
    assert filled[0].score == 0.42  # a retriever's own score is kept
    for i in (1, 2):
        expected = cosine(emb.embed_query("when is the meeting"), emb.embed_query(TEXTS[i]))
        assert filled[i].score == pytest.approx(expected, abs=1e-6)
    assert filled[3].score is None  # nothing to embed
    assert score_missing("  ", passages, emb) == passages  # no query: nothing to compare with
