"""Region grounding of values: is each number, date and time of a claim stated where the claim's
fact is told?

A value taken from another sentence of the same documents ("The Pro plan costs $10 a month."
where the documents say the Basic plan costs $10 and the Pro plan $30) is in the evidence, so
the lookup of invented specifics stays silent, and a small NLI model often entails it: the
passage is about the right topic and the moved value is in it. Grounding looks where the claim's
fact is told, the **region** of :func:`~guardrail.hallucination.alignment.align` (the evidence
sentences the claim aligns with, names, numbers and dates masked, each with its neighbours):

1. each value of the claim is read with its context (:mod:`~guardrail.hallucination.value_reading`
   on :mod:`guardrail.text.values`: units and their symbols, number words, scale words,
   thousands separators, date formats, days of a month without a year, clock times, ranks,
   ranges), so "100°C" is "100 degrees Celsius" (and "45°F" is not "45°C") and "2pm" is
   "14:00";
2. a value the region states (equal after that normalisation, or within the rounding its own
   writing allows, or close when either side marks it approximate: "about 84,000"; a month by
   a date of that month) is grounded, and so is a range of the claim that holds a single value
   of the region ("c. 1491–1510" for "around 1500") or a value inside a range the region states
   ("20 minutes" for "between 15 and 30 minutes"). Unless the region also states another
   value in its slot where the claim's fact is told: in a clause matching the claim better than
   every clause stating the claim's value ("the Basic plan costs $10; the Pro plan costs $30"),
   or after a run of at least ``LONG_RUN`` of the claim's words while the claim's value stands
   after none ("as a 16-year-old in 2000" against "as a 16 - year - old in 1996 - before
   becoming the youngest keeper in 2000"): then rule 3 holds with that value;
3. a value the region does not state, while the region states another value **in the same
   slot** (a number with the same unit word or sign, a date of the same granularity, a weekday,
   a clock time) in a clause that tells the claim's fact (sharing a content word with the claim,
   values and units aside: "since the registry began in 1988" is no rival of the year a film
   was selected), is a :class:`ValueMismatch`: the claim puts another value where the evidence
   tells the fact. An end of a range of the claim is in the slot of the end of a range of the
   region that shares its other end ("10-40 year olds" against "aged 10-24"), whatever word
   follows either, and the start of a range takes the range's unit. When the region gives
   exactly one such value (a value told twice, once rounded, "$53million" and "$53,193,914",
   counts once) it is ``plain``: a repair candidate the correction stage re-checks; when it
   gives several and exactly one stands in the claim's value's place
   (:func:`~guardrail.hallucination.names.same_slot` or a long run of equal words beside both,
   as for names), that one is; else the only one the best aligned sentence states
   (``BEST_RIVAL``), else the question's value in the claim's value's place
   (``QUESTION_VALUES``: "files load to 69%" for "Why will a file load to 99%?"). Digits are a
   candidate only between numbers of the same scale ("4 billion" / "1 billion"). The candidate
   is written as the claim writes its value (:func:`~guardrail.text.values.written_like`: "3"
   for the region's "three" where the claim has digits, a year alone where the claim states a
   year alone);
4. a quantity in a unit of measure, a day or a clock time that the region does not state and
   that only another part of the documents states, with nothing in its slot in the region and
   in no clause that tells the claim's fact too (``MIN_SHARED`` content words: then the
   alignment chose another sentence), is a mismatch without a competitor (``evidence_value``
   ``None``): the value was taken from elsewhere. Years and counts of things are left to rules
   2–3: a sentence puts them beside many facts, so "stated elsewhere" says little about them.

A value the query states is never checked (the question names what the answer is about), nor is
a value the claim does not place (a bare number with no unit word has no slot), nor one inside
a name of the claim or a quoted title ("World Cup 2018", the album "1989").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import fsum

from guardrail.hallucination.alignment import (
    MIN_SHARED,
    Alignment,
    AlignmentIndex,
    EvidenceSentence,
    masked,
)
from guardrail.hallucination.calibration import _stem, content_words
from guardrail.hallucination.names import LONG_RUN, agreeing_run, name_context, same_slot
from guardrail.hallucination.value_reading import Value, clauses, ranges_in, scalar, values_in
from guardrail.text.mentions import MentionKind, find_mentions
from guardrail.text.values import written_like

__all__ = [
    "RegionValues",
    "Value",
    "ValueMismatch",
    "clauses",
    "value_mismatches",
    "values_in",
]

FROM_ELSEWHERE = True
"""Flag a value the region does not state, with nothing in its slot there, that another part
of the documents states (rule 4)."""
PLACED_RIVALS = True
"""Where the region states the claim's value only away from the claim's words, a value in its
slot after a long run of them is a rival (:func:`_placed_rivals`)."""
RIVALS_IN_REGION = True
"""Look for a competing value in the whole region, not only in the best aligned sentence."""
RANGE_RIVALS = True
"""An end of a range of the claim that the region does not state, where a range of the region
shares its other end, is rivalled by that range's end ("10-40 year olds" against "aged
10-24"), whatever word follows each (rule 3)."""
DAYS_OF_DATES = True
"""A day of a month told without its year ("on 6 July") is rivalled by the region's full dates
("12 July 2019"), compared and repaired as a day of a month (rule 3; chosen on the second draw
of the one-fact-edit benchmark's dev edits, seed 1: two more repairs, none lost on either
draw)."""
UNITS_APART = True
"""An evidence value equal to a value the claim states, but in another unit, is no value the
claim states too: it stays a rival ("up to 14 hours" beside the claim's "15-30 minutes" for
its "up to 1 hours"; chosen on a second draw of the one-fact-edit benchmark's dev edits, seed
1: one more repair, none lost on either draw)."""
BEST_RIVAL = True
"""Rule 3's candidate where the region gives several values in the slot and none stands in the
claim's value's place: the one the best aligned sentence states, when it states one (where the
claim's fact is told; as names look there first. Chosen on the one-fact-edit benchmark's dev
split: one more repair, none lost)."""
QUESTION_VALUES = True
"""Rule 3's candidate where the region gives several values in the slot and none stands in the
claim's value's place: the question's value in that place (:func:`_asked_in_place`; chosen
on the one-fact-edit benchmark's dev split: two more repairs, none lost)."""
YEARS_OF_DATES = True
"""A year told alone ("in 2021") is rivalled by the year of a fuller date of the region
("April 25, 2019"), compared and repaired as a year (rule 3)."""


