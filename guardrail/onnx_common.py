"""Helpers shared by the ONNX exports and runtimes of the verifiers and the embedder.

Neutral ground below both :mod:`guardrail.verifiers` and :mod:`guardrail.embedding_onnx`, so
neither imports the other: batching by length, reading a model folder's JSON files, and the
wrapper that makes a Hugging Face model traceable by ``torch.onnx.export``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from guardrail.errors import ModelLoadError

__all__ = ["length_buckets", "output_only", "read_json"]


def length_buckets(
    lengths: Sequence[int], batch_size: int, slack: float, extra: int
) -> Iterator[list[int]]:
    """Indices sorted by length (stable), cut into batches of at most ``batch_size`` whose
    longest item is at most ``slack`` × the shortest + ``extra`` (padding stays small)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    start = 0
    while start < len(order):
        limit = slack * lengths[order[start]] + extra
        end = start + 1
        while (
            end < len(order) and end - start < max(1, batch_size) and lengths[order[end]] <= limit
        ):
            end += 1
        yield order[start:end]
        start = end


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object file, raising ``ModelLoadError`` with the path on failure."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"could not read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path} must hold a JSON object")
    return data


def output_only(torch: Any, model: Any, field: str) -> Any:
    """``model`` wrapped to take (input_ids, attention_mask, token_type_ids) positionally and
    return only its output ``field`` (``logits``, ``last_hidden_state``), in eval mode."""

    class OutputOnly(torch.nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return getattr(out, field)

    return OutputOnly(model).eval()  # a wrapper in train mode would re-enable dropout
