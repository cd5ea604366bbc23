"""Temperature scaling of the verifier's probabilities, fitted on a dev split.

The verifier gives three probabilities; their logs are its logits up to a constant, so
``softmax(log p / T)`` is the temperature-scaled prediction. ``T`` is fitted by minimising the
negative log-likelihood of the dev labels (scipy, bounded search over ``log T``), where a
faithful example (label 0) should be *entailment* and a hallucinated one *not entailment*
(neutral + contradiction). Reliability diagrams and the expected calibration error (ECE, 10
equal-width bins of P(entailment)) are reported before and after on the held-out test part.

Temperature scaling keeps the argmax label but moves P(entailment) relative to the verdict
threshold, so the report also gives balanced accuracy at the fixed 0.5 threshold. It is
optional: whether it helps is decided on the test part and written in the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from guardrail.errors import InputError
from guardrail.evaluation.metrics import binary_metrics

_EPS = 1e-7


def scaled_probs(probs: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(log(probs) / T)`` row-wise; ``probs`` has shape ``(n, 3)`` (e, n, c)."""
    logits = np.log(np.clip(probs, _EPS, 1.0)) / temperature
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    out: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return out


def entailment_nll(probs: np.ndarray, labels: np.ndarray, temperature: float) -> float:
    """Mean NLL of "label 0 = entailment, label 1 = not entailment" at ``temperature``."""
    p_entail = np.clip(scaled_probs(probs, temperature)[:, 0], _EPS, 1 - _EPS)
    p_true = np.where(labels == 0, p_entail, 1.0 - p_entail)
    return float(-np.log(p_true).mean())


def fit_temperature(probs: np.ndarray, labels: np.ndarray) -> float:
    """The ``T`` in [0.05, 20] minimising the dev NLL."""
    from scipy.optimize import minimize_scalar

    if len(probs) == 0:
        raise InputError("no examples to fit a temperature on")
    res = minimize_scalar(
        lambda log_t: entailment_nll(probs, labels, math.exp(log_t)),
        bounds=(math.log(0.05), math.log(20.0)),
        method="bounded",
        options={"xatol": 1e-4},
    )
    return float(math.exp(res.x))


class ReliabilityBin(BaseModel):
    lower: float
    upper: float
    count: int
    confidence: float
    """Mean predicted P(entailment) in the bin."""
    accuracy: float
    """Share of faithful (label 0) examples in the bin."""


def reliability(p_entail: np.ndarray, labels: np.ndarray, bins: int = 10) -> list[ReliabilityBin]:
    """Equal-width bins of P(entailment) against the observed share of faithful examples."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.clip(np.digitize(p_entail, edges[1:-1]), 0, bins - 1)
    out = []
    for b in range(bins):
        mask = idx == b
        n = int(mask.sum())
        out.append(
            ReliabilityBin(
                lower=float(edges[b]),
                upper=float(edges[b + 1]),
                count=n,
                confidence=float(p_entail[mask].mean()) if n else 0.0,
                accuracy=float((labels[mask] == 0).mean()) if n else 0.0,
            )
        )
    return out


def ece(p_entail: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: count-weighted mean |confidence − accuracy| over bins."""
    total = len(p_entail)
    if total == 0:
        return 0.0
    return sum(
        b.count / total * abs(b.confidence - b.accuracy)
        for b in reliability(p_entail, labels, bins)
    )


class CalibrationPart(BaseModel):
    n: int
    nll: float
    ece: float
    balanced_accuracy_at_05: float


class CalibrationReport(BaseModel):
    dataset: str
    condition: str
    seed: int
    dev_fraction: float
    temperature: float
    dev_before: CalibrationPart
    dev_after: CalibrationPart
    test_before: CalibrationPart
    test_after: CalibrationPart
    helps: bool
    """True when scaling lowers both the test NLL and the test ECE."""
    verdict: str
    dev_ids: list[str]
    test_ids: list[str]


def _part(probs: np.ndarray, labels: np.ndarray, temperature: float) -> CalibrationPart:
    p = scaled_probs(probs, temperature)[:, 0]
    return CalibrationPart(
        n=len(labels),
        nll=entailment_nll(probs, labels, temperature),
        ece=ece(p, labels),
        balanced_accuracy_at_05=binary_metrics(
            labels.tolist(), (p < 0.5).astype(int).tolist()
        ).balanced_accuracy,
    )


def calibrate(
    dataset: str,
    condition: str,
    ids: Sequence[str],
    probs: np.ndarray,
    labels: np.ndarray,
    dev_fraction: float,
    seed: int,
) -> CalibrationReport:
    """Fit T on the dev part of a stratified split; report both parts before and after."""
    from guardrail.evaluation.tune import dev_test_split

    dev_ids, test_ids = dev_test_split(list(ids), labels.tolist(), dev_fraction, seed)
    dev_set = set(dev_ids)
    dev = np.array([i in dev_set for i in ids])
    t = fit_temperature(probs[dev], labels[dev])
    test_before = _part(probs[~dev], labels[~dev], 1.0)
    test_after = _part(probs[~dev], labels[~dev], t)
    helps = test_after.nll < test_before.nll and test_after.ece < test_before.ece
    verdict = (
        f"T = {t:.3f}: test NLL {test_before.nll:.3f} → {test_after.nll:.3f}, "
        f"ECE {test_before.ece:.3f} → {test_after.ece:.3f}; "
        + (
            "temperature scaling helps here."
            if helps
            else "temperature scaling does not help here."
        )
    )
    return CalibrationReport(
        dataset=dataset,
        condition=condition,
        seed=seed,
        dev_fraction=dev_fraction,
        temperature=t,
        dev_before=_part(probs[dev], labels[dev], 1.0),
        dev_after=_part(probs[dev], labels[dev], t),
        test_before=test_before,
        test_after=test_after,
        helps=helps,
        verdict=verdict,
        dev_ids=dev_ids,
        test_ids=test_ids,
    )


def plot_reliability(
    probs: np.ndarray, labels: np.ndarray, temperature: float, path: Path, title: str
) -> None:
    """Reliability diagram of the test part before and after scaling."""
    from guardrail.evaluation.analyze import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 5))
    for t, name in ((1.0, "before"), (temperature, f"after (T={temperature:.2f})")):
        p = scaled_probs(probs, t)[:, 0]
        bins = [b for b in reliability(p, labels) if b.count]
        ax.plot(
            [b.confidence for b in bins],
            [b.accuracy for b in bins],
            marker="o",
            label=f"{name}, ECE {ece(p, labels):.3f}",
        )
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax.set(xlabel="predicted P(entailment)", ylabel="observed share faithful", xlim=(0, 1))
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def probs_from_details(path: Path) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Ids, (n, 3) probabilities and labels from a ``details.jsonl`` (the
    weakest claim per example, as the weakest-link verdict uses; examples without a scored claim are left out)."""
    import json

    if not path.exists():
        raise InputError(f"details file not found: {path}")
    ids: list[str] = []
    rows: list[list[float]] = []
    labels: list[int] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row: dict[str, Any] = json.loads(line)
        claims = row.get("claims") or []
        if not claims:
            continue
        c = min(claims, key=lambda x: x["entailment"])
        ids.append(row["id"])
        rows.append([c["entailment"], c["neutral"], c["contradiction"]])
        labels.append(int(row["label"]))
    return ids, np.asarray(rows, dtype=float).reshape(-1, 3), np.asarray(labels, dtype=int)
