"""One text layer: the rules about text that several checks share read the same everywhere.

Each test pins one shared rule against a second reader of it: the annotation marker (correction
and streaming), the CJK character class, numbers and dates (value comparison and the
hallucination flags), and the sentence segmentation (claims, removals and streaming).
"""

from __future__ import annotations

from typing import Any

import pytest

from chains.streaming import _with_note
from guardrail.correction.annotate import annotation_edits, annotation_marker
from guardrail.correction.edits import apply_edits
from guardrail.delivery import Note
from guardrail.report import Span


def _invoke_note(text: str, label: str) -> str:
    """``text`` with a note on its whole span, as the correction stage writes it."""
    note = Note(Span(start=0, end=len(text)), label, 0.5)
    edits = annotation_edits(text, None, [], [], 0.5, claim_notes=[note])
    return apply_edits(text, edits)


@pytest.mark.parametrize(
    "sentence",
    ["He is a doctor.", "他是医生。", "彼は医者です。", "“他是医生。”", "He said “yes.”"],
)
def test_streamed_note_is_placed_and_spaced_as_the_corrections(sentence: str) -> None:
    assert _with_note(sentence, "uncertain") == _invoke_note(sentence, "uncertain")


def test_marker_has_no_space_after_cjk_text_and_one_after_latin_text() -> None:
    assert annotation_marker("他是医生。", 5, "x") == "[x]"
    assert annotation_marker("他是医生", 4, "x") == "[x]"
    assert annotation_marker("He is 5", 7, "x") == " [x]"
    assert _with_note(" 他是医生。", "x") == " 他是医生。[x]"


def _found(claim_text: str, evidence: str, kind: str = "number") -> list[str]:
    """The numbers (or dates) of ``claim_text`` the mention lookup finds in ``evidence``, read
    with their claim (the lookup's ``text``)."""
    from guardrail.text.mentions import MentionKind, find_mentions, mention_in

    return [
        m.text
        for m in find_mentions(claim_text)
        if m.kind is MentionKind(kind) and mention_in(m, evidence, text=claim_text)
    ]


@pytest.mark.parametrize(
    ("claimed", "stated"),
    [
        ("5 million", "$5m"),
        ("$5m", "5 million"),
        ("85,000", "85k"),
        ("85k", "85 thousand"),
        ("5 million", "5,000,000"),
        ("13%", "13 percent"),
        ("three", "3"),
        ("3", "three"),
    ],
)
def test_a_number_reads_the_same_in_the_facts_and_the_mention_lookup(
    claimed: str, stated: str
) -> None:
    from guardrail.text.mentions import MentionKind, find_mentions
    from guardrail.text.values import compare_values

    assert compare_values(claimed, stated).matches
    claim = f"Revenue was {claimed} in 2020."
    numbers = [m.text for m in find_mentions(claim) if m.kind is MentionKind.NUMBER]
    assert _found(claim, f"It made {stated} in 2020.") == numbers


@pytest.mark.parametrize(
    ("claimed", "stated"),
    [("5 million", "$5 billion"), ("5%", "5 people"), ("85k", "86,000")],
)
def test_a_different_number_differs_in_the_facts_and_the_mention_lookup(
    claimed: str, stated: str
) -> None:
    from guardrail.text.mentions import MentionKind, find_mentions
    from guardrail.text.values import compare_values

    assert not compare_values(claimed, stated).matches
    claim = f"Revenue was {claimed} in 2020."
    numbers = [m.text for m in find_mentions(claim) if m.kind is MentionKind.NUMBER]
    assert _found(claim, f"It made {stated} in 2020.") != numbers


def test_the_mention_lookup_compares_a_number_without_scale_as_written() -> None:
    """Only a scale ("million", "k", "$…m") is read into the lookup; "2.0" is still not "2"
    there (the value comparison of the facts reads them equal)."""
    assert _found("It rose 2.0 points in 2020.", "It rose 2 points in 2020.") == []


