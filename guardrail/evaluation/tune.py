"""Grid search of the verdict thresholds on an explicit dev split, scored on the held-out rest.

The verifier is not re-run: a condition's ``details.jsonl`` holds, per example, the claims'
best-window entailment and status, the aggregated NLI score and the retrieval score, from
which the verdict of any threshold setting follows as the hallucination stage computes it
(``guardrail tune`` checks this: it replays each run's own thresholds, ``replay_agreement``):

- weakest link: hallucinated iff the aggregated score (min over claims) ``< T(rs)``, searched over
  ``t_low``, ``t_high`` (≤ ``t_low``) and ``midpoint`` of T(rs) — and over a fixed threshold;
- the ratio rule: hallucinated iff contradicted share > ``contradiction_ratio`` or
  unsupported share > ``neutral_ratio`` (claim statuses as the run decided them).

An example with no claim, or with a claim the verifier could not check, is hallucinated
whatever the thresholds (fail-closed: its verdict is at best UNVERIFIED).
The split is stratified by label, deterministic in ``seed``, and recorded with its ids.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from guardrail.config import AdaptiveThreshold
from guardrail.errors import InputError
from guardrail.evaluation.metrics import BinaryMetrics, binary_metrics


class TuneItem(BaseModel):
    """What tuning needs of one example."""

    id: str
    label: int
    retrieval_score: float | None = None
    min_entailment: float | None = None
    """Weakest-link score; ``None`` when no claim was checked."""
    contradicted_share: float | None = None
    unsupported_share: float | None = None


def read_details(path: Path) -> list[TuneItem]:
    """Tuning items from a condition's ``details.jsonl``."""
    if not path.exists():
        raise InputError(f"details file not found: {path}; run `guardrail eval` first")
    import json

    items: list[TuneItem] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        claims = row.get("claims") or []
        # Any unchecked claim makes the verdict UNVERIFIED at best: flagged whatever the
        # thresholds (fail-closed), like the hallucination stage decides it.
        n = len(claims) if all(c["status"] != "unverified" for c in claims) else 0
        items.append(
            TuneItem(
                id=row["id"],
                label=int(row["label"]),
                retrieval_score=row.get("retrieval_score"),
                min_entailment=_weakest_score(row, claims) if n else None,
                contradicted_share=sum(c["status"] == "contradicted" for c in claims) / n
                if n
                else None,
                unsupported_share=sum(c["status"] == "unsupported" for c in claims) / n
                if n
                else None,
            )
        )
    return items


def _weakest_score(row: dict[str, Any], claims: list[dict[str, Any]]) -> float:
    """The run's aggregated score (it includes the stage's adjustments, e.g. a date mismatch
    capping a claim), else the minimum best-window entailment of the claims."""
    score = row.get("nli_score")
    if isinstance(score, int | float):
        return float(score)
    return float(min(c["entailment"] for c in claims))


def dev_test_split(
    ids: Sequence[str], labels: Sequence[int], dev_fraction: float, seed: int
) -> tuple[list[str], list[str]]:
    """Stratified split: ``dev_fraction`` of each label to dev (ids in input order)."""
    if not 0.0 < dev_fraction < 1.0:
        raise InputError(f"dev fraction must be between 0 and 1, not {dev_fraction}")
    if len(set(ids)) != len(ids):
        raise InputError("example ids must be unique to split them")
    rng = np.random.default_rng(seed)
    dev: set[str] = set()
    for lab in sorted(set(labels)):
        group = sorted(i for i, y in zip(ids, labels, strict=True) if y == lab)
        take = round(dev_fraction * len(group))
        dev.update(group[j] for j in rng.permutation(len(group))[:take])
    return [i for i in ids if i in dev], [i for i in ids if i not in dev]


@dataclass(frozen=True)
class _Columns:
    """Tuning items as arrays (NaN = missing), so a grid point costs a few vector ops."""

    labels: np.ndarray
    entail: np.ndarray
    rs: np.ndarray
    contra: np.ndarray
    unsup: np.ndarray

    @classmethod
    def of(cls, items: Sequence[TuneItem]) -> _Columns:
        def col(values: list[float | None]) -> np.ndarray:
            return np.array([np.nan if v is None else v for v in values], dtype=float)

        return cls(
            labels=np.array([it.label for it in items], dtype=int),
            entail=col([it.min_entailment for it in items]),
            rs=col([it.retrieval_score for it in items]),
            contra=col([it.contradicted_share for it in items]),
            unsup=col([it.unsupported_share for it in items]),
        )


def _weakest(cols: _Columns, t: AdaptiveThreshold) -> np.ndarray:
    """Vectorised ``AdaptiveThreshold.threshold`` and the weakest-link rule."""
    if not t.enabled:
        thr = np.full(cols.rs.shape, t.fixed)
    else:
        z = np.clip(t.steepness * (cols.rs - t.midpoint), -60.0, 60.0)
        thr = t.t_low - (t.t_low - t.t_high) / (1.0 + np.exp(-z))
        thr = np.where(np.isnan(cols.rs), t.t_low, thr)
    with np.errstate(invalid="ignore"):
        out: np.ndarray = np.isnan(cols.entail) | (cols.entail < thr)
    return out.astype(int)


