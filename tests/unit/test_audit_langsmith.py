"""LangSmith runs exports: root runs become rows, retriever children give the passages."""

from __future__ import annotations

import json
from pathlib import Path

from guardrail.audit.rows import AuditRow, RowError, detect_format, read_rows


def run(run_id: str, **fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": run_id,
        "name": "rag",
        "run_type": "chain",
        "parent_run_id": None,
        "trace_id": run_id,
        "inputs": {},
        "outputs": {},
        "extra": {"metadata": {}},
        "error": None,
    }
    base.update(fields)
    return base


def lc_document(text: str, score: float) -> dict[str, object]:
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "document", "Document"],
        "kwargs": {"page_content": text, "metadata": {"score": score, "source": "kb.md"}},
    }


def export(tmp_path: Path) -> Path:
    runs = [
        run("r1", inputs={"question": "When is the meeting?"},
            outputs={"answer": "At 2pm.", "context": [lc_document("Meeting at 2pm.", 0.8)]},
            start_time="2026-11-30T10:00:00", extra={"metadata": {"thread_id": "t1"}}),
        # a retriever child of r2's trace: its documents are r2's passages
        run("c2", parent_run_id="r2", trace_id="r2", run_type="retriever",
            outputs={"documents": [{"page_content": "Room 4B.", "metadata": {"score": 0.6}}]}),
        run("r2", inputs={"input": "Which room?"},
            outputs={"output": {"content": "Room 4B.", "type": "ai"}},
            start_time="2026-11-30T10:01:00", extra={"metadata": {"thread_id": "t1"}}),
        run("r3", inputs={"question": "Who?"}, outputs=None, error="RateLimitError: 429"),
    ]  # fmt: skip
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n{broken\n", encoding="utf-8")
    return path


def test_runs_export_rows(tmp_path: Path) -> None:
    path = export(tmp_path)
    assert detect_format(path) == "langsmith"
    items = list(read_rows(path))
    rows = [i for i in items if isinstance(i, AuditRow)]
    errors = [i for i in items if isinstance(i, RowError)]
    assert [r.key for r in rows] == ["id:r1", "id:r2"]
    first, second = (json.loads(r.payload) for r in rows)
    assert first["query"] == "When is the meeting?" and first["response"] == "At 2pm."
    assert first["passages"][0]["text"] == "Meeting at 2pm."
    assert first["passages"][0]["score"] == 0.8
    assert second["response"] == "Room 4B."
    assert second["passages"][0] == {"text": "Room 4B.", "score": 0.6, "source": None,
                                     "metadata": {}}  # fmt: skip
    assert [(r.session_id, r.turn_id) for r in rows] == [("t1", 0), ("t1", 1)]
    assert sorted(e.index for e in errors) == [4, 5]
    assert any("failed in LangSmith" in e.reason for e in errors)
    assert any("not valid JSON" in e.reason for e in errors)


def test_json_array_export(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text(
        json.dumps([run("a", inputs={"query": "q"}, outputs={"response": "r"})]), encoding="utf-8"
    )
    assert detect_format(path) == "langsmith"
    [row] = list(read_rows(path))
    assert isinstance(row, AuditRow) and row.key == "id:a" and row.index == 1
