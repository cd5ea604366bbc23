"""Batch audit of logged answers: check a day of RAG turns in bulk, locally or on Ray.

::

    from pathlib import Path
    from guardrail.audit import AuditOptions, run_audit

    summary = run_audit(AuditOptions(input=Path("turns.jsonl"), out=Path("audit"), workers=2))
    summary["actions"]          # {"accept": 812, "regenerate": 40, ...}

Or from the shell: ``guardrail audit turns.jsonl --out audit [--engine ray] [--resume]``.
Modules: :mod:`~guardrail.audit.rows` (JSONL / Parquet readers, row keys),
:mod:`~guardrail.audit.langsmith` (runs exports), :mod:`~guardrail.audit.results` (result rows,
durable parts), :mod:`~guardrail.audit.local` (process pool), :mod:`~guardrail.audit.ray_engine`
(Ray Data), :mod:`~guardrail.audit.summary` (summary.json, report.md),
:mod:`~guardrail.audit.runner` (resume and orchestration). Nothing heavy is imported here.
"""

from __future__ import annotations

from guardrail.audit.rows import AuditRow, RowError, read_rows
from guardrail.audit.runner import AuditOptions, run_audit

__all__ = ["AuditOptions", "AuditRow", "RowError", "read_rows", "run_audit"]
