"""Reading JSON Lines with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from guardrail.errors import InputError


def iter_jsonl(path: str | Path, missing_hint: str = "") -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line; ``InputError`` naming the file and
    line for a missing file, a line that is not JSON or one that is not a JSON object."""
    file = Path(path)
    if not file.exists():
        raise InputError(f"file not found: {file}{missing_hint}")
    with file.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{file}:{n}: not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise InputError(f"{file}:{n}: each line must be a JSON object")
            yield n, row
