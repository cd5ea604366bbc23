"""Claims of a response: sentences with spans (claim decomposition), with their language.

Fragments shorter than ``min_claim_chars`` are skipped; CJK characters count double
there, since one carries about a word. With ``checkworthiness`` on, a question that asserts a
fact ("Did you know that X?", "X, isn't it?") gives the claim X, its span inside the question
(:mod:`guardrail.hallucination.question_facts`), and a statement run into a question ("It came
out in 1997. what about you?") is a claim of its own. With ``decompose_claims`` off the whole response is one
claim. Claims past ``max_claims`` are kept but marked unverified (never silently dropped).

Example::

    >>> [c.text for c in sentence_claims("It rained. Ok. The match was cancelled.", HallucinationConfig())]
    ['It rained.', 'The match was cancelled.']
"""

from __future__ import annotations

import re

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
            pieces = [part for piece in pieces for part in _asserted_parts(*piece)]
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


_LOWER_START = re.compile(r"(?<=[.!?])\s+(?=[a-z])")
"""A sentence end before a lower-case word, which the splitter keeps in one sentence."""


def _asserted_parts(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """A sentence as claim pieces: a question that asserts a fact gives that fact; statements
    run into a question ("It came out in 1997. what about you?") and questions run together
    ("the meeting moved to 42%? the fee is 2pm?") are pieces of their own."""
    if not text.rstrip().endswith("?"):
        return [(text, start, end)]
    gaps = list(_LOWER_START.finditer(text))
    bounds = zip(
        [0, *(m.end() for m in gaps)], [*(m.start() for m in gaps), len(text)], strict=True
    )
    parts: list[tuple[str, int, int]] = []
    for a, b in bounds:
        piece = text[a:b]
        found = asserted_fact(piece) if piece.rstrip().endswith("?") else None
        if found is None:
            parts.append((piece, start + a, start + b if b < len(text) else end))
        else:
            parts.append((piece[found[0] : found[1]], start + a + found[0], start + a + found[1]))
    return parts


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
