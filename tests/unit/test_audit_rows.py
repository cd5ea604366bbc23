"""Audit input: JSONL / Parquet / LangSmith readers, row keys, malformed rows (no models)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardrail.audit.rows import AuditRow, RowError, detect_format, read_rows
from guardrail.errors import InputError

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "audit_sample.jsonl"


def write_jsonl(path: Path, rows: list[object]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_keys_aliases_and_payload(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"session_id": "s1", "turn_id": 0, "query": "q", "response": "a", "passages": ["p"]},
            {"id": 7, "question": "q2", "answer": "a2", "contexts": ["c1", {"text": "c2"}]},
            {"query": "q3", "response": "a3", "session_id": 12},
        ],
    )
    rows = list(read_rows(path))
    assert all(isinstance(r, AuditRow) for r in rows)
    a, b, c = rows  # type: ignore[misc]
    assert (a.key, a.index, a.session_id, a.turn_id) == ("s1/0", 1, "s1", 0)
    assert b.key == "id:7"
    payload = json.loads(b.payload)
    assert payload["query"] == "q2" and payload["response"] == "a2"
    assert payload["passages"] == ["c1", {"text": "c2"}]
    assert c.session_id == "12" and c.turn_id is None
    assert c.key.startswith("#3:") and len(c.key) == len("#3:") + 12


def test_keys_are_deterministic(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [{"response": "x"}, {"response": "y"}])
    first = [r.key for r in read_rows(path) if isinstance(r, AuditRow)]
    again = [r.key for r in read_rows(path) if isinstance(r, AuditRow)]
    assert first == again and len(set(first)) == 2


def test_malformed_rows_become_errors_with_reasons(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            '{"response": "cut off',
            [1, 2],
            {"query": "no answer"},
            {"response": 5},
            {"response": "ok", "passages": 42},
            {"response": "ok", "turn_id": "three", "session_id": "s"},
            {"session_id": "s", "turn_id": 1, "response": "first"},
            {"session_id": "s", "turn_id": 1, "response": "again"},
            "",
            {"response": "fine"},
        ],
    )
    items = list(read_rows(path))
    errors = [i for i in items if isinstance(i, RowError)]
    good = [i for i in items if isinstance(i, AuditRow)]
    assert [e.index for e in errors] == [1, 2, 3, 4, 5, 6, 8]
    reasons = [e.reason for e in errors]
    assert "not valid JSON" in reasons[0]
    assert "JSON object" in reasons[1]
    assert "no 'response'" in reasons[2]
    assert "response must be a string" in reasons[3]
    assert "invalid guardrail input" in reasons[4]
    assert "turn_id" in reasons[5]
    assert "duplicate row key 's/1' (first at row 7)" in reasons[6]
    assert all(e.row for e in errors)  # the raw row is kept for the reader
    assert [g.index for g in good] == [7, 10]


def test_parquet_input_with_nested_and_json_passages(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(
        [
            {"session_id": "s", "turn_id": 0, "query": "q", "response": "a",
             "passages": json.dumps([{"text": "p", "score": 0.5}])},
            {"session_id": "s", "turn_id": 1, "query": "q", "response": "b",
             "passages": "[not json"},
        ]
    )  # fmt: skip
    path = tmp_path / "in.parquet"
    pq.write_table(table, path)
    assert detect_format(path) == "parquet"
    ok, bad = list(read_rows(path))
    assert isinstance(ok, AuditRow) and ok.key == "s/0"
    assert json.loads(ok.payload)["passages"] == [{"text": "p", "score": 0.5}]
    assert isinstance(bad, RowError) and bad.index == 2 and "invalid JSON" in bad.reason


def test_missing_input_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_rows(tmp_path / "nope.jsonl")


def test_sample_file_has_sessions_and_malformed_rows() -> None:
    items = list(read_rows(SAMPLE))
    rows = [i for i in items if isinstance(i, AuditRow)]
    errors = [i for i in items if isinstance(i, RowError)]
    assert len({r.session_id for r in rows if r.session_id}) >= 4
    assert len(rows) >= 15 and len(errors) >= 3
    assert detect_format(SAMPLE) == "jsonl"
