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

``--cv FILE`` fits nothing for shipping: it compares candidate recipes (feature sets, l2,
weighting, per-evidence-shape intercepts or thresholds; ``CANDIDATES``) by cross-validation
on the same dev dump, folds grouped by answer (LFQA: by question, so an answer's document never
sits on both sides) and stratified by set, repeated over seeds; each fold fits the logistic
model and chooses its threshold on the training folds only, and the held-out claims' flags are
pooled into claim bAcc per set (and for LFQA's RAG settings, ``lfqa_rag``). Writes the table
to FILE.

    .venv/bin/python benchmarks/fit_calibration.py claims_dev.jsonl --cv cv.json
    .venv/bin/python benchmarks/fit_calibration.py claims_dev.jsonl --candidate NAME --out x.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardrail.evaluation.claim_calibration import DEFAULT_FEATURES  # noqa: E402
from guardrail.hallucination.calibration import (  # noqa: E402
    BUNDLED,
    EVIDENCE_SHAPES,
    FEATURES,
    SHAPE_FEW,
    SHAPE_LONG_WORDS,
    SHAPE_PARAGRAPH_WORDS,
    SHAPE_SNIPPETS,
    VERBATIM_P,
    ClaimCalibrator,
    evidence_shape,
    fit_logistic,
    fit_logistic_matrix,
    shape_features,
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


# --- cross-validation of candidate recipes (``--cv``) ------------------------------------------

LFQA_RAG = ("gpt3_wdoc", "alpaca_wdoc", "gpt3_whudoc")
"""LFQA's RAG settings (as in ``decisions_data.LFQA_RAG``)."""

REPORT_SETS = ("qags", "factcheck_gpt", "wice", "halueval", "lfqa", "lfqa_rag")

SHAPE_SCHEMES: dict[str, tuple[str, ...]] = {
    "size": ("document", "paragraph", "long", "snippets"),
    "size_passages": EVIDENCE_SHAPES,
}
"""Evidence shapes per scheme (``shape_of``); the first is the reference of
``Recipe.shape == "intercepts"``. ``size_passages``: the shipped
:func:`~guardrail.hallucination.calibration.evidence_shape`; ``size``: the same with ``few``
and ``several`` texts joined as ``document``."""


def shape_of(features: dict[str, float], scheme: str = "size_passages") -> str:
    """The evidence shape of a dump row's features (word and text counts recovered from
    ``log_evidence_words`` / ``log_passages``)."""
    passages = round(math.exp(features.get("log_passages", 0.0)) - 1)
    words = round(math.exp(features.get("log_evidence_words", 0.0)) - 1)
    shape = evidence_shape(words, passages)
    if scheme == "size" and shape in ("few", "several"):
        return "document"
    return shape


def with_shape_features(features: dict[str, float]) -> dict[str, float]:
    """``features`` with the ``shape_`` indicators (a dump of code that did not emit them)."""
    if "shape_several" in features or "log_passages" not in features:
        return features
    passages = round(math.exp(features["log_passages"]) - 1)
    words = round(math.exp(features.get("log_evidence_words", 0.0)) - 1)
    return {**features, **shape_features(words, passages)}


def group_of(row: dict[str, Any]) -> str:
    """The CV group of a dump row: its answer's group (LFQA: the question, HaluEval: the
    question of the right and the hallucinated answer), from ``group`` or the item id."""
    if row.get("group"):
        return f"{row['dataset']}:{row['group']}"
    item = str(row["item_id"])
    if row["dataset"] == "lfqa":  # lfqa-{setting}-{qid}
        item = "lfqa-" + item.split("-", 2)[-1]
    elif row["dataset"] == "halueval":  # halueval-{n}-right / -hallucinated
        item = item.rsplit("-", 1)[0]
    return f"{row['dataset']}:{item}"


def folds_of(rows: list[dict[str, Any]], k: int, seed: int) -> list[int]:
    """A fold per row: groups never split, dealt round-robin per set after a seeded shuffle (so
    each fold holds about 1/k of each set's groups)."""
    rng = random.Random(seed)
    by_set: dict[str, list[str]] = defaultdict(list)
    for g in dict.fromkeys(group_of(r) for r in rows):
        by_set[g.split(":", 1)[0]].append(g)
    fold_of: dict[str, int] = {}
    for groups in by_set.values():
        rng.shuffle(groups)
        offset = rng.randrange(k)
        for i, g in enumerate(groups):
            fold_of[g] = (i + offset) % k
    return [fold_of[group_of(r)] for r in rows]


@dataclass(frozen=True)
class Recipe:
    """How a calibration is fitted: features, ridge, sample weighting and evidence shape.

    ``weighting``: ``set_class`` = each (set, label) group weighs the same (the shipped fit),
    ``set`` = each set weighs the same (labels as they come), ``none`` = each claim weighs 1.
    ``shape``: ``none``; ``features`` = ``log_evidence_words`` and ``log_passages`` join the
    model; ``intercepts`` = one indicator per evidence shape but the first joins the model (a
    shape's own intercept, under the same ridge); ``thresholds`` = a threshold per shape, chosen
    on the training claims of that shape (the global one where a shape has one label only)."""

    features: tuple[str, ...]
    l2: float = 10.0
    weighting: str = "set_class"
    shape: str = "none"
    scheme: str = "size_passages"


SHIPPED_FEATURES = ("logit_entail", "contradiction", "missing_specific")
REFIT10_FEATURES = (*SHIPPED_FEATURES, "log_windows", "novel_best")

CANDIDATES: dict[str, Recipe] = {
    "shipped_recipe": Recipe(SHIPPED_FEATURES, 10.0),
    "refit10": Recipe(REFIT10_FEATURES, 3.0),
    "refit10_l2_30": Recipe(REFIT10_FEATURES, 30.0),
    "refit10_set_weight": Recipe(REFIT10_FEATURES, 3.0, "set"),
    "refit10_no_weight": Recipe(REFIT10_FEATURES, 3.0, "none"),
    "refit10_shape_features": Recipe(REFIT10_FEATURES, 3.0, shape="features"),
    "shipped_shape_features": Recipe(SHIPPED_FEATURES, 10.0, shape="features"),
    "entail_specific_l2_30": Recipe(("logit_entail", "missing_specific"), 30.0),
    "entail_specific_novel_l2_30_shape_features": Recipe(
        ("logit_entail", "missing_specific", "novel_best"), 30.0, shape="features"
    ),
    "shipped_unplaced": Recipe((*SHIPPED_FEATURES, "unplaced_share"), 10.0),
}
for _scheme in SHAPE_SCHEMES:
    for _shape in ("intercepts", "thresholds"):
        for _name, _features, _l2 in (
            ("refit10", REFIT10_FEATURES, 3.0),
            ("shipped", SHIPPED_FEATURES, 10.0),
            ("entail_specific_l2_30", ("logit_entail", "missing_specific"), 30.0),
            (
                "entail_specific_novel_l2_30",
                ("logit_entail", "missing_specific", "novel_best"),
                30.0,
            ),
        ):
            CANDIDATES[f"{_name}_{_scheme}_{_shape}"] = Recipe(
                _features, _l2, shape=_shape, scheme=_scheme
            )


def design(rows: list[dict[str, Any]], recipe: Recipe) -> tuple[list[str], Any]:
    """The recipe's column names and feature matrix (no intercept column)."""
    import numpy as np

    names = list(recipe.features)
    if recipe.shape == "features":
        names += [n for n in ("log_evidence_words", "log_passages") if n not in names]
    cols = [[r["features"].get(n, 0.0) for n in names] for r in rows]
    if recipe.shape == "intercepts":
        shapes = SHAPE_SCHEMES[recipe.scheme]
        names += [f"shape_{s}" for s in shapes[1:]]
        for c, r in zip(cols, rows, strict=True):
            shape = shape_of(r["features"], recipe.scheme)
            c.extend(float(shape == s) for s in shapes[1:])
    return names, np.array(cols, dtype=np.float64).reshape(len(rows), len(names))


def sample_weights(rows: list[dict[str, Any]], weighting: str) -> list[float]:
    """Per-row weights of ``Recipe.weighting`` (mean 1)."""
    if weighting == "none":
        return [1.0] * len(rows)
    if weighting == "set":
        keys = [r["dataset"] for r in rows]
    elif weighting == "set_class":
        keys = [f"{r['dataset']}:{bool(r['label_supported'])}" for r in rows]
    else:
        raise ValueError(f"unknown weighting {weighting!r}")
    counts = Counter(keys)
    return [len(rows) / (len(counts) * counts[k]) for k in keys]


def fit_matrix(x: Any, y: Any, sw: Any, l2: float, iterations: int = 50) -> Any:
    """Intercept first, then the columns' weights (the library's Newton solver)."""
    return fit_logistic_matrix(x, y, sw, l2, iterations)


@dataclass
class Fitted:
    """A recipe fitted on some rows: weights, threshold(s)."""

    recipe: Recipe
    names: list[str]
    w: Any
    threshold: float
    shape_thresholds: dict[str, float]

    def probabilities(self, rows: list[dict[str, Any]]) -> list[float]:
        import numpy as np

        _, x = design(rows, self.recipe)
        z = self.w[0] + x @ self.w[1:]
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))
        return [
            max(float(q), VERBATIM_P) if r["features"].get("verbatim") else float(q)
            for q, r in zip(p, rows, strict=True)
        ]

    def flags(self, rows: list[dict[str, Any]]) -> list[bool]:
        """True = not supported (p below the threshold of the row's shape)."""
        scheme = self.recipe.scheme
        return [
            p < self.shape_thresholds.get(shape_of(r["features"], scheme), self.threshold)
            for p, r in zip(self.probabilities(rows), rows, strict=True)
        ]

    def as_calibrator(self) -> ClaimCalibrator:
        """The fit as a shippable calibrator (per-shape thresholds folded into intercepts is
        not done here: only recipes whose columns are all ``FEATURES`` convert)."""
        unknown = set(self.names) - set(FEATURES)
        if unknown or self.shape_thresholds:
            raise ValueError(f"not expressible as a calibration file: {sorted(unknown)}")
        weights = {n: round(float(v), 6) for n, v in zip(self.names, self.w[1:], strict=True)}
        return ClaimCalibrator(weights, round(float(self.w[0]), 6), self.threshold)


