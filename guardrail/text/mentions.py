"""Names, numbers, dates and times mentioned in a text, with spans; and lookups in evidence.

Dates, times and numbers come from regular expressions (they work in any script, with a CJK
character next to a mention counting as a word boundary: ``2021年``, ``由Google开发``); names
come from a spaCy pipeline when one is given (English), else from capitalisation
(``AlphaCodium``, ``Google`` in mid-sentence, ``LLM``). Text with no capital letters (most CJK
text) gives no names, so it raises no name flags: a Chinese name is neither found nor flagged.

Example::

    >>> [(m.kind.value, m.text) for m in find_mentions("Google released it in 2024.")]
    [('name', 'Google'), ('date', '2024')]
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from guardrail.text.sentences import CJK_CHARACTER
from guardrail.text.spans import overlaps_any
from guardrail.text.values import (
    CURRENCY_SIGNS,
    MONTHS,
    YEAR_PATTERN,
    StatedNumber,
    stated_date,
    stated_number,
    word_number,
)


class MentionKind(StrEnum):
    """What a mention is."""

    NAME = "name"
    NUMBER = "number"
    DATE = "date"
    """A year, a calendar date, a month or a weekday."""
    TIME = "time"
    """A clock time (``2pm``, ``14:30``)."""


@dataclass(frozen=True)
class Mention:
    """A mention and its span ``[start, end)`` in the text it was found in."""

    text: str
    kind: MentionKind
    start: int
    end: int

    @property
    def key(self) -> str:
        """Normalised form used to compare mentions (lower case, no spaces or commas)."""
        return normalise(self.text)


# A CJK character is a word boundary for the patterns below, though ``\b`` sees none (CJK
# characters are word characters), so ``由Google开发`` and ``今年18岁`` give their mentions.
_START = rf"(?:\b|(?<={CJK_CHARACTER}))"
_END = rf"(?:\b|(?={CJK_CHARACTER}))"

_MONTHS = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + ")"
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_DAY = r"(?:3[01]|[12]\d|0?[1-9])"
_DATE_PATTERNS = [
    rf"\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b",
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\.?,?\s+\d{{4}}\b",
    r"\b\d{4}-\d{1,2}-\d{1,2}(?:\b|(?=T\d))",  # 2018-06-30T07:00 (a page's timestamp)
    r"\b\d{1,2}/\d{1,2}/\d{2,4}\b",
    r"\d{4}\s*年(?:\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*日)?)?",
    rf"\b{_MONTHS}\.?\s+\d{{4}}\b",
    # a day of a month without a year: "18 October", "the 5th of May", "November 9th"
    rf"\b{_DAY}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b\.?",
    rf"\b{_MONTHS}\.?\s+{_DAY}(?:st|nd|rd|th)?\b(?![:.]?\d)",
    rf"{_START}{YEAR_PATTERN}s?{_END}",
    rf"\b{_MONTHS}\b(?=\s|[.,;]|$)",
    rf"\b{_WEEKDAYS}\b",
]
_TIME_PATTERN = (
    rf"\b\d{{1,2}}(?::\d{{2}})?\s*(?:[ap]\.?m\.?)(?![a-z])|{_START}\d{{1,2}}:\d{{2}}{_END}"
)
_NUMBER_PATTERN = rf"(?:(?<![\w.])|(?<={CJK_CHARACTER}))[-+]?\d[\d,]*(?:\.\d+)?\s*(?:%|percent\b)?|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|hundred|thousand|million|billion)\b"
_DATE = re.compile("|".join(f"(?:{p})" for p in _DATE_PATTERNS), re.IGNORECASE)
_TIME = re.compile(_TIME_PATTERN, re.IGNORECASE)
_NUMBER = re.compile(_NUMBER_PATTERN, re.IGNORECASE)
_CAPITALISED = re.compile(
    rf"{_START}(?:[A-Z][a-z]*[A-Z][A-Za-z]*|[A-Z]{{2,}}[a-z]?|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*){_END}"
)
_NAME_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "PRODUCT", "NORP", "FAC", "EVENT", "WORK_OF_ART", "LAW"}
)
_STOP_CAPITALS = frozenset(
    "I The A An It He She They We You This That These Those There Here His Her Its Their Our "
    "My Your In On At For And But Or If When While Yes No Not".split()
)
_YEAR = re.compile(YEAR_PATTERN)


_SPACES_COMMAS = re.compile(r"[\s,]+")


@functools.lru_cache(maxsize=4096)
def normalise(text: str) -> str:
    """Lower case without whitespace, commas and trailing dots (``"3,000 "`` → ``"3000"``)."""
    return _SPACES_COMMAS.sub("", text.lower()).rstrip(".")


def same_stem(a: str, b: str) -> bool:
    """A demonym and its place, or two forms of one name: ``German`` / ``Germany``,
    ``Chinese`` / ``China``, ``Canadian`` / ``Canada`` (a shared start of 4+ letters covering
    most of the shorter word)."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= 4 and n >= 0.7 * min(len(a), len(b))


