"""The embedded default knowledge base: one SQLite file.

Schema (``SCHEMA_VERSION`` 1)::

    entities(id PK, name, name_norm, type)                 index on name_norm
    aliases(entity_id → entities, alias, alias_norm)       index on alias_norm
    attributes(entity_id → entities, name, value, confidence ∈ [0, 1], source)

The database runs in WAL mode, so readers never block each other or a writer. Every call opens
its own connection (cheap for SQLite), so one :class:`SQLiteKnowledgeBase` is safe to share
between threads. :meth:`SQLiteKnowledgeBase.import_entities` writes in ONE transaction: if any
row fails, nothing is imported. An entity without attributes is refused (it would check
nothing), and so is a database whose tables have columns this schema does not know when it is
read as an import source (:meth:`SQLiteKnowledgeBase.check_columns`).

Example::

    kb = SQLiteKnowledgeBase("kb.sqlite", create=True)
    kb.import_entities(load_entities("people.json"))
    kb.find_entity("John").attributes["email"].value
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from guardrail.errors import KnowledgeBaseError
from guardrail.inputs import unknown_key_message
from guardrail.knowledge.base import (
    AttributeValue,
    Entity,
    KnowledgeBase,
    normalise_key,
    require_attributes,
)

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_norm TEXT NOT NULL,
    type TEXT
);
CREATE INDEX IF NOT EXISTS idx_entities_name_norm ON entities(name_norm);
CREATE TABLE IF NOT EXISTS aliases (
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    alias TEXT NOT NULL,
    alias_norm TEXT NOT NULL,
    PRIMARY KEY (entity_id, alias_norm)
);
CREATE INDEX IF NOT EXISTS idx_aliases_alias_norm ON aliases(alias_norm);
CREATE TABLE IF NOT EXISTS attributes (
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    confidence REAL NOT NULL CHECK (confidence >= 0.0 AND confidence <= 1.0),
    source TEXT,
    PRIMARY KEY (entity_id, name)
);
"""

#: The columns of each table in ``_SCHEMA``.
COLUMNS: dict[str, frozenset[str]] = {
    "entities": frozenset({"id", "name", "name_norm", "type"}),
    "aliases": frozenset({"entity_id", "alias", "alias_norm"}),
    "attributes": frozenset({"entity_id", "name", "value", "confidence", "source"}),
}


