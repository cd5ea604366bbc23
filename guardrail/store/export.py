"""Export a stored session in the stored-results key layout: key paths, nested JSON or MeTTa facts.

Example::

    print(export_session(ReportStore("results.sqlite"), "demo", "paths"))
"""

from __future__ import annotations

import json
from typing import Literal

from guardrail.config import HandlingThresholds
from guardrail.errors import InputError
from guardrail.store.keys import nest, render_paths, turn_paths
from guardrail.store.metta import prelude, turn_facts
from guardrail.store.sqlite import ReportStore, StoredReport

ExportFormat = Literal["paths", "json", "metta"]
FORMATS: tuple[str, ...] = ("paths", "json", "metta")


def export_turns(
    turns: list[StoredReport], fmt: str, thresholds: HandlingThresholds | None = None
) -> str:
    """Render stored turns (latest attempts) in one of :data:`FORMATS`."""
    if fmt == "paths":
        return "".join(
            render_paths(turn_paths(t.session_id, t.turn_id, t.input, t.report)) for t in turns
        )
    if fmt == "json":
        leaves = [p for t in turns for p in turn_paths(t.session_id, t.turn_id, t.input, t.report)]
        return json.dumps(nest(leaves), indent=2, ensure_ascii=False) + "\n"
    if fmt == "metta":
        body = "".join(turn_facts(t.session_id, t.turn_id, t.input, t.report) for t in turns)
        return prelude(thresholds) + body
    raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")


def export_session(
    store: ReportStore,
    session_id: str,
    fmt: str = "paths",
    turn_id: int | None = None,
    thresholds: HandlingThresholds | None = None,
) -> str:
    """A session (or one of its turns) in the given format; ``InputError`` when nothing is stored."""
    turns = store.turns(session_id)
    if turn_id is not None:
        turns = [t for t in turns if t.turn_id == turn_id]
    if not turns:
        where = f"session {session_id!r}" + (f" turn {turn_id}" if turn_id is not None else "")
        raise InputError(f"nothing stored for {where} in {store.where}")
    return export_turns(turns, fmt, thresholds)
