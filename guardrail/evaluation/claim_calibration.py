"""Fit the claim calibrator and its cut-offs for any verifier from labelled claims.

Input rows (JSONL, one per claim): ``{"evidence": "..." | ["...", ...], "claim": "...",
"label": 1 | 0 | true | false | "supported" | "unsupported"}``, optionally ``"dataset"``
(sets are weighted equally) and ``"group"`` (rows of one group stay on one side of the
held-out split; default: the evidence text).

Each claim is scored exactly as the pipeline scores it — its evidence windowed for the
verifier, candidate windows chosen, pairs scored, the calibration features of
:mod:`guardrail.hallucination.calibration` computed (:func:`~guardrail.hallucination.detector.
detect`) — so the fitted weights see the features they will see at run time. The rows are
split by a hash of their group into a fitting part and a held-out part (``holdout`` share);
on the fitting part the logistic model is fitted (each (set, label) group weighted equally),
the claim threshold chosen for claim-level balanced accuracy and ``remove_below`` chosen as
the largest value on a 0.05 grid whose removals are at least 90 % labelled unsupported. The
held-out part reports before (the verifier's own probability at 0.5, and the calibration the
verifier had, if any) and after. The file written names its verifier (``meta.verifier_id``),
so :func:`~guardrail.hallucination.calibration_registry.calibration_for` applies it to that
verifier only.

Example::

    guardrail calibrate-claims --verifier checkpoints/verifier-v4 --data dev_claims.jsonl \\
        --out calibration-v4.json
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import InputError
from guardrail.hallucination.calibration import FEATURES, ClaimCalibrator, fit_logistic

logger = logging.getLogger(__name__)

DEFAULT_FEATURES: tuple[str, ...] = (
    "logit_entail",
    "contradiction",
    "missing_specific",
    "unplaced_share",
)
"""The features of the shipped calibration (the others fit noise on a few hundred claims);
``guardrail calibrate-claims --features`` defaults to the same."""


@dataclass(frozen=True)
class ScoredClaim:
    """One labelled claim after the pipeline scored it."""

    dataset: str
    group: str
    supported: bool
    features: dict[str, float]
    own_p: float
    """The verifier's own probability of support (best window's entailment)."""


def _label(value: Any, k: int) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("supported", "unsupported"):
        return value.strip().lower() == "supported"
    raise InputError(f"row {k}: label must be 1/0, true/false or supported/unsupported")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Labelled rows from a JSONL file (validated: evidence, claim, label)."""
    rows: list[dict[str, Any]] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"could not read {path}: {exc}") from exc
    for k, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{path}:{k}: not JSON: {exc}") from exc
        evidence = row.get("evidence")
        passages = [evidence] if isinstance(evidence, str) else evidence
        if not isinstance(passages, list) or not all(isinstance(p, str) for p in passages):
            raise InputError(f"{path}:{k}: evidence must be a string or a list of strings")
        if not isinstance(row.get("claim"), str) or not row["claim"].strip():
            raise InputError(f"{path}:{k}: claim must be a non-empty string")
        rows.append(
            {
                "passages": passages,
                "claim": row["claim"],
                "supported": _label(row.get("label"), k),
                "dataset": str(row.get("dataset", "data")),
                "group": str(
                    row.get("group")
                    or hashlib.sha256("\n".join(passages).encode()).hexdigest()[:16]
                ),
            }
        )
    if not rows:
        raise InputError(f"{path} holds no rows")
    return rows


def score_rows(
    rows: Sequence[dict[str, Any]], verifier: Any, config: Any = None
) -> list[ScoredClaim]:
    """Score each row's claim against its evidence as the pipeline does (no embedder, no KB)."""
    from guardrail.config import GuardrailConfig
    from guardrail.hallucination.detector import detect
    from guardrail.hallucination.evidence import gather_evidence
    from guardrail.inputs import GuardInput
    from guardrail.report import Claim, Span
    from guardrail.stages.hallucination import window_size

    whole = config or GuardrailConfig()
    cfg = whole.hallucination.model_copy(update={"checkworthiness": False})
    size, stride = window_size(cfg.window_tokens, cfg.window_stride, verifier)
    counter = getattr(verifier, "count_tokens", None)
    out: list[ScoredClaim] = []
    for n, row in enumerate(rows, 1):
        claim_text = row["claim"].strip()
        data = GuardInput(response=claim_text, passages=[{"text": p} for p in row["passages"]])
        evidence = gather_evidence(data, size, stride, counter if callable(counter) else None)
        claim = Claim(text=claim_text, span=Span(start=0, end=len(claim_text)), language="en")
        result = detect(claim_text, [claim], evidence, verifier, cfg, None, ladder=whole.confidence)
        [scored] = result.claims
        if scored.features is None or scored.scores is None:
            logger.info("row %d not scored (%s)", n, scored.reason)
            continue
        out.append(
            ScoredClaim(
                row["dataset"],
                row["group"],
                row["supported"],
                dict(scored.features),
                float(scored.scores.entailment),
            )
        )
        if n % 100 == 0:
            logger.info("scored %d / %d claims", n, len(rows))
    return out


