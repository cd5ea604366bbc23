"""FAISS retrieval with the packaged all-MiniLM-L6-v2: scores are cosine similarities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chains.embeddings import SentenceEmbeddings, cosine_scores
from chains.retrieval import PassageIndex, corpus_path, load_documents, split_documents
from guardrail.errors import InputError
from guardrail.models import load_embedder

pytestmark = pytest.mark.integration

QUESTION = "When is the meeting with John?"


@pytest.fixture(scope="module")
def index() -> PassageIndex:
    return PassageIndex.from_paths([corpus_path()])


def test_score_is_the_cosine_similarity(index: PassageIndex) -> None:
    hits = index.search(QUESTION, k=3)
    model = load_embedder()
    q = model.encode(QUESTION)
    for hit in hits:
        d = model.encode(hit.text)
        cosine = float(q @ d / (np.linalg.norm(q) * np.linalg.norm(d)))
        assert hit.score == pytest.approx(cosine, abs=1e-4)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in scores if s is not None)


def test_meeting_question_finds_the_meeting(index: PassageIndex) -> None:
    top = index.search(QUESTION, k=1)[0]
    assert top.source is not None and Path(top.source).name == "meetings.md"
    assert "John Smith is on Thursday at 10:00" in top.text


def test_save_and_load_give_the_same_results(index: PassageIndex, tmp_path: Path) -> None:
    index.save(tmp_path / "idx")
    loaded = PassageIndex.load(tmp_path / "idx")
    assert len(loaded) == len(index)
    assert loaded.search(QUESTION, k=3) == index.search(QUESTION, k=3)


def test_retriever_documents_carry_the_score(index: PassageIndex) -> None:
    docs = index.as_retriever(k=2).invoke(QUESTION)
    hits = index.search(QUESTION, k=2)
    assert [d.metadata["score"] for d in docs] == [h.score for h in hits]


def test_jsonl_and_chunking(tmp_path: Path) -> None:
    file = tmp_path / "facts.jsonl"
    file.write_text(
        '{"text": "The office opens at 8am.", "id": "a"}\n\n'
        '{"text": "Parking is free on weekends.", "id": "b"}\n',
        encoding="utf-8",
    )
    docs = load_documents([file])
    assert [d.metadata["id"] for d in docs] == ["a", "b"]
    long = load_documents([corpus_path() / "people.md"])
    chunks = split_documents(long, chunk_size=120, chunk_overlap=10)
    assert len(chunks) > 1 and all(len(c.page_content) <= 120 for c in chunks)
    idx = PassageIndex.from_paths([file])
    assert idx.search("When does the office open?", k=1)[0].text == "The office opens at 8am."


def test_cosine_scores_helper() -> None:
    emb = SentenceEmbeddings()
    scores = cosine_scores(emb, "meeting time", ["The meeting is at 10.", "Bananas are yellow."])
    assert scores[0] > scores[1]


def test_bad_corpus_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        load_documents([tmp_path / "missing"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json}\n", encoding="utf-8")
    with pytest.raises(InputError):
        load_documents([bad])
    with pytest.raises(InputError):
        PassageIndex.load(tmp_path)


SAMPLE_QUESTIONS = [
    QUESTION,
    "Which department does John Smith work in?",
    "Who leads the project?",
    "What is the budget?",
    "Where is the office?",
    "Who is Maria?",
]


def test_the_guardrails_onnx_embedder_gives_the_torch_vectors_and_hits() -> None:
    """The chains now embed on the guardrail's embedder (ONNX); on the shipped corpus its
    vectors are torch's to 5e-4 (the shipped model stores its weights in float16: its
    export.json records 1.1e-4 at most) and the index retrieves the same passages in the same
    order."""
    from guardrail.embedding_onnx import OnnxEmbedder
    from guardrail.pipeline import Guardrail

    chunks = split_documents(load_documents([corpus_path()]))
    texts = [c.page_content for c in chunks] + SAMPLE_QUESTIONS
    guard = Guardrail()
    shared = SentenceEmbeddings.of_guardrail(guard)
    torch = SentenceEmbeddings(backend="torch")
    assert isinstance(guard.resources.embedder().inner, OnnxEmbedder)
    assert np.allclose(shared.embed_documents(texts), torch.embed_documents(texts), atol=5e-4)
    on_shared = PassageIndex.from_documents(chunks, shared)
    on_torch = PassageIndex.from_documents(chunks, torch)
    for question in SAMPLE_QUESTIONS:
        got, want = on_shared.search(question, k=4), on_torch.search(question, k=4)
        assert [(p.source, p.text) for p in got] == [(p.source, p.text) for p in want]
        assert [p.score for p in got] == pytest.approx([p.score for p in want], abs=5e-4)
