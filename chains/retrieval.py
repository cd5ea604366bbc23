"""RAG stage 1, retrieve: a FAISS index over passages, top-k with cosine retrieval scores.

Documents are read from files or folders (``.txt``, ``.md``, ``.jsonl`` with a ``text`` field),
chunked with LangChain's ``RecursiveCharacterTextSplitter`` and embedded with unit-length
vectors into LangChain's community ``FAISS`` store using an *inner-product* index, so the score
FAISS returns is exactly the cosine similarity (no L2-distance conversion needed).

Example::

    index = PassageIndex.from_paths(["chains/data/corpus"])
    index.save("corpus.faiss")
    index = PassageIndex.load("corpus.faiss")
    for p in index.search("When is the meeting with John?", k=3):
        print(round(p.score, 3), p.source, p.text)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig, RunnableLambda

from chains.embeddings import unit_embeddings
from guardrail.errors import InputError, MissingDependencyError
from guardrail.inputs import Passage, read_passage_rows

logger = logging.getLogger(__name__)

SUFFIXES = (".txt", ".md", ".jsonl")


def corpus_path() -> Path:
    """The small office corpus shipped with the package (meetings, people, projects)."""
    return Path(__file__).resolve().parent / "data" / "corpus"


def kb_path() -> Path:
    """The knowledge base (JSON) that goes with the shipped corpus: the people in it."""
    return Path(__file__).resolve().parent / "data" / "kb" / "office.json"


def open_kb(path: str | Path) -> Any:
    """Open a knowledge base file with ``guardrail.knowledge`` (``None`` if not in this build)."""
    try:
        from guardrail.knowledge import open_knowledge_base
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.startswith("guardrail.knowledge"):
            logger.warning("guardrail.knowledge is not in this build: no knowledge base used")
            return None
        raise
    return open_knowledge_base(str(path))


def _read_jsonl(path: Path) -> list[Document]:
    docs: list[Document] = []
    for n, row in read_passage_rows(path):
        meta = {k: v for k, v in row.items() if k != "text" and k != "score"}
        meta.setdefault("source", f"{path}:{n}")
        docs.append(Document(page_content=row["text"], metadata=meta))
    return docs


def load_documents(paths: Iterable[str | Path]) -> list[Document]:
    """Read ``.txt`` / ``.md`` / ``.jsonl`` files, and such files inside folders (recursively)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        elif path.is_file():
            if path.suffix not in SUFFIXES:
                raise InputError(f"{path}: unsupported file type; use one of {SUFFIXES}")
            files.append(path)
        else:
            raise InputError(f"corpus path not found: {path}")
    docs: list[Document] = []
    for file in files:
        if file.suffix == ".jsonl":
            docs += _read_jsonl(file)
        else:
            text = file.read_text(encoding="utf-8")
            if text.strip():
                docs.append(Document(page_content=text, metadata={"source": str(file)}))
    if not docs:
        raise InputError(f"no documents found in {[str(p) for p in paths]}")
    return docs


def split_documents(
    docs: list[Document], chunk_size: int = 400, chunk_overlap: int = 40
) -> list[Document]:
    """Chunk documents (paragraph → sentence → word boundaries) with their metadata kept."""
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter
    except ImportError as exc:
        raise MissingDependencyError("langchain-text-splitters", "chains") from exc
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        separators=["\n\n", "\n", ". ", " ", ""],
    )
    return splitter.split_documents(docs)


class PassageIndex:
    """A FAISS inner-product index over unit-length embeddings (score = cosine similarity).

    Any ``Embeddings`` may be passed; its vectors are normalised to unit length
    (:func:`chains.embeddings.unit_embeddings`), since FAISS's ``normalize_L2`` does not apply
    to inner-product indexes.

    Build with :meth:`from_paths` or :meth:`from_documents`; :meth:`save` / :meth:`load` a
    folder. The object is read-only after construction, so it is safe to share across threads.
    """

    def __init__(self, store: Any, embeddings: Embeddings) -> None:
        self.store = store
        self.embeddings = embeddings

    @classmethod
    def from_documents(
        cls, docs: list[Document], embeddings: Embeddings | None = None
    ) -> PassageIndex:
        """Embed already-chunked documents into a new index."""
        if not docs:
            raise InputError("cannot build an index from no documents")
        emb = unit_embeddings(embeddings)
        faiss_cls, strategy = _faiss()
        store = faiss_cls.from_documents(docs, emb, distance_strategy=strategy.MAX_INNER_PRODUCT)
        logger.info("built a FAISS index over %d chunks", len(docs))
        return cls(store, emb)

    @classmethod
    def from_paths(
        cls,
        paths: Iterable[str | Path],
        embeddings: Embeddings | None = None,
        chunk_size: int = 400,
        chunk_overlap: int = 40,
    ) -> PassageIndex:
        """Read, chunk and index files or folders."""
        chunks = split_documents(load_documents(paths), chunk_size, chunk_overlap)
        return cls.from_documents(chunks, embeddings)

    def save(self, folder: str | Path) -> Path:
        """Write the index (``index.faiss`` + ``index.pkl``) into ``folder``."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        self.store.save_local(str(out))
        return out

    @classmethod
    def load(cls, folder: str | Path, embeddings: Embeddings | None = None) -> PassageIndex:
        """Load an index written by :meth:`save`.

        The docstore is a pickle: only load folders you (or this class) wrote.
        """
        path = Path(folder)
        if not (path / "index.faiss").exists():
            raise InputError(f"no FAISS index in {path} (expected index.faiss)")
        emb = unit_embeddings(embeddings)
        faiss_cls, strategy = _faiss()
        store = faiss_cls.load_local(
            str(path),
            emb,
            allow_dangerous_deserialization=True,
            distance_strategy=strategy.MAX_INNER_PRODUCT,
        )
        return cls(store, emb)

    def __len__(self) -> int:
        return int(self.store.index.ntotal)

    def search(self, query: str, k: int = 4) -> list[Passage]:
        """The ``k`` passages most similar to ``query``, best first, ``score`` = cosine."""
        if not query.strip():
            raise InputError("the query is empty: nothing to retrieve")
        hits = self.store.similarity_search_with_score(query, k=k)
        return [
            Passage(
                text=doc.page_content,
                score=round(float(score), 6),
                source=doc.metadata.get("source"),
                metadata={key: v for key, v in doc.metadata.items() if key != "source"},
            )
            for doc, score in hits
        ]

    def as_runnable(self, k: int = 4) -> RunnableLambda[str, list[Passage]]:
        """``query -> list[Passage]`` as a Runnable named ``guarded_rag.retrieve``."""

        def retrieve(query: str, config: RunnableConfig) -> list[Passage]:
            return self.search(query, k=k)

        return RunnableLambda(retrieve, name="guarded_rag.retrieve")

    def as_retriever(self, k: int = 4) -> Any:
        """A LangChain retriever whose documents carry the cosine in ``metadata["score"]``."""
        from langchain_core.retrievers import BaseRetriever

        index = self

        class _ScoredRetriever(BaseRetriever):
            def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
                return [
                    Document(
                        page_content=p.text,
                        metadata={**p.metadata, "source": p.source, "score": p.score},
                    )
                    for p in index.search(query, k=k)
                ]

        return _ScoredRetriever()


def _faiss() -> tuple[Any, Any]:
    try:
        import faiss  # noqa: F401
        from langchain_community.vectorstores import FAISS
        from langchain_community.vectorstores.utils import DistanceStrategy
    except ImportError as exc:
        raise MissingDependencyError("faiss-cpu / langchain-community", "chains") from exc
    return FAISS, DistanceStrategy
