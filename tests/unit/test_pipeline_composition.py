"""Stages and backends passed in, typed stage updates, and a config that rejects typos."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel
from pydantic import BaseModel

from guardrail import Backends, ConfigError, Guardrail, GuardrailConfig, Stage, default_stages
from guardrail.report import CoherenceResult, StageStatus
from guardrail.stages import PipelineState, StageUpdate
from guardrail.stages.claims import ClaimsStage


class Names(BaseCallbackHandler):
    def __init__(self) -> None:
        self.names: list[str] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.names.append(kwargs.get("name") or (serialized or {}).get("name", ""))


class PolitenessStage(Stage):
    """A user's own check: a rude answer gets a low coherence score."""

    name = "politeness"
    writes = ("coherence",)

    def run(self, state: PipelineState) -> StageUpdate:
        rude = "stupid" in state.input.response.lower()
        return StageUpdate(coherence=CoherenceResult(score=0.1 if rude else 1.0))


class TypoStage(Stage):
    name = "typo"

    def run(self, state: PipelineState) -> dict[str, Any]:
        return {"flagz": []}


class WrongTypeStage(Stage):
    name = "wrong_type"
    writes = ("claims",)

    def run(self, state: PipelineState) -> dict[str, Any]:
        return {"claims": "not a list"}


class ToneResult(BaseModel):
    """A custom stage's own typed result."""

    rude: bool
    words: int


class ToneStage(Stage):
    """A user's own check that adds its result to the report instead of overwriting one."""

    name = "tone"
    reads = ("flags",)

    def run(self, state: PipelineState) -> StageUpdate:
        text = state.input.response
        return StageUpdate(extension=ToneResult(rude="stupid" in text, words=len(text.split())))


class JsonStage(Stage):
    name = "json"

    def run(self, state: PipelineState) -> dict[str, Any]:
        return {"extension": {"n": 1}}


class NeedsVerdict(Stage):
    name = "audit"
    needs = ("verdict",)

    def run(self, state: PipelineState) -> StageUpdate:  # pragma: no cover - never built
        return StageUpdate()


class SneakyStage(Stage):
    name = "sneaky"

    def run(self, state: PipelineState) -> StageUpdate:
        return StageUpdate(coherence=CoherenceResult(score=1.0))


INPUT = {"query": "Hi?", "response": "That is a stupid question.", "passages": []}


def test_default_stages_are_the_six_builtins_in_order() -> None:
    assert [s.name for s in default_stages()] == [
        "coherence",
        "claims",
        "fact_validation",
        "hallucination",
        "repair",
        "correction",
    ]


def test_a_custom_stage_runs_as_its_own_child_run() -> None:
    guard = Guardrail(stages=[PolitenessStage])
    names = Names()
    report = guard.invoke(INPUT, config={"callbacks": [names]})
    assert "guardrail.politeness" in names.names
    assert names.names.index("guardrail.politeness") < names.names.index("guardrail.recommendation")
    [record] = report.stages
    assert record.name == "politeness" and record.status is StageStatus.RAN
    assert report.coherence is not None and report.coherence.score == 0.1


def test_stages_can_be_added_to_the_defaults() -> None:
    guard = Guardrail(stages=[*default_stages(), ToneStage])
    assert [s.name for s in guard.stages][-1] == "tone"
    with pytest.raises(ConfigError, match="unique"):
        Guardrail(stages=[PolitenessStage, PolitenessStage])
    with pytest.raises(ConfigError, match="Stage subclasses"):
        Guardrail(stages=[object])  # type: ignore[list-item]


def test_a_misspelled_or_mistyped_update_fails_the_stage_with_the_reason() -> None:
    report = Guardrail(stages=[TypoStage, WrongTypeStage]).invoke(INPUT)
    typo, wrong = report.stages
    assert typo.status is StageStatus.FAILED and "flagz" in (typo.reason or "")
    assert wrong.status is StageStatus.FAILED and "claims" in (wrong.reason or "")
    assert report.action.value == "human_review"  # fail-closed


