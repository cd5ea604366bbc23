"""Map a classifier's output columns onto the three NLI labels, read from its ``id2label``.

Label order is never assumed: every backend builds a :class:`LabelMap` from the model's
configuration and folds the model's probabilities into (entailment, neutral, contradiction).

Names are matched case-insensitively, ignoring ``-``, ``_`` and spaces, with common synonyms
(``SUPPORTS`` / ``REFUTES`` / ``NOT ENOUGH INFO`` of fact-verification models and so on).

Two-label models (entailment vs. not-entailment, as trained on RTE or DocNLI) say nothing
about contradiction, so the whole "not entailed" probability goes to ``neutral`` and
``contradiction`` stays 0. A two-label model with "contradiction" vs. "not contradiction"
puts the "not contradiction" mass on ``neutral`` likewise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from guardrail.errors import ModelLoadError
from guardrail.verifiers.base import NLIPrediction

ENTAILMENT, NEUTRAL, CONTRADICTION = 0, 1, 2

_SYNONYMS: dict[str, int] = {}
for _names, _target in (
    (
        ("entailment", "entail", "entails", "entailed", "supports", "supported", "support"),
        ENTAILMENT,
    ),
    (
        (
            "neutral",
            "notenoughinfo",
            "nei",
            "unknown",
            "notentailment",
            "nonentailment",
            "notentailed",
            "notcontradiction",
            "noncontradiction",
        ),
        NEUTRAL,
    ),
    (
        (
            "contradiction",
            "contradict",
            "contradicts",
            "contradictory",
            "contradicted",
            "refutes",
            "refuted",
            "refute",
        ),
        CONTRADICTION,
    ),
):
    for _name in _names:
        _SYNONYMS[_name] = _target


def _normalise_name(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


@dataclass(frozen=True)
class LabelMap:
    """``targets[j]`` is the NLI label (0 = entailment, 1 = neutral, 2 = contradiction) that
    output column ``j`` of the model counts towards."""

    targets: tuple[int, ...]
    names: tuple[str, ...]

    @classmethod
    def from_id2label(cls, id2label: Mapping[int | str, str], source: str = "model") -> LabelMap:
        """Build the map from a config's ``id2label``; raises ``ModelLoadError`` if unusable."""
        if not id2label:
            raise ModelLoadError(f"{source} has no id2label in its config.json")
        try:
            items = sorted((int(k), str(v)) for k, v in id2label.items())
        except (TypeError, ValueError) as exc:
            raise ModelLoadError(f"{source}: id2label keys must be integers: {exc}") from exc
        if [i for i, _ in items] != list(range(len(items))):
            raise ModelLoadError(f"{source}: id2label ids must be 0..n-1, got {dict(items)}")
        names = tuple(name for _, name in items)
        targets: list[int] = []
        for name in names:
            target = _SYNONYMS.get(_normalise_name(name))
            if target is None:
                raise ModelLoadError(
                    f"{source}: cannot tell which NLI label {name!r} is (id2label={dict(items)}); "
                    "name the labels entailment / neutral / contradiction in config.json"
                )
            targets.append(target)
        if ENTAILMENT not in targets and len(names) != 3:
            raise ModelLoadError(f"{source}: no entailment label in id2label={dict(items)}")
        if len(names) == 3 and sorted(targets) != [0, 1, 2]:
            raise ModelLoadError(f"{source}: labels {names} do not name three distinct NLI labels")
        if len(names) not in (2, 3):
            raise ModelLoadError(f"{source}: expected 2 or 3 labels, got {len(names)}: {names}")
        return cls(tuple(targets), names)

    @property
    def num_labels(self) -> int:
        return len(self.targets)

    def fold(self, probs: np.ndarray) -> np.ndarray:
        """Model probabilities ``(n, num_labels)`` → NLI probabilities ``(n, 3)``."""
        if probs.ndim != 2 or probs.shape[1] != self.num_labels:
            raise ValueError(f"expected probabilities of shape (n, {self.num_labels})")
        out = np.zeros((probs.shape[0], 3), dtype=np.float64)
        for column, target in enumerate(self.targets):
            out[:, target] += probs[:, column]
        return out

    def predictions(self, logits: np.ndarray) -> list[NLIPrediction]:
        """Logits ``(n, num_labels)`` → one :class:`NLIPrediction` per row (softmax, fold)."""
        return to_predictions(self.fold(softmax(logits)))


def softmax(logits: np.ndarray) -> np.ndarray:
    """Numerically stable softmax over the last axis, in float64."""
    x = np.asarray(logits, dtype=np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    result: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return result


def to_predictions(probs: np.ndarray | Sequence[Sequence[float]]) -> list[NLIPrediction]:
    """Rows of (entailment, neutral, contradiction) probabilities → predictions."""
    rows = np.asarray(probs, dtype=np.float64).reshape(-1, 3)
    return [
        NLIPrediction(entailment=float(e), neutral=float(n), contradiction=float(c))
        for e, n, c in rows
    ]
