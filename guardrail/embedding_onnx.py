"""A sentence-transformer run on ONNX Runtime: the same vectors for much less CPU than torch.

The default embedder, all-MiniLM-L6-v2, ships inside guardrail already exported
(``guardrail/embeddings/all-MiniLM-L6-v2/``, made by ``scripts/export_embedder.py``): it loads
with ONNX Runtime and ``tokenizers`` alone, no torch. Other sentence-transformers models (a
Hugging Face id or a local folder) are exported on first use, as described below.

torch spends most of a short ``encode`` call in per-operator overhead, which ONNX Runtime does
not have (the timings are on the Benchmarks page of the documentation, "Runtime choices"). The
model is exported once, in fp32 (int8 would move the cosines away from torch's), to a
cache folder keyed by the weights' hash, and loaded from there afterwards:

- ``$GUARDRAIL_CACHE_DIR/embeddings/<name>-<sha16>/model.onnx`` (default cache dir
  ``~/.cache/guardrail``);
- the export needs torch and transformers (both come with sentence-transformers); it is checked
  against torch before it is kept, and written to a temporary file first, so processes that
  export at the same time never see half a file.

Supported: a Transformer module followed by Pooling (mean or CLS) and optionally Normalize, the
shape of all-MiniLM-L6-v2 and the BGE / E5 small models. Anything else raises
:class:`~guardrail.errors.ModelLoadError`; :func:`guardrail.models.load_embedder` then keeps the
torch model.

Example::

    embedder = OnnxEmbedder.from_sentence_transformer("./my-sentence-transformer")
    vectors = embedder.encode(["The meeting is on Thursday."], normalize_embeddings=True)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import MissingDependencyError, ModelLoadError
from guardrail.onnx_common import length_buckets, output_only, read_json

logger = logging.getLogger(__name__)

EXPORT_VERSION = 1
"""Bumped when the exported graph changes, so old cache entries are not reused."""
MAX_DIFF = 1e-4
"""Largest element difference between torch and the export that is accepted."""
_KNOWN_MODULES = ("Transformer", "Pooling", "Normalize")


def cache_dir() -> Path:
    """Where exported models are kept (``$GUARDRAIL_CACHE_DIR`` or ``~/.cache/guardrail``)."""
    root = os.environ.get("GUARDRAIL_CACHE_DIR") or Path.home() / ".cache" / "guardrail"
    return Path(root)


def _layout(model_dir: Path) -> tuple[str, bool, int]:
    """Pooling mode, whether vectors are normalised, and the max sequence length."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"{model_dir} is not a sentence-transformers folder: {exc}") from exc
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise ModelLoadError(f"{model_dir}/modules.json is not a list of modules")
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if not kinds or kinds[0] != "Transformer" or any(k not in _KNOWN_MODULES for k in kinds):
        raise ModelLoadError(
            f"{model_dir}: modules {kinds} are not Transformer+Pooling(+Normalize)"
        )
    pooling_dir = next((m["path"] for m in modules if str(m["type"]).endswith("Pooling")), None)
    if pooling_dir is None:
        raise ModelLoadError(f"{model_dir} has no Pooling module")
    pooling = read_json(model_dir / pooling_dir / "config.json")
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
    if modes == ["pooling_mode_mean_tokens"]:
        mode = "mean"
    elif modes == ["pooling_mode_cls_token"]:
        mode = "cls"
    else:
        raise ModelLoadError(f"{model_dir}: pooling {modes} is not supported by the ONNX backend")
    bert = model_dir / "sentence_bert_config.json"
    max_len = int(read_json(bert).get("max_seq_length") or 512) if bert.exists() else 512
    return mode, "Normalize" in kinds, max_len


def _weights_hash(model_dir: Path) -> str:
    digest = hashlib.sha256(f"v{EXPORT_VERSION}".encode())
    for name in ("model.safetensors", "pytorch_model.bin", "config.json"):
        path = model_dir / name
        if path.exists():
            with path.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
    return digest.hexdigest()[:16]