def held_out(group: str, share: float) -> bool:
    """Whether ``group`` falls in the held-out part (SHA-256, deterministic)."""
    bucket = int(hashlib.sha256(group.encode("utf-8")).hexdigest()[:8], 16) / 16**8
    return bucket < share


def balanced_accuracy(p: Sequence[float], supported: Sequence[bool], threshold: float) -> float:
    """Mean recall of supported (p ≥ threshold) and unsupported (p < threshold) claims."""
    pos = [x >= threshold for x, s in zip(p, supported, strict=True) if s]
    neg = [x < threshold for x, s in zip(p, supported, strict=True) if not s]
    parts = [sum(v) / len(v) for v in (pos, neg) if v]
    return round(sum(parts) / len(parts), 4) if parts else float("nan")


def _quality(p: Sequence[float], supported: Sequence[bool], threshold: float) -> dict[str, float]:
    from guardrail.evaluation.calibrate import ece

    probs = np.asarray(p, dtype=np.float64)
    gold = np.asarray(supported, dtype=np.float64)
    return {
        "balanced_accuracy": balanced_accuracy(p, supported, threshold),
        "threshold": round(threshold, 4),
        "brier": round(float(np.mean((probs - gold) ** 2)), 4),
        "ece": round(float(ece(probs, np.where(gold > 0, 0, 1))), 4),
    }


def choose_threshold(p: Sequence[float], supported: Sequence[bool]) -> float:
    """The threshold on a 0.01 grid maximising claim-level balanced accuracy (ties: the one
    nearest 0.5)."""
    grid = [round(0.05 + 0.01 * i, 2) for i in range(91)]
    return max(grid, key=lambda t: (balanced_accuracy(p, supported, t), -abs(t - 0.5)))


def choose_remove_below(
    p: Sequence[float], supported: Sequence[bool], threshold: float, precision: float = 0.9
) -> float | None:
    """The largest value on a 0.05 grid (≤ threshold) whose removals are ≥ ``precision``
    labelled unsupported, with at least 5 removals; ``None`` if none qualifies."""
    best = None
    for v in [round(0.05 * i, 2) for i in range(1, 20)]:
        if v > threshold:
            break
        removed = [s for x, s in zip(p, supported, strict=True) if x < v]
        if len(removed) >= 5 and sum(not s for s in removed) / len(removed) >= precision:
            best = v
    return best


def fit_claims(
    scored: Sequence[ScoredClaim],
    verifier_name: str,
    *,
    features: Sequence[str] = DEFAULT_FEATURES,
    holdout: float = 0.3,
    l2: float = 10.0,
    previous: ClaimCalibrator | None = None,
    source: str = "",
) -> tuple[ClaimCalibrator, dict[str, Any]]:
    """Fit on the non-held-out part; the calibrator and the before/after report."""
    unknown = set(features) - set(FEATURES)
    if unknown:
        raise InputError(f"unknown features {sorted(unknown)}; known: {', '.join(FEATURES)}")
    fit = [r for r in scored if not held_out(r.group, holdout)]
    test = [r for r in scored if held_out(r.group, holdout)]
    if len({r.supported for r in fit}) < 2:
        raise InputError("the fitting part needs supported and unsupported claims")
    counts = Counter((r.dataset, r.supported) for r in fit)
    weights = [len(fit) / (len(counts) * counts[(r.dataset, r.supported)]) for r in fit]
    rows = [{k: r.features.get(k, 0.0) for k in features} for r in fit]
    coef, bias = fit_logistic(rows, [int(r.supported) for r in fit], l2=l2, sample_weights=weights)
    coef = {k: v for k, v in coef.items() if k in features}
    draft = ClaimCalibrator(coef, bias, 0.5)
    p_fit = [draft.probability(r.features) for r in fit]
    threshold = choose_threshold(p_fit, [r.supported for r in fit])
    remove = choose_remove_below(p_fit, [r.supported for r in fit], threshold)
    report: dict[str, Any] = {"fit_claims": len(fit), "heldout_claims": len(test)}
    if test:
        gold = [r.supported for r in test]
        report["before_uncalibrated"] = _quality([r.own_p for r in test], gold, 0.5)
        if previous is not None:
            p_prev = [previous.probability(r.features) for r in test]
            report["before_previous_calibration"] = _quality(p_prev, gold, previous.threshold)
        p_after = [draft.probability(r.features) for r in test]
        report["after"] = _quality(p_after, gold, threshold)
    meta = {
        "verifier_id": verifier_name,
        "fitted_on": source,
        "claims": len(fit),
        "groups": {
            f"{d}:{'supported' if s else 'unsupported'}": n for (d, s), n in sorted(counts.items())
        },
        "threshold_rule": "maximises claim-level balanced accuracy on the fitting part",
        "remove_below_rule": "largest 0.05 step with removals >= 90 % labelled unsupported (fitting part)",
        "heldout": report,
        "features": list(features),
        "l2": l2,
        "date": date.today().isoformat(),
    }
    return ClaimCalibrator(coef, bias, threshold, meta, remove), report
