"""Sentence segmentation: the two splitters every check uses, and the one mapping between them.

- **The claim splitter**, :func:`~guardrail.text.sentences.split_sentences` (rules, any script):
  claims are its sentences, and streaming checks a sentence once :func:`completed_sentences`
  says the splitter will not cut it differently when more text arrives.
- **The parsed sentences**, :func:`parsed_sentences`: spaCy's ``doc.sents`` of the parsed
  response, which the checks that read syntax walk (coherence, knowledge-base claims,
  grammar). :func:`sentence_ranges` gives the parsed response's sentences as character ranges,
  the claim splitter's for text with CJK characters (the English pipeline does not split at
  ``。！？``); removals cut those.

The mapping: a claim (a span of the claim splitter) is removed as :func:`removal_range` says —
the parsed sentence holding the claim's start, widened to the claim's end — so a removal always
takes the whole claim, even where spaCy cuts the text elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from guardrail.text.sentences import Sentence, cjk_count, split_sentences

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span


def parsed_sentences(doc: Doc) -> Iterator[Span]:
    """The sentences (spaCy ``Span`` objects) of a parsed text, as its parser cut them."""
    sents: Iterator[Span] = doc.sents
    return sents


def sentence_ranges(doc: Any) -> list[tuple[int, int]]:
    """The sentences of the parsed response as ``(start, end)``: spaCy's, except for text with
    CJK characters, which the English pipeline does not split at ``。！？``: there the claim
    splitter's (:func:`~guardrail.text.sentences.split_sentences`)."""
    text: str = doc.text
    if cjk_count(text):
        return [(s.start, s.end) for s in split_sentences(text)]
    return [(s.start_char, s.end_char) for s in parsed_sentences(doc)]


def holds(sentence: tuple[int, int], position: int) -> bool:
    """Whether the sentence ``[start, end)`` holds the character at ``position``."""
    return sentence[0] <= position < sentence[1]


def removal_range(sentences: Sequence[tuple[int, int]], span: tuple[int, int]) -> tuple[int, int]:
    """What removing the claim ``span`` removes: the sentence of ``sentences`` (from
    :func:`sentence_ranges`) holding its start, widened to the claim's end; the claim alone when
    no sentence holds it. The result always covers ``span``.

    Example::

        >>> removal_range([(0, 9), (10, 20)], (10, 15)), removal_range([(0, 9)], (5, 12))
        ((10, 20), (0, 12))
    """
    sentence = next((s for s in sentences if holds(s, span[0])), span)
    return min(sentence[0], span[0]), max(sentence[1], span[1])


def ends_sentence(text: str, spaced: bool) -> bool:
    """Whether ``text`` (a sentence so far) already ends a sentence, without look-ahead.

    Asks the claim splitter whether a following capitalised word would start a new sentence
    (so ``Dr.`` and ``e.g.`` do not end one). A dot right after a digit waits for the next
    token (``3.`` may become ``3.5``) unless whitespace already follows it (``spaced``).
    """
    stripped = text.rstrip()
    if not stripped:
        return False
    if not spaced and stripped.endswith(".") and stripped[-2:-1].isdigit():
        return False
    parts = split_sentences(stripped + " Then")
    return len(parts) > 1 and parts[0].end >= len(stripped)


def completed_sentences(text: str, final: bool) -> list[Sentence]:
    """The claim splitter's sentences of ``text`` (a stream so far) that more text cannot
    change: all of them when the stream has ended (``final``), else all but a last one that
    :func:`ends_sentence` does not close."""
    parts = split_sentences(text)
    if parts and not final and not ends_sentence(parts[-1].text, text[parts[-1].end :] != ""):
        parts = parts[:-1]
    return parts
