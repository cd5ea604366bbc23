"""The audit's conclusions: ``summary.json`` and a short Markdown report.

Both are computed from the final results table (and the error records), so a resumed run and an
uninterrupted one summarise alike; only the ``run`` section (engine, time, rate) differs.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

#: Sessions listed in ``summary.json`` (the most flagged first) and in the Markdown report.
MAX_SESSIONS_JSON = 1000
MAX_SESSIONS_MD = 20
#: Answers listed as the worst (lowest confidence).
WORST = 10


def _counts(values: list[Any]) -> dict[str, int]:
    return dict(sorted(Counter(str(v) for v in values).items()))


def summarise(
    table: Any, errors: list[dict[str, Any]], rows_total: int, run: dict[str, Any]
) -> dict[str, Any]:
    """The summary dict: counts of verdicts, actions and flags, per session, the worst answers."""
    cols = {
        name: table.column(name).to_pylist()
        for name in ("key", "session_id", "turn_id", "verdict", "action", "confidence", "flags")
    }
    cols.update(
        {n: table.column(n).to_pylist() for n in ("response", "reason", "index", "n_flags")}
    )
    n = table.num_rows
    confidences = sorted(c for c in cols["confidence"] if c is not None)
    flag_types: Counter[str] = Counter()
    for raw in cols["flags"]:
        for flag in json.loads(raw or "[]"):
            flag_types[str(flag.get("type"))] += 1
    sessions: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "answers": 0,
            "flagged": 0,
            "verdicts": Counter(),
            "actions": Counter(),
            "conf": 0.0,
        }
    )
    for i in range(n):
        s = sessions[str(cols["session_id"][i]) if cols["session_id"][i] is not None else "(none)"]
        s["answers"] += 1
        s["flagged"] += cols["action"][i] != "accept"
        s["verdicts"][str(cols["verdict"][i])] += 1
        s["actions"][str(cols["action"][i])] += 1
        s["conf"] += cols["confidence"][i] or 0.0
    ranked = sorted(sessions.items(), key=lambda kv: (-kv[1]["flagged"], kv[0]))
    order = sorted(range(n), key=lambda i: (cols["confidence"][i] or 0.0, cols["index"][i]))
    worst = [
        {
            "key": cols["key"][i],
            "session_id": cols["session_id"][i],
            "turn_id": cols["turn_id"][i],
            "verdict": cols["verdict"][i],
            "action": cols["action"][i],
            "confidence": cols["confidence"][i],
            "flags": sorted({f["type"] for f in json.loads(cols["flags"][i] or "[]")}),
            "reason": (cols["reason"][i] or "")[:300],
            "response": (cols["response"][i] or "")[:300],
        }
        for i in order[:WORST]
    ]
    return {
        "rows": {
            "input": rows_total,
            "checked": n,
            "errors": len(errors),
            "read_errors": sum(1 for e in errors if e.get("stage") == "read"),
            "check_errors": sum(1 for e in errors if e.get("stage") == "check"),
        },
        "verdicts": _counts(cols["verdict"]),
        "actions": _counts(cols["action"]),
        "flagged": sum(1 for a in cols["action"] if a != "accept"),
        "flag_types": dict(sorted(flag_types.items())),
        "confidence": {
            "mean": round(sum(confidences) / len(confidences), 4) if confidences else None,
            "min": round(confidences[0], 4) if confidences else None,
            "median": round(confidences[len(confidences) // 2], 4) if confidences else None,
        },
        "sessions_total": len(sessions),
        "sessions": {
            name: {
                "answers": s["answers"],
                "flagged": s["flagged"],
                "mean_confidence": round(s["conf"] / s["answers"], 4),
                "verdicts": dict(sorted(s["verdicts"].items())),
                "actions": dict(sorted(s["actions"].items())),
            }
            for name, s in ranked[:MAX_SESSIONS_JSON]
        },
        "worst": worst,
        "run": run,
    }


def _table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


def render_markdown(summary: dict[str, Any]) -> str:
    """A short report: totals, actions and verdicts per session, the worst answers, errors."""
    rows, run = summary["rows"], summary["run"]
    actions = sorted({a for s in summary["sessions"].values() for a in s["actions"]})
    verdicts = sorted({v for s in summary["sessions"].values() for v in s["verdicts"]})
    lines = [
        "# Guardrail audit",
        "",
        f"Input `{run.get('input')}`: {rows['input']} rows, {rows['checked']} checked, "
        f"{rows['errors']} errors ({rows['read_errors']} unreadable, {rows['check_errors']} "
        f"refused; see `errors.jsonl`). {summary['flagged']} answers would not have been "
        f"delivered as they were (action other than `accept`).",
        "",
        "## Totals",
        "",
        *_table(["", *summary["actions"]], [["answers", *summary["actions"].values()]]),
        "",
        *_table(["", *summary["verdicts"]], [["answers", *summary["verdicts"].values()]]),
        "",
        f"Mean confidence {summary['confidence']['mean']}, median "
        f"{summary['confidence']['median']}. Flags: "
        + (", ".join(f"{k} {v}" for k, v in summary["flag_types"].items()) or "none")
        + ".",
        "",
        f"## Sessions (most flagged first; {min(MAX_SESSIONS_MD, summary['sessions_total'])} "
        f"of {summary['sessions_total']})",
        "",
        *_table(
            ["session", "answers", "flagged", "mean conf.", *actions, *verdicts],
            [
                [name, s["answers"], s["flagged"], s["mean_confidence"]]
                + [s["actions"].get(a, 0) for a in actions]
                + [s["verdicts"].get(v, 0) for v in verdicts]
                for name, s in list(summary["sessions"].items())[:MAX_SESSIONS_MD]
            ],
        ),
        "",
        "## Worst answers (lowest confidence)",
        "",
        *_table(
            ["key", "verdict", "action", "conf.", "flags", "answer"],
            [
                [
                    w["key"],
                    w["verdict"],
                    w["action"],
                    f"{w['confidence']:.3f}",
                    ", ".join(w["flags"]) or "-",
                    w["response"][:120].replace("\n", " "),
                ]
                for w in summary["worst"]
            ],
        ),
        "",
        f"Engine {run.get('engine')}, {run.get('workers')} workers: this run checked "
        f"{run.get('checked_this_run')} answers and refused {run.get('refused_this_run', 0)} "
        f"in {run.get('elapsed_s')} s ({run.get('answers_per_s')} answers/s)"
        + (
            f"; {run['resumed_with']} rows were done by an earlier run."
            if run.get("resumed_with")
            else "."
        ),
        "",
    ]
    return "\n".join(lines)
