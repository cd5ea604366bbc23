"""benchmarks/one_fact_edits.py: the edits (names from the evidence, numbers, negations), the
sampling and the figures. No guardrail runs; names use fake NER docs, negations spaCy's
pipeline (installed with the package)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from benchmarks.decisions import Judged
from benchmarks.decisions_data import Item
from benchmarks.one_fact_edits import (
    OUTCOMES,
    Edit,
    Repairs,
    Row,
    Source,
    build_edits,
    changed_number,
    claim_caught,
    evidence_names,
    figures,
    name_edit,
    negation_edit,
    number_edit,
    repair_outcome,
    repair_outcomes,
    rng_for,
    sample_sources,
    spacy_parser,
)


def fake_doc(text: str, *ents: tuple[str, str]) -> SimpleNamespace:
    """A parsed text with the named entities ``(text, label)`` (first occurrence of each)."""
    spans = [SimpleNamespace(text=t, label_=label, start_char=text.index(t)) for t, label in ents]
    return SimpleNamespace(text=text, ents=spans)


EVIDENCE = [
    fake_doc("Bill Gates and Paul Allen started Microsoft in Albuquerque.",
             ("Bill Gates", "PERSON"), ("Paul Allen", "PERSON"), ("Microsoft", "ORG"),
             ("Albuquerque", "GPE")),
    fake_doc("Steve Jobs left Apple; the Microsoft deal followed.",
             ("Steve Jobs", "PERSON"), ("Apple", "ORG"), ("Microsoft", "PERSON")),
]  # fmt: skip


def test_evidence_names_take_each_name_once_under_its_most_frequent_label() -> None:
    names = evidence_names(EVIDENCE)
    assert names == {
        "PERSON": ["Bill Gates", "Paul Allen", "Steve Jobs"],
        "ORG": ["Microsoft", "Apple"],
        "GPE": ["Albuquerque"],
    }
    lower = fake_doc("He met the press.", ("the press", "ORG"))
    assert evidence_names([lower])["ORG"] == []  # not capitalised


def test_a_name_is_replaced_by_another_of_the_same_label_from_the_evidence() -> None:
    names = evidence_names(EVIDENCE)
    doc = fake_doc("Steve Jobs founded Apple in 1976.", ("Steve Jobs", "PERSON"), ("Apple", "ORG"))
    seen = set()
    for seed in range(20):
        edit = name_edit(doc, names, rng_for(seed, "name", "x"))
        assert edit is not None and edit.kind == "name"
        assert edit.after in names["PERSON"] + names["ORG"]
        assert edit.after not in ("Steve Jobs", "Apple")  # never a name of the sentence
        assert edit.edited == doc.text.replace(edit.before, edit.after)
        assert edit.edited[edit.start : edit.end] == edit.after
        seen.add((edit.before, edit.after))
    assert len(seen) > 1  # the seed chooses
    assert name_edit(doc, names, rng_for(3, "name", "x")) == name_edit(
        doc, names, rng_for(3, "name", "x")
    )


def test_no_name_edit_without_an_unrelated_name_of_the_same_label() -> None:
    doc = fake_doc("Gates spoke in Paris.", ("Gates", "PERSON"), ("Paris", "GPE"))
    names = {"PERSON": ["Bill Gates"], "ORG": ["Microsoft"], "GPE": []}
    assert name_edit(doc, names, random.Random(0)) is None  # shares a word; no GPE
    lowered = fake_doc("Patrick bamford joined chelsea in 2012.", ("Patrick", "PERSON"))
    assert name_edit(lowered, {"PERSON": ["Dean Smith"]}, random.Random(0)) is None


@pytest.mark.parametrize("text", ["1998", "2016", "7", "12", "503", "1,200,000", "3.5", "40"])
def test_a_number_changes_to_another_value_formatted_alike(text: str) -> None:
    for seed in range(30):
        new = changed_number(text, random.Random(seed))
        assert new != text
        assert ("," in new) == ("," in text) and ("." in new) == ("." in text)
        if text in ("1998", "2016"):
            assert 1 <= abs(int(new) - int(text)) <= 9  # a year stays a year


def test_number_edit_picks_a_whole_number_and_none_without_digits() -> None:
    edit = number_edit("It cost $1,200 in 1998, 40% more.", random.Random(1))
    assert edit is not None and edit.before in ("1,200", "1998", "40")
    assert number_edit("It opened in the 1990s on Route 66a.", random.Random(1)) is None
    assert number_edit("No numbers here.", random.Random(1)) is None


@pytest.mark.parametrize(
    ("sentence", "edited"),
    [
        ("The company is not profitable.", "The company is profitable."),
        ("He doesn't like the plan.", "He does like the plan."),
        ("The law cannot be changed.", "The law can be changed."),
        ("They never returned to Berlin.", "They returned to Berlin."),
        ("The bridge was built in 1932.", "The bridge was not built in 1932."),
        ("Paris is the capital of France.", "Paris is not the capital of France."),
        ("Steve Jobs founded Apple in 1976.", "Steve Jobs did not found Apple in 1976."),
    ],
)
def test_negation_is_removed_or_inserted(sentence: str, edited: str) -> None:
    edit = negation_edit(spacy_parser()([sentence])[0])
    assert edit is not None and edit.edited == edited


def test_build_edits_is_deterministic_and_keeps_only_changes() -> None:
    source = Source("qags", "qags-1@0", "dev", "Summarise.", "Steve Jobs founded Apple in 1976.",
                    ("Bill Gates started Microsoft in 1975.",))  # fmt: skip
    parse = spacy_parser()
    first = build_edits([source], parse, seed=0)
    assert first == build_edits([source], parse, seed=0)
    kinds = {e.kind for e in first[0][1]}
    assert {"number", "negation"} <= kinds
    assert all(e.edited != e.sentence for e in first[0][1])


def test_sample_sources_is_seeded_and_keeps_file_order() -> None:
    sources = [
        Source("wice", f"w{i}", "dev", "q", f"Sentence number {i} here.", ("p",)) for i in range(50)
    ]
    picked = sample_sources(sources, 10, seed=0)
    assert len(picked) == 10 and picked == sample_sources(sources, 10, seed=0)
    assert [s.item_id for s in picked] == sorted(
        (s.item_id for s in picked), key=lambda i: int(i[1:])
    )
    assert picked != sample_sources(sources, 10, seed=1)
    assert sample_sources(sources, 0, seed=0) == sources


def judged(verdict: str, *claims: tuple[int, int, str]) -> Judged:
    item = Item("wice", "x", "dev", "q", "r", [], True)
    return Judged(item, verdict=verdict, claims=list(claims))


def test_figures_count_caught_pairs_and_originals_kept() -> None:
    source = Source("wice", "w", "dev", "q", "A won in 1990.", ("p",))
    edit = Edit("number", "A won in 1990.", "A won in 1991.", 9, "1990", "1991")
    rows = [
        Row(source, edit, judged("VERIFIED"), judged("HALLUCINATION", (0, 14, "contradicted"))),
        Row(source, edit, judged("VERIFIED"), judged("VERIFIED", (0, 14, "supported"))),
        Row(source, edit, judged("HALLUCINATION"), judged("HALLUCINATION", (0, 14, "unsupported"))),
        Row(source, edit, judged("HALLUCINATION"), judged("UNVERIFIED")),
    ]
    f = figures(rows)
    assert f == {"n": 4, "caught": 0.75, "claim_caught": 0.75, "pairs": 2, "pair_caught": 0.5,
                 "originals_kept": 0.5, "repaired": 0.0, "repaired_of_caught": 0.0}  # fmt: skip


def test_claim_caught_reads_the_claim_covering_the_change() -> None:
    j = judged("HALLUCINATION", (0, 10, "supported"), (11, 30, "unsupported"))
    assert claim_caught(j, 12, 15) and not claim_caught(j, 2, 5)
    assert claim_caught(j, 40, 40)  # no claim covers it: all claims decide
    assert claim_caught(judged("NOTHING_TO_CHECK"), 0, 3)


def test_repair_outcomes_say_why_an_edit_was_not_put_back() -> None:
    source = Source("wice", "w", "dev", "q", "A won 12 games in 1990.", ("p",))
    edit = Edit("number", "A won 12 games in 1990.", "A won 2 games in 1990.", 6, "12", "2")
    kept, doubted = judged("VERIFIED"), judged("HALLUCINATION")

    def row(
        verdict: str, delivered: str | None, repairs: Repairs | None, original: Judged = kept
    ) -> Row:
        edited = judged(verdict)
        edited.delivered = delivered
        return Row(source, edit, original, edited, repairs)

    cases = [
        (row("HALLUCINATION", "A won 12 games in 1990.", Repairs(("12",), ("12",))), OUTCOMES[0]),
        (row("VERIFIED", edit.edited, Repairs()), OUTCOMES[1]),
        (row("HALLUCINATION", "A won 12 games in 1991.", Repairs(("12",), ("12",))), OUTCOMES[2]),
        (
            row("HALLUCINATION", "A won 120 games in 1990.", Repairs(("120",), ("120",))),
            OUTCOMES[3],
        ),
        (row("HALLUCINATION", None, Repairs(("12 games",), ())), OUTCOMES[4]),
        (row("HALLUCINATION", None, Repairs(("120",), ())), OUTCOMES[5]),  # "120" is not "12"
        (row("HALLUCINATION", None, Repairs(("12.5",), ())), OUTCOMES[5]),  # nor is "12.5"
        (row("HALLUCINATION", None, Repairs()), OUTCOMES[5]),
    ]
    for r, expected in cases:
        assert repair_outcome(r) == expected, (r.repairs, r.edited.delivered)
    assert repair_outcome(row("HALLUCINATION", None, None)) is None  # repairs not read
    named = Edit("name", "Park staff left.", "Canal staff left.", 0, "Park", "Canal")
    longer = Row(source, named, kept, judged("HALLUCINATION"), Repairs(("National Park",), ()))
    assert repair_outcome(longer) == OUTCOMES[5]  # a longer name holding it is another name
    same = Row(source, named, kept, judged("HALLUCINATION"), Repairs(("the park",), ()))
    assert repair_outcome(same) == OUTCOMES[4]

    refused = row("HALLUCINATION", None, Repairs(("12",), ()), original=doubted)
    outcomes = repair_outcomes([*(r for r, _ in cases), refused], kinds=["number", "negation"])
    assert list(outcomes) == ["number"]  # negations take no repair
    assert outcomes["number"]["pairs"] == {OUTCOMES[0]: 1, OUTCOMES[1]: 1, OUTCOMES[2]: 1,
                                           OUTCOMES[3]: 1, OUTCOMES[4]: 1, OUTCOMES[5]: 3}  # fmt: skip
    assert outcomes["number"]["others"][OUTCOMES[4]] == 1


def test_repairs_read_the_flags_offers_and_the_confirmed_factual_corrections() -> None:
    flag = SimpleNamespace
    report = SimpleNamespace(
        hallucination_flags=[flag(replacement="12"), flag(replacement=None)],
        corrections=[
            SimpleNamespace(type=SimpleNamespace(value="factual"), verified=True, replacement="12"),
            SimpleNamespace(type=SimpleNamespace(value="factual"), verified=False, replacement="9"),
            SimpleNamespace(type=SimpleNamespace(value="annotation"), verified=None,
                            replacement="[uncertain]"),
        ],
    )  # fmt: skip
    assert Repairs.of(report) == Repairs(offered=("12",), put_in=("12",))