def export_transformer(model_dir: Path, target: Path) -> None:
    """Export the transformer's last hidden state to ``target`` (checked against torch; needs
    torch and transformers)."""
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise MissingDependencyError("torch", "models") from exc

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir)).eval()

    enc = tokenizer(
        ["A dog runs in the park.", "Two people talk about the weather for a long while."],
        padding=True,
        return_tensors="pt",
    )
    types = enc.get("token_type_ids", torch.zeros_like(enc["input_ids"]))
    args = (enc["input_ids"], enc["attention_mask"], types)
    axes = {0: "batch", 1: "sequence"}
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about shapes: the check below decides
            torch.onnx.export(
                output_only(torch, model, "last_hidden_state"),
                args,
                str(tmp),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["hidden"],
                dynamic_axes={
                    name: axes
                    for name in ("input_ids", "attention_mask", "token_type_ids", "hidden")
                },
                opset_version=17,
                do_constant_folding=True,
                dynamo=False,
            )
            ref = model(input_ids=args[0], attention_mask=args[1], token_type_ids=args[2])
            expected = ref.last_hidden_state.numpy()
        import onnxruntime as ort

        session = ort.InferenceSession(str(tmp), providers=["CPUExecutionProvider"])
        feed = {"input_ids": args[0].numpy(), "attention_mask": args[1].numpy(),
                "token_type_ids": args[2].numpy()}  # fmt: skip
        got = session.run(["hidden"], feed)[0]
        diff = float(np.abs(got - expected).max())
        if diff > MAX_DIFF:
            raise ModelLoadError(f"ONNX export of {model_dir} differs from torch by {diff:.1e}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


SMALL_BATCH = 32
"""Up to this many texts are tokenized one by one (the same ids as ``encode_batch``, without
starting its thread pool, which costs more than it saves on a loaded machine)."""


class OnnxEmbedder:
    """``SentenceTransformer.encode`` for Transformer + Pooling (+ Normalize) models on ONNX.

    Args:
        model_dir: the sentence-transformers folder (tokenizer, pooling and length settings).
        onnx_file: the exported transformer (see :meth:`from_sentence_transformer`).
        threads: intra-op threads (0 = ONNX Runtime's default, all cores).
    """

    def __init__(self, model_dir: str | Path, onnx_file: str | Path, *, threads: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        src = Path(model_dir)
        self.pooling, self.normalizes, self.max_seq_length = _layout(src)
        try:
            self._tok = Tokenizer.from_file(str(src / "tokenizer.json"))
        except Exception as exc:
            raise ModelLoadError(f"cannot load the tokenizer of {src}: {exc}") from exc
        self._tok.no_padding()
        self._tok.enable_truncation(self.max_seq_length)
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(0, int(threads))
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(
                str(onnx_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ModelLoadError(f"ONNX Runtime could not load {onnx_file}: {exc}") from exc
        self._dim = int(self._session.get_outputs()[0].shape[-1])
        self.name = str(src)

    @classmethod
    def from_sentence_transformer(
        cls, model_dir: str | Path, *, cache: str | Path | None = None, threads: int = 0
    ) -> OnnxEmbedder:
        """Load ``model_dir``'s ONNX model: its own ``model.onnx`` when it was exported ahead
        (the bundled all-MiniLM-L6-v2: no torch needed), else the export in the cache, made
        first when absent (needs torch)."""
        src = Path(model_dir)
        _layout(src)  # refuse unsupported models before any export work
        if (src / "model.onnx").is_file():
            return cls(src, src / "model.onnx", threads=threads)
        folder = Path(cache) if cache is not None else cache_dir() / "embeddings"
        target = folder / f"{src.name}-{_weights_hash(src)}" / "model.onnx"
        if not target.exists():
            logger.info("exporting %s to ONNX at %s (once)", src, target)
            export_transformer(src, target)
        return cls(src, target, threads=threads)

    def get_sentence_embedding_dimension(self) -> int:
        """Length of the vectors."""
        return self._dim

    def encode(
        self,
        sentences: str | Sequence[str],
        batch_size: int = 32,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
        normalize_embeddings: bool = False,
        **kwargs: Any,
    ) -> np.ndarray:
        """Vectors of ``sentences`` (one row each; a 1-d vector for a single string).

        Texts are sorted by length and batched so that a batch is padded to at most 1.25× its
        shortest text (batches of similar length cost what their tokens cost).
        """
        if kwargs:
            raise TypeError(f"OnnxEmbedder.encode does not take {sorted(kwargs)}")
        single = isinstance(sentences, str)
        texts = [sentences] if isinstance(sentences, str) else list(sentences)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        # a few texts (a check's): one by one, without the thread pool encode_batch starts
        small = len(texts) <= SMALL_BATCH
        encodings = [self._tok.encode(t) for t in texts] if small else self._tok.encode_batch(texts)
        lengths = [len(e.ids) for e in encodings]
        for rows in length_buckets(lengths, batch_size, 1.25, 2):
            out[rows] = self._forward([encodings[i] for i in rows])
        if self.normalizes or normalize_embeddings:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = out / np.maximum(norms, 1e-12)
        return out[0] if single else out

    def _forward(self, encodings: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for r, e in enumerate(encodings):
            n = len(e.ids)
            ids[r, :n] = e.ids
            mask[r, :n] = 1
            types[r, :n] = e.type_ids
        hidden = self._session.run(
            ["hidden"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        )[0]
        if self.pooling == "cls":
            return np.asarray(hidden[:, 0], dtype=np.float32)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return np.asarray(pooled, dtype=np.float32)
