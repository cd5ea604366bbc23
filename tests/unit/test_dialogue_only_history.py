"""A dialogue-only input (earlier turns, no passages, no knowledge base) is still checked against
its earlier turns: the hallucination plan's prior-turn pairs alone, the claims unverified."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.config import GuardrailConfig, HallucinationConfig
from guardrail.hallucination.claims import sentence_claims
from guardrail.hallucination.detector import detect
from guardrail.hallucination.evidence import Evidence, TurnSentence
from guardrail.hallucination.plan import plan_pairs
from guardrail.inputs import GuardInput
from guardrail.report import ClaimStatus, HallucinationType, VerdictLabel
from guardrail.stages.base import PipelineState, Resources
from guardrail.stages.hallucination import NO_EVIDENCE, HallucinationStage
from guardrail.verifiers.scripted import ScriptedVerifier

TURN = "The launch moved to Friday. Marta leads the launch team."
RESPONSE = "The launch is on Monday."
OTHER = "The weather was sunny in Lyon."


def turns_only(*texts: str) -> Evidence:
    ev = Evidence()
    for turn_id, text in enumerate(texts):
        for sentence in text.split(". "):
            sentence = sentence if sentence.endswith(".") else sentence + "."
            ev.turn_sentences.append(TurnSentence(sentence, turn_id, text))
            ev.known_texts.append(text)
    return ev


def cfg(**kw: Any) -> HallucinationConfig:
    return HallucinationConfig(**{"logical_consistency": True, **kw})


def test_without_windows_only_prior_turn_pairs_are_planned() -> None:
    config = cfg()
    response = f"{RESPONSE} {OTHER}"
    claims = sentence_claims(response, config, "en")
    notes: list[str] = []
    plan = plan_pairs(claims, [0, 1], turns_only(TURN), config, None, notes)
    assert plan.claim_pairs == {} and plan.claim_windows == {} and plan.logic == []
    assert plan.prior and all(p[1] in (RESPONSE, OTHER) for p in plan.pairs)
    assert {p[0] for p in plan.pairs} <= {
        "The launch moved to Friday.",
        "Marta leads the launch team.",
    }
    assert "earlier turns only" in notes[-1]
    assert plan_pairs(claims, [0, 1], Evidence(), config, None, []).pairs == []


def run(verifier: ScriptedVerifier, ev: Evidence, response: str = RESPONSE) -> Any:
    config = cfg()
    claims = sentence_claims(response, config, "en")
    return detect(response, claims, ev, verifier, config, None, no_evidence_reason=NO_EVIDENCE)


def test_a_contradicted_turn_is_flagged_and_the_claim_stays_unverified() -> None:
    verifier = ScriptedVerifier({("Friday", RESPONSE): "contradiction"})
    found = run(verifier, turns_only(TURN))
    assert len(verifier.calls) == 1  # one batched call, the prior-turn pairs only
    assert all(h == RESPONSE for _, h in verifier.calls[0])
    [flag] = found.flags
    assert flag.type is HallucinationType.CONTRADICTS_PRIOR and flag.claim_index == 0
    [claim] = found.claims
    assert claim.status is ClaimStatus.UNVERIFIED and claim.reason == NO_EVIDENCE
    assert claim.p_supported is None
    assert claim.evidence is not None and claim.evidence.snippet == "The launch moved to Friday."
    assert found.verdict.label is VerdictLabel.UNVERIFIED and found.verdict.reason == NO_EVIDENCE


def test_an_entailing_turn_does_not_make_the_claim_supported() -> None:
    verifier = ScriptedVerifier(default="entailment")
    found = run(verifier, turns_only(TURN))
    assert verifier.pairs_scored > 0 and found.flags == []
    assert [c.status for c in found.claims] == [ClaimStatus.UNVERIFIED]
    assert found.verdict.label is VerdictLabel.UNVERIFIED


def test_no_turns_and_no_windows_scores_nothing() -> None:
    verifier = ScriptedVerifier(default="contradiction")
    found = run(verifier, Evidence())
    assert verifier.calls == [] and found.flags == []
    assert [c.reason for c in found.claims] == [NO_EVIDENCE]


@pytest.mark.parametrize(
    ("data", "skipped"),
    [
        ({"response": RESPONSE}, True),
        ({"response": RESPONSE, "dialogue": {"turns": [{"speaker": "user", "text": "  "}]}}, True),
        (
            {"response": RESPONSE, "dialogue": {"turns": [{"speaker": "assistant", "text": TURN}]}},
            False,
        ),
        ({"response": RESPONSE, "passages": ["It is on Monday."]}, False),
    ],
)
def test_the_stage_runs_when_there_is_an_earlier_turn(data: dict[str, Any], skipped: bool) -> None:
    config = GuardrailConfig()
    stage = HallucinationStage(config, Resources(config))
    state = PipelineState(input=GuardInput.model_validate(data))
    assert stage.skip_reason(state) == (NO_EVIDENCE if skipped else None)


# --- through the pipeline (scripted verifier, the real spaCy pipeline and embedder) ------------

DIALOGUE = {
    "turns": [
        {"speaker": "user", "text": "When is the launch?"},
        {"speaker": "assistant", "text": TURN},
    ]
}


def invoke(verifier: ScriptedVerifier, response: str, **config: Any) -> Any:
    from tests.reliability_strategies import guard_with

    guard = guard_with(verifier, **config)
    return guard.invoke({"response": response, "dialogue": DIALOGUE})


@pytest.mark.parametrize("policy", ["fail_closed", "fail_open"])
def test_a_contradicting_dialogue_only_answer_is_flagged_in_one_call(policy: str) -> None:
    verifier = ScriptedVerifier({("Friday", RESPONSE): "contradiction"})
    report = invoke(verifier, RESPONSE, failure_policy=policy)
    [stage] = [s for s in report.stages if s.name == "hallucination"]
    assert stage.status.value == "ran"
    assert [f.type for f in report.hallucination_flags] == [HallucinationType.CONTRADICTS_PRIOR]
    assert [c.status for c in report.claims] == [ClaimStatus.UNVERIFIED]
    assert len(verifier.calls) == 1 and all(h == RESPONSE for _, h in verifier.calls[0])
    assert report.action.value != "accept"
    # the contradiction of an earlier turn is a confident problem although the claim is
    # unverified: it is not delivered (fail-open removes it, or regenerates, never annotates)
    assert [p.kind for p in report.decision.problems] == ["contradicts_prior"]
    if policy == "fail_closed":
        assert report.action.value == "human_review"
        assert "hallucination" in report.recommendation.reason
    else:
        assert report.action.value in ("correct_and_deliver", "regenerate")
        assert "Monday" not in (report.delivered_text or "")


@pytest.mark.parametrize(("policy", "action"), [("fail_closed", "human_review"),
                                                ("fail_open", "accept_with_flags")])  # fmt: skip
def test_a_dialogue_only_answer_that_contradicts_no_turn_keeps_its_action(
    policy: str, action: str
) -> None:
    # a claim ending in a question is not check-worthy: still unverified, as when the stage
    # was skipped, so the answer is annotated (fail-open) or reviewed (fail-closed) as before
    response = "The launch is on Friday, I think. Have you told Marta?"
    report = invoke(ScriptedVerifier(default="entailment"), response, failure_policy=policy)
    assert report.hallucination_flags == []
    assert report.claims and all(c.status is ClaimStatus.UNVERIFIED for c in report.claims)
    assert report.verdict.label is VerdictLabel.UNVERIFIED and report.verdict.reason == NO_EVIDENCE
    assert report.action.value == action