@dataclass
class RegionValues:
    """The values of each evidence sentence of one check, read once (one per check: never
    shared between checks)."""

    index: AlignmentIndex
    _by_sentence: dict[int, list[Value]] = field(default_factory=dict)
    _ranges: dict[int, list[tuple[str, float, float, Value, Value]]] = field(default_factory=dict)
    _query: list[Value] | None = None

    def of(self, sentence: EvidenceSentence) -> list[Value]:
        if sentence.position not in self._by_sentence:
            self._by_sentence[sentence.position] = values_in(sentence.text)
        return self._by_sentence[sentence.position]

    def query(self) -> list[Value]:
        if self._query is None:
            self._query = values_in(self.index.query) if self.index.query else []
        return self._query

    def ranged(self, sentence: EvidenceSentence) -> list[tuple[str, float, float, Value, Value]]:
        """The ranges ``sentence`` states (:func:`ranges_in`), read once."""
        if sentence.position not in self._ranges:
            self._ranges[sentence.position] = ranges_in(sentence.text, self.of(sentence))
        return self._ranges[sentence.position]

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
    slotted: bool = False
    """The region gives several, and exactly one stands in the place of the claim's value
    (:func:`~guardrail.hallucination.names.same_slot`: "The 14-year-old soldier received the
    medal" against "the 27-year-old soldier received the medal, and his cousin received it 70
    years ago"), or the best aligned sentence states exactly one of them (``BEST_RIVAL``): that
    one is the repair candidate."""
    same_scale: bool = True
    """The claim's digits and the evidence's are multiplied alike ("4 billion" / "1 billion",
    or neither has a scale word): putting in the evidence's digits states its value."""

    asked: str | None = None
    """The region gives several and none in the claim's value's place, and the question states
    one there (``QUESTION_VALUES``): that one is the repair candidate."""

    @property
    def candidate(self) -> str | None:
        """The value a repair puts in place of the claim's (``None``: no single candidate)."""
        if self.evidence_value is None or not self.same_scale:
            return None
        if not (self.plain or self.slotted):
            return written_like(self.claim_value, self.asked) if self.asked else None
        return written_like(self.claim_value, self.evidence_value)


