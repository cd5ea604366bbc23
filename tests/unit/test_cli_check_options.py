"""``guardrail check`` options and printing without models: the answer from a file or stdin
(``--response-file PATH``, ``-``), and the line saying why the action overrides the band."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

import pytest

from guardrail.cli import build_parser
from guardrail.errors import InputError
from guardrail.report import GuardReport


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["check", *argv])


class FakeStdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_response_file_and_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from guardrail.cli.check import read_response

    answer = tmp_path / "answer.txt"
    answer.write_text("The meeting is at 2pm, café 4B.\n", encoding="utf-8")
    assert read_response(parse("--response-file", str(answer))) == "The meeting is at 2pm, café 4B."
    assert read_response(parse("-r", "inline answer")) == "inline answer"
    for argv in (["--response-file", "-"], ["--response", "-"]):
        monkeypatch.setattr("sys.stdin", FakeStdin(b"From stdin.\r\n"))
        assert read_response(parse(*argv)) == "From stdin."
    big = ("The meeting is at 2pm on Monday. " * 70_000)[: 2 * 1024 * 1024]
    monkeypatch.setattr("sys.stdin", FakeStdin(big.encode()))
    assert read_response(parse("--response-file", "-")) == big  # 2 MB: no argv involved
    with pytest.raises(InputError, match="not found"):
        read_response(parse("--response-file", str(tmp_path / "missing.txt")))
    answer.write_bytes(b"caf\xe9")
    with pytest.raises(InputError, match="not UTF-8"):
        read_response(parse("--response-file", str(answer)))


def test_exactly_one_answer_source(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["-r", "a", "--response-file", "b"]):
        with pytest.raises(SystemExit):
            parse(*argv)
    assert "--response-file" in capsys.readouterr().err


def test_help_says_where_the_cold_time_goes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("--help")
    text = capsys.readouterr().out
    assert "--response-file" in text and "most of its time is loading" in text
    assert "once the models are loaded" in text


def report(action: dict[str, Any], confidence: float, decision: dict[str, Any]) -> GuardReport:
    return GuardReport.model_validate(
        {"original": "x", "corrected": "y", "annotated": "y", "confidence": confidence,
         "recommendation": action, "decision": decision}
    )  # fmt: skip


def test_the_text_report_says_why_the_action_overrides_the_band() -> None:
    from guardrail.cli.check import band_override, render_text

    repaired = report(
        {"action": "correct_and_deliver"},
        0.0,
        {"band": "human_review", "gate": "all 4 problem(s) repaired in the corrected text"},
    )
    line = band_override(repaired)
    assert line == (
        "action correct_and_deliver although confidence 0.000 is in the human_review band: "
        "all 4 problem(s) repaired in the corrected text"
    )
    assert f"why:        {line}" in render_text(repaired).splitlines()
    # Same action as the band: no "why" line; a report without a band: none either.
    same = report({"action": "regenerate", "guidance": "g"}, 0.45, {"band": "regenerate"})
    assert band_override(same) is None and "why:" not in render_text(same)
    assert band_override(report({"action": "accept"}, 0.95, {})) is None
