"""Exported fact-checker presets on ONNX Runtime (no torch): the runtime side of
:mod:`guardrail.verifiers.preset_export`.

A folder written by ``guardrail export-verifier --preset`` holds ``model.onnx``,
``tokenizer.json``, ``config.json`` and ``preset.json`` (the preset's name).
``load_verifier(DIR)`` (or ``{"preset": NAME, "path": DIR}``) gives :class:`OnnxPresetVerifier`
(:class:`OnnxSpanVerifier` for LettuceDetect, whose graph returns every token's 2 logits): the
same formatting, chunking and aggregation as the torch backend. This module never imports the
export tool (torch, ``onnx``); the export tool imports it.

Example::

    load_verifier("./models/hhem-onnx").predict([("It rained.", "The ground is wet.")])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import MissingDependencyError, ModelLoadError
from guardrail.verifiers.labels import softmax
from guardrail.verifiers.preset_backends import PresetVerifier
from guardrail.verifiers.presets import VerifierPreset
from guardrail.verifiers.span_backend import SpanPresetVerifier

PRESET_FILE = "preset.json"
"""The file naming the preset of an exported folder."""


def exported_preset(folder: Path) -> str | None:
    """The preset name of an exported folder (``preset.json`` beside ``model.onnx``)."""
    marker = folder / PRESET_FILE
    if not (marker.is_file() and (folder / "model.onnx").is_file()):
        return None
    try:
        name = json.loads(marker.read_text(encoding="utf-8")).get("preset")
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"could not read {marker}: {exc}") from exc
    return str(name) if name else None


class OnnxPresetVerifier(PresetVerifier):
    """An exported preset on ONNX Runtime (no torch): formats, chunks and aggregates as the
    torch backend; the graph returns the 2 logits whose index 1 is "supported"."""

    tensors = "np"

    def __init__(self, preset: VerifierPreset, source: str | Path, **options: Any) -> None:
        super().__init__(preset, source, **options)
        # One input per forward pass: an int8 export quantises its activations with one scale
        # over the whole batch, so batched scores would depend on the inputs beside them (and a
        # cached score on what an earlier request held).
        self.batch_size = 1

    def _prepare(self) -> None:
        try:
            import onnxruntime  # noqa: F401
            from transformers import PreTrainedTokenizerFast  # noqa: F401
        except ImportError as exc:  # pragma: no cover - core dependencies
            raise MissingDependencyError("onnxruntime") from exc

    def _load_tokenizer(self) -> Any:
        from transformers import PreTrainedTokenizerFast

        return PreTrainedTokenizerFast.from_pretrained(self.source)

    def _load_model(self) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(0, self.threads)
        return ort.InferenceSession(
            str(Path(self.source) / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def support(self, texts: list[str]) -> np.ndarray:
        feed = self.encode(texts)
        logits = self.model.run(
            ["logits"],
            {
                "input_ids": np.asarray(feed["input_ids"], dtype=np.int64),
                "attention_mask": np.asarray(feed["attention_mask"], dtype=np.int64),
            },
        )[0]
        return softmax(np.asarray(logits, dtype=np.float64))[:, 1]


class OnnxSpanVerifier(OnnxPresetVerifier, SpanPresetVerifier):
    """An exported LettuceDetect-style token classifier on ONNX Runtime."""

    def token_logits(self, enc: Any) -> np.ndarray:
        feed = {
            "input_ids": np.asarray(enc["input_ids"], dtype=np.int64),
            "attention_mask": np.asarray(enc["attention_mask"], dtype=np.int64),
        }
        result: np.ndarray = np.asarray(self.model.run(["logits"], feed)[0], dtype=np.float64)
        return result
