"""A scripted verifier: label scores decided in advance, for fast tests without a model.

:class:`ScriptedVerifier` implements the :class:`~guardrail.verifiers.base.Verifier` contract
(it passes ``tests/verifier_conformance.py``) but looks its answers up in a script instead of
running a model, so the detector, the date rule and the per-claim fallback can be unit-tested
in milliseconds and with exact scores.

A script entry is ``(premise, hypothesis) -> scores``. ``premise`` may be ``None`` (any
premise) or a fragment that must occur in the premise (evidence windows are long; name the
sentence that matters). Scores are an :class:`NLIPrediction`, a ``(entailment, neutral,
contradiction)`` tuple, or one of the label names ``"entailment"``, ``"neutral"``,
``"contradiction"`` (0.96 on that label, 0.02 on the others). The first matching entry wins,
exact premises before fragments; a pair nothing matches gets ``default``.

Example::

    verifier = ScriptedVerifier(
        {
            ("founded in 1990", "Orvik was founded in 1990."): "entailment",
            (None, "Orvik has 900 staff."): (0.05, 0.15, 0.80),
        },
        fail_on={"A claim that breaks the model."},
    )
    verifier.predict([("Orvik was founded in 1990 in Lyon.", "Orvik was founded in 1990.")])
    verifier.calls          # the pairs of every predict call, in order
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence

from guardrail.errors import VerifierError
from guardrail.verifiers.base import NLIPrediction, Pair, Verifier
from guardrail.verifiers.encoding import check_pairs

__all__ = ["LABEL_SCORES", "Scores", "ScriptedVerifier"]

Scores = NLIPrediction | tuple[float, float, float] | str

LABEL_SCORES: dict[str, tuple[float, float, float]] = {
    "entailment": (0.96, 0.02, 0.02),
    "neutral": (0.02, 0.96, 0.02),
    "contradiction": (0.02, 0.02, 0.96),
}
"""The scores a label name in a script stands for."""


def as_prediction(scores: Scores) -> NLIPrediction:
    """An :class:`NLIPrediction` from any accepted form of scores (``VerifierError`` if bad)."""
    if isinstance(scores, NLIPrediction):
        return scores
    if isinstance(scores, str):
        if scores not in LABEL_SCORES:
            raise VerifierError(f"unknown label {scores!r}; use one of {', '.join(LABEL_SCORES)}")
        scores = LABEL_SCORES[scores]
    try:
        e, n, c = (float(x) for x in scores)
        return NLIPrediction(entailment=e, neutral=n, contradiction=c)
    except (TypeError, ValueError) as exc:
        raise VerifierError(f"bad scripted scores {scores!r}: {exc}") from exc


class ScriptedVerifier(Verifier):
    """Returns scripted label scores for (premise, hypothesis) pairs.

    Args:
        script: ``(premise | premise fragment | None, hypothesis) -> scores`` (see the module).
        default: scores of pairs the script does not match (default: neutral).
        fail_on: hypotheses that make ``predict`` raise ``VerifierError`` for the whole call
            (to exercise the per-claim fallback).
        name: recorded in reports.
        languages: languages ``covers`` accepts.
        max_tokens: the pair length limit it reports (windows are sized by it).
        calibration_id: ``"shipped"`` (default): a script stands in for the bundled model, so
            its claims go through the shipped calibration; ``None``: keyed by ``name`` like any
            other verifier (uncalibrated unless a calibration names it).
    """

    def __init__(
        self,
        script: Mapping[tuple[str | None, str], Scores] | None = None,
        *,
        default: Scores = "neutral",
        fail_on: Iterable[str] = (),
        name: str = "scripted",
        languages: tuple[str, ...] = ("en",),
        max_tokens: int = 512,
        calibration_id: str | None = "shipped",
    ) -> None:
        self.name = name
        self.calibration_id = calibration_id
        self.languages = tuple(languages)
        self.max_tokens = max_tokens
        self.default = as_prediction(default)
        self.fail_on = frozenset(fail_on)
        entries = [(p, h, as_prediction(s)) for (p, h), s in (script or {}).items()]
        self._exact = {(p, h): s for p, h, s in entries if p is not None}
        self._loose = [(p, h, s) for p, h, s in entries]
        self._lock = threading.Lock()
        self._calls: list[list[Pair]] = []

    @property
    def calls(self) -> list[list[Pair]]:
        """The pairs of each ``predict`` call so far (a copy)."""
        with self._lock:
            return [list(c) for c in self._calls]

    @property
    def pairs_scored(self) -> int:
        """Pairs over all calls."""
        with self._lock:
            return sum(len(c) for c in self._calls)

    def score(self, premise: str, hypothesis: str) -> NLIPrediction:
        """The scripted prediction of one pair."""
        exact = self._exact.get((premise, hypothesis))
        if exact is not None:
            return exact
        for fragment, hyp, scores in self._loose:
            if hyp == hypothesis and (fragment is None or fragment in premise):
                return scores
        return self.default

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        pairs = check_pairs(pairs)
        with self._lock:
            self._calls.append(list(pairs))
        broken = sorted({h for _, h in pairs if h in self.fail_on})
        if broken:
            raise VerifierError(f"scripted failure for hypothesis {broken[0]!r}")
        return [self.score(p, h) for p, h in pairs]
