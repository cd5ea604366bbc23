"""The labelled example type and the readers shared by every dataset loader.

Kept apart from :mod:`guardrail.evaluation.datasets` (the registry of loaders) and
:mod:`guardrail.evaluation.summaries` (summary-faithfulness loaders) so neither imports the
other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from guardrail.errors import InputError
from guardrail.jsonl import iter_jsonl

HALLUCINATED = 1
FAITHFUL = 0


class EvalExample(BaseModel):
    """One labelled (query, response, evidence) example."""

    id: str
    query: str = ""
    response: str
    passages: list[str] = Field(default_factory=list)
    """Evidence texts (the premise)."""
    label: int
    """1 = hallucinated / unsupported, 0 = faithful / supported."""
    dataset: str
    split: str = ""
    spans: list[tuple[int, int]] = Field(default_factory=list)
    """Hallucinated character spans of ``response`` when the dataset has them."""
    meta: dict[str, Any] = Field(default_factory=dict)


Loader = Callable[[Path, str | None], Iterator[EvalExample]]


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (``InputError`` naming the line on bad input)."""
    for _, row in iter_jsonl(path, "; check --data-dir"):
        yield row


def read_json_or_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """A JSON list, or JSON Lines (HaluEval's ``.json`` files are JSON Lines)."""
    if not path.exists():
        raise InputError(f"data file not found: {path}; check --data-dir")
    with path.open(encoding="utf-8") as fh:
        head = fh.read(1)
        while head and head.isspace():
            head = fh.read(1)
    if head == "[":
        data = json.loads(path.read_text(encoding="utf-8"))
        for row in data:
            if isinstance(row, dict):
                yield row
        return
    yield from read_jsonl(path)


def need(row: dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str):
        raise InputError(f"{where}: field {key!r} must be a string")
    return value
