"""Annotations and removals: flag what could not be fixed, drop what must not be shown.

Annotations are insertions at the end of a span of the original text:

- ``[unverified]`` after an unverifiable claim;
- ``[possible hallucination: …]`` after a claim in conflict with the KB (not corrected) or the
  dialogue, and after a hallucination flag of at least ``min_flag_confidence`` whose span was
  not already fixed by a factual correction.

Several notes ending at the same position are merged into one bracket. With
``remove_severe``, a sentence holding a flag at least ``removal_confidence`` sure, of a type
with severity ≥ 0.9 (fabricated fact, contradicts fact, nonexistent entity), is removed.
"""

from __future__ import annotations

from collections.abc import Sequence

from guardrail.correction.edits import Edit
from guardrail.delivery import Note, Removal
from guardrail.report import (
    Correction,
    CorrectionType,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    Span,
    ValidationStatus,
)
from guardrail.text.segmentation import holds, removal_range
from guardrail.text.sentences import cjk_count
from guardrail.text.spans import overlaps_any

REMOVAL_PRIORITY = 4
ANNOTATION_PRIORITY = 0
SEVERE = 0.9


def annotation_edits(
    text: str,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag],
    fixed: list[tuple[int, int]],
    min_flag_confidence: float,
    claim_notes: Sequence[Note] = (),
    supported: Sequence[Span] = (),
    annotated_claims: frozenset[int] = frozenset(),
) -> list[Edit]:
    """Insertions ``" [note]"`` at span ends; ``fixed`` are spans already corrected.

    ``claim_notes`` are the decision's notes on claims shown although not supported;
    ``supported`` are claims the evidence supports (a knowledge base that lacks their entity
    does not make them "unverified"); ``annotated_claims`` carry a claim note, so their generic
    unsupported-claim flag is not noted twice.
    """
    notes: dict[int, list[tuple[str, Span, float]]] = {}

    def add(span: Span, note: str, confidence: float) -> None:
        end = min(span.end, len(text))
        # never split a word: a span ending inside "23rd" or "4B" is annotated after the word
        while end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
            end += 1
        while end > span.start and text[end - 1] in ".,;:!? ":
            end -= 1
        bucket = notes.setdefault(end, [])
        if all(n != note for n, _, _ in bucket):
            bucket.append((note, span, confidence))

    if factual is not None:
        for v in factual.claim_validations:
            obj = v.claim.object_span or v.claim.span
            if v.status is ValidationStatus.UNVERIFIABLE:
                if not overlaps_any(v.claim.span.range, [x.range for x in supported]):
                    add(v.claim.span, "unverified", 0.5)
            elif v.status is ValidationStatus.CONTRADICTED and not overlaps_any(obj.range, fixed):
                add(
                    v.claim.span,
                    f"possible hallucination: the record says {v.kb_value}",
                    v.confidence,
                )
            elif v.status is ValidationStatus.HISTORY_CONFLICT or (
                v.turn_id is not None and not overlaps_any(obj.range, fixed)
            ):
                add(
                    v.claim.span,
                    f"possible hallucination: conflicts with turn {v.turn_id}",
                    v.confidence,
                )
    for note in claim_notes:
        if not overlaps_any(note.span.range, fixed):
            add(note.span, note.label, note.confidence)
    for flag in flags:
        if flag.confidence < min_flag_confidence or overlaps_any(flag.span.range, fixed):
            continue
        if (
            flag.type is HallucinationType.UNSUPPORTED_CLAIM
            and flag.claim_index in annotated_claims
        ):
            continue  # the claim's own note says it
        add(
            flag.span,
            f"possible hallucination: {flag.type.value.replace('_', ' ')}",
            flag.confidence,
        )
    edits: list[Edit] = []
    for end, bucket in sorted(notes.items()):
        label = "; ".join(n for n, _, _ in bucket)
        if len(bucket) > 1 and all(n.startswith("possible hallucination") for n, _, _ in bucket):
            rest = [n.removeprefix("possible hallucination: ") for n, _, _ in bucket]
            label = "possible hallucination: " + "; ".join(rest)
        insertion = annotation_marker(text, end, label)
        span = bucket[0][1]
        correction = Correction(
            type=CorrectionType.ANNOTATION,
            span=span,
            original=text[span.start : span.end],
            replacement=insertion.strip(),
            confidence=max(c for _, _, c in bucket),
            source="guardrail",
            message=label,
        )
        edits.append(Edit(end, end, insertion, ANNOTATION_PRIORITY, correction))
    return edits