def test_wrong_backends_are_config_errors_at_construction() -> None:
    chat = FakeListChatModel(responses=["ok"])
    with pytest.raises(ConfigError, match=r"backends.verifier .*predict\(\)"):
        Guardrail(verifier=chat)
    with pytest.raises(ConfigError, match=r"backends\.embedder"):
        Backends(embedder="all-MiniLM-L6-v2")
    with pytest.raises(ConfigError, match="spaCy Language"):
        Backends(nlp=lambda text: text)
    with pytest.raises(ConfigError, match=r"guardrail\.Backends"):
        Guardrail(backends={"verifier": None})  # type: ignore[arg-type]
    assert Backends(claim_llm=chat).claim_llm is chat
    with pytest.raises(Exception):  # noqa: B017 - frozen
        Backends().verifier = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"hallucination": {"polcy": "ratio"}}, "polcy"),
        ({"disabled_stages": ["coherance"]}, "coherance"),
        ({"thresholds": {"acept": 0.9}}, "acept"),
        ({"decision": {"strong": 0.9}}, "strong"),
        ({"retrieval_score": "bm25"}, "retrieval_score"),
    ],
)
def test_config_typos_are_rejected_with_the_field_name(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        GuardrailConfig.load(data)


def test_config_is_immutable_after_load() -> None:
    cfg = GuardrailConfig.load(None)
    with pytest.raises(Exception):  # noqa: B017 - pydantic frozen instance
        cfg.hallucination.policy = "ratio"  # type: ignore[misc]


def test_disabling_claims_checks_the_response_as_one_claim() -> None:
    assert ClaimsStage.when_disabled(GuardrailConfig()).hallucination.decompose_claims is False
    guard = Guardrail({"disabled_stages": ["claims"]})
    stage = next(s for s in guard.stages if s.name == "hallucination")
    assert stage.config.hallucination.decompose_claims is False
    assert guard.config.hallucination.decompose_claims is True


def test_a_stage_writing_what_an_earlier_stage_read_is_a_config_error_naming_both() -> None:
    # the plan, made before the correction stage, reads coherence: a stage overwriting it
    # afterwards would go unseen by it
    with pytest.raises(ConfigError, match=r"'politeness' writes 'coherence'.*'correction'"):
        Guardrail(stages=[*default_stages(), PolitenessStage])
    coherence, claims, facts, hallucination, repair, correction = default_stages()
    # correction before hallucination: it would apply a plan made on claims not yet judged
    with pytest.raises(ConfigError, match=r"'repair'.*'hallucination'"):
        Guardrail(stages=[coherence, claims, facts, repair, correction, hallucination])
    # the correction stage applies the repairs the repair stage found
    with pytest.raises(ConfigError, match=r"'correction' needs 'repair_edits'"):
        Guardrail(stages=[coherence, claims, facts, hallucination, correction])


def test_a_misordered_or_missing_needed_field_is_a_config_error_naming_both() -> None:
    stages = default_stages()
    with pytest.raises(ConfigError, match=r"'audit' reads 'verdict'.*'hallucination'"):
        Guardrail(stages=[*stages[:3], NeedsVerdict, *stages[3:]])
    with pytest.raises(ConfigError, match="'audit' needs 'verdict': no earlier stage"):
        Guardrail(stages=[*stages[:3], NeedsVerdict])
    with pytest.raises(ConfigError, match=r"'audit' needs 'verdict'.*'hallucination'.*disabled"):
        Guardrail({"disabled_stages": ["hallucination"]}, stages=[*stages, NeedsVerdict])
    assert Guardrail(stages=[*stages, NeedsVerdict]).stages[-1].name == "audit"


def test_a_stage_setting_a_field_it_does_not_declare_fails_with_the_reason() -> None:
    report = Guardrail(stages=[SneakyStage]).invoke(INPUT)
    [record] = report.stages
    assert record.status is StageStatus.FAILED and "coherence" in (record.reason or "")
    assert report.coherence is None


class Outputs(BaseCallbackHandler):
    def __init__(self) -> None:
        self.names: dict[Any, str] = {}
        self.outputs: dict[str, Any] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.names[kwargs["run_id"]] = kwargs.get("name") or ""

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        self.outputs[self.names.get(kwargs["run_id"], "")] = outputs


def test_a_custom_stage_adds_its_typed_result_to_the_report_and_the_trace() -> None:
    seen = Outputs()
    report = Guardrail(stages=[ToneStage]).invoke(INPUT, config={"callbacks": [seen]})
    assert report.extensions == {"tone": ToneResult(rude=True, words=5)}
    assert Guardrail(stages=[JsonStage]).invoke(INPUT).extensions == {"json": {"n": 1}}
    dumped = json.loads(report.model_dump_json())
    assert dumped["extensions"] == {"tone": {"rude": True, "words": 5}}
    traced = seen.outputs["guardrail.tone"]  # the stage's own result, as plain JSON
    assert traced["status"] == "ran" and traced["extension"] == {"rude": True, "words": 5}


def test_ainvoke_prepares_the_input_off_the_event_loop() -> None:
    guard = Guardrail(stages=[ToneStage])
    where: list[bool] = []
    prepare = guard.prepare

    def recording(value: Any) -> PipelineState:
        try:
            asyncio.get_running_loop()
            where.append(True)
        except RuntimeError:
            where.append(False)
        return prepare(value)

    guard.prepare = recording  # type: ignore[method-assign]
    report = asyncio.run(guard.ainvoke(INPUT))
    assert where == [False] and report.extensions["tone"].rude
