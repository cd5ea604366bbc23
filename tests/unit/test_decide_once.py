"""Decide once: one answer's problems are found once and its action chosen once, by the
decision, whatever stages ran; the cut-off it reads is the one the hallucination stage used."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import guardrail.decision.plan as plan_module
import guardrail.pipeline as pipeline_module
from guardrail.verifiers.scripted import ScriptedVerifier
from tests.reliability_strategies import shared_backends

RESPONSE = "The meeting is at 2pm on Monday. It is in room 9C."
INPUT = {
    "query": "When and where is the meeting?",
    "response": RESPONSE,
    "passages": ["The meeting with John is at 2pm on Monday in room 4B."],
}


def guard(config: dict[str, Any] | None = None, default: str = "neutral") -> Any:
    from guardrail import Backends, Guardrail

    nlp, embedder = shared_backends()
    verifier = ScriptedVerifier(default=default)
    return Guardrail(config, backends=Backends(verifier=verifier, nlp=nlp, embedder=embedder))


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of the decision's two steps: finding the problems and choosing the action."""
    counts: Counter[str] = Counter()
    find, decide = plan_module.find_problems, pipeline_module.decide

    def counting_find(*args: Any, **kwargs: Any) -> Any:
        counts["find_problems"] += 1
        return find(*args, **kwargs)

    def counting_decide(*args: Any, **kwargs: Any) -> Any:
        counts["decide"] += 1
        return decide(*args, **kwargs)

    monkeypatch.setattr(plan_module, "find_problems", counting_find)
    monkeypatch.setattr(pipeline_module, "decide", counting_decide)
    return counts


@pytest.mark.parametrize(
    "config",
    [None, {"disabled_stages": ["correction"]}, {"decision": {"granularity": "answer"}}],
    ids=["default", "no correction stage", "answer granularity"],
)
def test_one_decision_per_invoke(calls: Counter[str], config: dict[str, Any] | None) -> None:
    g = guard(config)
    calls.clear()  # the shared models' warm-up check
    report = g.invoke(INPUT)
    assert calls == {"find_problems": 1, "decide": 1}
    assert report.decision is not None
    g.invoke(INPUT)
    assert calls == {"find_problems": 2, "decide": 2}


def test_the_removed_claim_is_the_problem_the_report_names() -> None:
    """Every problem the decision names as removed is a claim the delivered text left out."""
    report = guard(default="contradiction").invoke(INPUT)
    assert report.decision is not None and report.decision.problems
    removed = {p.claim_index for p in report.decision.problems if p.fixed_by == "removal"}
    outcomes = {i: c.outcome.value for i, c in enumerate(report.claims) if c.outcome}
    assert removed and all(outcomes[i] == "removed" for i in removed)