def fit_recipe(rows: list[dict[str, Any]], recipe: Recipe) -> Fitted:
    """Fit ``recipe`` on ``rows`` and choose its threshold(s) there (claim rule: the mean over
    sets of claim bAcc)."""
    import numpy as np

    names, x = design(rows, recipe)
    y = np.array([float(bool(r["label_supported"])) for r in rows])
    sw = np.array(sample_weights(rows, recipe.weighting))
    fitted = Fitted(recipe, names, fit_matrix(x, y, sw, recipe.l2), 0.5, {})
    probs = fitted.probabilities(rows)
    by_set: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for p, r in zip(probs, rows, strict=True):
        by_set[r["dataset"]].append((p, not r["label_supported"]))
    fitted.threshold, _ = best_threshold(by_set)
    if recipe.shape == "thresholds":
        for shape in SHAPE_SCHEMES[recipe.scheme]:
            part: dict[str, list[tuple[float, bool]]] = defaultdict(list)
            for p, r in zip(probs, rows, strict=True):
                if shape_of(r["features"], recipe.scheme) == shape:
                    part[r["dataset"]].append((p, not r["label_supported"]))
            labels = {bad for group in part.values() for _, bad in group}
            if len(labels) == 2:
                fitted.shape_thresholds[shape], _ = best_threshold(part)
    return fitted