_CJK_PUNCTUATION = "。！？，、；：」』）】》〉"
_CLOSERS = "\"'”’」』）】》〉)]"


def annotation_marker(text: str, end: int, label: str) -> str:
    """The marker inserted at ``end`` of ``text`` for ``label``: ``" [label]"``, without the
    space after CJK text or full-width punctuation (see :func:`marker_gap`).

    The one marker rule: correction's annotations and the streamed notes both use it.

    Example::

        >>> annotation_marker("It is 5.", 7, "unverified"), annotation_marker("是5。", 3, "unverified")
        (' [unverified]', '[unverified]')
    """
    return marker_gap(text, end) + f"[{label}]"


def marker_gap(text: str, end: int) -> str:
    """What goes between annotated text and its marker: nothing after CJK text or full-width
    punctuation (CJK puts no space between sentences), else one space. Closing quotes are
    looked through (``…发表的。”`` is CJK, ``…said.”`` is not)."""
    i = end
    while i > 0 and text[i - 1] in _CLOSERS:
        i -= 1
    if i > 0 and (text[i - 1] in _CJK_PUNCTUATION or cjk_count(text[i - 1])):
        return ""
    return " "


def removal_edits(
    text: str,
    sentences: list[tuple[int, int]],
    flags: list[HallucinationFlag],
    removal_confidence: float,
) -> list[Edit]:
    """Remove each sentence (``(start, end)`` ranges) that holds a severe, confident flag."""
    removals: list[Removal] = []
    for start, end in sentences:
        severe = [
            f
            for f in flags
            if f.confidence >= removal_confidence
            and f.severity >= SEVERE
            and holds((start, end), f.span.start)
        ]
        if severe:
            reason = "; ".join(sorted({f.type.value for f in severe}))
            confidence = max(f.confidence for f in severe)
            removals.append(Removal(Span(start=start, end=end), reason, confidence))
    return planned_removal_edits(text, sentences, removals)


def planned_removal_edits(
    text: str, sentences: list[tuple[int, int]], removals: Sequence[Removal]
) -> list[Edit]:
    """Remove the sentence holding each planned removal (a claim with a confident problem and
    no repair); several removals in one sentence make one edit."""
    by_sentence: dict[tuple[int, int], list[Removal]] = {}
    for r in removals:
        start, end = removal_range(sentences, r.span.range)
        by_sentence.setdefault((start, end), []).append(r)
    ranges: list[tuple[int, int, list[Removal]]] = []
    for (start, end), group in sorted(by_sentence.items()):
        stop = end
        while stop < len(text) and text[stop] in " \n":
            stop += 1  # take the space after the sentence with it
        if stop == len(text):
            while start > 0 and text[start - 1] in " \n":
                start -= 1  # the last sentence: take the space before it instead
        if ranges and start <= ranges[-1][1]:
            # adjacent removals become one edit (overlapping edits would drop one of them)
            first, _, before = ranges[-1]
            ranges[-1] = (min(first, start), max(stop, ranges[-1][1]), [*before, *group])
        else:
            ranges.append((start, stop, list(group)))
    if ranges and ranges[-1][1] == len(text):
        # the removal reaches the end: take the space before it (merged removals may not have)
        first, stop, group = ranges[-1]
        while first > 0 and text[first - 1] in " \n":
            first -= 1
        ranges[-1] = (first, stop, group)
    edits: list[Edit] = []
    for start, stop, group in ranges:
        reason = "; ".join(dict.fromkeys(r.reason for r in group))
        indices = [r.claim_index for r in group if r.claim_index is not None]
        correction = Correction(
            type=CorrectionType.REMOVAL,
            span=Span(start=start, end=stop),
            original=text[start:stop],
            replacement="",
            confidence=max(r.confidence for r in group),
            source="guardrail",
            message=f"removed: {reason}",
            claim_index=indices[0] if indices else None,
        )
        edits.append(Edit(start, stop, "", REMOVAL_PRIORITY, correction))
    return edits
