"""One text layer: the rules about text that several checks share read the same everywhere.

Each test pins one shared rule against a second reader of it: the annotation marker (correction
and streaming), the CJK character class, numbers and dates (value comparison and the
hallucination flags), and the sentence segmentation (claims, removals and streaming).
"""

from __future__ import annotations

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


def _flagged_numbers(claim_text: str, evidence: str) -> list[str]:
    """The specifics of ``claim_text`` the hallucination flags find in no known text."""
    from guardrail.hallucination.flags import nonexistent_entity_flags
    from guardrail.report import Claim

    claim = Claim(text=claim_text, span=Span(start=0, end=len(claim_text)))
    flags = nonexistent_entity_flags(claim_text, claim, 0, [evidence])
    return [claim_text[f.span.start : f.span.end] for f in flags]


@pytest.mark.parametrize(
    ("claimed", "stated"),
    [
        ("5 million", "$5m"),
        ("$5m", "5 million"),
        ("85,000", "85k"),
        ("85k", "85 thousand"),
        ("5 million", "5,000,000"),
    ],
)
def test_a_number_reads_the_same_in_the_facts_and_the_flags(claimed: str, stated: str) -> None:
    from guardrail.text.values import compare_values

    assert compare_values(claimed, stated).matches
    assert _flagged_numbers(f"Revenue was {claimed} in 2020.", f"It made {stated} in 2020.") == []


@pytest.mark.parametrize(
    ("claimed", "stated"),
    [("5 million", "$5 billion"), ("5%", "5 people"), ("85k", "86,000")],
)
def test_a_different_number_differs_in_the_facts_and_the_flags(claimed: str, stated: str) -> None:
    from guardrail.text.values import compare_values

    assert not compare_values(claimed, stated).matches
    assert _flagged_numbers(f"Revenue was {claimed} in 2020.", f"It made {stated} in 2020.")


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
