"""What a trace shows of a step: plain JSON views of its values, bounded in size.

A stage's child run shows the fields it reads and the fields it wrote (claims, flags, scores,
corrections) — never the whole pipeline state, a spaCy parse or an object's repr. The views are
built only when a callback handler records the run (:mod:`guardrail.step_runs`), so an untraced
check does none of this work.

- :func:`json_view` turns a value into plain JSON: pydantic models as their JSON (``None``
  fields left out), enums as their value, containers item by item, and anything else as its
  type name in angle brackets (``"<SqliteKnowledgeBase>"``) — never a repr with an address.
- :func:`bounded` shrinks a view to at most :data:`MAX_VIEW_BYTES` of JSON, largest values
  first: long strings are cut and long lists shortened, each with a marker saying how much was
  left out.
- :func:`input_view` is the checked input as a run shows it: query, response, passages,
  dialogue and the knowledge base's kind.

Example::

    >>> bounded({"claims": ["x" * 10_000]}, limit=200)["claims"][0][-24:]
    '… (9900 more characters)'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from enum import Enum
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

from guardrail.inputs import GuardInput

MAX_VIEW_BYTES = 4096
"""The most JSON (UTF-8 bytes) one run's inputs, or its outputs, show."""

_SHRINK_STEPS = ((400, 12), (200, 6), (100, 3), (40, 1))
"""(characters kept of a string, items kept of a list), tried in turn until a view fits."""


def json_view(value: Any) -> Any:
    """``value`` as plain JSON data (dicts, lists, strings, numbers, booleans, ``None``)."""
    if isinstance(value, Enum):  # before str and int: a str-enum is a str
        return json_view(value.value)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, BaseModel):
        return {
            name: json_view(item)
            for name, item in value
            if item is not None and name in type(value).model_fields
        }
    if isinstance(value, Mapping):
        return {str(key): json_view(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_view(item) for item in value]
    if isinstance(value, PurePath):
        return str(value)
    return f"<{type(value).__name__}>"


def view_size(view: Any) -> int:
    """The size of ``view`` as JSON, in UTF-8 bytes."""
    return len(json.dumps(view, ensure_ascii=False).encode())


def _shrink(view: Any, chars: int, items: int) -> Any:
    if isinstance(view, str) and len(view) > chars:
        return f"{view[:chars]}… ({len(view) - chars} more characters)"
    if isinstance(view, list):
        kept = [_shrink(item, chars, items) for item in view[:items]]
        if len(view) > items:
            kept.append(f"… ({len(view) - items} more items)")
        return kept
    if isinstance(view, dict):
        return {key: _shrink(item, chars, items) for key, item in view.items()}
    return view


def bounded(view: dict[str, Any], limit: int = MAX_VIEW_BYTES) -> dict[str, Any]:
    """``view`` (plain JSON) cut down to at most ``limit`` bytes of JSON.

    The largest values are shortened first, step by step (long strings cut, long lists
    shortened, each cut marked), so the small ones stay whole; if that is not enough, the
    largest values are replaced, largest first, by a note of their size. The keys stay."""
    if view_size(view) <= limit:
        return view
    small = dict(view)
    for chars, items in _SHRINK_STEPS:
        for key in sorted(small, key=lambda k: view_size(small[k]), reverse=True):
            small[key] = _shrink(view[key], chars, items)
            if view_size(small) <= limit:
                return small
    for key in sorted(small, key=lambda k: view_size(small[k]), reverse=True):
        small[key] = f"… (left out: {view_size(view[key])} bytes)"
        if view_size(small) <= limit:
            break
    return small


def input_view(data: GuardInput) -> dict[str, Any]:
    """The checked input as a run shows it (the fields given; the knowledge base's kind)."""
    view: dict[str, Any] = {"query": data.query, "response": data.response}
    if data.passages:
        view["passages"] = json_view(data.passages)
    dialogue = {k: v for k, v in json_view(data.dialogue).items() if v}
    if dialogue:
        view["dialogue"] = dialogue
    if data.knowledge_base is not None:
        view["knowledge_base"] = json_view(data.knowledge_base)
    return view
