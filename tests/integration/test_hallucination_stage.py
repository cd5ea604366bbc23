"""Claims + hallucination stages end to end with the real verifier and embedder.

The verifier is the bundled one (``load_verifier()``), or the directory in
``GUARDRAIL_TEST_VERIFIER`` (e.g. a copy of a training checkpoint); the tests skip when neither
loads. Wrappers below delegate to the real model and only count calls or inject a failure.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pytest

from guardrail import Guardrail
from guardrail.errors import ModelLoadError, VerifierError
from guardrail.report import ClaimStatus, HallucinationType, StageStatus, VerdictLabel
from guardrail.verifiers.base import NLIPrediction, Verifier
from tests.counting import CountingVerifier as Counting

pytestmark = pytest.mark.integration

ALPHA = (
    "AlphaCodium is a code generation method that improves LLM coding ability through iterative "
    "refinement; it reached state-of-the-art results on the CodeContests dataset."
)


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    from guardrail.verifiers import load_verifier

    spec = os.environ.get("GUARDRAIL_TEST_VERIFIER") or None
    try:
        return load_verifier(spec)
    except ModelLoadError as exc:
        pytest.skip(f"no verifier model available ({exc}); set GUARDRAIL_TEST_VERIFIER")


@pytest.fixture(scope="module")
def guard(verifier: Verifier) -> Guardrail:
    return Guardrail(verifier=verifier)


class FailsOn(Counting):
    """The real verifier, except that any batch holding ``marker`` in a hypothesis fails."""

    def __init__(self, inner: Verifier, marker: str) -> None:
        super().__init__(inner)
        self.marker = marker

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIPrediction]:
        if any(self.marker in h for _, h in pairs):
            raise VerifierError("injected failure")
        return super().predict(pairs)


def check(guard: Guardrail, response: str, passages: list[Any], **extra: Any) -> Any:
    return guard.invoke({"response": response, "passages": passages, **extra})


def flag_types(report: Any, content: str) -> set[HallucinationType]:
    return {f.type for f in report.hallucination_flags if f.content == content}


def test_alphacodium_faithful_answer_is_verified(guard: Guardrail) -> None:
    r = check(
        guard, "AlphaCodium is an iterative method for improving LLM code generation.", [ALPHA]
    )
    assert r.verdict.label is VerdictLabel.VERIFIED, (r.verdict, r.claims)
    assert r.hallucination_flags == []
    assert [c.status for c in r.claims] == [ClaimStatus.SUPPORTED]
    assert r.claims[0].evidence is not None and r.claims[0].evidence.passage_index == 0


def test_alphacodium_invented_answer_flags_both_sentences(guard: Guardrail) -> None:
    response = (
        "AlphaCodium was released by Google in 2024. It uses reinforcement learning to train "
        "the model."
    )
    r = check(guard, response, [ALPHA])
    assert r.verdict.label is VerdictLabel.HALLUCINATION, r.verdict
    s1, s2 = r.claims
    assert s1.status is not ClaimStatus.SUPPORTED and s2.status is not ClaimStatus.SUPPORTED
    flagged = {(f.span.start, f.span.end) for f in r.hallucination_flags}
    assert (s1.span.start, s1.span.end) in flagged and (s2.span.start, s2.span.end) in flagged
    assert HallucinationType.NONEXISTENT_ENTITY in flag_types(r, "Google")
    assert HallucinationType.FABRICATED_FACT in flag_types(r, "2024")  # a value in no known text


def test_wrong_year_is_a_contradiction_on_the_year(guard: Guardrail) -> None:
    r = check(guard, "The paper was published in 2021.", ["The paper was published in 2023."])
    assert r.verdict.label is VerdictLabel.HALLUCINATION
    assert r.claims[0].status is ClaimStatus.CONTRADICTED, r.claims[0].scores
    assert HallucinationType.CONTRADICTS_FACT in flag_types(r, "The paper was published in 2021.")
    [year] = [f for f in r.hallucination_flags if f.type is HallucinationType.TEMPORAL_ERROR]
    assert year.content == "2021" and year.suggestion == "the evidence says 2023"


def test_support_past_token_1000_is_found_in_its_window(verifier: Verifier) -> None:
    counting = Counting(verifier)
    guard = Guardrail(verifier=counting)
    filler = " ".join(
        f"Section {i} of the report lists routine maintenance of the city's parks."
        for i in range(90)
    )
    passage = filler + " The Harbour Bridge was opened to road traffic in 1998. " + filler
    assert verifier.count_tokens(passage.split("The Harbour")[0]) > 1000  # type: ignore[attr-defined]
    r = check(guard, "The Harbour Bridge opened to road traffic in 1998.", [passage])
    claim = r.claims[0]
    assert claim.status is ClaimStatus.SUPPORTED, claim
    assert claim.evidence is not None and claim.evidence.window_index > 5
    assert "Harbour Bridge was opened" in claim.evidence.snippet
    # BM25 keeps a few windows (the passage has far more); the best one entails the claim, so
    # the others are never scored (early exit).
    assert counting.sizes[0] == 1 and sum(counting.sizes) <= 3
    assert "BM25 top-3 of" in (r.verdict.method or "")


def test_all_pairs_go_in_one_call_and_pruning_off_scores_every_window(verifier: Verifier) -> None:
    counting = Counting(verifier)
    config = {"hallucination": {"top_m_windows": 0, "logical_consistency": False}}
    guard = Guardrail(config, verifier=counting)
    passages = [
        f"Fact {i}: the depot on street {i} opens at {i % 12 + 1} am daily. " * 20 for i in range(6)
    ]
    r = check(guard, "The depot on street 3 opens daily. It has a large yard.", passages)
    n_windows = int((r.verdict.method or "").split("all ")[1].split(" windows")[0])
    assert n_windows > 6
    # early exit: each claim's first premise (its best window, or with sentence_first the
    # sentences of that window sharing its words) in one call; a claim it settles costs that one
    # pair, an unsettled one every window (+1 when its first premise was a short one). "It has
    # a large yard." is in no passage, so at least that claim is scored on every window.
    assert counting.sizes[0] == 2
    n = n_windows
    assert len(counting.calls) == 2
    assert sum(counting.sizes) in (n + 1, n + 2, 2 * n, 2 * n + 1, 2 * n + 2)
    off = Counting(verifier)
    plain = {"hallucination": {**config["hallucination"], "speed": {"sentence_first": False}}}
    check(Guardrail(plain, verifier=off), "The depot on street 3 opens daily. It has a large yard.",
          passages)  # fmt: skip
    assert off.sizes[0] == 2 and sum(off.sizes) in (n + 1, 2 * n)  # without short premises


def test_chinese_claims_are_unverified_with_the_reason(guard: Guardrail) -> None:
    response = "AlphaCodium 是 Google 在 2024 年发布的代码生成工具。它使用强化学习来训练模型。"
    r = check(guard, response, [ALPHA])
    assert r.language == "zh"
    assert [response[c.span.start : c.span.end] for c in r.claims] == [
        "AlphaCodium 是 Google 在 2024 年发布的代码生成工具。",
        "它使用强化学习来训练模型。",
    ]
    assert all(c.status is ClaimStatus.UNVERIFIED for c in r.claims)
    assert "language 'zh' not covered" in (r.claims[0].reason or "")
    assert r.verdict.label is VerdictLabel.UNVERIFIED and "'zh'" in r.verdict.reason
    assert r.recommendation.action == "human_review"


def test_one_uncovered_sentence_keeps_a_supported_answer_unverified(guard: Guardrail) -> None:
    response = "AlphaCodium is an iterative method for improving LLM code generation. 它很好用，大家都喜欢。"
    r = check(guard, response, [ALPHA])
    assert [c.status for c in r.claims] == [ClaimStatus.SUPPORTED, ClaimStatus.UNVERIFIED]
    assert r.verdict.label is VerdictLabel.UNVERIFIED


def test_a_failing_claim_does_not_sink_the_others(verifier: Verifier) -> None:
    failing = FailsOn(verifier, "reinforcement")
    guard = Guardrail(verifier=failing)
    response = (
        "AlphaCodium is an iterative method for improving LLM code generation. "
        "It uses reinforcement learning to train the model."
    )
    r = check(guard, response, [ALPHA])
    ok, bad = r.claims
    assert ok.status is not ClaimStatus.UNVERIFIED and ok.scores is not None  # still checked
    assert bad.status is ClaimStatus.UNVERIFIED and "injected failure" in (bad.reason or "")
    assert r.verdict.label is not VerdictLabel.VERIFIED  # an unchecked claim never passes
    assert "per-claim fallback" in (r.verdict.method or "")


def test_verifier_that_cannot_load_fails_the_stage_closed() -> None:
    guard = Guardrail({"models": {"verifier": "/nonexistent/verifier-dir"}})
    r = check(guard, "The paper was published in 2021.", ["The paper was published in 2023."])
    [rec] = [s for s in r.stages if s.name == "hallucination"]
    assert rec.status is StageStatus.FAILED
    assert r.recommendation.action == "human_review"
    assert r.claims and r.claims[0].text == "The paper was published in 2021."


def test_no_evidence_skips_but_keeps_claims(guard: Guardrail) -> None:
    r = guard.invoke({"response": "The paper was published in 2021. It won an award."})
    [rec] = [s for s in r.stages if s.name == "hallucination"]
    assert rec.status is StageStatus.SKIPPED
    assert rec.reason == "no evidence (passages or knowledge base) given"
    assert len(r.claims) == 2 and r.verdict.label is VerdictLabel.UNVERIFIED


class FactsKB:
    """A minimal knowledge base with the ``render_facts`` hook the stage looks for."""

    def render_facts(self, entity_names: list[str] | None) -> list[str]:
        return ["Sarah Lee works in the Finance department.", "Sarah Lee joined in 2019."]


def test_kb_facts_are_evidence(guard: Guardrail) -> None:
    r = guard.invoke(
        {"response": "Sarah Lee works in the Finance department.", "knowledge_base": FactsKB()}
    )
    assert r.claims[0].status is ClaimStatus.SUPPORTED
    assert r.claims[0].evidence is not None and r.claims[0].evidence.passage_index == -1


def test_logical_inconsistency_between_sentences(guard: Guardrail) -> None:
    passage = "Anna Berg is a painter who moved to Berlin in 2015."
    response = "Anna Berg lives in Berlin with her two children. Anna Berg lives alone in Berlin."
    r = check(guard, response, [passage])
    logic = [f for f in r.hallucination_flags if f.type is HallucinationType.LOGICAL_INCONSISTENCY]
    assert logic, r.hallucination_flags
    assert logic[0].content == "Anna Berg lives alone in Berlin."
    assert logic[0].evidence == "Anna Berg lives in Berlin with her two children."


def test_contradicts_prior_turn(guard: Guardrail) -> None:
    dialogue = [
        {"speaker": "user", "text": "I live in Berlin with my two children."},
        {"speaker": "assistant", "text": "Thanks, I will look for family flats in Berlin."},
    ]
    passage = "Family flats in Berlin cost more in the city centre."
    r = check(guard, "You live alone in Berlin.", [passage], dialogue=dialogue)
    prior = [f for f in r.hallucination_flags if f.type is HallucinationType.CONTRADICTS_PRIOR]
    assert prior, r.hallucination_flags
    assert prior[0].evidence == "I live in Berlin with my two children."
    assert "turn 0" in prior[0].explanation
