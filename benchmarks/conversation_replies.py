"""Conversation replies: how many go to a person, does the verdict follow the labels, and which
facts asked inside questions are checked?

Knowledge-grounded dialogue replies, each checked as a chat app would: the user's last message
as the query, the reply as the response, the knowledge snippet(s) as the passages (no dialogue
history). Sources (``--sources``):

- ``faithdial`` — the FaithDial audit's replies of three dialogue systems (CTRL, DoHA, GPT2 on
  CMU-DoG, TopicalChat, Wizard of Wikipedia; ``faithdial_data_audit/data-audit/*/``), BEGIN
  labels: ``entailment`` → attributable; ``hallucination`` and partial hallucination → not;
  ``generic`` / ``uncooperative`` carry no attributable label (they count only in the
  "all replies" review share);
- ``faithdial_gold`` — the same audit of the benchmarks' human replies (``gold/*.csv``, labelled
  rows only), same labels;
- ``dialfact`` — the DialFact sample (``dialfact_small``): ``SUPPORTS`` → attributable,
  ``REFUTES`` / ``NOT ENOUGH INFO`` → not.

Split by conversation with ``guardrail.evaluation.sources.DECISIONS_SPLIT`` (SHA-256, 40 % dev):
DialFact by ``context_id``, FaithDial by the (user message, knowledge) pair, so the three
systems' replies to one turn stay together. Settings are chosen on dev only.

Printed per split, source and pooled (``all``):

- review: share of the labelled replies whose action is ``human_review`` (``review_all``: of
  every reply, generic and uncooperative ones included);
- verdict bAcc: balanced accuracy of "attributable" predicted as verdict ``VERIFIED`` (any other
  verdict, ``NOTHING_TO_CHECK`` included, predicts "not attributable") against the label;
  ``bacc_nothing_ok`` counts ``NOTHING_TO_CHECK`` as attributable instead;
- the verdicts and actions, and the human-review reasons (their first words);
- claims inside questions: claims whose span lies in a sentence ending in '?' (a fact asked
  inside a question, e.g. "Did you know that X?") and the question sentences with no claim.
  ``--list-questions`` prints them; the labelled sample (``question_labels`` in the results
  file: each question sentence, whether it asserts a fact and which) gives the precision and
  the recall of the claims found inside questions.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/conversation_replies.py --label before \\
        --out benchmarks/results/conversation_replies_review_share.json
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardrail.evaluation.sources import DECISIONS_SPLIT, data_root, read_rows  # noqa: E402

DIALFACT = Path("dialfact_small") / "scripts" / "testsmall.jsonl"
FAITHDIAL = Path("faithdial_data_audit") / "data-audit"
SOURCES = ("faithdial", "faithdial_gold", "dialfact")
SPLITS = ("dev", "test")


def faithdial_label(raw: str) -> bool | None:
    """BEGIN label → attributable (``None``: generic, uncooperative or unlabelled)."""
    label = raw.strip().lower()
    if label == "entailment":
        return True
    if label.startswith(("hallucinat", "partial", "entailment,hallucination")):
        return False
    return None


def faithdial_rows(root: Path, gold: bool) -> list[dict[str, Any]]:
    """The audit's labelled replies (systems' or the benchmarks' own)."""
    rows: list[dict[str, Any]] = []
    folders = ["gold"] if gold else ["CTRL", "DoHA", "GPT2"]
    for folder in folders:
        for path in sorted((root / FAITHDIAL / folder).glob("*.csv")):
            with path.open(encoding="utf-8") as handle:
                for i, row in enumerate(csv.DictReader(handle)):
                    raw = (row.get("begin_label") or row.get("BEGIN") or "").strip()
                    knowledge = (row.get("knowledge") or row.get("evidence") or "").strip()
                    reply_key = "response" if gold else path.name.split("_")[0]
                    response = (row.get(reply_key) or "").strip()
                    if not raw or not knowledge or not response:
                        continue
                    query = (row.get("history") or "").strip()
                    rows.append(
                        {
                            "id": f"{folder}/{path.stem}/{i}",
                            "source": "faithdial_gold" if gold else "faithdial",
                            "conversation": f"{query}\n{knowledge}",
                            "query": query,
                            "response": response,
                            "passages": [knowledge],
                            "label": faithdial_label(raw),
                            "raw_label": raw.lower(),
                        }
                    )
    return rows