def set_of(row: dict[str, Any]) -> list[str]:
    """The report sets a row counts in (an LFQA RAG row counts in ``lfqa`` and ``lfqa_rag``)."""
    names = [row["dataset"]]
    if row["dataset"] == "lfqa" and row.get("setting") in LFQA_RAG:
        names.append("lfqa_rag")
    return names


def per_set_bacc(rows: list[dict[str, Any]], flags: list[bool]) -> dict[str, float]:
    """Claim bAcc per report set of ``flags`` (True = flagged) against the labels."""
    pred: dict[str, list[bool]] = defaultdict(list)
    gold: dict[str, list[bool]] = defaultdict(list)
    for r, f in zip(rows, flags, strict=True):
        for name in set_of(r):
            pred[name].append(f)
            gold[name].append(not r["label_supported"])
    return {name: balanced_accuracy(pred[name], gold[name]) for name in pred}


def cross_validate(
    rows: list[dict[str, Any]], recipe: Recipe, k: int = 5, seeds: Sequence[int] = (0, 1, 2)
) -> dict[str, float]:
    """Grouped, set-stratified k-fold CV of ``recipe``, repeated per seed: the mean over seeds
    of each set's claim bAcc of the pooled out-of-fold flags (and ``sd_<set>`` over seeds)."""
    runs: list[dict[str, float]] = []
    for seed in seeds:
        fold = folds_of(rows, k, seed)
        flags = [False] * len(rows)
        for f in range(k):
            train = [r for r, g in zip(rows, fold, strict=True) if g != f]
            held = [i for i, g in enumerate(fold) if g == f]
            fitted = fit_recipe(train, recipe)
            for i, flag in zip(held, fitted.flags([rows[i] for i in held]), strict=True):
                flags[i] = flag
        runs.append(per_set_bacc(rows, flags))
    names = [n for n in REPORT_SETS if n in runs[0]]
    out: dict[str, float] = {}
    for n in names:
        values = [r[n] for r in runs]
        mean = sum(values) / len(values)
        out[n] = round(mean, 4)
        out[f"sd_{n}"] = round((sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5, 4)
    return out


def leave_one_set_out(rows: list[dict[str, Any]], recipe: Recipe) -> dict[str, float]:
    """Each set's claim bAcc when the recipe is fitted (and its threshold chosen) on the other
    sets only: how it carries to a set of a kind it never saw (a shape intercept learnt from
    other sets' claims of that shape, or none)."""
    out: dict[str, float] = {}
    for held in dict.fromkeys(r["dataset"] for r in rows):
        train = [r for r in rows if r["dataset"] != held]
        test = [r for r in rows if r["dataset"] == held]
        fitted = fit_recipe(train, recipe)
        for name, value in per_set_bacc(test, fitted.flags(test)).items():
            out[name] = round(value, 4)
    return {n: out[n] for n in REPORT_SETS if n in out}


def fixed_bacc(rows: list[dict[str, Any]], cal: ClaimCalibrator) -> dict[str, float]:
    """Per-set claim bAcc of an existing calibration on ``rows`` (no fit, no CV)."""
    flags = [cal.probability(r["features"]) < cal.threshold for r in rows]
    return {n: round(v, 4) for n, v in per_set_bacc(rows, flags).items()}


def cv_table(
    rows: list[dict[str, Any]],
    candidates: dict[str, Recipe],
    k: int = 5,
    seeds: Sequence[int] = (0, 1, 2),
) -> dict[str, Any]:
    """The CV figures of each candidate, the shipped calibration's in-sample figures, and each
    candidate's full-dev fit (weights, threshold(s))."""
    table: dict[str, Any] = {
        "shipped_calibration_no_refit": fixed_bacc(rows, ClaimCalibrator.load())
    }
    for name, recipe in candidates.items():
        fitted = fit_recipe(rows, recipe)
        table[name] = {
            "recipe": asdict(recipe),
            "cv": cross_validate(rows, recipe, k, seeds),
            "leave_one_set_out": leave_one_set_out(rows, recipe),
            "full_dev_fit": {
                "weights": {
                    n: round(float(v), 4) for n, v in zip(fitted.names, fitted.w[1:], strict=True)
                },
                "bias": round(float(fitted.w[0]), 4),
                "threshold": fitted.threshold,
                "shape_thresholds": fitted.shape_thresholds,
            },
        }
        cv, loso = table[name]["cv"], table[name]["leave_one_set_out"]
        print(name, " ".join(f"{n}={cv[n]:.3f}" for n in REPORT_SETS if n in cv), flush=True)
        print("   loso", " ".join(f"{n}={loso[n]:.3f}" for n in REPORT_SETS if n in loso))
    return table


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
        default=list(DEFAULT_FEATURES),
        help="features in the model (the others get weight 0); fewer features overfit less",
    )
    parser.add_argument("--threshold-rule", choices=["claim", "response"], default="claim")
    parser.add_argument("--removal-precision", type=float, default=0.9)
    parser.add_argument(
        "--cv", type=Path, default=None,
        help="cross-validate the CANDIDATES recipes on the dump and write their table here "
        "(nothing else is written)",
    )  # fmt: skip
    parser.add_argument(
        "--candidates", nargs="+", choices=CANDIDATES, default=list(CANDIDATES),
        help="with --cv: these recipes only",
    )  # fmt: skip
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=3, help="with --cv: CV repeats")
    parser.add_argument(
        "--candidate", choices=CANDIDATES, default=None,
        help="fit this recipe (features, l2, weighting, shape) instead of --features / --l2",
    )  # fmt: skip
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.dump.read_text(encoding="utf-8").splitlines() if line]
    splits = {r["split"] for r in rows}
    if splits - {"dev"}:
        parser.error(f"the dump must hold the dev split only, found {sorted(splits)}")
    for r in rows:
        if r.get("features"):
            r["features"] = with_shape_features(r["features"])
    train = [r for r in rows if r.get("status") not in SKIP and r.get("features")]
    if args.cv is not None:
        chosen = {n: CANDIDATES[n] for n in args.candidates}
        table = cv_table(train, chosen, args.folds, tuple(range(args.seeds)))
        table["_about"] = {
            "dump_claims": len(train),
            "folds": args.folds,
            "seeds": args.seeds,
            "grouping": "by answer (LFQA: question; HaluEval: question), stratified by set",
            "threshold_rule": "each training fold: the claim threshold maximising the mean over "
            "sets of claim bAcc; figures: claim bAcc of the pooled out-of-fold flags, mean over "
            "seeds (sd_ = their standard deviation)",
            "shapes": {
                "paragraph_words": SHAPE_PARAGRAPH_WORDS,
                "few_passages": SHAPE_FEW,
                "long_words": SHAPE_LONG_WORDS,
                "snippets": SHAPE_SNIPPETS,
                "counts": dict(Counter(f"{r['dataset']}:{shape_of(r['features'])}" for r in train)),
                "schemes": SHAPE_SCHEMES,
            },
        }
        args.cv.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
        return 0
    if args.candidate is not None:
        recipe = CANDIDATES[args.candidate]
        shippable = recipe.shape in ("none", "features") or (
            recipe.shape == "intercepts" and recipe.scheme == "size_passages"
        )
        if recipe.weighting != "set_class" or not shippable:
            parser.error(
                f"--candidate {args.candidate}: only set_class-weighted recipes "
                "without shape indicators or thresholds convert to a calibration file"
            )
        args.features = list(design(train[:1], recipe)[0])
        args.l2 = recipe.l2
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
    if args.candidate is not None:
        meta["recipe"] = {"name": args.candidate, **asdict(CANDIDATES[args.candidate])}
        meta["recipe_rule"] = (
            "chosen among benchmarks/fit_calibration.py --cv recipes by grouped 5-fold CV on "
            "this dev dump (see benchmarks/results/calibration_cv_recipes_dev.json)"
        )
    out = ClaimCalibrator(coef, bias, threshold, meta, remove_below)
    args.out.write_text(json.dumps(out.to_json(), indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out.to_json(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
