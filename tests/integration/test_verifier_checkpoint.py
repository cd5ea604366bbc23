"""The committed training checkpoint (``checkpoints/verifier-v4``) continues training losslessly.

It is stored with fp16 weights (int8 word embeddings) and computed in fp32; rebuilding trainable
torch weights from it must give back a model that scores like it, with its lineage.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "checkpoints" / "verifier-v4"
PAIRS = [
    ("The paper was published in 2023 by a team in Oslo.", "The paper came out in 2023."),
    ("The paper was published in 2023 by a team in Oslo.", "The paper was published in 2021."),
    ("Castell Foods employs about 3,400 people in Porto.", "Castell Foods is based in Lyon."),
    ("A man is playing a guitar on stage.", "A man is performing music."),
    ("A man is playing a guitar on stage.", "Nobody is on the stage."),
    ("The museum opens at nine and closes at five.", "The museum has a café."),
]


def test_checkpoint_rebuilds_to_the_same_scores_and_keeps_its_lineage(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    from guardrail.verifiers.onnx_backend import OnnxVerifier
    from guardrail.verifiers.training.rebuild import agreement, lineage_of, rebuild_from_onnx

    config = json.loads((CHECKPOINT / "config.json").read_text())
    assert config["guardrail_export"]["quantization"] == "fp16-weights-int8-embeddings"
    assert (CHECKPOINT / "model.onnx").stat().st_size / 2**20 <= 40
    out = rebuild_from_onnx(CHECKPOINT, tmp_path / "init")
    result = agreement(out, CHECKPOINT, PAIRS, max_tokens=160)
    assert result["label_agreement"] == 1.0 and result["max_abs_diff"] < 0.02
    parent = json.loads((out / "parent.json").read_text())
    assert [h["version"] for h in parent["history"]] == ["v1", "v2", "v4"]
    assert parent["sha256"] == lineage_of(CHECKPOINT)["sha256"]
    assert parent["history"][-1]["model_onnx_sha256"] == parent["sha256"]
    labels = [max(("entailment", "neutral", "contradiction"), key=lambda k: getattr(p, k))
              for p in OnnxVerifier(CHECKPOINT).predict(PAIRS[3:5])]  # fmt: skip
    assert labels == ["entailment", "contradiction"]
