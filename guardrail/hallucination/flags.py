"""Builders of typed hallucination flags (the hallucination types and the severity weights).

Each builder takes what was measured and returns :class:`HallucinationFlag` objects with a span
into the response, a confidence, the evidence snippet and, where one exists, a suggestion.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from guardrail.hallucination.value_reading import ranges_in, values_in
from guardrail.report import (
    HALLUCINATION_SEVERITY,
    Claim,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    Span,
    ValidationStatus,
)
from guardrail.text.mentions import Mention, MentionKind, find_mentions, mention_in, years
from guardrail.text.spans import overlaps_any
from guardrail.text.values import same_date, stated_date, written_like
from guardrail.verifiers.base import NLIPrediction

if TYPE_CHECKING:
    from guardrail.hallucination.alignment import NameMismatch
    from guardrail.hallucination.grounding import ValueMismatch
    from guardrail.hallucination.polarity import PolarityMismatch
    from guardrail.verifiers.base import HallucinatedSpan

NAME_CONFIDENCE = 0.8
"""Confidence of a nonexistent-entity flag on a name (fuzzy lookup)."""
VALUE_CONFIDENCE = 0.9
"""Confidence of a nonexistent-entity flag on a number or date (exact lookup)."""


def _flag(
    kind: HallucinationType,
    span: Span,
    response: str,
    confidence: float,
    explanation: str,
    evidence: str | None = None,
    suggestion: str | None = None,
    claim_index: int | None = None,
    replacement: str | None = None,
    evidence_value: str | None = None,
    evidence_span: Span | None = None,
) -> HallucinationFlag:
    return HallucinationFlag(
        type=kind,
        span=span,
        content=span.slice(response),
        confidence=round(max(0.0, min(1.0, confidence)), 4),
        severity=HALLUCINATION_SEVERITY[kind],
        explanation=explanation,
        evidence=evidence,
        suggestion=suggestion,
        claim_index=claim_index,
        replacement=replacement,
        evidence_value=evidence_value,
        evidence_span=evidence_span,
    )


def claim_part(response: str, claim: Claim, start: int, end: int) -> tuple[Span, bool]:
    """The answer's span of ``claim.text[start:end]``, and whether the answer states those words
    there. A claim the answer does not state word for word (a bare "No, it isn't." read as the
    question's proposition) gets its whole span, and no repair may be put in at it."""
    span = Span(start=claim.span.start + start, end=claim.span.start + end)
    verbatim = (
        span.end <= len(response) and response[span.start : span.end] == claim.text[start:end]
    )
    return (span, True) if verbatim else (claim.span, False)


def wrong_attribute_flags(
    response: str, factual: FactualValidationResult | None
) -> list[HallucinationFlag]:
    """WRONG_ATTRIBUTE for each value the knowledge base records differently for that entity."""
    if factual is None:
        return []
    flags = []
    for v in factual.claim_validations:
        if v.status is not ValidationStatus.CONTRADICTED or v.kb_value is None:
            continue
        span = v.claim.object_span or v.claim.span
        attribute = v.claim.attribute or v.claim.predicate
        flags.append(
            _flag(
                HallucinationType.WRONG_ATTRIBUTE,
                span,
                response,
                v.confidence,
                f"the knowledge base records {v.claim.subject}'s {attribute} as '{v.kb_value}'",
                evidence=f"{v.claim.subject}: {attribute} = {v.kb_value}",
                suggestion=f"the record says {v.kb_value}",
                replacement=v.kb_value,
            )
        )
    return flags


def wrong_name_flag(
    response: str, claim: Claim, index: int, mismatch: NameMismatch, confidence: float
) -> HallucinationFlag:
    """WRONG_ATTRIBUTE: a name of the claim is absent from the evidence sentences that tell the
    claim's fact, which give another name of the same kind, or another proper name of any kind
    in its place (``content`` is the claim's name, ``evidence`` the evidence sentence,
    ``suggestion`` the evidence's name; ``replacement`` it too when the sentence gives exactly
    one such name, or one in the claim's name's place). For rule 9 of
    :mod:`~guardrail.hallucination.alignment` the name and the sentence are the question's."""
    span, verbatim = claim_part(response, claim, mismatch.start, mismatch.end)
    if mismatch.asked:  # rule 9: the question names another where the claim restates it
        explanation = (
            f"'{mismatch.claim_name}' stands where the question names "
            f"'{mismatch.evidence_name}', and the evidence does not tell it there"
        )
        suggestion = f"the question names {mismatch.evidence_name} here"
    else:
        explanation = (
            f"'{mismatch.claim_name}' is not where the evidence tells this fact; it names "
            f"'{mismatch.evidence_name}' there"
        )
        suggestion = f"the evidence names {mismatch.evidence_name} here"
    return _flag(
        HallucinationType.WRONG_ATTRIBUTE,
        span,
        response,
        confidence,
        explanation,
        evidence=mismatch.evidence_sentence,
        suggestion=suggestion,
        claim_index=index,
        replacement=mismatch.candidate if verbatim else None,
        evidence_value=mismatch.evidence_name,
        evidence_span=Span(start=mismatch.evidence_start, end=mismatch.evidence_end),
    )


MOVED_CONFIDENCE = 0.75
"""Confidence of a misplaced-value flag whose competing value stands in the region but not in
the best aligned sentence."""
ELSEWHERE_CONFIDENCE = 0.6
"""Confidence of a value-from-elsewhere flag (the region states nothing in its slot)."""


def misplaced_value_flag(
    response: str, claim: Claim, index: int, mismatch: ValueMismatch
) -> HallucinationFlag:
    """A value of the claim not stated where the evidence tells the claim's fact
    (:mod:`guardrail.hallucination.grounding`): TEMPORAL_ERROR for a date or time, else
    WRONG_ATTRIBUTE; ``evidence_value`` / ``evidence_span`` the value the region states in its
    slot, ``replacement`` it too when it is the only one, or the one in the claim's value's place
    (:attr:`~guardrail.hallucination.grounding.ValueMismatch.candidate`; the question's value
    there when the region gives several, none in that place)."""
    span, verbatim = claim_part(response, claim, mismatch.start, mismatch.end)
    kind = (
        HallucinationType.WRONG_ATTRIBUTE
        if mismatch.kind is MentionKind.NUMBER
        else HallucinationType.TEMPORAL_ERROR
    )
    if mismatch.evidence_value is None:
        return _flag(
            kind,
            span,
            response,
            ELSEWHERE_CONFIDENCE,
            f"'{mismatch.claim_value}' is not where the evidence tells this fact; the documents "
            "state it about something else",
            evidence=mismatch.evidence_sentence,
            suggestion="check where this value comes from",
            claim_index=index,
        )
    confidence = VALUE_CONFIDENCE if mismatch.in_best else MOVED_CONFIDENCE
    asked = mismatch.asked if not (mismatch.plain or mismatch.slotted) else None
    return _flag(
        kind,
        span,
        response,
        confidence,
        f"'{mismatch.claim_value}' is not where the evidence tells this fact; it gives "
        f"'{mismatch.evidence_value}' there",
        evidence=mismatch.evidence_sentence,
        suggestion=f"the evidence says {mismatch.evidence_value}"
        + (f"; the question says {asked}" if asked else ""),
        claim_index=index,
        replacement=mismatch.candidate if verbatim else None,
        evidence_value=mismatch.evidence_value,
        evidence_span=Span(start=mismatch.evidence_start, end=mismatch.evidence_end),
    )


POLARITY_CONFIDENCE = 0.8
"""Confidence of a polarity flag: the claim negates what the sentence telling its fact
affirms, or the reverse."""


def polarity_flag(
    response: str, claim: Claim, index: int, mismatch: PolarityMismatch
) -> HallucinationFlag:
    """CONTRADICTS_FACT: the claim negates a word the evidence telling its fact affirms, or
    affirms one it negates (:mod:`guardrail.hallucination.polarity`); the explanation quotes
    both ("the claim says 'not increase' where the evidence telling this fact says
    'increases'")."""
    span, verbatim = claim_part(response, claim, mismatch.start, mismatch.end)
    said = (
        response[span.start : span.end] if verbatim else claim.text[mismatch.start : mismatch.end]
    )
    return _flag(
        HallucinationType.CONTRADICTS_FACT,
        span,
        response,
        POLARITY_CONFIDENCE,
        f"the claim says '{said}' where the evidence telling this fact says "
        f"'{mismatch.evidence_words}'",
        evidence=mismatch.evidence_sentence,
        suggestion=f"the evidence says: {mismatch.evidence_sentence}",
        claim_index=index,
    )


def contradiction_flag(
    response: str, claim: Claim, index: int, prediction: NLIPrediction, snippet: str
) -> HallucinationFlag:
    """CONTRADICTS_FACT: the deciding evidence contradicts the claim."""
    return _flag(
        HallucinationType.CONTRADICTS_FACT,
        claim.span,
        response,
        prediction.contradiction,
        f"the evidence contradicts this claim (contradiction {prediction.contradiction:.2f})",
        evidence=snippet,
        suggestion=f"the evidence says: {snippet}" if snippet else None,
        claim_index=index,
    )


def unsupported_flag(
    response: str,
    claim: Claim,
    index: int,
    prediction: NLIPrediction,
    threshold: float,
    snippet: str,
    calibrated: bool = False,
) -> HallucinationFlag:
    """UNSUPPORTED_CLAIM: the claim's score is below its threshold — ``p_supported`` below the
    claim threshold (calibrated policy), else the best window's entailment below T(rs)."""
    if calibrated and claim.p_supported is not None:
        why = (
            f"p(supported) {claim.p_supported:.2f} < claim threshold {threshold:.2f}; "
            f"best-window entailment {prediction.entailment:.2f}"
        )
    else:
        why = f"best entailment {prediction.entailment:.2f} < T(rs) {threshold:.2f}"
    return _flag(
        HallucinationType.UNSUPPORTED_CLAIM,
        claim.span,
        response,
        1.0 - prediction.entailment,
        f"no evidence supports this claim ({why})",
        evidence=snippet or None,
        suggestion="remove this claim or give evidence that supports it",
        claim_index=index,
    )


def _same_date(claim_mention: Mention, evidence_mention: Mention) -> bool:
    """Whether the evidence's date is the claim's: the same year when both state one, else
    the same in every part both state, read by the one normaliser
    (:func:`~guardrail.text.values.stated_date`: "12 July" is "12 July 2019" and "July" is
    "July 12th")."""
    claim_years, evidence_years = years(claim_mention.text), years(evidence_mention.text)
    if claim_years and evidence_years:
        return claim_years[0] == evidence_years[0]
    ours, theirs = stated_date(claim_mention.text), stated_date(evidence_mention.text)
    if ours is None or theirs is None:
        return claim_mention.key == evidence_mention.key
    return _month_of(ours) == _month_of(theirs) and (
        ours[0] != theirs[0] or same_date(ours, theirs)
    )


def _month_of(date: tuple[str, tuple[int | None, ...]]) -> int | None:
    if date[0] == "month":
        return date[1][0]
    return date[1][1] if date[0] == "date" else None


def _other_day(claim_mention: Mention, evidence: Sequence[Mention]) -> Mention | None:
    """The evidence's one date of the claim's year and month on another day, when the claim
    states a full date ("38 January 1957") that no evidence date states ("24 January 1957"
    is then the candidate); ``None`` otherwise."""
    ours = stated_date(claim_mention.text)
    if ours is None or ours[0] != "date" or None in ours[1]:
        return None
    others: dict[tuple[int | None, ...], Mention] = {}
    for m in evidence:
        theirs = stated_date(m.text)
        if theirs is None or theirs[0] != "date" or None in theirs[1]:
            continue
        if theirs[1] == ours[1]:
            return None
        if theirs[1][:2] == ours[1][:2]:
            others.setdefault(theirs[1], m)
    return next(iter(others.values())) if len(others) == 1 else None


def _other_year(claim_mention: Mention, evidence: Sequence[Mention]) -> Mention | None:
    """The evidence's one date on the claim's day and month in another year, when the claim
    states a full date ("January 23, 2018") that no evidence date states ("January 23, 2019"
    is then the candidate); ``None`` otherwise (no such date, or several years)."""
    ours = stated_date(claim_mention.text)
    if ours is None or ours[0] != "date" or None in ours[1]:
        return None
    others: dict[int | None, Mention] = {}
    for m in evidence:
        if m.kind is not MentionKind.DATE:
            continue
        theirs = stated_date(m.text)
        if theirs is None or theirs[0] != "date" or None in theirs[1]:
            continue
        if theirs[1] == ours[1]:
            return None
        if theirs[1][1:] == ours[1][1:]:
            others.setdefault(theirs[1][0], m)
    return next(iter(others.values())) if len(others) == 1 else None


def _comparable(claim_mention: Mention, evidence_mention: Mention) -> bool:
    """Whether two dates state a part in common: a claim's year against a year, its month
    (alone or in a day of a month) against a month, its weekday against a weekday."""
    if years(claim_mention.text):
        return bool(years(evidence_mention.text))
    ours, theirs = stated_date(claim_mention.text), stated_date(evidence_mention.text)
    if ours is None or theirs is None:
        return True
    if ours[0] == "weekday" or theirs[0] == "weekday":
        return ours[0] == theirs[0]
    return _month_of(ours) is not None and _month_of(theirs) is not None


def temporal_flags(
    response: str,
    claim: Claim,
    index: int,
    evidence_text: str,
    snippet: str,
    confidence: float,
) -> list[HallucinationFlag]:
    """TEMPORAL_ERROR for each date or time of the claim that differs from the evidence's.

    A claim date counts as an error when the deciding evidence has dates (or times) of the
    same kind and none of them equals it; the suggestion quotes the evidence's date, preferring
    one in the snippet. When the snippet (the evidence sentence closest to the claim) states the
    differing date, the confidence is at least ``VALUE_CONFIDENCE``: that sentence speaks of the
    same thing with another date, and its date, written as the claim writes its own
    (:func:`~guardrail.text.values.written_like`: "2011" for a claim's "2013" against "October
    2011"), is the ``replacement``. A full date on another day of the one date the evidence
    gives for its month and year ("38 January 1957" against "24 January 1957") is flagged with
    the claim's own ``confidence`` (a finding only on a claim the verifier does not support),
    that date as the ``replacement``.
    """
    offset = claim.span.start
    flags = []
    evidence_mentions = find_mentions(evidence_text)
    snippet_keys = {m.key for m in find_mentions(snippet)}

    def date_flag(
        span: Span, mention: Mention, stated: Mention, sure: float, repair: bool
    ) -> HallucinationFlag:
        return _flag(
            HallucinationType.TEMPORAL_ERROR,
            span,
            response,
            sure,
            f"'{mention.text}' differs from the evidence's date '{stated.text}'",
            evidence=snippet,
            suggestion=f"the evidence says {stated.text}",
            claim_index=index,
            replacement=written_like(mention.text, stated.text) if repair else None,
        )

    claimed = find_mentions(claim.span.slice(response))
    for mention in claimed:
        if mention.kind not in (MentionKind.DATE, MentionKind.TIME):
            continue
        others = [c for c in claimed if c.kind is mention.kind and c.key != mention.key]
        # the evidence's date of another of the claim's dates is no rival of this one
        same_kind = [
            m
            for m in evidence_mentions
            if m.kind is mention.kind and not any(m.key == c.key for c in others)
        ]
        if mention.kind is MentionKind.DATE:
            same_kind = [m for m in same_kind if _comparable(mention, m)]
        if not same_kind:
            continue
        span = Span(start=offset + mention.start, end=offset + mention.end)
        if any(_same_date(mention, m) for m in same_kind):
            other_day = _other_day(mention, same_kind)
            if other_day is not None:  # the claim's own score: no finding on a supported claim
                flags.append(date_flag(span, mention, other_day, confidence, True))
            continue
        in_snippet = [m for m in same_kind if m.key in snippet_keys]
        if not in_snippet and (other_year := _other_year(mention, same_kind)) is not None:
            # the one date of the claim's day and month: the claim's own score, a repair
            flags.append(date_flag(span, mention, other_year, confidence, True))
            continue
        pick = in_snippet[0] if in_snippet else same_kind[0]
        sure = max(confidence, VALUE_CONFIDENCE) if in_snippet else confidence
        flags.append(date_flag(span, mention, pick, sure, bool(in_snippet)))
    return flags


def nonexistent_entity_flags(
    response: str,
    claim: Claim,
    index: int,
    known_texts: Sequence[str],
    skip: Sequence[Span] = (),
    nlp: object | None = None,
) -> list[HallucinationFlag]:
    """Specifics of an unsupported claim found in no known text (two of the hallucination types):
    NONEXISTENT_ENTITY for a name, FABRICATED_FACT for a number, date or time.

    Args:
        known_texts: passages, rendered KB facts, dialogue turns, the entity registry and
            the query.
        skip: spans already flagged (e.g. temporal errors), not flagged twice.
        nlp: optional spaCy pipeline for names.
    """
    offset = claim.span.start
    joined = "\n".join(known_texts)
    claim_text = claim.span.slice(response)
    snippet = claim.evidence.snippet if claim.evidence is not None else ""
    flags = []
    for mention in find_mentions(claim_text, nlp):
        span = Span(start=offset + mention.start, end=offset + mention.end)
        if overlaps_any(span.range, (s.range for s in skip)):
            continue
        if mention_in(mention, joined, text=claim_text):
            continue
        is_name = mention.kind is MentionKind.NAME
        told = snippet
        if is_name:
            value = evidence_spelling(mention.text, snippet)
        else:
            value = evidence_number(claim_text, mention, snippet)
            if value is None and mention.kind is MentionKind.DATE:
                # the documents' one date on the claim's day and month, in another year
                other_year = _other_year(mention, find_mentions(joined))
                if other_year is not None:
                    value = written_like(mention.text, other_year.text)
                    told = _sentence_around(joined, other_year.start, other_year.end)
        flags.append(
            _flag(
                HallucinationType.NONEXISTENT_ENTITY
                if is_name
                else HallucinationType.FABRICATED_FACT,
                span,
                response,
                NAME_CONFIDENCE if is_name else VALUE_CONFIDENCE,
                f"{mention.kind.value} '{mention.text}' appears in no passage, "
                "knowledge-base fact or dialogue turn"
                + (
                    (
                        f"; the evidence sentence spells it {value!r}"
                        if is_name
                        else f"; the evidence sentence gives {value!r}"
                    )
                    if value
                    else ""
                ),
                evidence=told if value else None,
                suggestion=f"the evidence says {value}" if value else None,
                claim_index=index,
                replacement=value,
            )
        )
    return flags


_SENTENCE_END = re.compile(r"[.!?\n]\s")


def _sentence_around(text: str, start: int, end: int) -> str:
    """The stretch of ``text`` around ``[start, end)`` between the sentence ends before and
    after it (at most 300 characters each side)."""
    before = [m.end() for m in _SENTENCE_END.finditer(text, max(0, start - 300), start)]
    after = _SENTENCE_END.search(text, end, end + 300)
    return text[
        before[-1] if before else max(0, start - 300) : after.start() + 1 if after else end + 300
    ].strip()


SPELLING_MIN_LETTERS = 5
"""Shorter words are not respelt from the evidence: too many short names are one edit apart."""


def evidence_spelling(word: str, snippet: str) -> str | None:
    """The word of the evidence sentence that ``word`` (found in no known text) misspells: the
    one word of ``snippet`` with the same capitalisation at most one edit away (two for words
    of eight letters or more; a swap of two letters is one edit), else ``None``. "Mondey" gives
    "Monday" beside "… on Monday at 2pm"; a word of several tokens, a short word or one with
    two near words gives nothing."""
    from rapidfuzz.distance import DamerauLevenshtein

    if not snippet or not word.isalpha() or len(word) < SPELLING_MIN_LETTERS:
        return None
    limit = 1 if len(word) < 8 else 2
    near = {
        w
        for w in re.findall(r"[^\W\d_]+", snippet)
        if w != word
        and w[0].isupper() == word[0].isupper()
        and abs(len(w) - len(word)) <= limit
        and DamerauLevenshtein.distance(w.lower(), word.lower()) <= limit
    }
    return near.pop() if len(near) == 1 else None


def _unit_after(text: str, end: int) -> str:
    """The word right after a number ("days" in "90 days"), lower-cased; '' at the end."""
    rest = text[end:].lstrip()
    word = ""
    for ch in rest:
        if not (ch.isalpha() or ch in "%°$€£"):
            break
        word += ch
    return word.lower()


def _number_shape(text: str) -> tuple[bool, bool]:
    """(written in digits, a percentage): a repair keeps the claim's way of writing it."""
    return any(ch.isdigit() for ch in text), text.rstrip().endswith("%")


def evidence_number(claim_text: str, mention: Mention, snippet: str) -> str | None:
    """The number the evidence sentence gives in the place of the claim's ``mention``: the one
    number of ``snippet`` (read as the region's values are: "3, 700" is one number) written the
    same way (digits, a percentage) and followed by the same word ("30 days" for "90 days"),
    else ``None`` (no such number, or more than one)."""
    if mention.kind is not MentionKind.NUMBER or not snippet:
        return None
    unit = _unit_after(claim_text, mention.end)
    shape = _number_shape(mention.text)
    found = {
        m.text
        for m in (v.mention for v in values_in(snippet))  # "3, 700" read as one number
        if m.kind is MentionKind.NUMBER
        and m.key != mention.key
        and _number_shape(m.text) == shape
        and _unit_after(snippet, m.end) == unit
        and not _broken_number(snippet, m.start, m.end)
    }
    if len(found) == 1:
        return found.pop()
    return _range_end(claim_text, mention, snippet) if RANGE_ENDS else None


RANGE_ENDS = True
"""An end of a range whose other end the evidence sentence's one range shares takes that
range's end (:func:`_range_end`); chosen on the one-fact-edit benchmark's dev split."""


def _range_end(claim_text: str, mention: Mention, snippet: str) -> str | None:
    """The evidence's end of a range in the place of the claim's ``mention``, an end of a range
    of the claim, where the evidence sentence states one range with the same other end ("aged
    10-24" for "10-31 year olds"; :func:`~guardrail.hallucination.value_reading.ranges_in`)."""
    for _, _, _, low, high in ranges_in(claim_text, values_in(claim_text)):
        if mention.start in (low.mention.start, high.mention.start):
            at_low = mention.start == low.mention.start
            other = high if at_low else low
            ends = {
                (a if at_low else b).mention.text
                for _, _, _, a, b in ranges_in(snippet, values_in(snippet))
                if other.same(b if at_low else a)
                and (a if at_low else b).mention.key != mention.key
            }
            return ends.pop() if len(ends) == 1 else None
    return None


_BROKEN_BEFORE = re.compile(r"\d, $")
_BROKEN_AFTER = re.compile(r", \d{3}(?!\d)")


def _broken_number(text: str, start: int, end: int) -> bool:
    """Whether the number at ``[start, end)`` of ``text`` is a piece of a thousands number a
    tokeniser split ("3, 700" in scraped or tokenised text): never a repair value. Only
    three-digit groups count, so "In 2019, 40 people" is two numbers."""
    piece = text[start:end]
    before = bool(_BROKEN_BEFORE.search(text[max(0, start - 3) : start]))
    return (before and re.fullmatch(r"\d{3}", piece) is not None) or bool(
        _BROKEN_AFTER.match(text, end)
    )


def logical_inconsistency_flag(
    response: str, first: Claim, second: Claim, second_index: int, prediction: NLIPrediction
) -> HallucinationFlag:
    """LOGICAL_INCONSISTENCY: two sentences of the response contradict each other."""
    return _flag(
        HallucinationType.LOGICAL_INCONSISTENCY,
        second.span,
        response,
        prediction.contradiction,
        f"contradicts an earlier sentence of the answer: '{first.text}'",
        evidence=first.text,
        suggestion="make the two statements agree or remove one",
        claim_index=second_index,
    )


def prior_turn_flag(
    response: str,
    claim: Claim,
    index: int,
    prediction: NLIPrediction,
    turn_text: str,
    turn_id: int | None,
) -> HallucinationFlag:
    """CONTRADICTS_PRIOR: the claim contradicts an earlier turn of the dialogue."""
    where = f"turn {turn_id}" if turn_id is not None else "an earlier turn"
    return _flag(
        HallucinationType.CONTRADICTS_PRIOR,
        claim.span,
        response,
        prediction.contradiction,
        f"contradicts {where} of the dialogue",
        evidence=turn_text,
        suggestion=f"{where} says: {turn_text}",
        claim_index=index,
    )


def span_flags(
    response: str,
    spans: Sequence[HallucinatedSpan],
    claims: Sequence[Claim],
    existing: Sequence[HallucinationFlag],
    model: str,
) -> list[HallucinationFlag]:
    """UNSUPPORTED_CLAIM for each span a span model (LettuceDetect) marks as hallucinated.

    Args:
        spans: the model's spans of ``response``; a flag's confidence is the span's highest
            token p(hallucinated).
        claims: the response's claims; a flag's ``claim_index`` is the claim it overlaps most
            (``None`` when it overlaps none).
        existing: flags already raised; a span one of them covers exactly is not flagged
            twice (nor is a span given twice).
        model: the span model's name, for the explanation.
    """
    taken = {(f.span.start, f.span.end) for f in existing}
    flags = []
    for span in spans:
        start, end, confidence = span.start, span.end, span.confidence
        if (start, end) in taken or start >= end:
            continue
        taken.add((start, end))
        shared = [min(end, c.span.end) - max(start, c.span.start) for c in claims]
        best = max(range(len(claims)), key=shared.__getitem__, default=None)
        flags.append(
            _flag(
                HallucinationType.UNSUPPORTED_CLAIM,
                Span(start=start, end=end),
                response,
                confidence,
                f"span model {model} marks this text as not supported by the passages "
                f"(p(hallucinated) {confidence:.2f})",
                suggestion="remove this text or give evidence that supports it",
                claim_index=best if best is not None and shared[best] > 0 else None,
            )
        )
    return flags
