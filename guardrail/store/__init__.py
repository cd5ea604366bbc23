"""Stored results: every report with its input in SQLite, exported in the stored-results key layout.

``ReportStore`` writes one transaction per report (WAL, schema-versioned); ``open_store`` opens
a file or, given a ``postgresql://`` URL, the same store on PostgreSQL (the ``postgres`` extra);
``export_session`` renders a session as ``/postprocessing/{session_id}/{turn_id}/…`` paths,
nested JSON or MeTTa facts typed by the post-processing signatures.
"""

from __future__ import annotations

from pathlib import Path

from guardrail.store.export import FORMATS, export_session, export_turns
from guardrail.store.keys import nest, render_paths, turn_paths
from guardrail.store.sqlite import (
    DEFAULT_SESSION,
    SCHEMA_VERSION,
    ReportPage,
    ReportStore,
    ReportSummary,
    StoredReport,
    StoreError,
    check_session_id,
    input_record,
)


def open_store(spec: str | Path, create: bool = True) -> ReportStore:
    """The report store ``spec`` names: a ``postgresql://`` URL, else a SQLite file.

    A URL needs ``pip install 'answer-guardrail[postgres]'`` (the error says so when it is missing).
    """
    text = str(spec)
    if text.startswith(("postgresql://", "postgres://")):
        from guardrail.store.postgres import PostgresReportStore

        return PostgresReportStore(text)
    return ReportStore(spec, create=create)


__all__ = [
    "DEFAULT_SESSION",
    "FORMATS",
    "SCHEMA_VERSION",
    "ReportPage",
    "ReportStore",
    "ReportSummary",
    "StoreError",
    "StoredReport",
    "check_session_id",
    "export_session",
    "export_turns",
    "input_record",
    "nest",
    "open_store",
    "render_paths",
    "turn_paths",
]
