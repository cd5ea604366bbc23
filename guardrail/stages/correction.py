"""The correction stage (post-processing stage 4) and new-entity extraction.

Sets ``state.corrections``, ``state.corrected``, ``state.annotated`` and
``state.new_entities``. It reads ``state.factual`` (fact validation) and ``state.flags``
(hallucination detection) when those ran; the logic is in :mod:`guardrail.correction`.
"""

from __future__ import annotations

import logging

from guardrail.report import Correction, CorrectionType, QUDRelevance
from guardrail.stages.base import PipelineState, Stage, StageUpdate

logger = logging.getLogger(__name__)


class CorrectionStage(Stage):
    """Corrects, annotates and lists new entities; not itself a check."""

    name = "correction"
    reads = (
        "claims",
        "extracted_claims",
        "factual",
        "flags",
        "verdict",
        "calibration",
        "coherence",
        "doc",
    )
    writes = ("corrections", "corrected", "annotated", "new_entities", "delivered_qud", "problems")
    uses = ("nlp", "embedder", "verifier")

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
        sentence; the correction counts as a repair (``verified``) only if it is then supported."""
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
            if snippet:
                jobs.append((k, index, snippet, fixed))
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
            out[k] = out[k].model_copy(update={"verified": ok, "claim_index": index})
        return out

    def run(self, state: PipelineState) -> StageUpdate:
        from guardrail.correction import ResponseCorrector, count_by_type, load_speller
        from guardrail.decision import mark_fixes, plan_answer
        from guardrail.report import ClaimStatus

        cfg = self.config.correction
        nlp = self.nlp(state)
        speller = (
            self.resources.get("spellchecker", load_speller)
            if cfg.auto_correct and cfg.spelling
            else None
        )
        corrector = ResponseCorrector(cfg, speller, self.config.confidence)
        doc = nlp(state.input.response)
        claims = state.claims or []
        supported = [c.span for c in claims if c.status is ClaimStatus.SUPPORTED]
        args = (doc, state.factual, state.flags or [], state.input.dialogue.entities)
        vocabulary = self._vocabulary(state)
        # Pass 1: the repairs (spelling, knowledge-base and evidence values), re-checked.
        repairs = corrector.repairs(*args, vocabulary)  # found once, applied in both passes
        first = corrector.correct(*args, vocabulary, supported=supported, repairs=repairs)
        corrections = self._recheck(state, first.corrections)
        # Pass 2: the decision's plan (the problems, found once, given which are repaired),
        # applied: its removals and annotations.
        planned = plan_answer(
            claims,
            state.flags or [],
            state.factual,
            state.verdict,
            corrections,
            state.calibration,
            self.config,
        )
        plan = planned.delivery
        outcome = corrector.correct(
            *args, vocabulary, plan=plan, supported=supported, repairs=repairs
        )
        verified = {
            (c.span.start, c.span.end, c.replacement): c
            for c in corrections
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
            # the same problems, marked with what the delivered text did (removals included)
            problems=mark_fixes(planned.problems, final),
        )
        if plan.removals:  # only then can the answer have lost what answered the question
            qud = self._delivered_qud(state, outcome.corrected)
            update = StageUpdate(**update.fields(), delivered_qud=qud)
        return update

    def _delivered_qud(self, state: PipelineState, text: str) -> QUDRelevance | None:
        """The QUD check on the text left after removals (``None``: not applicable, or not read:
        the decision reads it only at claim granularity, when the user asked something)."""
        from guardrail.decision.action import asked_something

        coherence = state.coherence
        if coherence is None or not coherence.qud_relevance.details.get("applicable", False):
            return None
        if self.config.decision.granularity == "answer" or asked_something(coherence) is False:
            return None
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
