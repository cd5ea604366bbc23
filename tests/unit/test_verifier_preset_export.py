"""Presets export to ONNX and score the same on ONNX Runtime (tiny random models, no hub)."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.errors import ConfigError
from guardrail.verifiers import load_verifier
from guardrail.verifiers.preset_export import OnnxPresetVerifier, export_preset
from tests import tiny_presets as tiny

pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")

PAIRS = [
    ("Paris is the capital of France. The river flooded the valley.", "Paris is the capital."),
    ("Short.", "A much longer claim than the document it is checked against, by far."),
    (" ".join(["The museum opened in 1998 in the old customs house."] * 60), "It opened."),
]

BUILDERS = {
    "minicheck-deberta-l": lambda p: tiny.build_classifier(p, "deberta"),
    "minicheck-flan-t5-l": tiny.build_t5_seq2seq,
    "hhem-2.1-open": tiny.build_hhem,
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_export_matches_torch(name: str, tmp_path: Path) -> None:
    src = BUILDERS[name](tmp_path / "src")
    summary = export_preset(name, src, tmp_path / "onnx", weights="fp32")
    assert summary["torch_vs_onnx_max_abs_diff"] < 1e-4
    onnx = load_verifier(str(tmp_path / "onnx"))
    assert isinstance(onnx, OnnxPresetVerifier) and onnx.name == name
    ref = load_verifier({"preset": name, "path": str(src)}).predict(PAIRS)
    got = onnx.predict(PAIRS)
    for a, b in zip(ref, got, strict=True):
        assert b.entailment == pytest.approx(a.entailment, abs=1e-4)


def test_span_presets_are_not_exported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        export_preset("tinylettuce-17m", tmp_path, tmp_path / "out")
