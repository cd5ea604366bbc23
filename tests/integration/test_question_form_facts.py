"""Questions, small talk and near misses with the real offline models: a fact inside a
question is checked against the evidence and repaired, a question back to a remark is
delivered, a declarative question without evidence is never accepted, a bare yes/no is judged
as the question's proposition, and a misspelling beside the evidence's word is repaired."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail import Guardrail

pytestmark = pytest.mark.integration

EVIDENCE = [
    "The refund window is 30 days from delivery. Refunds go back to the original payment method.",
    "The team meeting is on Monday at 2pm in room 4B.",
]


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail()


def check(guard: Guardrail, query: str, response: str, passages: list[str] | None = None) -> Any:
    data: dict[str, Any] = {"query": query, "response": response}
    if passages is not None:
        data["passages"] = passages
    return guard.invoke(data)


def test_a_statement_run_into_a_question_is_caught_and_repaired(guard: Guardrail) -> None:
    report = check(
        guard,
        "How long do I have to return it?",
        "The refund window is 90 days, does that help?",
        EVIDENCE,
    )
    [claim] = report.claims
    assert claim.text.startswith("The refund window is 90 days")
    assert claim.status.value in ("contradicted", "unsupported")
    assert report.recommendation.action == "correct_and_deliver"
    assert report.delivered_text == "The refund window is 30 days, does that help?"


def test_a_declarative_question_is_checked_not_sent_to_a_person(guard: Guardrail) -> None:
    report = check(
        guard, "When is the team meeting?", "So the meeting is on Friday at 3pm?", EVIDENCE
    )
    assert report.claims, "the declarative question states a day and a time"
    assert report.recommendation.action != "human_review"
    assert report.recommendation.action != "accept"
    assert "Friday" not in (report.delivered_text or "")


def test_a_declarative_question_without_evidence_is_not_accepted(guard: Guardrail) -> None:
    report = check(guard, "Where did Orvik go?", "Orvik moved to Lyon?")
    assert report.claims
    assert report.recommendation.action != "accept"
    assert report.verdict.label.value != "NOTHING_TO_CHECK"


@pytest.mark.parametrize(
    "answer", ["Which order number is it about?", "Would you like me to open a return request?"]
)
def test_a_question_back_to_a_remark_is_delivered(guard: Guardrail, answer: str) -> None:
    report = check(guard, "I want to return my shoes.", answer)
    assert report.recommendation.action == "accept"
    assert report.delivered_text == answer


def test_a_misspelling_beside_the_evidence_word_is_repaired(guard: Guardrail) -> None:
    report = check(guard, "When is the team meeting?", "The meeting is on Mondey at 2pm.", EVIDENCE)
    assert report.recommendation.action == "correct_and_deliver"
    assert report.delivered_text == "The meeting is on Monday at 2pm."


def test_a_bare_yes_is_judged_as_the_questions_proposition(guard: Guardrail) -> None:
    yes = check(guard, "Is the team meeting on Monday?", "Yes.", EVIDENCE)
    [claim] = yes.claims
    # the parse reads "meeting" as the noun or as the verb: either is the question's content
    assert claim.text in ("The team meeting is on Monday.", "The team is meeting on Monday.")
    assert claim.status.value == "supported"
    assert yes.recommendation.action == "accept"
    no = check(guard, "Is the team meeting on Monday?", "No, it isn't.", EVIDENCE)
    [claim] = no.claims
    assert claim.text in (
        "The team meeting is not on Monday.",
        "The team is not meeting on Monday.",
    )
    assert claim.status.value == "contradicted"
    assert no.recommendation.action not in ("accept", "human_review")


def test_a_short_english_reply_is_checked_as_english(guard: Guardrail) -> None:
    report = check(guard, "Do you like it?", "Yes, I do.", EVIDENCE)
    assert report.recommendation.action != "human_review"
    assert "not covered" not in str(report.recommendation)
    assert report.claims and all(c.language == "en" for c in report.claims)
