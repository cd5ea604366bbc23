"""Response-level balanced accuracy of the hallucination stage on HaluEval-QA and WiCE.

Two settings with the same verifier: ``claims+windows`` (sentence claims, sliding windows,
top-m pruning: the default) and ``whole`` (the response as one claim against each passage as
one premise, truncated by the verifier). A response counts as flagged when the verdict is not
VERIFIED. Thresholds are the config defaults (no tuning on these test sets).

Data (evaluation only): ``../shared/data/halueval/generation/qa/qa_one-turn_data.json`` (each
row gives one supported and one hallucinated answer; premise = knowledge) and
``../shared/data/wice/data/entailment_retrieval/claim/test.jsonl`` (supported vs
partially / not supported; premise = the cited page's sentences).

Run::

    HF_HUB_OFFLINE=1 python benchmarks/hallucination.py --verifier /path/to/model --limit 200
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import time
from collections.abc import Iterator
from typing import Any

from guardrail.evaluation.sources import HALUEVAL_QA_ONE_TURN, data_root, read_rows, wice_claims

SHARED = data_root()
SETTINGS: dict[str, dict[str, Any]] = {
    "claims+windows": {},
    "whole": {"decompose_claims": False, "use_windows": False, "logical_consistency": False},
}


def halueval(limit: int) -> Iterator[tuple[str, str, str, bool]]:
    """(query, response, premise, is_hallucinated)."""
    for row in itertools.islice(read_rows(SHARED / "halueval" / HALUEVAL_QA_ONE_TURN), limit):
        yield row["question"], row["right_answer"], row["knowledge"], False
        yield row["question"], row["hallucinated_answer"], row["knowledge"], True


def wice(limit: int) -> Iterator[tuple[str, str, str, bool]]:
    """(query, response, premise, is_hallucinated) of WiCE's own test file."""
    for row in itertools.islice(wice_claims(SHARED / "wice", "test"), limit):
        yield "", row["claim"], " ".join(row["evidence"]), row["label"] != "supported"


def balanced_accuracy(gold: list[bool], pred: list[bool]) -> float:
    pos = [p for g, p in zip(gold, pred, strict=True) if g]
    neg = [not p for g, p in zip(gold, pred, strict=True) if not g]
    tpr = sum(pos) / len(pos) if pos else 0.0
    tnr = sum(neg) / len(neg) if neg else 0.0
    return (tpr + tnr) / 2


def run(dataset: str, setting: str, verifier: Any, limit: int) -> dict[str, Any]:
    from guardrail import Guardrail
    from guardrail.report import VerdictLabel

    config = {
        "hallucination": SETTINGS[setting],
        "disabled_stages": ["coherence", "fact_validation", "correction"],
    }
    guard = Guardrail(config, verifier=verifier)
    rows = list((halueval if dataset == "halueval" else wice)(limit))
    gold, pred = [], []
    start = time.perf_counter()
    for query, response, premise, hallucinated in rows:
        report = guard.invoke({"query": query, "response": response, "passages": [premise]})
        gold.append(hallucinated)
        pred.append(report.verdict.label is not VerdictLabel.VERIFIED)
    seconds = time.perf_counter() - start
    return {
        "dataset": dataset,
        "setting": setting,
        "n": len(rows),
        "balanced_accuracy": round(balanced_accuracy(gold, pred), 4),
        "flagged_share": round(sum(pred) / len(pred), 4),
        "ms_per_response": round(1000 * seconds / len(rows), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verifier", default=None, help="verifier spec (default: bundled)")
    parser.add_argument("--limit", type=int, default=250, help="rows per dataset")
    parser.add_argument("--datasets", nargs="+", default=["halueval", "wice"])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (shared machine)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    import torch

    torch.set_num_threads(args.threads)
    from guardrail.verifiers import load_verifier

    verifier = load_verifier(args.verifier)
    for dataset in args.datasets:
        for setting in SETTINGS:
            print(json.dumps(run(dataset, setting, verifier, args.limit)), flush=True)


if __name__ == "__main__":
    main()