def _ratio_rule(cols: _Columns, contradiction: float, neutral: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        out: np.ndarray = (
            np.isnan(cols.contra) | (cols.contra > contradiction) | (cols.unsup > neutral)
        )
    return out.astype(int)


def predict_weakest_link(items: Sequence[TuneItem], threshold: AdaptiveThreshold) -> list[int]:
    """Weakest-link verdicts under ``threshold`` (1 = hallucinated)."""
    return [int(v) for v in _weakest(_Columns.of(items), threshold)]


def predict_ratio(items: Sequence[TuneItem], contradiction: float, neutral: float) -> list[int]:
    """Ratio-rule verdicts (1 = hallucinated)."""
    return [int(v) for v in _ratio_rule(_Columns.of(items), contradiction, neutral)]


def _balanced_accuracy(y: np.ndarray, p: np.ndarray) -> tuple[float, float]:
    """(balanced accuracy, F1) — the fast path of ``binary_metrics`` for the grid."""
    tp = float(((y == 1) & (p == 1)).sum())
    fp = float(((y == 0) & (p == 1)).sum())
    pos, neg = float((y == 1).sum()), float((y == 0).sum())
    rates = [
        r
        for r, d in ((tp / pos if pos else 0.0, pos), ((neg - fp) / neg if neg else 0.0, neg))
        if d
    ]
    f1 = 2 * tp / (tp + fp + pos) if tp + fp + pos else 0.0
    return (float(np.mean(rates)) if rates else 0.0), f1


class TunedSetting(BaseModel):
    """The best setting of one family, with its dev and test metrics."""

    family: str
    params: dict[str, float]
    dev: BinaryMetrics
    test: BinaryMetrics
    default_params: dict[str, float]
    default_dev: BinaryMetrics
    default_test: BinaryMetrics
    grid_size: int


class TuneReport(BaseModel):
    """Everything ``guardrail tune`` found, with the split it used."""

    dataset: str
    condition: str
    seed: int
    dev_fraction: float
    objective: str = "balanced_accuracy"
    dev_ids: list[str]
    test_ids: list[str]
    settings: list[TunedSetting] = Field(default_factory=list)
    replay_agreement: dict[str, float] = Field(default_factory=dict)
    """Per run: share of examples where replaying the run's own thresholds on its details
    gives the pipeline's prediction (1.0 = the replay is exact)."""


def _grid_search(
    dev: Sequence[TuneItem],
    test: Sequence[TuneItem],
    family: str,
    grid: list[dict[str, float]],
    default: dict[str, float],
    predict: Callable[[_Columns, dict[str, float]], np.ndarray],
) -> TunedSetting:
    d, t = _Columns.of(dev), _Columns.of(test)
    best: tuple[float, float] | None = None
    params = grid[0]
    for candidate in grid:
        key = _balanced_accuracy(d.labels, predict(d, candidate))
        if best is None or key > best:
            best, params = key, candidate

    def metrics(cols: _Columns, p: dict[str, float]) -> BinaryMetrics:
        return binary_metrics(cols.labels.tolist(), predict(cols, p).tolist())

    return TunedSetting(
        family=family,
        params=params,
        dev=metrics(d, params),
        test=metrics(t, params),
        default_params=default,
        default_dev=metrics(d, default),
        default_test=metrics(t, default),
        grid_size=len(grid),
    )


def _adaptive(cols: _Columns, p: dict[str, float]) -> np.ndarray:
    return _weakest(cols, AdaptiveThreshold(**p))


def _fixed(cols: _Columns, p: dict[str, float]) -> np.ndarray:
    return _weakest(cols, AdaptiveThreshold(enabled=False, fixed=p["fixed"]))


def _ratio(cols: _Columns, p: dict[str, float]) -> np.ndarray:
    return _ratio_rule(cols, p["contradiction_ratio"], p["neutral_ratio"])


def _steps(lo: float, hi: float, step: float) -> list[float]:
    return [round(v, 4) for v in np.arange(lo, hi + 1e-9, step)]


def tune_weakest_link(
    dev: Sequence[TuneItem], test: Sequence[TuneItem], steepness: float = 12.0
) -> list[TunedSetting]:
    """Best fixed threshold and best T(rs) (``t_low``, ``t_high``, ``midpoint``) on ``dev``."""
    d = AdaptiveThreshold()
    fixed_grid = [{"fixed": t} for t in _steps(0.05, 0.95, 0.05)]
    adaptive_grid = [
        {"t_low": lo, "t_high": hi, "midpoint": mid, "steepness": steepness}
        for lo, hi, mid in itertools.product(
            _steps(0.1, 0.95, 0.05), _steps(0.05, 0.9, 0.05), _steps(0.1, 0.8, 0.05)
        )
        if hi <= lo
    ]
    default_adaptive = {
        "t_low": d.t_low,
        "t_high": d.t_high,
        "midpoint": d.midpoint,
        "steepness": d.steepness,
    }
    return [
        _grid_search(dev, test, "fixed", fixed_grid, {"fixed": d.fixed}, _fixed),
        _grid_search(dev, test, "adaptive", adaptive_grid, default_adaptive, _adaptive),
    ]


def tune_ratio(dev: Sequence[TuneItem], test: Sequence[TuneItem]) -> TunedSetting:
    """Best ratio-rule thresholds on ``dev``."""
    grid = [
        {"contradiction_ratio": c, "neutral_ratio": n}
        for c, n in itertools.product(_steps(0.0, 0.9, 0.05), _steps(0.0, 0.95, 0.05))
    ]
    return _grid_search(
        dev, test, "ratio", grid, {"contradiction_ratio": 0.3, "neutral_ratio": 0.8}, _ratio
    )


def tune(
    dataset: str,
    weakest: Sequence[TuneItem],
    ratio: Sequence[TuneItem] | None,
    dev_fraction: float,
    seed: int,
    condition: str,
) -> TuneReport:
    """Split ``weakest`` (the ratio items must be the same examples), tune, score on test."""
    ids = [it.id for it in weakest]
    dev_ids, test_ids = dev_test_split(ids, [it.label for it in weakest], dev_fraction, seed)
    dev_set = set(dev_ids)

    def parts(items: Sequence[TuneItem]) -> tuple[list[TuneItem], list[TuneItem]]:
        return [i for i in items if i.id in dev_set], [i for i in items if i.id not in dev_set]

    dev, test = parts(weakest)
    settings = tune_weakest_link(dev, test)
    if ratio is not None:
        if sorted(i.id for i in ratio) != sorted(ids):
            raise InputError("the ratio run and the weakest-link run cover different examples")
        settings.append(tune_ratio(*parts(ratio)))
    return TuneReport(
        dataset=dataset,
        condition=condition,
        seed=seed,
        dev_fraction=dev_fraction,
        dev_ids=dev_ids,
        test_ids=test_ids,
        settings=settings,
    )


def replay_agreement(
    items: Sequence[TuneItem],
    predictions: dict[str, int],
    predict: Callable[[_Columns], np.ndarray],
) -> float:
    """Share of ``items`` whose replayed prediction equals the pipeline's ``predictions``."""
    replayed = predict(_Columns.of(items))
    same = [int(p) == predictions[it.id] for it, p in zip(items, replayed, strict=True)]
    return sum(same) / len(same) if same else 1.0


def check_replay(
    report: TuneReport,
    weakest: Sequence[TuneItem],
    weakest_predictions: dict[str, int],
    weakest_threshold: AdaptiveThreshold,
    ratio: Sequence[TuneItem] | None = None,
    ratio_predictions: dict[str, int] | None = None,
    ratio_thresholds: tuple[float, float] = (0.3, 0.8),
) -> TuneReport:
    """``report`` with the replay agreement of the runs it was tuned on."""
    agreement = {
        "weakest_link": replay_agreement(
            weakest, weakest_predictions, lambda c: _weakest(c, weakest_threshold)
        )
    }
    if ratio is not None and ratio_predictions is not None:
        agreement["ratio"] = replay_agreement(
            ratio, ratio_predictions, lambda c: _ratio_rule(c, *ratio_thresholds)
        )
    return report.model_copy(update={"replay_agreement": agreement})


def format_report(report: TuneReport) -> str:
    """A plain-text table of the tuned settings (dev and held-out test)."""
    lines = [
        f"tune {report.dataset} ({report.condition}): dev {len(report.dev_ids)} / test "
        f"{len(report.test_ids)} examples, seed {report.seed}, dev fraction {report.dev_fraction}",
        f"{'family':<9} {'setting':<8} {'dev BAcc':>8} {'test BAcc':>9} {'test F1':>7}  params",
    ]
    for s in report.settings:
        for tag, params, dev, test in (
            ("default", s.default_params, s.default_dev, s.default_test),
            ("tuned", s.params, s.dev, s.test),
        ):
            shown: dict[str, Any] = {k: v for k, v in params.items() if k != "steepness"}
            lines.append(
                f"{s.family:<9} {tag:<8} {dev.balanced_accuracy:>8.3f} "
                f"{test.balanced_accuracy:>9.3f} {test.f1:>7.3f}  {shown}"
            )
    if report.replay_agreement:
        shown_agreement = ", ".join(f"{k} {v:.3f}" for k, v in report.replay_agreement.items())
        lines.append(f"replay of the pipeline's own verdicts agrees on: {shown_agreement}")
    return "\n".join(lines)
