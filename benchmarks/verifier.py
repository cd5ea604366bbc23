"""Benchmark an NLI verifier: accuracy on NLI and grounding sets, and CPU throughput.

Usage::

    HF_HUB_OFFLINE=1 python benchmarks/verifier.py --limit 2000        # the bundled model
    python benchmarks/verifier.py --model /tmp/export --limit 200 --out bench.json

Accuracy (data from ../shared/data, evaluation only — nothing here is trained on; loaders and
dev splits in ``verifier_data.py``):

- SNLI test, ANLI test (nli-eval/) and ANLI dev (anli_dev/): 3-way accuracy, argmax.
- Binary "is the response supported by the evidence" sets: HaluEval-QA, WiCE, Factcheck-GPT,
  SummEdits, FRANK (XSum part), QAGS, XSumFaith, DialFact (300-row sample), FaithDial (BEGIN
  audit labels). Long premises are scored in windows of sentences that fit the model (max
  p(entailment) over at most 8 windows). Each set has a dev part (named in ``DEV_SPLITS``)
  and a test part; only test numbers are reported:

  - FIXED threshold: ONE threshold on p(entailment) for every dataset, chosen once per model
    on the pooled dev parts of all the binary sets above (best mean dev balanced accuracy);
    this is the honest number and the one the ship decision uses;
  - per-dataset TUNED threshold: chosen on that dataset's own dev part (an upper bound);
  - AUROC (threshold-free) and ``argmax`` (entailment is the most probable label).

  Splits differ from LLM-AggreFact's; compare with care.

The previously shipped model's results (``verifier_previous.json``, same benchmark and limit)
are printed beside the new ones; ``ship score`` is the fixed-threshold mean over WiCE,
Factcheck-GPT, HaluEval-QA and SummEdits.

Throughput: batches of 16 pairs of 128 tokens each (the worst case of "up to 128"),
pairs/s and p50 / p95 latency per batch, ONNX Runtime (the model's folder) beside the same
model un-quantised in torch (``--torch-model``, default the export's recorded source).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.verifiers import Verifier, load_verifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verifier_data import DATA, DEV_SPLITS, Item, binary_sets, three_way_sets

PREVIOUS = Path(__file__).resolve().parent / "verifier_previous.json"
"""Results of the previously shipped model (same benchmark, same limit), shown beside."""
SHIP_SETS = ("wice", "factcheck_gpt", "halueval_qa", "summedits")
"""The fixed-threshold average over these decides whether a new model ships (SNLI not worse)."""


def windowed_entailment(
    verifier: Verifier, items: list[Item], max_windows: int = 8
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: max p(entailment) over windows of consecutive premise sentences that fit,
    and whether entailment is the argmax label in any window."""
    pairs: list[tuple[str, str]] = []
    owner: list[int] = []
    for k, (sentences, hypothesis, _) in enumerate(items):
        budget = max(16, verifier.max_tokens - verifier.count_tokens(hypothesis) - 4)
        windows, current, used = [], [], 0
        for sentence in sentences:
            n = verifier.count_tokens(sentence)
            if current and used + n > budget:
                windows.append(" ".join(current))
                current, used = [], 0
            current.append(sentence)
            used += n
        if current:
            windows.append(" ".join(current))
        if len(windows) > max_windows:  # keep the windows sharing most words with the claim
            words = set(hypothesis.lower().split())
            windows = sorted(windows, key=lambda w: -len(words & set(w.lower().split())))[
                :max_windows
            ]
        pairs += [(w, hypothesis) for w in windows]
        owner += [k] * len(windows)
    preds = verifier.predict(pairs)
    probs = np.array([p.entailment for p in preds])
    argmax = np.array([float(p.label == "entailment") for p in preds])
    best, any_argmax = np.zeros(len(items)), np.zeros(len(items))
    np.maximum.at(best, np.array(owner), probs)
    np.maximum.at(any_argmax, np.array(owner), argmax)
    return best, any_argmax.astype(int)


