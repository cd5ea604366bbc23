"""The decision on real models: the AlphaCodium cases, long answers, check-worthiness, KB flags,
retrieval scores computed inside the library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from guardrail import Guardrail
from guardrail.report import (
    Action,
    ClaimOutcome,
    ClaimStatus,
    CorrectionType,
    HallucinationType,
    VerdictLabel,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
ALPHA = (
    "AlphaCodium is a test-based, multi-stage, code-oriented iterative flow that improves the "
    "performance of LLMs on code problems. It was introduced by CodiumAI in 2024."
)
MEETING = (
    "The meeting with John is at 2pm on Monday in room 4B. The agenda covers the Q3 budget and "
    "the hiring plan. Sarah Lee will present the marketing results. The meeting is expected to "
    "last one hour."
)
DELIVERED_AS_IS = {Action.ACCEPT, Action.ACCEPT_WITH_FLAGS}


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail()


def test_wrong_year_is_never_delivered_from_the_cli() -> None:
    out = subprocess.run(
        [
            sys.executable, "-m", "guardrail.cli", "check", "--format", "json",
            "--query", "When was the paper published?",
            "--passage", "The paper was published in 2023.",
            "--response", "The paper was published in 2021.",
        ],
        capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    action = report["recommendation"]["action"]
    assert report["verdict"]["label"] == "HALLUCINATION"
    assert action in ("correct_and_deliver", "regenerate"), action
    if action == "correct_and_deliver":
        assert report["corrected"] == "The paper was published in 2023."
        fixes = [c for c in report["corrections"] if c["type"] == "factual"]
        assert fixes and fixes[0]["source"] == "evidence" and fixes[0]["verified"] is True


def test_alphacodium_cases_end_in_the_right_action(guard: Guardrail) -> None:
    ok = guard.invoke(
        {
            "query": "What is AlphaCodium?",
            "response": "AlphaCodium is an iterative method for improving LLM code generation.",
            "passages": [ALPHA],
        }
    )
    assert ok.verdict.label is VerdictLabel.VERIFIED and ok.action in DELIVERED_AS_IS, ok.decision
    bad = guard.invoke(
        {
            "query": "What is AlphaCodium?",
            "response": "AlphaCodium was released by Google in 2024. It uses reinforcement "
            "learning to train the model.",
            "passages": [ALPHA],
        }
    )
    assert bad.verdict.label is VerdictLabel.HALLUCINATION
    assert bad.action in (Action.REGENERATE, Action.HUMAN_REVIEW)
    if bad.action is Action.REGENERATE:
        guidance = " ".join(bad.recommendation.items)  # type: ignore[union-attr]
        assert "It uses reinforcement learning" in guidance


def test_long_supported_answer_is_delivered_and_greetings_are_not_checked(guard: Guardrail) -> None:
    response = (
        "Sure! The meeting with John is at 2pm on Monday. It takes place in room 4B. The agenda "
        "covers the Q3 budget and the hiring plan. Sarah Lee will present the marketing results. "
        "I hope this helps!"
    )
    r = guard.invoke(
        {"query": "Tell me about the meeting", "response": response, "passages": [MEETING]}
    )
    statuses = [c.status for c in r.claims]
    assert statuses[-1] is ClaimStatus.NOT_CHECKWORTHY and "not check-worthy" in (
        r.claims[-1].reason or ""
    )
    assert ClaimStatus.UNSUPPORTED not in statuses and ClaimStatus.CONTRADICTED not in statuses
    assert r.verdict.label is VerdictLabel.VERIFIED and r.action in DELIVERED_AS_IS, r.decision
    assert r.decision.not_checkworthy_claims >= 1 and r.decision.supported_fraction == 1.0
    assert all(c.p_supported is not None for c in r.claims if c.status is ClaimStatus.SUPPORTED)


INVENTED = "Tom Baker will present the sales results."
LONG_WITH_INVENTED = (
    "The meeting with John is at 2pm on Monday. It takes place in room 4B. The agenda covers "
    f"the Q3 budget and the hiring plan. {INVENTED}"
)


def test_long_answer_with_an_invented_sentence_delivers_the_supported_rest(
    guard: Guardrail,
) -> None:
    r = guard.invoke(
        {
            "query": "Tell me about the meeting",
            "response": LONG_WITH_INVENTED,
            "passages": [MEETING],
        }
    )
    assert r.verdict.label is VerdictLabel.HALLUCINATION
    kinds = {(f.type, f.content) for f in r.hallucination_flags}
    assert (HallucinationType.NONEXISTENT_ENTITY, "Tom Baker") in kinds
    # claim granularity (default): the invented sentence is removed, the rest delivered unmarked
    assert r.action is Action.CORRECT_AND_DELIVER, r.decision
    assert r.delivered_text == LONG_WITH_INVENTED.removesuffix(" " + INVENTED)
    removals = [c for c in r.corrections if c.type is CorrectionType.REMOVAL]
    assert [c.original.strip() for c in removals] == [INVENTED]
    assert "nonexistent entity" in (removals[0].message or "")
    assert [c.outcome for c in r.claims] == [ClaimOutcome.SUPPORTED] * 3 + [ClaimOutcome.REMOVED]
    assert r.decision.removed_claims == 1 and r.decision.kept_share == 0.75


def test_all_or_nothing_granularity_regenerates_the_same_answer() -> None:
    r = Guardrail({"decision": {"granularity": "answer"}}).invoke(
        {
            "query": "Tell me about the meeting",
            "response": LONG_WITH_INVENTED,
            "passages": [MEETING],
        }
    )
    assert r.action in (Action.REGENERATE, Action.HUMAN_REVIEW)
    assert r.delivered_text is None and r.decision.granularity == "answer"
    if r.action is Action.REGENERATE:
        assert sum("Tom Baker" in item for item in r.recommendation.items) == 1


def test_registry_entities_count_as_known(guard: Guardrail) -> None:
    data = {
        "query": "Who presents?",
        "response": "Priya Raman will present the marketing results.",
        "passages": [MEETING],
        "dialogue": {"entities": [{"name": "Priya Raman", "type": "person"}]},
    }
    r = guard.invoke(data)
    names = {
        f.content for f in r.hallucination_flags if f.type is HallucinationType.NONEXISTENT_ENTITY
    }
    assert "Priya Raman" not in names
    data.pop("dialogue")
    r = guard.invoke(data)
    names = {
        f.content for f in r.hallucination_flags if f.type is HallucinationType.NONEXISTENT_ENTITY
    }
    assert "Priya Raman" in names  # the same answer without the registry: an unknown name


def test_retrieval_score_is_computed_in_the_library(guard: Guardrail) -> None:
    from guardrail.models import load_embedder

    query = "When is the meeting?"
    data = {"query": query, "response": "The meeting is at 2pm on Monday.", "passages": [MEETING]}
    scored = Guardrail({"retrieval_score": "embedding"})
    r = scored.invoke(data)
    vecs = load_embedder(guard.config.models.embedding).encode(
        [query, MEETING], normalize_embeddings=True
    )
    assert r.verdict.retrieval_score == pytest.approx(float(vecs[0] @ vecs[1]), abs=1e-4)
    given = scored.invoke({**data, "passages": [{"text": MEETING, "score": 0.9}]})
    assert given.verdict.retrieval_score == 0.9  # a retriever's own score wins
    off = Guardrail({"retrieval_score": "none"}).invoke(data)
    assert off.verdict.retrieval_score is None
    # auto (the default): scored only for a policy that uses T(rs)
    assert guard.config.retrieval_score == "auto"
    assert guard.config.hallucination.policy == "calibrated"
    assert guard.invoke(data).verdict.retrieval_score is None
    weakest = Guardrail({"hallucination": {"policy": "weakest_link"}}).invoke(data)
    assert weakest.verdict.retrieval_score == pytest.approx(r.verdict.retrieval_score, abs=1e-6)
    assert weakest.verdict.threshold == pytest.approx(
        guard.config.hallucination.threshold.threshold(r.verdict.retrieval_score), abs=1e-6
    )


def test_alphacodium_invented_sentence_beside_supported_ones_is_removed_or_flagged(
    guard: Guardrail,
) -> None:
    """The supported sentences are delivered, the invented one is not
    shown unmarked."""
    supported = "AlphaCodium is an iterative method for improving LLM code generation."
    invented = "It was acquired by Google in 2024."
    r = guard.invoke(
        {
            "query": "What is AlphaCodium?",
            "response": f"{supported} {invented}",
            "passages": [ALPHA],
        }
    )
    assert r.action in (Action.CORRECT_AND_DELIVER, Action.ACCEPT_WITH_FLAGS), r.decision
    delivered = r.delivered_text or ""
    assert delivered.startswith(supported)
    assert invented not in delivered or f"{invented.rstrip('.')} [" in delivered
    assert r.claims[0].outcome is ClaimOutcome.SUPPORTED
    assert r.claims[1].outcome in (ClaimOutcome.REMOVED, ClaimOutcome.UNCERTAIN)


def test_evidence_the_verifier_cannot_read_makes_the_answer_unverified(guard: Guardrail) -> None:
    """An English answer against Chinese passages is UNVERIFIED, not fabricated."""
    r = guard.invoke(
        {
            "query": "When is the meeting with John?",
            "response": "The meeting with John is at 2pm on Monday.",
            "passages": [{"text": "与约翰的会议定于周一下午两点在四楼会议室举行。"}],
        }
    )
    assert r.verdict.label is VerdictLabel.UNVERIFIED
    assert r.action is Action.HUMAN_REVIEW and r.delivered_text is None
    assert r.hallucination_flags == []
    assert all(c.status is ClaimStatus.UNVERIFIED for c in r.claims)
    assert "'zh'" in (r.claims[0].reason or "")


def test_an_answer_whose_answering_claim_is_removed_is_regenerated(guard: Guardrail) -> None:
    """The claim that answers the question is itself unsupported → regenerate, with
    guidance naming it once (the QUD check on what would be delivered)."""
    wrong = "AlphaCodium was acquired by Google in 2024."
    r = guard.invoke(
        {
            "query": "Who acquired AlphaCodium?",
            "response": f"{wrong} It is a code generation method developed by CodiumAI.",
            "passages": [ALPHA],
        }
    )
    assert r.action is Action.REGENERATE, r.decision
    assert "does not answer the question" in r.decision.gate
    assert r.claims[0].outcome is ClaimOutcome.REMOVED and r.delivered_text is None
    items = r.recommendation.items  # type: ignore[union-attr]
    assert sum(wrong in item for item in items) == 1
