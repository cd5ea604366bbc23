"""The on-disk layout of evaluation results, written by ``guardrail eval`` and read by
``guardrail analyze``::

    OUT/
      cache.sqlite                      verifier scores shared by every condition and run
      <dataset>/
        run.json                        dataset, data dir, limit, verifier, conditions, timings
        <condition>/
          predictions.csv               id, label, score, prediction, nli_score, threshold,
                                        retrieval_score, verdict, error
          details.jsonl                 per example: the claims' best-window scores and status,
                                        the aggregated NLI score, the retrieval score
          metrics.json                  balanced accuracy, F1, precision, recall, AUROC, …
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from guardrail.errors import InputError
from guardrail.evaluation.metrics import BinaryMetrics, binary_metrics
from guardrail.report import VerdictLabel


class ClaimScore(BaseModel):
    """What the run kept of one claim: best-window probabilities and status."""

    entailment: float
    neutral: float
    contradiction: float
    status: str


class ExampleResult(BaseModel):
    """One example under one condition."""

    id: str
    label: int
    prediction: int
    score: float
    nli_score: float | None = None
    threshold: float | None = None
    retrieval_score: float | None = None
    verdict: str = VerdictLabel.UNVERIFIED.value
    claims: list[ClaimScore] = Field(default_factory=list)
    error: str | None = None


CSV_FIELDS = (
    "id",
    "label",
    "score",
    "prediction",
    "nli_score",
    "threshold",
    "retrieval_score",
    "verdict",
    "error",
)


class ConditionMetrics(BaseModel):
    """The ``metrics.json`` of one condition on one dataset."""

    dataset: str
    condition: str
    description: str = ""
    engine: str = "pipeline"
    """``pipeline``: the conditions run through the real Guardrail."""
    metrics: BinaryMetrics | None = None
    threshold: dict[str, Any] = Field(default_factory=dict)
    """The threshold settings used (fixed value or T(rs) parameters, ratio thresholds)."""
    unverified: int = 0
    """Examples whose verdict was UNVERIFIED (counted as hallucinated: fail-closed)."""
    applicable: bool = True
    reason: str | None = None
    """Why the condition is not applicable, when it is not."""
    stage_failures: int = 0
    """Examples on which a pipeline stage failed (their verdict is UNVERIFIED)."""
    seconds: float = 0.0


def write_condition(
    folder: Path, results: Sequence[ExampleResult], info: ConditionMetrics
) -> ConditionMetrics:
    """Write predictions, details and metrics of one condition; return the metrics."""
    folder.mkdir(parents=True, exist_ok=True)
    if results:
        with (folder / "predictions.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
            writer.writeheader()
            for r in results:
                writer.writerow({k: getattr(r, k) for k in CSV_FIELDS})
        with (folder / "details.jsonl").open("w", encoding="utf-8") as fh:
            for r in results:
                fh.write(
                    r.model_dump_json(
                        include={"id", "label", "retrieval_score", "nli_score", "claims"}
                    )
                )
                fh.write("\n")
        info = info.model_copy(
            update={
                "metrics": binary_metrics(
                    [r.label for r in results],
                    [r.prediction for r in results],
                    [r.score for r in results],
                ),
                "unverified": sum(r.verdict == "UNVERIFIED" for r in results),
                "stage_failures": sum(" failed: " in (r.error or "") for r in results),
            }
        )
    (folder / "metrics.json").write_text(info.model_dump_json(indent=2), encoding="utf-8")
    return info


def _opt_float(value: str) -> float | None:
    return float(value) if value not in ("", "None") else None


def read_predictions(path: Path) -> list[ExampleResult]:
    """Read a ``predictions.csv`` back (claims are in ``details.jsonl``, not here)."""
    if not path.exists():
        raise InputError(f"predictions file not found: {path}")
    out: list[ExampleResult] = []
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out.append(
                ExampleResult(
                    id=row["id"],
                    label=int(row["label"]),
                    prediction=int(row["prediction"]),
                    score=float(row["score"]),
                    nli_score=_opt_float(row.get("nli_score", "")),
                    threshold=_opt_float(row.get("threshold", "")),
                    retrieval_score=_opt_float(row.get("retrieval_score", "")),
                    verdict=row.get("verdict") or "UNVERIFIED",
                    error=row.get("error") or None,
                )
            )
    return out


class ConditionRun(BaseModel):
    """One condition's results as read from disk."""

    dataset: str
    condition: str
    metrics: ConditionMetrics
    results: list[ExampleResult]


def read_results(root: Path) -> list[ConditionRun]:
    """Every ``<dataset>/<condition>/`` with a ``metrics.json`` under ``root`` (sorted)."""
    if not root.is_dir():
        raise InputError(f"results directory not found: {root}")
    runs: list[ConditionRun] = []
    for metrics_file in sorted(root.glob("*/*/metrics.json")):
        try:
            info = ConditionMetrics.model_validate_json(metrics_file.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(f"{metrics_file}: not a guardrail metrics file ({exc})") from exc
        preds = metrics_file.parent / "predictions.csv"
        results = read_predictions(preds) if preds.exists() else []
        runs.append(
            ConditionRun(
                dataset=info.dataset, condition=info.condition, metrics=info, results=results
            )
        )
    from guardrail.evaluation.conditions import DEFAULT_CONDITIONS

    order = {name: i for i, name in enumerate(DEFAULT_CONDITIONS)}
    runs.sort(key=lambda r: (r.dataset, order.get(r.condition, len(order)), r.condition))
    if not runs:
        raise InputError(f"no */*/metrics.json under {root}; run `guardrail eval` first")
    return runs


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON (folders created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
