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

``guardrail calibrate-claims`` writes such files (:mod:`guardrail.evaluation.claim_calibration`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from guardrail.hallucination.calibration import BUNDLED, ClaimCalibrator

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


def fitted_for(calibrator: ClaimCalibrator, verifier: Any) -> bool:
    """Whether ``calibrator``'s ``meta`` names ``verifier`` (by id, else by model SHA)."""
    meta = calibrator.meta
    if meta.get("verifier_id") is not None:
        return str(meta["verifier_id"]) == verifier_id(verifier)
    sha = meta.get("verifier_model_sha256_16")
    return sha is not None and sha == _verifier_sha(verifier)


def _candidates(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def calibration_for(
    verifier: Any, configured: str | None = None, default_threshold: float | None = None
) -> CalibrationChoice:
    """The calibration of ``verifier`` (see the module docstring for the order).

    Args:
        verifier: the verifier in use (its ``name``; a preset's ``preset.threshold``).
        configured: ``hallucination.calibration`` (a file, a directory or ``None``).
        default_threshold: the uncalibrated threshold (default: the verifier's documented
            one, else 0.5).
    """
    if configured is not None and not Path(configured).is_dir():
        cal = ClaimCalibrator.load(configured)
        if cal.meta.get("verifier_id") is not None and not fitted_for(cal, verifier):
            logger.warning(
                "claim calibration %s was fitted for %s, not %s",
                configured,
                cal.meta.get("verifier_id"),
                verifier_id(verifier),
            )
        return _choice(cal, Path(configured).name)
    folders = [Path(configured)] if configured is not None else []
    if configured is None:
        shipped = ClaimCalibrator.load(BUNDLED)
        if getattr(verifier, "calibration_id", None) == SHIPPED or fitted_for(shipped, verifier):
            return _choice(shipped, BUNDLED.name)
        folders.append(CALIBRATIONS_DIR)
    for folder in folders:
        for path in _candidates(folder):
            cal = ClaimCalibrator.load(path)
            if fitted_for(cal, verifier):
                return _choice(cal, path.name)
    preset = getattr(verifier, "preset", None)
    threshold = default_threshold or float(getattr(preset, "threshold", UNCALIBRATED_THRESHOLD))
    return CalibrationChoice(None, threshold, f"uncalibrated (threshold {threshold:g})")


def _choice(cal: ClaimCalibrator, name: str) -> CalibrationChoice:
    return CalibrationChoice(cal, cal.threshold, f"calibration {name}", cal.remove_below)
