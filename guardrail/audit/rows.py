"""Logged answers in, audit rows out: JSONL and Parquet readers, row keys and row validation.

Every input row becomes either an :class:`AuditRow` (ready to check) or a :class:`RowError`
(written to ``errors.jsonl`` with the reason). Nothing is dropped: a line that is not JSON, a
row without a string ``response``, passages of the wrong type, a duplicated key — each is a
``RowError`` naming its line.

Rows carry the :class:`~guardrail.inputs.GuardInput` fields (``query``, ``response``,
``passages``, ``dialogue``, ``session_id``, ``turn_id``, ``knowledge_base``); the common log
spellings ``question``/``input``, ``answer``/``output`` and ``contexts``/``documents`` are
accepted too. An optional ``id`` names the row. Any other key or column (``"pasages"``) makes
the row an error naming it and the nearest valid name, as do two spellings of one field with
different values (``query`` and ``question``): a dropped key would be evidence never checked.

Row keys are deterministic, so a resumed run knows what is done: the row's ``id`` when it has
one, else ``session/turn`` when both are present, else the 1-based row number and a hash of the
row's content (``#12:3fa2…``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardrail.errors import InputError, MissingDependencyError
from guardrail.inputs import unknown_key_message

#: The GuardInput fields an audit row may carry.
FIELDS = ("query", "response", "passages", "dialogue", "session_id", "turn_id", "knowledge_base")

#: Other spellings seen in logs, mapped to the GuardInput field.
ALIASES: dict[str, str] = {
    "question": "query",
    "input": "query",
    "answer": "response",
    "output": "response",
    "contexts": "passages",
    "context": "passages",
    "documents": "passages",
    "history": "dialogue",
    "thread_id": "session_id",
    "conversation_id": "session_id",
}

#: Every key a row may have: the fields, their log spellings and the row ``id``.
ROW_KEYS = frozenset({*FIELDS, *ALIASES, "id"})

#: The index pandas writes into a Parquet file as a column: bookkeeping, not row data.
PANDAS_INDEX_PREFIX = "__index_level_"

#: Longest raw row text kept in an error record.
ERROR_ROW_CHARS = 2000


@dataclass(frozen=True)
class AuditRow:
    """One answer to check: its key, position, ids and the ``GuardInput`` payload as JSON."""

    key: str
    index: int
    """1-based line (JSONL) or row (Parquet, runs export) number in the input."""
    session_id: str | None
    turn_id: int | None
    payload: str
    """The GuardInput fields as canonical JSON (what a worker hands to ``Guardrail``)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "index": self.index,
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "payload": self.payload,
        }


@dataclass(frozen=True)
class RowError:
    """A row that could not be checked, with the reason."""

    index: int
    reason: str
    stage: str = "read"
    """``read`` (the row is malformed) or ``check`` (the guardrail rejected it)."""
    key: str | None = None
    session_id: str | None = None
    turn_id: int | None = None
    row: str | None = None
    """The raw row, shortened."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "key": self.key,
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "stage": self.stage,
            "reason": self.reason,
            "row": self.row,
        }


def _shorten(text: str) -> str:
    return text if len(text) <= ERROR_ROW_CHARS else text[:ERROR_ROW_CHARS] + "…"


def content_hash(payload: str) -> str:
    """A short, stable hash of a row's payload."""
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()[:12]


def normalise(record: dict[str, Any]) -> dict[str, Any]:
    """Map log spellings onto GuardInput fields (and ``id``).

    Raises:
        InputError: a key that is neither a field, a known spelling nor ``id`` (naming the
            nearest valid one), or two spellings of one field both holding a value.
    """
    spelled: dict[str, str] = {}
    out: dict[str, Any] = {}
    for name, value in record.items():
        if isinstance(name, str) and name.startswith(PANDAS_INDEX_PREFIX):
            continue
        if name not in ROW_KEYS:
            raise InputError(unknown_key_message(name, ROW_KEYS, what="column"))
        field = ALIASES.get(name, name)
        if field in out:
            if value is None:  # a Parquet file has every column in every row, often null
                continue
            if out[field] is not None:
                raise InputError(
                    f"the row has both {spelled[field]!r} and {name!r} for {field!r}; keep one"
                )
        spelled[field] = name
        out[field] = value
    if out.get("id") is None:
        out.pop("id", None)
    return out