def dialfact_rows(root: Path) -> list[dict[str, Any]]:
    """The DialFact sample's replies with their snippets."""
    rows = []
    for r in read_rows(root / DIALFACT):
        snippets = list(dict.fromkeys(e[2].strip() for e in r["evidence_list"] if e[2].strip()))
        context = [t for t in r["context"] if t.strip()]
        rows.append(
            {
                "id": f"dialfact/{r['id']}",
                "source": "dialfact",
                "conversation": str(r["context_id"]),
                "query": context[-1].strip() if context else "",
                "response": r["response"].strip(),
                "passages": snippets,
                "label": r["response_label"] == "SUPPORTS",
                "raw_label": r["response_label"],
            }
        )
    return rows


def load(root: Path, sources: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for source in sources:
        if source == "dialfact":
            rows += dialfact_rows(root)
        else:
            rows += faithdial_rows(root, gold=source == "faithdial_gold")
    for r in rows:
        r["split"] = DECISIONS_SPLIT.of(r["conversation"])
    return rows


def sentence_of(text: str, offset: int) -> tuple[int, int]:
    """The sentence of ``text`` holding ``offset`` (the guardrail's own splitter)."""
    from guardrail.text.sentences import split_sentences

    for s in split_sentences(text):
        if s.start <= offset < s.end:
            return s.start, s.end
    return offset, offset


def question_findings(report: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Claims inside question sentences (checked ones), and question sentences without one."""
    from guardrail.text.sentences import split_sentences

    text = report.original
    found: list[dict[str, Any]] = []
    covered: set[tuple[int, int]] = set()
    for c in report.claims:
        start, end = sentence_of(text, c.span.start)
        sentence = text[start:end].strip()
        if not sentence.endswith("?") or c.status.value == "not_checkworthy":
            continue
        covered.add((start, end))
        found.append(
            {"question": " ".join(sentence.split()), "claim": c.text, "status": c.status.value}
        )
    bare = [
        " ".join(s.text.split())
        for s in split_sentences(text)
        if s.text.strip().endswith("?") and (s.start, s.end) not in covered
    ]
    return found, bare


def reason_head(reason: str, words: int = 9) -> str:
    """The first words of a human-review reason (to count them)."""
    return " ".join(reason.split()[:words])


def check(rows: list[dict[str, Any]], config: dict[str, Any] | None) -> list[dict[str, Any]]:
    from guardrail import Guardrail

    guard = Guardrail(config)
    out = []
    for row in rows:
        report = guard.invoke(
            {"query": row["query"], "response": row["response"], "passages": row["passages"]}
        )
        found, bare = question_findings(report)
        rec = report.recommendation
        out.append(
            {
                "id": row["id"],
                "source": row["source"],
                "split": row["split"],
                "label": row["label"],
                "action": rec.action,
                "verdict": report.verdict.label.value,
                "review_reason": reason_head(rec.reason) if rec.action == "human_review" else None,
                "question_claims": found,
                "bare_questions": bare,
            }
        )
    return out


def bacc(rows: list[dict[str, Any]], attributable: set[str]) -> float | None:
    """Balanced accuracy of "verdict in ``attributable``" against the label."""
    pos = [r for r in rows if r["label"] is True]
    neg = [r for r in rows if r["label"] is False]
    if not pos or not neg:
        return None
    tpr = sum(r["verdict"] in attributable for r in pos) / len(pos)
    tnr = sum(r["verdict"] not in attributable for r in neg) / len(neg)
    return round((tpr + tnr) / 2, 4)


def share(rows: list[dict[str, Any]], action: str) -> float | None:
    return round(sum(r["action"] == action for r in rows) / len(rows), 4) if rows else None


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    labelled = [r for r in rows if r["label"] is not None]
    return {
        "n": len(labelled),
        "n_all": len(rows),
        "attributable": sum(r["label"] is True for r in labelled),
        "review": share(labelled, "human_review"),
        "review_all": share(rows, "human_review"),
        "verdict_bacc": bacc(labelled, {"VERIFIED"}),
        "bacc_nothing_ok": bacc(labelled, {"VERIFIED", "NOTHING_TO_CHECK"}),
        "verdicts": dict(sorted(Counter(r["verdict"] for r in labelled).items())),
        "actions": dict(sorted(Counter(r["action"] for r in labelled).items())),
        "review_reasons": dict(
            Counter(r["review_reason"] for r in rows if r["review_reason"]).most_common(6)
        ),
        "question_claims": sum(len(r["question_claims"]) for r in rows),
        "replies_with_question_claims": sum(bool(r["question_claims"]) for r in rows),
        "bare_questions": sum(len(r["bare_questions"]) for r in rows),
    }


def question_quality(rows: list[dict[str, Any]], labels: list[dict[str, Any]]) -> dict[str, Any]:
    """Precision and recall of the claims found inside questions, on the labelled sample.

    Each label: ``question`` (a question sentence), ``asserts`` (whether it asserts or
    presupposes a checkable fact), ``fact`` (the fact, when it does). A found claim is right
    when its question asserts a fact and the claim holds that fact (the label's fact within the
    claim text, ignoring case). A claim that is the whole question is no fact found inside it
    (its language was not read as English, so check-worthiness did not apply): counted apart."""
    found: dict[str, list[str]] = {}
    seen: set[str] = set()
    whole = 0
    for r in rows:
        for f in r["question_claims"]:
            seen.add(f["question"])
            if " ".join(f["claim"].split()) == f["question"]:
                whole += 1  # a question checked whole (its language not read as English)
                continue
            found.setdefault(f["question"], []).append(f["claim"])
        seen.update(r["bare_questions"])
    judged = [lab for lab in labels if lab["question"] in seen]
    tp = fp = fn = 0
    for lab in judged:
        claims = found.get(lab["question"], [])
        fact = " ".join(str(lab.get("fact") or "").lower().split())
        right = any(fact and fact in " ".join(c.lower().split()) for c in claims)
        if claims:
            tp += bool(lab["asserts"] and right)
            fp += not (lab["asserts"] and right)
        fn += bool(lab["asserts"] and not right)
    return {
        "labelled_questions": len(judged),
        "asserting": sum(bool(lab["asserts"]) for lab in judged),
        "claims_right": tp,
        "claims_wrong": fp,
        "asserted_missed": fn,
        "questions_checked_whole": whole,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
    }


def table(label: str, summary: dict[str, Any]) -> str:
    lines = []
    for split, by_source in summary.items():
        if split not in SPLITS:
            continue
        for source, s in by_source.items():
            b = s["verdict_bacc"]
            lines.append(
                f"{label:>8} {split:>4} {source:>14} n={s['n']:4d} (all {s['n_all']:4d}) "
                f"review {s['review']:.3f} (all {s['review_all']:.3f}) "
                f"verdict bAcc {b if b is None else f'{b:.3f}'} "
                f"q-claims {s['question_claims']} | {s['verdicts']} {s['actions']}"
            )
        quality = summary.get("question_quality", {}).get(split)
        if quality and quality["labelled_questions"]:
            lines.append(f"{label:>8} {split:>4} claims inside questions (labelled): {quality}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--label", default="current", help="the code version measured")
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--limit", type=int, default=0, help="replies per source (0 = all)")
    parser.add_argument("--config", type=Path, default=None, help="guardrail config YAML")
    parser.add_argument("--out", type=Path, default=None, help="results JSON to update")
    parser.add_argument(
        "--list-questions", action="store_true", help="print every question sentence found"
    )
    args = parser.parse_args()
    sources = args.sources.split(",")
    rows = load(data_root(args.data_dir), sources)
    if args.split != "both":
        rows = [r for r in rows if r["split"] == args.split]
    if args.limit:
        rows = [r for s in sources for r in [x for x in rows if x["source"] == s][: args.limit]]
    print("replies:", dict(sorted(Counter((r["split"], r["source"]) for r in rows).items())))
    config = None
    if args.config is not None:
        import yaml

        config = yaml.safe_load(args.config.read_text())
    started = time.perf_counter()
    per_row = check(rows, config)
    seconds = round(time.perf_counter() - started, 1)
    results: dict[str, Any] = {}
    if args.out is not None and args.out.exists():
        results = json.loads(args.out.read_text())
    labels = results.get("question_labels", [])
    summary: dict[str, Any] = {}
    for split in SPLITS:
        in_split = [r for r in per_row if r["split"] == split]
        if not in_split:
            continue
        summary[split] = {s: summarise([r for r in in_split if r["source"] == s]) for s in sources}
        summary[split]["all"] = summarise(in_split)
        summary.setdefault("question_quality", {})[split] = question_quality(in_split, labels)
    summary["seconds"] = seconds
    print(table(args.label, summary), flush=True)
    if args.list_questions:
        for r in per_row:
            for f in r["question_claims"]:
                print(f"CLAIM {r['split']} {r['id']} | {f['question']} | {f['claim']}")
            for q in r["bare_questions"]:
                print(f"BARE  {r['split']} {r['id']} | {q}")
    if args.out is not None:
        results["about"] = __doc__.split("\n\n")[0]
        results["split"] = "DECISIONS_SPLIT by conversation (SHA-256, 40 % dev)"
        results.setdefault("runs", {})[args.label] = {
            "config": str(args.config) if args.config else "default",
            "sources": sources,
            "summary": summary,
            "rows": [
                f"{r['id']} {r['split']} {r['label']} {r['verdict']} {r['action']} "
                f"q{len(r['question_claims'])}"
                for r in per_row
            ],
        }
        results.setdefault("question_labels", labels)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