class SQLiteKnowledgeBase(KnowledgeBase):
    """A knowledge base in one SQLite file.

    Args:
        path: the database file.
        create: create the file and schema when missing (else a missing file is an error).
        timeout: seconds to wait for a lock held by a writer.
    """

    def __init__(self, path: str | Path, create: bool = False, timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        if not self.path.exists():
            if not create:
                raise KnowledgeBaseError(
                    f"knowledge base file not found: {self.path}; create it with "
                    f"'guardrail kb import FILE --db {self.path}'"
                )
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not _is_sqlite(self.path):
            raise KnowledgeBaseError(f"{self.path} is not a SQLite database")
        self._init_schema()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise KnowledgeBaseError(f"cannot open knowledge base {self.path}: {exc}") from exc
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        except sqlite3.Error as exc:
            raise KnowledgeBaseError(f"knowledge base {self.path}: {exc}") from exc
        finally:
            conn.close()

    def _init_schema(self) -> None:
        with self._connect() as conn:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                logger.warning("knowledge base %s: WAL mode unavailable (%s)", self.path, mode)
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                conn.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif int(row[0]) != SCHEMA_VERSION:
                raise KnowledgeBaseError(
                    f"{self.path} has schema version {row[0]}, this guardrail reads "
                    f"{SCHEMA_VERSION}; re-import the data into a new file"
                )

    # --- writing ---------------------------------------------------------------------------

    def import_entities(self, entities: Iterable[Entity], replace: bool = False) -> int:
        """Insert or update entities in one transaction; returns how many were written.

        Existing entities with the same id are updated: name and type replaced, aliases added,
        attributes upserted. With ``replace=True`` the whole knowledge base is replaced. If any
        entity fails (constraint, bad value, no attributes), the transaction is rolled back and
        a :class:`~guardrail.errors.KnowledgeBaseError` names it: nothing is imported.
        """
        count = 0
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            current: Entity | None = None
            try:
                if replace:
                    conn.execute("DELETE FROM entities")
                for current in entities:
                    if not current.attributes:
                        raise ValueError(
                            "the entity has no attributes: give it at least one (an entity "
                            "without attributes gives the fact check nothing to compare)"
                        )
                    _write_entity(conn, current)
                    count += 1
                conn.execute("COMMIT")
            except (sqlite3.Error, ValueError, TypeError) as exc:
                conn.execute("ROLLBACK")
                where = f"entity #{count + 1}" + (
                    f" ({current.id!r}, {current.name!r})" if current is not None else ""
                )
                raise KnowledgeBaseError(
                    f"import into {self.path} failed at {where}: {exc}; nothing was imported"
                ) from exc
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        logger.info("imported %d entities into %s", count, self.path)
        return count

    # --- reading ---------------------------------------------------------------------------

    def get(self, entity_id: str) -> Entity | None:
        with self._connect() as conn:
            row = conn.execute(
                "SELECT id, name, type FROM entities WHERE id = ?", (entity_id,)
            ).fetchone()
            if row is None:
                return None
            return _read_entity(conn, row)

    def entities(self) -> list[Entity]:
        with self._connect() as conn:
            rows = conn.execute("SELECT id, name, type FROM entities ORDER BY id").fetchall()
            return [_read_entity(conn, row) for row in rows]

    def lookup_name(self, name: str) -> list[tuple[str, str, bool]]:
        key = normalise_key(name)
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT id, name, 0 FROM entities WHERE name_norm = ? "
                "UNION ALL SELECT entity_id, alias, 1 FROM aliases WHERE alias_norm = ?",
                (key, key),
            ).fetchall()
        return [(str(r[0]), str(r[1]), bool(r[2])) for r in rows]

    def all_names(self) -> list[tuple[str, str, bool]]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT id, name, 0 FROM entities UNION ALL SELECT entity_id, alias, 1 FROM aliases"
            ).fetchall()
        return [(str(r[0]), str(r[1]), bool(r[2])) for r in rows]

    def check_columns(self) -> None:
        """``KnowledgeBaseError`` naming a table column this schema does not know (with the
        nearest known one), or an entity without attributes: run before importing from this
        file, so nothing in it is silently left behind."""
        with self._connect() as conn:
            for table, known in COLUMNS.items():
                for row in conn.execute(f"PRAGMA table_info({table})"):
                    if str(row[1]) not in known:
                        message = unknown_key_message(row[1], known, what="column")
                        raise KnowledgeBaseError(f"{self.path}: table {table!r}: {message}")
        for entity in self.entities():
            require_attributes(entity, f"{self.path}: entity {entity.id!r} ({entity.name!r})")

    def count(self) -> int:
        """Number of entities."""
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM entities").fetchone()[0])

    def __repr__(self) -> str:
        return f"SQLiteKnowledgeBase({str(self.path)!r})"


def _write_entity(conn: sqlite3.Connection, entity: Entity) -> None:
    conn.execute(
        "INSERT INTO entities(id, name, name_norm, type) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET name = excluded.name, name_norm = excluded.name_norm, "
        "type = COALESCE(excluded.type, entities.type)",
        (entity.id, entity.name, normalise_key(entity.name), entity.type),
    )
    for alias in entity.aliases:
        if not alias.strip():
            raise ValueError("an alias must not be empty")
        conn.execute(
            "INSERT OR IGNORE INTO aliases(entity_id, alias, alias_norm) VALUES (?, ?, ?)",
            (entity.id, alias.strip(), normalise_key(alias)),
        )
    for key, attr in entity.attributes.items():
        conn.execute(
            "INSERT INTO attributes(entity_id, name, value, confidence, source) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT(entity_id, name) DO UPDATE SET "
            "value = excluded.value, confidence = excluded.confidence, source = excluded.source",
            (entity.id, key, attr.value, float(attr.confidence), attr.source),
        )


def _read_entity(conn: sqlite3.Connection, row: tuple[str, str, str | None]) -> Entity:
    entity_id = row[0]
    aliases = [
        str(a[0])
        for a in conn.execute(
            "SELECT alias FROM aliases WHERE entity_id = ? ORDER BY rowid", (entity_id,)
        )
    ]
    attributes = {
        str(a[0]): AttributeValue(value=a[1], confidence=a[2], source=a[3])
        for a in conn.execute(
            "SELECT name, value, confidence, source FROM attributes WHERE entity_id = ? "
            "ORDER BY rowid",
            (entity_id,),
        )
    }
    return Entity(id=entity_id, name=row[1], type=row[2], aliases=aliases, attributes=attributes)


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError:
        return False
    return head == SQLITE_MAGIC or head == b""
