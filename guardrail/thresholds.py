"""Which cut-offs a claim is held to: the one function that answers it.

A checked claim meets two cut-offs, both answered by :func:`claim_cutoffs`:

- its **threshold** — the claim is supported at a score at or above it: under the
  ``calibrated`` policy ``hallucination.claim_threshold`` when set, else its calibration's;
  under ``weakest_link`` and ``ratio`` the adaptive threshold T(rs);
- its **remove_below** — (``claim`` granularity) an unsupported claim whose ``p_supported`` is
  below it is a confident problem: ``decision.remove_below`` when set, else its calibration's
  (``None``: every unsupported claim is one).

The calibration is the one the hallucination check scored the claim with: the verifier's
(:func:`~guardrail.hallucination.calibration_registry.calibration_for`), for a claim a router
sent to another verifier that verifier's. The hallucination check records it
(``state.calibration``) and the decision reads that record, so both hold the claim to the same
cut-offs. With no calibration at all (no claim was scored), the one ``hallucination.calibration``
names without a verifier applies
(:func:`~guardrail.hallucination.calibration_registry.configured_calibration`).

Example::

    cut = claim_cutoffs(choice, config.hallucination, retrieval_score)
    supported = p_supported >= cut.threshold
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from guardrail.config import DecisionConfig, HallucinationConfig


class CalibrationCutoffs(Protocol):
    """What a calibration says about cut-offs (a calibration choice, or its record)."""

    @property
    def threshold(self) -> float:
        """The calibration's claim threshold."""

    @property
    def remove_below(self) -> float | None:
        """The calibration's ``remove_below`` (``None``: it sets none)."""


@dataclass(frozen=True)
class ClaimCutoffs:
    """The cut-offs one claim is held to (see the module docstring)."""

    threshold: float
    """Supported at a score (``p_supported``, or entailment under T(rs)) at or above this."""
    remove_below: float | None
    """An unsupported claim with ``p_supported`` below this is a confident problem
    (``None``: every unsupported claim is)."""


def claim_cutoffs(
    calibration: CalibrationCutoffs | None,
    hallucination: HallucinationConfig,
    retrieval_score: float | None = None,
    decision: DecisionConfig | None = None,
) -> ClaimCutoffs:
    """The threshold and ``remove_below`` of a claim scored under ``calibration``.

    Args:
        calibration: the claim's calibration (``None``: the one ``hallucination.calibration``
            names without a verifier — the shipped file by default, none for a directory).
        hallucination: the hallucination settings (``policy``, ``claim_threshold``, T(rs)).
        retrieval_score: ``rs`` for T(rs) (``None`` → its strict end).
        decision: the decision settings, whose ``remove_below`` (when set) replaces the
            calibration's (``None``: the calibration's).
    """
    if calibration is None:
        from guardrail.hallucination.calibration_registry import configured_calibration

        calibration = configured_calibration(hallucination.calibration)
    if hallucination.policy != "calibrated":
        threshold = hallucination.threshold.threshold(retrieval_score)
    elif hallucination.claim_threshold is not None:
        threshold = hallucination.claim_threshold
    else:
        threshold = calibration.threshold
    remove_below = decision.remove_below if decision is not None else None
    if remove_below is None:
        remove_below = calibration.remove_below
    return ClaimCutoffs(threshold, remove_below)
