"""Every report with its input, in one SQLite file, addressable by session and turn.

Schema (``SCHEMA_VERSION`` 1, kept in ``PRAGMA user_version``)::

    reports(id PK, session_id, turn_id, attempt, created_at, action, verdict, confidence,
            query, response, input_json, report_json)      unique (session_id, turn_id, attempt)

The file runs in WAL mode with ``synchronous=FULL``; every :meth:`ReportStore.save` is ONE
``BEGIN IMMEDIATE … COMMIT`` transaction, so a writer that dies mid-write leaves the previous
state readable and the half-written report absent. Checking the same turn again (a regenerated
answer) adds an attempt; nothing is overwritten. Every call opens its own connection, so one
store is safe to share between threads and processes.

Example::

    store = ReportStore("results.sqlite")
    key = store.save(guard_input, report)            # -> StoredReport(session_id, turn_id, …)
    store.get("demo", 0).report["recommendation"]["action"]
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from guardrail.errors import GuardrailError, InputError
from guardrail.inputs import GuardInput, coerce_input
from guardrail.inputs import check_session_id as check_session_id  # re-exported
from guardrail.report import GuardReport

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
DEFAULT_SESSION = "default"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS reports (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    turn_id INTEGER NOT NULL CHECK (turn_id >= 0),
    attempt INTEGER NOT NULL CHECK (attempt >= 1),
    created_at REAL NOT NULL,
    action TEXT NOT NULL,
    verdict TEXT NOT NULL,
    confidence REAL NOT NULL,
    query TEXT NOT NULL,
    response TEXT NOT NULL,
    input_json TEXT NOT NULL,
    report_json TEXT NOT NULL,
    UNIQUE (session_id, turn_id, attempt)
);
CREATE INDEX IF NOT EXISTS idx_reports_created ON reports(created_at);
CREATE INDEX IF NOT EXISTS idx_reports_action ON reports(action, created_at);
CREATE INDEX IF NOT EXISTS idx_reports_verdict ON reports(verdict, created_at);
"""


class StoreError(GuardrailError):
    """The report store could not be opened, read or written."""


class ReportSummary(BaseModel):
    """One stored check, without its full report (what listings return)."""

    session_id: str
    turn_id: int
    attempt: int
    created_at: datetime
    action: str
    verdict: str
    confidence: float
    query: str
    response: str
    """The checked answer (first 200 characters)."""


class StoredReport(ReportSummary):
    """One stored check: the input as given and the report as produced (JSON)."""

    input: dict[str, Any] = Field(default_factory=dict)
    report: dict[str, Any] = Field(default_factory=dict)

    def guard_report(self) -> GuardReport:
        """The report as a :class:`GuardReport` (fields added since it was stored default)."""
        return GuardReport.model_validate(self.report)


