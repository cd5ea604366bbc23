"""Audit results: result rows from a GuardReport, durable parts, torn parts, summary (no models)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

from guardrail.audit import results as res
from guardrail.audit.runner import AuditOptions, run_audit
from guardrail.audit.summary import render_markdown, summarise
from guardrail.errors import InputError
from guardrail.report import GuardReport


def audit_row(key: str, index: int, session: str | None = "s") -> dict[str, Any]:
    payload = json.dumps({"query": f"q{index}", "response": f"answer {index}"})
    return {"key": key, "index": index, "session_id": session, "turn_id": index,
            "payload": payload}  # fmt: skip


def report(action: str, confidence: float, verdict: str = "VERIFIED") -> dict[str, Any]:
    rec: dict[str, Any] = {"action": action}
    if action == "regenerate":
        rec["guidance"] = "remove the invented price"
    if action == "human_review":
        rec["reason"] = "no evidence"
    flags = []
    if action != "accept":
        flags = [{"type": "fabricated_fact", "span": {"start": 0, "end": 6}, "content": "answer",
                  "confidence": 0.9, "severity": 1.0}]  # fmt: skip
    rep = GuardReport.model_validate(
        {"original": "answer", "corrected": "answer", "annotated": "answer",
         "confidence": confidence, "recommendation": rec, "verdict": {"label": verdict},
         "hallucination_flags": flags, "timings_ms": {"claims": 1.5}}
    )  # fmt: skip
    return rep.model_dump(mode="json")


def test_report_result_columns() -> None:
    out = res.report_result(audit_row("s/1", 1), report("regenerate", 0.4, "HALLUCINATION"), 12.0)
    assert set(out) == set(res.COLUMNS)
    assert (out["status"], out["verdict"], out["action"]) == ("ok", "HALLUCINATION", "regenerate")
    assert out["n_flags"] == 1 and json.loads(out["flags"])[0]["type"] == "fabricated_fact"
    assert out["reason"] == "remove the invented price"
    assert out["query"] == "q1" and out["response"] == "answer 1"
    err = res.error_result(audit_row("s/2", 2), "InputError: empty")
    assert (err["status"], err["error"], err["verdict"]) == ("error", "InputError: empty", None)


def test_parts_are_atomic_and_torn_parts_are_redone(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    rows = [res.report_result(audit_row(f"s/{i}", i), report("accept", 0.95), 1.0)
            for i in range(1, 5)]  # fmt: skip
    good = res.write_part(parts, "local-a-000000", rows[:2])
    res.write_part(parts, "local-a-000001", rows[2:])
    assert not list(parts.glob(".*"))  # no temporary file left behind
    # A part cut short by a kill (no footer) and a temporary file of an unfinished write.
    torn = parts / "ray-b" / "x_000000-0.parquet"
    torn.parent.mkdir()
    torn.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    (parts / ".local-a-000002.parquet.tmp").write_bytes(b"PAR1")
    scan = res.scan_parts(parts)
    assert scan.done == {"s/1", "s/2", "s/3", "s/4"}
    assert len(scan.files) == 2 and len(scan.removed) == 2
    assert not torn.exists()
    table = res.load_results(scan.files)
    assert table.column("key").to_pylist() == ["s/1", "s/2", "s/3", "s/4"]


def test_load_results_keeps_one_row_per_key(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    row = res.report_result(audit_row("s/1", 1), report("accept", 0.95), 1.0)
    res.write_part(parts, "p0", [row])
    res.write_part(parts, "p1", [row])
    assert res.load_results(res.scan_parts(parts).files).num_rows == 1


def test_summary_and_markdown() -> None:
    rows = [
        res.report_result(audit_row("a/0", 1, "a"), report("accept", 0.97), 1.0),
        res.report_result(audit_row("a/1", 2, "a"), report("regenerate", 0.41, "HALLUCINATION"), 1.0),
        res.report_result(audit_row("b/0", 3, "b"), report("human_review", 0.9, "UNVERIFIED"), 1.0),
    ]  # fmt: skip
    errors = [{"index": 4, "stage": "read", "reason": "not valid JSON"}]
    summary = summarise(res.to_table(rows), errors, 4, {"engine": "local", "input": "x.jsonl"})
    assert summary["rows"] == {"input": 4, "checked": 3, "errors": 1, "read_errors": 1,
                               "check_errors": 0}  # fmt: skip
    assert summary["actions"] == {"accept": 1, "human_review": 1, "regenerate": 1}
    assert summary["flagged"] == 2
    assert summary["sessions"]["a"]["actions"] == {"accept": 1, "regenerate": 1}
    assert [w["key"] for w in summary["worst"]] == ["a/1", "b/0", "a/0"]
    text = render_markdown(summary)
    assert "| a | 2 | 1 |" in text and "a/1" in text and "errors.jsonl" in text


def test_run_audit_all_rows_malformed_needs_no_model(tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text('{"query": "q"}\nnot json\n', encoding="utf-8")
    out = tmp_path / "out"
    summary = run_audit(AuditOptions(input=src, out=out, progress=False))
    assert summary["rows"]["errors"] == 2 and summary["rows"]["checked"] == 0
    errors = [json.loads(line) for line in (out / "errors.jsonl").read_text().splitlines()]
    assert [e["index"] for e in errors] == [1, 2]
    assert {p.name for p in out.iterdir()} >= {"results.parquet", "summary.json", "report.md"}
    # A second run into the same directory must be asked for explicitly…
    with pytest.raises(InputError, match="--resume"):
        run_audit(AuditOptions(input=src, out=out, progress=False))
    # …and resuming with a changed input is refused.
    src.write_text('{"query": "q"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="input differs"):
        run_audit(AuditOptions(input=src, out=out, resume=True, progress=False))
    run_audit(AuditOptions(input=src, out=out, overwrite=True, progress=False))
    assert len((out / "errors.jsonl").read_text().splitlines()) == 1
    assert os.path.exists(out / "manifest.json")


def test_report_result_records_per_claim_outcomes_and_the_delivered_text() -> None:
    text = "It rains. It was sunny in 2024."
    rep = GuardReport.model_validate(
        {"original": text, "corrected": "It rains.", "annotated": "It rains.",
         "confidence": 0.6, "recommendation": {"action": "correct_and_deliver"},
         "claims": [
             {"text": "It rains.", "span": {"start": 0, "end": 9}, "status": "supported",
              "outcome": "supported"},
             {"text": "It was sunny in 2024.", "span": {"start": 10, "end": 31},
              "status": "unsupported", "outcome": "removed"},
         ]}
    ).model_dump(mode="json")  # fmt: skip
    out = res.report_result(audit_row("s/3", 3), rep, 5.0)
    assert (out["claims_removed"], out["claims_repaired"], out["claims_annotated"]) == (1, 0, 0)
    assert [c["outcome"] for c in json.loads(out["claim_outcomes"])] == ["supported", "removed"]
    assert out["delivered"] == "It rains."
    regen = report("regenerate", 0.4, "HALLUCINATION")
    assert res.report_result(audit_row("s/4", 4), regen, 1.0)["delivered"] is None
