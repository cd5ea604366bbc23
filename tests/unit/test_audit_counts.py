"""The audit's counts agree: "this run" counts checked answers as the totals do (a refused
answer is counted apart, not as a checked one), and a resumed run counts only its own rows."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

from guardrail.audit import results as res
from guardrail.audit.runner import finalise
from guardrail.audit.summary import render_markdown
from guardrail.report import GuardReport


def row(i: int) -> dict[str, Any]:
    payload = json.dumps({"query": f"q{i}", "response": f"answer {i}" if i != 16 else ""})
    return {"key": f"s/{i}", "index": i, "session_id": "s", "turn_id": i, "payload": payload}


def ok(i: int) -> dict[str, Any]:
    report = GuardReport.model_validate(
        {"original": "a", "corrected": "a", "annotated": "a", "confidence": 0.95,
         "recommendation": {"action": "accept"}, "verdict": {"label": "VERIFIED"}}
    ).model_dump(mode="json")  # fmt: skip
    return res.report_result(row(i), report, 10.0)


READ_ERRORS = [
    {"index": i, "key": None, "stage": "read", "reason": "not valid JSON"} for i in (17, 18, 19, 20)
]


def test_this_run_counts_checked_answers_like_the_totals(tmp_path: Path) -> None:
    # The sample audit's shape: 20 rows → 15 checked, 4 unreadable, 1 refused (empty answer).
    # Before: "20 rows: 15 checked, 5 errors" then "this run: 16 answers" (refused counted).
    parts = tmp_path / "parts"
    rows = [ok(i) for i in range(1, 16)]
    rows.insert(2, res.error_result(row(16), "InputError: the response is empty"))
    res.write_part(parts, "local-a-000000", rows[:8])
    res.write_part(parts, "local-a-000001", rows[8:])
    summary = finalise(tmp_path, READ_ERRORS, {"engine": "local", "workers": 1, "elapsed_s": 3.0})
    assert summary["rows"] == {"input": 20, "checked": 15, "errors": 5, "read_errors": 4,
                               "check_errors": 1}  # fmt: skip
    assert summary["run"]["checked_this_run"] == summary["rows"]["checked"] == 15
    assert summary["run"]["refused_this_run"] == summary["rows"]["check_errors"] == 1
    assert summary["run"]["answers_per_s"] == 5.0
    assert "this run checked 15 answers and refused 1" in render_markdown(summary)

    lines = cli_lines(summary, tmp_path)
    assert lines[0].startswith("20 rows: 15 checked, 5 errors (4 unreadable, 1 refused)")
    assert lines[3].startswith("this run: 15 checked, 1 refused in 3.0 s")


def test_a_resumed_run_counts_only_its_own_rows(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    earlier = [ok(i) for i in range(1, 6)]
    res.write_part(parts, "local-a-000000", earlier)
    res.write_part(parts, "local-b-000000", [ok(i) for i in range(6, 9)])
    run = {"engine": "local", "workers": 1, "elapsed_s": 1.5, "resumed_with": 5}
    summary = finalise(tmp_path, [], run, resumed={r["key"] for r in earlier})
    assert summary["rows"]["checked"] == 8
    assert (summary["run"]["checked_this_run"], summary["run"]["refused_this_run"]) == (3, 0)
    assert cli_lines(summary, tmp_path)[3].endswith("; 5 rows were done by an earlier run")


def cli_lines(summary: dict[str, Any], out: Path) -> list[str]:
    import guardrail.audit
    from guardrail.cli import audit as cli

    args = argparse.Namespace(
        input="x.jsonl", out=str(out), engine="local", workers=1, cpus_per_worker=1,
        chunk_size=32, resume=False, overwrite=False, config=None, input_format="auto",
        no_progress=True,
    )  # fmt: skip
    captured: list[str] = []
    mp = pytest.MonkeyPatch()
    mp.setattr(guardrail.audit, "run_audit", lambda opts: summary)
    mp.setattr("sys.stdout.write", captured.append)
    try:
        assert cli.run(args) == 0
    finally:
        mp.undo()
    return "".join(captured).splitlines()
