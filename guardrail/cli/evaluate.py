"""``guardrail eval | tune | analyze | calibrate``: measure the guardrail on labelled data.

::

    guardrail eval --dataset halueval-qa --data-dir ../shared/data/halueval --out results/
    guardrail eval --dataset wice --data-dir ../shared/data/wice --out results/ --limit 200
    guardrail analyze results/ --out results/report
    guardrail tune --dataset halueval-qa --data-dir ../shared/data/halueval --out results/ \\
        --dev-fraction 0.3 --seed 13
    guardrail calibrate --dataset halueval-qa --data-dir ../shared/data/halueval --out results/

Verifier scores are cached in ``OUT/cache.sqlite`` (``--cache``), so later conditions and
commands over the same data reuse them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def _dataset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dataset",
        required=True,
        help="halueval-qa, wice, wice-oracle, factcheck-gpt, summedits, xsumfaith, frank, "
        "qags, or jsonl:PATH (generic format, see guardrail.evaluation.datasets)",
    )
    p.add_argument("--data-dir", help="the dataset's folder (e.g. ../shared/data/halueval)")
    p.add_argument("--split", help="dataset split or part (dataset-specific; see its loader)")
    p.add_argument("--limit", type=int, help="use at most N examples (label-balanced head)")
    p.add_argument("--out", required=True, help="results directory")
    p.add_argument("--verifier", help="verifier spec (default: the bundled model)")
    p.add_argument("--config", help="base guardrail config (YAML / JSON) under the conditions")
    p.add_argument("--cache", help="score cache file (default OUT/cache.sqlite)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def register(sub: Any) -> None:
    p = sub.add_parser("eval", help="run evaluation conditions over a labelled dataset")
    _dataset_args(p)
    p.add_argument(
        "--conditions",
        nargs="+",
        default=None,
        help="conditions to run (default: all): plain claims claims_windows adaptive facts ratio",
    )
    p.set_defaults(func=run_eval)

    p = sub.add_parser("tune", help="grid-search thresholds on a dev split, report the test")
    _dataset_args(p)
    p.add_argument("--dev-fraction", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=13)
    p.set_defaults(func=run_tune)

    p = sub.add_parser("analyze", help="plots, McNemar tests and a report from eval results")
    p.add_argument("results", help="results directory written by `guardrail eval`")
    p.add_argument("--out", required=True, help="where to write the plots and report.md")
    p.set_defaults(func=run_analyze)

    p = sub.add_parser("calibrate", help="temperature-scale the verifier on a dev split")
    _dataset_args(p)
    p.add_argument("--condition", default="plain", help="condition whose scores to calibrate")
    p.add_argument("--dev-fraction", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=13)
    p.set_defaults(func=run_calibrate)


def _base_config(args: argparse.Namespace) -> dict[str, Any] | None:
    if not args.config:
        return None
    from guardrail.config import GuardrailConfig

    return GuardrailConfig.load(args.config).model_dump(mode="json")


def _evaluate(
    args: argparse.Namespace, condition_names: list[str], subdir: str | None = None
) -> tuple[Path, list[Any]]:
    """Load the data and the cached verifier, run ``condition_names``; the dataset folder.

    ``subdir`` (``tune`` / ``calibrate``) keeps those commands' runs apart from ``eval``'s
    results (which ``analyze`` reads); the score cache is shared.
    """
    from guardrail.config import GuardrailConfig
    from guardrail.evaluation.cache import CachingVerifier
    from guardrail.evaluation.conditions import get_condition
    from guardrail.evaluation.datasets import load_dataset
    from guardrail.evaluation.runner import evaluate, verifier_fingerprint
    from guardrail.models import load_embedder
    from guardrail.verifiers import load_verifier

    conditions = [get_condition(n) for n in condition_names]
    examples = load_dataset(args.dataset, args.data_dir, args.split, args.limit)
    root = Path(args.out)
    out = root / subdir if subdir else root
    inner = load_verifier(args.verifier)
    fingerprint = verifier_fingerprint(inner, args.verifier)
    verifier = CachingVerifier(inner, args.cache or root / "cache.sqlite", fingerprint)
    base = _base_config(args)
    models = GuardrailConfig.model_validate(base or {}).models
    embedder = load_embedder(models.embedding, models.embedding_backend)
    start = time.perf_counter()
    summary = evaluate(
        args.dataset,
        examples,
        conditions,
        verifier,
        out,
        embedder,
        base_config=base,
        run_info={
            "data_dir": args.data_dir,
            "split": args.split,
            "limit": args.limit,
            "verifier": fingerprint,
            "config": args.config,
        },
        progress=not args.no_progress,
    )
    stats = verifier.stats()
    print(
        f"{args.dataset}: {len(examples)} examples, {time.perf_counter() - start:.1f} s; "
        f"verifier cache {stats['hits']} hits / {stats['misses']} misses"
    )
    verifier.close()
    folder = out / args.dataset.replace("/", "_").replace(":", "_")
    return folder, summary


def run_eval(args: argparse.Namespace) -> int:
    from guardrail.evaluation.conditions import DEFAULT_CONDITIONS

    folder, summary = _evaluate(args, list(args.conditions or DEFAULT_CONDITIONS))
    print(
        f"{'condition':<15} {'n':>5} {'BAcc':>6} {'F1':>6} {'prec':>6} {'recall':>6} {'AUROC':>6}"
    )
    for info in summary:
        m = info.metrics
        if m is None:
            print(f"{info.condition:<15} n/a: {info.reason}")
            continue
        if info.stage_failures:
            print(
                f"warning: {info.condition}: a stage failed on {info.stage_failures} examples "
                "(counted as unverified → hallucinated); see the error column"
            )
        auc = f"{m.auroc:.3f}" if m.auroc is not None else "n/a"
        print(
            f"{info.condition:<15} {m.n:>5} {m.balanced_accuracy:>6.3f} {m.f1:>6.3f} "
            f"{m.precision:>6.3f} {m.recall:>6.3f} {auc:>6}"
        )
    print(f"wrote {folder}/<condition>/{{predictions.csv,metrics.json}}")
    return 0


def run_tune(args: argparse.Namespace) -> int:
    from guardrail.evaluation.tune import format_report, read_details, tune

    names = ["claims_windows", "ratio"]
    folder, _ = _evaluate(args, names, "tune")
    weakest = read_details(folder / names[0] / "details.jsonl")
    ratio = read_details(folder / "ratio" / "details.jsonl") if "ratio" in names else None
    report = tune(args.dataset, weakest, ratio, args.dev_fraction, args.seed, names[0])
    report = _with_replay(report, folder, names, weakest, ratio, args)
    path = folder / f"tune_seed{args.seed}.json"
    path.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    print(format_report(report))
    print(f"wrote {path} (split ids, grid, dev and test metrics)")
    return 0


def _with_replay(
    report: Any, folder: Path, names: list[str], weakest: Any, ratio: Any, args: Any
) -> Any:
    """Check that replaying each run's own thresholds reproduces its pipeline verdicts."""
    from guardrail.evaluation.conditions import condition_config, get_condition
    from guardrail.evaluation.results import read_predictions
    from guardrail.evaluation.tune import check_replay

    def preds(name: str) -> dict[str, int]:
        return {r.id: r.prediction for r in read_predictions(folder / name / "predictions.csv")}

    base = _base_config(args)
    cfg = condition_config(get_condition(names[0]), base).hallucination
    if ratio is None:
        return check_replay(report, weakest, preds(names[0]), cfg.threshold)
    rcfg = condition_config(get_condition("ratio"), base).hallucination
    return check_replay(
        report, weakest, preds(names[0]), cfg.threshold, ratio, preds("ratio"),
        (rcfg.contradiction_ratio, rcfg.neutral_ratio),
    )  # fmt: skip


def run_analyze(args: argparse.Namespace) -> int:
    from guardrail.evaluation.analyze import analyze

    report = analyze(Path(args.results), Path(args.out))
    print(f"wrote {report} and its plots")
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from guardrail.evaluation.calibrate import calibrate, plot_reliability, probs_from_details

    folder, _ = _evaluate(args, [args.condition], "calibrate")
    ids, probs, labels = probs_from_details(folder / args.condition / "details.jsonl")
    report = calibrate(
        args.dataset, args.condition, ids, probs, labels, args.dev_fraction, args.seed
    )
    test = [i in set(report.test_ids) for i in ids]
    png = folder / f"reliability_{args.condition}_seed{args.seed}.png"
    plot_reliability(
        probs[test], labels[test], report.temperature, png, f"{args.dataset} test part"
    )
    path = folder / f"calibration_{args.condition}_seed{args.seed}.json"
    path.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.model_dump().items() if not k.endswith("_ids")},
                     indent=2))  # fmt: skip
    print(report.verdict)
    print(f"wrote {path} and {png}")
    return 0
