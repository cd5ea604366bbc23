"""Rebuild trainable torch weights from an exported ONNX verifier, so training can continue.

A training run cannot outlive a session and ``runs/`` is not kept, but the shipped model is
committed. ``rebuild_from_onnx`` maps the initializers of an ONNX export (int8 from
``quantize_dynamic``, per tensor or per channel; fp16 behind ``Cast`` nodes; or fp32) back onto a
BERT sequence-classification model:

- int8 ``MatMulInteger`` weights are dequantised, ``(w_q - zero_point) * scale``; the torch name
  comes from the bias ``Add`` that follows the matmul (biases keep their names on export);
- fp16-stored weights are cast back to fp32 (``Cast`` nodes name the fp32 tensor);
- embeddings, LayerNorms, biases and ``Gemm`` weights (pooler, classifier) are fp32 as exported.

The result is the int8 model's function in fp32 (not the pre-quantisation weights, which are
lost); a few hundred training steps wash out the rounding. ``lineage_of`` reads the folder's
``lineage.json`` (earlier versions, steps) and adds the parent's sha256.

Example::

    model_dir = rebuild_from_onnx("guardrail/verifiers/bundled", "runs/v3/init")
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import MissingDependencyError, ModelLoadError

logger = logging.getLogger(__name__)

LINEAGE_FILE = "lineage.json"


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_lineage(model_dir: str | Path) -> list[dict[str, Any]]:
    """The ``lineage.json`` records of a model folder (oldest first), or ``[]``."""
    path = Path(model_dir) / LINEAGE_FILE
    if not path.exists():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return list(data) if isinstance(data, list) else []


def lineage_of(model_dir: str | Path) -> dict[str, Any]:
    """The parent record a continued run stores: path, sha256 of its weights, earlier versions."""
    folder = Path(model_dir)
    weights = folder / "model.onnx"
    if not weights.exists():
        weights = folder / "model.safetensors"
    return {
        "path": str(folder),
        "file": weights.name,
        "sha256": sha256_file(weights) if weights.exists() else None,
        "history": read_lineage(folder),
    }


def _numpy_initializers(model: Any) -> dict[str, np.ndarray]:
    """Initializers and ``Constant`` node tensors (small graphs keep some weights as those)."""
    from onnx import numpy_helper

    arrays = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            arrays.setdefault(node.output[0], numpy_helper.to_array(node.attribute[0].t))
    for node in model.graph.node:  # equal tensors are stored once and aliased by ``Identity``
        if node.op_type == "Identity" and node.input[0] in arrays:
            arrays.setdefault(node.output[0], arrays[node.input[0]])
        elif node.op_type == "Cast" and node.input[0] in arrays:  # fp16-stored weights
            arrays.setdefault(node.output[0], arrays[node.input[0]].astype(np.float32))
    return arrays


def onnx_state_dict(onnx_file: str | Path) -> dict[str, np.ndarray]:
    """torch-named float arrays recovered from an exported (int8 or fp32) BERT graph."""
    try:
        import onnx
    except ImportError as exc:  # pragma: no cover - depends on install
        raise MissingDependencyError("onnx", "train") from exc
    model = onnx.load(str(onnx_file))
    inits = _numpy_initializers(model)
    consumers: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    state: dict[str, np.ndarray] = {
        _torch_name(name): arr.astype(np.float32)
        for name, arr in inits.items()
        if arr.dtype == np.float32 and _torch_name(name).startswith(("bert.", "classifier."))
    }
    for name, arr in inits.items():  # quantised embeddings (``Gather`` → ``DequantizeLinear``)
        base = name.removesuffix("_quantized")
        if base != name and _torch_name(base).startswith("bert.embeddings."):
            state[_torch_name(base)] = _dequantize(
                arr, inits[f"{base}_scale"], inits.get(f"{base}_zero_point")
            )

    def bias_after(output: str, depth: int = 0) -> str | None:
        """Name of the ``*.bias`` initializer added to ``output`` (through Cast/Mul chains)."""
        for node in consumers.get(output, []):
            if node.op_type == "Add":
                for name in node.input:
                    if name in inits and name.endswith(".bias"):
                        return str(name)
            if node.op_type in ("Cast", "Mul") and depth < 4:
                found = bias_after(node.output[0], depth + 1)
                if found:
                    return found
        return None

    for node in model.graph.node:
        if node.op_type == "MatMulInteger":
            qname = node.input[1]
            if qname not in inits:
                continue
            base = qname.removesuffix("_quantized")
            weight = _dequantize(
                inits[qname], inits[f"{base}_scale"], inits.get(f"{base}_zero_point")
            )
        elif node.op_type == "MatMul" and node.input[1] in inits:
            weight = inits[node.input[1]].astype(np.float32)
        else:
            continue
        bias = bias_after(node.output[0])
        if bias is None:
            raise ModelLoadError(f"{onnx_file}: no bias Add after matmul {node.name}")
        state[_torch_name(bias).removesuffix(".bias") + ".weight"] = np.ascontiguousarray(weight.T)
    for node in model.graph.node:  # Gemm (pooler, classifier): weight kept as [out, in] or not
        if node.op_type == "Gemm" and node.input[1] in inits:
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            weight = inits[node.input[1]].astype(np.float32)
            name = node.input[1]
            if not name.endswith(".weight") and len(node.input) > 2:
                name = node.input[2].removesuffix(".bias") + ".weight"
            state[_torch_name(name)] = weight if trans_b else np.ascontiguousarray(weight.T)
    return state


def _torch_name(name: str) -> str:
    """Initializer name → state-dict key (the export wraps the model as ``inner``)."""
    return name.removeprefix("inner.")


def _dequantize(q: np.ndarray, scale: np.ndarray, zero: np.ndarray | None) -> np.ndarray:
    zero_f = np.zeros((), np.float32) if zero is None else zero.astype(np.float32)
    return ((q.astype(np.float32) - zero_f) * scale.astype(np.float32)).astype(np.float32)


def base_word_embeddings(base_dir: str | Path) -> np.ndarray | None:
    """The word-embedding matrix of a transformers folder's safetensors (any key prefix)."""
    files = sorted(Path(base_dir).glob("*.safetensors"))
    if not files:
        return None
    from safetensors.numpy import load_file

    for key, value in load_file(str(files[0])).items():
        if key.endswith("embeddings.word_embeddings.weight"):
            return value.astype(np.float32)
    return None


