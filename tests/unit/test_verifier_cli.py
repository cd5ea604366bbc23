"""``guardrail train-verifier`` and ``guardrail export-verifier`` end to end on tiny data.

A tiny random BERT stands in for the MiniLM base (``--base-model``) so the run takes seconds;
the training, dev evaluation, int8 export and model card code paths are the real ones.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from guardrail.cli import main
from guardrail.verifiers import load_verifier
from guardrail.verifiers.card import parse_sources
from guardrail.verifiers.onnx_backend import OnnxVerifier
from tests.unit.test_verifier_training import write_pairs
from tests.verifier_conformance import build_tiny_model

pytest.importorskip("transformers")

SOURCES = """
| name | repo@commit | license | commercial | #pairs |
|---|---|---|---|---|
| snli_like | x/y@1 | CC BY-SA 4.0 | YES (SA) | 10 |
| templated | x/z@2 | CC BY-NC 4.0 | NO | 10 |
| fever_rte | x/w@3 | none stated | unclear | 10 |
| unused_set | x/v@4 | CC BY-NC 4.0 | NO | 10 |
"""


def test_parse_sources(tmp_path: Path) -> None:
    (tmp_path / "SOURCES.md").write_text(SOURCES)
    rows = {r.name: r for r in parse_sources(tmp_path / "SOURCES.md")}
    assert set(rows) == {"snli_like", "templated", "fever_rte", "unused_set"}
    assert not rows["snli_like"].restricted and rows["templated"].restricted


def test_train_export_and_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_pairs(tmp_path / "pairs.jsonl.gz")
    (tmp_path / "SOURCES.md").write_text(SOURCES)
    base = build_tiny_model(tmp_path / "base")
    out = tmp_path / "run"
    args = [
        "train-verifier",
        "--data",
        str(data),
        "--out",
        str(out),
        "--base-model",
        str(base),
        "--num-samples",
        "48",
        "--batch-size",
        "8",
        "--max-length",
        "48",
        "--threads",
        "1",
        "--checkpoint-every",
        "2",
    ]
    assert main([*args, "--max-minutes", "0.000001"]) == 0
    assert "rerun the same command to resume" in capsys.readouterr().out
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "dev scores" in printed and "fp16 vs fp32 agreement" in printed  # the default

    export = out / "export"
    assert {"model.onnx", "tokenizer.json", "config.json", "MODEL_CARD.md"} <= {
        p.name for p in export.iterdir()
    }
    card = (export / "MODEL_CARD.md").read_text()
    assert "| snli_like |" in card and "| templated | CC BY-NC 4.0 | NO |" in card
    assert "unused_set" not in card  # only the sets actually sampled
    assert "Steps: 6" in card and "dev_accuracy_3way" in card
    mix = dict(re.findall(r"^\| (\w+) \| (\d+) \| [\d.]+ % \|$", card, flags=re.M))
    assert sum(int(n) for n in mix.values()) == 48  # 6 steps x 8 pairs
    assert json.loads((export / "config.json").read_text())["max_length"] == 48
    verifier = load_verifier(export)
    assert isinstance(verifier, OnnxVerifier)
    assert len(verifier.predict([("A dog runs.", "An animal moves.")])) == 1

    again = tmp_path / "again"
    assert main(["export-verifier", str(out / "model"), "--out", str(again)]) == 0
    assert "agreement" in capsys.readouterr().out  # check pairs from the run's dev split
    assert (again / "model.onnx").exists()


def test_export_of_a_missing_model_fails_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export-verifier", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert "not a transformers model directory" in capsys.readouterr().err
