"""The correction stage (seed 004 stage 4) and new-entity extraction.

Sets ``state.corrections``, ``state.corrected``, ``state.annotated`` and
``state.new_entities``. It reads ``state.factual`` (fact validation) and ``state.flags``
(hallucination detection) when those ran; the logic is in :mod:`guardrail.correction`.
"""

from __future__ import annotations

import logging
from typing import Any

from guardrail.stages.base import PipelineState, Stage

logger = logging.getLogger(__name__)


class CorrectionStage(Stage):
    """Corrects, annotates and lists new entities; not itself a check."""

    name = "correction"
    checks_answer = False

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

    def run(self, state: PipelineState) -> dict[str, Any]:
        from guardrail.correction import ResponseCorrector, count_by_type, load_speller
        from guardrail.nlp import load_spacy

        cfg = self.config.correction
        spacy_name = self.config.models.spacy_model
        nlp = self.resources.get(f"spacy:{spacy_name}", lambda: load_spacy(spacy_name))
        speller = (
            self.resources.get("spellchecker", load_speller)
            if cfg.auto_correct and cfg.spelling
            else None
        )
        outcome = ResponseCorrector(cfg, speller).correct(
            nlp(state.input.response),
            state.factual,
            state.flags or [],
            state.input.dialogue.entities,
            self._vocabulary(state),
        )
        logger.debug("corrections: %s", count_by_type(outcome.corrections))
        return {
            "corrections": outcome.corrections,
            "corrected": outcome.corrected,
            "annotated": outcome.annotated,
            "new_entities": outcome.new_entities,
        }
