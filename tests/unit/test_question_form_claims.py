"""Facts stated in question form are claims with their own span; questions to the user are not.

A declarative question ("So the meeting is on Friday at 3pm?"), a statement run into a question
("X, does that help?", "X; shall I …?", "X - would you like …?") and an echo question ("You mean
the meeting on Friday?") state X; "Which order number is it about?" and "Would you like me to
open a return request?" state nothing.
"""

from __future__ import annotations

import pytest

from guardrail.config import HallucinationConfig
from guardrail.hallucination.claims import sentence_claims
from guardrail.hallucination.question_facts import asserted_fact

STATED = [
    ("The refund window is 90 days, does that help?", "The refund window is 90 days"),
    ("So the meeting is on Friday at 3pm?", "the meeting is on Friday at 3pm"),
    ("You mean the meeting on Friday?", "the meeting on Friday"),
    ("Do you mean the 2019 model?", "the 2019 model"),
    ("The refund window is 30 days; shall I open a return?", "The refund window is 30 days"),
    (
        "Refunds take 5 business days - would you like me to start one?",
        "Refunds take 5 business days",
    ),
    (
        "Refunds take 5 business days — would you like me to start one?",
        "Refunds take 5 business days",
    ),
    ("Orvik moved to Lyon?", "Orvik moved to Lyon"),
    ("John was 1990?", "John was 1990"),
    ("So the budget is 2 million euros?", "the budget is 2 million euros"),
    ("So, Jane Roe is the CEO?", "Jane Roe is the CEO"),
    ("You have 30 days to return it, ok?", "You have 30 days to return it"),
    ("The meeting is on Monday at 2pm, right?", "The meeting is on Monday at 2pm"),
    ("Did you know that Paris is the capital of France?", "Paris is the capital of France"),
]

ASKS = [
    "Which order number is it about?",
    "Would you like me to open a return request?",
    "That works for you?",
    "If you paid by card, would you like a refund?",
    "After the meeting on Monday, shall I send notes?",
    "Sure, would you like me to check?",
    "What time is it, do you know?",
    "You want a refund?",
    "Is the meeting on Monday?",
    "Anything else I can help with?",
    "How about Tuesday at 3pm?",
    "I can book room 4B for Monday, would that work?",
    "Any questions about the 30-day window?",
    "Shall we say Monday at 2pm?",
    "Did you know where he was born?",
]


@pytest.mark.parametrize(("sentence", "fact"), STATED)
def test_the_stated_part_of_a_question_is_found(sentence: str, fact: str) -> None:
    found = asserted_fact(sentence)
    assert found is not None, sentence
    assert sentence[found[0] : found[1]] == fact


@pytest.mark.parametrize("sentence", ASKS)
def test_a_question_to_the_user_states_nothing(sentence: str) -> None:
    assert asserted_fact(sentence) is None


def test_the_claim_keeps_its_span_inside_the_reply() -> None:
    reply = "Thanks for waiting. The refund window is 90 days, does that help?"
    claims = sentence_claims(reply, HallucinationConfig())
    assert [c.text for c in claims] == ["Thanks for waiting.", "The refund window is 90 days"]
    assert claims[1].span.slice(reply) == "The refund window is 90 days"


def test_questions_run_together_in_lower_case_are_checked_one_by_one() -> None:
    # the sentence splitter keeps "…? the …" in one sentence; each question is its own piece
    reply = "the meeting moved to 42%? the fee is 2pm on Monday? what do you think?"
    claims = sentence_claims(reply, HallucinationConfig())
    assert [c.span.slice(reply) for c in claims] == [
        "the meeting moved to 42%",
        "the fee is 2pm on Monday",
        "what do you think?",
    ]


def test_without_checkworthiness_the_question_is_one_claim() -> None:
    reply = "So the meeting is on Friday at 3pm?"
    claims = sentence_claims(reply, HallucinationConfig(checkworthiness=False))
    assert [c.text for c in claims] == [reply]


# --- through the pipeline (scripted verifier; the real spaCy pipeline and embedder) ----------

SUPPORT = (
    "The refund window is 30 days from delivery. Refunds go back to the original payment "
    "method within 5 business days. The team meeting is on Monday at 2pm in room 4B."
)


def _guard(verifier: object) -> object:
    from tests.reliability_strategies import guard_with

    return guard_with(verifier)


def test_a_wrong_number_before_a_question_is_repaired_from_the_evidence_sentence() -> None:
    from guardrail.verifiers.scripted import ScriptedVerifier

    verifier = ScriptedVerifier(
        {
            ("30 days", "The refund window is 90 days"): "contradiction",
            ("30 days", "The refund window is 30 days"): "entailment",
        },
        default="neutral",
    )
    reply = "The refund window is 90 days, does that help?"
    report = _guard(verifier).invoke(  # type: ignore[attr-defined]
        {"query": "How long do I have to return it?", "response": reply, "passages": [SUPPORT]}
    )
    assert report.claims[0].text == "The refund window is 90 days"
    assert report.claims[0].status.value == "contradicted"
    assert report.action.value == "correct_and_deliver"
    assert report.delivered_text.startswith("The refund window is 30 days, does that help?")
    [fix] = [c for c in report.corrections if c.type.value == "factual"]
    assert (fix.original, fix.replacement, fix.verified) == ("90", "30", True)


