"""Region grounding of values: is each number, date and time of a claim stated where the claim's
fact is told?

A value taken from another sentence of the same documents ("The Pro plan costs $10 a month."
where the documents say the Basic plan costs $10 and the Pro plan $30) is in the evidence, so
the lookup of invented specifics stays silent, and a small NLI model often entails it: the
passage is about the right topic and the moved value is in it. Grounding looks where the claim's
fact is told, the **region** of :func:`~guardrail.hallucination.alignment.align` (the evidence
sentences the claim aligns with, names, numbers and dates masked, each with its neighbours):

1. each value of the claim is read with its context (:mod:`guardrail.text.values`: units and
   their symbols, number words, scale words, thousands separators, date formats, clock times),
   so "100°C" is "100 degrees Celsius" and "2pm" is "14:00";
2. a value the region states (equal after that normalisation, or within the rounding its own
   writing allows, or close when either side marks it approximate: "about 84,000") is grounded;
3. a value the region does not state, while the region states another value **in the same
   slot** (a number with the same unit word or sign, a date of the same granularity, a weekday,
   a clock time), is a :class:`ValueMismatch`: the claim puts another value where the evidence
   tells the fact. When the region gives exactly one such value it is ``plain``: a repair
   candidate the correction stage re-checks;
4. a quantity in a unit of measure, a day or a clock time that the region does not state and
   that only another part of the documents states, with nothing in its slot in the region, is a
   mismatch without a competitor (``evidence_value`` ``None``): the value was taken from
   elsewhere. Years and counts of things are left to rules 2–3: a sentence puts them beside many
   facts, so "stated elsewhere" says little about them.

A value the query states is never checked (the question names what the answer is about), nor is
a value the claim does not place (a bare number with no unit word has no slot).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

from guardrail.hallucination.alignment import (
    MIN_SHARED,
    Alignment,
    AlignmentIndex,
    EvidenceSentence,
    masked,
)
from guardrail.hallucination.calibration import _stem, content_words
from guardrail.text.mentions import Mention, MentionKind, find_mentions
from guardrail.text.values import (
    MONTHS,
    StatedNumber,
    same_date,
    same_number,
    stated_date,
    stated_number,
    stated_time,
)

FROM_ELSEWHERE = True
"""Flag a value the region does not state, with nothing in its slot there, that another part
of the documents states (rule 4)."""
RIVALS_IN_REGION = True
"""Look for a competing value in the whole region, not only in the best aligned sentence."""


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
    "% $ € £ ¥ degree second minute hour day week month year decade century mile km kilometre "
    "kilometer metre meter cm mm kg kilogram gram pound lb ton tonne litre liter gallon mph "
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


def _mentions(text: str) -> list[Mention]:
    found = find_mentions(text)
    for m in _SPOKEN.finditer(text):
        inside = [f for f in found if m.start() < f.end and f.start < m.end()]
        if all(f.kind is MentionKind.NUMBER and f.text.isalpha() for f in inside):
            found = [f for f in found if f not in inside]  # "twenty-five", not "five"
            found.append(Mention(m.group(0), MentionKind.NUMBER, m.start(), m.end()))
    return sorted(found, key=lambda m: m.start)


_SPACED_NUMBER = re.compile(
    r"(?<![\d.,])\d{1,3}(?:, \d{3})+(?![\d]|[.,]\d)"
    r"|(?<![\d.,])\d+\. \d+(?=\s*(?:%|percent|per cent|thousand|million|billion|trillion)\b)",
    re.IGNORECASE,
)
"""A number a tokeniser spaced out ("3, 800 km", "$ 1, 000", "1. 3 billion"): one value."""


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
    out: list[Value] = []
    found = _spaced_numbers(text, _mentions(text))
    days = _days_of_month(text, found)
    found = [m for m in found if not any(d.start <= m.start and m.end <= d.end for d, _ in days)]
    out += [Value(d, MentionKind.DATE, date=date) for d, date in days]
    for m in found:
        if m.kind is MentionKind.NUMBER and m.text.casefold() == "one":
            continue
        if m.kind is MentionKind.NUMBER:
            number = _stated(text, m)
            if number is not None:
                out.append(Value(m, m.kind, number=number))
        elif m.kind is MentionKind.DATE:
            if m.text in _VERBS:
                continue
            date = stated_date(m.text)
            if date is not None:
                out.append(Value(m, m.kind, date=date))
        elif m.kind is MentionKind.TIME:
            minutes = stated_time(m.text)
            if minutes is not None:
                out.append(Value(m, m.kind, minutes=minutes))
    return sorted(out, key=lambda v: v.mention.start)


_VERBS = frozenset({"may", "march"})
"""Month names that are lower-case verbs as often ("the flag may go back")."""
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY_MONTH = re.compile(
    rf"\b(?:(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{_MONTH_NAMES})\b\.?"
    rf"|(?P<month2>{_MONTH_NAMES})\.?\s+(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\b(?![:.]?\d))",
    re.IGNORECASE,
)
_ORDINAL = re.compile(r"(?:st|nd|rd|th)\b", re.IGNORECASE)


def _days_of_month(
    text: str, found: Sequence[Mention]
) -> list[tuple[Mention, tuple[str, tuple[int | None, ...]]]]:
    """The days of a month written without a year, as dates with no year ("18 October")."""
    out: list[tuple[Mention, tuple[str, tuple[int | None, ...]]]] = []
    for m in _DAY_MONTH.finditer(text):
        day = int(m.group("day") or m.group("day2"))
        month = MONTHS[(m.group("month") or m.group("month2")).casefold()]
        in_full_date = any(  # "18 October" of "18 October 2018"
            f.kind is MentionKind.DATE and f.start <= m.start() and m.end() < f.end for f in found
        )
        if 1 <= day <= 31 and not in_full_date:
            span = Mention(m.group(0).rstrip("."), MentionKind.DATE, m.start(), m.end())
            out.append((span, ("date", (None, month, day))))
    return out


def _stated(text: str, m: Mention) -> StatedNumber | None:
    """The number of mention ``m`` read in ``text``; an ordinal's unit is ``#`` and the word
    it ranks ("21st century": ``#century``)."""
    suffix = _ORDINAL.match(text, m.end)
    if suffix is None or not m.text[-1:].isdigit():
        return stated_number(text, m.text, m.start, m.end)
    number = stated_number(text, m.text, m.start, suffix.end())
    return None if number is None else replace(number, unit=f"#{number.unit}")


@dataclass
class RegionValues:
    """The values of each evidence sentence of one check, read once (one per check: never
    shared between checks)."""

    index: AlignmentIndex
    _by_sentence: dict[int, list[Value]] = field(default_factory=dict)
    _query: list[Value] | None = None

    def of(self, sentence: EvidenceSentence) -> list[Value]:
        if sentence.position not in self._by_sentence:
            self._by_sentence[sentence.position] = values_in(sentence.text)
        return self._by_sentence[sentence.position]

    def query(self) -> list[Value]:
        if self._query is None:
            self._query = values_in(self.index.query) if self.index.query else []
        return self._query

    def stated_elsewhere(self, value: Value, region: Sequence[EvidenceSentence]) -> bool:
        """Whether a sentence outside ``region`` states ``value``."""
        return bool(self._elsewhere(value, region))

    def told_elsewhere(
        self, value: Value, region: Sequence[EvidenceSentence], stems: set[str]
    ) -> bool:
        """Whether a sentence outside ``region`` states ``value`` in a clause sharing
        ``MIN_SHARED`` of the claim's ``stems``: the claim's fact is told there too (the
        alignment chose another sentence), the value is not taken from another fact."""
        return any(_tells(s.text, v, stems, MIN_SHARED) for s, v in self._elsewhere(value, region))

    def _elsewhere(
        self, value: Value, region: Sequence[EvidenceSentence]
    ) -> list[tuple[EvidenceSentence, Value]]:
        inside = {s.position for s in region}
        return [
            (s, v)
            for s in self.index.sentences
            if s.position not in inside
            for v in self.of(s)
            if v.kind is value.kind and value.same(v)
        ]


@dataclass(frozen=True)
class ValueMismatch:
    """A value of the claim not stated where the claim's fact is told."""

    claim_value: str
    start: int
    end: int
    """Span of the claim's value in the claim text."""
    kind: MentionKind
    evidence_value: str | None
    """The value the region states in the same slot (the first, in the best aligned sentence if
    it has one); ``None`` when the region has none and another part of the documents states the
    claim's value."""
    evidence_sentence: str
    evidence_start: int
    evidence_end: int
    """Span of ``evidence_value`` in ``evidence_sentence`` (0, 0 without one)."""
    plain: bool
    """The region gives exactly one value in the slot, a repair candidate."""
    in_best: bool
    """The competing value stands in the best aligned sentence itself."""


def value_mismatches(
    claim_text: str,
    alignment: Alignment,
    values: RegionValues,
    names: Sequence[tuple[int, int]] = (),
) -> list[ValueMismatch]:
    """The values of ``claim_text`` that its evidence region does not state (module docstring).
    ``names``: spans of the claim's names (masked where the claim's words are compared)."""
    found: list[ValueMismatch] = []
    claimed = values_in(claim_text)
    if not claimed:
        return found
    region = alignment.region
    blanked = masked(claim_text, [*names, *((v.mention.start, v.mention.end) for v in claimed)])
    stems = {
        _stem(w)
        for w in content_words(
            masked(claim_text, [(v.mention.start, v.mention.end) for v in claimed])
        )
    }
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(claim_text)]
    spans = _ranges(claim_text, claimed)
    for value in claimed:
        if value.number is not None and not value.number.unit:
            continue  # a bare number has no slot
        if any(a <= value.mention.start and value.mention.end <= b for a, b in quoted):
            continue  # part of a title or a quoted term ('the album "1989"')
        if any(value.same(q) for q in values.query() if q.kind is value.kind):
            continue
        if _within(value, spans, region, values):
            continue
        # a value the claim states too is no rival ("between 1989 and 1992")
        stated = [
            (s, v)
            for s in region
            for v in values.of(s)
            if v.kind is value.kind
            and (value.same(v) or not any(c.same(v) for c in claimed if c.kind is v.kind))
        ]
        context = stems - _unit_stems(value)
        if any(value.same(v) for _, v in stated):
            rivals = _closer_rivals(value, stated, stems, values.index)
            if (
                not rivals
                and value.measured
                and _told_apart(value, claim_text, blanked, stated, values.index)
            ):
                found.append(_elsewhere(value, alignment))
                continue
            if not rivals:
                continue
        else:
            rivals = [
                (s, v)
                for s, v in stated
                if v.slot == value.slot
                and not v.rounds(value)
                and (RIVALS_IN_REGION or s is alignment.best)
                and _tells(s.text, v, context)
            ]
        rivals.sort(key=lambda sv: sv[0] is not alignment.best)
        if rivals:
            place, rival = rivals[0]
            distinct = {r.mention.key for _, r in rivals}
            plain = len(distinct) == 1 and not value.scaled and not rival.scaled
            found.append(
                ValueMismatch(
                    claim_value=value.mention.text,
                    start=value.mention.start,
                    end=value.mention.end,
                    kind=value.kind,
                    evidence_value=rival.mention.text,
                    evidence_sentence=place.text,
                    evidence_start=rival.mention.start,
                    evidence_end=rival.mention.end,
                    plain=plain,
                    in_best=place is alignment.best,
                )
            )
        elif (
            FROM_ELSEWHERE
            and value.measured
            and values.stated_elsewhere(value, region)
            and not values.told_elsewhere(value, region, context)
        ):
            found.append(_elsewhere(value, alignment))
    return found


