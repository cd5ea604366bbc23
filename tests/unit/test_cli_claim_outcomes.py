"""``guardrail check``'s text output shows what the report says: each claim's
outcome, the removals and repairs with their spans and reasons, and the delivered text."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.cli.check import render_text
from guardrail.report import GuardReport

ORIGINAL = "John's email is john.s@company.org. He likes tea. It was bought by Google in 2024."


def claim(text: str, outcome: str, p: float | None, status: str = "supported") -> dict[str, Any]:
    start = ORIGINAL.index(text)
    return {"text": text, "span": {"start": start, "end": start + len(text)},
            "status": status, "p_supported": p, "outcome": outcome}  # fmt: skip


def report(action: dict[str, Any], **kw: Any) -> GuardReport:
    base: dict[str, Any] = {
        "original": ORIGINAL,
        "corrected": "John's email is john.smith@company.com. He likes tea.",
        "annotated": "John's email is john.smith@company.com. He likes tea "
        "[uncertain: not confirmed by the sources].",
        "confidence": 0.6,
        "recommendation": action,
        "claims": [
            claim("John's email is john.s@company.org.", "repaired", 0.4, "unsupported"),
            claim("He likes tea.", "uncertain", 0.31, "unsupported"),
            claim("It was bought by Google in 2024.", "removed", 0.02, "contradicted"),
        ],
        "corrections": [
            {"type": "removal", "span": {"start": 49, "end": 82},
             "original": " It was bought by Google in 2024.", "replacement": "",
             "message": "removed: contradicted; fabricated fact", "claim_index": 2},
            {"type": "factual", "span": {"start": 16, "end": 34},
             "original": "john.s@company.org", "replacement": "john.smith@company.com",
             "source": "knowledge base", "verified": True, "claim_index": 0},
            {"type": "annotation", "span": {"start": 36, "end": 49}, "original": "He likes tea.",
             "replacement": "[uncertain: not confirmed by the sources]"},
        ],
    }  # fmt: skip
    return GuardReport.model_validate({**base, **kw})


def lines_of(r: GuardReport) -> list[str]:
    return [line.strip() for line in render_text(r).splitlines()]


def test_claims_removals_repairs_and_the_delivered_text_are_printed() -> None:
    r = report({"action": "correct_and_deliver"})
    lines = lines_of(r)
    assert f"answer:     {ORIGINAL}" in lines
    assert f"corrected:  {r.corrected}" in lines
    assert f"delivered:  {r.annotated}" in lines
    rows = [line.split(None, 3) for line in lines if line.startswith("[")]
    assert rows == [
        ["[0:35]", "repaired", "0.400", "John's email is john.s@company.org."],
        ["[36:49]", "uncertain", "0.310", "He likes tea."],
        ["[50:82]", "removed", "0.020", "It was bought by Google in 2024."],
    ]
    # corrections in text order, each with its span
    i = lines.index("corrections:")
    assert lines[i + 1 : i + 4] == [
        "repaired [16:34] 'john.s@company.org' → 'john.smith@company.com' "
        "(knowledge base; re-checked: supported)",
        "annotated [36:49] 'He likes tea.' [uncertain: not confirmed by the sources]",
        "removed [49:82] 'It was bought by Google in 2024.' — contradicted; fabricated fact",
    ]


def test_nothing_is_delivered_for_regenerate_and_human_review() -> None:
    regen = report({"action": "regenerate", "guidance": "Fix it."})
    assert "delivered:  nothing delivered (regenerate)" in lines_of(regen)
    review = report({"action": "human_review", "reason": "why"})
    assert "delivered:  nothing delivered (human_review)" in lines_of(review)
    accepted = report({"action": "accept"}, corrections=[], claims=[])
    lines = lines_of(accepted)
    assert f"delivered:  {ORIGINAL}" in lines
    assert "corrections:" not in lines and not any(x.startswith("claims:") for x in lines)


def test_a_claim_without_a_score_or_outcome_and_a_long_claim_print() -> None:
    long = "x" * 200
    r = report(
        {"action": "accept"},
        original=long,
        corrected=long,
        annotated=long,
        corrections=[],
        claims=[{"text": long, "span": {"start": 0, "end": 200}}],
    )
    row = next(line for line in lines_of(r) if line.startswith("[0:200]"))
    assert row.split()[1:3] == ["-", "-"]
    assert row.endswith("…") and len(row) < 120


def test_check_help_describes_the_granularity_setting(capsys: pytest.CaptureFixture[str]) -> None:
    from guardrail.cli import main

    assert main(["check", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--granularity {claim,answer}" in out and "all-or-nothing rule" in out