def balanced_accuracy(labels: np.ndarray, predicted: np.ndarray) -> float:
    pos, neg = labels == 1, labels == 0
    tpr = float((predicted[pos] == 1).mean()) if pos.any() else 0.0
    tnr = float((predicted[neg] == 0).mean()) if neg.any() else 0.0
    return 100 * (tpr + tnr) / 2


def best_threshold(labels: np.ndarray, scores: np.ndarray) -> float:
    candidates = np.unique(np.concatenate([scores, [0.5]]))
    return float(
        max(candidates, key=lambda t: balanced_accuracy(labels, (scores >= t).astype(int)))
    )


def auroc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (Mann–Whitney, ties counted half), in percent."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="stable")
    ranks = np.empty(len(order))
    values = np.concatenate([pos, neg])[order]
    ranks[order] = np.arange(1, len(order) + 1)
    for v in np.unique(values):  # average ranks over ties
        tied = np.concatenate([pos, neg]) == v
        ranks[tied] = ranks[tied].mean()
    u = ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2
    return 100 * float(u / (len(pos) * len(neg)))


def fixed_threshold(dev: dict[str, tuple[np.ndarray, np.ndarray]]) -> float:
    """One threshold for every dataset: the best mean dev balanced accuracy over the dev splits
    (each dataset weighs the same). Chosen on dev splits only, once per model."""
    grid = np.round(np.arange(0.02, 0.99, 0.01), 2)

    def mean_bacc(t: float) -> float:
        return float(np.mean([balanced_accuracy(y, (p >= t).astype(int)) for y, p in dev.values()]))

    return float(max(grid, key=mean_bacc))


