"""Evaluation sets of ``benchmarks/verifier.py``, read from ``../shared/data`` (never trained on).

Every binary set is split into a dev part (used only to choose thresholds) and a test part
(reported), by the rules of :mod:`guardrail.evaluation.sources`: the dataset's own split where
it has one, else :data:`~guardrail.evaluation.sources.VERIFIER_SPLIT` (SHA-1, 30 % dev) of the
key named in ``DEV_SPLITS``. The dev parts are the ones the fixed threshold is chosen on.
"""

from __future__ import annotations

import ast
import csv
from pathlib import Path
from typing import Any

from guardrail.evaluation.sources import (
    HALUEVAL_QA_ONE_TURN,
    VERIFIER_SPLIT,
    HashSplit,
    data_root,
    read_rows,
    wice_claims,
)
from guardrail.text.sentences import split_at_terminators

DATA = data_root()
Item = tuple[list[str], str, int]  # premise sentences, hypothesis, label (1 = supported)

DEV_SPLITS: dict[str, str] = {
    "halueval_qa": "30 % of questions by sha1 hash",
    "wice": "WiCE dev.jsonl (claim level)",
    "factcheck_gpt": "30 % of claims by sha1 hash",
    "summedits": "the 'evaluation' split of each domain",
    "frank_xsum": "FRANK 'valid' split",
    "qags": "30 % of articles by sha1 hash",
    "xsumfaith": "30 % of BBC ids by sha1 hash",
    "dialfact": "30 % of dialogue contexts by sha1 hash",
    "faithdial": "30 % of responses by sha1 hash",
}


def jsonl(path: Path) -> list[dict[str, Any]]:
    return list(read_rows(path))


def is_dev(key: str, fraction: float = VERIFIER_SPLIT.dev_share) -> bool:
    """The verifier benchmark's hash rule (:data:`guardrail.evaluation.sources.VERIFIER_SPLIT`)."""
    return HashSplit(fraction, VERIFIER_SPLIT.digest).is_dev(key)


def sentences(text: str) -> list[str]:
    """Premise sentences as the published figures cut them (``split_at_terminators``)."""
    return split_at_terminators(text, ".!?。！？", at_newlines=True) or [text]


def spread(items: list[Any], limit: int) -> list[Any]:
    """An evenly spaced subset of ``limit`` items (0 = all), so every split/label shows up."""
    if not limit or len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def three_way_sets(limit: int) -> dict[str, list[tuple[str, str, str]]]:
    rows = jsonl(DATA / "nli-eval" / "pairs.jsonl.gz")
    snli = [r for r in rows if r["dataset"] == "snli_dev_test_esnli" and r["split"] == "test"]
    anli = [r for r in rows if r["dataset"] == "anli_test"]
    sets = {
        "snli_test": [(r["premise"], r["hypothesis"], r["label"]) for r in snli],
        "anli_test": [(r["premise"], r["hypothesis"], r["label"]) for r in anli],
    }
    names = {"e": "entailment", "n": "neutral", "c": "contradiction"}
    anli_dev: list[tuple[str, str, str]] = []
    folder = DATA / "anli_dev" / "anlizinganli" / "anli_annot_v0.2"
    for r in (1, 2, 3):
        with (folder / f"ANLI_analysis_r{r}_dev.csv").open(encoding="utf-8") as handle:
            anli_dev += [
                (x["context"], x["statement"], names[x["gold_label"]])
                for x in csv.DictReader(handle)
            ]
    sets["anli_dev"] = anli_dev
    return {k: spread(v, limit) for k, v in sets.items()}


def _split(items: list[tuple[str, Item]]) -> tuple[list[Item], list[Item]]:
    return VERIFIER_SPLIT.parts(items)


def halueval() -> tuple[list[Item], list[Item]]:
    rows = jsonl(DATA / "halueval" / HALUEVAL_QA_ONE_TURN)
    items = [
        (r["question"], (sentences(r["knowledge"]), f"{r['question']} {answer}", label))
        for r in rows
        for answer, label in ((r["right_answer"], 1), (r["hallucinated_answer"], 0))
    ]
    return _split(items)


def wice() -> tuple[list[Item], list[Item]]:
    def read(name: str) -> list[Item]:
        return [
            (r["evidence"], r["claim"], int(r["label"] == "supported"))
            for r in wice_claims(DATA / "wice", name)
        ]

    return read("dev"), read("test")


