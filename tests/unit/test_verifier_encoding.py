"""Pair encoding for the cross-encoder: truncation and length-bucketed batches (bundled tokenizer)."""

from __future__ import annotations

import numpy as np

from guardrail.models import bundled_verifier_path
from guardrail.verifiers.encoding import BUCKET_SLACK, PairEncoder

SHORT = ("Porto is in Portugal.", "Porto is a city.")
LONG = (" ".join(["The board reviews safety, hiring and product quality every month."] * 12),
        "The board meets monthly.")  # fmt: skip


def encoder(max_tokens: int = 160) -> PairEncoder:
    return PairEncoder.from_dir(bundled_verifier_path(), max_tokens)


def test_long_premises_are_cut_first_and_the_claim_kept() -> None:
    enc = encoder(64)
    ids, types = enc.encode(LONG)
    assert len(ids) == 64 and len(types) == 64
    claim = enc.encode(("", LONG[1]))[0]
    assert ids[-(len(claim) - 2) :] == claim[2:]  # the hypothesis and final [SEP] intact


def test_batches_group_pairs_of_similar_length_and_cover_every_pair_once() -> None:
    enc = encoder()
    pairs = [SHORT, LONG, SHORT, LONG, (SHORT[0] * 3, SHORT[1])] * 3
    lengths = [len(enc.encode(p)[0]) for p in pairs]
    seen: list[int] = []
    batches = list(enc.batches(pairs, batch_size=4))
    for b in batches:
        rows = [lengths[i] for i in b.indices]
        assert len(rows) <= 4
        assert max(rows) <= BUCKET_SLACK * min(rows) + 8  # short pairs never padded to long ones
        assert b.input_ids.shape == (len(rows), max(rows))
        assert list(b.attention_mask.sum(axis=1)) == rows
        seen += [int(i) for i in b.indices]
    assert sorted(seen) == list(range(len(pairs)))
    assert len(batches) >= 3  # three length groups at least
    again = [np.asarray(b.indices).tolist() for b in enc.batches(pairs, batch_size=4)]
    assert again == [np.asarray(b.indices).tolist() for b in batches]  # deterministic
