"""Benchmark an NLI verifier: accuracy on NLI and grounding sets, and CPU throughput.

Usage::

    HF_HUB_OFFLINE=1 python benchmarks/verifier.py                      # the bundled model
    python benchmarks/verifier.py --model /tmp/export --limit 200 --out bench.json

Accuracy (data from ../shared/data, evaluation only — nothing here is trained on):

- SNLI test (nli-eval/, ``snli_dev_test_esnli`` split ``test``), ANLI test (nli-eval/ R1–R3) and
  ANLI dev (anli_dev/ R1–R3 CSVs): 3-way accuracy, argmax.
- HaluEval-QA (halueval/ one-turn QA file: knowledge → premise, "question answer" →
  hypothesis, the right and the hallucinated answer of each item), WiCE (claim vs cited page;
  supported vs partially/not supported), Factcheck-GPT (subtask 3 claim vs evidence snippet;
  completely-support vs partially-support/refute; "irrelevant" rows left out), SummEdits
  (8 domains; doc vs summary): response-level balanced accuracy, two ways —
  ``argmax``: supported iff entailment is the most probable label; ``tuned``: threshold on
  p(entailment) chosen on an explicit dev part (WiCE dev.jsonl; SummEdits ``evaluation``
  split; for HaluEval and Factcheck-GPT a stable 30 % hash split), reported on the rest.
  Long premises are scored in windows of sentences that fit the model (max over windows).
  Splits differ from LLM-AggreFact's; compare with care.

Throughput: batches of 16 pairs of 128 tokens each (the worst case of "up to 128"),
pairs/s and p50 / p95 latency per batch, ONNX Runtime (the model's folder) beside the same
model un-quantised in torch (``--torch-model``, default the export's recorded source).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import logging
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.verifiers import Verifier, load_verifier

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
Item = tuple[list[str], str, int]  # premise sentences, hypothesis, label (1 = supported)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _dev(key: str, fraction: float = 0.3) -> bool:
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 16**8 < fraction


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?。！？])\s+", text) if s.strip()] or [text]


def three_way_sets(limit: int) -> dict[str, list[tuple[str, str, str]]]:
    rows = _jsonl(DATA / "nli-eval" / "pairs.jsonl.gz")
    snli = [r for r in rows if r["dataset"] == "snli_dev_test_esnli" and r["split"] == "test"]
    anli = [r for r in rows if r["dataset"] == "anli_test"]
    sets = {
        "snli_test": [(r["premise"], r["hypothesis"], r["label"]) for r in snli],
        "anli_test": [(r["premise"], r["hypothesis"], r["label"]) for r in anli],
    }
    names = {"e": "entailment", "n": "neutral", "c": "contradiction"}
    anli_dev: list[tuple[str, str, str]] = []
    for r in (1, 2, 3):
        path = (
            DATA / "anli_dev" / "anlizinganli" / "anli_annot_v0.2" / f"ANLI_analysis_r{r}_dev.csv"
        )
        with path.open(encoding="utf-8") as handle:
            anli_dev += [
                (x["context"], x["statement"], names[x["gold_label"]])
                for x in csv.DictReader(handle)
            ]
    sets["anli_dev"] = anli_dev
    return {k: _spread(v, limit) for k, v in sets.items()}


def _spread(items: list[Any], limit: int) -> list[Any]:
    """An evenly spaced subset of ``limit`` items (0 = all), so every split/label shows up."""
    if not limit or len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def binary_sets(limit: int) -> dict[str, tuple[list[Item], list[Item]]]:
    """name → (dev items, test items)."""
    out: dict[str, tuple[list[Item], list[Item]]] = {}
    qa = _jsonl(DATA / "halueval" / "generation" / "qa" / "qa_one-turn_data.json")
    dev, test = [], []
    for r in qa:
        for answer, label in ((r["right_answer"], 1), (r["hallucinated_answer"], 0)):
            item = (_sentences(r["knowledge"]), f"{r['question']} {answer}", label)
            (dev if _dev(r["question"]) else test).append(item)
    out["halueval_qa"] = (dev, test)

    wice = DATA / "wice" / "data" / "entailment_retrieval" / "claim"

    def wice_items(name: str) -> list[Item]:
        return [
            (r["evidence"], r["claim"], int(r["label"] == "supported"))
            for r in _jsonl(wice / f"{name}.jsonl")
        ]

    out["wice"] = (wice_items("dev"), wice_items("test"))

    fc = _jsonl(DATA / "factcheck_gpt" / "subtasks" / "subtask3_claim_evidence_stance.jsonl")
    dev, test = [], []
    for r in fc:
        if r["stance"] == "irrelevant":
            continue
        item = (_sentences(r["evidence"]), r["claim"], int(r["stance"] == "completely-support"))
        (dev if _dev(r["claim"]) else test).append(item)
    out["factcheck_gpt"] = (dev, test)

    dev, test = [], []
    for path in sorted((DATA / "summedits" / "data" / "summedits").glob("summedits_*.json")):
        for r in json.loads(path.read_text(encoding="utf-8")):
            item = (_sentences(r["doc"]), r["summary"], int(r["label"]))
            (dev if r["split"] == "evaluation" else test).append(item)
    out["summedits"] = (dev, test)
    return {k: (_spread(d, limit), _spread(t, limit)) for k, (d, t) in out.items()}


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


def run_accuracy(verifier: Verifier, limit: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, rows in three_way_sets(limit).items():
        preds = verifier.predict([(p, h) for p, h, _ in rows])
        correct = sum(p.label == gold for p, (_, _, gold) in zip(preds, rows, strict=True))
        results[name] = {"accuracy_3way": round(100 * correct / len(rows), 2), "n": len(rows)}
        logging.info("%s done", name)
    for name, (dev, test) in binary_sets(limit).items():
        dev_scores, _ = windowed_entailment(verifier, dev)
        test_scores, argmax_pred = windowed_entailment(verifier, test)
        test_labels = np.array([y for *_, y in test])
        threshold = best_threshold(np.array([y for *_, y in dev]), dev_scores)
        results[name] = {
            "balanced_accuracy_tuned": round(
                balanced_accuracy(test_labels, (test_scores >= threshold).astype(int)), 2
            ),
            "threshold": round(threshold, 4),
            "balanced_accuracy_argmax": round(balanced_accuracy(test_labels, argmax_pred), 2),
            "n_dev": len(dev),
            "n_test": len(test),
        }
        logging.info("%s done", name)
    return results


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
        "onnx": OnnxVerifier(model_dir, threads=threads, max_tokens=128, batch_size=16)
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
    parser.add_argument("--out", default=None, help="write the results as JSON here")
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
        results["accuracy"] = run_accuracy(verifier, args.limit)
    torch_dir = Path(args.torch_model) if args.torch_model else None
    config_file = model_dir / "config.json"
    if torch_dir is None and config_file.exists():
        source = json.loads(config_file.read_text()).get("guardrail_export", {}).get("source")
        torch_dir = Path(source) if source else None
    if (model_dir / "model.onnx").exists():
        results["throughput"] = run_throughput(model_dir, torch_dir, args.threads, args.repeats)
    print_table(results)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


def print_table(results: dict[str, Any]) -> None:
    print(f"\nverifier: {results['model']}  (limit {results['limit'] or 'none'})")
    for name, row in results.get("accuracy", {}).items():
        if "accuracy_3way" in row:
            print(f"  {name:<15} 3-way accuracy      {row['accuracy_3way']:6.2f}   n={row['n']}")
        else:
            print(
                f"  {name:<15} balanced acc. tuned {row['balanced_accuracy_tuned']:6.2f} (t={row['threshold']:.3f})"
                f"   argmax {row['balanced_accuracy_argmax']:6.2f}   dev/test n={row['n_dev']}/{row['n_test']}"
            )
    tp = results.get("throughput")
    if tp:
        print(
            f"  throughput: batches of {tp['batch']} pairs x {tp['tokens_per_pair']} tokens, {tp['threads']} threads"
        )
        for name in ("onnx", "torch_fp32"):
            if name in tp:
                r = tp[name]
                print(
                    f"    {name:<11} {r['pairs_per_second']:7.1f} pairs/s   p50 {r['p50_ms']:6.1f} ms   p95 {r['p95_ms']:6.1f} ms"
                )


if __name__ == "__main__":
    sys.exit(main())