def years(text: str) -> list[str]:
    """The four-digit years in ``text`` (:data:`~guardrail.text.values.YEAR_PATTERN`), in order."""
    return _YEAR.findall(text)


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in '.!?。！？:\n"“'


def find_mentions(text: str, nlp: Any = None) -> list[Mention]:
    """Dates, times, numbers and names in ``text`` (non-overlapping, in order).

    Args:
        text: the text to scan.
        nlp: an optional spaCy ``Language``; its entities give the names. A parser with a
            ``mentions`` dict (the hallucination check's per-check
            :class:`~guardrail.stages.hallucination.EntityParser`) keeps each text's mentions
            there: a claim's mentions are read by several checks, and are found once.
    """
    if nlp is None:  # the same evidence text is scanned for every claim: once is enough
        return list(_rule_mentions(text))
    cache = getattr(nlp, "mentions", None)
    if not isinstance(cache, dict):
        return _scan(text, nlp)
    if text not in cache:
        cache[text] = tuple(_scan(text, nlp))
    return list(cache[text])


@functools.lru_cache(maxsize=256)
def _rule_mentions(text: str) -> tuple[Mention, ...]:
    return tuple(_scan(text, None))


@functools.lru_cache(maxsize=256)
def _flat(evidence: str) -> str:
    return normalise(evidence)


_VERB_MONTHS = frozenset({"may", "march"})
_BEFORE_A_MONTH = re.compile(
    r"\b(?:in|on|of|since|until|till|by|from|through|to|early|late|mid|last|next|this|each|every)"
    r"\s*$",
    re.IGNORECASE,
)


_DAY_AND_VERB = re.compile(r"\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:may|march)\.?")


def _verb_not_month(text: str, m: re.Match[str]) -> bool:
    """A lower-case "may" or "march" alone, or after a number ("the 5 may apply"), is a verb
    ("a file may seem to hang"), not a month, unless a word that leads a month stands before
    it ("in may", "on 5 may", "since march")."""
    found = m.group(0)
    verb = found in _VERB_MONTHS or _DAY_AND_VERB.fullmatch(found) is not None
    return verb and not _BEFORE_A_MONTH.search(text, 0, m.start())


def _scan(text: str, nlp: Any) -> list[Mention]:
    found: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, kind: MentionKind) -> None:
        raw = text[start:end]
        stripped = raw.rstrip(" .,")
        end = start + len(stripped)
        if end > start and not overlaps_any((start, end), taken):
            found.append(Mention(text[start:end], kind, start, end))
            taken.append((start, end))

    for m in _DATE.finditer(text):
        if _verb_not_month(text, m):
            continue
        add(m.start(), m.end(), MentionKind.DATE)
    for m in _TIME.finditer(text):
        add(m.start(), m.end(), MentionKind.TIME)
    for m in _NUMBER.finditer(text):
        add(m.start(), m.end(), MentionKind.NUMBER)
    if nlp is not None:
        for ent in nlp(text).ents:
            if ent.label_ in _NAME_LABELS:
                add(ent.start_char, ent.end_char, MentionKind.NAME)
    for m in _CAPITALISED.finditer(text):
        word = m.group(0)
        first = word.split()[0]
        inner_capital = any(ch.isupper() for ch in word[1:])
        if first in _STOP_CAPITALS and not inner_capital:
            continue
        if _sentence_initial(text, m.start()) and not inner_capital and nlp is None:
            continue
        if nlp is not None and not inner_capital:
            continue  # spaCy already judged plain capitalised words
        add(m.start(), m.end(), MentionKind.NAME)
    return sorted(found, key=lambda x: x.start)


