"""Which claim calibration belongs to which verifier: calibration follows the verifier.

A claim calibration (:class:`~guardrail.hallucination.calibration.ClaimCalibrator`) is fitted
on one verifier's scores; applied to another it is silently wrong. Each calibration file
names its verifier in ``meta`` — ``verifier_id`` (the verifier's ``name``: a preset name,
``guardrail-nli-v2`` …) and/or ``verifier_model_sha256_16`` (the first 16 hex digits of the
SHA-256 of its ``model.onnx``) — and :func:`calibration_for` picks the file of the verifier in
use:

1. ``hallucination.calibration`` set to a file: that file (the user's choice; a warning when
   its ``meta`` names another verifier); set to a directory: the file in it keyed by the
   verifier;
2. else the calibration shipped with the package, when it was fitted for this verifier (the
   bundled model, matched by its SHA-256), or one in ``hallucination/data/calibrations/``
   keyed by the verifier's name;
3. else **uncalibrated**: ``p_supported`` is the verifier's own probability of support (its
   best window's entailment) against the verifier's documented threshold (0.5 unless its
   authors say otherwise; :attr:`VerifierPreset.threshold`), and ``verdict.method`` says
   ``uncalibrated``.

A hybrid verifier (:mod:`guardrail.verifiers.hybrid`) is combined by this rule:

- **calibrated combination** (the default): when every member that answered the call has a
  calibration of its own (found as above, member by member), a claim's ``p_supported`` is the
  mean of the members' calibrated probabilities, each computed from that member's own
  predictions (:func:`combined_probability`); the claim threshold and ``remove_below`` are
  the means of the members' (``remove_below`` only when each has one). ``verdict.method``:
  ``calibrated combination (mean p_supported of A: calibration a.json, B: ...)``;
- else the **mean of supported-probabilities**: the members' mean prediction is scored as
  one verifier's (a file for the hybrid itself, keyed by its name ``hybrid(A, B)``, else
  uncalibrated), and ``verdict.method`` says ``mean of supported-probabilities; ...``. A
  configured calibration *file* is the user's choice for the hybrid as a whole: this rule.

Routed claims (:mod:`guardrail.verifiers.routing`): a claim the router sent to a verifier
other than its default takes that verifier's calibration for the claim's language — a file
whose ``meta`` names the verifier and, if it names one, that ``language``
(``calibrate-claims --language zh``); a configured file only when fitted for that verifier —
else it is uncalibrated, and its reason and ``verdict.method`` say so.

``guardrail calibrate-claims`` writes such files (:mod:`guardrail.evaluation.claim_calibration`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from guardrail.errors import VerifierError
from guardrail.hallucination.calibration import BUNDLED, ClaimCalibrator
from guardrail.verifiers.base import NLIPrediction, Verifier
from guardrail.verifiers.hybrid import HybridPrediction

logger = logging.getLogger(__name__)

CALIBRATIONS_DIR = Path(__file__).with_name("data") / "calibrations"
"""Calibrations shipped for verifiers other than the bundled one, keyed by ``verifier_id``."""

UNCALIBRATED_THRESHOLD = 0.5


@dataclass(frozen=True)
class CalibrationChoice:
    """The calibration used for one verifier (``calibrator`` ``None`` = uncalibrated)."""

    calibrator: ClaimCalibrator | None
    threshold: float
    label: str
    """For ``verdict.method``: ``calibration <file>`` or ``uncalibrated (threshold 0.5)``."""
    remove_below: float | None = None
    members: tuple[tuple[str, CalibrationChoice], ...] = ()
    """A hybrid's calibrated combination: each answering member's own calibration, by member
    name (then ``calibrator`` is ``None``; see :func:`combined_probability`)."""


@lru_cache(maxsize=16)
def _sha16(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def model_sha16(folder: Path) -> str | None:
    """SHA-256 (16 hex digits) of ``folder/model.onnx``, cached per file version."""
    model = folder / "model.onnx"
    if not model.is_file():
        return None
    st = model.stat()
    return _sha16(str(model), st.st_size, st.st_mtime_ns)


SHIPPED = "shipped"
"""A verifier whose ``calibration_id`` is this uses the shipped calibration (a test double
standing in for the bundled model, such as ``ScriptedVerifier``)."""


def verifier_id(verifier: Any) -> str:
    """The key of a verifier's calibration: its ``calibration_id`` if it has one, else its
    ``name`` (stable, never an install path)."""
    key = getattr(verifier, "calibration_id", None)
    return str(key or getattr(verifier, "name", None) or type(verifier).__name__)


def _verifier_sha(verifier: Any) -> str | None:
    folder = getattr(verifier, "model_dir", None)
    if folder is None and verifier_id(verifier) == _bundled_name():
        from guardrail.verifiers import bundled_dir

        folder = bundled_dir()
    return model_sha16(Path(folder)) if folder is not None else None


@lru_cache(maxsize=1)
def _bundled_name() -> str | None:
    from guardrail.verifiers import bundled_dir

    try:
        config = json.loads((bundled_dir() / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = config.get("name_or_path")
    return str(name) if name else None


def fitted_for(calibrator: ClaimCalibrator, verifier: Any, language: str | None = None) -> bool:
    """Whether ``calibrator``'s ``meta`` names ``verifier`` (by id, else by model SHA) and, when
    it names a ``language``, that it is ``language``."""
    meta = calibrator.meta
    if meta.get("language") is not None and str(meta["language"]) != (language or ""):
        return False
    if meta.get("verifier_id") is not None:
        return str(meta["verifier_id"]) == verifier_id(verifier)
    sha = meta.get("verifier_model_sha256_16")
    return sha is not None and sha == _verifier_sha(verifier)


def _candidates(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def calibration_for(
    verifier: Any,
    configured: str | None = None,
    default_threshold: float | None = None,
    answered: Sequence[str] | None = None,
    language: str | None = None,
) -> CalibrationChoice:
    """The calibration of ``verifier`` (see the module docstring for the order and a
    hybrid's rule) for claims in ``language``.

    Args:
        verifier: the verifier in use (its ``name``; a preset's ``preset.threshold``).
        configured: ``hallucination.calibration`` (a file, a directory or ``None``).
        default_threshold: the uncalibrated threshold (default: the verifier's documented
            one, else 0.5).
        answered: for a hybrid, the members that answered the call
            (:func:`~guardrail.verifiers.hybrid.answered_members`; ``None`` = every loaded one).
        language: the claims' language, for a verifier other than the default that a router
            chose (see the module docstring); ``None`` = any.
    """
    combined = verifier.combined_members() if isinstance(verifier, Verifier) else ()
    if not combined:
        return _single(verifier, configured, default_threshold, language)
    members = [m for m in combined if answered is None or m.name in answered]
    if members and (configured is None or Path(configured).is_dir()):
        own = [(m.name, _single(m, configured, None, language)) for m in members]
        if all(choice.calibrator is not None for _, choice in own):
            return _combined(own)
    whole = _single(verifier, configured, default_threshold, language)
    return replace(whole, label=f"{MEAN_RULE}; {whole.label}")


MEAN_RULE = "mean of supported-probabilities"


def _combined(own: Sequence[tuple[str, CalibrationChoice]]) -> CalibrationChoice:
    """The calibrated combination of a hybrid's members (each with its own calibration)."""
    cuts = [c.remove_below for _, c in own if c.remove_below is not None]
    return CalibrationChoice(
        None,
        round(sum(c.threshold for _, c in own) / len(own), 4),
        "calibrated combination (mean p_supported of "
        + ", ".join(f"{name}: {c.label}" for name, c in own)
        + ")",
        round(sum(cuts) / len(cuts), 4) if len(cuts) == len(own) else None,
        tuple(own),
    )


def combined_probability(
    choice: CalibrationChoice,
    predictions: Sequence[NLIPrediction],
    features: Callable[[Sequence[NLIPrediction]], dict[str, float]],
) -> float:
    """A claim's ``p_supported`` under a hybrid's calibrated combination: the mean over the
    members of ``choice`` of each one's calibrated probability, from its own predictions.

    Args:
        predictions: the claim's hybrid predictions, one per window.
        features: the calibration features of a list of predictions (one per window).
    """
    own = [
        cal.calibrator.probability(features([_member(p, name) for p in predictions]))
        for name, cal in choice.members
        if cal.calibrator is not None
    ]
    if not own:
        raise VerifierError("a calibrated combination needs members with calibrations")
    return sum(own) / len(own)


def _member(prediction: NLIPrediction, name: str) -> NLIPrediction:
    if not isinstance(prediction, HybridPrediction) or name not in prediction.members:
        raise VerifierError(f"no prediction of hybrid member {name} to combine")
    return prediction.members[name]


def configured_file(configured: str | None) -> Path | None:
    """The calibration file ``hallucination.calibration`` names: the path itself unless it
    is ``None`` or a directory (whose files are keyed by verifier). The one reading of a
    configured path, for :func:`calibration_for` and :func:`configured_calibration`."""
    if configured is None or Path(configured).is_dir():
        return None
    return Path(configured)


def configured_calibration(configured: str | None) -> CalibrationChoice:
    """The calibration ``hallucination.calibration`` names when no verifier is known: its
    file, the shipped one for ``None``, uncalibrated for a directory (only a verifier picks
    a file there, :func:`calibration_for`)."""
    file = configured_file(configured)
    if file is not None:
        return _choice(ClaimCalibrator.load(file), file.name)
    if configured is None:
        return _choice(ClaimCalibrator.load(BUNDLED), BUNDLED.name)
    return _uncalibrated(UNCALIBRATED_THRESHOLD)


def _single(
    verifier: Any,
    configured: str | None = None,
    default_threshold: float | None = None,
    language: str | None = None,
) -> CalibrationChoice:
    """The calibration of one verifier, by the order of the module docstring."""
    file = configured_file(configured)
    if language is not None and file is not None:
        # A routed verifier takes a configured *file* only when it was fitted for it.
        cal = ClaimCalibrator.load(file)
        if fitted_for(cal, verifier, language):
            return _choice(cal, file.name)
        configured = file = None
    if file is not None:
        cal = ClaimCalibrator.load(file)
        if cal.meta.get("verifier_id") is not None and not fitted_for(cal, verifier):
            logger.warning(
                "claim calibration %s was fitted for %s, not %s",
                configured,
                cal.meta.get("verifier_id"),
                verifier_id(verifier),
            )
        return _choice(cal, file.name)
    folders = [Path(configured)] if configured is not None else []
    if configured is None:
        shipped = ClaimCalibrator.load(BUNDLED)
        if getattr(verifier, "calibration_id", None) == SHIPPED or fitted_for(
            shipped, verifier, language
        ):
            return _choice(shipped, BUNDLED.name)
        folders.append(CALIBRATIONS_DIR)
    for folder in folders:
        found = [(path, ClaimCalibrator.load(path)) for path in _candidates(folder)]
        # one fitted for the claims' language first, then one for any language
        found.sort(key=lambda item: item[1].meta.get("language") is None)
        for path, cal in found:
            if fitted_for(cal, verifier, language):
                return _choice(cal, path.name)
    preset = getattr(verifier, "preset", None)
    threshold = default_threshold or float(getattr(preset, "threshold", UNCALIBRATED_THRESHOLD))
    return _uncalibrated(threshold)


def _uncalibrated(threshold: float) -> CalibrationChoice:
    return CalibrationChoice(None, threshold, f"uncalibrated (threshold {threshold:g})")


def _choice(cal: ClaimCalibrator, name: str) -> CalibrationChoice:
    return CalibrationChoice(cal, cal.threshold, f"calibration {name}", cal.remove_below)