@pytest.mark.parametrize(
    ("name", "evidence", "found"),
    [
        # a function word the tagger took into the name
        ("When Dre", "Dre heard the demo in 1997 and signed him.", True),
        ("The R0 of Ebola", "For Ebola, the R0 is about 1.5 to 2.", True),
        # names of the evidence the tagger ran together
        ("Germany Allemagne", "The French call Germany by the name Allemagne.", True),
        ("the United States Supreme Court", "The Supreme Court of the United States ruled.", True),
        # a demonym of a name of the evidence
        ("Gaulish", "The Gauls called the tribe across the river the Germani.", True),
        # a word of the name the evidence does not give as a name
        ("The A.V. Club", "A review in the AV Club praised the cover.", False),
        ("Lady Marina Windsor", "Lady Amelia Windsor left the marina at noon.", False),
        ("Acme Robotics", "Acme sells toys.", False),
    ],
)
def test_a_name_is_found_when_the_evidence_names_each_of_its_words(
    name: str, evidence: str, found: bool
) -> None:
    """What the fabricated-name flag and the ``missing_specific`` feature both read."""
    from guardrail.text.mentions import Mention, MentionKind, mention_in

    assert mention_in(Mention(name, MentionKind.NAME, 0, len(name)), evidence) is found


def _dates_found(claim_text: str, evidence: str) -> list[str]:
    return _found(claim_text, evidence, "date")


@pytest.mark.parametrize(
    ("claimed", "stated"),
    [
        ("November 10, 2018", "Saturday Nov 10, 2018 at 4:14 PM"),
        ("18 October 2018", "on Oct. 18, 2018"),
        ("May 7, 2018", "on May 7th, 2018"),
        ("March 2018", "on 3 March 2018"),
        ("November", "on Nov. 3, 2018"),
    ],
)
def test_a_date_reads_the_same_in_the_facts_and_the_mention_lookup(
    claimed: str, stated: str
) -> None:
    """The mention lookup (fabricated facts, the calibration's missing specifics) reads a date
    as the value comparison does: "November 10, 2018" is stated by "Nov 10, 2018"."""
    from guardrail.text.values import parse_date, stated_date

    claim = f"It was announced on {claimed}."
    if stated_date(claimed)[0] == "date":  # type: ignore[index]
        assert parse_date(claimed) is not None
    assert _dates_found(claim, f"The note says it happened {stated}.") == [claimed]


@pytest.mark.parametrize(
    ("claimed", "stated"),
    [
        ("November 11, 2018", "Nov 10, 2018"),
        ("March 3, 2018", "in March 2018"),  # the evidence states no day
        ("19 October 2018", "Oct. 18, 2018"),
        ("December", "on Nov. 3, 2018"),
    ],
)
def test_a_different_or_more_precise_date_is_not_found(claimed: str, stated: str) -> None:
    assert _dates_found(f"It was announced on {claimed}.", f"It happened {stated}.") == []


def test_a_date_told_without_its_year_is_found_in_a_text_of_that_year() -> None:
    evidence = "Posted February 22, 2011. The title fight is set for April 9th in Albuquerque."
    assert _dates_found("The rematch was on April 9, 2011.", evidence) == ["April 9, 2011"]
    assert _dates_found("The rematch was on April 9, 2012.", evidence) == []
    # a month and day written with another year is that year's date
    assert _dates_found("It was on April 9, 2011.", "April 9, 2012 and 2011.") == []


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("On 12 July, he left.", ("12 July", (None, 7, 12))),
        ("On July 12th he left.", ("July 12th", (None, 7, 12))),
        ("On the 5th of May he left.", ("5th of May", (None, 5, 5))),
        ("On 12 July 2019 he left.", ("12 July 2019", (2019, 7, 12))),
    ],
)
def test_a_day_of_a_month_is_one_date_for_every_reader(
    text: str, read: tuple[str, tuple[int | None, ...]]
) -> None:
    """The mention scan (flags, lookups) and the region's value reader read a day of a month
    as one date, without its year when none is written."""
    from guardrail.hallucination.value_reading import values_in
    from guardrail.text.mentions import MentionKind, find_mentions
    from guardrail.text.values import stated_date

    [mention] = [m for m in find_mentions(text) if m.kind is MentionKind.DATE]
    assert (mention.text, stated_date(mention.text)) == (read[0], ("date", read[1]))
    [value] = values_in(text)
    assert (value.mention.text, value.date) == (read[0], ("date", read[1]))
    assert not [m for m in find_mentions(text) if m.kind is MentionKind.NUMBER]


