"""Data model, config, input validation, stage wrapper and the failure policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from guardrail.config import FailurePolicy, GuardrailConfig
from guardrail.errors import ConfigError, InputError
from guardrail.inputs import GuardInput, Passage, coerce_input
from guardrail.pipeline import Guardrail, _StageStep, unchecked_reasons
from guardrail.report import (
    FactualValidationResult,
    GuardReport,
    StageRecord,
    StageStatus,
    Verdict,
    VerdictLabel,
)
from guardrail.stages.base import PipelineState, Stage


def test_dict_and_documents_are_accepted() -> None:
    doc = Document(
        page_content="The meeting is at 2pm.", metadata={"score": 0.8, "source": "a.txt", "page": 2}
    )
    gi = coerce_input(
        {
            "query": "When?",
            "response": "At 2pm.",
            "passages": [doc, "plain text", {"text": "t", "score": 0.3}],
            "dialogue": [
                {"speaker": "user", "text": "hi"},
                {"speaker": "assistant", "text": "hello"},
            ],
        }
    )
    assert [p.text for p in gi.passages] == ["The meeting is at 2pm.", "plain text", "t"]
    assert gi.passages[0].score == 0.8 and gi.passages[0].source == "a.txt"
    assert gi.passages[0].metadata == {"source": "a.txt", "page": 2}
    assert gi.retrieval_score == 0.8
    assert [t.turn_id for t in gi.dialogue.turns] == [0, 1]
    # JSON round trip (knowledge_base is a handle and is not serialised as data)
    again = GuardInput.model_validate_json(gi.model_dump_json())
    assert again.passages == gi.passages


@pytest.mark.parametrize("bad", [None, 42, ["a"], {"query": "q"}, {"response": 3}])
def test_bad_inputs_raise_typed_errors(bad: Any) -> None:
    with pytest.raises(InputError):
        coerce_input(bad)


def test_passage_rejects_unknown_types() -> None:
    with pytest.raises(InputError):
        Passage.coerce(3.5)


def test_guardrail_rejects_empty_and_oversized_responses() -> None:
    guard = Guardrail({"max_response_chars": 50, "max_evidence_chars": 100})
    with pytest.raises(InputError, match="empty"):
        guard.invoke({"response": "   "})
    with pytest.raises(InputError, match="max_response_chars"):
        guard.invoke({"response": "x" * 51})
    with pytest.raises(InputError, match="max_evidence_chars"):
        guard.invoke({"response": "ok answer", "passages": ["y" * 101]})


def test_config_profiles_and_files(tmp_path: Path) -> None:
    offline = GuardrailConfig.load(None)
    assert offline.profile == "offline" and offline.failure_policy is FailurePolicy.FAIL_CLOSED
    assert (
        offline.weights.coherence,
        offline.weights.factual,
        offline.weights.hallucination,
        offline.weights.entity,
    ) == (0.25, 0.35, 0.30, 0.10)
    assert (
        offline.thresholds.accept,
        offline.thresholds.flag,
        offline.thresholds.correct,
        offline.thresholds.regenerate,
    ) == (0.90, 0.75, 0.50, 0.30)
    online = GuardrailConfig.from_profile("online")
    assert online.models.verifier == "roberta-large-mnli"
    assert online.models.embedding == "BAAI/bge-small-en-v1.5"
    assert online.hallucination.window_tokens == 400 and online.hallucination.window_stride == 200
    path = tmp_path / "g.yaml"
    path.write_text(
        "profile: offline\nhallucination:\n  policy: ratio\nfailure_policy: fail_open\n"
    )
    cfg = GuardrailConfig.load(path)
    assert cfg.hallucination.policy == "ratio" and cfg.failure_policy is FailurePolicy.FAIL_OPEN
    assert cfg.hallucination.window_tokens == offline.hallucination.window_tokens
    with pytest.raises(ConfigError):
        GuardrailConfig.load({"profile": "nope"})
    with pytest.raises(ConfigError):
        GuardrailConfig.load({"no_such_field": 1})
    with pytest.raises(ConfigError):
        GuardrailConfig.load(tmp_path / "missing.yaml")


def test_adaptive_threshold_is_strict_at_low_and_lenient_at_high_retrieval() -> None:
    t = GuardrailConfig().hallucination.threshold
    low, mid, high = t.threshold(0.05), t.threshold(t.midpoint), t.threshold(0.95)
    assert low > mid > high
    assert low == pytest.approx(t.t_low, abs=0.01) and high == pytest.approx(t.t_high, abs=0.01)
    assert t.threshold(None) == t.t_low
    assert all(t.threshold(x / 10) >= t.threshold((x + 1) / 10) for x in range(10))


class _Boom(Stage):
    name = "boom"

    def run(self, state: PipelineState) -> dict[str, Any]:
        raise RuntimeError("model exploded")


class _Skips(Stage):
    name = "skips"

    def skip_reason(self, state: PipelineState) -> str | None:
        return "no knowledge base given"

    def run(self, state: PipelineState) -> dict[str, Any]:  # pragma: no cover - skipped
        raise AssertionError


def _state() -> PipelineState:
    return PipelineState(input=GuardInput(response="The meeting is at 2pm."))


@pytest.mark.injects_fault("a stage model raises RuntimeError")
def test_stage_failures_are_recorded_not_raised() -> None:
    cfg = GuardrailConfig()
    state = _StageStep(_Boom(cfg, None), cfg)(_state())  # type: ignore[arg-type]
    [record] = state.stages
    assert record.status is StageStatus.FAILED and "model exploded" in (record.reason or "")
    state = _StageStep(_Skips(cfg, None), cfg)(state)  # type: ignore[arg-type]
    assert state.stages[-1].status is StageStatus.SKIPPED
    assert state.stages[-1].reason == "no knowledge base given"


def test_fail_closed_lists_unchecked_fail_open_does_not() -> None:
    state = _state().model_copy(
        update={
            "stages": [
                StageRecord(
                    name="hallucination", status=StageStatus.FAILED, reason="VerifierError: down"
                )
            ],
            "verdict": Verdict(label=VerdictLabel.UNVERIFIED, reason="verifier unavailable"),
        }
    )
    closed = unchecked_reasons(state, GuardrailConfig())
    assert any("down" in r for r in closed)
    assert unchecked_reasons(state, GuardrailConfig(failure_policy=FailurePolicy.FAIL_OPEN)) == []


def test_verified_answer_is_checked() -> None:
    state = _state().model_copy(
        update={
            "stages": [StageRecord(name="hallucination", status=StageStatus.RAN)],
            "verdict": Verdict(label=VerdictLabel.VERIFIED, nli_score=0.9, threshold=0.5),
        }
    )
    assert unchecked_reasons(state, GuardrailConfig()) == []


def test_unverified_answer_checked_by_kb_is_checked() -> None:
    from guardrail.report import ClaimValidation, ExtractedClaim, Span, ValidationStatus

    v = ClaimValidation(
        claim=ExtractedClaim(
            text="t", subject="s", predicate="p", object="o", span=Span(start=0, end=1)
        ),
        status=ValidationStatus.VERIFIED,
        confidence=1.0,
    )
    state = _state().model_copy(
        update={
            "stages": [StageRecord(name="fact_validation", status=StageStatus.RAN)],
            "factual": FactualValidationResult(claim_validations=[v]),
            "verdict": Verdict(label=VerdictLabel.UNVERIFIED, reason="no passages"),
        }
    )
    assert unchecked_reasons(state, GuardrailConfig()) == []


def test_all_stages_disabled_never_accepts_and_reports_every_stage() -> None:
    names = ["coherence", "claims", "fact_validation", "hallucination", "correction"]
    guard = Guardrail({"disabled_stages": names})
    report = guard.invoke({"query": "q?", "response": "An answer.", "passages": ["evidence"]})
    assert isinstance(report, GuardReport)
    names.insert(4, "repair")  # part of correction, disabled with it
    assert [s.name for s in report.stages] == names
    assert all(
        s.status is StageStatus.SKIPPED and s.reason == "disabled in config" for s in report.stages
    )
    assert report.recommendation.action == "human_review"
    assert report.verdict.label is VerdictLabel.UNVERIFIED
    assert set(report.timings_ms) == set(names)
    json.loads(report.model_dump_json())  # serialisable


async def test_batch_and_abatch_agree() -> None:
    guard = Guardrail(
        {
            "disabled_stages": [
                "coherence",
                "claims",
                "fact_validation",
                "hallucination",
                "correction",
            ]
        }
    )
    inputs = [{"response": f"Answer number {i}."} for i in range(3)]
    sync = guard.batch(inputs)
    asy = await guard.abatch(inputs)
    assert (
        [r.original for r in sync] == [r.original for r in asy] == [i["response"] for i in inputs]
    )


def test_knowledge_base_path_is_opened_once_for_every_stage(tmp_path: Path) -> None:
    from guardrail.errors import GuardrailError
    from guardrail.knowledge import KnowledgeBase

    kb_file = tmp_path / "kb.json"
    kb_file.write_text(
        json.dumps(
            {
                "entities": [
                    {"id": "E1", "name": "John Smith", "attributes": {"department": "Engineering"}}
                ]
            }
        )
    )
    guard = Guardrail()
    first = guard.prepare(
        {"response": "John works in Engineering.", "knowledge_base": str(kb_file)}
    )
    second = guard.prepare({"response": "Another answer.", "knowledge_base": kb_file})
    assert isinstance(first.input.knowledge_base, KnowledgeBase)
    assert first.input.knowledge_base is second.input.knowledge_base
    from_dict = guard.prepare(
        {"response": "x y z", "knowledge_base": json.loads(kb_file.read_text())}
    )
    assert isinstance(from_dict.input.knowledge_base, KnowledgeBase)
    with pytest.raises(GuardrailError):
        guard.prepare({"response": "x y z", "knowledge_base": str(tmp_path / "missing.json")})
