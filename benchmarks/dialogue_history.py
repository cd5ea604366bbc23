"""Is an answer that contradicts an earlier dialogue turn caught when there is no other evidence?

Built on the DialFact sample (``dialfact_small/scripts/testsmall.jsonl``: 300 rows of dialogue
context, a response and the Wikipedia snippet(s) it is labelled against; SUPPORTS / REFUTES /
NOT ENOUGH INFO). Only SUPPORTS and REFUTES rows are read (an unverifiable response has nothing
to contradict). Two settings per row:

- ``history`` — history as the only evidence: the context turns (the last one the user's), then
  the evidence snippet(s) as one more *assistant* turn, no passages, no knowledge base; the
  response is checked. A REFUTES response contradicts that earlier turn and should be caught; a
  SUPPORTS one should not;
- ``normal`` — the snippet(s) as passages and the original context as the history (to check
  nothing gets worse where there is evidence).

"Caught" (``contradiction``): a ``contradicts_prior`` flag, a fact-validation
``history_conflict``, a ``contradicts_fact`` flag or a claim ``contradicted`` — any signal that
the answer says the opposite of something; ``not accepted``: the action is anything but
``accept``. Printed per configuration, setting and split: the contradiction rate on REFUTES,
the false-flag (contradiction) rate on SUPPORTS, the non-accept rates and the action counts.

The rows split into dev / test by ``context_id`` (one dialogue's rows stay together) with
``guardrail.evaluation.sources.DECISIONS_SPLIT``; settings are chosen on dev only.

Configurations (``--configs``): ``default`` (the code as checked out, default config) and
``history_verifier`` (``facts.history_verifier`` on: fact validation's own verifier call at
``confidence.blocking``), and ``fail_open`` (the default with
``failure_policy: fail_open``: what the action is when an unverified answer is not sent to
review for that alone). ``--label`` names the code version the run measured (the
results file keeps one entry per label and configuration).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/dialogue_history.py --label before \\
        --configs default,history_verifier --out benchmarks/results/dialogue_history.json
"""

from __future__ import annotations

import argparse
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
LABELS = ("SUPPORTS", "REFUTES")
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "history_verifier": {"facts": {"history_verifier": True}},
    "fail_open": {"failure_policy": "fail_open"},
    # candidates for the prior-turn pairs' settings (chosen on dev)
    "prior_sim_0.3": {"hallucination": {"prior_min_similarity": 0.3}},
    "prior_sim_0.5": {"hallucination": {"prior_min_similarity": 0.5}},
    "prior_turns_4": {"hallucination": {"prior_turn_candidates": 4}},
    "prior_turns_4_sim_0.3": {
        "hallucination": {"prior_turn_candidates": 4, "prior_min_similarity": 0.3}
    },
}
SETTINGS = ("history", "normal")


def snippets(row: dict[str, Any]) -> list[str]:
    """The row's evidence snippets, each once, in order."""
    return list(dict.fromkeys(e[2].strip() for e in row["evidence_list"] if e[2].strip()))


def turns_of(context: list[str]) -> list[dict[str, Any]]:
    """The context as turns, alternating speakers so the last is the user's."""
    n = len(context)
    return [
        {"speaker": "user" if (n - 1 - i) % 2 == 0 else "assistant", "text": t.strip()}
        for i, t in enumerate(context)
        if t.strip()
    ]


def build_input(row: dict[str, Any], setting: str) -> dict[str, Any]:
    """The guardrail input of ``row`` in ``setting`` (see the module docstring)."""
    context = [t for t in row["context"] if t.strip()]
    query = context[-1].strip() if context else ""
    turns = turns_of(context)
    if setting == "history":
        turns.append({"speaker": "assistant", "text": " ".join(snippets(row))})
        return {"query": query, "response": row["response"], "dialogue": {"turns": turns}}
    return {
        "query": query,
        "response": row["response"],
        "passages": snippets(row),
        "dialogue": {"turns": turns},
    }


def signals(report: Any) -> dict[str, Any]:
    """What the report says about contradictions, and its action."""
    flags = Counter(f.type.value for f in report.hallucination_flags)
    factual = report.factual_validation
    history_conflicts = factual.stats.history_conflicts if factual is not None else 0
    contradicted = sum(c.status.value == "contradicted" for c in report.claims)
    stage = {s.name: s.status.value for s in report.stages}
    caught = bool(
        flags["contradicts_prior"] or flags["contradicts_fact"] or history_conflicts or contradicted
    )
    return {
        "action": report.action.value,
        "contradiction": caught,
        "prior_flag": bool(flags["contradicts_prior"]),
        "history_conflict": bool(history_conflicts),
        "hallucination_stage": stage.get("hallucination"),
        "verdict": report.verdict.label.value if report.verdict is not None else None,
    }


