"""A dialogue-only input (earlier turns, no passages, no knowledge base) with the bundled models:
the hallucination stage checks the answer against the earlier turns in one verifier call (its
prior-turn pairs), and the claims stay unverified."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail import Guardrail
from guardrail.errors import ModelLoadError
from guardrail.report import ClaimStatus, HallucinationType, StageStatus
from guardrail.verifiers.base import Verifier
from tests.counting import CountingVerifier as Counting

pytestmark = pytest.mark.integration

TURNS = [
    {"speaker": "user", "text": "When does the new library open?"},
    {"speaker": "assistant", "text": "The new library opens on Friday, 3 March, in Porto."},
    {"speaker": "user", "text": "And who designed it?"},
]
CONTRADICTING = "The new library opens on Monday, 6 March, in Lisbon."
AGREEING = "It was designed by a studio from Porto."


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    from guardrail.verifiers import load_verifier

    try:
        return load_verifier(None)
    except ModelLoadError as exc:
        pytest.skip(f"no verifier model available ({exc})")


def check(verifier: Verifier, response: str, **config: Any) -> tuple[Any, Counting]:
    counting = Counting(verifier)
    guard = Guardrail(config or None, verifier=counting)
    report = guard.invoke({"query": TURNS[-1]["text"], "response": response,
                           "dialogue": {"turns": TURNS}})  # fmt: skip
    return report, counting


def test_an_answer_contradicting_an_earlier_turn_is_flagged_and_not_accepted(
    verifier: Verifier,
) -> None:
    report, counting = check(verifier, CONTRADICTING)
    [stage] = [s for s in report.stages if s.name == "hallucination"]
    assert stage.status is StageStatus.RAN
    prior = [f for f in report.hallucination_flags if f.type is HallucinationType.CONTRADICTS_PRIOR]
    assert prior and prior[0].confidence >= 0.5
    assert all(c.status is ClaimStatus.UNVERIFIED for c in report.claims)
    # one call: the claims against the earlier turns, nothing else (the correction stage has no
    # supported claim to re-check and fact validation no verifier call of its own)
    turn_texts = {t["text"] for t in TURNS}
    assert len(counting.calls) == 1
    assert all(any(p in t for t in turn_texts) for p, _ in counting.calls[0])
    assert report.action.value == "human_review"
    assert "hallucination" in report.recommendation.reason


def test_an_answer_that_contradicts_no_turn_stays_unverified(verifier: Verifier) -> None:
    report, _ = check(verifier, AGREEING)
    assert not [
        f for f in report.hallucination_flags if f.type is HallucinationType.CONTRADICTS_PRIOR
    ]
    assert all(c.status is ClaimStatus.UNVERIFIED for c in report.claims)
    assert report.action.value == "human_review"  # as before: nothing could be verified
    assert "no evidence (passages or knowledge base) given" in report.recommendation.reason