def mention_in(
    mention: Mention, evidence: str, name_ratio: float = 90.0, text: str | None = None
) -> bool:
    """Whether ``mention`` occurs in ``evidence`` (numbers and dates exactly, names fuzzily).

    With ``text`` (the text ``mention`` was found in), a number also occurs when the evidence
    states its value in another scale, as :func:`~guardrail.text.values.stated_number` reads
    both (``5 million`` in a claim, ``$5m`` in the evidence; see :func:`number_in`). A name
    also occurs when each of its capitalised words is one of the evidence's (:func:`_composed_of`).
    """
    key = mention.key
    flat = _flat(evidence)  # one evidence text is searched for every mention of every claim
    if mention.kind is not MentionKind.NAME:
        if key in flat:
            # A number must match a whole number, not a digit run inside another one.
            pattern = r"(?<![\d.])" + re.escape(key) + r"(?![\d])"
            if re.search(pattern, flat) is not None:
                return True
        if mention.kind is MentionKind.DATE:
            return date_in(mention.text, evidence)
        if text is not None and mention.kind is MentionKind.NUMBER:
            year = _abbreviated_year(text, mention)
            if year is not None:
                return re.search(rf"(?<!\d){year}(?!\d)", evidence) is not None
            return number_in(text, mention, evidence)
        return False
    if key in flat:
        return True
    from rapidfuzz import fuzz

    if fuzz.partial_ratio(mention.text.lower(), evidence.lower()) >= name_ratio:
        return True
    return COMPOSED_NAMES and _composed_of(mention.text, evidence)


COMPOSED_NAMES = True
"""A name the tagger ran together from names of the evidence, or with a function word before
it, occurs (:func:`_composed_of`); chosen on the one-fact-edit benchmark's dev split."""

_NAME_TOKEN = re.compile(r"(?:[^\W\d_]\.){2,}|[^\W_]+")
"""A word of a name: an acronym with dots ("A.V."), else a run of letters and digits ("R0")."""
_JOINING_WORDS = frozenset({"of", "the", "and", "de", "for", "a", "an"})


def _composed_of(name: str, evidence: str) -> bool:
    """Whether every capitalised word of ``name`` (but a function word: "When Dre", "The R0 of
    Ebola") is a capitalised word of ``evidence``, or shares its stem with one (a demonym,
    :func:`same_stem`): a name the tagger ran together from the evidence's own names ("named
    Germany Allemagne", "the United States Supreme Court" where the evidence gives "the Supreme
    Court" of "the United States"), not one it lacks a word of ("The A.V. Club" against "the AV
    Club"; "Lady Marina Windsor" where no "Marina" is capitalised)."""
    words = [
        w
        for w in _NAME_TOKEN.findall(name)
        if w[:1].isupper() and w not in _STOP_CAPITALS and w.lower() not in _JOINING_WORDS
    ]
    by_start = _capitalised_tokens(evidence)
    return bool(words) and all(
        any(w.lower() == t or same_stem(w, t) for t in by_start.get(w[:4].lower(), ()))
        for w in words
    )


@functools.lru_cache(maxsize=256)
def _capitalised_tokens(evidence: str) -> dict[str, frozenset[str]]:
    """The capitalised words of ``evidence`` (:data:`_NAME_TOKEN`), lower-cased, by their first
    four letters: a word can share a stem only with a word of the same first four
    (:func:`same_stem`), and one of three letters or fewer is only itself."""
    out: dict[str, set[str]] = {}
    for w in _NAME_TOKEN.findall(evidence):
        if w[:1].isupper():
            out.setdefault(w[:4].lower(), set()).add(w.lower())
    return {k: frozenset(v) for k, v in out.items()}


@functools.lru_cache(maxsize=256)
def _evidence_dates(evidence: str) -> tuple[tuple[str, tuple[int | None, ...]], ...]:
    return tuple(
        read
        for m in _rule_mentions(evidence)
        if m.kind is MentionKind.DATE and (read := stated_date(m.text)) is not None
    )


_RANGE_START = re.compile(rf"({YEAR_PATTERN})\s*[-–—/]\s*$")


def _abbreviated_year(text: str, mention: Mention) -> str | None:
    """The year a two-digit number after a year and a dash stands for ("2018–19": 2019)."""
    if not re.fullmatch(r"\d{2}", mention.text):
        return None
    start = _RANGE_START.search(text, 0, mention.start)
    if start is None:
        return None
    first = start.group(1)
    year = first[:2] + mention.text
    return year if int(year) > int(first) else None


