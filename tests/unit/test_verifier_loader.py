"""``load_verifier``: spec routing, the bundled default, per-spec caching under threads."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import guardrail.verifiers as verifiers
from guardrail.errors import ConfigError, ModelLoadError
from guardrail.verifiers import NLIPrediction, Verifier, load_verifier, loader


def test_public_api_is_pinned() -> None:
    assert sorted(verifiers.__all__) == [
        "NLIPrediction",
        "Pair",
        "Verifier",
        "bundled_dir",
        "clear_cache",
        "load_verifier",
    ]


def test_missing_bundled_model_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(loader, "bundled_dir", lambda: tmp_path)
    loader.clear_cache()
    with pytest.raises(ModelLoadError, match="bundled verifier is not in this build"):
        load_verifier()
    with pytest.raises(ModelLoadError, match="bundled"):
        load_verifier("bundled")


def test_bad_specs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_verifier(42)
    with pytest.raises(ConfigError):
        load_verifier("   ")
    with pytest.raises(ModelLoadError):
        load_verifier("./no/such/model")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelLoadError, match=r"neither model\.onnx"):
        load_verifier(empty)
    (tmp_path / "file.onnx").write_text("x")
    with pytest.raises(ConfigError, match="directory"):
        load_verifier(tmp_path / "file.onnx")


def test_a_verifier_is_returned_as_is() -> None:
    class Fixed(Verifier):
        def predict(self, pairs: Any) -> list[NLIPrediction]:
            return [NLIPrediction(entailment=1, neutral=0, contradiction=0) for _ in pairs]

    fixed = Fixed()
    assert load_verifier(fixed) is fixed


def test_one_load_per_spec_under_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    class Slow(Verifier):
        def predict(self, pairs: Any) -> list[NLIPrediction]:
            return []

    def build(spec: Any, options: dict[str, Any]) -> Verifier:
        calls.append(spec.model_id)  # parsed once: a Hugging Face id
        time.sleep(0.05)
        return Slow()

    monkeypatch.setattr(loader, "_build", build)
    loader.clear_cache()
    results: list[Verifier] = []

    def worker(spec: str) -> None:
        results.append(load_verifier(spec))

    threads = [threading.Thread(target=worker, args=(s,)) for s in ["a/b", "c/d"] * 6]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(calls) == ["a/b", "c/d"]
    assert len({id(r) for r in results}) == 2
    assert load_verifier("a/b", threads=1) is not load_verifier(
        "a/b"
    )  # options are part of the key
    loader.clear_cache()
