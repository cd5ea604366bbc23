"""Result rows and their durable storage: one Parquet part file per chunk of checked rows.

A part is written to a hidden temporary file and renamed into place, so a part either exists
whole or not at all (the local engine). Ray writes its parts itself; a part cut short by a kill
has no Parquet footer, so :func:`scan_parts` finds it unreadable and removes it, and its rows
are checked again. Each part holds every outcome of its rows — ``status`` ``ok`` with the
verdict, or ``error`` with the reason — so a resumed run skips both.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guardrail.errors import MissingDependencyError

logger = logging.getLogger(__name__)

#: Result columns and their Arrow types (as strings, resolved lazily).
COLUMNS: dict[str, str] = {
    "key": "string",
    "index": "int64",
    "session_id": "string",
    "turn_id": "int64",
    "status": "string",
    "error": "string",
    "verdict": "string",
    "action": "string",
    "confidence": "float64",
    "nli_score": "float64",
    "threshold": "float64",
    "retrieval_score": "float64",
    "n_flags": "int64",
    "flags": "string",
    "claims": "int64",
    "claims_supported": "int64",
    "claims_contradicted": "int64",
    "claims_unsupported": "int64",
    "claim_outcomes": "string",
    "claims_removed": "int64",
    "claims_repaired": "int64",
    "claims_annotated": "int64",
    "delivered": "string",
    "failed_stages": "string",
    "reason": "string",
    "timings": "string",
    "total_ms": "float64",
    "cpu_ms": "float64",
    "query": "string",
    "response": "string",
}

#: Columns that must be equal between two runs on the same input (timings are not).
RESULT_COLUMNS = ("key", "index", "status", "error", "verdict", "action", "confidence", "flags")


def _delivered(report: dict[str, Any]) -> str | None:
    """The text the recommendation delivers (``None`` for regenerate / human review): the
    report's own ``delivered_text``, so the audit and the wrappers cannot disagree."""
    from guardrail.report import GuardReport

    return GuardReport.model_validate(report).delivered_text


def pyarrow() -> Any:
    """``pyarrow`` or a ``MissingDependencyError`` with the install hint."""
    try:
        import pyarrow as pa
        import pyarrow.parquet
    except ImportError as exc:
        raise MissingDependencyError("pyarrow", "audit") from exc
    return pa


def schema() -> Any:
    pa = pyarrow()
    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS.items()])


def _ids(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row.get(k) for k in ("key", "index", "session_id", "turn_id")}


def error_result(
    row: dict[str, Any], reason: str, elapsed_ms: float = 0.0, cpu_ms: float | None = None
) -> dict[str, Any]:
    """The result row of an input the guardrail refused (``status`` ``error``)."""
    out: dict[str, Any] = dict.fromkeys(COLUMNS)
    out.update(_ids(row), status="error", error=reason, total_ms=round(elapsed_ms, 3))
    out["cpu_ms"] = None if cpu_ms is None else round(cpu_ms, 3)
    try:
        data = json.loads(row.get("payload") or "{}")
        out["query"], out["response"] = data.get("query"), str(data.get("response"))
    except (json.JSONDecodeError, AttributeError):
        pass
    return out