def test_a_pages_timestamp_states_its_date() -> None:
    assert _dates_found("It stays open (June 2018).", "DATETIME: 2018-06-30T07:00:00Z") == [
        "June 2018"
    ]


@pytest.mark.parametrize(
    ("stated", "found"), [("2018-2019", True), ("2018–19", True), ("2017-18", False)]
)
def test_a_year_range_written_short_reads_its_second_year(stated: str, found: bool) -> None:
    claim = "It runs in the 2018–19 season."
    assert (_found(claim, f"It runs in the {stated} season.") == ["19"]) is found


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("A file may seem to hang.", []),
        ("Troops march on the city.", []),
        ("It opened in may.", ["may"]),
        ("It opened in May.", ["May"]),
        ("It opened May 2, 2020.", ["May 2, 2020"]),
    ],
)
def test_may_and_march_as_verbs_are_no_dates(text: str, dates: list[str]) -> None:
    from guardrail.text.mentions import MentionKind, find_mentions

    assert [m.text for m in find_mentions(text) if m.kind is MentionKind.DATE] == dates


@pytest.mark.parametrize(("text", "year"), [("1000", True), ("2099", True), ("2100", False)])
def test_one_year_range_for_dates_and_mentions(text: str, year: bool) -> None:
    from guardrail.text.mentions import MentionKind, find_mentions, years
    from guardrail.text.values import parse_date

    assert (parse_date(text) is not None) is year
    assert (years(text) == [text]) is year
    [mention] = find_mentions(f"in {text}")
    assert (mention.kind is MentionKind.DATE) is year


def test_one_month_table_for_dates_and_mentions() -> None:
    from guardrail.text.mentions import MentionKind, find_mentions
    from guardrail.text.values import MONTHS, stated_date

    for name, number in MONTHS.items():
        [mention] = find_mentions(f"on {name.title()} 3, 2020")
        assert mention.kind is MentionKind.DATE
        assert stated_date(mention.text) == ("date", (2020, number, 3))


def test_one_cjk_character_class_for_sentences_and_mentions() -> None:
    from guardrail.text.mentions import find_mentions
    from guardrail.text.sentences import cjk_count

    text = "由Google开发，今年18岁。"
    assert cjk_count(text) == 6
    assert [m.text for m in find_mentions(text)] == ["Google", "18"]


SEGMENTED = [
    "Dr. Smith paid $3.50. He left.",
    "The U.S. economy grew. It was 2020 e.g. in March.",
    'He said "yes." Then he left.',
    "I met him at 3 p.m. today. We talked for 2.5 hours.",
    "他是医生。她是老师！Who knows?",
    "Mr. J. K. Rowling wrote it. It sold 5 million copies!",
]


def _streamed(tokens: list[str]) -> list[tuple[int, int]]:
    """The sentences streaming checks as ``tokens`` arrive one by one."""
    from guardrail.text.segmentation import completed_sentences

    text, done, out = "", 0, []
    for i, token in enumerate(tokens):
        text += token
        found = completed_sentences(text[done:], final=i == len(tokens) - 1)
        out += [(done + s.start, done + s.end) for s in found]
        if found:
            done += found[-1].end
    return out


def _trailing_spaces(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + " " for p in parts[:-1]] + [parts[-1]]


def _leading_spaces(text: str) -> list[str]:
    parts = text.split(" ")
    return [parts[0]] + [" " + p for p in parts[1:]]


def _digits_apart(text: str) -> list[str]:
    """Words with a leading space, each digit and each dot after a digit a token of its own
    (``3``, ``.``, ``50``): a decimal arrives in pieces."""
    import re

    return [t for t in re.split(r"(?<=\d)(?=\.)|(?<=\.)(?=\d)|(?= )", text) if t]


