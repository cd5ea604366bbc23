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
        """Re-check each claim a factual correction changed against the claim's evidence
        sentence, against the evidence sentence that gave the correction's value (the
        sentence that states the fact, which the claim's best match may not be, since the
        claim was matched with its wrong value) and against that sentence with its neighbours
        (the region: a claim often joins the fact with its context, "as a result, …"); the
        correction counts as a repair (``verified``) only if the verifier then finds the
        corrected claim supported by one."""
        claims = state.claims or []
        response = state.input.response
        jobs: list[tuple[int, int, str, str]] = []  # (correction, claim, premise, corrected claim)
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
            claim = claims[index]
            edits = [
                c
                for c in corrections
                if c.type is CorrectionType.FACTUAL
                and claim.span.start <= c.span.start
                and c.span.end <= claim.span.end
            ]
            fixed = response[claim.span.start : claim.span.end]
            for c in sorted(edits, key=lambda c: -c.span.start):
                a, b = c.span.start - claim.span.start, c.span.end - claim.span.start
                fixed = fixed[:a] + c.replacement + fixed[b:]
            snippet = claim.evidence.snippet if claim.evidence else ""
            stating = _stating(corr, state.flags or [])
            region = _region(stating, [p.text for p in state.input.passages])
            for premise in dict.fromkeys([snippet, stating, region]):
                if premise:
                    jobs.append((k, index, premise, fixed))
        if not jobs:
            return corrections
        from guardrail.hallucination.plan import score

        try:
            pairs = [(p, h) for _, _, p, h in jobs]
            preds = score(self.resources.verifier(), pairs, self.resources.score_cache())
        except Exception as exc:  # noqa: BLE001 - the repairs stay unconfirmed (verified=None)
            logger.warning("re-check of corrected claims failed: %s", exc)
            return corrections
        out = list(corrections)
        floor = self.config.decision.recheck_min_entailment
        for (k, index, _, _), pred in zip(jobs, preds, strict=False):
            ok = pred.entailment >= floor and pred.entailment > pred.contradiction
            ok = ok or bool(out[k].verified)  # supported by one of its premises
            out[k] = out[k].model_copy(update={"verified": ok, "claim_index": index})
        return out

    def run(self, state: PipelineState) -> StageUpdate:
        corrector = self._corrector()
        args = self._arguments(state)
        vocabulary = self._vocabulary(state)
        edits = corrector.repairs(*args, vocabulary)  # found once, applied by both stages
        found = corrector.correct(
            *args, vocabulary, supported=self._supported(state), repairs=edits
        )
        return StageUpdate(repairs=self._recheck(state, found.corrections), repair_edits=edits)

    def trace_outputs(self, written: Mapping[str, Any], extension: Any = None) -> dict[str, Any]:
        """The repairs found, when it ran (their edits are what the correction stage applies)."""
        return {"repairs": json_view(written["repairs"])} if "repairs" in written else {}


def _stating(correction: Correction, flags: list[HallucinationFlag]) -> str:
    """The evidence sentence that gave ``correction`` its value: the ``evidence`` of the flag
    it repairs (same span, same replacement), when the flag's evidence value is the
    replacement; empty when none does."""
    for flag in flags:
        if (
            flag.span == correction.span
            and flag.replacement == correction.replacement
            and flag.evidence_value == correction.replacement
            and flag.evidence
        ):
            return flag.evidence
    return ""


def _region(sentence: str, passages: list[str]) -> str:
    """``sentence`` with the sentences before and after it in the first passage that states it
    (empty when no passage does, or when it has no neighbour)."""
    if not sentence:
        return ""
    from guardrail.text.sentences import split_sentences

    for passage in passages:
        at = passage.find(sentence)
        if at < 0:
            continue
        sentences = split_sentences(passage)
        inside = [i for i, s in enumerate(sentences) if s.start < at + len(sentence) and at < s.end]
        if not inside:
            return ""
        first, last = max(inside[0] - 1, 0), min(inside[-1] + 1, len(sentences) - 1)
        if (first, last) == (inside[0], inside[-1]):
            return ""
        return passage[sentences[first].start : sentences[last].end]
    return ""


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

        doc, factual, flags, entities = self._arguments(state)
        outcome = self._corrector().correct(
            doc,
            factual,
            unsettled(flags, state.repairs or []),  # not annotated: settled by a repair
            entities,
            set(),  # the vocabulary is read only to find repairs: found already
            plan=plan.delivery,
            supported=self._supported(state),
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