def _turn(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise InputError(f"turn_id must be an integer, not {value!r}")


def to_row(record: Any, index: int) -> AuditRow:
    """Validate one decoded record into an :class:`AuditRow` (``InputError`` says why not)."""
    from guardrail.inputs import coerce_input

    if not isinstance(record, dict):
        raise InputError(f"a row must be a JSON object, not {type(record).__name__}")
    data = normalise(record)
    if "response" not in data:
        raise InputError("the row has no 'response' (or 'answer' / 'output') field")
    row_id = data.pop("id", None)
    session = data.get("session_id")
    data["session_id"] = None if session is None else str(session)
    data["turn_id"] = _turn(data.get("turn_id"))
    if isinstance(data.get("knowledge_base"), dict | list):
        raise InputError("an inline knowledge base is not supported in audit rows; give a path")
    try:
        coerce_input(data)  # typed InputError on wrong types (response, passages, dialogue)
    except TypeError as exc:  # e.g. passages given as a number (not iterable)
        raise InputError(f"invalid guardrail input: {exc}") from exc
    payload = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    if row_id is not None:
        key = f"id:{row_id}"
    elif data["session_id"] is not None and data["turn_id"] is not None:
        key = f"{data['session_id']}/{data['turn_id']}"
    else:
        key = f"#{index}:{content_hash(payload)}"
    return AuditRow(key, index, data["session_id"], data["turn_id"], payload)


def _validated(
    records: Iterable[tuple[int, Any, str]],
) -> Iterator[AuditRow | RowError]:
    """Rows from ``(index, record or exception, raw text)``; duplicate keys become errors."""
    seen: dict[str, int] = {}
    for index, record, raw in records:
        if isinstance(record, Exception):
            yield RowError(index, str(record), row=_shorten(raw))
            continue
        try:
            row = to_row(record, index)
        except InputError as exc:
            yield RowError(index, str(exc), row=_shorten(raw))
            continue
        first = seen.get(row.key)
        if first is not None:
            yield RowError(
                index,
                f"duplicate row key {row.key!r} (first at row {first}); give rows unique "
                f"ids or (session_id, turn_id) pairs",
                key=row.key,
                session_id=row.session_id,
                turn_id=row.turn_id,
                row=_shorten(raw),
            )
            continue
        seen[row.key] = index
        yield row


def _jsonl_records(path: Path) -> Iterator[tuple[int, Any, str]]:
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line), line.rstrip("\n")
            except json.JSONDecodeError as exc:
                yield n, InputError(f"not valid JSON ({exc.msg} at column {exc.colno})"), line


def _parquet_records(path: Path) -> Iterator[tuple[int, Any, str]]:
    pq = _pyarrow_parquet()
    n = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
        for record in batch.to_pylist():
            n += 1
            for name in ("passages", "dialogue", "contexts", "documents"):
                value = record.get(name)
                if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
                    try:
                        record[name] = json.loads(value)
                    except json.JSONDecodeError:
                        record[name] = InputError(f"column {name!r} holds invalid JSON")
            bad = next((v for v in record.values() if isinstance(v, InputError)), None)
            yield n, bad or record, json.dumps(record, default=str, ensure_ascii=False)


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise MissingDependencyError("pyarrow", "audit") from exc
    return pq


def detect_format(path: Path) -> str:
    """``parquet``, ``langsmith`` (a runs export: ``inputs``/``outputs``) or ``jsonl``."""
    if path.suffix.lower() in (".parquet", ".pq"):
        return "parquet"
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        head = fh.read(1)
        if head == "[":
            return "langsmith"  # a JSON array: the runs export of the LangSmith UI
        fh.seek(0)
        for line in fh:
            if not line.strip():
                continue
            try:
                first = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(first, dict) and "inputs" in first and "outputs" in first:
                return "langsmith"
            return "jsonl"
    return "jsonl"


def count_rows(path: Path, fmt: str) -> int | None:
    """How many rows the input holds (for the progress bar), cheaply; ``None`` if unknown."""
    if fmt == "parquet":
        return int(_pyarrow_parquet().ParquetFile(path).metadata.num_rows)
    if fmt == "jsonl":
        with path.open("rb") as fh:
            return sum(1 for line in fh if line.strip())
    return None


def read_rows(path: str | Path, fmt: str = "auto") -> Iterator[AuditRow | RowError]:
    """Stream the rows of a JSONL, Parquet or LangSmith runs-export file.

    Raises:
        InputError: the file is missing or the format is unknown.
    """
    file = Path(path)
    if not file.is_file():
        raise InputError(f"audit input not found: {file}")
    fmt = detect_format(file) if fmt == "auto" else fmt
    if fmt == "jsonl":
        return _validated(_jsonl_records(file))
    if fmt == "parquet":
        return _validated(_parquet_records(file))
    if fmt == "langsmith":
        from guardrail.audit.langsmith import runs_records

        return _validated(runs_records(file))
    raise InputError(f"unknown input format {fmt!r}; use jsonl, parquet or langsmith")