@pytest.mark.parametrize("text", SEGMENTED)
@pytest.mark.parametrize("tokenise", [_trailing_spaces, _leading_spaces, _digits_apart])
def test_streaming_checks_the_claim_sentences(text: str, tokenise: Any) -> None:
    """Streaming completes exactly the claim splitter's sentences, whichever way the tokens
    cut the text (words with their space, a decimal in pieces). (A closing quote streamed as a
    token of its own after the end punctuation is not part of its sentence: the sentence was
    checked when its end punctuation arrived.)"""
    from guardrail.text.sentences import split_sentences

    tokens = tokenise(text)
    assert "".join(tokens) == text
    assert _streamed(tokens) == [(s.start, s.end) for s in split_sentences(text)]


@pytest.fixture(scope="module")
def nlp():  # type: ignore[no-untyped-def]
    from guardrail.nlp import load_spacy

    return load_spacy()


@pytest.mark.parametrize("text", SEGMENTED)
def test_a_removal_takes_exactly_the_claim_sentence_where_the_splitters_agree(
    nlp, text: str
) -> None:  # type: ignore[no-untyped-def]
    from guardrail.text.segmentation import removal_range, sentence_ranges
    from guardrail.text.sentences import split_sentences

    ranges = sentence_ranges(nlp(text))
    claims = [(s.start, s.end) for s in split_sentences(text)]
    assert [removal_range(ranges, claim) for claim in claims] == claims


def test_a_removal_covers_the_claim_where_the_parser_cuts_elsewhere(nlp) -> None:  # type: ignore[no-untyped-def]
    from guardrail.text.segmentation import removal_range, sentence_ranges
    from guardrail.text.sentences import split_sentences

    text = "Items:\n- one item\n- two items that run on"
    ranges = sentence_ranges(nlp(text))
    for claim in split_sentences(text):
        start, end = removal_range(ranges, (claim.start, claim.end))
        assert start <= claim.start and claim.end <= end
    # a claim no parsed sentence holds is removed alone
    assert removal_range([(0, 5)], (8, 12)) == (8, 12)
    # a parsed sentence ending inside the claim is widened to the claim's end
    assert removal_range([(0, 10), (10, 20)], (5, 15)) == (0, 15)


def test_a_claims_mentions_are_parsed_once_for_every_check_that_reads_them() -> None:
    from dataclasses import dataclass as _dataclass

    from guardrail.text.mentions import MentionKind, find_mentions

    @_dataclass(frozen=True)
    class _Ent:
        text: str
        label_: str
        start_char: int
        end_char: int

    calls: list[str] = []

    class _Parser:
        """A parser as the check hands one over: it keeps the mentions of the texts it read."""

        def __init__(self) -> None:
            self.mentions: dict[str, object] = {}

        def __call__(self, text: str) -> object:
            calls.append(text)
            at = text.find("Acme")
            ents = [_Ent("Acme", "ORG", at, at + 4)] if at >= 0 else []
            return type("Doc", (), {"ents": ents})

    parse = _Parser()
    text = "Acme hired 40 engineers in Lyon on 3 May 2021 (parse-once test)."
    first = find_mentions(text, parse)
    again = find_mentions(text, parse)
    assert first == again and calls == [text]
    assert ("Acme", MentionKind.NAME) in [(m.text, m.kind) for m in first]
    again.clear()  # a caller's list is its own
    assert find_mentions(text, parse) == first


def test_the_checks_parser_keeps_mentions_for_one_check_only() -> None:
    from guardrail.stages.hallucination import EntityParser
    from guardrail.text.mentions import find_mentions

    piped: list[str] = []

    class _Nlp:
        pipe_names: tuple[str, ...] = ()

        def pipe(self, texts: list[str], disable: list[str]) -> list[object]:
            piped.extend(texts)
            return [type("Doc", (), {"ents": []}) for _ in texts]

    text = "The plant opened in 2019 with 40 staff."
    first = EntityParser(_Nlp())
    assert find_mentions(text, first) == find_mentions(text, first)
    assert piped == [text] and text in first.mentions
    second = EntityParser(_Nlp())  # the next check starts empty: nothing shared between checks
    assert second.mentions == {}
    find_mentions(text, second)
    assert piped == [text, text]