_QUOTED = re.compile(r'"[^"]{1,80}"|“[^”]{1,80}”')
"""A quoted stretch of a claim: a title or a term, whose values are part of a name."""


def _unit_stems(value: Value) -> set[str]:
    """The stems of a value's own unit word ("minutes" of "fifteen minutes"): part of the
    value, not of the fact it is told with."""
    unit = value.number.unit.lstrip("#") if value.number is not None else ""
    return {_stem(w) for w in content_words(unit)}


def _tells(text: str, value: Value, stems: set[str], needed: int = 1) -> bool:
    """Whether the clause of ``text`` holding ``value`` shares ``needed`` of the claim's
    ``stems`` (the value and its unit word aside; a clause with fewer than ``MIN_SHARED``
    words of its own, "In 2014," or "was released in April 2010", is read with the clauses
    beside it): the words around a value say which fact it belongs to."""
    parts = clauses(text)
    at = next((i for i, (a, b) in enumerate(parts) if a <= value.mention.start < b), None)
    if at is None:
        return True
    blank = masked(text, [(value.mention.start, value.mention.end)])

    def words(i: int) -> set[str]:
        return {_stem(w) for w in content_words(blank[parts[i][0] : parts[i][1]])}

    own = words(at) - _unit_stems(value)
    if len(own) < MIN_SHARED:
        own |= set().union(*(words(i) for i in (at - 1, at + 1) if 0 <= i < len(parts)))
    return len(own & stems) >= needed


