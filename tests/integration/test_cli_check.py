"""``guardrail check`` end to end with the real offline models: what a user must see."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "guardrail.cli", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
    )


def test_check_json_prints_a_full_report() -> None:
    out = run_cli(
        "check",
        "--format",
        "json",
        "--query",
        "When is the meeting?",
        "--response",
        "The meeting is at 2pm on Monday.",
        "--passage",
        "The meeting with John is at 2pm on Monday in room 4B.",
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    for key in (
        "original",
        "corrected",
        "annotated",
        "coherence",
        "factual_validation",
        "hallucination_flags",
        "corrections",
        "new_entities",
        "confidence",
        "recommendation",
        "claims",
        "verdict",
        "stages",
        "timings_ms",
    ):
        assert key in report, key
    assert report["original"] == "The meeting is at 2pm on Monday."
    assert report["verdict"]["label"] == "VERIFIED"
    # the passage had no score and the calibrated policy does not use T(rs): none computed
    assert report["verdict"]["policy"] == "calibrated"
    assert report["verdict"]["retrieval_score"] is None
    assert report["recommendation"]["action"] in ("accept", "accept_with_flags")
    stages = {s["name"]: s["status"] for s in report["stages"]}
    assert stages["hallucination"] == "ran" and stages["claims"] == "ran"


def test_check_text_format_and_bad_input(tmp_path: Path) -> None:
    out = run_cli("check", "--query", "q?", "--response", "   ", "--passage", "p")
    assert out.returncode == 2
    assert out.stderr.strip().startswith("guardrail: error:") and "empty" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"text": "ok"}\nnot json\n')
    out = run_cli("check", "--response", "An answer here.", "--passages-file", str(bad))
    assert out.returncode == 2 and "p.jsonl:2" in out.stderr
    out = run_cli(
        "check",
        "--format",
        "text",
        "--query",
        "When is the meeting?",
        "--response",
        "The meeting is at 2pm on Monday.",
        "--passage",
        "The meeting with John is at 2pm on Monday in room 4B.",
    )
    assert out.returncode == 0, out.stderr
    assert "verdict:" in out.stdout and "confidence:" in out.stdout and "action:" in out.stdout


ALPHA_QUERY = "Who created AlphaCodium?"
ALPHA_RESPONSE = (
    "AlphaCodium was created by CodiumAI. It is a code generation method. "
    "It was acquired by Google in 2024."
)
ALPHA_PASSAGE = (
    "AlphaCodium is a code generation method developed by CodiumAI. It uses a test-based, "
    "multi-stage flow to improve code generation by large language models."
)


def test_check_text_lists_claim_outcomes_the_removal_and_the_delivered_text() -> None:
    """The AlphaCodium answer: the invented sentence is listed as removed with its span
    and reason, each claim with its outcome, and ``delivered:`` is the text without it."""
    args = ("check", "-q", ALPHA_QUERY, "-r", ALPHA_RESPONSE, "-p", ALPHA_PASSAGE)
    out = run_cli(*args)
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    report = json.loads(run_cli(*args, "--format", "json").stdout)
    assert report["recommendation"]["action"] == "correct_and_deliver", report["decision"]
    kept = "AlphaCodium was created by CodiumAI. It is a code generation method."
    assert f"delivered:  {kept}" in lines
    assert f"answer:     {ALPHA_RESPONSE}" in lines
    removals = [c for c in report["corrections"] if c["type"] == "removal"]
    assert [(c["span"]["start"], c["span"]["end"]) for c in removals] == [(68, 103)]
    reason = removals[0]["message"].removeprefix("removed: ")
    assert "fabricated fact" in reason and "nonexistent entity" in reason
    assert f"removed [68:103] 'It was acquired by Google in 2024.' — {reason}" in lines
    # one row per claim: span, outcome, p_supported, text
    rows = [line.split(None, 3) for line in lines if line.startswith("[")]
    assert [(r[1], r[3]) for r in rows] == [
        ("supported", "AlphaCodium was created by CodiumAI."),
        ("supported", "It is a code generation method."),
        ("removed", "It was acquired by Google in 2024."),
    ]
    assert [float(r[2]) for r in rows] == [
        round(c["p_supported"], 3) for c in report["claims"]
    ]  # fmt: skip
