"""Reliability with every real offline model (the bundled verifier, spaCy, the embedder):
adversarial inputs keep the report invariants, and 4 threads on one ``Guardrail`` give the
same verdicts, actions and scores (within 1e-3) as sequential calls.

Kept small (the bundled verifier scores about 2 pairs/s on a loaded 2-core machine); the
scale runs use the scripted verifier (``tests/unit/test_reliability_*.py``,
``benchmarks/reliability.py``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from guardrail import Guardrail, GuardReport
from tests.reliability_strategies import INJECTION, classify, violations

pytestmark = pytest.mark.integration

CASES: list[dict[str, Any]] = [
    {
        "query": "When was Orvik founded?",
        "response": "Orvik was founded in 1990 in Lyon.",
        "passages": [f"Orvik was founded in 1985 in Graz. {INJECTION[0]}"],
    },
    {
        "response": "👩‍👩‍👧 The café opened in 東京 in 2001. \u202eevil\u202c",
        "passages": ["The café opened in Tokyo in 2001.", "The café opened in Tokyo in 2001."],
    },
    {"response": "<b>The meeting</b> is at 3pm on **Tuesday**.", "passages": None},
    {
        "response": "The meeting is at 2pm on Monday.",
        "passages": [{"text": "The meeting is at 2pm on Monday.", "score": float("nan")}],
    },
]


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail()


@pytest.fixture(scope="module")
def sequential(guard: Guardrail) -> list[GuardReport]:
    return [guard.invoke(c) for c in CASES]


def test_adversarial_inputs_keep_the_invariants(sequential: list[GuardReport]) -> None:
    for case, report in zip(CASES, sequential, strict=True):
        assert violations(report, case) == [], case
    assert sequential[0].action.value not in ("accept", "accept_with_flags")  # injection ignored
    assert sequential[2].action.value not in ("accept", "accept_with_flags")  # no evidence


def test_odd_values_end_in_typed_errors(guard: Guardrail) -> None:
    for value in ({"response": "\n\t "}, {"response": "x", "dialogue": 5}, {"response": 3}):
        kind, problems = classify(guard.invoke, value)
        assert kind == "typed_error", (value, problems)


def test_four_threads_match_sequential(guard: Guardrail, sequential: list[GuardReport]) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(guard.invoke, CASES))
    for g, w in zip(got, sequential, strict=True):
        assert (g.action, g.verdict.label) == (w.action, w.verdict.label)
        assert [c.status for c in g.claims] == [c.status for c in w.claims]
        assert g.confidence == pytest.approx(w.confidence, abs=1e-3)
