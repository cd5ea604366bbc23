"""The ``claims`` stage: the response's language and its claims with spans.

Claims are sentences (as the Cw-CONLI verdict and the ratio rule read them) or, with ``hallucination.claim_source = "llm"``,
atomic claims from the chat model injected as the resource ``"claim_llm"``. Each claim carries
its detected language; those that state no checkable fact (a question to the user, a greeting,
thanks, an opinion) are marked ``not_checkworthy`` here; later stages score the others.
"""

from __future__ import annotations

import logging

from guardrail.config import GuardrailConfig
from guardrail.hallucination.checkworthy import mark_not_checkworthy
from guardrail.hallucination.claims import sentence_claims
from guardrail.report import Claim
from guardrail.stages.base import PipelineState, Stage, StageUpdate
from guardrail.text.language import dialogue_context, response_language

logger = logging.getLogger(__name__)


def build_claims(stage: Stage, response: str, query: str, language: str | None) -> list[Claim]:
    """Claims of ``response`` by the configured method (shared by the hallucination stage)."""
    config = stage.config.hallucination
    if config.claim_source == "llm":
        from guardrail.hallucination.decompose import decompose_claims

        llm = stage.resources.claim_llm()
        claims = decompose_claims(response, llm, config, query=query, response_language=language)
    else:
        claims = sentence_claims(response, config, language)
    if not config.checkworthiness:
        return claims
    answered = yes_no_claim(stage, response, query, language)
    return [answered] if answered is not None else mark_not_checkworthy(claims)


def yes_no_claim(stage: Stage, response: str, query: str, language: str | None) -> Claim | None:
    """A bare "Yes." or "No." to a yes/no question for a fact, as the statement it makes: the
    question's proposition ("Is the meeting on Monday?" + "No." → "The meeting is not on
    Monday."), spanning the reply, so the evidence judges it like any claim. ``None`` for any
    other reply or question (English only, like the question rules)."""
    from guardrail.hallucination.question_facts import (
        asks_for_a_fact,
        yes_no_proposition,
        yes_or_no,
    )
    from guardrail.report import Span

    yes = yes_or_no(response)
    if yes is None or language not in (None, "en") or not asks_for_a_fact(query):
        return None
    question = query.rstrip()
    cut = max(
        question.rfind(". ", 0, len(question) - 1), question.rfind("! ", 0, len(question) - 1)
    )
    question = question[cut + 1 :].strip() if cut >= 0 else question.strip()
    if not question.endswith("?"):
        return None
    proposition = yes_no_proposition(stage.resources.nlp()(question)[:], yes)
    if proposition is None:
        return None
    start = len(response) - len(response.lstrip())
    end = len(response.rstrip())
    return Claim(text=proposition, span=Span(start=start, end=end), language="en")


class ClaimsStage(Stage):
    """Splits the response into claims and detects its language."""

    name = "claims"
    reads = ("language",)
    writes = ("claims", "language")

    @classmethod
    def when_disabled(cls, config: GuardrailConfig) -> GuardrailConfig:
        """Without the claims stage the response is checked as one claim (no decomposition)."""
        hall = config.hallucination.model_copy(update={"decompose_claims": False})
        return config.model_copy(update={"hallucination": hall})

    def run(self, state: PipelineState) -> StageUpdate:
        response = state.input.response
        language = state.language
        if language is None:  # a state built without prepare()
            context = dialogue_context([t.text for t in state.input.dialogue.turns])
            language = response_language(response, state.input.query, context)
        claims = build_claims(self, response, state.input.query, language)
        logger.debug("%d claims, language %s", len(claims), language)
        return StageUpdate(claims=claims, language=language)