def value_mismatches(
    claim_text: str,
    alignment: Alignment,
    values: RegionValues,
    names: Sequence[tuple[int, int]] = (),
    by_names: bool = False,
) -> list[ValueMismatch]:
    """The values of ``claim_text`` that its evidence region does not state (module docstring).
    ``names``: spans of the claim's names (masked where the claim's words are compared).
    ``by_names``: the region was found by the claim's names (a claim too short to align
    without them), so a rival's clause must share a word of the claim besides its names."""
    found: list[ValueMismatch] = []
    claimed = values_in(claim_text)
    if not claimed:
        return found
    region = alignment.region
    blanked = masked(claim_text, [*names, *((v.mention.start, v.mention.end) for v in claimed)])
    told = [(v.mention.start, v.mention.end) for v in claimed]
    if by_names:
        told += [
            *names,
            *((m.start, m.end) for m in find_mentions(claim_text) if m.kind is MentionKind.NAME),
        ]
    stems = {_stem(w) for w in content_words(masked(claim_text, told))}
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(claim_text)]
    spans = ranges_in(claim_text, claimed)
    for value in claimed:
        if value.number is not None and not value.number.unit and not _ranged(value, spans):
            continue  # a bare number has no slot (the start of "10-24 years" has its range's)
        if any(a <= value.mention.start and value.mention.end <= b for a, b in [*quoted, *names]):
            continue  # part of a name or a quoted title ("World Cup 2018", 'the album "1989"')
        if any(_asked(value, q) for q in values.query() if q.kind is value.kind):
            continue
        if _within(value, spans, region, values):
            continue
        # a value the claim states too (in its unit) is no rival ("between 1989 and 1992")
        stated = [
            (s, v)
            for s in region
            for v in values.of(s)
            if v.kind is value.kind
            and (
                value.same(v)
                or not any(
                    (c.same(v) or v.same(c)) and _one_unit(c, spans, v, values.ranged(s))
                    for c in claimed
                    if c.kind is v.kind
                )
            )
        ]
        context = stems - _unit_stems(value)
        if any(value.same(v) and _states(value, v, stated) for _, v in stated):
            rivals = _closer_rivals(value, stated, stems, values.index)
            if not rivals and PLACED_RIVALS:
                rivals = _placed_rivals(claim_text, value, stated)
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
            ends = _range_rivals(value, spans, region, values) if RANGE_RIVALS else []
            rivals = ends or [
                (s, v)
                for s, v in stated
                if _slot_rival(value, v)
                and not v.rounds(value)
                and (RIVALS_IN_REGION or s is alignment.best)
                and _tells(s.text, v, context)
            ]
        rivals.sort(key=lambda sv: sv[0] is not alignment.best)
        if rivals:
            rivals = _unrounded(rivals)
            distinct = {_rival_key(value, r) for _, r in rivals}
            in_slot = _in_slot(claim_text, value, rivals)
            slotted = len(distinct) > 1 and len({_rival_key(value, v) for _, v in in_slot}) == 1
            in_best = {_rival_key(value, r) for s, r in rivals if s is alignment.best}
            if BEST_RIVAL and len(distinct) > 1 and not slotted and len(in_best) == 1:
                slotted = True
                in_slot = [(s, r) for s, r in rivals if s is alignment.best]
            place, rival = in_slot[0] if slotted else rivals[0]
            asked = None
            if QUESTION_VALUES and len(distinct) > 1 and not slotted:
                asked = _asked_in_place(claim_text, value, values)
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
                    plain=len(distinct) == 1,
                    in_best=place is alignment.best,
                    slotted=slotted,
                    same_scale=value.scale == rival.scale,
                    asked=asked,
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


def _year_alone(value: Value) -> bool:
    """Whether ``value`` is a date stating a year and nothing finer ("in 2021")."""
    return value.date is not None and value.date[0] == "date" and value.date[1][1:] == (None, None)


def _slot_rival(value: Value, v: Value) -> bool:
    """Whether the region's ``v`` stands in the slot of the claim's ``value``: the same slot, or
    (``YEARS_OF_DATES``) a date stating a year, of any granularity, for a year told alone."""
    if v.slot == value.slot:
        return True
    if DAYS_OF_DATES and _day_alone(value):  # "6 July" against "12 July 2019"
        return v.date is not None and v.date[0] == "date" and None not in v.date[1]
    return (
        YEARS_OF_DATES
        and _year_alone(value)
        and v.date is not None
        and v.date[0] == "date"
        and v.date[1][0] is not None
    )