def test_a_declarative_question_is_checked_against_the_evidence() -> None:
    from guardrail.verifiers.scripted import ScriptedVerifier

    verifier = ScriptedVerifier(
        {("Monday at 2pm", "the meeting is on Friday at 3pm"): "contradiction"}, default="neutral"
    )
    report = _guard(verifier).invoke(  # type: ignore[attr-defined]
        {
            "query": "When is the meeting?",
            "response": "So the meeting is on Friday at 3pm?",
            "passages": [SUPPORT],
        }
    )
    assert report.claims[0].text == "the meeting is on Friday at 3pm"
    assert report.verdict.label.value == "HALLUCINATION"
    assert report.action.value != "human_review"


def test_a_declarative_question_without_evidence_is_not_accepted() -> None:
    from guardrail.verifiers.scripted import ScriptedVerifier

    report = _guard(ScriptedVerifier(default="entailment")).invoke(  # type: ignore[attr-defined]
        {"response": "Orvik moved to Lyon?"}
    )
    assert report.claims[0].text == "Orvik moved to Lyon"
    assert report.action.value not in ("accept", "accept_with_flags")


def test_evidence_number_takes_the_one_number_in_the_same_place() -> None:
    from guardrail.hallucination.flags import evidence_number
    from guardrail.text.mentions import find_mentions

    def pick(claim: str, snippet: str) -> str | None:
        [mention] = [m for m in find_mentions(claim) if m.kind.value == "number"][:1]
        return evidence_number(claim, mention, snippet)

    assert pick("The window is 90 days.", "The window is 30 days from delivery.") == "30"
    assert pick("Acme has 460 employees.", "Acme has 450 employees.") == "450"
    assert pick("The rate is 3.5% a year.", "The rate is 3.25% a year.") == "3.25%"
    # another unit, two candidates, a percentage for a plain number: no repair
    assert pick("The window is 90 days.", "The window is 30 weeks.") is None
    assert pick("It has 90 days.", "It has 30 days, or 60 days in winter.") is None
    assert pick("The rate is 3 a year.", "The rate is 3.25% a year.") is None
    # a thousands number a tokeniser split ("3, 700") is one number, never a piece of itself
    assert pick("There were 1,480 women.", "There were 3, 700 women.") == "3,700"
    assert pick("There were 480 women.", "There were 3, 700 women.") == "3,700"  # not "700"
    assert pick("There were 1,480 women.", "There were 3,700 women.") == "3,700"
    assert pick("In 2019, 40 people came.", "In 2019, 30 people came.") == "30"


def test_an_end_of_a_range_takes_the_end_of_the_evidence_range_sharing_the_other() -> None:
    from guardrail.hallucination.flags import evidence_number
    from guardrail.text.mentions import find_mentions

    def pick(claim: str, number: str, snippet: str) -> str | None:
        [mention] = [m for m in find_mentions(claim) if m.text == number]
        return evidence_number(claim, mention, snippet)

    aged = "The centre works with people aged 10-24 and 5 staff."
    assert pick("It works with 10-31 year olds.", "31", aged) == "24"
    assert pick("It works with 12-24 year olds.", "12", aged) == "10"
    # the other end differs too, or two ranges share it: no repair
    assert pick("It works with 11-31 year olds.", "31", aged) is None
    two = "Some are aged 10-24, others 10-18, and 5 staff."
    assert pick("It works with 10-31 year olds.", "31", two) is None


@pytest.mark.parametrize(
    "reply", ["Which order number is it about?", "Would you like me to open a return request?"]
)
def test_a_clarifying_question_to_a_remark_is_delivered(reply: str) -> None:
    from guardrail.verifiers.scripted import ScriptedVerifier

    verifier = ScriptedVerifier(default="neutral")
    report = _guard(verifier).invoke(  # type: ignore[attr-defined]
        {"query": "I want to return my shoes.", "response": reply, "passages": [SUPPORT]}
    )
    assert report.coherence.discourse_coherence.details["main_act"] == "clarification"
    assert report.action.value == "accept" and report.delivered_text == reply
    assert verifier.calls == []


def test_an_unrelated_question_to_a_remark_is_not_delivered() -> None:
    from guardrail.verifiers.scripted import ScriptedVerifier

    report = _guard(ScriptedVerifier(default="neutral")).invoke(  # type: ignore[attr-defined]
        {
            "query": "I want to return my shoes.",
            "response": "Is the sky blue?",
            "passages": [SUPPORT],
        }
    )
    assert report.coherence.discourse_coherence.details["main_act"] != "clarification"
    assert report.delivered_text is None


