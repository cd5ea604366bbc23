"""A verifier that counts its work: delegates to a real verifier and records each ``predict``
call's pairs (for tests that pin how many verifier calls a check makes)."""

from __future__ import annotations

from collections.abc import Sequence

from guardrail.verifiers.base import NLIPrediction, Verifier


class CountingVerifier(Verifier):
    """Delegates to ``inner``; ``calls`` holds each ``predict`` call's pairs."""

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner
        self.name = inner.name
        self.languages = inner.languages
        self.max_tokens = inner.max_tokens
        self.calls: list[list[tuple[str, str]]] = []

    @property
    def sizes(self) -> list[int]:
        """How many pairs each call scored."""
        return [len(c) for c in self.calls]

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))  # type: ignore[attr-defined]

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIPrediction]:
        self.calls.append(list(pairs))
        return self.inner.predict(pairs)