def report_result(
    row: dict[str, Any], report: dict[str, Any], elapsed_ms: float, cpu_ms: float | None = None
) -> dict[str, Any]:
    """The result row of one checked answer, from ``GuardReport.model_dump(mode="json")``."""
    verdict = report.get("verdict") or {}
    rec = report.get("recommendation") or {}
    claims = report.get("claims") or []
    statuses = [c.get("status") for c in claims]
    outcomes = [c.get("outcome") for c in claims]
    flags = report.get("hallucination_flags") or []
    failed = [s.get("name") for s in report.get("stages") or [] if s.get("status") == "failed"]
    data = json.loads(row.get("payload") or "{}")
    out: dict[str, Any] = dict.fromkeys(COLUMNS)
    out.update(
        _ids(row),
        status="ok",
        verdict=verdict.get("label"),
        action=rec.get("action"),
        confidence=report.get("confidence"),
        nli_score=verdict.get("nli_score"),
        threshold=verdict.get("threshold"),
        retrieval_score=verdict.get("retrieval_score"),
        n_flags=len(flags),
        flags=json.dumps(
            [
                {k: f.get(k) for k in ("type", "content", "confidence", "span", "explanation")}
                for f in flags
            ],
            ensure_ascii=False,
            sort_keys=True,
        ),
        claims=len(claims),
        claims_supported=statuses.count("supported"),
        claims_contradicted=statuses.count("contradicted"),
        claims_unsupported=statuses.count("unsupported"),
        claim_outcomes=json.dumps(
            [
                {"text": c.get("text"), "status": c.get("status"), "outcome": c.get("outcome")}
                for c in claims
            ],
            ensure_ascii=False,
        ),
        claims_removed=outcomes.count("removed"),
        claims_repaired=outcomes.count("repaired"),
        claims_annotated=outcomes.count("uncertain") + outcomes.count("unverified"),
        delivered=_delivered(report),
        failed_stages=json.dumps(failed),
        reason=rec.get("reason") or rec.get("guidance"),
        timings=json.dumps(report.get("timings_ms") or {}, sort_keys=True),
        total_ms=round(elapsed_ms, 3),
        cpu_ms=None if cpu_ms is None else round(cpu_ms, 3),
        query=data.get("query"),
        response=data.get("response"),
    )
    return out


def to_table(results: list[dict[str, Any]]) -> Any:
    """Result dicts → an Arrow table with the fixed schema."""
    pa = pyarrow()
    return pa.Table.from_pylist(results, schema=schema())


def write_part(directory: Path, name: str, results: list[dict[str, Any]]) -> Path:
    """Write one part atomically: a hidden temporary file, fsync, then rename."""
    pa = pyarrow()
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"{name}.parquet"
    tmp = directory / f".{name}.parquet.tmp"
    with pa.OSFile(str(tmp), "wb") as sink:
        pa.parquet.write_table(to_table(results), sink)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    return final


@dataclass
class PartScan:
    """What the parts directory holds: valid part files and the keys already done."""

    files: list[Path] = field(default_factory=list)
    done: set[str] = field(default_factory=set)
    removed: list[Path] = field(default_factory=list)
    """Unreadable (cut-short) parts and leftover temporary files, deleted."""


def part_files(parts: Path) -> list[Path]:
    """Every non-hidden ``*.parquet`` file under ``parts``, sorted."""
    if not parts.exists():
        return []
    return sorted(p for p in parts.rglob("*.parquet") if not p.name.startswith("."))


def scan_parts(parts: Path, clean: bool = True) -> PartScan:
    """Find the complete parts and the keys they hold; delete torn parts when ``clean``."""
    pa = pyarrow()
    scan = PartScan()
    if clean and parts.exists():
        for tmp in parts.rglob(".*.tmp"):
            tmp.unlink(missing_ok=True)
            scan.removed.append(tmp)
    for path in part_files(parts):
        try:
            keys = pa.parquet.read_table(path, columns=["key"]).column("key").to_pylist()
        except (OSError, pa.ArrowInvalid) as exc:
            logger.warning("audit: part %s is incomplete (%s); its rows will be redone", path, exc)
            if clean:
                path.unlink(missing_ok=True)
                scan.removed.append(path)
            continue
        scan.files.append(path)
        scan.done.update(k for k in keys if k is not None)
    return scan


def load_results(files: list[Path]) -> Any:
    """The result rows of the given parts as one Arrow table: one row per key (the first file
    wins), sorted by row number."""
    pa = pyarrow()
    tables = [pa.parquet.read_table(path).select(list(COLUMNS)).cast(schema()) for path in files]
    table = pa.concat_tables(tables) if tables else schema().empty_table()
    table = table.sort_by([("index", "ascending"), ("key", "ascending")])
    seen: set[str] = set()
    keep = []
    for i, key in enumerate(table.column("key").to_pylist()):
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return table if len(keep) == table.num_rows else table.take(keep)


def write_table(path: Path, table: Any) -> None:
    """Write a Parquet file atomically (temporary file, then rename)."""
    pa = pyarrow()
    tmp = path.with_name(f".{path.name}.tmp")
    pa.parquet.write_table(table, str(tmp))
    os.replace(tmp, path)


def run_token() -> str:
    """A name prefix unique to this run (time and process id), so parts never collide."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
