"""Sentences that state no fact are marked not check-worthy; sentences with facts never are.

The sentences are taken from the shapes real assistant answers have (openers, closers,
disclaimers and hedges around the facts).
"""

from __future__ import annotations

import pytest

from guardrail.config import HallucinationConfig
from guardrail.hallucination import response_verdict
from guardrail.hallucination.checkworthy import not_checkworthy_reason
from guardrail.report import ClaimStatus, VerdictLabel

NOT_CHECKWORTHY = [
    "fine thank you!",  # chat replies, as dialogue data writes them
    "hello i'm good.",
    "lol not quite sure..",
    "Hello!",
    "Hi there, thanks for reaching out.",
    "Sure!",
    "Great question!",
    "Of course.",
    "I hope this helps!",
    "I hope this helps you decide.",
    "Let me know if you have any other questions.",
    "Feel free to ask if anything is unclear.",
    "Is there anything else I can help you with?",
    "Would you like me to book the room?",
    "Here is a summary of the main points:",
    "Here are a few options:",
    "As an AI language model, I do not have personal experiences.",
    "I'm not sure.",
    "It depends.",
    "I think that's a great idea.",
    "In my opinion, it is a really interesting approach.",
    "Please consult a professional for advice on your situation.",
    "Happy to help!",
    "Haha, nice!",
    "Oh wow, that's so cool!",
    "Me too!",
    "Yeah, sounds like fun.",
]

CHECKWORTHY = [
    "The meeting is at 2pm on Monday in room 4B.",
    "I think the meeting is at 3pm.",
    "Sure, the report is due on 12 March.",
    "Here is the answer: Paris is the capital of France.",
    "I don't know, but the participants are mostly women.",  # a hedge that goes on to state
    "I'm not sure, however the first games were held in Paris.",
    "Hello, I'm Anna from Acme in Berlin.",
    "Oh, the film came out in 1990.",
    "In summary, the company was founded in 1998 by Larry Page and Sergey Brin.",
    "AlphaCodium was released by Google in 2024.",
    "It uses reinforcement learning to train the model.",
    "The Eiffel Tower is 330 metres tall.",
    "I believe John Smith works in Engineering.",
    "Aspirin reduces the risk of heart attack in some patients.",
    "The policy allows 25 days of paid leave per year.",
    "Water boils at a lower temperature at high altitude.",
    "That's cool because the film was shot in Chicago.",
    "Wow, it made 476 million dollars.",
]


@pytest.mark.parametrize("sentence", NOT_CHECKWORTHY)
def test_sentences_without_facts_are_not_checkworthy(sentence: str) -> None:
    assert not_checkworthy_reason(sentence) is not None


@pytest.mark.parametrize("sentence", CHECKWORTHY)
def test_sentences_with_facts_are_checked(sentence: str) -> None:
    assert not_checkworthy_reason(sentence) is None


def test_other_languages_are_left_to_the_verifier() -> None:
    assert not_checkworthy_reason("你好！", "zh") is None


def test_only_not_checkworthy_claims_give_a_nothing_to_check_verdict_with_the_reason() -> None:
    v = response_verdict(
        [], [ClaimStatus.NOT_CHECKWORTHY] * 2, [], None, HallucinationConfig(), "test"
    )
    assert v.label is VerdictLabel.NOTHING_TO_CHECK
    assert v.reason == "the answer states no checkable fact"


def test_nothing_to_check_in_answer_to_a_question_for_a_fact_is_unverified() -> None:
    v = response_verdict(
        [], [ClaimStatus.NOT_CHECKWORTHY], [], None, HallucinationConfig(), "test",
        question="Are Wenling and Xinzheng both in China?",
    )  # fmt: skip
    assert v.label is VerdictLabel.UNVERIFIED and "asks for a fact" in v.reason


@pytest.mark.parametrize(
    ("answer", "label"),
    [
        ("No.", VerdictLabel.UNVERIFIED),  # answers with a fact the rules could not read
        ("Yes, it is!", VerdictLabel.UNVERIFIED),
        ("What do you think of the song?", VerdictLabel.NOTHING_TO_CHECK),  # asserts nothing
        ("I'm not sure.", VerdictLabel.NOTHING_TO_CHECK),
    ],
)
def test_only_a_bare_yes_or_no_to_a_question_for_a_fact_is_unverified(
    answer: str, label: VerdictLabel
) -> None:
    v = response_verdict(
        [], [ClaimStatus.NOT_CHECKWORTHY], [], None, HallucinationConfig(), "test",
        question="Are Wenling and Xinzheng both in China?", answer=answer,
    )  # fmt: skip
    assert v.label is label


def test_checkable_claims_not_checked_stay_unverified_beside_not_checkworthy_ones() -> None:
    statuses = [ClaimStatus.NOT_CHECKWORTHY, ClaimStatus.UNVERIFIED]
    v = response_verdict([None], statuses, ["no evidence"], None, HallucinationConfig(), "test")
    assert v.label is VerdictLabel.UNVERIFIED and v.reason == "no evidence"


def test_not_checkworthy_claims_do_not_count_in_the_ratio_rule() -> None:
    cfg = HallucinationConfig(policy="ratio")
    statuses = [ClaimStatus.SUPPORTED, ClaimStatus.NOT_CHECKWORTHY, ClaimStatus.NOT_CHECKWORTHY]
    v = response_verdict([0.9], statuses, [], 0.9, cfg, "test")
    assert v.label is VerdictLabel.VERIFIED
