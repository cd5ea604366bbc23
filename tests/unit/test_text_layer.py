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
