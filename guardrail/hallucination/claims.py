"""Claims of a response: sentences with spans (seed 000 v2, seed 001), with their language.

Fragments shorter than ``min_claim_chars`` are skipped (seed 001); CJK characters count double
there, since one carries about a word. With ``checkworthiness`` on, a question that asserts a
fact ("Did you know that X?", "X, isn't it?") gives the claim X, its span inside the question
(:mod:`guardrail.hallucination.question_facts`). With ``decompose_claims`` off the whole response is one
claim. Claims past ``max_claims`` are kept but marked unverified (never silently dropped).

Example::

    >>> [c.text for c in sentence_claims("It rained. Ok. The match was cancelled.", HallucinationConfig())]
    ['It rained.', 'The match was cancelled.']
"""

from __future__ import annotations

from guardrail.config import HallucinationConfig
from guardrail.hallucination.question_facts import asserted_fact
from guardrail.report import Claim, ClaimStatus, Span
from guardrail.text.language import claim_language
from guardrail.text.sentences import display_length, split_sentences


def sentence_claims(
    response: str, config: HallucinationConfig, response_language: str | None = None
) -> list[Claim]:
    """Split ``response`` into claims (one per sentence, or one for all), language-tagged."""
    if config.decompose_claims:
        pieces = [(s.text, s.start, s.end) for s in split_sentences(response)]
        if config.checkworthiness:
            pieces = [_asserted_part(*piece) for piece in pieces]
    else:
        stripped = response.strip()
        start = response.find(stripped) if stripped else 0
        pieces = [(stripped, start, start + len(stripped))] if stripped else []
    claims = [
        Claim(
            text=text,
            span=Span(start=start, end=end),
            language=claim_language(text, response_language),
        )
        for text, start, end in pieces
        if display_length(text) >= config.min_claim_chars
    ]
    if not claims and pieces:
        # A response made only of short fragments is still checked, as a whole.
        start, end = pieces[0][1], pieces[-1][2]
        claims = [
            Claim(
                text=response[start:end],
                span=Span(start=start, end=end),
                language=response_language,
            )
        ]
    return cap_claims(claims, config.max_claims)


def _asserted_part(text: str, start: int, end: int) -> tuple[str, int, int]:
    """The fact a question asserts, as its own piece; any other sentence unchanged."""
    found = asserted_fact(text)
    if found is None:
        return text, start, end
    return text[found[0] : found[1]], start + found[0], start + found[1]


def cap_claims(claims: list[Claim], max_claims: int) -> list[Claim]:
    """Mark claims beyond ``max_claims`` as unverified with a reason."""
    if len(claims) <= max_claims:
        return claims
    over = [
        c.model_copy(
            update={
                "status": ClaimStatus.UNVERIFIED,
                "reason": f"more than max_claims={max_claims} claims; not checked",
            }
        )
        for c in claims[max_claims:]
    ]
    return claims[:max_claims] + over