class ReportPage(BaseModel):
    """One page of a listing, newest first."""

    total: int
    limit: int
    offset: int
    items: list[ReportSummary]

    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or ``None`` on the last one."""
        nxt = self.offset + len(self.items)
        return nxt if nxt < self.total else None


def input_record(data: GuardInput) -> dict[str, Any]:
    """The input as JSON. A knowledge-base object is recorded by its path or type, not copied."""
    record = data.model_dump(mode="json", exclude={"knowledge_base"})
    kb = data.knowledge_base
    if kb is None or isinstance(kb, str | dict | list):
        record["knowledge_base"] = kb
    elif isinstance(kb, Path):
        record["knowledge_base"] = str(kb)
    else:
        path = getattr(kb, "path", None)
        record["knowledge_base"] = str(path) if path is not None else type(kb).__name__
    return record


class ReportStore:
    """Reports in one SQLite file (created with its schema when missing).

    Args:
        path: the database file.
        create: create the file when missing (else a missing file is a ``StoreError``).
        timeout: seconds to wait for another writer's lock.
    """

    def __init__(self, path: str | Path, create: bool = True, timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        if not create and not self.path.exists():
            raise StoreError(
                f"report store not found: {self.path}; 'guardrail serve --store {self.path}' "
                "creates it"
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as conn:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if version > SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.path} has report-store schema {version}; this guardrail reads "
                        f"up to {SCHEMA_VERSION}: upgrade guardrail"
                    )
                conn.execute("PRAGMA journal_mode=WAL")
                if version < SCHEMA_VERSION:
                    conn.execute("BEGIN IMMEDIATE")
                    for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open report store {self.path}: {exc}") from exc

    @property
    def where(self) -> str:
        """Where the reports are kept (the file), for messages and ``/readyz``."""
        return str(self.path)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            conn.execute("PRAGMA synchronous=FULL")
            yield conn
        finally:
            conn.close()

    # --- writing ------------------------------------------------------------------------------

    def save(
        self,
        data: GuardInput | dict[str, Any],
        report: GuardReport,
        *,
        session_id: str | None = None,
        turn_id: int | None = None,
    ) -> StoredReport:
        """Store one check in one transaction and return it with its key.

        The session is ``session_id``, else the input's, else ``"default"``; the turn is
        ``turn_id``, else the input's, else the next free turn of the session. Storing a turn
        that already exists adds an attempt.
        """
        inp, session, turn = resolve_key(data, report, session_id, turn_id)
        created = time.time()
        try:
            with self._connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    turn, attempt = next_key(conn, session, turn, "?")
                    stored = build_stored(inp, report, session, turn, attempt, created)
                    self._insert(conn, stored, created)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"could not write to report store {self.path}: {exc}") from exc
        return stored

    def _insert(self, conn: sqlite3.Connection, stored: StoredReport, created: float) -> None:
        conn.execute(INSERT.replace("%s", "?"), insert_values(stored, created))

    # --- reading ------------------------------------------------------------------------------

    _SUMMARY = (
        "session_id, turn_id, attempt, created_at, action, verdict, confidence, query, response"
    )

    def get(self, session_id: str, turn_id: int, attempt: int | None = None) -> StoredReport | None:
        """One stored check (the latest attempt unless ``attempt`` is given), or ``None``."""
        sql = f"SELECT {self._SUMMARY}, input_json, report_json FROM reports WHERE session_id=? AND turn_id=?"
        params: list[Any] = [session_id, turn_id]
        if attempt is not None:
            sql += " AND attempt=?"
            params.append(attempt)
        sql += " ORDER BY attempt DESC LIMIT 1"
        row = self._query(sql, params)
        if not row:
            return None
        *summary, input_json, report_json = row[0]
        return StoredReport(
            **_summary(summary), input=json.loads(input_json), report=json.loads(report_json)
        )

    def search(
        self,
        *,
        session_id: str | None = None,
        action: str | None = None,
        verdict: str | None = None,
        since: datetime | float | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> ReportPage:
        """Stored checks matching every filter given, newest first, one page at a time."""
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("session_id", session_id), ("action", action), ("verdict", verdict)):
            if value:
                where.append(f"{column}=?")
                params.append(value)
        if since is not None:
            where.append("created_at>=?")
            params.append(since.timestamp() if isinstance(since, datetime) else float(since))
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        limit = max(1, min(int(limit), 500))
        offset = max(0, int(offset))
        total = int(self._query(f"SELECT COUNT(*) FROM reports{clause}", params)[0][0])
        rows = self._query(
            f"SELECT {self._SUMMARY} FROM reports{clause} "
            "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        items = [ReportSummary(**_summary(r)) for r in rows]
        return ReportPage(total=total, limit=limit, offset=offset, items=items)

    def turns(self, session_id: str) -> list[StoredReport]:
        """The latest attempt of every turn of a session, in turn order."""
        rows = self._query(
            f"SELECT {self._SUMMARY}, input_json, report_json FROM reports r WHERE session_id=? "
            "AND attempt=(SELECT MAX(attempt) FROM reports WHERE session_id=r.session_id "
            "AND turn_id=r.turn_id) ORDER BY turn_id",
            [session_id],
        )
        out = []
        for row in rows:
            *summary, input_json, report_json = row
            out.append(
                StoredReport(
                    **_summary(summary),
                    input=json.loads(input_json),
                    report=json.loads(report_json),
                )
            )
        return out

    def sessions(self) -> list[tuple[str, int, datetime]]:
        """``(session_id, number of turns, last write)`` for every session, newest first."""
        rows = self._query(
            "SELECT session_id, COUNT(DISTINCT turn_id), MAX(created_at) FROM reports "
            "GROUP BY session_id ORDER BY MAX(created_at) DESC",
            [],
        )
        return [(str(s), int(n), datetime.fromtimestamp(float(t), UTC)) for s, n, t in rows]

    def count(self) -> int:
        """Number of stored checks (attempts included)."""
        return int(self._query("SELECT COUNT(*) FROM reports", [])[0][0])

    def integrity_check(self) -> str:
        """``ok`` when the file is intact (SQLite's ``PRAGMA integrity_check``), else the fault."""
        return "; ".join(str(r[0]) for r in self._query("PRAGMA integrity_check", []))

    def _query(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        try:
            with self._connect() as conn:
                return list(conn.execute(sql, params).fetchall())
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"could not read report store {self.path}: {exc}") from exc


def _summary(row: list[Any] | tuple[Any, ...]) -> dict[str, Any]:
    session_id, turn_id, attempt, created, action, verdict, confidence, query, response = row
    return {
        "session_id": session_id,
        "turn_id": turn_id,
        "attempt": attempt,
        "created_at": datetime.fromtimestamp(float(created), UTC),
        "action": action,
        "verdict": verdict,
        "confidence": confidence,
        "query": query,
        "response": response,
    }


def resolve_key(
    data: GuardInput | dict[str, Any],
    report: GuardReport,
    session_id: str | None,
    turn_id: int | None,
) -> tuple[GuardInput, str, int | None]:
    """The input, its session and its turn (``None``: the next free one) as ``save`` uses them."""
    inp = coerce_input(data)
    session = check_session_id(session_id or inp.session_id or report.session_id or DEFAULT_SESSION)
    turn = turn_id if turn_id is not None else inp.turn_id
    if turn is None:
        turn = report.turn_id
    if turn is not None and turn < 0:
        raise InputError(f"turn_id must be >= 0, not {turn}")
    return inp, session, turn


def next_key(conn: Any, session: str, turn: int | None, mark: str) -> tuple[int, int]:
    """The turn of a new report (``turn``, else the session's next free one) and its attempt
    number, read inside the caller's transaction; ``mark`` is the driver's placeholder
    (``?`` for sqlite3, ``%s`` for psycopg)."""
    if turn is None:
        row = conn.execute(
            f"SELECT COALESCE(MAX(turn_id) + 1, 0) FROM reports WHERE session_id={mark}",
            (session,),
        ).fetchone()
        turn = int(row[0])
    row = conn.execute(
        "SELECT COALESCE(MAX(attempt), 0) + 1 FROM reports "
        f"WHERE session_id={mark} AND turn_id={mark}",
        (session, turn),
    ).fetchone()
    return turn, int(row[0])


def build_stored(
    inp: GuardInput, report: GuardReport, session: str, turn: int, attempt: int, created: float
) -> StoredReport:
    """The stored row of one check under its final key (every backend stores the same)."""
    final = report.model_copy(update={"session_id": session, "turn_id": turn})
    record = input_record(inp)
    record.update(session_id=session, turn_id=turn)
    return StoredReport(
        session_id=session,
        turn_id=turn,
        attempt=attempt,
        created_at=datetime.fromtimestamp(created, UTC),
        action=final.recommendation.action,
        verdict=final.verdict.label.value,
        confidence=final.confidence,
        query=inp.query,
        response=inp.response[:200],
        input=record,
        report=final.model_dump(mode="json"),
    )


#: The one INSERT of a report (``%s`` placeholders; SQLite swaps them for ``?``).
INSERT = (
    "INSERT INTO reports (session_id, turn_id, attempt, created_at, action, verdict, "
    "confidence, query, response, input_json, report_json) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def insert_values(stored: StoredReport, created: float) -> tuple[Any, ...]:
    """The values of :data:`INSERT` for one stored report."""
    return (
        stored.session_id,
        stored.turn_id,
        stored.attempt,
        created,
        stored.action,
        stored.verdict,
        stored.confidence,
        stored.query,
        stored.response,
        json.dumps(stored.input, ensure_ascii=False),
        json.dumps(stored.report, ensure_ascii=False),
    )
