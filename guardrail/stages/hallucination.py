"""The ``hallucination`` stage: claims vs evidence, typed flags and the Cw-CONLI verdict.

Evidence is the passages plus, when a knowledge base is given, its facts rendered as text. The
stage is skipped (with a reason) when there is neither; claims are still produced by the
``claims`` stage. If the verifier cannot be loaded the stage fails, and the pipeline's failure
policy decides (fail-closed: the answer goes to human review).
"""

from __future__ import annotations

import logging
from typing import Any

from guardrail.hallucination import flags as build
from guardrail.hallucination.detector import detect
from guardrail.hallucination.evidence import gather_evidence
from guardrail.hallucination.retrieval import with_retrieval_scores
from guardrail.stages.base import PipelineState, Stage
from guardrail.stages.claims import build_claims
from guardrail.text.language import dialogue_context, response_language
from guardrail.text.mentions import MentionKind, find_mentions

logger = logging.getLogger(__name__)

NO_EVIDENCE = "no evidence (passages or knowledge base) given"


CLAIM_ROOM = 32
"""Verifier tokens kept free for the claim (and special tokens) beside each window."""


def window_size(window_tokens: int, stride: int, verifier: Any) -> tuple[int, int]:
    """Window and stride, shrunk so a window plus a claim fits the verifier's ``max_tokens``."""
    limit = getattr(verifier, "max_tokens", None)
    if isinstance(limit, int) and limit > 2 * CLAIM_ROOM and window_tokens > limit - CLAIM_ROOM:
        shrunk = limit - CLAIM_ROOM
        return shrunk, max(1, min(stride, shrunk * stride // window_tokens))
    return window_tokens, stride


class HallucinationStage(Stage):
    """Scores every claim against the evidence in one batched verifier call."""

    name = "hallucination"

    def skip_reason(self, state: PipelineState) -> str | None:
        data = state.input
        if not any(p.text.strip() for p in data.passages) and data.knowledge_base is None:
            return NO_EVIDENCE
        return None

    def _nlp(self) -> Any:
        """The spaCy pipeline for names, or ``None`` when it cannot be loaded (regex names)."""
        from guardrail.errors import GuardrailError
        from guardrail.nlp import load_spacy

        try:
            return self.resources.get("spacy", lambda: load_spacy(self.config.models.spacy_model))
        except GuardrailError as exc:
            logger.warning("spaCy unavailable, names found by capitalisation: %s", exc)
            return None

    def run(self, state: PipelineState) -> dict[str, Any]:
        cfg = self.config.hallucination
        data = state.input
        verifier = self.resources.verifier()  # raises when it cannot load: the stage fails
        if self.config.retrieval_score == "embedding":
            try:
                data = with_retrieval_scores(data, self.resources.embedder())
            except Exception as exc:  # noqa: BLE001 - unscored passages: T(rs) takes its strict end
                logger.warning("could not score passages for T(rs), using the strict end: %s", exc)
        context = dialogue_context([t.text for t in data.dialogue.turns])
        language = state.language or response_language(data.response, data.query, context)
        claims = state.claims
        if claims is None:
            claims = build_claims(self, data.response, data.query, language)
        nlp = self._nlp() if language == "en" else None
        names = [
            m.text for c in claims for m in find_mentions(c.text, nlp) if m.kind is MentionKind.NAME
        ]
        counter = getattr(verifier, "count_tokens", None)
        size, stride = window_size(cfg.window_tokens, cfg.window_stride, verifier)
        evidence = gather_evidence(
            data,
            size,
            stride,
            counter if callable(counter) else None,
            use_windows=cfg.use_windows,
            entity_names=sorted(set(names)) or None,
        )
        result = detect(
            data.response,
            claims,
            evidence,
            verifier,
            cfg,
            data.retrieval_score,
            embedder=self.resources.embedder,
            nlp=nlp,
        )
        logger.debug("hallucination: %s (%d pairs)", result.verdict.label, result.pairs_scored)
        update: dict[str, Any] = {
            "claims": result.claims,
            "verdict": result.verdict,
            "language": language,
        }
        kb_flags = build.wrong_attribute_flags(data.response, state.factual)
        if result.pairs_scored or result.flags or kb_flags:
            flags = [*result.flags, *kb_flags]
            update["flags"] = sorted(flags, key=lambda f: (f.span.start, f.span.end, f.type.value))
        return update
