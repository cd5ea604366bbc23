"""The guardrail as an LCEL Runnable: one child Runnable per stage, then the decision.

::

    GuardInput ─► guardrail.coherence ─► guardrail.claims ─► guardrail.fact_validation
               ─► guardrail.hallucination ─► guardrail.repair ─► guardrail.plan
               ─► guardrail.correction ─► guardrail.confidence ─► guardrail.recommendation
               ─► GuardReport

After the checks, one step plans the answer (``guardrail.plan``: the problems, the fixes the
repairs make, the delivery plan; :func:`~guardrail.decision.plan_answer`), whatever stages
ran; the correction stage applies that plan and the recommendation decides the action from it.

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

import asyncio
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import ValidationError

from guardrail.config import FailurePolicy, GuardrailConfig
from guardrail.decision import (
    AnswerPlan,
    Checked,
    claim_outcomes,
    consistent_verdict,
    decide,
    mark_fixes,
    plan_answer,
)
from guardrail.errors import ConfigError, GuardrailError, InputError, StageError
from guardrail.inputs import GuardInput, coerce_input
from guardrail.report import (
    Claim,
    ConfidenceBreakdown,
    Decision,
    FactualValidationResult,
    GuardReport,
    HallucinationFlag,
    Recommendation,
    StageRecord,
    StageStatus,
    ValidationStatus,
    Verdict,
    VerdictLabel,
)
from guardrail.scoring import confidence_score, final_confidence
from guardrail.stages.base import (
    Backends,
    Parses,
    PipelineState,
    Resources,
    Stage,
    StageUpdate,
    check_order,
    is_disabled,
    writers,
)
from guardrail.step_runs import StepRunnable, View, acall_traced, call_traced
from guardrail.trace_views import bounded, json_view
from guardrail.tracing import (
    confidence_inputs,
    confidence_outputs,
    recommendation_inputs,
    recommendation_outputs,
    top_outputs,
)

logger = logging.getLogger(__name__)


def default_stages() -> list[type[Stage]]:
    """The built-in stages, in order: coherence, claims, fact validation, hallucination,
    repair, correction (the decision's plan is made between the last two). Add, remove or
    replace entries and pass the list as ``Guardrail(stages=...)``."""
    from guardrail.stages.claims import ClaimsStage
    from guardrail.stages.coherence import CoherenceStage
    from guardrail.stages.correction import CorrectionStage, RepairStage
    from guardrail.stages.facts import FactValidationStage
    from guardrail.stages.hallucination import HallucinationStage

    return [
        CoherenceStage,
        ClaimsStage,
        FactValidationStage,
        HallucinationStage,
        RepairStage,
        CorrectionStage,
    ]


PLAN_READS = ("claims", "flags", "factual", "verdict", "repairs", "calibration", "coherence")
"""The state fields the decision's plan is made from."""


def plan_position(stages: Sequence[Stage]) -> int:
    """Where the plan step runs among ``stages``: before the first stage that reads ``plan``
    (the correction stage, which applies it), else after the last stage. A stage at or after
    that place writing a field the plan reads is a ``ConfigError`` naming both."""
    at = next((i for i, st in enumerate(stages) if "plan" in (*st.needs, *st.reads)), len(stages))
    for st in stages[at:]:
        late = [f for f in PLAN_READS if f in st.writes]
        if late:
            raise ConfigError(
                f"stage {st.name!r} writes {late[0]!r}, which the decision's plan reads before "
                f"stage {stages[at].name!r}: put {st.name!r} before {stages[at].name!r}"
            )
    return at


class _StageStep:
    """Runs one stage on a state, recording status and time; applies the failure policy.

    :meth:`traced` also gives the view of the stage run's outputs: its status and the fields
    it wrote (:meth:`Stage.trace_outputs`)."""

    def __init__(self, stage: Stage, config: GuardrailConfig) -> None:
        self.name = stage.name
        self.stage = stage
        self.config = config

    def _update(self, state: PipelineState) -> tuple[dict[str, Any], Any]:
        """The fields the stage set, and its own result (``extension``, or ``None``)."""
        result = self.stage.run(state)
        if not isinstance(result, StageUpdate | dict):
            raise StageError(
                self.name, f"run() returned {type(result).__name__}, not a StageUpdate"
            )
        try:
            update = (
                result if isinstance(result, StageUpdate) else StageUpdate.model_validate(result)
            ).fields()
        except ValidationError as exc:
            raise StageError(self.name, f"invalid stage update: {exc}") from exc
        undeclared = sorted(set(update) - set(self.stage.writes) - {"extension"})
        if undeclared:
            raise StageError(
                self.name,
                f"set {', '.join(undeclared)}, which it does not declare in writes "
                f"{self.stage.writes}",
            )
        extension = update.pop("extension", None)
        return update, extension

    def __call__(self, state: PipelineState) -> PipelineState:
        """The state after this stage (its record appended)."""
        return self.traced(state)[0]

    def traced(self, state: PipelineState) -> tuple[PipelineState, View]:
        """The state after this stage, and the view of its run's outputs."""
        start = time.perf_counter()
        update: dict[str, Any] = {}
        extension: Any = None
        if is_disabled(self.stage, self.config.disabled_stages):
            status, reason = StageStatus.SKIPPED, "disabled in config"
        else:
            skip = self.stage.skip_reason(state)
            if skip is not None:
                status, reason = StageStatus.SKIPPED, skip
            else:
                try:
                    update, extension = self._update(state)
                    status, reason = StageStatus.RAN, None
                except Exception as exc:
                    if self.config.strict and not isinstance(exc, GuardrailError):
                        raise  # a bug, not a fault the failure policy is for (config.strict)
                    logger.warning("stage %s failed: %s", self.name, exc)
                    logger.debug("stage %s traceback", self.name, exc_info=True)
                    status, reason = StageStatus.FAILED, f"{type(exc).__name__}: {exc}"
        record = StageRecord(
            name=self.name,
            status=status,
            reason=reason,
            duration_ms=(time.perf_counter() - start) * 1000.0,
        )
        merged = dict(update)
        if extension is not None:
            merged["extensions"] = {**state.extensions, self.name: extension}
        new = state.model_copy(update={**merged, "stages": [*state.stages, record]})
        return new, lambda: self.outputs_view(record, update, extension)

    def inputs_view(self, state: PipelineState) -> dict[str, Any]:
        """The stage run's inputs: what the stage reads (:meth:`Stage.trace_inputs`)."""
        return bounded(self.stage.trace_inputs(state))

    def outputs_view(
        self, record: StageRecord, written: dict[str, Any], extension: Any
    ) -> dict[str, Any]:
        """The stage run's outputs: its status and what it wrote."""
        view: dict[str, Any] = {"status": record.status.value}
        if record.reason is not None:
            view["reason"] = record.reason
        view["duration_ms"] = round(record.duration_ms, 3)
        return bounded({**view, **self.stage.trace_outputs(written, extension)})


def unchecked_reasons(
    state: PipelineState, config: GuardrailConfig, verdict_stages: Collection[str] = ()
) -> list[str]:
    """Under fail-closed: the checks that could not be done (empty = fully checked).

    ``verdict_stages`` are the stages that write the verdict (their skip or failure reason
    explains an answer left unverified)."""
    if config.failure_policy is FailurePolicy.FAIL_OPEN:
        return []
    reasons = [
        f"stage {r.name} failed ({r.reason})"
        for r in state.stages
        if r.status is StageStatus.FAILED
    ]
    verdict = state.verdict
    # The knowledge base checked the answer only if it confirmed or refuted some claim: a claim
    # it could not find is no more checked than one with no evidence.
    factual_ran = state.factual is not None and any(
        v.status is not ValidationStatus.UNVERIFIABLE for v in state.factual.claim_validations
    )
    if verdict is None or verdict.label is VerdictLabel.UNVERIFIED:
        if not factual_ran:
            why = verdict.reason if verdict is not None and verdict.reason else None
            if why is None:
                record = next((r for r in state.stages if r.name in verdict_stages), None)
                why = record.reason if record is not None and record.reason else None
                if record is not None and why == "disabled in config":
                    why = f"the {record.name} stage is disabled in config"
            reasons.append(why or "no evidence check ran")
    return reasons


def report_flags(
    response: str, flags: list[HallucinationFlag], factual: FactualValidationResult | None
) -> list[HallucinationFlag]:
    """The report's ``hallucination_flags``: the hallucination stage's flags and, as a view of
    fact validation's finding (stored once, in ``factual_validation``, and counted once by the
    confidence and the decision), a WRONG_ATTRIBUTE flag on each value the knowledge base
    records differently."""
    from guardrail.hallucination.flags import wrong_attribute_flags

    kb = wrong_attribute_flags(response, factual)
    if not kb:
        return flags
    return sorted([*flags, *kb], key=lambda f: (f.span.start, f.span.end, f.type.value))


def _confidence_step(
    config: GuardrailConfig,
) -> Callable[[PipelineState], tuple[dict[str, Any], View]]:
    def step(state: PipelineState) -> tuple[dict[str, Any], View]:
        breakdown = confidence_score(
            state.coherence,
            state.factual,
            state.flags,
            config.weights,
            config.penalty_cap,
            config.scoring,
            config.confidence,
            config.coherence.weights,
        )
        confidence = final_confidence(breakdown)
        data = {"state": state, "breakdown": breakdown, "confidence": confidence}
        return data, lambda: confidence_outputs(confidence, breakdown)

    return step


def _plan_step(config: GuardrailConfig) -> Callable[[PipelineState], tuple[PipelineState, View]]:
    """The step that plans the answer, once per check whatever stages ran, and hands the plan
    on in ``state.plan`` (the one call of :func:`~guardrail.decision.plan_answer`)."""

    def step(state: PipelineState) -> tuple[PipelineState, View]:
        plan = plan_answer(
            state.claims or [],
            state.flags or [],
            state.factual,
            state.verdict,
            state.repairs or [],
            state.calibration,
            state.coherence,
            config,
        )
        return state.model_copy(update={"plan": plan}), lambda: _plan_outputs(plan)

    return step


def _plan_inputs(state: PipelineState) -> dict[str, Any]:
    """The ``guardrail.plan`` run's inputs: what the plan is made from."""
    return bounded(json_view({field: getattr(state, field) for field in PLAN_READS}))


def _plan_outputs(plan: AnswerPlan) -> dict[str, Any]:
    """The ``guardrail.plan`` run's outputs: the problems and what the delivery removes and
    annotates (spans and reasons)."""
    delivery = plan.delivery
    view = {
        "problems": plan.problems,
        "removals": [{"span": r.span, "reason": r.reason} for r in delivery.removals],
        "notes": [{"span": n.span, "label": n.label} for n in delivery.notes],
        "recheck_question": plan.recheck_question,
    }
    return bounded(json_view(view))


def _recommendation_step(
    config: GuardrailConfig, verdict_stages: Collection[str]
) -> Callable[[dict[str, Any]], tuple[GuardReport, View]]:
    """The step that decides the action from the plan in the state (it plans nothing) and
    builds the report."""

    def step(data: dict[str, Any]) -> tuple[GuardReport, View]:
        state: PipelineState = data["state"]
        confidence: float = data["confidence"]
        if state.plan is None:  # the plan step runs before this one in every pipeline
            raise GuardrailError("the answer was not planned before the recommendation")
        verdict = state.verdict or Verdict(
            reason="the hallucination stage did not run",
            retrieval_score=state.input.retrieval_score,
        )
        # the plan's problems, marked with what the delivered text did (removals included)
        problems = mark_fixes(state.plan.problems, state.corrections)
        claims = claim_outcomes(state.claims or [], state.corrections)
        decision = config.decision
        recommendation, decision_record = decide(
            Checked(
                confidence=confidence,
                problems=problems,
                claims=claims,
                coherence=state.coherence,
                factual=state.factual,
                flags=state.flags or [],
                corrections=state.corrections,
                unchecked=unchecked_reasons(state, config, verdict_stages),
                delivered_qud=state.delivered_qud,
                annotated=state.annotated is not None,
                original=state.input.response,
                corrected=state.corrected,
            ),
            thresholds=config.thresholds,
            granularity=decision.granularity,
            min_kept_share=decision.min_kept_share,
            cutoffs=config.scoring,
            ladder=config.confidence,
        )
        report = _report(
            state,
            config,
            data["breakdown"],
            confidence,
            claims=claims,
            verdict=consistent_verdict(verdict, problems),
            recommendation=recommendation,
            decision=decision_record,
        )
        return report, lambda: recommendation_outputs(report)

    return step


def _report(
    state: PipelineState,
    config: GuardrailConfig,
    breakdown: ConfidenceBreakdown,
    confidence: float,
    *,
    claims: list[Claim],
    verdict: Verdict,
    recommendation: Recommendation,
    decision: Decision,
) -> GuardReport:
    """The report of one check: the state's results, the confidence and the decision."""
    original = state.input.response
    return GuardReport(
        original=original,
        corrected=state.corrected if state.corrected is not None else original,
        annotated=state.annotated if state.annotated is not None else original,
        coherence=state.coherence,
        factual_validation=state.factual,
        hallucination_flags=report_flags(original, state.flags or [], state.factual),
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
        extensions=state.extensions,
    )


def _log(report: GuardReport, config: RunnableConfig) -> None:
    """One structured log record per checked answer (the pipeline's fields, at a level set by
    the recommendation), unless the caller's run metadata sets
    :data:`~guardrail.observability.LOG_CHECK` to ``False`` (as a guarded stream's per-sentence
    checks do; their final check is logged)."""
    from guardrail.observability import LOG_CHECK, log_check

    if (config.get("metadata") or {}).get(LOG_CHECK) is False:
        return
    log_check(report)


class Guardrail(Runnable[GuardInput | dict[str, Any], GuardReport]):
    """Checks an LLM answer and recommends what to do with it.

    Args:
        config: a :class:`GuardrailConfig`, a dict, a YAML path, or ``None`` for the offline
            profile.
        stages: the stages to run, in order (default :func:`default_stages`): ``Stage``
            subclasses (built with this guardrail's config and resources) or built instances.
        backends: models to use instead of loading them from the config (checked now: a wrong
            object is a ``ConfigError``).
        verifier: shorthand for ``backends=Backends(verifier=...)``.

    Example::

        guard = Guardrail({"hallucination": {"policy": "ratio"}}, stages=[*default_stages(), MyStage])
    """

    def __init__(
        self,
        config: GuardrailConfig | dict[str, Any] | str | None = None,
        verifier: Any = None,
        *,
        stages: Sequence[type[Stage] | Stage] | None = None,
        backends: Backends | None = None,
    ) -> None:
        self.config = GuardrailConfig.load(config)
        if backends is not None and not isinstance(backends, Backends):
            raise ConfigError(
                f"backends must be a guardrail.Backends, got {type(backends).__name__}"
            )
        if verifier is not None:
            backends = dataclasses.replace(backends or Backends(), verifier=verifier)
        self.resources = Resources(self.config, backends)
        entries = default_stages() if stages is None else stages
        for entry in entries:
            if not isinstance(entry, Stage) and not (
                isinstance(entry, type) and issubclass(entry, Stage)
            ):
                raise ConfigError(f"stages must be Stage subclasses or instances, got {entry!r}")
        # A disabled stage may change what the others do (no claims stage: the response is
        # checked as one claim); each stage says so in its when_disabled.
        stage_config = self.config
        for entry in entries:
            kind = entry if isinstance(entry, type) else type(entry)
            if kind.name in self.config.disabled_stages:
                stage_config = kind.when_disabled(stage_config)
        built = [
            entry if isinstance(entry, Stage) else entry(stage_config, self.resources)
            for entry in entries
        ]
        names = [st.name for st in built]
        if len(set(names)) != len(names):
            raise ConfigError(f"stage names must be unique, got {names}")
        check_order(built, self.config.disabled_stages)
        self._check_installed(built, backends)
        self.stages: tuple[Stage, ...] = tuple(built)
        # Each step is a child run showing what it reads and what it wrote (plain JSON views,
        # built only when the run is traced), not the pipeline state.
        steps: list[StepRunnable] = []
        for st in built:
            runner = _StageStep(st, self.config)
            steps.append(StepRunnable(f"guardrail.{st.name}", runner.traced, runner.inputs_view))
        steps.insert(
            plan_position(built),
            StepRunnable("guardrail.plan", _plan_step(self.config), _plan_inputs),
        )
        steps.append(
            StepRunnable("guardrail.confidence", _confidence_step(self.config), confidence_inputs)
        )
        steps.append(
            StepRunnable(
                "guardrail.recommendation",
                _recommendation_step(self.config, writers(built, "verdict")),
                recommendation_inputs,
            )
        )
        # Run step by step (not as one sequence) so each stage is a direct child run.
        self._steps: tuple[StepRunnable, ...] = tuple(steps)

    def _check_installed(self, stages: Sequence[Stage], backends: Backends | None) -> None:
        """Raise ``MissingDependencyError`` now, naming the package and the install line, when
        an enabled stage's configured model needs a package that is not installed."""
        from guardrail.dependencies import RESOURCES, check_installed

        uses: dict[str, tuple[str, ...]] = {}
        for st in stages:
            if is_disabled(st, self.config.disabled_stages):
                continue
            unknown = set(st.uses) - RESOURCES
            if unknown:
                raise ConfigError(
                    f"stage {st.name!r} uses unknown resources {sorted(unknown)}; "
                    f"known: {sorted(RESOURCES)}"
                )
            uses[st.name] = st.uses
        injected = [
            k for k in RESOURCES if backends is not None and getattr(backends, k, None) is not None
        ]
        check_installed(self.config, uses, injected)

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
        from guardrail.text.language import dialogue_context, response_language

        context = dialogue_context([t.text for t in data.dialogue.turns])
        sample = "\n".join(p.text for p in data.passages[:3])
        language = response_language(data.response, data.query, context, sample)
        parses = Parses()
        embedding = self._embed_ahead(data, language)
        doc = self._parse(text, language, self._ahead(data), parses)
        if embedding is not None:
            embedding.join()
        return PipelineState(input=data, language=language, doc=doc, parses=parses)

    def _embed_ahead(self, data: GuardInput, language: str | None) -> threading.Thread | None:
        """Start embedding the texts the enabled stages will embed (``embeds_ahead``) while
        the response is parsed (``None``: no parse to overlap, nothing to embed, or no
        embedder available; the stages then embed as usual)."""
        if language not in (None, "en"):
            return None
        disabled = self.config.disabled_stages
        texts = [
            t for st in self.stages if not is_disabled(st, disabled) for t in st.embeds_ahead(data)
        ]
        if not texts:
            return None
        try:
            embedder = self.resources.embedder()
        except Exception as exc:  # noqa: BLE001 - the stage loads it again and reports the failure
            logger.debug("nothing embedded ahead (%s)", exc)
            return None
        from guardrail.embedding_cache import embed_ahead

        return embed_ahead(embedder, texts)

    def _ahead(self, data: GuardInput) -> list[str]:
        """The texts the enabled stages will parse besides the response (``parses_ahead``)."""
        disabled = self.config.disabled_stages
        texts = [
            t for st in self.stages if not is_disabled(st, disabled) for t in st.parses_ahead(data)
        ]
        return list(dict.fromkeys(texts))

    def _parse(
        self, text: str, language: str | None, ahead: Sequence[str] = (), parses: Any = None
    ) -> Any:
        """The spaCy parse of the response, once per call (``None`` when not available), and
        of the ``ahead`` texts, kept in ``parses``: all in one ``nlp.pipe`` call."""
        if language not in (None, "en"):
            return None
        try:
            nlp = self.resources.nlp()
        except GuardrailError as exc:
            logger.info("no shared parse (%s); stages that need spaCy will say so", exc)
            return None
        from guardrail.nlp import bind_cpu_ops

        bind_cpu_ops()  # once for the call: the stages' parses run in copies of this context
        others = [t for t in ahead if t != text] if parses is not None else []
        if not others:
            return nlp(text)
        doc, *docs = nlp.pipe([text, *others])
        parses.add(dict(zip(others, docs, strict=True)))
        return doc

    def _open_kb(self, path: str | Path) -> Any:
        """Open a knowledge base given as a path once per guardrail, so every stage sees the
        same object (and a JSON/CSV/YAML file is not parsed again by each stage and call)."""
        from guardrail.knowledge import open_knowledge_base

        key = f"kb:{Path(path).resolve()}"
        return self.resources.get(key, lambda: open_knowledge_base(path))

    def _run(self, value: Any, config: RunnableConfig) -> tuple[GuardReport, View]:
        state = self.prepare(value)
        out: Any = state
        for step in self._steps:
            out = step.invoke(out, config)
        report: GuardReport = out
        _log(report, config)
        return report, lambda: top_outputs(report)

    async def _arun(self, value: Any, config: RunnableConfig) -> tuple[GuardReport, View]:
        # prepare parses, detects the language and opens the KB: CPU work, off the event loop
        state = await asyncio.to_thread(self.prepare, value)
        out: Any = state
        for step in self._steps:
            out = await step.ainvoke(out, config)
        report: GuardReport = out
        _log(report, config)
        return report, lambda: top_outputs(report)

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
        return call_traced(
            self.get_name(), self._run, input, self._tracing_config(config, input), lambda: input
        )

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardReport:
        """Async :meth:`invoke`."""
        return await acall_traced(
            self.get_name(), self._arun, input, self._tracing_config(config, input), lambda: input
        )