def test_a_misspelling_beside_the_evidence_word_is_repaired_and_delivered() -> None:
    from guardrail.verifiers.scripted import ScriptedVerifier

    verifier = ScriptedVerifier(
        {
            ("Monday at 2pm", "The meeting is on Mondey at 2pm."): "neutral",
            ("Monday at 2pm", "The meeting is on Monday at 2pm."): "entailment",
        },
        default="neutral",
    )
    report = _guard(verifier).invoke(  # type: ignore[attr-defined]
        {
            "query": "When is the meeting?",
            "response": "The meeting is on Mondey at 2pm.",
            "passages": [SUPPORT],
        }
    )
    assert report.action.value == "correct_and_deliver"
    assert report.delivered_text == "The meeting is on Monday at 2pm."
    [fix] = [c for c in report.corrections if c.replacement == "Monday"]
    assert fix.original == "Mondey" and fix.verified is True


def test_evidence_spelling_takes_the_one_near_word_of_the_evidence_sentence() -> None:
    from guardrail.hallucination.flags import evidence_spelling

    snippet = "The team meeting is on Monday at 2pm in room 4B with Catherine Moore."
    assert evidence_spelling("Mondey", snippet) == "Monday"
    assert evidence_spelling("Katherine", snippet) == "Catherine"  # one letter off
    assert evidence_spelling("Catherina", snippet) == "Catherine"
    assert evidence_spelling("Moor", snippet) is None  # short words are left alone
    assert evidence_spelling("Tuesday", snippet) is None  # a real other word, far away
    assert evidence_spelling("Mondey", "Monday and Mendey are busy.") is None  # two near words
    assert evidence_spelling("mondey", snippet) is None  # not the same capitalisation


# --- a bare yes or no states the question's proposition --------------------------------------


@pytest.mark.parametrize(
    ("reply", "yes"),
    [("Yes.", True), ("Yeah, it is.", True), ("Nope!", False), ("No, it isn't.", False)],
)
def test_a_bare_yes_or_no_is_read(reply: str, yes: bool) -> None:
    from guardrail.hallucination.question_facts import yes_or_no

    assert yes_or_no(reply) is yes


@pytest.mark.parametrize(
    "reply", ["Yes, I love it.", "No idea, sorry.", "The meeting is on Monday."]
)
def test_a_reply_that_says_more_is_not_a_bare_yes_or_no(reply: str) -> None:
    from guardrail.hallucination.question_facts import yes_or_no

    assert yes_or_no(reply) is None


@pytest.mark.parametrize(
    ("question", "yes", "no"),
    [
        ("Is the meeting on Monday?", "The meeting is on Monday.", "The meeting is not on Monday."),
        ("Did Orvik move to Lyon?", "Orvik did move to Lyon.", "Orvik did not move to Lyon."),
        ("Is Taylor Swift a singer?", "Taylor Swift is a singer.", "Taylor Swift is not a singer."),
        (
            "Are all the rooms booked?",
            "All the rooms are booked.",
            "It is not true that all the rooms are booked.",
        ),
        (
            "Was Home Alone directed by Chris Columbus?",  # the name reaches the participle
            "Home Alone was directed by Chris Columbus.",
            "Home Alone was not directed by Chris Columbus.",
        ),
        (
            "Does the library open at 9am?",  # "open" tagged as an adjective: no verb read
            "The library does open at 9am.",
            "The library does not open at 9am.",
        ),
        ("What time is it?", None, None),
        ("Is the tower in Paris or Lyon?", None, None),
        ("Are both The New Pornographers and Kings of Leon American rock bands?", None, None),
    ],
)
def test_the_proposition_of_a_yes_no_question(
    question: str, yes: str | None, no: str | None
) -> None:
    from guardrail.hallucination.question_facts import yes_no_proposition
    from tests.reliability_strategies import shared_backends

    nlp, _ = shared_backends()
    parsed = nlp(question)[:]
    assert yes_no_proposition(parsed, True) == yes
    assert yes_no_proposition(parsed, False) == no


@pytest.mark.parametrize(
    ("reply", "label", "delivered"), [("Yes.", "entailment", True), ("No.", "entailment", False)]
)
def test_a_bare_yes_or_no_is_judged_against_the_evidence(
    reply: str, label: str, delivered: bool
) -> None:
    from guardrail.verifiers.scripted import ScriptedVerifier

    verifier = ScriptedVerifier(
        {
            ("Monday at 2pm", "The meeting is on Monday."): "entailment",
            ("Monday at 2pm", "The meeting is not on Monday."): "contradiction",
        },
        default="neutral",
    )
    report = _guard(verifier).invoke(  # type: ignore[attr-defined]
        {"query": "Is the meeting on Monday?", "response": reply, "passages": [SUPPORT]}
    )
    [claim] = report.claims
    assert claim.span.slice(reply) == reply
    assert claim.status.value == ("supported" if delivered else "contradicted")
    assert (report.delivered_text == reply) is delivered
    assert report.action.value != "human_review"
