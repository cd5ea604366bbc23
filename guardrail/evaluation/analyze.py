"""Turn an evaluation results directory into plots, McNemar tests and a markdown report.

For each dataset: ROC curves of every condition, score histograms by label, balanced accuracy
and F1 against a fixed NLI threshold, and McNemar's test between every pair of conditions
(same examples, paired predictions). Across datasets: bars of balanced accuracy per condition.
Plots are PNG files written with matplotlib's Agg backend (no display needed).

Example::

    guardrail analyze results/ --out results/report
"""

from __future__ import annotations

import itertools
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.evaluation.metrics import McNemarResult, mcnemar, roc_curve, threshold_sweep
from guardrail.evaluation.results import ConditionRun, read_results, write_json

logger = logging.getLogger(__name__)


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        from guardrail.errors import MissingDependencyError

        raise MissingDependencyError("matplotlib", "eval") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)


def plot_roc(runs: list[ConditionRun], path: Path) -> None:
    """ROC curves of the conditions of one dataset."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 5))
    for run in runs:
        fpr, tpr = roc_curve([r.label for r in run.results], [r.score for r in run.results])
        auc = run.metrics.metrics.auroc if run.metrics.metrics else None
        ax.plot(fpr, tpr, label=f"{run.condition} (AUROC {auc:.3f})" if auc else run.condition)
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax.set(xlabel="false-positive rate", ylabel="true-positive rate (hallucinations caught)")
    ax.set_title(f"ROC — {runs[0].dataset}")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_histograms(runs: list[ConditionRun], path: Path) -> None:
    """Histograms of the NLI score by label, one panel per condition."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(runs), figsize=(3.2 * len(runs), 3), squeeze=False)
    bins = np.linspace(0.0, 1.0, 21)
    for ax, run in zip(axes[0], runs, strict=True):
        for label, name, color in ((0, "faithful", "tab:green"), (1, "hallucinated", "tab:red")):
            vals = [
                r.nli_score for r in run.results if r.label == label and r.nli_score is not None
            ]
            ax.hist(vals, bins=bins, alpha=0.55, label=name, color=color)
        ax.set_title(run.condition, fontsize=9)
        ax.set_xlabel("NLI score")
    axes[0][0].set_ylabel("examples")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"NLI score by label — {runs[0].dataset}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_threshold_sweep(runs: list[ConditionRun], path: Path) -> None:
    """Balanced accuracy (solid) and F1 (dashed) against a fixed NLI threshold."""
    plt = _pyplot()
    ts = np.linspace(0.02, 0.98, 49)
    fig, ax = plt.subplots(figsize=(6, 4))
    for run in runs:
        pairs = [(r.label, r.nli_score) for r in run.results if r.nli_score is not None]
        if not pairs:
            continue
        sweep = threshold_sweep([p[0] for p in pairs], [p[1] for p in pairs], ts.tolist())
        (line,) = ax.plot(ts, [m.balanced_accuracy for m in sweep], label=run.condition)
        ax.plot(ts, [m.f1 for m in sweep], linestyle="--", color=line.get_color(), alpha=0.6)
    ax.set(xlabel="threshold on NLI score", ylabel="balanced accuracy (—) / F1 (--)")
    ax.set_title(f"Metric vs threshold — {runs[0].dataset}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_dataset_bars(by_dataset: dict[str, list[ConditionRun]], path: Path) -> None:
    """Balanced accuracy per dataset and condition."""
    plt = _pyplot()
    datasets = sorted(by_dataset)
    conditions = sorted({r.condition for runs in by_dataset.values() for r in runs})
    width = 0.8 / max(len(conditions), 1)
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(datasets) * max(1, len(conditions) / 3), 4))
    for k, cond in enumerate(conditions):
        values = []
        for ds in datasets:
            run = next((r for r in by_dataset[ds] if r.condition == cond), None)
            m = run.metrics.metrics if run is not None else None
            values.append(m.balanced_accuracy if m is not None else 0.0)
        ax.bar(np.arange(len(datasets)) + k * width, values, width, label=cond)
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=1)
    ax.set_xticks(np.arange(len(datasets)) + width * (len(conditions) - 1) / 2, datasets)
    ax.set(ylabel="balanced accuracy", ylim=(0, 1))
    ax.legend(fontsize=8, ncol=min(len(conditions), 3))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def pairwise_mcnemar(runs: list[ConditionRun]) -> list[McNemarResult]:
    """McNemar's test between every pair of conditions, on the examples both have."""
    out = []
    for a, b in itertools.combinations(runs, 2):
        pa = {r.id: r for r in a.results}
        pb = {r.id: r for r in b.results}
        common = [i for i in pa if i in pb]
        if not common:
            continue
        out.append(
            mcnemar(
                [pa[i].label for i in common],
                [pa[i].prediction for i in common],
                [pb[i].prediction for i in common],
                a=a.condition,
                b=b.condition,
            )
        )
    return out