def compact(row: dict[str, Any]) -> str:
    """One row of the results file: id, setting, split, label, action and the signals
    (``P`` contradicts_prior flag, ``H`` history conflict, ``C`` any contradiction, ``-`` none)."""
    marks = "".join(m if row[k] else "-" for m, k in ROW_MARKS)
    return f"{row['id']} {row['setting']} {row['split']} {row['label']} {row['action']} {marks}"


ROW_MARKS = (("P", "prior_flag"), ("H", "history_conflict"), ("C", "contradiction"))


def rate(rows: list[dict[str, Any]], key: str) -> float | None:
    """The share of ``rows`` whose ``key`` is true (``None`` for no rows)."""
    return round(sum(bool(r[key]) for r in rows) / len(rows), 4) if rows else None


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Rates and action counts of one (configuration, setting, split)."""
    out: dict[str, Any] = {}
    for label in LABELS:
        rows = [
            dict(r, not_accepted=r["action"] != "accept") for r in results if r["label"] == label
        ]
        out[label] = {
            "n": len(rows),
            "contradiction_rate": rate(rows, "contradiction"),
            "prior_flag_rate": rate(rows, "prior_flag"),
            "history_conflict_rate": rate(rows, "history_conflict"),
            "not_accepted_rate": rate(rows, "not_accepted"),
            "actions": dict(sorted(Counter(r["action"] for r in rows).items())),
            "hallucination_stage": dict(
                sorted(Counter(str(r["hallucination_stage"]) for r in rows).items())
            ),
        }
    return out


def load(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [r for r in read_rows(path) if r["response_label"] in LABELS]
    for r in rows:
        r["split"] = DECISIONS_SPLIT.of(r["context_id"])
    return rows[:limit] if limit else rows


def run(
    rows: list[dict[str, Any]], config: str, settings: list[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from guardrail import Guardrail

    per_row: list[dict[str, Any]] = []
    started = time.perf_counter()
    for setting in settings:
        # a guardrail per setting: one setting's cached scores do not change the batches (and
        # so, by padding, the last digits of the scores) of the other
        guard = Guardrail(CONFIGS[config] or None)
        for row in rows:
            report = guard.invoke(build_input(row, setting))
            per_row.append(
                {
                    "id": row["id"],
                    "split": row["split"],
                    "label": row["response_label"],
                    "setting": setting,
                    **signals(report),
                }
            )
    seconds = time.perf_counter() - started
    summary = {
        setting: {
            split: summarise(
                [r for r in per_row if r["setting"] == setting and r["split"] == split]
            )
            for split in ("dev", "test")
            if any(r["split"] == split for r in rows)
        }
        for setting in settings
    }
    summary["seconds"] = round(seconds, 1)
    return summary, per_row


def table(label: str, config: str, summary: dict[str, Any]) -> str:
    lines = []
    for setting, by_split in summary.items():
        if setting == "seconds":
            continue
        for split, s in by_split.items():
            r, su = s["REFUTES"], s["SUPPORTS"]
            lines.append(
                f"{label:>8} {config:>16} {setting:>8} {split:>5} | REFUTES n={r['n']:3d} "
                f"caught {r['contradiction_rate']:.2f} not-accept {r['not_accepted_rate']:.2f} "
                f"{r['actions']} | SUPPORTS n={su['n']:3d} false-flag "
                f"{su['contradiction_rate']:.2f} not-accept {su['not_accepted_rate']:.2f} "
                f"{su['actions']}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--label", default="current", help="the code version measured")
    parser.add_argument("--configs", default="default,history_verifier")
    parser.add_argument("--settings", default="history,normal")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--out", type=Path, default=None, help="results JSON to update")
    args = parser.parse_args()
    rows = load(data_root(args.data_dir) / DIALFACT, args.limit)
    if args.split != "both":
        rows = [r for r in rows if r["split"] == args.split]
    split_counts = Counter((r["split"], r["response_label"]) for r in rows)
    print("rows:", dict(sorted(split_counts.items())), flush=True)
    results: dict[str, Any] = {}
    if args.out is not None and args.out.exists():
        results = json.loads(args.out.read_text())
    for config in args.configs.split(","):
        summary, per_row = run(rows, config, args.settings.split(","))
        print(table(args.label, config, summary), flush=True)
        results.setdefault("runs", {}).setdefault(args.label, {})[config] = {
            "config": CONFIGS[config],
            "summary": summary,
            "rows": [compact(r) for r in per_row],
        }
    if args.out is not None:
        results["about"] = __doc__.split("\n\n")[0]
        results["split"] = "DECISIONS_SPLIT by context_id (SHA-256, 40 % dev)"
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
