"""The SQLite score cache, around the tiny real BERT verifier (real transformers code and
tokenizer, random weights). A subclass counts the pairs that reach the model."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from guardrail.evaluation.cache import CachingVerifier, pair_key
from guardrail.verifiers import NLIPrediction
from guardrail.verifiers.base import Pair

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.verifier_conformance import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-cache"))


@pytest.fixture
def counting(tiny_dir: Path):  # type: ignore[no-untyped-def]
    from guardrail.verifiers.hf_backend import HFVerifier

    class Counting(HFVerifier):
        def __init__(self, path: Path) -> None:
            super().__init__(path, max_tokens=64)
            self.seen: list[Pair] = []
            self.lock = threading.Lock()

        def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
            with self.lock:
                self.seen.extend(pairs)
            return super().predict(pairs)

    return Counting(tiny_dir)


PAIRS = [
    ("The meeting is at 2pm.", "The meeting is in the afternoon."),
    ("Paris is in France.", "Paris is in Spain."),
    ("The meeting is at 2pm.", "The meeting is in the afternoon."),  # duplicate
]


def test_cache_hits_return_the_model_scores_and_persist(counting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "c" / "cache.sqlite"
    cached = CachingVerifier(counting, db, "tiny@1")
    first = cached.predict(PAIRS)
    assert len(counting.seen) == 2  # the duplicate was sent once
    assert first[0] == first[2]
    direct = counting.predict(PAIRS[:2])
    for a, b in zip(first[:2], direct, strict=True):
        assert a.entailment == pytest.approx(b.entailment, abs=1e-9)
        assert a.contradiction == pytest.approx(b.contradiction, abs=1e-9)
    counting.seen.clear()
    assert cached.predict(list(reversed(PAIRS))) == list(reversed(first))
    assert counting.seen == []
    assert cached.stats() == {"hits": 4, "misses": 2, "rows": 2}
    cached.close()

    reopened = CachingVerifier(counting, db, "tiny@1")
    assert reopened.predict(PAIRS[:1]) == first[:1] and counting.seen == []
    other_model = CachingVerifier(counting, db, "tiny@2")
    other_model.predict(PAIRS[:1])
    assert counting.seen == [PAIRS[0]]  # a new fingerprint never reuses old scores
    assert reopened.predict([]) == []


def test_cache_forwards_the_verifier_interface(counting) -> None:  # type: ignore[no-untyped-def]
    cached = CachingVerifier(counting, ":memory:")
    assert cached.name == counting.name and cached.max_tokens == counting.max_tokens
    assert cached.count_tokens("two words") == counting.count_tokens("two words")
    assert cached.covers("en") and not cached.covers("zh")


def test_cache_is_safe_across_threads(counting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cached = CachingVerifier(counting, tmp_path / "t.sqlite")
    pairs = [(f"premise {i}", f"hypothesis {i % 5}") for i in range(20)]
    results: list[list[NLIPrediction]] = []

    def work() -> None:
        results.append(cached.predict(pairs))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == results[0] for r in results) and len(results) == 4
    assert cached.stats()["rows"] == 20


def test_pair_key_separates_fields() -> None:
    assert pair_key("m", "ab", "c") != pair_key("m", "a", "bc")
    assert pair_key("m", "a", "b") != pair_key("n", "a", "b")
    assert pair_key("m", "a", "b") == pair_key("m", "a", "b")
