"""The verifier contract: score (premise, hypothesis) pairs with three NLI probabilities.

Every backend — Hugging Face cross-encoder, the bundled ONNX model, an LLM judge — implements
:class:`Verifier`. ``predict`` is batched; the model behind it loads once, lazily.

Example::

    from guardrail.verifiers import load_verifier
    verifier = load_verifier()                       # the bundled offline model
    [p] = verifier.predict([("The meeting is at 2pm.", "The meeting is in the afternoon.")])
    p.entailment, p.neutral, p.contradiction        # floats summing to 1
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field, model_validator

Pair = tuple[str, str]


@dataclass(frozen=True)
class HallucinatedSpan:
    """A run of flagged answer tokens: ``answer[start:end]``, with the highest p in it."""

    start: int
    end: int
    confidence: float
    text: str


class NLIPrediction(BaseModel):
    """Probabilities of the three NLI labels for one pair; they sum to 1."""

    entailment: float
    neutral: float
    contradiction: float
    verifier: str | None = Field(default=None, exclude=True)
    """The verifier that made it, when a router chose one of several (left out of dumps)."""

    @model_validator(mode="after")
    def _normalised(self) -> NLIPrediction:
        values = (self.entailment, self.neutral, self.contradiction)
        if not all(math.isfinite(v) and v >= 0.0 for v in values):
            raise ValueError(f"NLI probabilities must be finite and non-negative, got {values}")
        total = self.entailment + self.neutral + self.contradiction
        if total <= 0:
            raise ValueError("NLI probabilities must not all be zero")
        if abs(total - 1.0) > 1e-6:
            self.entailment /= total
            self.neutral /= total
            self.contradiction /= total
        return self

    @property
    def label(self) -> str:
        """The most probable label."""
        scores = {
            "entailment": self.entailment,
            "neutral": self.neutral,
            "contradiction": self.contradiction,
        }
        return max(scores, key=scores.__getitem__)


class Verifier(ABC):
    """Scores (premise, hypothesis) pairs.

    Attributes:
        name: model id or path, recorded in reports and traces.
        languages: ISO 639-1 codes the model covers (claims in other languages are unverified).
        max_tokens: the longest pair (in model tokens) the model should be given.
        calibration_id: the key of its claim calibration (``None`` = ``name``; see
            :mod:`guardrail.hallucination.calibration_registry`).
    """

    name: str = "verifier"
    calibration_id: str | None = None
    languages: tuple[str, ...] = ("en",)
    max_tokens: int = 512

    @abstractmethod
    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        """One :class:`NLIPrediction` per pair, in order. Raises ``VerifierError`` on failure."""

    def count_tokens(self, text: str) -> int:
        """Length of ``text`` in model tokens (default: whitespace words; backends with a
        tokenizer count real tokens). Used to size evidence windows."""
        return len(text.split())

    def covers(self, language: str | None) -> bool:
        """Whether claims in ``language`` can be verified (unknown language → no)."""
        return language is not None and language in self.languages

    # -- capabilities (a composite answers for what it is made of) --------------------------

    def combined_members(self) -> Sequence[Verifier]:
        """The verifiers whose predictions this one combines, each prediction carrying
        theirs (a hybrid's members; through a router, its default's); none for one model."""
        return ()

    def span_models(self) -> Sequence[SpanFinder]:
        """The models behind this verifier that mark hallucinated spans of a whole answer:
        itself when it is one (:class:`SpanFinder`), a hybrid's members', a router's
        default's."""
        return [self] if isinstance(self, SpanFinder) else []


@runtime_checkable
class SpanFinder(Protocol):
    """A model that marks the hallucinated spans of an answer (LettuceDetect)."""

    name: str

    def spans(
        self, passages: Sequence[str], answer: str, question: str | None = None
    ) -> list[HallucinatedSpan]:
        """The hallucinated spans of ``answer`` against ``passages``, with offsets into
        ``answer``. Raises ``VerifierError`` on failure."""
        ...


@runtime_checkable
class LanguageRouter(Protocol):
    """A verifier that sends each pair to a verifier reading its language
    (:class:`~guardrail.verifiers.routing.RoutedVerifier`); each prediction names the one
    that made it (:attr:`NLIPrediction.verifier`)."""

    default: Verifier
    routes: Mapping[str, Any]

    def verifier_named(self, name: str) -> Verifier | None:
        """The default or a loaded route called ``name`` (``None`` if none is)."""
        ...