def _fmt(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "n/a"


def analyze(results_dir: Path, out_dir: Path) -> Path:
    """Write plots, ``mcnemar.json`` and ``report.md`` for ``results_dir`` into ``out_dir``."""
    runs = read_results(results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    by_dataset: dict[str, list[ConditionRun]] = defaultdict(list)
    skipped: list[ConditionRun] = []
    for run in runs:
        (by_dataset[run.dataset] if run.results else skipped).append(run)
    lines = [
        "# Evaluation report",
        "",
        f"Results: `{results_dir}`. Label 1 = hallucinated (the positive class); the score is",
        "higher for more likely hallucinated; an UNVERIFIED verdict counts as hallucinated.",
        "",
    ]
    tests: dict[str, list[dict[str, Any]]] = {}
    for ds, ds_runs in sorted(by_dataset.items()):
        slug = _slug(ds)
        plot_roc(ds_runs, out_dir / f"{slug}_roc.png")
        plot_histograms(ds_runs, out_dir / f"{slug}_hist.png")
        plot_threshold_sweep(ds_runs, out_dir / f"{slug}_threshold.png")
        lines += [
            f"## {ds}",
            "",
            "| condition | n | BAcc | F1 | precision | recall | AUROC | unverified | threshold |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for run in ds_runs:
            m = run.metrics.metrics
            assert m is not None
            th = run.metrics.threshold
            if th.get("policy") == "ratio":
                rule = f"ratio c>{th.get('contradiction_ratio')} n>{th.get('neutral_ratio')}"
            elif th.get("enabled"):
                rule = f"T(rs) {th.get('t_low')}→{th.get('t_high')} @ {th.get('midpoint')}"
            else:
                rule = f"fixed {th.get('fixed')}"
            lines.append(
                f"| {run.condition} | {m.n} | {m.balanced_accuracy:.3f} | {m.f1:.3f} | "
                f"{m.precision:.3f} | {m.recall:.3f} | {_fmt(m.auroc)} | "
                f"{run.metrics.unverified} | {rule} |"
            )
        pairs = pairwise_mcnemar(ds_runs)
        tests[ds] = [p.model_dump() for p in pairs]
        lines += [
            "",
            f"![ROC]({slug}_roc.png) ![scores]({slug}_hist.png) ![sweep]({slug}_threshold.png)",
            "",
            "McNemar's test (paired predictions; exact binomial below 25 discordant pairs,",
            "else chi-square with continuity correction):",
            "",
            "| a | b | a right, b wrong | b right, a wrong | method | p-value |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {p.a} | {p.b} | {p.a_only_correct} | {p.b_only_correct} | {p.method} | "
            f"{p.p_value:.4g}{' *' if p.p_value < 0.05 else ''} |"
            for p in pairs
        ]
        lines.append("")
    if by_dataset:
        plot_dataset_bars(by_dataset, out_dir / "datasets_bacc.png")
        lines += ["## Across datasets", "", "![balanced accuracy](datasets_bacc.png)", ""]
    if skipped:
        lines += ["## Not applicable", ""]
        lines += [f"- {r.dataset} / {r.condition}: {r.metrics.reason}" for r in skipped]
        lines.append("")
    lines.append("`*` p < 0.05: the two conditions' error rates differ significantly.")
    write_json(out_dir / "mcnemar.json", tests)
    report = out_dir / "report.md"
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    logger.info("wrote %s", report)
    return report
