"""Export a fact-checker preset to ONNX (the tool: torch, ``onnx``; the CLI and scripts use it).

``export_preset("minicheck-deberta-l", MODEL_DIR, OUT)`` writes ``model.onnx`` (one graph per
architecture: the 2-label classifier's logits; HHEM's first-position logits; MiniCheck-T5's
encoder plus one decoder step reduced to the logits of ids 3 and 209), ``tokenizer.json``,
``config.json`` and ``preset.json`` (the preset's name), and checks the graph against torch.
Weights are stored as :func:`guardrail.verifiers.export.export_onnx` stores them (``fp32``,
``fp16``, ``int8``, ``int8-channel``). ``load_verifier(OUT)`` (or ``{"preset": NAME, "path":
OUT}``) then gives :class:`~guardrail.verifiers.preset_onnx.OnnxPresetVerifier` (runtime code,
in its own module: nothing at run time imports this one).

Example::

    export_preset("hhem-2.1-open", "./models/hhem", "./models/hhem-onnx", weights="int8")
    load_verifier("./models/hhem-onnx").predict([("It rained.", "The ground is wet.")])
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import ConfigError, MissingDependencyError, VerifierError
from guardrail.verifiers import formats
from guardrail.verifiers.export import (
    OPSET,
    WEIGHT_STORAGE,
    _fp16_weights,
    _quantize,
    portable_path,
)
from guardrail.verifiers.labels import softmax
from guardrail.verifiers.loader import build_preset
from guardrail.verifiers.preset_backends import PresetVerifier
from guardrail.verifiers.preset_onnx import PRESET_FILE
from guardrail.verifiers.presets import get_preset

logger = logging.getLogger(__name__)

EXPORTABLE = ("classifier", "hhem", "seq2seq", "span")


def _wrapped(torch: Any, kind: str, model: Any) -> Any:
    """A module mapping (input_ids, attention_mask) to the 2 logits the preset reads."""

    class Head(torch.nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            if kind == "seq2seq":
                start = torch.zeros_like(input_ids[:, :1])
                out = self.model(
                    input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=start
                ).logits[:, 0, :]
                return out[:, list(formats.MINICHECK_T5_LABEL_IDS)]
            logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
            return logits[:, 0, :] if kind == "hhem" else logits

    return Head().eval()


def export_preset(
    name: str, model_dir: str | Path, out_dir: str | Path, *, weights: str = "fp32"
) -> dict[str, Any]:
    """Export preset ``name``'s model in ``model_dir`` to ``out_dir``; a summary dict."""
    preset = get_preset(name)
    if preset is None or preset.kind not in EXPORTABLE:
        raise ConfigError(f"preset {name!r} cannot be exported (exportable kinds: {EXPORTABLE})")
    if weights not in WEIGHT_STORAGE:
        raise ConfigError(f"weights must be one of {WEIGHT_STORAGE}, not {weights!r}")
    try:
        import torch
    except ImportError as exc:
        raise MissingDependencyError("torch", "train") from exc
    src, out = Path(model_dir), Path(out_dir)
    torch_verifier = build_preset(name, str(src), {})
    assert isinstance(torch_verifier, PresetVerifier)
    head = _wrapped(torch, preset.kind, torch_verifier.model)
    if preset.kind == "span":
        enc = dict(
            torch_verifier.tokenizer(
                ["passage 1: The cat sat on the mat while it rained.", "passage 1: Short."],
                ["It rained.", "A longer claim than its document, by far."],
                padding=True,
                return_tensors="pt",
            )
        )
    else:
        texts = [
            torch_verifier.format("The cat sat on the mat while it rained.", "It rained."),
            torch_verifier.format("Short.", "A longer claim than its document, by far."),
        ]
        enc = torch_verifier.encode(texts)
    out.mkdir(parents=True, exist_ok=True)
    axes = {0: "batch", 1: "sequence"}
    with tempfile.TemporaryDirectory(prefix="guardrail-preset-export-") as tmp:
        fp32 = Path(tmp) / "model.fp32.onnx"
        with torch.no_grad():
            torch.onnx.export(
                head,
                (enc["input_ids"], enc["attention_mask"]),
                str(fp32),
                input_names=["input_ids", "attention_mask"],
                output_names=["logits"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "logits": axes if preset.kind == "span" else {0: "batch"},
                },
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
            ref = head(enc["input_ids"], enc["attention_mask"]).numpy()
        got = _run(fp32, enc["input_ids"].numpy(), enc["attention_mask"].numpy())
        mask = enc["attention_mask"].numpy().astype(bool)
        ref, got = (ref[mask], got[mask]) if preset.kind == "span" else (ref, got)
        diff = float(np.abs(softmax(ref) - softmax(got)).max())
        if diff > 1e-3:
            raise VerifierError(f"ONNX export of {name} differs from torch by {diff:.2e}")
        final = out / "model.onnx"
        if weights == "fp32":
            shutil.copyfile(fp32, final)
        elif weights == "fp16":
            _fp16_weights(fp32, final)
        else:
            _quantize(fp32, final, per_channel=weights == "int8-channel")
    torch_verifier.tokenizer.save_pretrained(str(out))
    config = json.loads((src / "config.json").read_text(encoding="utf-8"))
    config["guardrail_export"] = {
        "opset": OPSET,
        "weights": weights,
        "source": portable_path(src.resolve()),
    }
    (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    (out / PRESET_FILE).write_text(json.dumps({"preset": name}) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file()) / 2**20
    logger.info("exported preset %s → %s (%.1f MB)", name, out, size)
    return {
        "preset": name,
        "out_dir": str(out),
        "weights": weights,
        "size_mb": round(size, 2),
        "torch_vs_onnx_max_abs_diff": diff,
    }


def _run(path: Path, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    result: np.ndarray = session.run(["logits"], {"input_ids": ids, "attention_mask": mask})[0]
    return result
