"""The ONNX backend passes the verifier conformance tests on an int8 export of a tiny BERT.

The tiny model is random (mechanics only); the export path is the real one
(torch.onnx.export → onnxruntime dynamic int8 quantisation).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from guardrail.errors import ModelLoadError
from guardrail.verifiers import Verifier, load_verifier
from guardrail.verifiers.export import export_onnx
from guardrail.verifiers.hf_backend import HFVerifier
from guardrail.verifiers.onnx_backend import OnnxVerifier
from tests.verifier_conformance import (
    PAIRS,
    VerifierConformance,
    assert_close,
    build_tiny_model,
    permute_tiny_model,
)

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def int8_dir(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-int8")
    export_onnx(tiny_dir, out, max_length=64, check_pairs=PAIRS)
    return out


@pytest.fixture(scope="module")
def fp32_dir(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-fp32")
    export_onnx(tiny_dir, out, quantize=False, max_length=64)
    return out


@pytest.fixture(scope="module")
def permuted_int8_dir(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    perm = permute_tiny_model(tiny_dir, tmp_path_factory.mktemp("perm"), [1, 2, 0])
    out = tmp_path_factory.mktemp("perm-int8")
    export_onnx(perm, out, quantize=False, max_length=64)
    return out


class TestOnnxConformance(VerifierConformance):
    batch_tolerance = 0.0  # every pair runs alone: a batch gives each pair's own scores exactly

    @pytest.fixture
    def verifier(self, int8_dir: Path) -> Verifier:
        return OnnxVerifier(int8_dir, threads=2)

    @pytest.fixture
    def permuted_pair(self, fp32_dir: Path, permuted_int8_dir: Path) -> tuple[Verifier, Verifier]:
        return OnnxVerifier(fp32_dir), OnnxVerifier(permuted_int8_dir)


class TestOnnxFp32Conformance(VerifierConformance):
    batch_tolerance = 0.0

    @pytest.fixture
    def verifier(self, fp32_dir: Path) -> Verifier:
        return OnnxVerifier(fp32_dir, batch_size=2)


def test_export_folder_contents(int8_dir: Path) -> None:
    names = {p.name for p in int8_dir.iterdir()}
    assert {"model.onnx", "tokenizer.json", "config.json", "MODEL_CARD.md"} <= names
    config = json.loads((int8_dir / "config.json").read_text())
    assert config["max_length"] == 64
    assert config["id2label"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}
    assert "int8" in (int8_dir / "MODEL_CARD.md").read_text()


def test_onnx_fp32_matches_torch(tiny_dir: Path, fp32_dir: Path) -> None:
    assert_close(
        OnnxVerifier(fp32_dir).predict(PAIRS),
        HFVerifier(tiny_dir, max_tokens=64).predict(PAIRS),
        1e-4,
    )


def test_int8_close_to_fp32(tiny_dir: Path, tmp_path: Path) -> None:
    result = export_onnx(tiny_dir, tmp_path / "x", max_length=64, check_pairs=PAIRS)
    assert result.quantized and result.checked_pairs == len(PAIRS)
    assert result.torch_vs_onnx_max_abs_diff < 1e-4
    assert result.int8_max_abs_diff is not None and result.int8_max_abs_diff < 0.1
    assert result.int8_agreement is not None and result.int8_agreement >= 0.8
    assert result.size_mb < (tmp_path / "x" / "model.onnx").stat().st_size / 2**20 + 1


def test_max_tokens_from_config(int8_dir: Path) -> None:
    verifier = OnnxVerifier(int8_dir)
    assert verifier.max_tokens == 64
    assert OnnxVerifier(int8_dir, max_tokens=32).max_tokens == 32


def test_no_torch_needed(int8_dir: Path) -> None:
    """The ONNX backend does not import torch (checked in a fresh interpreter)."""
    import subprocess

    code = (
        "import sys; from guardrail.verifiers.onnx_backend import OnnxVerifier; "
        f"v = OnnxVerifier({str(int8_dir)!r}); v.predict([('a b', 'c')]); "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_load_verifier_routes_onnx_dirs(int8_dir: Path) -> None:
    assert isinstance(load_verifier(int8_dir), OnnxVerifier)


def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError):
        OnnxVerifier(tmp_path)
    with pytest.raises(ModelLoadError):
        load_verifier(str(tmp_path))


def test_session_settings_do_not_change_outputs(int8_dir: Path) -> None:
    """Spinning on/off and thread counts are speed settings only: same probabilities."""
    pairs = [
        ("A man is sleeping in a bed.", "A man is awake."),
        ("Two dogs run across a wide field of grass.", "Animals are outside."),
        ("The river has three bridges.", "The river has five bridges."),
    ]
    reference = OnnxVerifier(int8_dir, threads=1, spin=True).predict(pairs)
    for verifier in (OnnxVerifier(int8_dir, threads=2), OnnxVerifier(int8_dir, threads=1)):
        for a, b in zip(reference, verifier.predict(pairs), strict=True):
            assert a.label == b.label
            assert abs(a.entailment - b.entailment) < 1e-5
            assert abs(a.contradiction - b.contradiction) < 1e-5


@pytest.mark.parametrize(
    ("weights", "name", "agreement"),
    [
        ("fp16", "fp16-weights-int8-embeddings", 0.99),
        ("int8-channel", "dynamic-int8-per-channel", 0.8),
    ],
)
def test_weight_storages_stay_close_to_fp32_and_say_what_they_are(
    tiny_dir: Path, fp32_dir: Path, tmp_path: Path, weights: str, name: str, agreement: float
) -> None:
    out = tmp_path / weights
    result = export_onnx(tiny_dir, out, max_length=64, check_pairs=PAIRS, weights=weights)
    assert result.weights == weights and result.int8_agreement is not None
    assert result.int8_agreement >= agreement
    config = json.loads((out / "config.json").read_text())
    assert config["guardrail_export"]["quantization"] == name
    assert weights in (out / "MODEL_CARD.md").read_text()
    fp32 = OnnxVerifier(fp32_dir).predict(PAIRS)
    if weights == "fp16":  # computed in fp32 from fp16 weights: nearly exact
        assert_close(OnnxVerifier(out).predict(PAIRS), fp32, 0.02)
    with pytest.raises(ValueError, match="weights"):
        export_onnx(tiny_dir, tmp_path / "bad", max_length=64, weights="int4")
    assert not (tmp_path / "bad").exists()  # refused before any export work


def test_fp16_weights_rebuild_to_the_trained_weights(tiny_dir: Path, tmp_path: Path) -> None:
    """Continuing training from an fp16 export loses only fp16 rounding (int8 loses more)."""
    pytest.importorskip("onnx")
    from safetensors.numpy import load_file

    from guardrail.verifiers.training.rebuild import onnx_state_dict

    trained = {
        k.removeprefix("inner."): v
        for k, v in load_file(str(tiny_dir / "model.safetensors")).items()
    }
    errors = {}
    for weights in ("fp16", "int8"):
        export_onnx(tiny_dir, tmp_path / weights, max_length=64, weights=weights)
        state = onnx_state_dict(tmp_path / weights / "model.onnx")
        key = "bert.encoder.layer.1.output.dense.weight"
        assert state[key].shape == trained[key].shape
        errors[weights] = float(abs(state[key] - trained[key]).max())
    assert errors["fp16"] < 1e-3 < errors["int8"]


def test_a_pairs_scores_do_not_depend_on_the_other_pairs(int8_dir: Path) -> None:
    """The int8 graph quantises activations with one scale over its whole input: a pair's
    scores must come from a pass that holds it alone, whatever else the call (or an earlier,
    cached call) held, in any order, on any number of workers."""
    target = ("The river has three bridges.", "The river has five bridges.")
    others = [
        ("A man is sleeping in a bed.", "A man is awake."),
        ("Two dogs run across a wide field of grass. " * 6, "Animals are outside."),
        ("x", "y"),
    ]
    alone = OnnxVerifier(int8_dir, threads=1).predict([target])[0]
    for workers in (1, 2, 4):
        verifier = OnnxVerifier(int8_dir, threads=workers)
        for call in ([target, *others], [*others, target], [others[1], target, others[0]]):
            got = verifier.predict(call)
            assert got[call.index(target)] == alone
