"""Character ranges: the one overlap test every check uses."""

from __future__ import annotations

from collections.abc import Iterable


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two half-open character ranges ``[start, end)`` share at least one character."""
    return a[0] < b[1] and b[0] < a[1]


def overlaps_any(a: tuple[int, int], others: Iterable[tuple[int, int]]) -> bool:
    """Whether ``a`` shares a character with any of ``others``."""
    return any(overlaps(a, b) for b in others)
