"""Same input, same report, with the real offline models: a report does not depend on what the
process checked before, on the order of a batch, on the service's other clients or on the
process (the verifier's cached scores, the memoised parses and token counts included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guardrail import Guardrail
from tests.same_report import INPUTS, comparable, field_differences, history_differences

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fresh() -> list[dict[str, Any]]:
    return [comparable(Guardrail().invoke(x)) for x in INPUTS]


def test_acme_second_claim_scores_the_same_in_either_order() -> None:
    first, other = INPUTS[0], INPUTS[1]
    alone = Guardrail().invoke(first)
    guard = Guardrail()
    guard.invoke(other)
    after = guard.invoke(first)
    assert alone.claims[1].text == "Acme has 460 employees."
    assert after.claims[1].p_supported == alone.claims[1].p_supported
    assert field_differences(comparable(alone), comparable(after)) == []


@pytest.mark.parametrize("seed", [0, 1])
def test_every_report_is_the_fresh_one_after_history_in_a_batch_and_in_the_service(
    fresh: list[dict[str, Any]], seed: int
) -> None:
    found = history_differences(Guardrail, INPUTS, seed=seed, reference=fresh)
    assert set(found) == {"history round 1", "history round 2", "batch", "service"}
    assert {way: diffs[:5] for way, diffs in found.items() if diffs} == {}


def test_a_new_process_checking_in_reverse_gives_the_same_reports(
    fresh: list[dict[str, Any]],
) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "tests.same_report"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    other = json.loads(out.stdout)
    diffs = [
        f"input {k}{d}"
        for k, (w, g) in enumerate(zip(fresh, other, strict=True))
        for d in field_differences(w, g)
    ]
    assert len(other) == len(fresh)
    assert diffs[:5] == []
