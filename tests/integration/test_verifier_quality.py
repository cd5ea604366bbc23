"""Quality of the trained verifier: the conformance suite with the quality asserts switched on.

Runs on the bundled model (``guardrail/verifiers/bundled``) and, when the environment variable
``GUARDRAIL_TEST_VERIFIER_DIR`` names one, on any other trained model folder (ONNX export or
transformers checkpoint, e.g. ``runs/verifier-v1/model``). Skips with the reason when absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from guardrail.verifiers import Verifier, bundled_dir, load_verifier
from tests.verifier_conformance import VerifierConformance

pytestmark = pytest.mark.integration

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def _bundled() -> Path:
    path = bundled_dir()
    if not (path / "model.onnx").exists():
        pytest.skip(f"no bundled verifier yet ({path} has no model.onnx)")
    return path


def _other() -> Path:
    value = os.environ.get("GUARDRAIL_TEST_VERIFIER_DIR")
    if not value or not Path(value).is_dir():
        pytest.skip("set GUARDRAIL_TEST_VERIFIER_DIR to a trained verifier folder")
    return Path(value)


class TestBundledVerifier(VerifierConformance):
    real_model = True
    batch_tolerance = (
        0.08  # dynamic int8 quantises activations per batch: scores move a little with batch mates
    )

    @pytest.fixture
    def verifier(self) -> Verifier:
        return load_verifier(str(_bundled()))


class TestTrainedVerifierDir(VerifierConformance):
    real_model = True
    batch_tolerance = 0.03

    @pytest.fixture
    def verifier(self) -> Verifier:
        return load_verifier(str(_other()))


def test_default_is_the_bundled_model() -> None:
    path = _bundled()
    verifier = load_verifier()
    assert verifier is load_verifier(None)
    assert (verifier.max_tokens > 0 and str(path) in verifier.name) or verifier.name
    size = sum(p.stat().st_size for p in path.iterdir() if p.is_file()) / 2**20
    assert size <= 40, f"bundled model is {size:.1f} MB (budget 40 MB)"


def test_benchmark_runs(tmp_path: Path) -> None:
    import json
    import sys

    if not (SHARED / "data" / "nli-eval").exists():
        pytest.skip(f"shared evaluation data not found at {SHARED / 'data'}")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import verifier as bench  # type: ignore[import-not-found]

    model = os.environ.get("GUARDRAIL_TEST_VERIFIER_DIR") or str(_bundled())
    if not (Path(model) / "model.onnx").exists():
        pytest.skip("the benchmark's throughput part needs an ONNX folder")
    out = tmp_path / "bench.json"
    assert bench.main(["--model", model, "--limit", "12", "--repeats", "2", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    assert set(results["accuracy"]) == {
        "snli_test",
        "anli_test",
        "anli_dev",
        "halueval_qa",
        "wice",
        "factcheck_gpt",
        "summedits",
        "frank_xsum",
        "qags",
        "xsumfaith",
        "dialfact",
        "faithdial",
    }
    fixed = results["fixed_threshold"]
    assert 0 < fixed["value"] < 1 and set(fixed["chosen_on_dev_splits"]) == set(bench.DEV_SPLITS)
    for name in bench.DEV_SPLITS:  # both threshold columns and AUROC, on the test part
        row = results["accuracy"][name]
        assert {"balanced_accuracy_fixed", "balanced_accuracy_tuned", "auroc"} <= set(row)
        assert 0 <= row["balanced_accuracy_fixed"] <= 100
    assert results["ship_score"] is not None
    assert results["throughput"]["onnx"]["pairs_per_second"] > 0
