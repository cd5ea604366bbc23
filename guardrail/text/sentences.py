"""Sentence splitting with character spans, for English-like scripts and CJK.

Rules, in order:

- ``。！？`` (and ``!?`` full-width forms) always end a sentence, closing quotes and brackets
  after them included; no whitespace is needed after them.
- ``. ! ? …`` end a sentence only when followed by whitespace (or the end of the text) and the
  next word does not start with a lower-case letter (``"Is it?" she asked`` stays whole).
- A ``.`` does not end a sentence after a known abbreviation (``Dr.``, ``e.g.``, ``Inc.``), a
  single-letter initial (``J. K. Rowling``), a dotted acronym (``U.S.``) or a list number at the
  start of a line (``1.``). Decimals (``3.14``) never split because no whitespace follows.
- A blank line, or a line break before a list item (``-``, ``*``, ``•``, ``1.``, ``2)``, ``a)``, ``(b)``),
  ends a sentence; the list marker is not part of the item's span.

Example::

    >>> [s.text for s in split_sentences("Dr. Smith paid $3.50. He left.")]
    ['Dr. Smith paid $3.50.', 'He left.']
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

#: Abbreviations (lower case, without the final dot) after which a dot does not end a sentence.
ABBREVIATIONS: frozenset[str] = frozenset(
    """mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al approx dept est fig figs no nos
    vol vols ed eds inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec mon tue
    wed thu fri sat sun gen col lt sgt capt rev hon pp p ca op a.m p.m u.s u.k u.n ph.d v c""".split()
)

CJK_TERMINATORS = "。！？!?"
"""Sentence ends in CJK text (full-width forms)."""
CLOSERS = "\"'”’»）)]}」』】"
"""Closing quotes and brackets that belong to the sentence they follow."""
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*•·▪–]|\d{1,3}[.)]|\(?[a-z]\)|\(\d{1,3}\))[ \t]+")
CJK_CHARACTER = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
"""The CJK character class (kana, CJK ideographs, Hangul syllables, compatibility ideographs):
the one definition every text rule uses."""
_CJK = re.compile(CJK_CHARACTER)


@dataclass(frozen=True)
class Sentence:
    """A sentence and its half-open character span ``[start, end)`` in the source text."""

    text: str
    start: int
    end: int


def cjk_count(text: str) -> int:
    """Number of CJK (Chinese, Japanese, Korean) characters in ``text``."""
    return len(_CJK.findall(text))


def display_length(text: str) -> int:
    """Length with CJK characters counted twice (a CJK character carries about a word)."""
    return len(text) + cjk_count(text)


_SPACED_DECIMAL = re.compile(r" \d{1,2}(?:\s|%|$)")
"""After "98." (at most three digits, not a year): one space and the decimal's one or two
digits, as a tokeniser writes "98.7" ("98. 7 per cent")."""


def _previous_token(text: str, dot: int) -> str:
    start = dot
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "(\"'“‘":
        start -= 1
    return text[start:dot]


def _dot_ends_sentence(text: str, dot: int) -> bool:
    token = _previous_token(text, dot)
    if not token:
        return True
    low = token.lower()
    if low in ABBREVIATIONS:
        return False
    if len(token) == 1 and token.isalpha() and token.isupper():
        return False  # an initial: "J. K. Rowling"
    if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", token):
        return False  # a dotted acronym: "U.S." (its last dot is ``dot``)
    if len(token) <= 3 and token.isdigit() and _SPACED_DECIMAL.match(text, dot + 1):
        return False  # a decimal a tokeniser spaced out: "98. 7 per cent", "1. 3 billion"
    line_start = text.rfind("\n", 0, dot) + 1
    return not (token.isdigit() and not text[line_start : dot - len(token)].strip())


def _boundaries(text: str) -> list[int]:
    """End offsets (exclusive) of sentences, before trimming."""
    ends: list[int] = []
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch in "。！？" or (ch in "!?" and i + 1 < n and not text[i + 1].isspace()):
            if ch in CJK_TERMINATORS:
                j = i + 1
                while j < n and text[j] in CJK_TERMINATORS:
                    j += 1
                while j < n and text[j] in CLOSERS:
                    j += 1
                if ch in "。！？" or (j < n and _CJK.match(text[j])):
                    ends.append(j)
                    i = j
                    continue
        if ch in ".!?…":
            j = i + 1
            while j < n and text[j] in ".!?…":
                j += 1
            while j < n and text[j] in CLOSERS:
                j += 1
            if j >= n or text[j].isspace():
                k = j
                while k < n and text[k].isspace():
                    k += 1
                next_lower = k < n and text[k].islower()
                is_dot = text[i:j].rstrip(CLOSERS) == "."
                if not next_lower and (not is_dot or _dot_ends_sentence(text, i)):
                    ends.append(j)
            i = j
            continue
        if ch == "\n":
            k = i + 1
            if (k < n and text[k] == "\n") or _LIST_MARKER.match(text, k):
                ends.append(i)
        i += 1
    ends.append(n)
    return ends


def split_sentences(text: str) -> list[Sentence]:
    """Split ``text`` into sentences with spans; list markers and outer whitespace excluded."""
    return list(_split_cached(text))


@functools.lru_cache(maxsize=1024)
def _split_cached(text: str) -> tuple[Sentence, ...]:
    """:func:`split_sentences`, once per text (evidence windows are split for every claim)."""
    return tuple(_split(text))


def _split(text: str) -> list[Sentence]:
    out: list[Sentence] = []
    start = 0
    for end in _boundaries(text):
        if end <= start:
            continue
        s, e = start, end
        while s < e and text[s].isspace():
            s += 1
        marker = _LIST_MARKER.match(text, s)
        if marker and (s == 0 or text[s - 1] == "\n") and marker.end() < e:
            s = marker.end()
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append(Sentence(text=text[s:e], start=s, end=e))
        start = end
    return out


def split_at_terminators(
    text: str, terminators: str = ".!?", at_newlines: bool = False
) -> list[str]:
    """Cut ``text`` after each of ``terminators`` followed by whitespace (and, with
    ``at_newlines``, at every run of line breaks); blank pieces are dropped.

    Not the sentence splitter (:func:`split_sentences` is): no abbreviation, initial, list or
    CJK rule, so ``Dr. Smith`` is cut. It is the rule the benchmarks' published passages and
    premises were cut with (the decisions data with the defaults, the verifier data with
    ``".!?。！？"`` and ``at_newlines``; docs: the Benchmarks page, "How the benchmark data is cut
    into sentences"), kept so those figures stay comparable: :func:`split_sentences` would change the passages of 328 of the
    decisions benchmark's 1,846 items and the premises of 5,188 of the verifier benchmark's
    13,375 binary items.

    Example::

        >>> split_at_terminators("Dr. Smith paid. He left.")
        ['Dr.', 'Smith paid.', 'He left.']
    """
    pattern = rf"(?<=[{re.escape(terminators)}])\s+" + (r"|\n+" if at_newlines else "")
    return [piece for piece in re.split(pattern, text) if piece.strip()]


def split_before_capitals(text: str, no_cut_after: re.Pattern[str] | None = None) -> list[str]:
    """Cut ``text`` (stripped) after ``.!?`` + whitespace when the next character is a capital
    (``A-Z``), a digit, ``"`` or ``(``; while the text so far matches ``no_cut_after`` (an
    abbreviation at its end, say) the next piece is joined to it with one space.

    Not the sentence splitter either (:func:`split_sentences` is): ASCII capitals only, and
    the caller's abbreviation pattern instead of :data:`ABBREVIATIONS`. It is the rule the
    hard training pairs are cut with (``guardrail.verifiers.training.hardgen``, with its own
    abbreviation pattern), kept so that a seed regenerates the same file.

    Example::

        >>> split_before_capitals("Dr. Smith paid. he left. Then 3 more came.")
        ['Dr.', 'Smith paid. he left.', 'Then 3 more came.']
        >>> split_before_capitals("Dr. Smith paid.", re.compile(r"\\bDr\\.$"))
        ['Dr. Smith paid.']
    """
    out: list[str] = []
    current = ""
    for piece in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"(])", text.strip()):
        if not piece:
            continue  # only an empty text gives an empty piece
        current = f"{current} {piece}" if current else piece
        if no_cut_after is None or not no_cut_after.search(current):
            out.append(current)
            current = ""
    if current:
        out.append(current)
    return out
