"""The repair and correction stages (post-processing): the repairs, then the plan applied.

The decision's plan sits between them (:func:`guardrail.decision.plan_answer`, made by the
pipeline's plan step whatever stages ran):

- :class:`RepairStage` (``repair``) finds the repairs the text takes whatever the plan
  (spelling, grammar, knowledge-base and evidence values, severe removals) and re-checks each
  claim a value repair changed; sets ``state.repairs`` and ``state.repair_edits``;
- :class:`CorrectionStage` (``correction``) applies the plan: its removals and annotations with
  the repairs; sets ``state.corrections``, ``state.corrected``, ``state.annotated``,
  ``state.new_entities`` and, when the plan asks, ``state.delivered_qud``.

Both are off when ``correction`` is in ``disabled_stages``. They read ``state.factual`` (fact
validation) and ``state.flags`` (hallucination detection) when those ran; the logic is in
:mod:`guardrail.correction`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from guardrail.errors import StageError
from guardrail.inputs import EntityInfo
from guardrail.report import (
    Claim,
    Correction,
    CorrectionType,
    FactualValidationResult,
    HallucinationFlag,
    QUDRelevance,
    Span,
)
from guardrail.stages.base import PipelineState, Stage, StageUpdate
from guardrail.trace_views import json_view

if TYPE_CHECKING:
    from guardrail.correction import ResponseCorrector

logger = logging.getLogger(__name__)

Arguments = tuple[Any, FactualValidationResult | None, list[HallucinationFlag], list[EntityInfo]]
"""The corrector's arguments: the response's parse, the fact validation, the flags, the
dialogue's entities."""


class _Correcting(Stage):
    """What the repair and correction stages share: the corrector and its arguments."""

    def _corrector(self) -> ResponseCorrector:
        """The response corrector of the correction settings (with the spell checker when
        spelling is corrected)."""
        from guardrail.correction import ResponseCorrector, load_speller

        cfg = self.config.correction
        speller = (
            self.resources.get("spellchecker", load_speller)
            if cfg.auto_correct and cfg.spelling
            else None
        )
        return ResponseCorrector(cfg, speller, self.config.confidence)

    def _arguments(self, state: PipelineState) -> Arguments:
        """The corrector's arguments: the response's parse, the fact validation, the flags and
        the dialogue's entities."""
        doc = self.nlp(state)(state.input.response)
        return (doc, state.factual, state.flags or [], state.input.dialogue.entities)

    @staticmethod
    def _supported(state: PipelineState) -> list[Span]:
        """The spans of the claims the evidence supports (never annotated)."""
        from guardrail.report import ClaimStatus

        return [c.span for c in state.claims or [] if c.status is ClaimStatus.SUPPORTED]


