"""Polarity of a claim against the evidence telling its fact: a negation inserted or removed
is flagged, a negation that belongs to another fact is not (no model: alignment is lexical)."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.hallucination.alignment import AlignmentIndex, claim_alignment
from guardrail.hallucination.flags import POLARITY_CONFIDENCE, polarity_flag
from guardrail.hallucination.polarity import PolarityMismatch, polarity_mismatch
from guardrail.report import Claim, ClaimStatus, HallucinationType, Span

HEART = (
    "Athletes often have a lower resting heart rate than others. Regular endurance training "
    "increases the size of the heart's left ventricle. The effect fades after a few months."
)
LABEL = (
    "When asparagus is digested, asparagusic acid is broken down into sulfur byproducts. "
    "The genes do not guarantee a dislike for cilantro."
)


def _check(claim: str, *passages: str) -> PolarityMismatch | None:
    alignment, _ = claim_alignment(claim, AlignmentIndex.of(passages), None)
    return polarity_mismatch(claim, alignment)


def test_inserted_negation_is_flagged_with_its_span() -> None:
    claim = "Regular endurance training does not increase the size of the heart's left ventricle."
    found = _check(claim, HEART)
    assert found is not None and found.claim_negated
    assert found.word == "increase"
    assert claim[found.start : found.end] == "not increase"
    assert found.evidence_sentence.startswith("Regular endurance training increases")
    assert found.evidence_words == "increases"


def test_contraction_negates_the_verb() -> None:
    claim = "Regular endurance training doesn't increase the size of the heart's left ventricle."
    found = _check(claim, HEART)
    assert found is not None and found.word == "increase"


def test_irregular_past_is_the_negated_base_form() -> None:
    claim = "The producer did not take the young rapper under his wing after the first album."
    found = _check(
        claim, "The producer took the young rapper under his wing after the first album."
    )
    assert found is not None and found.word == "take"


def test_removed_negation_is_flagged() -> None:
    found = _check("The genes do guarantee a dislike for cilantro.", LABEL)
    assert found is not None and not found.claim_negated
    assert found.word == "guarantee"
    assert found.evidence_sentence == "The genes do not guarantee a dislike for cilantro."
    assert found.evidence_words == "not guarantee"


@pytest.mark.parametrize(
    "claim",
    [
        "Regular endurance training increases the size of the heart's left ventricle.",
        "The genes do not guarantee a dislike for cilantro.",
    ],
)
def test_same_polarity_is_not_flagged(claim: str) -> None:
    assert _check(claim, HEART, LABEL) is None


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        # a question states nothing
        (
            "Does regular endurance training not increase the size of the heart's left ventricle?",
            HEART,
        ),
        # "not only" goes on to affirm
        (
            "Regular endurance training not only increases the size of the heart's left "
            "ventricle but also its wall.",
            HEART,
        ),
        # the claim sets the fact against another: the negation may belong to the other half
        (
            "In contrast, tobacco smoke has been causally linked with lung and colon cancers.",
            "While cannabis smoke harms the airways, it has not been causally linked with "
            "tobacco related cancers such as lung or colon cancers.",
        ),
        # the claim denies it in its own words
        (
            "It is unlikely that individual cases will lead to widespread outbreaks if the "
            "protocols are followed.",
            "Individual cases will not lead to widespread outbreaks if the protocols are followed.",
        ),
        # the evidence affirms the word about something else
        (
            "Tobacco and alcohol are not allowed in New Order Amish homes.",
            "New Order Amish oppose tobacco and alcohol in their homes, and many of the younger "
            "families among them now allow travel by airplane.",
        ),
        # the claim states the word both ways; the affirmed place is the evidence's
        (
            "When snow is held to a flame it doesn't melt, the porous snow absorbing the water "
            "as it melts and the lighter leaving soot.",
            "Held to a flame, the porous snow is absorbing the water as it melts and the lighter "
            "is leaving soot on the snow.",
        ),
        # a loose paraphrase says too little about where the fact is told
        ("Endurance training does not increase stamina in older runners.", HEART),
    ],
)
def test_negation_of_another_fact_is_not_flagged(claim: str, passage: str) -> None:
    assert _check(claim, passage) is None


def test_no_alignment_no_mismatch() -> None:
    assert polarity_mismatch("Training does not increase the heart's size.", None) is None


def test_flag_says_which_side_negates() -> None:
    response = (
        "Regular endurance training does not increase the size of the heart's left ventricle."
    )
    found = _check(response, HEART)
    assert found is not None
    claim = Claim(text=response, span=Span(start=0, end=len(response)))
    flag = polarity_flag(response, claim, 0, found)
    assert flag.type is HallucinationType.CONTRADICTS_FACT
    assert flag.confidence == POLARITY_CONFIDENCE
    assert flag.content == "not increase"
    assert flag.explanation == (
        "the claim says 'not increase' where the evidence telling this fact says 'increases'"
    )
    assert flag.evidence is not None and flag.evidence.startswith("Regular endurance training")


def test_a_claim_the_answer_does_not_state_word_for_word_is_flagged_on_its_whole_span() -> None:
    # a bare "No, it isn't." stands for the question's proposition, a longer text
    proposition = (
        "Regular endurance training does not increase the size of the heart's left ventricle."
    )
    found = _check(proposition, HEART)
    assert found is not None
    response = "No, it isn't."
    claim = Claim(text=proposition, span=Span(start=0, end=len(response)))
    flag = polarity_flag(response, claim, 0, found)
    assert (flag.span.start, flag.span.end) == (0, len(response))
    assert "the claim says 'not increase'" in flag.explanation


def _detect(response: str, language: str, polarity_check: bool = True) -> Any:
    from guardrail.config import HallucinationConfig
    from guardrail.hallucination.claims import sentence_claims
    from guardrail.hallucination.detector import detect
    from guardrail.hallucination.evidence import Evidence
    from guardrail.hallucination.windows import make_windows
    from guardrail.verifiers.scripted import ScriptedVerifier

    cfg = HallucinationConfig(
        policy="weakest_link",
        threshold={"enabled": False, "fixed": 0.5},
        logical_consistency=False,
        polarity_check=polarity_check,
    )
    ev = Evidence(window_tokens=400, window_stride=400, passages=[HEART])
    ev.windows = make_windows(HEART, 0, 400, 400)
    ev.known_texts = [HEART]
    # the verifier is fooled, in every language
    verifier = ScriptedVerifier({(None, response): "entailment"}, languages=("en", "de"))
    claims = sentence_claims(response, cfg, language)
    for c in claims:
        c.language = language  # as the language detector tags it
    return detect(response, claims, ev, verifier, cfg, 0.8)


NEGATED = "Regular endurance training does not increase the size of the heart's left ventricle."


def test_detect_unsupports_a_claim_that_negates_its_evidence() -> None:
    found = _detect(NEGATED, "en")
    assert found.claims[0].status is ClaimStatus.UNSUPPORTED
    flipped = [f for f in found.flags if f.type is HallucinationType.CONTRADICTS_FACT]
    assert [f.content for f in flipped] == ["not increase"]
    assert found.claims[0].p_supported is not None
    assert found.claims[0].p_supported <= round(1.0 - POLARITY_CONFIDENCE, 4)


def test_detect_without_the_check_keeps_the_verifier_verdict() -> None:
    found = _detect(NEGATED, "en", polarity_check=False)
    assert found.claims[0].status is ClaimStatus.SUPPORTED


def test_a_claim_in_another_language_is_not_checked() -> None:
    found = _detect(NEGATED, "de")
    assert found.claims[0].language == "de"
    assert found.claims[0].status is ClaimStatus.SUPPORTED
    assert not [f for f in found.flags if f.type is HallucinationType.CONTRADICTS_FACT]
