"""benchmarks/one_fact_edits.py: the ``proper`` and ``moved_number`` edits, the ``--kinds``
choice and the ``repaired`` figures. No guardrail runs; spaCy's pipeline (installed with the
package) or fake NER docs parse the texts."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from benchmarks.decisions import Judged
from benchmarks.decisions_data import Item
from benchmarks.one_fact_edits import (
    KINDS,
    Edit,
    Row,
    Source,
    build_edits,
    capitalised_spans,
    evidence_proper_names,
    figures,
    main,
    moved_number_edit,
    proper_edit,
    proper_spans,
    rng_for,
    spacy_parser,
    summarise,
    table,
)


def fake_doc(text: str, *ents: tuple[str, str]) -> SimpleNamespace:
    """A parsed text with the named entities ``(text, label)`` (first occurrence of each)."""
    spans = [SimpleNamespace(text=t, label_=label, start_char=text.index(t)) for t, label in ents]
    return SimpleNamespace(text=text, ents=spans)


# --- proper -----------------------------------------------------------------------------------


def test_capitalised_spans_leave_out_a_sentences_first_word() -> None:
    text = "Yesterday Barack Obama met the Bank of America board in Chicago."
    spans = [text[a:b] for a, b in capitalised_spans(text, {0})]
    assert spans == ["Barack Obama", "Bank of America", "Chicago"]
    assert capitalised_spans("the U.S. and eBay", set()) == [(4, 8)]  # not "Bay" inside a word


def test_proper_spans_take_entities_of_any_proper_label_and_other_capitalised_names() -> None:
    doc = fake_doc(
        "The Blanda Station is near the Blanda River in Iceland on Monday.",
        ("The Blanda Station", "FAC"),
        ("Iceland", "GPE"),
        ("Monday", "DATE"),
    )
    names = [n for *_, n in proper_spans(doc)]
    assert names == ["Blanda Station", "Blanda River", "Iceland"]  # bare; no DATE


def test_a_proper_name_is_replaced_by_a_name_of_any_kind_from_the_documents() -> None:
    docs = [
        fake_doc("The Vatnsdalur Valley lies in the north.", ("Vatnsdalur Valley", "LOC")),
        fake_doc("Landsvirkjun runs the plant; see the Blanda Dam.", ("Landsvirkjun", "ORG")),
    ]
    names = evidence_proper_names(docs)
    assert names == ["Vatnsdalur Valley", "Landsvirkjun", "Blanda Dam"]  # entity or capitalised
    sentence = fake_doc("Jon Gudmundsson built it near Reykjavik.", ("Jon Gudmundsson", "PERSON"),
                        ("Reykjavik", "GPE"))  # fmt: skip
    seen = set()
    for seed in range(30):
        edit = proper_edit(sentence, names, rng_for(seed, "proper", "x"))
        assert edit is not None and edit.kind == "proper"
        assert edit.before in ("Jon Gudmundsson", "Reykjavik")
        assert edit.after in names  # a PERSON may become an ORG, a LOC or a capitalised name
        assert edit.edited == sentence.text.replace(edit.before, edit.after)
        assert edit.edited[edit.start : edit.end] == edit.after
        seen.add((edit.before, edit.after))
    assert len(seen) == 6  # both names, each replacement


def test_document_words_capitalised_like_buttons_are_not_taken_as_names() -> None:
    doc = fake_doc(
        "Click Pause or Travel; TMZ and YouTube said 'Hello Kitty' to Paul.", ("Paul", "PERSON")
    )
    assert evidence_proper_names([doc]) == ["TMZ", "YouTube", "Hello Kitty", "Paul"]


def test_no_proper_edit_with_only_names_sharing_a_word_or_in_the_sentence() -> None:
    sentence = fake_doc("Jon Gudmundsson met Landsvirkjun.", ("Jon Gudmundsson", "PERSON"))
    names = ["Gudmundsson Farm", "Landsvirkjun", "Jon"]
    assert proper_edit(sentence, names, random.Random(0)) is None
    lowered = fake_doc("jon gudmundsson met landsvirkjun in 1990.", ("jon", "PERSON"))
    assert proper_edit(lowered, ["Reykjavik"], random.Random(0)) is None


def test_proper_edit_with_spacy_keeps_a_bare_name_from_the_documents() -> None:
    parse = spacy_parser()
    sentence = parse(["The film was shot by Steven Spielberg's crew in Tunisia in 1980."])[0]
    docs = parse(
        [
            "Raiders of the Lost Ark was filmed in France and Hawaii. George Lucas wrote it.",
            "Harrison Ford starred for Paramount Pictures.",
        ]
    )
    names = evidence_proper_names(docs)
    assert {"George Lucas", "Harrison Ford", "Paramount Pictures"} <= set(names)
    for seed in range(10):
        edit = proper_edit(sentence, names, rng_for(seed, "proper", "y"))
        assert edit is not None
        assert edit.before in ("Steven Spielberg", "Tunisia")  # no possessive
        assert edit.after in names and edit.after.lower() not in sentence.text.lower()


# --- moved_number -----------------------------------------------------------------------------

PASSAGES = (
    "Work began in 1929 and the bridge opened in 1932 after 1,932 days.",
    "It cost 3,200 dollars, or 3200 francs, paid by 12 men; 4,500 was the estimate. 2.5 km.",
)


def test_a_number_moves_to_another_value_of_the_documents_written_alike() -> None:
    sentence = "The bridge opened in 1932 and cost 4,500 dollars."
    seen = set()
    for seed in range(40):
        edit = moved_number_edit(sentence, PASSAGES, rng_for(seed, "moved_number", "x"))
        assert edit is not None and edit.kind == "moved_number"
        assert edit.edited[edit.start : edit.end] == edit.after
        if edit.before == "1932":
            assert edit.after == "1929"  # the only other year; never 1932 again
        else:
            assert edit.before == "4,500" and edit.after == "3,200"  # commas preferred
        seen.add(edit.before)
    assert seen == {"1932", "4,500"}


def test_a_moved_number_never_keeps_a_value_of_the_sentence() -> None:
    passages = ("It cost 12,000 euros, later 12000.0 euros, then 900 euros.",)
    for seed in range(20):
        edit = moved_number_edit("It cost 12000 euros.", passages, random.Random(seed))
        assert edit is not None and edit.after == "900"
    # a non-year never becomes a year, a year never a non-year
    assert moved_number_edit("It had 40 rooms.", ("Built in 1990.",), random.Random(0)) is None
    assert moved_number_edit("Built in 1990.", ("It had 40 rooms.",), random.Random(0)) is None
    assert moved_number_edit("No numbers here.", PASSAGES, random.Random(0)) is None
    # written differently only when nothing alike is found
    edit = moved_number_edit("It is 7 km long.", ("It is 2.5 km or 1,500 m.",), random.Random(0))
    assert edit is not None and edit.after in ("2.5", "1,500")


# --- building ---------------------------------------------------------------------------------


def test_new_kinds_leave_the_old_edits_as_they_were_and_kinds_choose() -> None:
    source = Source(
        "wice",
        "w-1@0",
        "dev",
        "Check.",
        "Steve Jobs founded Apple in Cupertino in 1976 with 3 friends.",
        ("Bill Gates started Microsoft in Albuquerque in 1975 with Paul Allen and 2 others.",),
    )
    parse = spacy_parser()
    everything = build_edits([source], parse, seed=0)[0][1]
    old = build_edits([source], parse, seed=0, kinds=("name", "number", "negation"))[0][1]
    assert [e for e in everything if e.kind in ("name", "number", "negation")] == old
    kinds = [e.kind for e in everything]
    assert kinds == [k for k in KINDS if k in kinds]  # in KINDS order
    assert {"proper", "moved_number"} <= set(kinds)
    only = build_edits([source], parse, seed=0, kinds=["moved_number"])[0][1]
    assert [e.kind for e in only] == ["moved_number"]
    assert only[0].after in ("1975", "2") and only[0].before in ("1976", "3")


# --- repaired ---------------------------------------------------------------------------------


def judged(verdict: str, delivered: str | None) -> Judged:
    item = Item("wice", "x", "dev", "q", "r", [], True)
    return Judged(item, verdict=verdict, claims=[(0, 14, "unsupported")], delivered=delivered)


def test_figures_count_edits_repaired_back_to_the_original() -> None:
    source = Source("wice", "w", "dev", "q", "A won in 1990.", ("p",))
    edit = Edit("moved_number", "A won in 1990.", "A won in 1991.", 9, "1990", "1991")
    ok = judged("VERIFIED", "A won in 1990.")
    rows = [
        Row(source, edit, ok, judged("HALLUCINATION", " A won  in\n1990. ")),  # repaired
        Row(source, edit, ok, judged("HALLUCINATION", "A won in 1991. [unsupported]")),
        Row(source, edit, ok, judged("HALLUCINATION", None)),  # nothing shown
        Row(source, edit, ok, judged("VERIFIED", "A won in 1991.")),  # missed
    ]
    f = figures(rows)
    assert f["repaired"] == 0.25 and f["repaired_of_caught"] == 0.3333
    assert f["caught"] == 0.75
    assert figures([])["repaired"] is None
    summary = summarise(rows, [ok], kinds=["moved_number"])
    assert list(summary["kinds"]) == ["moved_number"]
    assert "repaired" in table(summary, "dev") and "25.0 %" in table(summary, "dev")


def test_kinds_option_rejects_unknown_kinds() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--kinds", "colour"])
    assert exc.value.code == 2
