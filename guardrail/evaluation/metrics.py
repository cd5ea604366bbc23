"""Binary detection metrics, threshold sweeps and McNemar's test, as pure functions.

Convention everywhere: label and prediction 1 = hallucinated (the positive class), and a
higher ``score`` means "more likely hallucinated".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel


class BinaryMetrics(BaseModel):
    """Metrics of hard predictions (and AUROC of the scores) against labels."""

    n: int
    positives: int
    """Examples labelled hallucinated."""
    balanced_accuracy: float
    accuracy: float
    precision: float
    recall: float
    f1: float
    auroc: float | None
    """``None`` when only one label is present."""
    tp: int
    fp: int
    tn: int
    fn: int


def _arrays(labels: Sequence[int], other: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(labels, dtype=int)
    x = np.asarray(other, dtype=float)
    if y.shape != x.shape:
        raise ValueError(f"labels ({y.shape}) and values ({x.shape}) differ in length")
    if y.size and not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    return y, x


def auroc(labels: Sequence[int], scores: Sequence[float]) -> float | None:
    """Area under the ROC curve (Mann–Whitney with average ranks for ties)."""
    y, s = _arrays(labels, scores)
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(s.size, dtype=float)
    sorted_s = s[order]
    i = 0
    while i < s.size:
        j = i
        while j + 1 < s.size and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    rank_sum = float(ranks[y == 1].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def binary_metrics(
    labels: Sequence[int], predictions: Sequence[int], scores: Sequence[float] | None = None
) -> BinaryMetrics:
    """Balanced accuracy, precision, recall, F1 (positive = hallucinated) and AUROC."""
    y, p = _arrays(labels, predictions)
    p = p.astype(int)
    tp = int(((y == 1) & (p == 1)).sum())
    fp = int(((y == 0) & (p == 1)).sum())
    tn = int(((y == 0) & (p == 0)).sum())
    fn = int(((y == 1) & (p == 0)).sum())
    tpr = tp / (tp + fn) if tp + fn else 0.0
    tnr = tn / (tn + fp) if tn + fp else 0.0
    present = [r for r, d in ((tpr, tp + fn), (tnr, tn + fp)) if d]
    precision = tp / (tp + fp) if tp + fp else 0.0
    f1 = 2 * precision * tpr / (precision + tpr) if precision + tpr else 0.0
    return BinaryMetrics(
        n=int(y.size),
        positives=tp + fn,
        balanced_accuracy=float(np.mean(present)) if present else 0.0,
        accuracy=(tp + tn) / y.size if y.size else 0.0,
        precision=precision,
        recall=tpr,
        f1=f1,
        auroc=auroc(labels, scores) if scores is not None else None,
        tp=tp,
        fp=fp,
        tn=tn,
        fn=fn,
    )


def roc_curve(labels: Sequence[int], scores: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """False- and true-positive rates at every distinct score (for plotting)."""
    y, s = _arrays(labels, scores)
    thresholds = np.unique(s)[::-1]
    n_pos = max(int(y.sum()), 1)
    n_neg = max(int(y.size - y.sum()), 1)
    fpr = [0.0]
    tpr = [0.0]
    for t in thresholds:
        pred = s >= t
        tpr.append(float((pred & (y == 1)).sum()) / n_pos)
        fpr.append(float((pred & (y == 0)).sum()) / n_neg)
    return np.asarray(fpr), np.asarray(tpr)


def threshold_sweep(
    labels: Sequence[int], nli_scores: Sequence[float], thresholds: Sequence[float]
) -> list[BinaryMetrics]:
    """Metrics of the rule "hallucinated when nli_score < t" for each ``t``."""
    y, s = _arrays(labels, nli_scores)
    return [binary_metrics(y.tolist(), (s < t).astype(int).tolist()) for t in thresholds]


class McNemarResult(BaseModel):
    """McNemar's test on paired predictions of two systems over the same examples."""

    a: str
    b: str
    n: int
    a_only_correct: int
    """Examples system ``a`` got right and ``b`` got wrong."""
    b_only_correct: int
    method: str
    """``exact`` (binomial, used when the discordant count is below 25) or ``chi2_cc``."""
    statistic: float | None
    p_value: float


def mcnemar(
    labels: Sequence[int],
    pred_a: Sequence[int],
    pred_b: Sequence[int],
    a: str = "a",
    b: str = "b",
    exact: bool | None = None,
) -> McNemarResult:
    """McNemar's test: exact two-sided binomial, or chi-square with continuity correction.

    ``exact=None`` picks the exact test when fewer than 25 examples are discordant.
    """
    from scipy import stats

    y = np.asarray(labels, dtype=int)
    ca = np.asarray(pred_a, dtype=int) == y
    cb = np.asarray(pred_b, dtype=int) == y
    if not (y.shape == ca.shape == cb.shape):
        raise ValueError("labels and both prediction lists must have the same length")
    n01 = int((ca & ~cb).sum())
    n10 = int((~ca & cb).sum())
    discordant = n01 + n10
    use_exact = discordant < 25 if exact is None else exact
    if discordant == 0:
        return McNemarResult(
            a=a, b=b, n=int(y.size), a_only_correct=n01, b_only_correct=n10,
            method="exact" if use_exact else "chi2_cc", statistic=0.0, p_value=1.0,
        )  # fmt: skip
    if use_exact:
        p = float(stats.binomtest(min(n01, n10), discordant, 0.5).pvalue)
        stat: float | None = None
        method = "exact"
    else:
        stat = (abs(n01 - n10) - 1.0) ** 2 / discordant
        p = float(stats.chi2.sf(stat, df=1))
        method = "chi2_cc"
    return McNemarResult(
        a=a,
        b=b,
        n=int(y.size),
        a_only_correct=n01,
        b_only_correct=n10,
        method=method,
        statistic=stat,
        p_value=min(1.0, p) if not math.isnan(p) else 1.0,
    )