def run_accuracy(
    verifier: Verifier,
    limit: int,
    only: set[str] | None = None,
    max_windows: int = 8,
    cache: Path | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per-dataset results and the fixed threshold (value, the dev splits it was chosen on).

    ``cache``: a JSON file keeping each finished dataset's scores, so an interrupted run
    continues where it stopped (delete it when the model changes)."""
    results: dict[str, Any] = {}
    saved: dict[str, Any] = json.loads(cache.read_text()) if cache and cache.exists() else {}

    def keep(name: str, value: Any) -> Any:
        saved[name] = value
        if cache:
            cache.write_text(json.dumps(saved))
        logging.info("%s done", name)
        return value

    for name, rows in three_way_sets(limit).items():
        if only and name not in only:
            continue
        if name not in saved:
            preds = verifier.predict([(p, h) for p, h, _ in rows])
            correct = sum(p.label == gold for p, (_, _, gold) in zip(preds, rows, strict=True))
            keep(name, {"accuracy_3way": round(100 * correct / len(rows), 2), "n": len(rows)})
        results[name] = saved[name]
    scored: dict[str, dict[str, np.ndarray]] = {}
    for name, (dev, test) in binary_sets(limit, only).items():
        if name not in saved:
            dev_scores, _ = windowed_entailment(verifier, dev, max_windows)
            test_scores, argmax_pred = windowed_entailment(verifier, test, max_windows)
            keep(
                name,
                {
                    "dev_y": [y for *_, y in dev],
                    "dev_p": dev_scores.tolist(),
                    "test_y": [y for *_, y in test],
                    "test_p": test_scores.tolist(),
                    "argmax": argmax_pred.tolist(),
                },
            )
        scored[name] = {k: np.array(v) for k, v in saved[name].items()}
    threshold = fixed_threshold({n: (s["dev_y"], s["dev_p"]) for n, s in scored.items()})
    for name, s in scored.items():
        tuned = best_threshold(s["dev_y"], s["dev_p"])
        y, p = s["test_y"], s["test_p"]
        results[name] = {
            "balanced_accuracy_fixed": round(balanced_accuracy(y, (p >= threshold).astype(int)), 2),
            "balanced_accuracy_tuned": round(balanced_accuracy(y, (p >= tuned).astype(int)), 2),
            "threshold_tuned": round(tuned, 4),
            "balanced_accuracy_argmax": round(balanced_accuracy(y, s["argmax"]), 2),
            "auroc": round(auroc(y, p), 2),
            "n_dev": len(s["dev_y"]),
            "n_test": len(y),
            "dev_split": DEV_SPLITS[name],
        }
    fixed = {"value": threshold, "chosen_on_dev_splits": {n: DEV_SPLITS[n] for n in scored}}
    return results, fixed


def ship_score(accuracy: dict[str, Any]) -> float | None:
    """Mean fixed-threshold balanced accuracy over ``SHIP_SETS`` (None if one is missing)."""
    values = [accuracy.get(n, {}).get("balanced_accuracy_fixed") for n in SHIP_SETS]
    if any(v is None for v in values):
        return None
    return round(float(np.mean(values)), 2)


def _timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def run_throughput(
    model_dir: Path, torch_dir: Path | None, threads: int, repeats: int
) -> dict[str, Any]:
    """Batches of 16 pairs cut to exactly 128 tokens; ONNX vs torch fp32 of the same model."""
    from guardrail.verifiers.hf_backend import HFVerifier
    from guardrail.verifiers.onnx_backend import OnnxVerifier

    text = " ".join(
        f"Sentence {i} of a long document tells about the town's river and its bridges."
        for i in range(60)
    )
    pairs = [(text[i * 7 :], f"The town has {i + 2} bridges over its river.") for i in range(16)]
    out: dict[str, Any] = {"batch": 16, "tokens_per_pair": 128, "threads": threads}
    backends: dict[str, Verifier] = {
        "onnx": OnnxVerifier(model_dir, threads=threads, max_tokens=128, batch_size=16),
        "onnx_spin": OnnxVerifier(
            model_dir, threads=threads, max_tokens=128, batch_size=16, spin=True
        ),
    }
    if torch_dir is not None and (torch_dir / "config.json").exists():
        backends["torch_fp32"] = HFVerifier(
            torch_dir, threads=threads, max_tokens=128, batch_size=16
        )
    for name, verifier in backends.items():
        times = _timed(lambda v=verifier: v.predict(pairs), repeats)
        out[name] = {
            "pairs_per_second": round(16 * len(times) / sum(times), 1),
            "p50_ms": round(1000 * statistics.median(times), 1),
            "p95_ms": round(1000 * float(np.percentile(times, 95)), 1),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--model", default=None, help="verifier folder (default: the bundled model)"
    )
    parser.add_argument(
        "--torch-model", default=None, help="HF dir of the same model, un-quantised"
    )
    parser.add_argument("--limit", type=int, default=0, help="items per dataset (0 = all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30, help="timed batches per backend")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--only", default=None, help="comma-separated dataset names (default: all)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    parser.add_argument(
        "--max-windows", type=int, default=8, help="premise windows scored per item (max)"
    )
    parser.add_argument(
        "--cache", default=None, help="JSON of finished datasets' scores (resume a long run)"
    )
    parser.add_argument(
        "--previous",
        default=str(PREVIOUS),
        help="results JSON of the previously shipped model, shown beside (same limit)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not DATA.exists():
        print(f"shared data not found at {DATA}", file=sys.stderr)
        return 2
    from guardrail.verifiers import bundled_dir

    model_dir = Path(args.model) if args.model else bundled_dir()
    verifier = load_verifier(str(model_dir), threads=args.threads)
    results: dict[str, Any] = {"model": str(model_dir), "limit": args.limit}
    if not args.skip_accuracy:
        only = set(args.only.split(",")) if args.only else None
        cache = Path(args.cache) if args.cache else None
        results["accuracy"], results["fixed_threshold"] = run_accuracy(
            verifier, args.limit, only, args.max_windows, cache
        )
        results["max_windows"] = args.max_windows
        results["ship_score"] = ship_score(results["accuracy"])
    torch_dir = Path(args.torch_model) if args.torch_model else None
    config_file = model_dir / "config.json"
    if torch_dir is None and config_file.exists():
        source = json.loads(config_file.read_text()).get("guardrail_export", {}).get("source")
        torch_dir = Path(source) if source else None
    if (model_dir / "model.onnx").exists() and not args.skip_throughput:
        results["throughput"] = run_throughput(model_dir, torch_dir, args.threads, args.repeats)
    previous = _read_previous(args.previous)
    print_table(results, previous)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


def _read_previous(path: str | None) -> dict[str, Any]:
    if not path or not Path(path).exists():
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _cell(value: Any, width: int = 6) -> str:
    return f"{value:{width}.1f}" if isinstance(value, int | float) else " " * (width - 1) + "-"


def print_table(results: dict[str, Any], previous: dict[str, Any] | None = None) -> None:
    previous = previous or {}
    prev_acc = previous.get("accuracy", {})
    prev_name = previous.get("version", "prev")
    windows = results.get("max_windows", 8)
    print(
        f"\nverifier: {results['model']}  (limit {results['limit'] or 'none'} per split, "
        f"at most {windows} premise windows per item)"
    )
    if previous:
        print(
            f"previous: {previous.get('model')} ({prev_name}, limit {previous.get('limit') or 'none'})"
        )
    fixed = results.get("fixed_threshold")
    if fixed:
        prev_t = previous.get("fixed_threshold", {}).get("value")
        print(
            f"fixed threshold on p(entailment): {fixed['value']:.2f}"
            + (f" (previous {prev_t:.2f})" if prev_t is not None else "")
            + ", chosen once on the dev splits of: "
            + ", ".join(fixed["chosen_on_dev_splits"])
        )
    accuracy = results.get("accuracy", {})
    three = {n: r for n, r in accuracy.items() if "accuracy_3way" in r}
    if three:
        print(f"\n  {'3-way accuracy':<16} {'new':>6} {prev_name:>6}      n")
        for name, row in three.items():
            old = prev_acc.get(name, {}).get("accuracy_3way")
            print(f"  {name:<16} {_cell(row['accuracy_3way'])} {_cell(old)} {row['n']:6d}")
    binary = {n: r for n, r in accuracy.items() if "balanced_accuracy_fixed" in r}
    if binary:
        print(
            "\n  balanced accuracy (test part)   FIXED threshold |  per-dataset TUNED (dev) |"
            "      AUROC    | argmax | n dev/test"
        )
        print(
            f"  {'dataset':<30} {'new':>6} {prev_name:>6} |   {'new':>6} {prev_name:>6} (t)  | {'new':>6} {prev_name:>6} |  new   |"
        )
        for name, row in binary.items():
            old = prev_acc.get(name, {})
            print(
                f"  {name:<30} {_cell(row['balanced_accuracy_fixed'])} "
                f"{_cell(old.get('balanced_accuracy_fixed'))} |   "
                f"{_cell(row['balanced_accuracy_tuned'])} {_cell(old.get('balanced_accuracy_tuned'))}"
                f" ({row['threshold_tuned']:.2f}) | {_cell(row['auroc'])} {_cell(old.get('auroc'))} |"
                f" {_cell(row['balanced_accuracy_argmax'])} | {row['n_dev']}/{row['n_test']}"
            )
        new_score, old_score = results.get("ship_score"), previous.get("ship_score")
        print(
            f"  {'ship score (fixed, mean of ' + '/'.join(SHIP_SETS) + ')':<30}\n"
            f"  {'':<30} {_cell(new_score)} {_cell(old_score)}"
        )
    tp = results.get("throughput")
    if tp:
        print(
            f"\n  throughput: batches of {tp['batch']} pairs x {tp['tokens_per_pair']} tokens, {tp['threads']} threads"
        )
        old_tp = previous.get("throughput", {})
        for name in ("onnx", "onnx_spin", "torch_fp32"):
            if name in tp:
                r = tp[name]
                old = old_tp.get(name, {}).get("pairs_per_second")
                print(
                    f"    {name:<11} {r['pairs_per_second']:7.1f} pairs/s   p50 {r['p50_ms']:6.1f} ms   "
                    f"p95 {r['p95_ms']:6.1f} ms"
                    + (f"   ({prev_name}: {old} pairs/s)" if old else "")
                )


if __name__ == "__main__":
    sys.exit(main())
