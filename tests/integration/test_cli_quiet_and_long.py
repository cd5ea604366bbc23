"""The real CLI and library in fresh processes: a check ending in ``regenerate`` writes nothing
on stderr when the app configured no logging; ``guardrail check`` takes a long answer on stdin
(``-``) or from ``--response-file`` (2 MB: a clear size error, never "Argument list too long"),
and prints why the action overrides the confidence band."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
REGENERATE = """
import json
from guardrail import Guardrail
report = Guardrail().invoke(json.load(open("examples/data/check_request.json")))
print(report.recommendation.action)
"""


def python(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=ENV, input=stdin, capture_output=True, timeout=600
    )


def guardrail(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return python("-m", "guardrail.cli", *args, stdin=stdin)


def test_a_regenerate_check_writes_nothing_on_stderr() -> None:
    proc = python("-c", REGENERATE)
    assert proc.returncode == 0, proc.stderr.decode()
    if proc.stderr:  # the very first run on a machine exports the embedder to ONNX (once)
        assert b"guardrail" not in proc.stderr and b"Requesting" not in proc.stderr, proc.stderr
        proc = python("-c", REGENERATE)
    assert proc.stdout.decode().split() == ["regenerate"]
    assert proc.stderr.decode() == ""


def test_a_2mb_answer_on_stdin_gets_a_clear_size_error(tmp_path: Path) -> None:
    big = ("The meeting is at 2pm on Monday. " * 70_000)[: 2 * 1024 * 1024]
    for args, stdin in (
        (["--response", "-"], big.encode()),
        (["--response-file", "-"], big.encode()),
        (["--response-file", str(tmp_path / "big.txt")], None),
    ):
        (tmp_path / "big.txt").write_text(big, encoding="utf-8")
        proc = guardrail("check", *args, "--passage", "The meeting is at 2pm.", stdin=stdin)
        err = proc.stderr.decode()
        assert proc.returncode == 2, err
        assert err.strip().splitlines() == [
            "guardrail: error: the response has 2097152 characters, more than "
            "max_response_chars=20000; split it or raise the limit"
        ]
        assert proc.stdout == b""


def test_an_answer_from_stdin_is_checked_and_the_band_override_is_explained() -> None:
    answer = "John Smith's email is john.s@company.org.\n"
    proc = guardrail(
        "check", "--kb", "examples/data/john_smith_kb.json", "--query", "Tell me about John",
        "--response", "-", "--format", "json", stdin=answer.encode(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert report["original"] == answer.rstrip("\n")
    text = guardrail(
        "check", "--kb", "examples/data/john_smith_kb.json", "--query", "Tell me about John",
        "--response-file", "-", stdin=answer.encode(),
    )  # fmt: skip
    assert text.returncode == 0 and text.stderr == b"", text.stderr.decode()
    lines = text.stdout.decode().splitlines()
    action, band = report["recommendation"]["action"], report["decision"]["band"]
    why = [line for line in lines if line.startswith("why:")]
    if action == band:
        assert not why
    else:  # e.g. correct_and_deliver with confidence 0.000 in the human_review band
        assert why == [
            f"why:        action {action} although confidence {report['confidence']:.3f} is "
            f"in the {band} band: " + (report["decision"]["gate"] or
                                       report["decision"].get("overrides_band"))
        ]  # fmt: skip
    assert action != band, "the KB-repaired answer is expected to override its band"
