"""Fit the claim calibrator on a DEV split and choose the claim threshold there.

Input: the claim dump of ``benchmarks/decisions.py --split dev --dump-claims FILE`` (one JSON
line per labelled claim, with the report's ``features``). The logistic model is fitted with
each (dataset, label) group weighted equally, so no set and no class drives it. The claim
threshold maximises, on the same dev data, the mean over the sets of

- ``--threshold-rule claim`` (default): the claim-level balanced accuracy of "below the
  threshold" against "labelled unsupported" (what claim-level delivery acts on);
- ``--threshold-rule response``: the response-level balanced accuracy of "some claim below the
  threshold" against "has an unsupported sentence".

``remove_below`` is the largest value on a 0.05 grid below the threshold whose removals are at
least ``--removal-precision`` (0.9) labelled unsupported on the pooled dev claims. The test
split is never read. Writes the calibration JSON the pipeline loads (default:
``guardrail/hallucination/data/calibration.json``) with what it was fitted on.

    .venv/bin/python benchmarks/fit_calibration.py claims_dev.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardrail.hallucination.calibration import (  # noqa: E402
    BUNDLED,
    FEATURES,
    ClaimCalibrator,
    fit_logistic,
)

SKIP = {"not_checkworthy", "unverified"}


def balanced_accuracy(pred: list[bool], gold: list[bool]) -> float:
    """Mean of the recall of each class (``pred`` / ``gold`` True = flagged / bad)."""
    pos = [p for p, g in zip(pred, gold, strict=True) if g]
    neg = [not p for p, g in zip(pred, gold, strict=True) if not g]
    parts = [sum(x) / len(x) for x in (pos, neg) if x]
    return sum(parts) / len(parts) if parts else float("nan")


def response_scores(rows: list[dict[str, Any]], cal: ClaimCalibrator) -> dict[str, Any]:
    """Per (dataset, item): lowest calibrated p over its checked claims, and its gold label."""
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        key = (r["dataset"], r["item_id"])
        item = items.setdefault(key, {"low": 1.0, "bad": not r["response_supported"]})
        if r.get("status") in SKIP or not r.get("features"):
            continue
        item["low"] = min(item["low"], cal.probability(r["features"]))
    return items


def best_threshold(by_set: dict[str, list[tuple[float, bool]]]) -> tuple[float, dict[str, float]]:
    """The threshold on a 0.01 grid maximising the mean over sets of the balanced accuracy of
    "score below it" against "bad", for ``(score, bad)`` pairs per set; and those accuracies."""
    best, best_score, best_per = 0.5, -1.0, {}
    for step in range(2, 99):
        t = step / 100
        per = {
            name: balanced_accuracy([p < t for p, _ in group], [bad for _, bad in group])
            for name, group in by_set.items()
        }
        score = sum(per.values()) / len(per)
        if score > best_score:
            best, best_score, best_per = t, score, per
    return best, {k: round(v, 4) for k, v in best_per.items()} | {"mean": round(best_score, 4)}


def choose_threshold(
    rows: list[dict[str, Any]], cal: ClaimCalibrator
) -> tuple[float, dict[str, float]]:
    """The threshold maximising the mean over sets of response-level balanced accuracy."""
    by_set: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for (dataset, _), item in response_scores(rows, cal).items():
        by_set[dataset].append((item["low"], item["bad"]))
    return best_threshold(by_set)


def choose_claim_threshold(
    rows: list[dict[str, Any]], cal: ClaimCalibrator
) -> tuple[float, dict[str, float]]:
    """The threshold maximising the mean over sets of claim-level balanced accuracy."""
    by_set: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for r in rows:
        by_set[r["dataset"]].append((cal.probability(r["features"]), not r["label_supported"]))
    return best_threshold(by_set)


def choose_remove_below(
    rows: list[dict[str, Any]], cal: ClaimCalibrator, threshold: float, precision: float
) -> tuple[float | None, dict[str, Any]]:
    """The largest 0.05-grid value below ``threshold`` whose removals are ≥ ``precision``
    labelled unsupported on the pooled dev claims (``None`` when none is)."""
    probs = [(cal.probability(r["features"]), not r["label_supported"]) for r in rows]
    step = 0.05
    value = round(int(threshold / step) * step, 2)
    if value >= threshold:
        value = round(value - step, 2)
    while value > 0:
        removed = [bad for p, bad in probs if p < value]
        if removed and sum(removed) / len(removed) >= precision:
            share = sum(removed) / len(removed)
            return value, {"removed": len(removed), "of": len(probs), "precision": round(share, 3)}
        value = round(value - step, 2)
    return None, {"removed": 0, "of": len(probs)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("dump", type=Path, help="claim dump of the DEV split")
    parser.add_argument("--out", type=Path, default=BUNDLED)
    parser.add_argument(
        "--l2", type=float, default=10.0, help="ridge penalty (dev data is small: keep it strong)"
    )
    parser.add_argument(
        "--features",
        nargs="+",
        choices=FEATURES,
        default=["logit_entail", "contradiction", "missing_specific"],
        help="features in the model (the others get weight 0); fewer features overfit less",
    )
    parser.add_argument("--threshold-rule", choices=["claim", "response"], default="claim")
    parser.add_argument("--removal-precision", type=float, default=0.9)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.dump.read_text(encoding="utf-8").splitlines() if line]
    splits = {r["split"] for r in rows}
    if splits - {"dev"}:
        parser.error(f"the dump must hold the dev split only, found {sorted(splits)}")
    train = [r for r in rows if r.get("status") not in SKIP and r.get("features")]
    groups = Counter((r["dataset"], bool(r["label_supported"])) for r in train)
    weights = [
        len(train) / (len(groups) * groups[(r["dataset"], bool(r["label_supported"]))])
        for r in train
    ]
    coef, bias = fit_logistic(
        [{k: r["features"][k] for k in args.features} for r in train],
        [int(bool(r["label_supported"])) for r in train],
        l2=args.l2,
        sample_weights=weights,
    )
    coef = {k: v for k, v in coef.items() if k in args.features}
    cal = ClaimCalibrator(coef, bias, 0.5)
    response_threshold, response_dev = choose_threshold(rows, cal)
    claim_threshold, claim_per_set = choose_claim_threshold(train, cal)
    threshold = claim_threshold if args.threshold_rule == "claim" else response_threshold
    remove_below, removal = choose_remove_below(train, cal, threshold, args.removal_precision)
    dev = response_dev
    model = ROOT / "guardrail" / "verifiers" / "bundled" / "model.onnx"
    sha = hashlib.sha256(model.read_bytes()).hexdigest()[:16] if model.exists() else None
    claim_dev = balanced_accuracy(
        [cal.probability(r["features"]) < threshold for r in train],
        [not r["label_supported"] for r in train],
    )
    datasets = sorted({r["dataset"] for r in train})
    meta = {
        "fitted_on": "benchmarks/decisions.py --split dev claim dump: the dev parts of "
        + ", ".join(datasets)
        + " (hash splits; WiCE its dev file; LFQA by question)",
        "claims": len(train),
        "groups": {
            f"{d}:{'supported' if s else 'unsupported'}": n for (d, s), n in sorted(groups.items())
        },
        "threshold_rule": (
            "maximises the mean over sets of claim-level balanced accuracy on dev"
            if args.threshold_rule == "claim"
            else "maximises the mean over sets of response-level balanced accuracy on dev"
        ),
        "dev_response_balanced_accuracy_at_its_best_threshold": dev,
        "response_rule_threshold": response_threshold,
        "dev_claim_balanced_accuracy_per_set": claim_per_set,
        "claim_rule_threshold": claim_threshold,
        "dev_claim_balanced_accuracy": round(claim_dev, 4),
        "remove_below_rule": (
            f"the largest value on a 0.05 grid below the threshold whose removals are at least "
            f"{args.removal_precision:.0%} labelled unsupported on the pooled dev claims"
        ),
        "dev_removals": removal,
        "verifier_model_sha256_16": sha,
        "date": date.today().isoformat(),
        "features": list(args.features),
        "l2": args.l2,
    }
    out = ClaimCalibrator(coef, bias, threshold, meta, remove_below)
    args.out.write_text(json.dumps(out.to_json(), indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out.to_json(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