def restore_frozen_embeddings(state: dict[str, np.ndarray], exact: np.ndarray | None) -> bool:
    """Swap the dequantised word embeddings for the base model's exact fp32 matrix when they
    are its int8 rounding (training kept them frozen), so no precision is lost; True if so."""
    key = "bert.embeddings.word_embeddings.weight"
    if exact is None or key not in state or exact.shape != state[key].shape:
        return False
    got = state[key]
    step = float(got.max() - got.min()) / 255
    if float(np.abs(exact - got).max()) <= 0.51 * step + 1e-6:  # within half a rounding step
        state[key] = exact.astype(np.float32)
        return True
    return False


def rebuild_from_onnx(
    model_dir: str | Path, out_dir: str | Path, base_dir: str | Path | None = None
) -> Path:
    """Write a transformers model folder (fp32 safetensors + tokenizer) rebuilt from an export.

    ``model_dir`` holds ``model.onnx`` and the exported ``config.json``; the tokenizer is the
    MiniLM one the export was made with (``tokenizer.json`` of the folder). ``base_dir``: the
    weights training started from, whose frozen word embeddings are restored exactly.
    """
    try:
        import torch
        from transformers import (
            AutoConfig,
            AutoModelForSequenceClassification,
            PreTrainedTokenizerFast,
        )
    except ImportError as exc:  # pragma: no cover - depends on install
        raise MissingDependencyError("torch", "train") from exc
    src, out = Path(model_dir), Path(out_dir)
    if not (src / "model.onnx").exists() or not (src / "config.json").exists():
        raise ModelLoadError(f"{src} is not an exported verifier (model.onnx, config.json)")
    config_data = json.loads((src / "config.json").read_text(encoding="utf-8"))
    config_data.pop("guardrail_export", None)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config_data, indent=2), encoding="utf-8")
    config = AutoConfig.from_pretrained(str(out))
    model = AutoModelForSequenceClassification.from_config(config)  # type: ignore[no-untyped-call]
    arrays = onnx_state_dict(src / "model.onnx")
    if base_dir is not None and restore_frozen_embeddings(arrays, base_word_embeddings(base_dir)):
        logger.info("word embeddings restored exactly from %s", base_dir)
    expected = model.state_dict()
    missing = [k for k in expected if k not in arrays and not k.endswith("position_ids")]
    if missing:
        raise ModelLoadError(f"{src}: could not recover {len(missing)} tensors, e.g. {missing[:3]}")
    loaded = {}
    for key, tensor in expected.items():
        if key not in arrays:
            continue
        value = torch.from_numpy(arrays[key])
        if tuple(value.shape) != tuple(tensor.shape):
            raise ModelLoadError(
                f"{src}: {key} has shape {tuple(value.shape)}, expected {tuple(tensor.shape)}"
            )
        loaded[key] = value
    model.load_state_dict(loaded, strict=False)
    model.save_pretrained(str(out))
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_file=str(src / "tokenizer.json"),
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        model_max_length=int(config_data.get("max_position_embeddings", 512)),
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
    tokenizer.backend_tokenizer.no_truncation()
    tokenizer.backend_tokenizer.no_padding()
    tokenizer.save_pretrained(str(out))
    (out / "parent.json").write_text(json.dumps(lineage_of(src), indent=2), encoding="utf-8")
    logger.info("rebuilt %d tensors from %s into %s", len(loaded), src / "model.onnx", out)
    return out


def agreement(
    torch_dir: str | Path, onnx_dir: str | Path, pairs: list[tuple[str, str]], max_tokens: int
) -> dict[str, float]:
    """Label agreement and probability differences of the rebuilt torch model vs the ONNX one."""
    from guardrail.verifiers.hf_backend import HFVerifier
    from guardrail.verifiers.onnx_backend import OnnxVerifier

    a = OnnxVerifier(onnx_dir, max_tokens=max_tokens).predict(pairs)
    b = HFVerifier(str(torch_dir), max_tokens=max_tokens).predict(pairs)
    pa = np.array([[p.entailment, p.neutral, p.contradiction] for p in a])
    pb = np.array([[p.entailment, p.neutral, p.contradiction] for p in b])
    diff = np.abs(pa - pb)
    return {
        "pairs": float(len(pairs)),
        "label_agreement": float((pa.argmax(1) == pb.argmax(1)).mean()),
        "mean_abs_diff": float(diff.mean()),
        "max_abs_diff": float(diff.max()),
    }