_JOIN = re.compile(r"\s*(?:-|–|—|to|through|until|till)\s*|\s+and\s+", re.IGNORECASE)


def _scalar(value: Value) -> tuple[str, float] | None:
    """A value a range can hold: a number (keyed by its unit) or a year alone."""
    if value.number is not None:
        return value.number.unit, value.number.value
    if value.date is not None and value.date[0] == "date" and value.date[1][1:] == (None, None):
        year = value.date[1][0]
        return ("year", float(year)) if year is not None else None
    return None


def _ranges(text: str, found: Sequence[Value]) -> list[tuple[str, float, float, Value, Value]]:
    """The ranges ``text`` states ("1491–1510", "from 10 to 15 minutes", "between 1989 and
    1992"): ``(unit, low, high, first, last)``."""
    out: list[tuple[str, float, float, Value, Value]] = []
    for a, b in pairwise(found):
        join = _JOIN.fullmatch(text, a.mention.end, b.mention.start)
        x, y = _scalar(a), _scalar(b)
        if join is None or x is None or y is None:
            continue
        if "and" in join.group(0).casefold() and not text[
            : a.mention.start
        ].rstrip().casefold().endswith("between"):
            continue  # "in 1989 and 1992": two values, not a range
        unit = y[0] or x[0]  # "15 to 30 minutes": the unit comes after the last
        joined = x[0] in ("", unit) or x[0] == join.group(0).strip().casefold()
        if joined and y[0] == unit and x[1] <= y[1]:
            out.append((unit, x[1], y[1], a, b))
    return out


