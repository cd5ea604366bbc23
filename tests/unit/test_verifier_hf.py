"""The Hugging Face backend passes the verifier conformance tests on a tiny real BERT model.

The model is randomly initialised (built in a temp dir with the MiniLM tokenizer), so only the
mechanics are tested here; quality is tested on the trained model in tests/integration.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.errors import ModelLoadError
from guardrail.verifiers import Verifier, load_verifier
from guardrail.verifiers.hf_backend import HFVerifier
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
    return build_tiny_model(tmp_path_factory.mktemp("tiny-hf"))


@pytest.fixture(scope="module")
def permuted_dir(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return permute_tiny_model(tiny_dir, tmp_path_factory.mktemp("tiny-hf-perm"), [2, 0, 1])


class TestHFConformance(VerifierConformance):
    @pytest.fixture
    def verifier(self, tiny_dir: Path) -> Verifier:
        return HFVerifier(tiny_dir, batch_size=3, max_tokens=64)

    @pytest.fixture
    def permuted_pair(self, tiny_dir: Path, permuted_dir: Path) -> tuple[Verifier, Verifier]:
        return HFVerifier(tiny_dir), HFVerifier(permuted_dir)


def test_permutation_changes_raw_outputs(tiny_dir: Path, permuted_dir: Path) -> None:
    """Guard for the label-order test: the permuted model's raw logits really differ."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_dir))
    enc = tok([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
    with torch.inference_mode():
        a = AutoModelForSequenceClassification.from_pretrained(str(tiny_dir))(**enc).logits
        b = AutoModelForSequenceClassification.from_pretrained(str(permuted_dir))(**enc).logits
    assert not torch.allclose(a, b, atol=1e-3)
    assert torch.allclose(a[:, [2, 0, 1]], b, atol=1e-5)
    probs = torch.softmax(a, -1)
    assert float(probs.max(-1).values.min()) > 0.4  # the labels are far from uniform


def test_max_tokens_from_training_files(tiny_dir: Path, tmp_path: Path) -> None:
    import json
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_dir, run / "checkpoint")
    (run / "train_config.json").write_text(json.dumps({"max_length": 96}))
    verifier = HFVerifier(run / "checkpoint")
    assert verifier.max_tokens == 96
    assert HFVerifier(tiny_dir).max_tokens == 512


def test_truncation_keeps_the_hypothesis(tiny_dir: Path) -> None:
    verifier = HFVerifier(tiny_dir, max_tokens=32)
    encoder = verifier._encoder
    assert encoder is not None
    ids, types = encoder.encode(("word " * 100, "short claim here"))
    assert len(ids) == 32
    hypothesis_ids = [i for i, t in zip(ids, types, strict=True) if t == 1]
    assert len(hypothesis_ids) == verifier.count_tokens("short claim here") + 1  # + [SEP]


def test_load_verifier_picks_hf_for_a_transformers_dir(tiny_dir: Path) -> None:
    first = load_verifier(str(tiny_dir))
    assert isinstance(first, HFVerifier)
    assert load_verifier(tiny_dir) is first  # same resolved path → same cached object
    assert_close(first.predict(PAIRS[:2]), HFVerifier(tiny_dir).predict(PAIRS[:2]), 1e-5)


def test_unknown_hub_id_offline_is_a_model_load_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="could not load NLI model"):
        HFVerifier("guardrail-test/definitely-not-a-model")
