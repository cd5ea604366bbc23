"""Concurrency: ``batch``, ``abatch`` and 1 / 4 / 16 threads calling one ``Guardrail`` give the
same verdicts, actions and claim statuses as sequential calls, scores within 1e-3.

Each run uses a fresh ``Guardrail`` (fresh score caches) over the shared real spaCy pipeline
and embedder; the verifier is a deterministic test double whose scores depend on the pair's
text only, so every input gets a different but reproducible mix of labels.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from guardrail import GuardReport
from guardrail.verifiers.base import NLIPrediction, Verifier
from tests.reliability_strategies import guard_with, shared_backends

_FACTS = [
    ("Orvik was founded in 1990 in Lyon.", "Orvik was founded in 1990. It is based in Lyon."),
    ("The meeting with John is at 2pm on Monday.", "The meeting is at 3pm on Tuesday."),
    ("Acme Corp has 900 staff and costs $5 million.", "Acme Corp has 900 staff."),
    ("Sarah Lee moved to Paris in 2019.", "Sarah Lee moved to Berlin in 2019. She likes it."),
    ("The revenue was $5.2 million in Q3 2023.", "Revenue was $4.6 million in Q3 2023, up 12%."),
    ("Dr. Müller starts at 9am in room 4B.", "Dr. Müller starts at 9am. He is in room 4C."),
]
INPUTS: list[dict[str, Any]] = [
    {"query": "Tell me.", "response": r, "passages": [p, "Unrelated text about weather."]}
    for p, r in _FACTS
] + [{"response": r} for _, r in _FACTS[:2]]


def signature(report: GuardReport) -> tuple[Any, ...]:
    return (
        report.action.value,
        report.verdict.label.value,
        tuple(c.status.value for c in report.claims),
        tuple(c.text for c in report.claims),
    )


def assert_same(got: Sequence[Any], want: Sequence[GuardReport]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, GuardReport), g
        assert signature(g) == signature(w)
        assert g.confidence == pytest.approx(w.confidence, abs=1e-3)
        for cg, cw in zip(g.claims, w.claims, strict=True):
            if cw.scores is not None:
                assert cg.scores is not None
                assert cg.scores.entailment == pytest.approx(cw.scores.entailment, abs=1e-3)


class HashVerifier(Verifier):
    """Scores from a hash of the pair: deterministic, varied, thread-safe (no state)."""

    name = "hash"

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIPrediction]:
        out = []
        for p, h in pairs:
            d = hashlib.sha256(f"{p}\x00{h}".encode()).digest()
            e, n, c = d[0] + 1, d[1] + 1, d[2] + 1
            out.append(NLIPrediction(entailment=e, neutral=n, contradiction=c))
        return out


def fresh() -> Any:
    return guard_with(HashVerifier())


@pytest.fixture(scope="module")
def sequential() -> list[GuardReport]:
    shared_backends()
    guard = fresh()
    return [guard.invoke(x) for x in INPUTS]


def test_the_inputs_give_mixed_outcomes(sequential: list[GuardReport]) -> None:
    assert len({r.action for r in sequential}) >= 2


@pytest.mark.parametrize("workers", [1, 4, 16])
def test_threads_on_one_guard_match_sequential(workers: int, sequential: list[GuardReport]) -> None:
    guard = fresh()
    jobs = INPUTS * 2  # each input twice: concurrent callers on the same pairs
    with ThreadPoolExecutor(max_workers=workers) as pool:
        got = list(pool.map(guard.invoke, jobs))
    assert_same(got, sequential * 2)


@pytest.mark.parametrize("workers", [1, 4, 16])
def test_batch_matches_sequential(workers: int, sequential: list[GuardReport]) -> None:
    got = fresh().batch(INPUTS, {"max_concurrency": workers}, return_exceptions=True)
    assert_same(got, sequential)


def test_abatch_matches_sequential(sequential: list[GuardReport]) -> None:
    got = asyncio.run(fresh().abatch(INPUTS, {"max_concurrency": 8}, return_exceptions=True))
    assert_same(got, sequential)


def test_a_bad_input_in_a_batch_is_its_own_typed_error(sequential: list[GuardReport]) -> None:
    from guardrail.errors import GuardrailError

    got = fresh().batch([INPUTS[0], {"response": "  "}, INPUTS[1]], return_exceptions=True)
    assert isinstance(got[1], GuardrailError)
    assert_same([got[0], got[2]], sequential[:2])
