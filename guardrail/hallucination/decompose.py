"""LLM claim decomposition: any LangChain chat model → atomic, pronoun-free claims with spans.

The model is asked for structured output (``with_structured_output``); models without tool
calling get the same request as JSON in the prompt, parsed with a Pydantic parser. Each atomic
claim is mapped back onto the response by fuzzy alignment, so flags still point at real text.

Example::

    from langchain_core.language_models import FakeListChatModel   # a fake, for the docs only
    llm = FakeListChatModel(responses=['{"claims": [{"text": "Ada was born in 1815."}]}'])
    decompose_claims("She was born in 1815.", llm, config)
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, Field

from guardrail.config import HallucinationConfig
from guardrail.errors import VerifierError
from guardrail.hallucination.claims import cap_claims
from guardrail.report import Claim, Span
from guardrail.text.language import claim_language
from guardrail.text.sentences import split_sentences
from guardrail.text.spans import overlaps

logger = logging.getLogger(__name__)

PROMPT = """Split the answer below into atomic claims.
Each claim states exactly one fact, is a full sentence that can be understood alone, and
replaces every pronoun with the name it refers to. Copy numbers, dates and names exactly.
Do not add facts that the answer does not state.

Question: {query}
Answer: {response}
"""

JSON_HINT = """Reply with JSON only, in this form:
{{"claims": [{{"text": "...", "source_sentence": "..."}}]}}
"""

MIN_ALIGNMENT = 60.0
"""Alignment score (0–100) under which a claim is mapped to its best sentence instead."""


class AtomicClaim(BaseModel):
    """One atomic claim as the LLM returns it."""

    text: str = Field(description="the claim, self-contained, without pronouns")
    source_sentence: str = Field(
        default="", description="the sentence of the answer the claim comes from, copied exactly"
    )


class AtomicClaims(BaseModel):
    """The LLM's decomposition of an answer."""

    claims: list[AtomicClaim]


def _ask(llm: Any, query: str, response: str) -> AtomicClaims:
    prompt = PROMPT.format(query=query or "(none)", response=response)
    try:
        structured = llm.with_structured_output(AtomicClaims)
    except NotImplementedError:
        structured = None
    if structured is not None:
        result = structured.invoke(prompt)
        if isinstance(result, AtomicClaims):
            return result
        return AtomicClaims.model_validate(result)
    from langchain_core.output_parsers import PydanticOutputParser

    parser: PydanticOutputParser[AtomicClaims] = PydanticOutputParser(pydantic_object=AtomicClaims)
    message = llm.invoke(prompt + JSON_HINT)
    text = message.content if hasattr(message, "content") else str(message)
    parsed: AtomicClaims = parser.parse(str(text))
    return parsed


def align(claim: AtomicClaim, response: str) -> Span:
    """The span of ``response`` the claim comes from (fuzzy; falls back to the best sentence)."""
    from rapidfuzz import fuzz

    sentences = split_sentences(response)
    if claim.source_sentence:
        start = response.find(claim.source_sentence)
        if start >= 0:
            return Span(start=start, end=start + len(claim.source_sentence))
    found = fuzz.partial_ratio_alignment(claim.text, response)
    if found is not None and found.score >= MIN_ALIGNMENT and sentences:
        # Snap to the sentence(s) the aligned region falls in.
        aligned = (found.dest_start, found.dest_end)
        inside = [s for s in sentences if overlaps((s.start, s.end), aligned)]
        if inside:
            return Span(start=inside[0].start, end=inside[-1].end)
    if not sentences:
        return Span(start=0, end=len(response))
    best = max(sentences, key=lambda s: fuzz.token_set_ratio(claim.text, s.text))
    return Span(start=best.start, end=best.end)


def decompose_claims(
    response: str,
    llm: Any,
    config: HallucinationConfig,
    query: str = "",
    response_language: str | None = None,
) -> list[Claim]:
    """Atomic claims from ``llm`` with spans into ``response``.

    Raises:
        VerifierError: the model failed or its output could not be parsed.
    """
    try:
        result = _ask(llm, query, response)
    except Exception as exc:  # any model / parser failure becomes one typed error
        raise VerifierError(f"claim decomposition by the LLM failed: {exc}") from exc
    claims = []
    for atomic in result.claims:
        text = " ".join(atomic.text.split())
        if len(text) < config.min_claim_chars:
            continue
        claims.append(
            Claim(
                text=text,
                span=align(atomic, response),
                language=claim_language(text, response_language),
            )
        )
    if not claims:
        raise VerifierError("claim decomposition by the LLM returned no claims")
    logger.debug("decomposed the response into %d atomic claims", len(claims))
    return cap_claims(claims, config.max_claims)