class RepairStage(_Correcting):
    """Finds the repairs the text takes whatever the plan, and re-checks the value repairs;
    part of correction (off with it), not itself a check."""

    name = "repair"
    disabled_with = "correction"
    reads = ("claims", "extracted_claims", "factual", "flags", "doc")
    writes = ("repairs", "repair_edits")
    uses = ("nlp", "verifier")

    def _vocabulary(self, state: PipelineState) -> set[str]:
        from guardrail.correction import vocabulary_of
        from guardrail.knowledge import open_knowledge_base

        data = state.input
        texts = [
            data.query,
            *(p.text for p in data.passages),
            *(t.text for t in data.dialogue.turns),
        ]
        texts += [n for e in data.dialogue.entities for n in (e.name, *e.aliases)]
        if data.knowledge_base is not None:
            kb = open_knowledge_base(data.knowledge_base)
            names = [e.name for e in data.dialogue.entities]
            names += [c.subject for c in state.extracted_claims or []]
            texts += kb.render_facts(sorted(set(names)))
        return vocabulary_of(texts)

    def _recheck(self, state: PipelineState, corrections: list[Correction]) -> list[Correction]:
        """Re-check each claim a factual correction changed: the corrected claim is judged
        again as any claim is (:meth:`HallucinationStage.judge_texts`: its evidence chosen
        afresh, the verifier and its calibration, the name, value and date checks), and the
        correction counts as a repair (``verified``) only if that claim is then supported with
        ``p_supported`` (uncalibrated: its best entailment) at least
        ``decision.recheck_min_entailment``. A correction with a wrong value is rarely
        supported: the checks that caught the claim's value catch the wrong one too."""
        claims = state.claims or []
        response = state.input.response
        jobs: list[tuple[int, int, str]] = []  # (correction, claim, corrected claim)
        for k, corr in enumerate(corrections):
            if corr.type is not CorrectionType.FACTUAL:
                continue
            index = corr.claim_index
            if index is None:
                index = next(
                    (
                        i
                        for i, c in enumerate(claims)
                        if c.span.start <= corr.span.start and corr.span.end <= c.span.end
                    ),
                    None,
                )
            if index is None or index >= len(claims) or claims[index].evidence is None:
                continue
            jobs.append((k, index, _corrected(response, claims[index], corrections)))
        if not jobs:
            return corrections
        from guardrail.stages.hallucination import HallucinationStage

        judge = HallucinationStage(self.config, self.resources)
        floor = self.config.decision.recheck_min_entailment
        texts = list(dict.fromkeys(fixed for _, _, fixed in jobs))
        try:
            judged = judge.judge_texts(state, texts)
        except Exception as exc:  # noqa: BLE001 - the repairs stay unconfirmed (verified=None)
            logger.warning("re-check of corrected claims failed: %s", exc)
            return corrections
        supported = {t: _supported_at(c, floor) for t, c in zip(texts, judged, strict=True)}
        out = list(corrections)
        for k, index, fixed in jobs:
            out[k] = out[k].model_copy(update={"verified": supported[fixed], "claim_index": index})
        return out

    def run(self, state: PipelineState) -> StageUpdate:
        corrector = self._corrector()
        args = self._arguments(state)
        vocabulary = self._vocabulary(state)
        edits = corrector.repairs(*args, vocabulary)  # found once, applied by both stages
        found = corrector.correct(
            *args, vocabulary, supported=self._supported(state), repairs=edits
        )
        repairs = self._recheck(state, found.corrections)
        refused = {
            (c.span.start, c.span.end, c.replacement)
            for c in repairs
            if c.type is CorrectionType.FACTUAL and c.source == "evidence" and not c.verified
        }
        if refused:  # an evidence value the re-check did not confirm is not put in
            doc, factual, flags, entities = args
            kept = [
                f.model_copy(update={"replacement": None})
                if (f.span.start, f.span.end, f.replacement) in refused
                else f
                for f in flags
            ]
            edits = corrector.repairs(doc, factual, kept, entities, vocabulary)
        return StageUpdate(repairs=repairs, repair_edits=edits)

    def trace_outputs(self, written: Mapping[str, Any], extension: Any = None) -> dict[str, Any]:
        """The repairs found, when it ran (their edits are what the correction stage applies)."""
        return {"repairs": json_view(written["repairs"])} if "repairs" in written else {}


def _corrected(response: str, claim: Claim, corrections: list[Correction]) -> str:
    """The text of ``claim`` with every factual correction inside its span applied, as the
    delivered text writes it (:func:`~guardrail.correction.factual.written_before`)."""
    from guardrail.correction.factual import written_before

    fixed = response[claim.span.start : claim.span.end]
    inside = [
        c
        for c in corrections
        if c.type is CorrectionType.FACTUAL
        and claim.span.start <= c.span.start
        and c.span.end <= claim.span.end
    ]
    for c in sorted(inside, key=lambda c: -c.span.start):
        a, b = c.span.start - claim.span.start, c.span.end - claim.span.start
        fixed = fixed[:a] + written_before(fixed, b, c.replacement) + fixed[b:]
    return fixed