def _within(
    value: Value,
    spans: Sequence[tuple[str, float, float, Value, Value]],
    region: Sequence[EvidenceSentence],
    values: RegionValues,
) -> bool:
    """A value of a range the claim states that holds a value of the region ("dates from c.
    1491–1510" where the region says "around 1500"), or a value inside a range the region
    states: the two say the same, one less precisely."""
    own = _scalar(value)
    if own is None:
        return False
    for unit, low, high, a, b in spans:
        if value in (a, b) and any(
            (x := _scalar(v)) is not None and x[0] == unit and low <= x[1] <= high
            for s in region
            for v in values.of(s)
            if not any(v in (c, d) for _, _, _, c, d in _ranges(s.text, values.of(s)))
        ):
            return True
    return any(
        unit == own[0] and low <= own[1] <= high
        for s in region
        for unit, low, high, _, _ in _ranges(s.text, values.of(s))
    )


def _elsewhere(value: Value, alignment: Alignment) -> ValueMismatch:
    return ValueMismatch(
        claim_value=value.mention.text,
        start=value.mention.start,
        end=value.mention.end,
        kind=value.kind,
        evidence_value=None,
        evidence_sentence=alignment.best.text,
        evidence_start=0,
        evidence_end=0,
        plain=False,
        in_best=False,
    )


