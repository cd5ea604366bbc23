"""Conversation replies with the real bundled models, run as a user would (``guardrail check``):
a question back to the user is delivered, a fact asked inside a question is checked and
flagged, and a fact with no evidence still goes to a person."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def check(*args: str, fmt: str = "json") -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "guardrail.cli", "check", "--format", fmt, *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return out


QUESTION_BACK = (
    "--query",
    "I watched it last night.",
    "--response",
    "Oh nice, what did you think of the ending?",
    "--passage",
    "Home Alone is a 1990 American comedy film directed by Chris Columbus.",
)
FOOTBALL = (
    "--query",
    "I like football.",
    "--response",
    "Me too! Did you know that an average game has only 5 minutes of live gameplay?",
    "--passage",
    "An average NFL game has only 11 minutes of live gameplay.",
)


def test_a_question_back_to_the_user_is_delivered_with_nothing_to_check() -> None:
    report = json.loads(check(*QUESTION_BACK).stdout)
    assert report["verdict"]["label"] == "NOTHING_TO_CHECK"
    assert report["recommendation"]["action"] == "accept"
    assert report["delivered_text"] == "Oh nice, what did you think of the ending?"
    assert report["hallucination_flags"] == []
    text = check(*QUESTION_BACK, fmt="text").stdout
    assert "nothing to check" in text and "human_review" not in text


def test_a_fact_asked_inside_a_question_is_checked_and_flagged() -> None:
    report = json.loads(check(*FOOTBALL).stdout)
    [claim] = report["claims"]
    assert claim["text"] == "an average game has only 5 minutes of live gameplay"
    assert (claim["span"]["start"], claim["span"]["end"]) == (26, 77)
    assert claim["status"] in ("contradicted", "unsupported")
    inside = [f for f in report["hallucination_flags"] if 26 <= f["span"]["start"] < 77]
    assert inside, report["hallucination_flags"]
    assert report["recommendation"]["action"] == "correct_and_deliver"
    # The one number in the evidence sentence, in the same place (before "minutes"), repairs it.
    assert report["delivered_text"] == (
        "Me too! Did you know that an average game has only 11 minutes of live gameplay?"
    )


def test_a_fact_without_evidence_still_goes_to_a_person_with_one_reason() -> None:
    report = json.loads(
        check("--query", "When did it come out?", "--response", "Sure! It came out in 1990.").stdout
    )
    assert report["recommendation"]["action"] == "human_review"
    reason = report["recommendation"]["reason"]
    assert reason.startswith("Could not check the answer: no evidence")
    assert "could not be verified" not in reason
