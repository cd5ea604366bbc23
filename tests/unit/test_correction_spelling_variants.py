"""Regional variants, derivations and compounds (guardrail.correction.variants), and the
spelling decision with the real pyspellchecker English dictionary (no spaCy)."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.correction.variants import (
    is_compound,
    is_derivation,
    is_regional_variant,
    legitimate_form,
    one_edit_away,
    regional_variants,
)

KNOWN = {
    "color", "behavior", "organization", "analyze", "center", "catalog", "defense", "traveled",
    "modeling", "pediatric", "estrogen", "program", "judgment", "aging", "license", "gray",
    "optimizes", "maneuver", "fulfill", "token", "quantize", "parameter", "service", "web",
    "hook", "occur", "occurred", "prefer", "preferred", "till", "until", "chat",
}  # fmt: skip


def known(word: str) -> bool:
    return word in KNOWN


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("colour", "color"), ("behaviour", "behavior"), ("organisation", "organization"),
        ("analyse", "analyze"), ("centre", "center"), ("catalogue", "catalog"),
        ("defence", "defense"), ("travelled", "traveled"), ("modelling", "modeling"),
        ("paediatric", "pediatric"), ("oestrogen", "estrogen"), ("programme", "program"),
        ("judgement", "judgment"), ("ageing", "aging"), ("licence", "license"),
        ("grey", "gray"), ("optimises", "optimizes"), ("manoeuvre", "maneuver"),
        ("fulfil", "fulfill"),
    ],
)  # fmt: skip
def test_british_spellings_map_to_the_american_word(british: str, american: str) -> None:
    assert american in regional_variants(british)
    assert is_regional_variant(british, known)
    assert legitimate_form(british, known) == "regional variant"


@pytest.mark.parametrize(
    ("word", "reason"),
    [
        ("tokenizers", "derivation"),  # token + ize + er + s
        ("dequantize", "derivation"),  # de + quantize
        ("hyperparameters", "derivation"),  # hyper + parameter + s
        ("microservices", "derivation"),
        ("webhooks", "compound"),  # web + hook + s
        ("chathook", "compound"),
    ],
)
def test_derivations_and_compounds_of_known_words_are_real(word: str, reason: str) -> None:
    assert legitimate_form(word, known) == reason


def test_a_misspelt_inflection_is_not_a_derivation() -> None:
    # occur + ed is spelled "occurred"; prefer + ing "preferring" would be, "prefered" is not
    assert not is_derivation("occured", known)
    assert not is_derivation("prefered", known)
    assert legitimate_form("occured", known) is None


def test_a_two_letter_prefix_needs_a_long_word_behind_it() -> None:
    assert not is_derivation("untill", known)  # not un + till
    assert legitimate_form("untill", known) is None


def test_suffix_like_words_do_not_make_compounds() -> None:
    words = {"use", "full", "writ", "ting", "care"}
    assert not is_compound("usefull", words.__contains__)
    assert not is_compound("writting", words.__contains__)


def test_one_edit_away_covers_all_four_edits() -> None:
    near = set(one_edit_away("teh"))
    assert {"the", "te", "tea", "tech"} <= near  # transposition, deletion, substitution, insert
    assert "tehh" in near


def test_a_derivation_one_edit_from_a_common_word_is_read_as_a_typo() -> None:
    words = {"gover", "government"}
    common = {"government"}.__contains__
    assert legitimate_form("goverment", words.__contains__) == "derivation"
    assert legitimate_form("goverment", words.__contains__, common) is None
    # ... unless the stem is trusted (the evidence or a technical term uses it)
    trusted = {"gover"}.__contains__
    assert legitimate_form("goverment", words.__contains__, common, trusted) == "derivation"


# --- with the real pyspellchecker dictionary ------------------------------------------


@pytest.fixture(scope="module")
def speller() -> Any:
    pytest.importorskip("spellchecker", reason="pyspellchecker is in the 'nlp' extra")
    from guardrail.correction import load_speller

    return load_speller()


CORRECT_UNUSUAL = """
optimises optimised organise realise recognise summarise utilisation normalisation tokenise
colour behaviour favourite honourable labourer neighbour rumour flavour colourful
centre theatre metre litre fibre calibre spectre centred kilometres
catalogue dialogue analogue catalogued defence offence pretence licence licences
travelled modelling cancelling labelling traveller modeller signalling counsellor tunnelling
paediatric anaemia haemoglobin leukaemia orthopaedic encyclopaedia foetus manoeuvre
oesophagus diarrhoea anaesthesia oestrogen programme kilogramme aluminium sceptical
jewellery enrolment fulfil skilful instalment judgement acknowledgement paralyse catalyse
analysed analysing likeable sizeable focussed benefitted ageing grey
tokenizer tokenizers tokenization quantization quantized unquantized dequantize detokenizer
hyperparameter hyperparameters backpropagation microservices embeddings reranker reranking
multimodal autoencoder finetuning pretrained pretraining datasets softmax logits vectorize
vectorization serializable deserialize deserialization middleware runtime webhook webhooks
backend frontend chatbot chatbots retriever retrievers preprocessing postprocessing
overfitting underfitting upsampling downsampling misconfigured json yaml regex numpy
kubernetes async enum config configs repo repos github localhost namespace namespaces
metadata timestamp timestamps multilingual crosslingual subword subwords multihead
nonlinear nonlinearity reparameterize interpretability explainability
""".split()

TYPOS = {
    "recieve": "receive", "definately": "definitely", "occured": "occurred",
    "seperate": "separate", "goverment": "government", "accomodate": "accommodate",
    "wierd": "weird", "untill": "until", "beleive": "believe", "teh": "the",
    "arguement": "argument", "begining": "beginning", "comming": "coming",
    "truely": "truly", "writting": "writing", "usefull": "useful", "refered": "referred",
    "transfered": "transferred", "posession": "possession", "tommorrow": "tomorrow",
}  # fmt: skip


def test_no_correct_unusual_word_counts_as_misspelt(speller: Any) -> None:
    from guardrail.correction.spelling import misspelt

    assert len(CORRECT_UNUSUAL) >= 150
    assert [w for w in CORRECT_UNUSUAL if misspelt(w, speller)] == []


def test_real_typos_count_as_misspelt_and_get_the_right_word(speller: Any) -> None:
    from guardrail.correction.spelling import _best_candidate, misspelt

    assert [w for w in TYPOS if not misspelt(w, speller)] == []
    picked = {w: _best_candidate(speller, w, 1 if len(w) < 8 else 2) for w in TYPOS}
    assert {w: p[0] if p else None for w, p in picked.items()} == TYPOS


def test_the_protected_vocabulary_is_never_misspelt(speller: Any) -> None:
    from guardrail.correction.spelling import misspelt

    assert misspelt("seperate", speller)
    assert not misspelt("seperate", speller, {"seperate"})
    # a derivation of a vocabulary word is protected too
    assert not misspelt("frobnicators", speller, {"frobnicate"})


def test_short_words_are_only_swapped_into_very_common_words(speller: Any) -> None:
    from guardrail.correction.spelling import _best_candidate

    assert _best_candidate(speller, "teh", 1) == ("the", 1)
    assert _best_candidate(speller, "adn", 1) == ("and", 1)
    assert _best_candidate(speller, "cpu", 1) is None  # not "cup"
    assert _best_candidate(speller, "llm", 1) is None


def test_a_far_suggestion_is_refused_for_short_words(speller: Any) -> None:
    from guardrail.correction.spelling import _best_candidate

    # "logits" → "lots" is two edits away: too far for a six-letter word
    assert _best_candidate(speller, "logitz", 1) is None


@pytest.mark.parametrize(
    ("text", "word", "inside"),
    [
        ("Dates follow ISO-8601 here.", "ISO", True),
        ("Use snake_case names.", "snake", True),
        ("Upgrade to v2.3.1 now.", "v", True),
        ("Open confg/settngs.yaml first.", "settngs", True),
        ("A state-of-the-art method.", "state", True),
        ("print(x)\ncout << total << endl;\nDone.", "endl", True),
        ("<p>Some text here.</p>", "text", True),
        ("#include <iostream>", "iostream", True),
        ("The colour, the shape.", "colour", False),
        ("It ended (finally).", "finally", False),
        ("A word; another word.", "another", False),
    ],
)
def test_code_like_chunks_and_lines(text: str, word: str, inside: bool) -> None:
    from guardrail.correction.spelling import _in_code_chunk

    start = text.index(word)
    assert _in_code_chunk(text, start, start + len(word)) is inside