def _told_apart(
    value: Value,
    claim_text: str,
    blanked: str,
    stated: Sequence[tuple[EvidenceSentence, Value]],
    index: AlignmentIndex,
) -> bool:
    """A value in a clause of its own ("…, which will take fifteen minutes") that the region
    states only in sentences sharing no content word with the rest of the claim (names and
    values masked), nor does the sentence before them, nor ``MIN_SHARED`` with the value's own
    clause (a donation "worth $2 million to the legal defense fund" told with that fund): the
    value belongs to another fact of the documents."""
    parts = clauses(claim_text)
    own = next((c for c in parts if c[0] <= value.mention.start < c[1]), None)
    if len(parts) < 2 or own is None:
        return False
    rest = {_stem(w) for w in content_words(blanked[: own[0]] + " " + blanked[own[1] :])}
    if len(rest) < 2:
        return False
    bare = masked(claim_text, [(value.mention.start, value.mention.end)])
    told = {_stem(w) for w in content_words(bare[own[0] : own[1]])} - _unit_stems(value)
    for sentence, v in stated:
        if not value.same(v):
            continue
        if len(told & sentence.stems) >= MIN_SHARED:
            return False
        context = [sentence.text]
        before = sentence.position - 1
        if before >= 0 and index.sentences[before].passage == sentence.passage:
            context.append(index.sentences[before].text)
        if rest & {_stem(w) for w in content_words(" ".join(context))}:
            return False
    return True


def clauses(text: str) -> list[tuple[int, int]]:
    """The clauses of a sentence as ``(start, end)``: split at semicolons, colons, commas and
    the conjunctions that join two statements ("and", "but", "while", "whereas")."""
    out, start = [], 0
    for m in _CLAUSE_BREAK.finditer(text):
        if m.start() > start:
            out.append((start, m.start()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out


def _closer_rivals(
    value: Value,
    stated: Sequence[tuple[EvidenceSentence, Value]],
    stems: set[str],
    index: AlignmentIndex,
) -> list[tuple[EvidenceSentence, Value]]:
    """Where the region states the claim's value and also another in its slot ("the Basic plan
    costs $10; the Pro plan costs $30"), the other values of the clause that matches the claim
    (values masked) strictly better than every clause stating the claim's value; else none."""
    rivals = [(s, v) for s, v in stated if v.slot == value.slot and not value.same(v)]
    rivals = [(s, v) for s, v in rivals if not v.rounds(value)]
    if not rivals:
        return []
    scored: list[tuple[float, EvidenceSentence, tuple[int, int]]] = []
    for sentence in {id(s): s for s, _ in stated}.values():
        spans = [(v.mention.start, v.mention.end) for t, v in stated if t is sentence]
        for a, b in clauses(sentence.text):
            if not any(a <= x and y <= b for x, y in spans):
                continue
            words = content_words(masked(sentence.text, spans)[a:b])
            scored.append(
                (sum(index.weight(w) for w in stems & {_stem(w) for w in words}), sentence, (a, b))
            )

    def holds(sentence: EvidenceSentence, clause: tuple[int, int], v: Value) -> bool:
        return any(t is sentence and u is v for t, u in stated) and (
            clause[0] <= v.mention.start and v.mention.end <= clause[1]
        )

    own = max(
        (
            score
            for score, s, c in scored
            if any(holds(s, c, v) for t, v in stated if value.same(v))
        ),
        default=0.0,
    )
    # a sibling clause: only a sentence that states the claim's value in another clause
    siblings = {id(t) for t, v in stated if value.same(v)}
    out: list[tuple[EvidenceSentence, Value]] = []
    for score, sentence, clause in sorted(scored, key=lambda x: -x[0]):
        if score <= own:
            break
        if id(sentence) not in siblings:
            continue
        out = [(t, v) for t, v in rivals if t is sentence and holds(sentence, clause, v)]
        if out:
            break
    return out
