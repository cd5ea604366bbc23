"""Export a trained cross-encoder to a small, fast ONNX folder (dynamic int8 quantisation).

``export_onnx(model_dir, out_dir)`` writes ``model.onnx``, ``tokenizer.json``, ``config.json``
(with ``id2label`` and ``max_length``) and ``MODEL_CARD.md``, then checks the result: the fp32
graph against torch, and int8 against fp32 on the given pairs. The folder loads with
:class:`~guardrail.verifiers.onnx_backend.OnnxVerifier` (or ``load_verifier(out_dir)``).

Example::

    result = export_onnx("runs/verifier-v1/model", "/tmp/verifier-onnx", check_pairs=pairs)
    result.int8_agreement, result.size_mb
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from guardrail.errors import MissingDependencyError, ModelLoadError, VerifierError
from guardrail.onnx_common import output_only
from guardrail.verifiers.base import Pair

logger = logging.getLogger(__name__)

SIZE_LIMIT_MB = 40.0
OPSET = 17
SHIPPED_FILES = ("model.onnx", "tokenizer.json", "config.json", "MODEL_CARD.md")
WEIGHT_STORAGE = ("int8", "int8-channel", "fp16", "fp32")
"""How :func:`export_onnx` stores the weights (see its ``weights`` argument)."""
QUANTIZATION_NAMES = {
    "int8": "dynamic-int8",
    "int8-channel": "dynamic-int8-per-channel",
    "fp16": "fp16-weights-int8-embeddings",
    "fp32": "none",
}
FP16_SUFFIX = "__fp16"
"""Suffix of an fp16-stored initializer; a ``Cast`` node gives the fp32 tensor its name back."""


class ExportResult(BaseModel):
    """What an export produced and how closely it matches the original model."""

    out_dir: str
    quantized: bool
    weights: str = "int8"
    """How the weights are stored (see :data:`WEIGHT_STORAGE`)."""
    size_mb: float
    """Total size of the folder."""
    max_length: int
    torch_vs_onnx_max_abs_diff: float
    """Largest probability difference between torch and the fp32 ONNX graph (export check)."""
    int8_agreement: float | None = None
    """Share of ``check_pairs`` where the stored model (int8 or fp16) and fp32 pick the same
    label."""
    int8_max_abs_diff: float | None = None
    int8_mean_abs_diff: float | None = None
    checked_pairs: int = 0

    @property
    def within_size_limit(self) -> bool:
        return self.size_mb <= SIZE_LIMIT_MB


def portable_path(path: object) -> str:
    """A path as it may ship: the data set's own name from ``data/`` on (``data/nli-train/
    pairs.jsonl.gz``), else the last three parts — never the build machine's absolute path."""
    parts = Path(str(path)).parts
    if "data" in parts:
        return "/".join(parts[len(parts) - 1 - parts[::-1].index("data") :])
    return "/".join(parts[-3:]) if Path(str(path)).is_absolute() else str(path)


