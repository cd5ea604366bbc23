"""Conversation replies: a reply that states nothing to check is delivered, a fact asked inside
a question is checked, and an unchecked fact still goes to a person.

The rules are tested alone (question facts, the decision) and through the pipeline with a
scripted verifier, so a failure names the rule that broke.
"""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.config import GuardrailConfig, HallucinationConfig, HandlingThresholds
from guardrail.decision import Checked, decide, human_review_reason
from guardrail.hallucination.claims import sentence_claims
from guardrail.hallucination.question_facts import asks_for_a_fact, asserted_fact
from guardrail.inputs import GuardInput
from guardrail.pipeline import unchecked_reasons
from guardrail.report import (
    Claim,
    ClaimOutcome,
    ClaimStatus,
    CoherenceResult,
    QUDRelevance,
    Span,
    Verdict,
    VerdictLabel,
)
from guardrail.stages.base import PipelineState
from guardrail.verifiers.scripted import ScriptedVerifier

# --- facts inside questions ------------------------------------------------------------------

ASSERTED = [
    (
        "Did you know that an average game has only 5 minutes of live gameplay?",
        "an average game has only 5 minutes of live gameplay",
    ),
    ("Did you know Bruce Lee was a cha cha dancer ?", "Bruce Lee was a cha cha dancer"),
    ("Yeah, did you know the highest score ever was 222-0?", "the highest score ever was 222-0"),
    (
        "Do you know that Netflix is now a production company?",
        "Netflix is now a production company",
    ),
    ("Have you heard that Harley Quinn has a new comic?", "Harley Quinn has a new comic"),
    ("Isn't it true that the film came out in 1990?", "the film came out in 1990"),
    ("can you believe it came out in 1990?", "it came out in 1990"),
    ("Isn't it amazing that a cat is the mayor of Talkeetna?", "a cat is the mayor of Talkeetna"),
    ("Home Alone came out in 1990, didn't it?", "Home Alone came out in 1990"),
    ("Chris Columbus directed it, right?", "Chris Columbus directed it"),
    ("The game lasts three hours, isn't that right?", "The game lasts three hours"),
]

GENUINE = [
    "What did you think of the ending?",
    "Oh nice, what did you think of the ending?",
    "Have you seen it?",
    "Have you heard of it?",
    "Did you know where he was born?",
    "Do you know who invented the sport?",
    "Do you know the band?",
    "Did you know that?",
    "Did you know that ?",
    "Did you know Tom Brady?",
    "I know, right?",
    "That's cool, isn't it?",
    "Can you believe it?",
    "The film came out in 1990.",
]


@pytest.mark.parametrize(("sentence", "fact"), ASSERTED)
def test_a_question_that_asserts_a_fact_gives_its_span(sentence: str, fact: str) -> None:
    found = asserted_fact(sentence)
    assert found is not None, sentence
    assert sentence[found[0] : found[1]] == fact


@pytest.mark.parametrize("sentence", GENUINE)
def test_a_genuine_question_or_a_statement_asserts_nothing(sentence: str) -> None:
    assert asserted_fact(sentence) is None


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("Are Pam Veasey and Jon Jost both American?", True),
        ("I watched it last night. Who directed it?", True),
        ("Do you know who directed it?", True),
        ("Can you tell me when it came out?", True),
        ("I watched it last night.", False),
        ("Do you like football?", False),
        ("What did you think of the ending?", False),
        ("Thanks!", False),
        ("", False),
    ],
)
def test_which_messages_ask_for_a_fact(query: str, asks: bool) -> None:
    assert asks_for_a_fact(query) is asks


FOOTBALL = "Me too! Did you know that an average game has only 5 minutes of live gameplay?"
FOOTBALL_FACT = "an average game has only 5 minutes of live gameplay"


def test_the_claim_is_the_fact_with_its_span_inside_the_question() -> None:
    [claim] = sentence_claims(FOOTBALL, HallucinationConfig(), "en")
    assert claim.text == FOOTBALL_FACT
    assert (claim.span.start, claim.span.end) == (26, 77)
    assert claim.span.slice(FOOTBALL) == FOOTBALL_FACT


def test_statements_run_into_a_question_are_claims_of_their_own() -> None:
    text = "Amazon is the largest online retailer in the world. what do you buy there?"
    claims = sentence_claims(text, HallucinationConfig(), "en")
    assert [c.text for c in claims] == [
        "Amazon is the largest online retailer in the world.",
        "what do you buy there?",
    ]
    assert all(c.span.slice(text) == c.text for c in claims)
    text = "Immortality is wasted on a jellyfish haha . did you know a seahorse has a neck ?"
    claims = sentence_claims(text, HallucinationConfig(), "en")
    assert claims[-1].text == "a seahorse has a neck"
    assert claims[-1].span.slice(text) == "a seahorse has a neck"


