"""The evidence-shape features and the grouped cross-validation of benchmarks/fit_calibration.py."""

from __future__ import annotations

import math
import random

from benchmarks import fit_calibration as fc
from guardrail.hallucination.calibration import FEATURES, EvidenceIndex, claim_features
from guardrail.verifiers.base import NLIPrediction


def test_evidence_shape_features_count_passages_and_words() -> None:
    pred = NLIPrediction(entailment=0.6, neutral=0.3, contradiction=0.1)
    one = claim_features("Rain fell.", pred, 0.1, EvidenceIndex.of(["Rain fell all day long."]))
    two = claim_features("Rain fell.", pred, 0.1, EvidenceIndex.of(["Rain fell.", "It was cold."]))
    assert set(one) == set(FEATURES)
    assert math.isclose(one["log_passages"], math.log(2), abs_tol=1e-3)
    assert math.isclose(one["log_evidence_words"], math.log(6), abs_tol=1e-3)
    assert math.isclose(two["log_passages"], math.log(3), abs_tol=1e-3)
    assert fc.shape_of(one) == "paragraph" and fc.shape_of(two) == "paragraph"
    doc = EvidenceIndex.of([" ".join(["word"] * (fc.SHAPE_PARAGRAPH_WORDS + 1))])
    assert fc.shape_of(claim_features("Rain fell.", pred, 0.1, doc), "size") == "document"
    assert fc.shape_of(claim_features("Rain fell.", pred, 0.1, doc)) == "few"
    several = EvidenceIndex.of([" ".join(["word"] * 40)] * (fc.SHAPE_FEW + 1))
    assert fc.shape_of(claim_features("Rain fell.", pred, 0.1, several)) == "several"
    long_doc = EvidenceIndex.of([" ".join(["word"] * (fc.SHAPE_LONG_WORDS + 1))])
    assert fc.shape_of(claim_features("Rain fell.", pred, 0.1, long_doc)) == "long"
    snippets = EvidenceIndex.of(["Rain fell."] * (fc.SHAPE_SNIPPETS + 1))
    assert fc.shape_of(claim_features("Rain fell.", pred, 0.1, snippets)) == "snippets"


def test_cv_groups_keep_an_lfqa_question_and_a_halueval_pair_together() -> None:
    a = {"dataset": "lfqa", "item_id": "lfqa-gpt3_wdoc-q-1"}
    b = {"dataset": "lfqa", "item_id": "lfqa-alpaca-q-1"}
    c = {"dataset": "halueval", "item_id": "halueval-7-right"}
    d = {"dataset": "halueval", "item_id": "halueval-7-hallucinated"}
    assert fc.group_of(a) == fc.group_of(b) and fc.group_of(c) == fc.group_of(d)
    assert fc.group_of({"dataset": "qags", "item_id": "x", "group": "g"}) == "qags:g"


def _rows(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        for dataset in ("qags", "wice"):
            supported = rng.random() < 0.6
            z = (1.5 if supported else -1.5) + rng.gauss(0, 1)
            rows.append({
                "dataset": dataset,
                "item_id": f"{dataset}-{i // 2}",
                "label_supported": supported,
                "features": {
                    "logit_entail": z,
                    "contradiction": 0.1,
                    "missing_specific": 0.0,
                    "log_passages": math.log(2 if dataset == "qags" else 4),
                    "log_evidence_words": math.log(50),
                },
            })  # fmt: skip
    return rows


def test_folds_never_split_a_group_and_spread_each_set() -> None:
    rows = _rows(60)
    folds = fc.folds_of(rows, 5, seed=3)
    by_group: dict[str, set[int]] = {}
    for r, f in zip(rows, folds, strict=True):
        by_group.setdefault(fc.group_of(r), set()).add(f)
    assert all(len(v) == 1 for v in by_group.values())
    for dataset in ("qags", "wice"):
        assert {f for r, f in zip(rows, folds, strict=True) if r["dataset"] == dataset} == set(
            range(5)
        )


def test_cross_validation_learns_a_separable_signal_for_each_recipe_shape() -> None:
    rows = _rows(80)
    for shape in ("none", "features", "intercepts", "thresholds"):
        recipe = fc.Recipe(("logit_entail", "contradiction"), l2=1.0, shape=shape)
        cv = fc.cross_validate(rows, recipe, k=4, seeds=(0,))
        assert cv["qags"] > 0.8 and cv["wice"] > 0.8, (shape, cv)


def test_a_plain_fit_converts_to_a_calibrator_and_agrees_with_it() -> None:
    rows = _rows(40)
    fitted = fc.fit_recipe(rows, fc.Recipe(("logit_entail", "log_passages"), l2=1.0))
    cal = fitted.as_calibrator()
    for r, p in zip(rows, fitted.probabilities(rows), strict=True):
        assert math.isclose(cal.probability(r["features"]), p, abs_tol=1e-4)
    weighted = fc.sample_weights(rows, "set_class")
    assert math.isclose(sum(weighted) / len(weighted), 1.0)
