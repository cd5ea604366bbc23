"""One structured log record per checked answer, without LangSmith (the pipeline's metrics log).

:func:`log_check` writes a single record per :class:`~guardrail.report.GuardReport` to the
``guardrail.check`` logger. Its level follows the recommendation, one level per action: ``accept``
at DEBUG, ``accept_with_flags`` and ``correct_and_deliver`` at INFO, ``regenerate`` at
WARNING, ``human_review`` at ERROR. The fields (:func:`check_fields`) ride on the record as
``record.guardrail`` (a flat, JSON-serialisable dict), so any handler or formatter can ship
them; :class:`JsonFormatter` writes them as one JSON line.

Fields: ``confidence``, ``coherence``, ``factual``, ``hallucinations`` (count),
``recommendation`` (the pipeline's metrics), plus ``verdict``, ``nli_score``, ``threshold``,
``retrieval_score``, the action's detail (``flags`` and ``severity``, ``corrections``,
``guidance`` or ``reason``), ``timings_ms`` per stage and ``total_ms``, ``failed_stages``,
``language``, ``profile``, ``session_id`` and ``turn_id``.

Example::

    logging.basicConfig(level=logging.INFO)
    log_check(Guardrail().invoke(data))
    # WARNING guardrail.check regenerate: confidence 0.41, verdict HALLUCINATION, 2 flags ...
"""

from __future__ import annotations

import json
import logging
from typing import Any

from guardrail.report import (
    AcceptWithFlags,
    Action,
    CorrectAndDeliver,
    GuardReport,
    HumanReview,
    Regenerate,
    StageStatus,
)

LOG_CHECK = "guardrail_log_check"
"""Run-metadata key: ``{LOG_CHECK: False}`` in a check's config keeps ``Guardrail`` from
logging its record (a guarded stream's per-sentence checks; their final check is logged)."""

#: The logger :func:`log_check` writes to by default.
LOGGER_NAME = "guardrail.check"

#: The log level per recommendation.
LEVELS: dict[Action, int] = {
    Action.ACCEPT: logging.DEBUG,
    Action.ACCEPT_WITH_FLAGS: logging.INFO,
    Action.CORRECT_AND_DELIVER: logging.INFO,
    Action.REGENERATE: logging.WARNING,
    Action.HUMAN_REVIEW: logging.ERROR,
}

#: The log message per recommendation.
MESSAGES: dict[Action, str] = {
    Action.ACCEPT: "Response accepted",
    Action.ACCEPT_WITH_FLAGS: "Response accepted with flags",
    Action.CORRECT_AND_DELIVER: "Response corrected before delivery",
    Action.REGENERATE: "Requesting response regeneration",
    Action.HUMAN_REVIEW: "Response escalated for human review",
}


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def check_fields(report: GuardReport) -> dict[str, Any]:
    """The structured fields of one check (flat, JSON-serialisable)."""
    rec = report.recommendation
    fields: dict[str, Any] = {
        "event": "guardrail.check",
        "confidence": _round(report.confidence),
        "coherence": _round(report.coherence.score) if report.coherence else None,
        "factual": _round(report.factual_validation.score) if report.factual_validation else None,
        "hallucinations": len(report.hallucination_flags),
        "recommendation": report.action.value,
        "verdict": report.verdict.label.value,
        "nli_score": _round(report.verdict.nli_score),
        "threshold": _round(report.verdict.threshold),
        "retrieval_score": _round(report.verdict.retrieval_score),
        "claims": len(report.claims),
        "timings_ms": {k: round(v, 3) for k, v in report.timings_ms.items()},
        "total_ms": round(sum(report.timings_ms.values()), 3),
        "failed_stages": [s.name for s in report.stages if s.status is StageStatus.FAILED],
        "language": report.language,
        "profile": report.profile,
        "session_id": report.session_id,
        "turn_id": report.turn_id,
    }
    if isinstance(rec, AcceptWithFlags):
        fields["flags"] = len(rec.flags)
        fields["severity"] = rec.severity.value
    elif isinstance(rec, CorrectAndDeliver):
        fields["corrections"] = len(rec.corrections)
    elif isinstance(rec, Regenerate):
        fields["guidance"] = rec.guidance
    elif isinstance(rec, HumanReview):
        fields["reason"] = rec.reason
    return fields


def _summary(fields: dict[str, Any]) -> str:
    parts = [f"confidence {fields['confidence']:.2f}", f"verdict {fields['verdict']}"]
    parts.append(f"{fields['hallucinations']} hallucination flag(s)")
    for key in ("flags", "corrections"):
        if key in fields:
            parts.append(f"{fields[key]} {key}")
    for key in ("guidance", "reason"):
        if fields.get(key):
            parts.append(f"{key}: {fields[key]}")
    return ", ".join(parts)


def log_check(
    report: GuardReport,
    logger: logging.Logger | None = None,
    **context: Any,
) -> dict[str, Any]:
    """Log ONE structured record for a checked answer, at the level for its action.

    Args:
        report: the check's report.
        logger: where to log (``logging.getLogger("guardrail.check")`` by default).
        context: extra fields for the record (e.g. ``run_id``, ``request_id``).

    Returns the record's fields (also on the record as ``record.guardrail``).
    """
    log = logger or logging.getLogger(LOGGER_NAME)
    fields = {**check_fields(report), **context}
    level = LEVELS[report.action]
    if log.isEnabledFor(level):
        message = f"{MESSAGES[report.action]} ({report.action.value}): {_summary(fields)}"
        log.log(level, message, extra={"guardrail": fields})
    return fields


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON line: time, level, logger, message and the check fields."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "guardrail", None)
        if isinstance(fields, dict):
            data.update(fields)
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str, ensure_ascii=False)
