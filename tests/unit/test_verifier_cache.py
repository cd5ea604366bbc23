"""The in-process LRU score cache: hits, eviction, failures, threads, and the wrapper contract."""

from __future__ import annotations

import threading

import pytest

from guardrail.errors import ConfigError, VerifierError
from guardrail.verifiers import Verifier
from guardrail.verifiers.cache import CachedVerifier, ScoreCache, cached_predict
from guardrail.verifiers.scripted import ScriptedVerifier
from tests.verifier_conformance import VerifierConformance


class TestCachedConformance(VerifierConformance):
    @pytest.fixture
    def verifier(self) -> Verifier:
        return CachedVerifier(
            ScriptedVerifier({(None, "A man is playing an instrument."): "entailment"})
        )


def test_only_distinct_misses_reach_the_verifier() -> None:
    inner = ScriptedVerifier({(None, "h1"): "entailment"})
    cache = ScoreCache(10)
    first = cached_predict(inner, [("p", "h1"), ("p", "h2"), ("p", "h1")], cache)
    second = cached_predict(inner, [("p", "h2"), ("p", "h1"), ("q", "h1")], cache)
    assert inner.calls == [[("p", "h1"), ("p", "h2")], [("q", "h1")]]
    assert [p.label for p in first] == ["entailment", "neutral", "entailment"]
    assert [p.label for p in second] == ["neutral", "entailment", "entailment"]
    assert cache.stats()["hits"] == 2


def test_least_recently_used_is_evicted_first() -> None:
    inner = ScriptedVerifier()
    cache = ScoreCache(2)
    cached_predict(inner, [("p", "a"), ("p", "b")], cache)
    cached_predict(inner, [("p", "a")], cache)  # a is now the most recent
    cached_predict(inner, [("p", "c")], cache)  # evicts b
    assert len(cache) == 2
    cached_predict(inner, [("p", "a"), ("p", "b")], cache)
    assert inner.calls[-1] == [("p", "b")]


def test_key_includes_the_model_name() -> None:
    cache = ScoreCache(10)
    yes = ScriptedVerifier(default="entailment", name="model-a")
    no = ScriptedVerifier(default="contradiction", name="model-b")
    assert cached_predict(yes, [("p", "h")], cache)[0].label == "entailment"
    assert cached_predict(no, [("p", "h")], cache)[0].label == "contradiction"


def test_a_failed_call_caches_nothing_and_raises() -> None:
    inner = ScriptedVerifier(fail_on={"bad"})
    cache = ScoreCache(10)
    with pytest.raises(VerifierError):
        cached_predict(inner, [("p", "ok"), ("p", "bad")], cache)
    assert len(cache) == 0


def test_size_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="at least 1"):
        ScoreCache(0)


def test_threads_share_one_cache_consistently() -> None:
    inner = ScriptedVerifier(default="entailment")
    cache = ScoreCache(50)
    pairs = [("p", f"h{i}") for i in range(100)]
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for k in range(100):
                pair = pairs[(k + offset) % 100]
                [pred] = cached_predict(inner, [pair], cache)
                assert pred.label == "entailment"
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i * 7,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cache) == 50
    stats = cache.stats()
    assert stats["hits"] + stats["misses"] == 400