def test_without_checkworthiness_the_question_is_checked_whole() -> None:
    config = HallucinationConfig(checkworthiness=False)
    [claim] = sentence_claims(FOOTBALL, config, "en")
    assert claim.text.startswith("Did you know")


# --- the decision ----------------------------------------------------------------------------

T = HandlingThresholds()
QUESTION_BACK = "Oh nice, what did you think of the ending?"


def small_talk(text: str = QUESTION_BACK) -> list[Claim]:
    return [
        Claim(
            text=text,
            span=Span(start=0, end=len(text)),
            status=ClaimStatus.NOT_CHECKWORTHY,
            reason="not check-worthy: a question, not a statement",
            outcome=ClaimOutcome.NOT_CHECKWORTHY,
        )
    ]


def coherence(question_type: str, addressed: bool, kind: str = "content") -> CoherenceResult:
    qud = QUDRelevance(
        score=0.9 if addressed else 0.1,
        addresses_qud=addressed,
        question_type=question_type,
        details={"applicable": True, "answer_kind": kind},
    )
    return CoherenceResult(score=0.6, qud_relevance=qud)


def checked(claims: list[Claim], coh: CoherenceResult | None, unchecked: list[str] = ()) -> Checked:
    return Checked(
        confidence=0.72,
        problems=[],
        claims=claims,
        coherence=coh,
        factual=None,
        flags=[],
        corrections=[],
        unchecked=list(unchecked),
        original=QUESTION_BACK,
        corrected=QUESTION_BACK,
    )


@pytest.mark.parametrize(
    "coh",
    [coherence("statement", False), coherence("wh:what", True), None],
    ids=["reply-to-a-remark", "question-addressed", "no-question-check"],
)
def test_nothing_to_check_is_accepted_as_it_is(coh: CoherenceResult | None) -> None:
    rec, record = decide(checked(small_talk(), coh), thresholds=T)
    assert rec.action == "accept"
    assert record.gate == "nothing to check"
    assert record.problems == []


@pytest.mark.parametrize(
    "coh", [coherence("wh:when", False), coherence("statement", False, "action")]
)
def test_nothing_to_check_that_leaves_the_question_unanswered_is_regenerated(
    coh: CoherenceResult,
) -> None:
    rec, record = decide(checked(small_talk(), coh), thresholds=T)
    assert rec.action == "regenerate"
    assert "Please directly address the user's question." in rec.items
    assert "does not address the question" in (record.gate or "")


def test_a_fact_that_could_not_be_checked_still_goes_to_a_person() -> None:
    fact = Claim(text="Home Alone came out in 1990.", span=Span(start=0, end=28))
    claims = [*small_talk(), fact]
    rec, record = decide(
        checked(claims, coherence("statement", False), ["no evidence text to check against"]),
        thresholds=T,
    )
    assert rec.action == "human_review"
    assert rec.reason.startswith("Could not check the answer: no evidence text to check against.")
    assert record.gate == "fail-closed: an answer that could not be checked is not delivered"


def test_the_not_checked_reason_names_its_cause_once() -> None:
    verdict = Verdict(label=VerdictLabel.UNVERIFIED, reason="no evidence text to check against")
    state = PipelineState(
        input=GuardInput(query="q", response="The film came out in 1990."), verdict=verdict
    )
    reasons = unchecked_reasons(state, GuardrailConfig())
    assert reasons == ["no evidence text to check against"]
    reason = human_review_reason(0.7, None, None, [], reasons)
    assert reason == "Could not check the answer: no evidence text to check against."


def test_nothing_to_check_is_not_a_reason_to_review() -> None:
    verdict = Verdict(label=VerdictLabel.NOTHING_TO_CHECK, reason="no fact")
    state = PipelineState(input=GuardInput(query="q", response=QUESTION_BACK), verdict=verdict)
    assert unchecked_reasons(state, GuardrailConfig()) == []


# --- through the pipeline (scripted verifier; the real spaCy pipeline and embedder) ----------


def guard(verifier: ScriptedVerifier, **config: Any) -> Any:
    from tests.reliability_strategies import guard_with

    return guard_with(verifier, **config)


