"""``guardrail audit`` on the example log with the real models: outputs, and a run killed with
SIGKILL mid-way then resumed gives the same results as an uninterrupted run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")
import pyarrow.parquet as pq

from guardrail.audit.results import RESULT_COLUMNS, part_files, scan_parts
from guardrail.audit.runner import AuditOptions, run_audit

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "audit_sample.jsonl"


def results(out: Path) -> list[dict[str, Any]]:
    return pq.read_table(out / "results.parquet", columns=list(RESULT_COLUMNS)).to_pylist()


def conclusions(out: Path) -> dict[str, Any]:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    summary.pop("run")
    return summary


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "uninterrupted"
    run_audit(AuditOptions(input=SAMPLE, out=out, workers=1, chunk_size=4, progress=False))
    return out


def test_sample_audit_outputs(baseline: Path) -> None:
    rows = results(baseline)
    summary = json.loads((baseline / "summary.json").read_text(encoding="utf-8"))
    errors = [json.loads(x) for x in (baseline / "errors.jsonl").read_text().splitlines()]
    read = sum(1 for line in SAMPLE.read_text().splitlines() if line.strip())
    # Nothing dropped: every input row is a result or an error with a reason.
    assert len(rows) + len(errors) == read == summary["rows"]["input"]
    assert all(e["reason"] for e in errors)
    assert {e["stage"] for e in errors} == {"read", "check"}  # the empty answer is refused
    by_key = {r["key"]: r for r in rows}
    # Answers that follow their passages are accepted; invented limits are not.
    assert by_key["hr-0412/0"]["action"] == "accept"
    assert by_key["fin-2231/2"]["verdict"] == "VERIFIED"
    for bad in ("hr-0412/2", "fin-2231/1", "it-0977/2"):
        assert by_key[bad]["verdict"] == "HALLUCINATION"
        assert by_key[bad]["action"] not in ("accept", "accept_with_flags")
    # No evidence at all: not accepted (fail-closed).
    assert by_key["gen-0051/0"]["action"] == "human_review"
    assert summary["flagged"] == sum(1 for r in rows if r["action"] != "accept")
    assert set(summary["sessions"]) >= {"hr-0412", "it-0977", "fin-2231", "gen-0051"}
    report = (baseline / "report.md").read_text(encoding="utf-8")
    assert "## Worst answers" in report and "it-0977" in report


def test_killed_and_resumed_run_equals_uninterrupted(baseline: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "guardrail.cli", "audit", str(SAMPLE), "--out", str(out),
           "--chunk-size", "2", "--no-progress"]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 600
    try:
        while len(part_files(out / "parts")) < 2:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "no part written in 10 minutes"
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its worker processes, mid-run
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "results.parquet").exists()
    done = scan_parts(out / "parts", clean=False).done
    total = len(results(baseline)) + 1  # the refused empty answer is a part row too
    assert 0 < len(done) < total
    # Also a part torn by a kill during Ray's write, and a temporary file of ours.
    first = part_files(out / "parts")[0]
    torn = out / "parts" / "ray-torn" / "x_000000-0.parquet"
    torn.parent.mkdir()
    torn.write_bytes(first.read_bytes()[:100])
    shutil.copy(first, out / "parts" / f".{first.name}.tmp")

    summary = run_audit(AuditOptions(input=SAMPLE, out=out, resume=True, chunk_size=2,
                                     progress=False))  # fmt: skip
    assert summary["run"]["resumed_with"] == len(done)
    run = summary["run"]
    assert run["checked_this_run"] + run["refused_this_run"] == total - len(done)
    assert not torn.exists()
    assert results(out) == results(baseline)
    assert (out / "errors.jsonl").read_text() == (baseline / "errors.jsonl").read_text()
    assert conclusions(out) == conclusions(baseline)
