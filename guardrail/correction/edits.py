"""Text edits with spans into the ORIGINAL text, applied together so every span stays right.

Every correction is an :class:`Edit` on the original response: a replacement of
``[start, end)`` (``start == end`` is an insertion). :func:`apply_edits` applies a set of
non-overlapping edits from the end of the text backwards, so no edit shifts another;
:func:`resolve_overlaps` picks which edits survive when they overlap (higher priority first);
:class:`OffsetMap` maps original offsets onto the edited text.

Example::

    text = "Teh email is a@x.org."
    edits = [Edit(0, 3, "The", 1), Edit(13, 20, "b@y.com", 2)]
    apply_edits(text, edits)        # 'The email is b@y.com.'
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace ``original[start:end]`` with ``replacement``."""

    start: int
    end: int
    replacement: str
    priority: int = 0
    """Higher wins an overlap (removal > factual > grammar > spelling)."""
    tag: object = None
    """Caller's reference (e.g. the correction it came from)."""

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid edit span [{self.start}, {self.end})")

    @property
    def is_insertion(self) -> bool:
        return self.start == self.end

    def overlaps(self, other: Edit) -> bool:
        """Whether the two edits touch the same original characters.

        Insertions overlap only what strictly contains their position; two insertions at the
        same position overlap (their order would be ambiguous).
        """
        if self.is_insertion and other.is_insertion:
            return self.start == other.start
        if self.is_insertion:
            return other.start < self.start < other.end
        if other.is_insertion:
            return self.start < other.start < self.end
        return self.start < other.end and other.start < self.end


def resolve_overlaps(edits: Iterable[Edit]) -> list[Edit]:
    """Keep a non-overlapping subset: higher priority first, then earlier, then shorter."""
    kept: list[Edit] = []
    for edit in sorted(edits, key=lambda e: (-e.priority, e.start, e.end - e.start)):
        if not any(edit.overlaps(k) for k in kept):
            kept.append(edit)
    return sorted(kept, key=lambda e: (e.start, e.end))


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (spans into ``text``); raises ``ValueError`` on overlap."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for a, b in itertools.pairwise(ordered):
        if a.overlaps(b):
            raise ValueError(f"overlapping edits [{a.start}, {a.end}) and [{b.start}, {b.end})")
    for edit in ordered:
        if edit.end > len(text):
            raise ValueError(f"edit [{edit.start}, {edit.end}) is outside the text")
    out = text
    # Backwards: an edit never moves the offsets of the ones before it. An insertion at p is
    # applied before a replacement ending at p, so it lands after the replacement.
    for edit in sorted(ordered, key=lambda e: (e.start, e.end), reverse=True):
        out = out[: edit.start] + edit.replacement + out[edit.end :]
    return out


class OffsetMap:
    """Maps offsets of the original text onto the text after ``edits``."""

    def __init__(self, edits: Iterable[Edit]) -> None:
        self._edits = sorted(edits, key=lambda e: (e.start, e.end))

    def map(self, offset: int) -> int:
        """The position in the edited text; an offset inside a replaced span maps to its end."""
        shift = 0
        for edit in self._edits:
            if edit.end <= offset and not (edit.is_insertion and edit.start == offset):
                shift += len(edit.replacement) - (edit.end - edit.start)
            elif edit.start < offset < edit.end:
                return edit.start + shift + len(edit.replacement)
        return offset + shift
