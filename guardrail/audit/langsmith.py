"""Rows from a LangSmith runs export (``client.list_runs`` written as JSONL, or the UI's JSON array).

A run has ``id``, ``run_type``, ``inputs``, ``outputs``, ``parent_run_id``, ``trace_id``,
``start_time`` and ``extra.metadata``. Each *root* run (no parent) of a trace is one answer:

- the question: ``inputs`` ``question`` / ``query`` / ``input`` / ``user_input`` / ``prompt``
  (or the only string input);
- the answer: ``outputs`` ``answer`` / ``output`` / ``response`` / ``result`` / ``text``
  (a serialised message's ``content`` too);
- the passages: retrieved documents in the root's outputs or inputs (``context``,
  ``source_documents``, ``documents``…), else the ``documents`` of the trace's ``retriever``
  runs, in start order. Documents may be plain dicts (``page_content`` + ``metadata`` with
  ``score``), LangChain's serialised form (``{"lc": 1, "kwargs": {...}}``) or strings;
- the session: ``extra.metadata`` ``session_id`` / ``thread_id`` / ``conversation_id``; the turn:
  ``metadata.turn_id``, else the run's position in its session by start time.

The run ``id`` is the row key. A root run that failed in LangSmith (an ``error`` and no
answer) is an error row, not a silent skip.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from guardrail.errors import InputError

QUERY_KEYS = ("question", "query", "input", "user_input", "prompt")
ANSWER_KEYS = ("answer", "output", "response", "result", "text", "generation")
DOC_KEYS = ("context", "source_documents", "documents", "contexts", "passages", "docs")
SESSION_KEYS = ("session_id", "thread_id", "conversation_id")


def _load(path: Path) -> list[tuple[int, Any, str]]:
    """``(position, run or error, raw text)`` for every run in the file."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.lstrip().startswith("["):
        try:
            runs = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not a valid JSON array ({exc.msg})") from exc
        return [(i, run, json.dumps(run, default=str)) for i, run in enumerate(runs, start=1)]
    out: list[tuple[int, Any, str]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line), line))
        except json.JSONDecodeError as exc:
            out.append((n, InputError(f"not valid JSON ({exc.msg} at column {exc.colno})"), line))
    return out


def _message_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if isinstance(value.get("content"), str):
            return str(value["content"])
        kwargs = value.get("kwargs")
        if isinstance(kwargs, dict) and isinstance(kwargs.get("content"), str):
            return str(kwargs["content"])
    return None


def _pick_text(data: Any, keys: tuple[str, ...]) -> str | None:
    if not isinstance(data, dict):
        return _message_text(data)
    for key in keys:
        if key in data:
            text = _message_text(data[key])
            if text is not None:
                return text
    strings = [v for v in data.values() if isinstance(v, str)]
    return strings[0] if len(strings) == 1 else None


def to_passage(doc: Any) -> dict[str, Any] | str:
    """A LangChain document in any of its exported forms → a passage dict (or the string)."""
    if isinstance(doc, str):
        return doc
    if isinstance(doc, dict):
        kwargs = doc.get("kwargs")
        body: dict[str, Any] = kwargs if isinstance(kwargs, dict) else doc
        text = body.get("page_content", body.get("text"))
        if isinstance(text, str):
            meta = dict(body.get("metadata") or {})
            score = meta.pop("score", body.get("score"))
            source = meta.get("source")
            return {
                "text": text,
                "score": float(score) if isinstance(score, int | float) else None,
                "source": None if source is None else str(source),
                "metadata": meta,
            }
    raise InputError(f"a retrieved document must be a string or a dict, not {type(doc).__name__}")


def _docs_in(data: Any) -> list[Any] | None:
    if not isinstance(data, dict):
        return None
    for key in DOC_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            return value
    return None


def _metadata(run: dict[str, Any]) -> dict[str, Any]:
    extra = run.get("extra") or {}
    meta = extra.get("metadata") if isinstance(extra, dict) else None
    return meta if isinstance(meta, dict) else {}


def _record(run: dict[str, Any], retrieved: list[Any]) -> dict[str, Any]:
    outputs = run.get("outputs")
    if not outputs and run.get("error"):
        raise InputError(f"the run failed in LangSmith: {str(run['error'])[:300]}")
    answer = _pick_text(outputs, ANSWER_KEYS)
    if answer is None:
        raise InputError("no answer found in the run's outputs (answer / output / response …)")
    docs = _docs_in(outputs) or _docs_in(run.get("inputs")) or retrieved
    meta = _metadata(run)
    session = next((meta[k] for k in SESSION_KEYS if meta.get(k) is not None), None)
    return {
        "id": run.get("id"),
        "query": _pick_text(run.get("inputs"), QUERY_KEYS) or "",
        "response": answer,
        "passages": [to_passage(d) for d in docs],
        "session_id": session,
        "turn_id": meta.get("turn_id"),
    }


def runs_records(path: Path) -> Iterator[tuple[int, Any, str]]:
    """``(position, GuardInput-like record or error, raw)`` for each root run, in file order."""
    loaded = _load(path)
    retrieved: dict[str, list[tuple[str, list[Any]]]] = defaultdict(list)
    roots: list[tuple[int, Any, str]] = []
    for n, run, raw in loaded:
        if not isinstance(run, dict):
            roots.append((n, run if isinstance(run, Exception) else InputError(
                f"a run must be a JSON object, not {type(run).__name__}"), raw))  # fmt: skip
            continue
        if run.get("parent_run_id"):
            docs = _docs_in(run.get("outputs"))
            if run.get("run_type") == "retriever" and docs is not None:
                trace = str(run.get("trace_id"))
                retrieved[trace].append((str(run.get("start_time") or ""), docs))
            continue
        roots.append((n, run, raw))
    # Turn numbers: position within the session by start time, where the metadata gives none.
    by_session: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for n, run, _ in roots:
        if isinstance(run, dict):
            meta = _metadata(run)
            session = next((meta[k] for k in SESSION_KEYS if meta.get(k) is not None), None)
            if session is not None and meta.get("turn_id") is None:
                by_session[str(session)].append((str(run.get("start_time") or ""), n))
    turn_of = {n: t for runs in by_session.values() for t, (_, n) in enumerate(sorted(runs))}
    for n, run, raw in roots:
        if isinstance(run, Exception):
            yield n, run, raw
            continue
        docs = [d for _, ds in sorted(retrieved.get(str(run.get("trace_id")), [])) for d in ds]
        try:
            record = _record(run, docs)
        except InputError as exc:
            yield n, exc, raw
            continue
        if record["turn_id"] is None and n in turn_of:
            record["turn_id"] = turn_of[n]
        yield n, record, raw