def date_in(date: str, evidence: str) -> bool:
    """Whether ``evidence`` states the date ``date`` in any of the forms
    :func:`~guardrail.text.values.stated_date` reads ("November 10, 2018" is "Nov 10, 2018"
    and "10 November 2018"): a date of the evidence with every part the claimed one states (a
    month and year is in "Nov 10, 2018"; a full date is not in "November 2018"), or, for a
    month alone, a date in that month."""
    claimed = stated_date(date)
    if claimed is None:
        return False
    granularity, parts = claimed
    for kind, stated in _evidence_dates(evidence):
        if granularity == "month" and kind == "date":
            if stated[1] == parts[0]:
                return True
        elif kind == granularity and all(
            c is None or c == s for c, s in zip(parts, stated, strict=True)
        ):
            return True
        elif (
            kind == granularity == "date"
            and None not in parts
            and stated[0] is None
            and stated[1:] == parts[1:]
            and str(parts[0]) in years(evidence)
        ):
            return True  # "April 9, 2011" told as "on April 9th" in a text of that year
    return False


_SCALE_WORD = re.compile(r"thousand|million|billion", re.IGNORECASE)
_DIGITS_BEFORE = re.compile(r"\d[\d,]*(?:\.\d+)?\s*$")


def number_value(text: str, mention: Mention) -> StatedNumber | None:
    """The value of the number ``mention`` of ``text``, read by
    :func:`~guardrail.text.values.stated_number` (``$5m`` and ``5 million``: 5,000,000). A scale
    word right after digits is part of that number (``million`` in ``5 million`` reads 5,000,000,
    not 1,000,000)."""
    read = _read(text, mention)
    return read[0] if read is not None else None


def _read(text: str, mention: Mention) -> tuple[StatedNumber, bool] | None:
    """:func:`number_value`, and whether a scale is part of it (``5 million``, ``$5m``,
    ``85k``: its digits alone are not its value)."""
    if mention.kind is not MentionKind.NUMBER:
        return None
    number, start = mention.text, mention.start
    if _SCALE_WORD.fullmatch(mention.text):
        digits = _DIGITS_BEFORE.search(text, 0, mention.start)
        if digits is not None:
            number, start = digits.group(0).rstrip(), digits.start()
    end = start + len(number)
    read = stated_number(text, number, start, end)
    if read is None:
        return None
    bare = stated_number(text[:end], number, start, end)  # without what follows: no scale
    return read, bare is not None and not _equal(bare.value, read.value)


def _equal(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


@functools.lru_cache(maxsize=256)
def _evidence_numbers(evidence: str) -> tuple[tuple[Mention, float | None], ...]:
    """The number mentions of ``evidence``, each with the value its digits or its number word
    give before any scale ("5" of "$5m", 85 of "85k"), once per evidence text."""
    return tuple(
        (m, _bare_value(m.text)) for m in _rule_mentions(evidence) if m.kind is MentionKind.NUMBER
    )


_SCALES = (1.0, 1e3, 1e6, 1e9, 1e12)


def _bare_value(number: str) -> float | None:
    digits = re.sub(r"[^\d.]", "", number)
    if not digits:
        return word_number(number)
    try:
        return float(digits)
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def _evidence_read(evidence: str, mention: Mention) -> tuple[StatedNumber, bool] | None:
    return _read(evidence, mention)


def _in_words(number: str) -> bool:
    return not any(ch.isdigit() for ch in number)


def _marked(number: StatedNumber) -> str:
    """A percentage's or a currency's sign, else ``""``: the units a value must agree on."""
    return number.unit if number.unit == "%" or number.unit in CURRENCY_SIGNS else ""


def number_in(text: str, mention: Mention, evidence: str) -> bool:
    """Whether ``evidence`` states the value of the number ``mention`` of ``text`` in another
    scale or form (read by :func:`number_value`; ``5 million`` is ``$5m``, ``85k`` is
    ``85,000``, ``13%`` is ``13 percent``, ``three`` is ``3``): equal values, one of the two
    written with a scale or in words or both percentages, both or neither a percentage, and the
    same currency when both give one. Other numbers are compared as written (``2.0`` is not
    ``2``, ``5%`` is not ``5 people``): see :func:`mention_in`."""
    claimed = _read(text, mention)
    if claimed is None:
        return False
    sign = _marked(claimed[0])
    word = _in_words(mention.text) and not claimed[1]
    value = claimed[0].value
    for m, bare in _evidence_numbers(evidence):
        # only a mention whose digits, times a scale, can give the claim's value is read
        if bare is None or not any(_equal(bare * scale, abs(value)) for scale in _SCALES):
            continue
        read = _evidence_read(evidence, m)
        if read is None:
            continue
        stated, scaled = read
        stated_word = _in_words(m.text)
        other = _marked(stated)
        if (sign == "%") != (other == "%") or (sign and other and sign != other):
            continue
        if not _equal(claimed[0].value, stated.value):
            continue
        if claimed[1] or scaled or sign == "%" or word or stated_word:
            return True
    return False
