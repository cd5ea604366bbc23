"""Every specific from the claim's own evidence, with the real offline models: a value taken from
another fact of the same documents is flagged, a value close to the evidence's is a different
value, and where the sentence telling the fact states one value in its place the answer is
repaired from it (re-checked by the verifier) and delivered.

The guarded RAG case runs the shipped corpus through the real FAISS index and guardrail; the
chat model is langchain-core's ``FakeListChatModel`` (it stands in for Groq / SmolLM2, whose
answers cannot be scripted)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import FakeListChatModel

from chains.guarded_rag import GuardedRAG
from chains.retrieval import PassageIndex, corpus_path
from guardrail import Guardrail
from guardrail.report import Action, ClaimStatus, CorrectionType, HallucinationType

pytestmark = pytest.mark.integration
GROUNDED = {"hallucination": {"value_check": True}}

LOAN = [
    "The loan is offered by First Bank to new customers. The loan carries an interest rate of "
    "3.25% for the first five years. After that the rate follows the market."
]
CONTRACT = [
    "Acme signed a supply contract with Northwind in 2024. The contract with Acme ends on "
    "13 March 2027. It can be renewed once for two years."
]
PLANS = [
    "We offer two plans. The Basic plan costs $10 a month; the Pro plan costs $30 a month. "
    "Both plans include email support."
]


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail(GROUNDED)


def check(guard: Guardrail, query: str, response: str, passages: list[str]) -> Any:
    return guard.invoke({"query": query, "response": response, "passages": passages})


def repaired(report: Any) -> list[tuple[str, str]]:
    return [
        (c.original, c.replacement)
        for c in report.corrections
        if c.type is CorrectionType.FACTUAL and c.verified
    ]


def test_a_close_rate_is_caught_and_repaired_from_the_evidence(guard: Guardrail) -> None:
    report = check(
        guard,
        "What interest rate does the loan carry?",
        "The loan carries an interest rate of 3.5% for the first five years.",
        LOAN,
    )
    [claim] = report.claims
    assert claim.status is not ClaimStatus.SUPPORTED
    flag = next(f for f in report.hallucination_flags if f.content == "3.5%")
    assert flag.type is HallucinationType.WRONG_ATTRIBUTE
    assert (flag.evidence_value, flag.replacement) == ("3.25%", "3.25%")
    assert flag.evidence and flag.evidence_span is not None
    assert flag.evidence[flag.evidence_span.start : flag.evidence_span.end] == "3.25%"
    assert repaired(report) == [("3.5%", "3.25%")]
    assert report.action is Action.CORRECT_AND_DELIVER
    assert report.delivered_text == (
        "The loan carries an interest rate of 3.25% for the first five years."
    )


def test_a_date_one_day_off_is_repaired_not_regenerated(guard: Guardrail) -> None:
    report = check(
        guard,
        "When does the contract with Acme end?",
        "The contract with Acme ends on 14 March 2027.",
        CONTRACT,
    )
    assert repaired(report) == [("14 March 2027", "13 March 2027")]
    assert report.action is Action.CORRECT_AND_DELIVER
    assert report.delivered_text == "The contract with Acme ends on 13 March 2027."


def test_the_price_of_the_sibling_plan_is_repaired_from_its_own_clause(guard: Guardrail) -> None:
    report = check(guard, "How much is the Pro plan?", "The Pro plan costs $10 a month.", PLANS)
    assert report.action is Action.CORRECT_AND_DELIVER
    assert report.delivered_text == "The Pro plan costs $30 a month."
    same = check(guard, "How much is the Pro plan?", "The Pro plan costs $30 a month.", PLANS)
    assert same.action is Action.ACCEPT


def test_the_right_values_written_another_way_are_accepted(guard: Guardrail) -> None:
    report = check(
        guard,
        "When does the contract end?",
        "The contract with Acme ends on March 13, 2027.",
        CONTRACT,
    )
    assert report.action is Action.ACCEPT, report.hallucination_flags


def test_guarded_rag_flags_a_duration_taken_from_another_meeting() -> None:
    answer = "Sarah Lee coordinates the move with facilities, which will take fifteen minutes."
    index = PassageIndex.from_paths([corpus_path()])
    llm = FakeListChatModel(responses=[answer])
    rag = GuardedRAG(index, llm, guardrail=Guardrail(GROUNDED), max_attempts=1)
    result = rag.invoke("Who coordinates the office move?")
    report = result.attempts[0].report
    assert report is not None
    flags = [f for f in report.hallucination_flags if f.content == "fifteen"]
    assert flags, report.hallucination_flags
    assert "not where the evidence tells this fact" in flags[0].explanation
    assert report.action is not Action.ACCEPT
    assert report.claims[0].status is not ClaimStatus.SUPPORTED
