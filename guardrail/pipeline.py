"""The guardrail as an LCEL Runnable: one child Runnable per stage, then the decision.

::

    GuardInput ─► guardrail.coherence ─► guardrail.claims ─► guardrail.fact_validation
               ─► guardrail.hallucination ─► guardrail.correction
               ─► guardrail.confidence ─► guardrail.recommendation ─► GuardReport

Example::

    from guardrail import Guardrail
    report = Guardrail().invoke({
        "query": "When is the meeting?",
        "response": "The meeting is at 2pm on Monday.",
        "passages": ["The meeting with John is at 2pm on Monday in room 4B."],
    })
    print(report.verdict.label, report.recommendation.action)
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import patch_config

from guardrail.config import FailurePolicy, GuardrailConfig
from guardrail.decision import consistent_verdict, decide, find_problems, mark_fixes
from guardrail.errors import InputError
from guardrail.inputs import GuardInput, coerce_input
from guardrail.report import (
    ConfidenceBreakdown,
    GuardReport,
    StageRecord,
    StageStatus,
    Verdict,
    VerdictLabel,
)
from guardrail.scoring import confidence_score, final_confidence
from guardrail.stages.base import PipelineState, Resources, Stage

logger = logging.getLogger(__name__)

#: The stages in order, as ``name: "module:Class"``.
STAGES: dict[str, str] = {
    "coherence": "guardrail.stages.coherence:CoherenceStage",
    "claims": "guardrail.stages.claims:ClaimsStage",
    "fact_validation": "guardrail.stages.facts:FactValidationStage",
    "hallucination": "guardrail.stages.hallucination:HallucinationStage",
    "correction": "guardrail.stages.correction:CorrectionStage",
}


def _stage_class(path: str) -> type[Stage] | None:
    """Import a stage class; ``None`` when its module is not part of this build."""
    module_name, _, cls_name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    cls: type[Stage] = getattr(module, cls_name)
    return cls


class _StageStep:
    """Runs one stage on a state, recording status and time; applies the failure policy."""

    def __init__(self, name: str, stage: Stage | None, config: GuardrailConfig) -> None:
        self.name = name
        self.stage = stage
        self.config = config

    def __call__(self, state: PipelineState) -> PipelineState:
        start = time.perf_counter()
        update: dict[str, Any] = {}
        if self.name in self.config.disabled_stages:
            status, reason = StageStatus.SKIPPED, "disabled in config"
        elif self.stage is None:
            status, reason = StageStatus.SKIPPED, "stage not available in this build"
        else:
            skip = self.stage.skip_reason(state)
            if skip is not None:
                status, reason = StageStatus.SKIPPED, skip
            else:
                try:
                    update = self.stage.run(state)
                    status, reason = StageStatus.RAN, None
                except Exception as exc:
                    logger.warning("stage %s failed: %s", self.name, exc)
                    logger.debug("stage %s traceback", self.name, exc_info=True)
                    status, reason = StageStatus.FAILED, f"{type(exc).__name__}: {exc}"
        record = StageRecord(
            name=self.name,
            status=status,
            reason=reason,
            duration_ms=(time.perf_counter() - start) * 1000.0,
        )
        return state.model_copy(update={**update, "stages": [*state.stages, record]})


def unchecked_reasons(state: PipelineState, config: GuardrailConfig) -> list[str]:
    """Under fail-closed: the checks that could not be done (empty = fully checked)."""
    if config.failure_policy is FailurePolicy.FAIL_OPEN:
        return []
    reasons = [
        f"stage {r.name} failed ({r.reason})"
        for r in state.stages
        if r.status is StageStatus.FAILED
    ]
    ran = {r.name for r in state.stages if r.status is StageStatus.RAN}
    verdict = state.verdict
    factual_ran = (
        "fact_validation" in ran
        and state.factual is not None
        and bool(state.factual.claim_validations)
    )
    if verdict is None or verdict.label is VerdictLabel.UNVERIFIED:
        if not factual_ran:
            why = verdict.reason if verdict is not None and verdict.reason else None
            if why is None:
                hall = next((r for r in state.stages if r.name == "hallucination"), None)
                why = hall.reason if hall is not None and hall.reason else "no evidence check ran"
            reasons.append(f"the answer could not be verified: {why}")
    return reasons


def _confidence_step(config: GuardrailConfig) -> Callable[[PipelineState], dict[str, Any]]:
    def step(state: PipelineState) -> dict[str, Any]:
        breakdown = confidence_score(
            state.coherence, state.factual, state.flags, config.weights, config.penalty_cap
        )
        return {"state": state, "breakdown": breakdown, "confidence": final_confidence(breakdown)}

    return step


def _recommendation_step(config: GuardrailConfig) -> Callable[[dict[str, Any]], GuardReport]:
    def step(data: dict[str, Any]) -> GuardReport:
        state: PipelineState = data["state"]
        breakdown: ConfidenceBreakdown = data["breakdown"]
        confidence: float = data["confidence"]
        unchecked = unchecked_reasons(state, config)
        flags = state.flags or []
        claims = state.claims or []
        verdict = state.verdict or Verdict(
            reason="the hallucination stage did not run",
            retrieval_score=state.input.retrieval_score,
        )
        problems = find_problems(claims, flags, state.factual, verdict, config.decision)
        problems = mark_fixes(problems, state.corrections)
        verdict = consistent_verdict(verdict, problems)
        recommendation, decision = decide(
            confidence=confidence,
            verdict=verdict,
            problems=problems,
            claims=claims,
            coherence=state.coherence,
            factual=state.factual,
            flags=flags,
            corrections=state.corrections,
            thresholds=config.thresholds,
            unchecked=unchecked,
        )
        original = state.input.response
        return GuardReport(
            original=original,
            corrected=state.corrected if state.corrected is not None else original,
            annotated=state.annotated if state.annotated is not None else original,
            coherence=state.coherence,
            factual_validation=state.factual,
            hallucination_flags=flags,
            corrections=state.corrections,
            new_entities=state.new_entities,
            confidence=confidence,
            confidence_breakdown=breakdown,
            recommendation=recommendation,
            decision=decision,
            claims=claims,
            verdict=verdict,
            stages=state.stages,
            timings_ms={r.name: round(r.duration_ms, 3) for r in state.stages},
            language=state.language,
            session_id=state.input.session_id,
            turn_id=state.input.turn_id,
            profile=config.profile,
        )

    return step


class Guardrail(Runnable[GuardInput | dict[str, Any], GuardReport]):
    """Checks an LLM answer and recommends what to do with it.

    Args:
        config: a :class:`GuardrailConfig`, a dict, a YAML path, or ``None`` for the offline
            profile.
        verifier: optionally, a verifier object to use instead of loading one from the config.
    """

    def __init__(
        self, config: GuardrailConfig | dict[str, Any] | str | None = None, verifier: Any = None
    ) -> None:
        self.config = GuardrailConfig.load(config)
        self.resources = Resources(self.config)
        if verifier is not None:
            self.resources.set("verifier", verifier)
        steps: list[Runnable[Any, Any]] = []
        for name, path in STAGES.items():
            cls = _stage_class(path)
            stage = cls(self.config, self.resources) if cls is not None else None
            steps.append(
                RunnableLambda(_StageStep(name, stage, self.config), name=f"guardrail.{name}")
            )
        steps.append(RunnableLambda(_confidence_step(self.config), name="guardrail.confidence"))
        steps.append(
            RunnableLambda(_recommendation_step(self.config), name="guardrail.recommendation")
        )
        chain: Runnable[Any, Any] = steps[0]
        for step in steps[1:]:
            chain = chain | step
        self._chain: Runnable[PipelineState, GuardReport] = chain
        # Run step by step (not through the sequence) so each stage is a direct child run.
        self._steps: list[Runnable[Any, Any]] = steps

    @property
    def InputType(self) -> type[GuardInput]:  # noqa: N802 - LangChain's name
        return GuardInput

    @property
    def OutputType(self) -> type[GuardReport]:  # noqa: N802 - LangChain's name
        return GuardReport

    def prepare(self, value: Any) -> PipelineState:
        """Validate the input (typed ``InputError`` on unusable input) into a pipeline state."""
        data = coerce_input(value)
        text = data.response
        if not text.strip():
            raise InputError("the response is empty: there is nothing to check")
        if len(text) > self.config.max_response_chars:
            raise InputError(
                f"the response has {len(text)} characters, more than max_response_chars="
                f"{self.config.max_response_chars}; split it or raise the limit"
            )
        evidence = sum(len(p.text) for p in data.passages)
        if evidence > self.config.max_evidence_chars:
            raise InputError(
                f"the evidence has {evidence} characters, more than max_evidence_chars="
                f"{self.config.max_evidence_chars}; pass fewer passages or raise the limit"
            )
        kb = data.knowledge_base
        if isinstance(kb, str | Path):
            data = data.model_copy(update={"knowledge_base": self._open_kb(kb)})
        elif isinstance(kb, dict | list):
            from guardrail.knowledge import open_knowledge_base

            data = data.model_copy(update={"knowledge_base": open_knowledge_base(kb)})
        return PipelineState(input=data)

    def _open_kb(self, path: str | Path) -> Any:
        """Open a knowledge base given as a path once per guardrail, so every stage sees the
        same object (and a JSON/CSV/YAML file is not parsed again by each stage and call)."""
        from guardrail.knowledge import open_knowledge_base

        key = f"kb:{Path(path).resolve()}"
        return self.resources.get(key, lambda: open_knowledge_base(path))

    def _run(self, value: Any, run_manager: Any, config: RunnableConfig) -> GuardReport:
        state = self.prepare(value)
        child = patch_config(config, callbacks=run_manager.get_child())
        out: Any = state
        for step in self._steps:
            out = step.invoke(out, child)
        report: GuardReport = out
        return report

    async def _arun(self, value: Any, run_manager: Any, config: RunnableConfig) -> GuardReport:
        state = self.prepare(value)
        child = patch_config(config, callbacks=run_manager.get_child())
        out: Any = state
        for step in self._steps:
            out = await step.ainvoke(out, child)
        report: GuardReport = out
        return report

    def _tracing_config(self, config: RunnableConfig | None, value: Any) -> RunnableConfig:
        cfg: RunnableConfig = dict(config or {})  # type: ignore[assignment]
        metadata = dict(cfg.get("metadata") or {})
        for key in ("session_id", "turn_id"):
            found = value.get(key) if isinstance(value, dict) else getattr(value, key, None)
            if found is not None:
                metadata.setdefault(key, found)
        metadata.setdefault("guardrail_thresholds", self.config.thresholds.model_dump())
        metadata.setdefault("guardrail_profile", self.config.profile)
        metadata.setdefault("guardrail_verifier", self.config.models.verifier or "bundled")
        metadata.setdefault("guardrail_embedding", self.config.models.embedding)
        metadata.setdefault("guardrail_policy", self.config.hallucination.policy)
        cfg["metadata"] = metadata
        cfg.setdefault("run_name", "guardrail")
        return cfg

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardReport:
        """Check one answer and return its :class:`GuardReport`."""
        return self._call_with_config(
            self._run, input, self._tracing_config(config, input), **kwargs
        )

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardReport:
        """Async :meth:`invoke`."""
        return await self._acall_with_config(
            self._arun, input, self._tracing_config(config, input), **kwargs
        )