def _day_alone(value: Value) -> bool:
    """Whether ``value`` is a day of a month told without its year ("on 6 July")."""
    return (
        value.date is not None
        and value.date[0] == "date"
        and value.date[1][0] is None
        and None not in value.date[1][1:]
    )


def _rival_key(value: Value, rival: Value) -> str:
    """What tells two rivals of the claim's ``value`` apart: the year, for a year told alone
    ("April 24, 2019" and "April 25, 2019" give one year); else the rival as written."""
    if _year_alone(value) and rival.date is not None and rival.date[1][0] is not None:
        return str(rival.date[1][0])
    if _day_alone(value) and rival.date is not None and None not in rival.date[1][1:]:
        return f"{rival.date[1][1]}-{rival.date[1][2]}"
    return rival.mention.key


def _asked(value: Value, asked: Value) -> bool:
    """Whether the question's value ``asked`` is the claim's ``value``: equal, and for a
    number, of its unit or of none (the question's "2Pac" is not the claim's "2 songs")."""
    if not value.same(asked):
        return False
    return (
        value.number is None
        or asked.number is None
        or not asked.number.unit
        or (asked.slot == value.slot)
    )


def _asked_in_place(claim_text: str, value: Value, values: RegionValues) -> str | None:
    """The question's one value in the claim's ``value``'s place (:func:`same_slot`, or a run of
    at least ``LONG_RUN`` equal tokens on one side), of its slot and not equal to it: the answer
    restates the question with another value ("files load to 69%" for "Why will a file load to
    99% and then hang?"), the value rule 6 of names takes for the question's subject."""
    query = values.index.query
    if not query:
        return None
    own = (value.mention.start, value.mention.end)
    slot = name_context(claim_text, *own)
    placed = {
        q.mention.key: q.mention.text
        for q in values.query()
        if q.kind is value.kind
        and _slot_rival(value, q)
        and not value.same(q)
        and (
            same_slot(slot, name_context(query, q.mention.start, q.mention.end))
            or agreeing_run(claim_text, own, query, (q.mention.start, q.mention.end)) >= LONG_RUN
        )
    }
    return next(iter(placed.values())) if len(placed) == 1 else None


def _unit(value: Value, spans: Sequence[tuple[str, float, float, Value, Value]]) -> str:
    """The unit ``value`` is stated in: its range's, for an end of a range ("15" of "15-30
    minutes"), else its own (``""`` for a date or a bare number)."""
    for unit, _, _, first, last in spans:
        if value is first or value is last:
            return unit
    return value.number.unit if value.number is not None else ""


def _one_unit(
    claimed: Value,
    spans: Sequence[tuple[str, float, float, Value, Value]],
    stated: Value,
    ranges: Sequence[tuple[str, float, float, Value, Value]],
) -> bool:
    """Whether a claim's value and an evidence value equal to it are one quantity: not two
    units ("15" of "15-30 minutes" is not "up to 14 hours"), a bare number taking either."""
    if not UNITS_APART:
        return True
    a, b = _unit(claimed, spans), _unit(stated, ranges)
    return not (a and b) or a == b


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


def _within(
    value: Value,
    spans: Sequence[tuple[str, float, float, Value, Value]],
    region: Sequence[EvidenceSentence],
    values: RegionValues,
) -> bool:
    """A value of a range the claim states that holds a single value of the region ("dates
    from c. 1491–1510" where the region says "around 1500"), or a single value inside a range
    the region states: the two say the same, one less precisely. (The ends of two ranges
    compare as values: "15-50 minutes" is not "between 15 and 30 minutes".)"""
    own = scalar(value)
    if own is None:
        return False
    ends = [r for r in spans if value in (r[3], r[4])]
    for unit, low, high, _, _ in ends:
        if any(
            (x := scalar(v)) is not None and x[0] == unit and low <= x[1] <= high
            for s in region
            for v in values.of(s)
            if not any(v in (c, d) for _, _, _, c, d in ranges_in(s.text, values.of(s)))
        ):
            return True
    return not ends and any(
        unit == own[0] and low <= own[1] <= high
        for s in region
        for unit, low, high, _, _ in ranges_in(s.text, values.of(s))
    )


def _ranged(value: Value, spans: Sequence[tuple[str, float, float, Value, Value]]) -> bool:
    """Whether ``value`` ends a range of the claim that has a unit ("10" of "10-24 years")."""
    return RANGE_RIVALS and any(unit and value in (a, b) for unit, _, _, a, b in spans)


