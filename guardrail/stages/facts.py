"""The fact-validation stage (post-processing stage 2): claims against the KB and the dialogue.

Sets ``state.extracted_claims`` and ``state.factual``. Skipped when the input has neither a
knowledge base nor dialogue turns. The logic is in :mod:`guardrail.facts`.
"""

from __future__ import annotations

import logging
from typing import Any

from guardrail.config import GuardrailConfig
from guardrail.errors import GuardrailError
from guardrail.stages.base import PipelineState, Stage, StageUpdate

logger = logging.getLogger(__name__)


class FactValidationStage(Stage):
    """Extracts (subject, predicate, object) claims and validates them."""

    name = "fact_validation"

    @classmethod
    def when_disabled(cls, config: GuardrailConfig) -> GuardrailConfig:
        """Without fact validation, the coherence entity check compares values with the
        knowledge base itself (``coherence.entity_kb_values``)."""
        coherence = config.coherence.model_copy(update={"entity_kb_values": True})
        return config.model_copy(update={"coherence": coherence})

    reads = ("doc",)
    writes = ("extracted_claims", "factual")
    uses = ("nlp", "embedder", "verifier")

    def skip_reason(self, state: PipelineState) -> str | None:
        if state.input.knowledge_base is None and not state.input.dialogue.turns:
            return "no knowledge base and no dialogue history to check claims against"
        return None

    def _verifier(self, state: PipelineState) -> Any:
        cfg = self.config.facts
        if not (cfg.check_history and cfg.history_verifier and state.input.dialogue.turns):
            return None
        try:
            return self.resources.verifier()
        except (GuardrailError, ImportError) as exc:
            logger.warning(
                "fact validation: no NLI verifier for the history check (%s); comparing "
                "stated values only",
                exc,
            )
            return None

    def run(self, state: PipelineState) -> StageUpdate:
        from guardrail.facts import (
            ClaimAnalyzer,
            EntityResolver,
            FactValidator,
            HistoryChecker,
            PredicateMapper,
        )
        from guardrail.knowledge import open_knowledge_base

        cfg = self.config.facts
        source = state.input.knowledge_base
        kb = open_knowledge_base(source) if source is not None else None
        analyzer = ClaimAnalyzer(
            lambda: self.nlp(state),
            EntityResolver(kb, state.input.dialogue.entities),
            PredicateMapper(self.resources.embedder, threshold=cfg.predicate_similarity),
        )
        history = (
            HistoryChecker(
                cfg.edit_distance_ratio, self._verifier(state), self.config.confidence.blocking
            )
            if cfg.check_history
            else None
        )
        validation = FactValidator(analyzer, history, cfg.edit_distance_ratio).validate(
            state.input.response, state.input.dialogue, cfg.history_max_turns
        )
        return StageUpdate(extracted_claims=validation.extracted, factual=validation.result)
