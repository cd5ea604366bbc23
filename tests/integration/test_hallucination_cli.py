"""``guardrail check`` on the AlphaCodium examples (English versions), with the real verifier.

Uses the bundled verifier, or the model directory in ``GUARDRAIL_TEST_VERIFIER``; skips when
neither loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guardrail.errors import ModelLoadError

pytestmark = pytest.mark.integration

ALPHA = (
    "AlphaCodium is a code generation method that improves LLM coding ability through iterative "
    "refinement; it reached state-of-the-art results on the CodeContests dataset."
)
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from guardrail.verifiers import load_verifier

    spec = os.environ.get("GUARDRAIL_TEST_VERIFIER") or None
    try:
        load_verifier(spec)
    except ModelLoadError as exc:
        pytest.skip(f"no verifier model available ({exc}); set GUARDRAIL_TEST_VERIFIER")
    path = tmp_path_factory.mktemp("cfg") / "guardrail.json"
    path.write_text(json.dumps({"models": {"verifier": spec}}), encoding="utf-8")
    return path


def check(config: Path, response: str, passage: str) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "guardrail.cli",
            "check",
            "--format",
            "json",
            "--config",
            str(config),
            "--response",
            response,
            "--passage",
            passage,
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def flagged_sentences(report: dict[str, Any]) -> set[str]:
    return {f["content"] for f in report["hallucination_flags"]}


def test_case_a_faithful_summary_is_verified(config_file: Path) -> None:
    r = check(
        config_file, "AlphaCodium is an iterative method for improving LLM code generation.", ALPHA
    )
    assert r["verdict"]["label"] == "VERIFIED", r["verdict"]
    assert r["hallucination_flags"] == []


def test_case_b_both_sentences_flagged(config_file: Path) -> None:
    s1 = "AlphaCodium was released by Google in 2024."
    s2 = "It uses reinforcement learning to train the model."
    r = check(config_file, f"{s1} {s2}", ALPHA)
    assert r["verdict"]["label"] == "HALLUCINATION"
    assert {s1, s2} <= flagged_sentences(r)


def test_case_c_wrong_year_is_flagged_on_the_year(config_file: Path) -> None:
    r = check(config_file, "The paper was published in 2021.", "The paper was published in 2023.")
    assert r["verdict"]["label"] == "HALLUCINATION"
    types = {(f["type"], f["content"]) for f in r["hallucination_flags"]}
    assert ("contradicts_fact", "The paper was published in 2021.") in types
    assert ("temporal_error", "2021") in types
