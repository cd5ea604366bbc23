"""``guardrail eval / analyze / tune / calibrate`` end to end on 20 HaluEval-QA examples.

The real pipeline, embedder, SQLite cache and plotting run. The mechanics test uses the tiny
random BERT verifier (fast, always available); the quality test uses the bundled trained
verifier and skips with the reason when this build does not ship it yet.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from guardrail.cli import main

pytestmark = pytest.mark.integration

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
HALUEVAL = SHARED / "data" / "halueval"

needs_data = pytest.mark.skipif(
    not (HALUEVAL / "generation" / "qa" / "qa_one-turn_data.json").exists(),
    reason=f"HaluEval data not found at {HALUEVAL} (the shared data folder is absent)",
)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from tests.verifier_conformance import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-eval"))


def _eval(out: Path, verifier: str | None, *extra: str) -> int:
    argv = ["eval", "--dataset", "halueval-qa", "--data-dir", str(HALUEVAL), "--out", str(out),
            "--limit", "20", "--no-progress", *extra]  # fmt: skip
    if verifier:
        argv += ["--verifier", verifier]
    return main(argv)


@needs_data
def test_eval_analyze_tune_calibrate_write_their_files(
    tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    assert _eval(out, str(tiny_dir), "--conditions", "plain", "claims", "adaptive", "facts") == 0
    ds = out / "halueval-qa"
    for cond in ("plain", "claims", "adaptive"):
        rows = list(csv.DictReader((ds / cond / "predictions.csv").open()))
        assert len(rows) == 20 and {r["label"] for r in rows} == {"0", "1"}
        assert set(rows[0]) >= {"id", "label", "score", "prediction"}
        metrics = json.loads((ds / cond / "metrics.json").read_text())
        assert metrics["engine"] == "pipeline" and metrics["stage_failures"] == 0
        for key in ("balanced_accuracy", "f1", "precision", "recall", "auroc"):
            assert 0.0 <= metrics["metrics"][key] <= 1.0
        assert all(r["verdict"] in ("VERIFIED", "HALLUCINATION") for r in rows)
    facts = json.loads((ds / "facts" / "metrics.json").read_text())
    assert facts["applicable"] is False and "knowledge base" in facts["reason"]
    run = json.loads((ds / "run.json").read_text())
    assert run["examples"] == 20 and run["labels"] == {"hallucinated": 10, "faithful": 10}

    # The second run of the same conditions hits the cache only.
    from guardrail.evaluation.cache import CachingVerifier
    from guardrail.verifiers import load_verifier

    def cached_rows() -> int:
        cache = CachingVerifier(load_verifier(str(tiny_dir)), out / "cache.sqlite")
        n = cache.stats()["rows"]
        cache.close()
        return n

    before = cached_rows()
    capsys.readouterr()
    assert before > 0 and _eval(out, str(tiny_dir), "--conditions", "plain") == 0
    assert "/ 0 misses" in capsys.readouterr().out and cached_rows() == before

    report_dir = tmp_path / "report"
    assert main(["analyze", str(out), "--out", str(report_dir)]) == 0
    report = (report_dir / "report.md").read_text()
    assert "McNemar" in report and "| plain | claims |" in report
    for png in ("halueval-qa_roc.png", "halueval-qa_hist.png", "halueval-qa_threshold.png",
                "datasets_bacc.png"):  # fmt: skip
        assert (report_dir / png).read_bytes()[:4] == b"\x89PNG"
    tests = json.loads((report_dir / "mcnemar.json").read_text())["halueval-qa"]
    assert all(0.0 <= t["p_value"] <= 1.0 for t in tests) and len(tests) == 3

    base = ["--dataset", "halueval-qa", "--data-dir", str(HALUEVAL), "--out", str(out),
            "--limit", "20", "--verifier", str(tiny_dir), "--no-progress"]  # fmt: skip
    assert main(["tune", *base, "--dev-fraction", "0.3", "--seed", "5"]) == 0
    tuned = json.loads((out / "tune" / "halueval-qa" / "tune_seed5.json").read_text())
    assert tuned["seed"] == 5 and len(tuned["dev_ids"]) == 6 and len(tuned["test_ids"]) == 14
    assert {s["family"] for s in tuned["settings"]} == {"fixed", "adaptive", "ratio"}
    assert main(["calibrate", *base, "--seed", "5"]) == 0
    calib = json.loads(
        (out / "calibrate" / "halueval-qa" / "calibration_plain_seed5.json").read_text()
    )
    assert 0.05 <= calib["temperature"] <= 20.0 and isinstance(calib["helps"], bool)
    # eval's own results were not overwritten by tune / calibrate
    assert json.loads((ds / "run.json").read_text())["conditions"] == ["plain"]


@needs_data
def test_bundled_verifier_beats_chance_on_halueval(tmp_path: Path) -> None:
    from guardrail.errors import ModelLoadError
    from guardrail.verifiers import load_verifier

    try:
        load_verifier()
    except ModelLoadError as exc:
        pytest.skip(f"no bundled verifier in this build yet: {exc}")
    assert _eval(tmp_path, None, "--conditions", "plain", "adaptive") == 0
    metrics = json.loads((tmp_path / "halueval-qa" / "plain" / "metrics.json").read_text())
    assert metrics["metrics"]["auroc"] > 0.6


def test_caching_embedder_returns_the_model_vectors() -> None:
    import numpy as np

    from guardrail.embedding_cache import CachingEmbedder
    from guardrail.models import load_embedder

    model = load_embedder()
    cached = CachingEmbedder(model, max_entries=3)
    texts = ["The meeting is at 2pm.", "Paris is in France.", "The meeting is at 2pm."]
    kw = {"normalize_embeddings": True, "convert_to_numpy": True, "show_progress_bar": False}
    direct = model.encode(texts, **kw)
    got = cached.encode(texts, **kw)
    assert got.shape == direct.shape and np.allclose(got, direct, atol=1e-5)
    assert np.allclose(cached.encode(texts[1], normalize_embeddings=True), direct[1], atol=1e-5)
    raw = cached.encode(texts[:1])  # not normalised: a different cache entry
    assert np.allclose(raw, model.encode(texts[:1]), atol=1e-5)
    assert len(cached._vectors) == 3
    cached.encode(["a new sentence", "and another"], normalize_embeddings=True)  # over the cap
    assert len(cached._vectors) == 2
    assert cached.get_sentence_embedding_dimension() == 384  # forwarded to the model