def factcheck_gpt() -> tuple[list[Item], list[Item]]:
    rows = jsonl(DATA / "factcheck_gpt" / "subtasks" / "subtask3_claim_evidence_stance.jsonl")
    items = [
        (
            r["claim"],
            (sentences(r["evidence"]), r["claim"], int(r["stance"] == "completely-support")),
        )
        for r in rows
        if r["stance"] != "irrelevant"
    ]
    return _split(items)


def summedits() -> tuple[list[Item], list[Item]]:
    dev: list[Item] = []
    test: list[Item] = []
    for path in sorted((DATA / "summedits" / "data" / "summedits").glob("summedits_*.json")):
        for r in read_rows(path):
            item = (sentences(r["doc"]), r["summary"], int(r["label"]))
            (dev if r["split"] == "evaluation" else test).append(item)
    return dev, test


def frank_xsum() -> tuple[list[Item], list[Item]]:
    dev: list[Item] = []
    test: list[Item] = []
    for r in jsonl(DATA / "frank" / "reassembled" / "frank_xsum_with_docs.jsonl"):
        item = (sentences(r["document"]), r["summary"], int(r["label"] == "consistent"))
        (dev if r["split"] == "valid" else test).append(item)
    return dev, test


def qags() -> tuple[list[Item], list[Item]]:
    items: list[tuple[str, Item]] = []
    for name in ("mturk_cnndm.jsonl", "mturk_xsum.jsonl"):
        for r in jsonl(DATA / "qags" / "data" / name):
            parts = r["summary_sentences"]
            ok = all(
                sum(x["response"] == "yes" for x in s["responses"]) * 2 > len(s["responses"])
                for s in parts
            )
            summary = " ".join(s["sentence"] for s in parts)
            items.append((r["article"][:200], (sentences(r["article"]), summary, int(ok))))
    return _split(items)


def xsumfaith() -> tuple[list[Item], list[Item]]:
    rows = jsonl(DATA / "xsumfaith" / "reassembled" / "xsumfaith_with_docs.jsonl")
    items = [
        (
            r["bbcid"],
            (sentences(r["document"]), r["summary"], int(r["label_majority"] == "faithful")),
        )
        for r in rows
        if r.get("document")
    ]
    return _split(items)


def dialfact() -> tuple[list[Item], list[Item]]:
    items: list[tuple[str, Item]] = []
    for r in jsonl(DATA / "dialfact_small" / "scripts" / "testsmall.jsonl"):
        evidence = r["evidence_list"]
        if isinstance(evidence, str):
            evidence = ast.literal_eval(evidence)
        snippets = [str(e[2]) for e in evidence if len(e) > 2]
        label = int(r["response_label"] == "SUPPORTS")
        items.append((r["context_id"], (snippets, r["response"], label)))
    return _split(items)


def faithdial() -> tuple[list[Item], list[Item]]:
    """BEGIN labels: entailment = supported; hallucination / partial = not; others dropped."""
    items: list[tuple[str, Item]] = []
    folder = DATA / "faithdial_data_audit" / "data-audit"
    for path in sorted(folder.glob("*/*.csv")):
        with path.open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                label = (row.get("begin_label") or row.get("BEGIN") or "").strip().lower()
                knowledge = row.get("knowledge") or row.get("evidence") or ""
                response = row.get("response") or next(
                    (
                        v
                        for k, v in row.items()
                        if k not in ("knowledge", "history", "begin_label", "vrm_label")
                    ),
                    "",
                )
                if not knowledge.strip() or not (response or "").strip():
                    continue
                if label == "entailment":
                    y = 1
                elif label.startswith(("hallucinat", "partial", "entailment,hallucination")):
                    y = 0
                else:
                    continue
                items.append((response, (sentences(knowledge), response, y)))
    return _split(items)


LOADERS = {
    "halueval_qa": halueval,
    "wice": wice,
    "factcheck_gpt": factcheck_gpt,
    "summedits": summedits,
    "frank_xsum": frank_xsum,
    "qags": qags,
    "xsumfaith": xsumfaith,
    "dialfact": dialfact,
    "faithdial": faithdial,
}


def binary_sets(
    limit: int, only: set[str] | None = None
) -> dict[str, tuple[list[Item], list[Item]]]:
    """name → (dev items, test items), each at most ``limit`` (evenly spread)."""
    out = {}
    for name, loader in LOADERS.items():
        if only and name not in only:
            continue
        dev, test = loader()
        out[name] = (spread(dev, limit), spread(test, limit))
    return out
