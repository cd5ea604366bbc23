"""The coherence stage: post-processing stage 1 as a pipeline step (``guardrail.coherence``).

Sets ``state.coherence`` to a :class:`~guardrail.report.CoherenceResult`. Needs spaCy and the
embedding model; when either cannot load the stage raises and the pipeline records it failed.
The response's parse is the pipeline's shared one (``state.doc``), not a second parse.
Responses in a language other than English are skipped with that reason (the rules read an
English parse), so the confidence score leaves coherence out instead of trusting it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from guardrail.inputs import GuardInput
from guardrail.stages.base import PipelineState, Stage, StageUpdate

logger = logging.getLogger(__name__)


class CoherenceStage(Stage):
    """Scores QUD relevance, topic, entity, discourse and reference consistency."""

    name = "coherence"
    reads = ("language", "doc")
    writes = ("coherence",)
    uses = ("nlp", "embedder")

    def skip_reason(self, state: PipelineState) -> str | None:
        """The rules read an English parse: other languages are recorded as not checked."""
        from guardrail.text.language import response_language

        language = state.language or response_language(state.input.response, state.input.query)
        if language is not None and language != "en":
            return f"coherence rules cover English only (response language: {language!r})"
        return None

    def parses_ahead(self, data: GuardInput) -> Sequence[str]:
        """The query, the dialogue window and the QUD stack's top (the coherence context)."""
        from guardrail.coherence.checker import context_texts

        return context_texts(data.query, data.dialogue, self.config.coherence.history_turns)

    def embeds_ahead(self, data: GuardInput) -> Sequence[str]:
        """The response's sentences as the claim splitter cuts them (the parse's, almost
        always) and the query: the texts the QUD, act and topic rules embed."""
        from guardrail.text.sentences import split_sentences

        query = data.query.strip()
        sentences = [s.text for s in split_sentences(data.response)]
        return [*sentences, query] if query else sentences

    def run(self, state: PipelineState) -> StageUpdate:
        from guardrail.coherence.checker import check_coherence, embed_prototypes

        nlp = self.nlp(state)
        embedder = self.resources.embedder()
        prototypes = self.resources.get(
            "coherence.act_prototypes", lambda: embed_prototypes(embedder)
        )
        data = state.input
        result = check_coherence(
            response=data.response,
            query=data.query,
            dialogue=data.dialogue,
            nlp=nlp,
            embedder=embedder,
            config=self.config.coherence,
            knowledge_base=data.knowledge_base,
            prototypes=prototypes,
            response_doc=state.doc,
        )
        logger.debug("coherence score %.3f (%d issues)", result.score, len(result.issues))
        return StageUpdate(coherence=result)