def _range_rivals(
    value: Value,
    spans: Sequence[tuple[str, float, float, Value, Value]],
    region: Sequence[EvidenceSentence],
    values: RegionValues,
) -> list[tuple[EvidenceSentence, Value]]:
    """The ends of the region's ranges that share the other end of the claim's range ending in
    ``value`` ("24" of "aged 10-24" for the "40" of "10-40 year olds"): the same place of a
    range of the same start (or end), another value. None when ``value`` ends no range."""
    out: list[tuple[EvidenceSentence, Value]] = []
    for _, _, _, low, high in spans:
        if value is not low and value is not high:
            continue
        at_low = value is low
        other = high if at_low else low
        for s in region:
            for _, _, _, a, b in ranges_in(s.text, values.of(s)):
                mine, theirs = (a, b) if at_low else (b, a)
                if other.same(theirs) and not value.same(mine) and mine.kind is value.kind:
                    out.append((s, mine))
    return out


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


def _states(value: Value, v: Value, stated: Sequence[tuple[EvidenceSentence, Value]]) -> bool:
    """Whether ``v``, a region value equal to the claim's number ``value``, states it: it does
    in the claim's own slot, or when the region states no other value in that slot (a page
    number "p. 448" does not state "448 km" where the region says "over 30 km away")."""
    if value.number is None or v.slot == value.slot:
        return True
    return not any(u.slot == value.slot and not value.same(u) for _, u in stated)


def _in_slot(
    claim_text: str, value: Value, rivals: list[tuple[EvidenceSentence, Value]]
) -> list[tuple[EvidenceSentence, Value]]:
    """The ``rivals`` standing in the claim's value's place (:func:`same_slot`, or a run of at
    least ``LONG_RUN`` equal tokens on one side: :func:`agreeing_run`), and of those the ones
    whose surroundings agree with the claim's in the most positions ("right in 98.7 per cent"
    over "this was 97.6 per cent" for "right in 69.7 per cent"), then over the longest run."""
    own = (value.mention.start, value.mention.end)
    slot = name_context(claim_text, *own)
    scored = []
    for s, v in rivals:
        theirs = name_context(s.text, v.mention.start, v.mention.end)
        run = agreeing_run(claim_text, own, s.text, (v.mention.start, v.mention.end))
        if same_slot(slot, theirs) or run >= LONG_RUN:
            agree = sum(a == b for a, b in zip(slot, theirs, strict=True))
            scored.append(((agree, run), s, v))
    best = max((n for n, _, _ in scored), default=(0, 0))
    return [(s, v) for n, s, v in scored if n == best]


def _placed_rivals(
    claim_text: str, value: Value, stated: Sequence[tuple[EvidenceSentence, Value]]
) -> list[tuple[EvidenceSentence, Value]]:
    """Where the region states the claim's value, but only away from the claim's words, and
    one other value in its slot after (or before) a run of at least ``LONG_RUN`` of the
    claim's words ("as a 16-year-old in 2000" against "as a 16 - year - old in 1996 - before
    becoming the youngest keeper in 2000"): that value, which stands in the claim's place;
    else none."""
    own = (value.mention.start, value.mention.end)

    def run(sentence: EvidenceSentence, v: Value) -> int:
        return agreeing_run(claim_text, own, sentence.text, (v.mention.start, v.mention.end))

    if any(run(s, v) >= LONG_RUN for s, v in stated if value.same(v)):
        return []
    placed = [
        (s, v)
        for s, v in stated
        if v.slot == value.slot
        and not value.same(v)
        and not v.rounds(value)
        and run(s, v) >= LONG_RUN
    ]
    return placed if len({v.mention.key for _, v in placed}) == 1 else []


def _unrounded(
    rivals: list[tuple[EvidenceSentence, Value]],
) -> list[tuple[EvidenceSentence, Value]]:
    """``rivals`` without a value that rounds another of them ("$ 53million" beside
    "$ 53,193,914": one amount, told twice, is one candidate); values that round each other
    ("$53million", "$53 million") both stay."""
    kept = [
        (s, v)
        for s, v in rivals
        if not any(u is not v and v.rounds(u) and not u.rounds(v) for _, u in rivals)
    ]
    return kept or rivals


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
                (fsum(index.weight(w) for w in stems & {_stem(w) for w in words}), sentence, (a, b))
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
