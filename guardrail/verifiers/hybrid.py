"""Hybrid verification: several verifiers, a documented rule, automatic fallback.

``verifier: ["hhem-2.1-open", "bundled"]`` scores every pair with each member and combines
them; a member that fails to load is dropped for the process, one that fails to answer is
dropped for that call, each with a warning, and the others decide. When every member fails
the call raises :class:`VerifierError`, so the claim stays unverified (fail-closed, as with a
single verifier).

Rule (in full in :mod:`guardrail.hallucination.calibration_registry`): each pair's
prediction is a :class:`HybridPrediction`, the mean of the members' probabilities label by
label — ``entailment`` is the mean supported-probability; a 2-way member (contradiction 0)
halves the contradiction of a 3-way one, so a contradiction reported by the NLI member still
shows, weakened — carrying each answering member's own prediction. When every member that
answered has a claim calibration of its own, a claim's ``p_supported`` is the mean of the
members' calibrated probabilities (each from that member's own predictions); else it comes from
the mean prediction.

Which members decided travels with each prediction (:attr:`HybridPrediction.members` and
``dropped``), so it is right under threads, ``abatch`` and the score cache alike;
:func:`usage_of` reads it back, and the hallucination stage names them in ``verdict.method``
(``decided by hhem-2.1-open, bundled`` / ``fallback: ... dropped``).

Example::

    v = load_verifier(["hhem-2.1-open", "bundled"])
    usage = usage_of(v.predict([("It rained.", "The ground is wet.")]))
    usage.decided                    # ['bundled'] when HHEM is not on this machine
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field

from guardrail.errors import ModelLoadError, VerifierError
from guardrail.verifiers.base import NLIPrediction, Pair, SpanFinder, Verifier
from guardrail.verifiers.labels import to_predictions

logger = logging.getLogger(__name__)


@dataclass
class VerifierUsage:
    """Which members of a hybrid answered, and which were dropped (:func:`usage_of`)."""

    decided: list[str] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)
    """Member name → why it was dropped (load or call failure)."""

    def describe(self) -> str | None:
        """``decided by A, B`` (+ ``fallback: C dropped (reason)``), or ``None`` if unused."""
        if not self.decided and not self.dropped:
            return None
        text = "decided by " + (", ".join(self.decided) or "none")
        if self.dropped:
            gone = "; ".join(f"{k} dropped ({v})" for k, v in self.dropped.items())
            text += f"; fallback: {gone}"
        return text


class HybridPrediction(NLIPrediction):
    """The members' mean prediction of one pair, with each answering member's own, by name,
    and why the others were dropped (both left out of dumps: the report shows the
    combination). This is the one record of which members answered."""

    members: dict[str, NLIPrediction] = Field(default_factory=dict, exclude=True)
    dropped: dict[str, str] = Field(default_factory=dict, exclude=True)
    """Member name → why it did not answer (``not loaded: ...`` / ``failed: ...``)."""


def usage_of(predictions: Iterable[NLIPrediction]) -> VerifierUsage:
    """Which hybrid members answered any of ``predictions`` (in member order) and which were
    dropped; empty when none is a hybrid's."""
    usage = VerifierUsage()
    for p in predictions:
        if not isinstance(p, HybridPrediction):
            continue
        usage.decided += [name for name in p.members if name not in usage.decided]
        usage.dropped.update(p.dropped)
    return usage


def answered_members(predictions: Iterable[NLIPrediction]) -> list[str]:
    """The members whose own prediction every one of ``predictions`` carries (in member
    order); none when one of them is not a hybrid's."""
    names: list[str] | None = None
    for p in predictions:
        if not isinstance(p, HybridPrediction):
            return []
        names = [n for n in (p.members if names is None else names) if n in p.members]
    return names or []


class HybridVerifier(Verifier):
    """Several verifiers combined (see the module docstring), with fallback.

    The members are built by the loader (:func:`~guardrail.verifiers.loader.load_verifier`
    with a list of specs); this class only combines them.

    Args:
        members: the verifiers that loaded (at least one).
        load_failures: member name → why it did not load (``not loaded: ModelLoadError``),
            named in every call's fallback note.
        name: the hybrid's name (default ``hybrid(A, B)`` from the members' names; the loader
            names the members as configured, failed ones included).
    """

    def __init__(
        self,
        members: Sequence[Verifier],
        *,
        load_failures: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if len(members) < 1:
            raise ModelLoadError("a hybrid verifier needs at least one member")
        self.members: list[Verifier] = list(members)
        self.load_failures: dict[str, str] = dict(load_failures or {})
        self.name = name or "hybrid(" + ", ".join(m.name for m in self.members) + ")"
        covered: list[str] = []
        for m in self.members:
            covered += [lang for lang in m.languages if lang not in covered]
        self.languages = tuple(covered)
        self.max_tokens = min(m.max_tokens for m in self.members)

    def count_tokens(self, text: str) -> int:
        return max(m.count_tokens(text) for m in self.members)

    def covers(self, language: str | None) -> bool:
        return any(m.covers(language) for m in self.members)

    def combined_members(self) -> Sequence[Verifier]:
        return list(self.members)

    def span_models(self) -> Sequence[SpanFinder]:
        return [s for m in self.members for s in m.span_models()]

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        pairs = list(pairs)
        if not pairs:
            return []
        rows: list[np.ndarray] = []
        answers: list[list[NLIPrediction]] = []
        decided: list[str] = []
        dropped = dict(self.load_failures)
        for member in self.members:
            try:
                preds = member.predict(pairs)
                if len(preds) != len(pairs):
                    raise VerifierError(f"{len(preds)} predictions for {len(pairs)} pairs")
            except Exception as exc:  # noqa: BLE001 - fallback: the others decide
                logger.warning(
                    "hybrid verifier: %s failed, dropped for this call: %s", member.name, exc
                )
                dropped[member.name] = f"failed: {type(exc).__name__}"
                continue
            rows.append(np.array([[p.entailment, p.neutral, p.contradiction] for p in preds]))
            answers.append(preds)
            decided.append(member.name)
        if not rows:
            reasons = "; ".join(f"{k}: {v}" for k, v in dropped.items())
            raise VerifierError(f"every member of {self.name} failed ({reasons})")
        means = to_predictions(np.mean(np.stack(rows), axis=0))
        return [
            HybridPrediction(
                **mean.model_dump(),
                members={n: a[i] for n, a in zip(decided, answers, strict=True)},
                dropped=dropped,
            )
            for i, mean in enumerate(means)
        ]
