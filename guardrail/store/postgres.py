"""The report store on PostgreSQL, so several service processes (and machines) share one store.

The same ``reports`` table as the SQLite file (column for column, the same unique key) and the
same :class:`~guardrail.store.sqlite.ReportStore` contract: it subclasses it and runs the same
reading queries, so listings, ``turns`` and the key-layout export are identical. The schema
version lives in ``guardrail_store_meta``. Every :meth:`PostgresReportStore.save` is one
transaction that first takes a per-session advisory lock, so two processes writing to one
session get distinct turns and attempts; a writer killed mid-transaction leaves nothing behind.
Needs the ``postgres`` extra (``psycopg``), imported when a store is opened.

Example::

    store = open_store("postgresql://guardrail@db.internal:5432/guardrail")
    store.save(guard_input, report).turn_id
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from guardrail.errors import MissingDependencyError
from guardrail.inputs import GuardInput
from guardrail.report import GuardReport
from guardrail.store.sqlite import (
    INSERT,
    SCHEMA_VERSION,
    ReportStore,
    StoredReport,
    StoreError,
    build_stored,
    insert_values,
    next_key,
    resolve_key,
)

logger = logging.getLogger(__name__)

URL_SCHEMES = ("postgresql://", "postgres://")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS reports (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL,
    turn_id INTEGER NOT NULL CHECK (turn_id >= 0),
    attempt INTEGER NOT NULL CHECK (attempt >= 1),
    created_at DOUBLE PRECISION NOT NULL,
    action TEXT NOT NULL,
    verdict TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    query TEXT NOT NULL,
    response TEXT NOT NULL,
    input_json TEXT NOT NULL,
    report_json TEXT NOT NULL,
    UNIQUE (session_id, turn_id, attempt)
);
CREATE INDEX IF NOT EXISTS idx_reports_created ON reports(created_at);
CREATE INDEX IF NOT EXISTS idx_reports_action ON reports(action, created_at);
CREATE INDEX IF NOT EXISTS idx_reports_verdict ON reports(verdict, created_at);
CREATE TABLE IF NOT EXISTS guardrail_store_meta (schema_version INTEGER NOT NULL)
"""
#: Advisory-lock key held while the schema is created (two processes starting at once).
_SCHEMA_LOCK = 0x6775617264


def is_postgres_url(spec: str) -> bool:
    """Whether a ``--store`` value names a PostgreSQL server rather than a file."""
    return spec.startswith(URL_SCHEMES)


def redact(url: str) -> str:
    """The URL without its password (for messages, logs and ``/readyz``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _psycopg() -> Any:
    try:
        import psycopg
    except ModuleNotFoundError as exc:
        raise MissingDependencyError("psycopg", "postgres") from exc
    return psycopg


class PostgresReportStore(ReportStore):
    """Reports in a PostgreSQL database (the table is created when missing).

    Args:
        url: ``postgresql://user[:password]@host[:port]/database``.
        timeout: seconds to wait for a connection.
    """

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self._pg = _psycopg()
        self.url = url
        self.timeout = timeout
        try:
            with self._connect() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                    conn.execute(statement)
                row = conn.execute("SELECT MAX(schema_version) FROM guardrail_store_meta")
                version = row.fetchone()[0]
                if version is None:
                    conn.execute("INSERT INTO guardrail_store_meta VALUES (%s)", (SCHEMA_VERSION,))
                elif int(version) > SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.where} has report-store schema {version}; this guardrail reads "
                        f"up to {SCHEMA_VERSION}: upgrade guardrail"
                    )
        except self._pg.Error as exc:
            raise StoreError(f"cannot open report store {self.where}: {exc}") from exc

    @property
    def where(self) -> str:
        """The server and database (the URL without its password)."""
        return redact(self.url)

    @contextmanager
    def _connect(self) -> Iterator[Any]:  # type: ignore[override]
        """One connection, one transaction: committed when the block ends, else rolled back."""
        with self._pg.connect(self.url, connect_timeout=max(1, int(self.timeout))) as conn:
            yield conn

    def save(
        self,
        data: GuardInput | dict[str, Any],
        report: GuardReport,
        *,
        session_id: str | None = None,
        turn_id: int | None = None,
    ) -> StoredReport:
        """Store one check in one transaction (see :meth:`ReportStore.save`)."""
        inp, session, turn = resolve_key(data, report, session_id, turn_id)
        created = time.time()
        try:
            with self._connect() as conn:
                # Writers of one session take turns; other sessions are not held up.
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (session,))
                turn, attempt = next_key(conn, session, turn, "%s")
                stored = build_stored(inp, report, session, turn, attempt, created)
                self._insert(conn, stored, created)
        except self._pg.Error as exc:
            raise StoreError(f"could not write to report store {self.where}: {exc}") from exc
        return stored

    def _insert(self, conn: Any, stored: StoredReport, created: float) -> None:
        conn.execute(INSERT, insert_values(stored, created))

    def _query(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        """Run one of :class:`ReportStore`'s reading queries (``?`` placeholders) here."""
        try:
            with self._connect() as conn:
                return list(conn.execute(sql.replace("?", "%s"), params).fetchall())
        except self._pg.Error as exc:
            raise StoreError(f"could not read report store {self.where}: {exc}") from exc

    def integrity_check(self) -> str:
        """``ok`` when the server answers and every row's JSON parses (the SQLite
        ``PRAGMA integrity_check`` counterpart), else what is wrong."""
        rows = self._query("SELECT id, input_json, report_json FROM reports", [])
        import json

        for row_id, input_json, report_json in rows:
            try:
                json.loads(input_json)
                json.loads(report_json)
            except ValueError as exc:
                return f"row {row_id}: {exc}"
        return "ok"