def export_onnx(
    model_dir: str | Path,
    out_dir: str | Path,
    *,
    quantize: bool = True,
    max_length: int | None = None,
    check_pairs: Sequence[Pair] = (),
    card: str | None = None,
    weights: str | None = None,
) -> ExportResult:
    """Export ``model_dir`` (a transformers sequence-classification model) to ``out_dir``.

    Args:
        quantize: ``False`` = fp32 weights (same as ``weights="fp32"``).
        weights: how the weights are stored (default ``int8``, or ``fp32`` when not ``quantize``):

            - ``int8`` — dynamic int8, one scale per tensor (weights int8, activations
              quantised on the fly); the smallest and, on CPUs with VNNI, the fastest;
            - ``int8-channel`` — dynamic int8 with one scale per output channel: the same
              size, closer to fp32;
            - ``fp16`` — word embeddings int8, every other weight fp16, computed in fp32
              (ONNX Runtime folds the casts at load): the closest to fp32 of the small forms,
              as fast as int8 on CPUs without VNNI;
            - ``fp32`` — as trained (the largest: over the size budget).
        max_length: the pair length to record (default: what the training run used, else 512).
        check_pairs: pairs to compare int8 against fp32 on (a few hundred is plenty).
        card: model card markdown; default a short card naming the source model.
    """
    try:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    except ImportError as exc:
        raise MissingDependencyError("torch", "train") from exc
    storage = weights or ("int8" if quantize else "fp32")
    if storage not in WEIGHT_STORAGE:
        raise ValueError(f"weights must be one of {WEIGHT_STORAGE}, not {storage!r}")
    quantize = storage != "fp32"
    src, out = Path(model_dir), Path(out_dir)
    if not (src / "config.json").exists():
        raise ModelLoadError(f"{src} is not a transformers model directory (no config.json)")
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(src))
    model = AutoModelForSequenceClassification.from_pretrained(str(src)).eval()
    if max_length is None:
        from guardrail.verifiers.hf_backend import _trained_length

        max_length = _trained_length(src) or 512

    with tempfile.TemporaryDirectory(prefix="guardrail-export-") as tmp:
        fp32 = Path(tmp) / "model.fp32.onnx"
        _torch_export(torch, model, tokenizer, fp32)
        tokenizer.save_pretrained(tmp)
        torch_diff = _torch_vs_onnx(torch, model, tokenizer, fp32)
        if torch_diff > 1e-3:
            raise VerifierError(f"ONNX export differs from torch by {torch_diff:.2e}")
        final = out / "model.onnx"
        if storage == "int8":
            _quantize(fp32, final)
        elif storage == "int8-channel":
            _quantize(fp32, final, per_channel=True)
        elif storage == "fp16":
            _fp16_weights(fp32, final)
        else:
            shutil.copyfile(fp32, final)
        shutil.copyfile(Path(tmp) / "tokenizer.json", out / "tokenizer.json")
        config = json.loads((src / "config.json").read_text(encoding="utf-8"))
        config["max_length"] = int(max_length)
        config["guardrail_export"] = {
            "opset": OPSET,
            "quantization": QUANTIZATION_NAMES[storage],
            "source": portable_path(src.resolve()),
        }
        (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        result = ExportResult(
            out_dir=str(out),
            quantized=quantize,
            weights=storage,
            size_mb=0.0,
            max_length=int(max_length),
            torch_vs_onnx_max_abs_diff=torch_diff,
        )
        if quantize and check_pairs:
            result = result.model_copy(update=_agreement(fp32, out, check_pairs))
    (out / "MODEL_CARD.md").write_text(card or _default_card(src, result), encoding="utf-8")
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file()) / 2**20
    result = result.model_copy(update={"size_mb": round(size, 2)})
    if not result.within_size_limit:
        logger.warning("export is %.1f MB, over the %.0f MB budget", size, SIZE_LIMIT_MB)
    logger.info("exported %s → %s (%.1f MB)", src, out, size)
    return result


def _torch_export(torch: Any, model: Any, tokenizer: Any, path: Path) -> None:
    """TorchScript-based exporter (``dynamo=False``: no onnxscript needed), dynamic axes."""

    enc = tokenizer(
        ["A dog runs in the park.", "Two people talk."],
        ["An animal is outside.", "Nobody speaks at all today."],
        padding=True,
        return_tensors="pt",
    )
    token_types = enc.get("token_type_ids", torch.zeros_like(enc["input_ids"]))
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad():  # not inference_mode: the tracer needs normal tensors
        torch.onnx.export(
            output_only(torch, model, "logits"),
            (enc["input_ids"], enc["attention_mask"], token_types),
            str(path),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["logits"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "logits": {0: "batch"},
            },
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )


def _torch_vs_onnx(torch: Any, model: Any, tokenizer: Any, path: Path) -> float:
    import onnxruntime as ort

    from guardrail.verifiers.labels import softmax

    enc = tokenizer(
        ["The cat sat on the mat while it rained outside for hours.", "Short one."],
        ["It was raining.", "A much longer hypothesis than the premise it goes with."],
        padding=True,
        return_tensors="pt",
    )
    token_types = enc.get("token_type_ids", torch.zeros_like(enc["input_ids"]))
    model.eval()
    with torch.inference_mode():
        ref = model(**enc).logits.numpy()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed = {
        "input_ids": enc["input_ids"].numpy(),
        "attention_mask": enc["attention_mask"].numpy(),
        "token_type_ids": token_types.numpy(),
    }
    got = session.run(["logits"], feed)[0]
    return float(np.abs(softmax(ref) - softmax(got)).max())


def _quantize(fp32: Path, int8: Path, per_channel: bool = False) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=per_channel)


def _fp16_weights(fp32: Path, out: Path, min_elements: int = 1024) -> None:
    """Embedding tables int8 (``Gather``), other float weights stored fp16 behind a ``Cast``."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise MissingDependencyError("onnx", "train") from exc
    with tempfile.TemporaryDirectory(prefix="guardrail-fp16-") as tmp:
        gathered = Path(tmp) / "gather-int8.onnx"
        quantize_dynamic(
            str(fp32), str(gathered), weight_type=QuantType.QInt8, op_types_to_quantize=["Gather"]
        )
        model = onnx.load(str(gathered))
    graph = model.graph
    casts = []
    for init in list(graph.initializer):
        if init.data_type != TensorProto.FLOAT or int(np.prod(init.dims)) < min_elements:
            continue
        half = numpy_helper.from_array(
            numpy_helper.to_array(init).astype(np.float16), init.name + FP16_SUFFIX
        )
        casts.append(
            helper.make_node(
                "Cast", [half.name], [init.name], to=TensorProto.FLOAT, name=half.name + "_cast"
            )
        )
        graph.initializer.remove(init)
        graph.initializer.append(half)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))


def _agreement(fp32: Path, out: Path, pairs: Sequence[Pair]) -> dict[str, Any]:
    """Compare the int8 folder with the fp32 graph on ``pairs``."""
    from guardrail.verifiers.onnx_backend import OnnxVerifier

    int8_v = OnnxVerifier(out)
    with tempfile.TemporaryDirectory(prefix="guardrail-fp32-") as tmp:
        for name in ("tokenizer.json", "config.json"):
            shutil.copyfile(out / name, Path(tmp) / name)
        shutil.copyfile(fp32, Path(tmp) / "model.onnx")
        fp32_v = OnnxVerifier(tmp)
        a = _as_array(fp32_v.predict(list(pairs)))
    b = _as_array(int8_v.predict(list(pairs)))
    diff = np.abs(a - b)
    return {
        "int8_agreement": float((a.argmax(1) == b.argmax(1)).mean()),
        "int8_max_abs_diff": float(diff.max()),
        "int8_mean_abs_diff": float(diff.mean()),
        "checked_pairs": len(pairs),
    }


def _as_array(preds: Sequence[Any]) -> np.ndarray:
    return np.array([[p.entailment, p.neutral, p.contradiction] for p in preds])


def _default_card(src: Path, result: ExportResult) -> str:
    lines = [
        "# guardrail NLI verifier (ONNX export)",
        "",
        f"- Source model: `{src}`",
        f"- Weights: {QUANTIZATION_NAMES.get(result.weights, result.weights)} (onnxruntime)",
        f"- Pair length: {result.max_length} tokens (premise truncated first)",
        f"- torch vs ONNX fp32, max probability difference: {result.torch_vs_onnx_max_abs_diff:.2e}",
    ]
    if result.int8_agreement is not None:
        lines.append(
            f"- {result.weights} vs fp32 label agreement on {result.checked_pairs} pairs: "
            f"{100 * result.int8_agreement:.1f} % (max prob. diff {result.int8_max_abs_diff:.3f})"
        )
    return "\n".join(lines) + "\n"