def _repaired(state: PipelineState) -> list[Span]:
    """The spans of the claims a verified factual repair settled: supported once repaired, so
    not noted "unverified" for a knowledge base that lacks what the answer first said."""
    claims = state.claims or []
    return [
        claims[c.claim_index].span
        for c in state.repairs or []
        if c.type is CorrectionType.FACTUAL
        and c.verified
        and c.claim_index is not None
        and c.claim_index < len(claims)
    ]


def _supported_at(claim: Claim, floor: float) -> bool:
    """Whether a re-judged claim is supported, ``p_supported`` (uncalibrated: its best
    entailment) at least ``floor``."""
    from guardrail.report import ClaimStatus

    if claim.status is not ClaimStatus.SUPPORTED:
        return False
    if claim.p_supported is not None:
        return claim.p_supported >= floor
    return claim.scores is not None and claim.scores.entailment >= floor


class CorrectionStage(_Correcting):
    """Applies the decision's plan: removals, annotations and the repairs, giving the
    corrected and annotated texts; lists new entities; not itself a check."""

    name = "correction"
    needs = ("repair_edits",)
    reads = ("claims", "factual", "flags", "repairs", "plan", "doc")
    writes = ("corrections", "corrected", "annotated", "new_entities", "delivered_qud")
    uses = ("nlp", "embedder")

    def skip_reason(self, state: PipelineState) -> str | None:
        if state.repair_edits is None or state.plan is None:
            return "the repair stage did not run"
        return None

    def trace_inputs(self, state: PipelineState) -> dict[str, Any]:
        """What the stage reads, without the repairs' text edits (``repairs`` shows them)."""
        view = super().trace_inputs(state)
        view.pop("repair_edits", None)
        return view

    def run(self, state: PipelineState) -> StageUpdate:
        from guardrail.correction import count_by_type

        plan = state.plan
        if plan is None:  # skip_reason skips the stage without a plan
            raise StageError(self.name, "no plan to apply")
        from guardrail.correction.factual import unsettled
        from guardrail.hallucination.flags import VALUE_CONFIDENCE

        doc, factual, flags, entities = self._arguments(state)
        outcome = self._corrector().correct(
            doc,
            factual,
            unsettled(flags, state.repairs or [], VALUE_CONFIDENCE),  # settled by a repair
            entities,
            set(),  # the vocabulary is read only to find repairs: found already
            plan=plan.delivery,
            supported=self._supported(state) + _repaired(state),
            repairs=state.repair_edits,
        )
        verified = {
            (c.span.start, c.span.end, c.replacement): c
            for c in state.repairs or []
            if c.type is CorrectionType.FACTUAL
        }
        final = [
            verified.get((c.span.start, c.span.end, c.replacement), c)
            if c.type is CorrectionType.FACTUAL
            else c
            for c in outcome.corrections
        ]
        logger.debug("corrections: %s", count_by_type(final))
        update = StageUpdate(
            corrections=final,
            corrected=outcome.corrected,
            annotated=outcome.annotated,
            new_entities=outcome.new_entities,
        )
        if plan.delivery.removals and plan.recheck_question:
            # only then can the answer have lost what answered the question
            qud = self._delivered_qud(state, outcome.corrected)
            update = StageUpdate(**update.fields(), delivered_qud=qud)
        return update

    def _delivered_qud(self, state: PipelineState, text: str) -> QUDRelevance:
        """The QUD check on the text left after removals."""
        if not text.strip():
            return QUDRelevance(score=0.0, addresses_qud=False, details={"applicable": True})
        from guardrail.coherence.checker import check_qud, kept_sentences_doc

        # removals only: the kept sentences' own parse, not a new parse of the text
        kept = kept_sentences_doc(state.doc, text) if state.doc is not None else None
        return check_qud(
            kept.text if kept is not None else text,
            state.input.query,
            state.input.dialogue,
            self.nlp(state),
            self.resources.embedder(),
            self.config.coherence,
            response_doc=kept,
        )
