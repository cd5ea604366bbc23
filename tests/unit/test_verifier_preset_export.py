"""Presets export to ONNX and score the same on ONNX Runtime (tiny random models, no hub)."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.errors import ConfigError
from guardrail.verifiers import load_verifier
from guardrail.verifiers.preset_export import export_preset
from guardrail.verifiers.preset_onnx import OnnxPresetVerifier
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


def test_span_preset_export_matches_torch(tmp_path: Path) -> None:
    from guardrail.verifiers.preset_onnx import OnnxSpanVerifier

    src = tiny.build_token_classifier(tmp_path / "src")
    summary = export_preset("tinylettuce-17m", src, tmp_path / "onnx", weights="fp32")
    assert summary["torch_vs_onnx_max_abs_diff"] < 1e-4
    onnx = load_verifier(str(tmp_path / "onnx"))
    assert isinstance(onnx, OnnxSpanVerifier)
    torch_v = load_verifier({"preset": "tinylettuce-17m", "path": str(src)})
    for a, b in zip(torch_v.predict(PAIRS), onnx.predict(PAIRS), strict=True):
        assert b.entailment == pytest.approx(a.entailment, abs=1e-4)
    answer = "Paris is the capital. It has 90 million people."
    assert onnx.spans([PAIRS[0][0]], answer) == torch_v.spans([PAIRS[0][0]], answer)


def test_unknown_presets_and_weights_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        export_preset("bundled", tmp_path, tmp_path / "out")
    with pytest.raises(ConfigError):
        export_preset("hhem-2.1-open", tmp_path, tmp_path / "out", weights="int4")
