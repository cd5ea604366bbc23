"""Values as a text states them, for the region value check
(:mod:`guardrail.hallucination.grounding`): each number, date and clock time of a sentence read
with its context by the one normaliser (:mod:`guardrail.text.values`), the ranges it states and
its clauses.

A value is read as the evidence writes it: "18 October" and "November 9th" are days of a month
without a year, "twenty-five" one number, "$ 1, 000" (a tokeniser's spacing) one amount, "the
21st century" a rank, "1491–1510" and "between 15 and 30 minutes" ranges; "one" and a
lower-case "may" or "march" are no values (a pronoun, a verb).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise

from guardrail.text.mentions import Mention, MentionKind, find_mentions
from guardrail.text.values import (
    StatedNumber,
    same_date,
    same_number,
    stated_date,
    stated_number,
    stated_time,
)


@dataclass(frozen=True)
class Value:
    """A value mentioned in a text, read with its context."""

    mention: Mention
    kind: MentionKind
    number: StatedNumber | None = None
    date: tuple[str, tuple[int | None, ...]] | None = None
    minutes: int | None = None

    @property
    def slot(self) -> tuple[str, ...]:
        """What the value is the value of: a number's unit, a date's granularity and the parts
        it states, a clock time."""
        if self.number is not None:
            return ("number", self.number.unit)
        if self.date is not None:
            parts = tuple(p is not None for p in self.date[1])
            return ("date", self.date[0], *map(str, parts))
        return ("time",)

    @property
    def measured(self) -> bool:
        """A quantity in a unit of measure ("fifteen minutes", "$30", "12 km"), a day or a
        clock time: told where it belongs, not a year ("in 2016") nor a count of things ("two
        researchers"), which a sentence puts beside many facts."""
        if self.number is not None:
            return self.number.unit in _MEASURES
        if self.date is not None:
            return self.date[0] != "date" or self.date[1][2] is not None
        return True

    @property
    def scaled(self) -> bool:
        """A number written with a scale word after it ("5 million"): its digits alone are not
        its value, so a repair of the digits alone is not offered."""
        return self.number is not None and _has_scale(self.mention.text, self.number.value)

    @property
    def scale(self) -> float:
        """What the digits are multiplied by ("5 million": 1e6; 1 for a number without a scale
        word, or for no number)."""
        if self.number is None or not self.scaled:
            return 1.0
        digits = self.mention.text.replace(",", "").rstrip("%").strip()
        try:
            ratio = self.number.value / float(digits)
        except (ValueError, ZeroDivisionError):
            return 1.0
        if ratio <= 0:
            return ratio
        power = 10.0 ** round(math.log10(ratio))
        # "9.3 billion" is 9.3 × 1e9, not × 999999999.9999999: compared as the scale word's
        # (its digits were no repair of "1.3 billion": one more repair on each dev draw)
        return power if math.isclose(ratio, power, rel_tol=1e-9) else ratio

    def rounds(self, other: Value) -> bool:
        """Whether ``self``, a number written with a scale word ("$53 million"), is ``other``
        rounded to that scale ("$53,193,914"): the evidence states it less precisely, not
        another value."""
        if self.number is None or other.number is None or not self.scaled:
            return False
        digits = self.mention.text.replace(",", "").rstrip("%").strip()
        try:
            scale = self.number.value / float(digits)
        except (ValueError, ZeroDivisionError):
            return False
        return (
            self.number.unit == other.number.unit
            and abs(other.number.value - self.number.value) <= 0.5 * scale
        )

    def same(self, other: Value) -> bool:
        """Whether ``self`` (a claim's value) states ``other`` (the evidence's)."""
        if self.number is not None and other.number is not None:
            return same_number(self.number, other.number)
        if self.date is not None and other.date is not None:
            shared = any(
                a is not None and b is not None
                for a, b in zip(self.date[1], other.date[1], strict=False)
            )  # a year and a day of a month without one state nothing in common
            return (shared and same_date(self.date, other.date)) or _same_month(
                self.date, other.date
            )
        if self.minutes is not None and other.minutes is not None:
            return self.minutes == other.minutes
        return False


def _same_month(
    a: tuple[str, tuple[int | None, ...]], b: tuple[str, tuple[int | None, ...]]
) -> bool:
    """A month named alone (``a``: "in October") stated by a date of that month (``b``: "18
    October 2018"); not the other way round: a month does not state the day."""
    return a[0] == "month" and b[0] == "date" and b[1][1] == a[1][0]


def _has_scale(text: str, value: float) -> bool:
    digits = text.replace(",", "").rstrip("%").strip()
    try:
        return abs(float(digits) - value) > 1e-9
    except ValueError:
        return False


_MEASURES = frozenset(
    "% $ € £ ¥ degree °c °f second minute hour day week month year decade century mile km "
    "kilometre kilometer metre meter cm mm kg kilogram gram pound lb ton tonne litre liter gallon mph "
    "kmh kb mb gb tb ghz mhz hz kw mw watt volt calorie dollar euro yen cent".split()
)
"""The unit keys of :func:`~guardrail.text.values.stated_number` that are units of measure."""

_SPOKEN = re.compile(
    r"\b(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|"
    r"four|five|six|seven|eight|nine))?|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen)\b",
    re.IGNORECASE,
)
"""Number words :func:`~guardrail.text.mentions.find_mentions` leaves out (it reads one to ten
and the scale words)."""
_CLAUSE_BREAK = re.compile(
    r"\s*(?:[;:]|,?\s+(?:and|but|while|whereas)\s+|,\s+(?!\d{3}\b))", re.IGNORECASE
)
"""Where a sentence's clauses part (not inside a number a tokeniser spaced out: "$ 1, 000")."""
_BETWEEN = re.compile(r"\bbetween\s+[^\s,;:]+$", re.IGNORECASE)
"""A text ending in "between" and one token: the "and" after it joins the two ends of a range
(cut there, "between 1989" and "1992 in the forest" were two clauses, and the range's end a
rival of its start: one more repair on two of the three dev draws, seeds 1-3)."""


def _mentions(text: str) -> list[Mention]:
    found = find_mentions(text)
    for m in _SPOKEN.finditer(text):
        inside = [f for f in found if m.start() < f.end and f.start < m.end()]
        if all(f.kind is MentionKind.NUMBER and f.text.isalpha() for f in inside):
            found = [f for f in found if f not in inside]  # "twenty-five", not "five"
            found.append(Mention(m.group(0), MentionKind.NUMBER, m.start(), m.end()))
    return sorted(found, key=lambda m: m.start)


_SPACED_NUMBER = re.compile(
    r"(?<![\d.,])(?<!\d, )\d{1,3}(?:, \d{3})+(?![\d]|[.,]\d|,? (?:and |or )?\d)"
    r"|(?<![\d.,])\d+\. \d+(?=\s*(?:%|percent|per cent|thousand|million|billion|trillion)\b)",
    re.IGNORECASE,
)
"""A number a tokeniser spaced out ("3, 800 km", "$ 1, 000", "1. 3 billion"): one value; not
an item of a list of numbers ("every 100, 500, 1000 or more steps")."""


_SCALE_WORDS = frozenset({"thousand", "million", "billion", "trillion"})


def _spaced_numbers(text: str, found: list[Mention]) -> list[Mention]:
    for m in _SPACED_NUMBER.finditer(text):
        found = [f for f in found if not (m.start() <= f.start and f.end <= m.end())]
        found.append(Mention(m.group(0).replace(" ", ""), MentionKind.NUMBER, m.start(), m.end()))
    found.sort(key=lambda f: f.start)
    # a scale word after a number is part of it ("1.3 billion"), not a value of its own
    return [
        f
        for i, f in enumerate(found)
        if not (
            i
            and f.text.casefold() in _SCALE_WORDS
            and found[i - 1].kind is MentionKind.NUMBER
            and not text[found[i - 1].end : f.start].strip()
        )
    ]


def values_in(text: str) -> list[Value]:
    """The numbers, dates and clock times of ``text`` that can be read as values ("one" is
    not: it is a pronoun or an article as often as a count, "one of the songs"; nor is a
    lower-case "may" or "march", a verb as often as a month). A day and a month without a year
    ("18 October", "November 9th") are one date; an ordinal ("the 21st century") is a rank, in a
    slot of its own."""
    return list(_values_in(text))


@lru_cache(maxsize=2048)
def _values_in(text: str) -> tuple[Value, ...]:
    """:func:`values_in`, read once per text (an evidence sentence that several passages or
    regions hold is read once; :class:`Value` is immutable)."""
    out: list[Value] = []
    found = _spaced_numbers(text, _mentions(text))
    for m in found:
        if m.kind is MentionKind.NUMBER and m.text.casefold() == "one":
            continue
        if m.kind is MentionKind.NUMBER:
            number = _stated(text, m)
            if number is not None:
                out.append(Value(m, m.kind, number=number))
        elif m.kind is MentionKind.DATE:
            date = stated_date(m.text)
            if date is not None:
                out.append(Value(m, m.kind, date=date))
        elif m.kind is MentionKind.TIME:
            minutes = stated_time(m.text)
            if minutes is not None:
                out.append(Value(m, m.kind, minutes=minutes))
    return tuple(sorted(out, key=lambda v: v.mention.start))


_ORDINAL = re.compile(r"(?:st|nd|rd|th)\b", re.IGNORECASE)


def _stated(text: str, m: Mention) -> StatedNumber | None:
    """The number of mention ``m`` read in ``text``; an ordinal's unit is ``#`` and the word
    it ranks ("21st century": ``#century``)."""
    suffix = _ORDINAL.match(text, m.end)
    if suffix is None or not m.text[-1:].isdigit():
        return stated_number(text, m.text, m.start, m.end)
    number = stated_number(text, m.text, m.start, suffix.end())
    return None if number is None else replace(number, unit=f"#{number.unit}")


def clauses(text: str) -> list[tuple[int, int]]:
    """The clauses of a sentence as ``(start, end)``: split at semicolons, colons, commas and
    the conjunctions that join two statements ("and", "but", "while", "whereas"; not the "and"
    of "between 1989 and 1992"). The items of
    a list of names stay in the clause they end ("220 euros in London, Paris and Zurich"): a
    piece of only capitalised words, a few of them, is not a clause of its own."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _CLAUSE_BREAK.finditer(text):
        if _BETWEEN.search(text, 0, m.start()) and "and" in m.group(0).casefold():
            continue  # "between 1989 and 1992": one range, one clause
        if m.start() > start:
            out.append((start, m.start()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    merged: list[tuple[int, int]] = []
    for a, b in out:
        if merged and _name_item(text[a:b]):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


_ITEM_WORD = re.compile(r"[^\W\d_][\w'’.-]*", re.UNICODE)
_LIST_ITEM_WORDS = 3
"""Most words of a list item read as part of the clause before it ("Paris", "New York City")."""


def _name_item(piece: str) -> bool:
    """Whether ``piece`` is an item of a list of names: 1–3 words, each capitalised."""
    words = _ITEM_WORD.findall(piece)
    return 0 < len(words) <= _LIST_ITEM_WORDS and all(w[:1].isupper() for w in words)


_JOIN = re.compile(r"\s*(?:-|–|—|to|through|until|till)\s*|\s+and\s+", re.IGNORECASE)


def scalar(value: Value) -> tuple[str, float] | None:
    """A value a range can hold: a number (keyed by its unit) or a year alone."""
    if value.number is not None:
        return value.number.unit, value.number.value
    if value.date is not None and value.date[0] == "date" and value.date[1][1:] == (None, None):
        year = value.date[1][0]
        return ("year", float(year)) if year is not None else None
    return None


def ranges_in(text: str, found: Sequence[Value]) -> list[tuple[str, float, float, Value, Value]]:
    """The ranges ``text`` states ("1491–1510", "from 10 to 15 minutes", "between 1989 and
    1992"): ``(unit, low, high, first, last)``. A falling one ("from 181 to 122°F") is a range
    too, its start in its end's unit; ``low`` and ``high`` are then its end and its start."""
    out: list[tuple[str, float, float, Value, Value]] = []
    for a, b in pairwise(found):
        join = _JOIN.fullmatch(text, a.mention.end, b.mention.start)
        x, y = scalar(a), scalar(b)
        if join is None or x is None or y is None:
            continue
        if "and" in join.group(0).casefold() and not text[
            : a.mention.start
        ].rstrip().casefold().endswith("between"):
            continue  # "in 1989 and 1992": two values, not a range
        unit = y[0] or x[0]  # "15 to 30 minutes": the unit comes after the last
        joined = x[0] in ("", unit) or x[0] == join.group(0).strip().casefold()
        if joined and y[0] == unit:
            out.append((unit, min(x[1], y[1]), max(x[1], y[1]), a, b))
    return out