HOME_ALONE = "Home Alone is a 1990 American comedy film directed by Chris Columbus."
NFL = "An average NFL game has only 11 minutes of live gameplay."


def test_a_question_back_to_the_user_is_delivered_without_a_verifier_call() -> None:
    verifier = ScriptedVerifier(default="neutral")
    report = guard(verifier).invoke(
        {"query": "I watched it last night.", "response": QUESTION_BACK, "passages": [HOME_ALONE]}
    )
    assert report.verdict.label is VerdictLabel.NOTHING_TO_CHECK
    assert report.action.value == "accept" and report.delivered_text == QUESTION_BACK
    assert report.decision.gate == "nothing to check"
    assert report.hallucination_flags == [] and verifier.calls == []
    assert [c.status for c in report.claims] == [ClaimStatus.NOT_CHECKWORTHY]


def test_a_fact_asked_inside_a_question_is_checked_and_flagged() -> None:
    verifier = ScriptedVerifier({("11 minutes", FOOTBALL_FACT): "contradiction"}, default="neutral")
    report = guard(verifier).invoke(
        {"query": "I like football.", "response": FOOTBALL, "passages": [NFL]}
    )
    assert any(h == FOOTBALL_FACT for call in verifier.calls for _, h in call)
    [claim] = report.claims
    assert claim.text == FOOTBALL_FACT and (claim.span.start, claim.span.end) == (26, 77)
    assert claim.status is ClaimStatus.CONTRADICTED
    assert any(f.span.start >= 26 and f.span.end <= 77 for f in report.hallucination_flags)
    # a reply to a remark: the wrong fact is removed, the small talk delivered
    assert report.action.value == "correct_and_deliver"
    assert report.delivered_text == "Me too!"
    assert "5 minutes" not in report.delivered_text


def test_the_same_wrong_fact_in_answer_to_a_question_is_not_delivered() -> None:
    verifier = ScriptedVerifier({("11 minutes", FOOTBALL_FACT): "contradiction"}, default="neutral")
    report = guard(verifier).invoke(
        {"query": "How much live play is in a game?", "response": FOOTBALL, "passages": [NFL]}
    )
    assert report.claims[0].status is ClaimStatus.CONTRADICTED
    assert report.delivered_text is None
    assert report.action.value in ("regenerate", "human_review")


def test_small_talk_with_a_fact_is_judged_on_the_fact() -> None:
    response = "Haha, nice! Home Alone came out in 1990. What did you think of it?"
    verifier = ScriptedVerifier({("1990", "Home Alone came out in 1990."): "entailment"})
    report = guard(verifier).invoke(
        {"query": "I watched Home Alone.", "response": response, "passages": [HOME_ALONE]}
    )
    statuses = {c.text: c.status for c in report.claims}
    assert statuses["Home Alone came out in 1990."] is ClaimStatus.SUPPORTED
    assert statuses["What did you think of it?"] is ClaimStatus.NOT_CHECKWORTHY
    assert report.verdict.label is VerdictLabel.VERIFIED
    assert report.delivered_text is not None


def test_a_bare_no_to_a_question_for_a_fact_is_not_delivered_unchecked() -> None:
    verifier = ScriptedVerifier(default="entailment")
    report = guard(verifier).invoke(
        {
            "query": "Are both The New Pornographers and Kings of Leon American rock bands?",
            "response": "no",
            "passages": ["Kings of Leon is an American rock band."],
        }
    )
    assert [c.status for c in report.claims] == [ClaimStatus.NOT_CHECKWORTHY]
    assert report.verdict.label is VerdictLabel.UNVERIFIED
    assert report.action.value == "human_review"
    assert report.recommendation.reason == (
        "Could not check the answer: the question asks for a fact, and the answer states none "
        "that can be checked."
    )


def test_without_evidence_small_talk_is_delivered_but_a_fact_is_not() -> None:
    verifier = ScriptedVerifier(default="entailment")
    thanks = guard(verifier).invoke({"query": "Thanks!", "response": "You're welcome!"})
    assert thanks.verdict.label is VerdictLabel.NOTHING_TO_CHECK
    assert thanks.action.value == "accept" and verifier.calls == []
    fact = guard(verifier).invoke(
        {"query": "When was it?", "response": "Sure! It came out in 1990."}
    )
    assert fact.action.value == "human_review"
    assert fact.recommendation.reason.startswith("Could not check the answer: no evidence")
    assert (
        fact.recommendation.reason.count("could not")
        + fact.recommendation.reason.count("Could not")
        == 1
    )
