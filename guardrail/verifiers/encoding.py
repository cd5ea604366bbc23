"""Tokenise (premise, hypothesis) pairs for a cross-encoder, the same way in every backend.

Uses a ``tokenizers`` fast tokenizer (``tokenizer.json``), so it needs neither torch nor
transformers. Long pairs are cut premise first: the hypothesis (the claim being checked) keeps
all its tokens unless it alone would take more than half the budget. Batches are sorted by
length and padded only to their own longest pair (dynamic padding).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import ModelLoadError
from guardrail.onnx_common import length_buckets
from guardrail.onnx_common import read_json as read_json  # re-exported for the backends
from guardrail.verifiers.base import Pair

BUCKET_SLACK = 1.3
"""A batch's longest pair is at most this many times its shortest (+ 8 tokens)."""


@dataclass(frozen=True)
class EncodedBatch:
    """Padded arrays for one batch, and the positions of its pairs in the caller's list."""

    indices: np.ndarray
    input_ids: np.ndarray
    attention_mask: np.ndarray
    token_type_ids: np.ndarray


WORD_CHARS = 32
"""Texts up to this long have their token counts remembered (:meth:`PairEncoder.count_tokens`)."""
WORD_CACHE = 100_000
"""At most this many remembered counts (then the memory starts over)."""


class PairEncoder:
    """Encodes pairs with a fast tokenizer, truncating to ``max_tokens`` premise first."""

    def __init__(self, tokenizer: Any, max_tokens: int) -> None:
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tok = tokenizer
        self.max_tokens = int(max_tokens)
        self._special = int(tokenizer.num_special_tokens_to_add(is_pair=True))
        if self.max_tokens <= self._special + 2:
            raise ModelLoadError(f"max_tokens={max_tokens} is too small for a pair")
        pad = tokenizer.token_to_id("[PAD]")
        if pad is None:
            pad = tokenizer.token_to_id("<pad>")
        self._pad_id = int(pad) if pad is not None else 0
        self._word_counts: dict[str, int] = {}

    @classmethod
    def from_dir(cls, model_dir: str | Path, max_tokens: int) -> PairEncoder:
        """Load ``tokenizer.json`` from a model directory."""
        from tokenizers import Tokenizer

        path = Path(model_dir) / "tokenizer.json"
        if not path.exists():
            raise ModelLoadError(f"no tokenizer.json in {model_dir}")
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:
            raise ModelLoadError(f"could not read {path}: {exc}") from exc
        return cls(tokenizer, max_tokens)

    def count_tokens(self, text: str) -> int:
        """Number of tokens of ``text`` without special tokens (short texts — the words
        evidence windows are cut by — remembered, up to ``WORD_CACHE`` of them)."""
        if len(text) > WORD_CHARS:
            return len(self._tok.encode(text, add_special_tokens=False).ids)
        found = self._word_counts.get(text)
        if found is None:
            found = len(self._tok.encode(text, add_special_tokens=False).ids)
            if len(self._word_counts) >= WORD_CACHE:
                self._word_counts.clear()
            self._word_counts[text] = found
        return found

    def encode(self, pair: Pair) -> tuple[list[int], list[int]]:
        """Token ids and token-type ids of one pair, at most ``max_tokens`` long."""
        premise, hypothesis = pair
        enc_p = self._tok.encode(premise, add_special_tokens=False)
        enc_h = self._tok.encode(hypothesis, add_special_tokens=False)
        budget = self.max_tokens - self._special
        n_p, n_h = len(enc_p.ids), len(enc_h.ids)
        if n_p + n_h > budget:
            keep_h = min(n_h, max(budget // 2, budget - n_p))
            keep_p = min(n_p, budget - keep_h)
            if keep_h < n_h:
                enc_h.truncate(keep_h)
            if keep_p < n_p:
                enc_p.truncate(keep_p)
        merged = self._tok.post_process(enc_p, enc_h, add_special_tokens=True)
        return list(merged.ids), list(merged.type_ids)

    def batches(self, pairs: Sequence[Pair], batch_size: int) -> Iterator[EncodedBatch]:
        """Encode all pairs, sort by length, yield padded batches (indices map back).

        A batch holds at most ``batch_size`` pairs of similar length: it ends before a pair
        longer than ``BUCKET_SLACK`` × its shortest pair (+ 8 tokens), so a claim's short
        sentence-first premise is not padded to the length of a whole window.
        """
        encoded = [self.encode(p) for p in pairs]
        for rows in length_buckets([len(ids) for ids, _ in encoded], batch_size, BUCKET_SLACK, 8):
            idx = np.asarray(rows, dtype=np.int64)
            width = max(len(encoded[i][0]) for i in idx)
            ids = np.full((len(idx), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                tok_ids, type_ids = encoded[i]
                ids[row, : len(tok_ids)] = tok_ids
                mask[row, : len(tok_ids)] = 1
                types[row, : len(type_ids)] = type_ids
            yield EncodedBatch(idx, ids, mask, types)


def check_pairs(pairs: Sequence[Pair]) -> list[Pair]:
    """Validate the input: a sequence of (str, str); raises ``InputError`` otherwise."""
    from guardrail.errors import InputError

    if isinstance(pairs, (str, bytes)):
        raise InputError("predict() takes a list of (premise, hypothesis) pairs, not a string")
    checked: list[Pair] = []
    for k, pair in enumerate(pairs):
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or not all(isinstance(x, str) for x in pair)
        ):
            raise InputError(f"pair {k} must be a (premise, hypothesis) tuple of two strings")
        checked.append((pair[0], pair[1]))
    return checked
