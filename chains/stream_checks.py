"""The per-sentence results of a guarded stream, and the streaming settings.

:func:`sentence_checks` splits one ``GuardReport`` on a chunk of sentences into one
:class:`SentenceCheck` per sentence (claims, facts and flags are assigned by their spans), so
several sentences that complete together are checked in one ``Guardrail.invoke``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from guardrail.report import (
    ClaimStatus,
    GuardReport,
    HallucinationFlag,
    Span,
    ValidationStatus,
)
from guardrail.text.sentences import Sentence

#: Name of the custom event dispatched per checked sentence.
SENTENCE_EVENT = "on_sentence_checked"

_FAILED_CLAIMS = frozenset({ClaimStatus.CONTRADICTED, ClaimStatus.UNSUPPORTED})
_FAILED_FACTS = frozenset({ValidationStatus.CONTRADICTED, ValidationStatus.HISTORY_CONFLICT})


class ClaimVerdict(BaseModel):
    """One claim of a checked sentence and the verifier's judgement."""

    text: str
    status: ClaimStatus
    entailment: float | None = None
    contradiction: float | None = None
    reason: str | None = None


class SentenceCheck(BaseModel):
    """The check of one streamed sentence (the payload of ``on_sentence_checked``)."""

    index: int
    """0-based position of the sentence in the answer."""
    text: str
    span: Span
    """Where the sentence is in the streamed answer."""
    passed: bool
    """False when a claim is contradicted / unsupported or a fact contradicts the KB."""
    status: str
    """``supported``, ``failed``, ``no_claims`` (nothing checkable) or ``unverified``."""
    reason: str = ""
    claims: list[ClaimVerdict] = Field(default_factory=list)
    flags: list[HallucinationFlag] = Field(default_factory=list)
    check_ms: float = 0.0
    """Time from the sentence being complete to its result (the delay streaming adds)."""


def _claim_reason(status: ClaimStatus, claim: str, sentence: str) -> str:
    what = "contradicted by" if status is ClaimStatus.CONTRADICTED else "not supported by"
    part = "" if claim.strip() == sentence.strip() else f" ({claim!r})"
    return f"{what} the evidence{part}"


def _fact_reason(predicate: str, kb_value: str | None, reason: str | None) -> str:
    if kb_value:
        return f"the knowledge base has {predicate} = {kb_value!r}"
    return reason or "conflicts with a known fact"


def _in(span: Span, start: int, end: int) -> bool:
    return start <= span.start < end


def sentence_checks(
    report: GuardReport, sentences: list[Sentence], offset: int, first_index: int
) -> list[SentenceCheck]:
    """Split the report on a chunk of sentences into one :class:`SentenceCheck` per sentence.

    ``offset`` is where the checked chunk starts in the answer (report spans are relative to the
    chunk); ``first_index`` the index of the chunk's first sentence.
    """
    checks: list[SentenceCheck] = []
    validations = report.factual_validation.claim_validations if report.factual_validation else []
    for n, sentence in enumerate(sentences):
        lo, hi = sentence.start - offset, sentence.end - offset
        claims = [c for c in report.claims if _in(c.span, lo, hi)]
        flags = [f for f in report.hallucination_flags if _in(f.span, lo, hi)]
        facts = [v for v in validations if _in(v.claim.span, lo, hi)]
        bad_claims = [c for c in claims if c.status in _FAILED_CLAIMS]
        bad_facts = [v for v in facts if v.status in _FAILED_FACTS]
        if bad_claims or bad_facts:
            status = "failed"
            parts = [_claim_reason(c.status, c.text, sentence.text) for c in bad_claims]
            parts += [_fact_reason(v.claim.predicate, v.kb_value, v.reason) for v in bad_facts]
            reason = "; ".join(parts)
        elif any(c.status is ClaimStatus.SUPPORTED for c in claims) or any(
            v.status is ValidationStatus.VERIFIED for v in facts
        ):
            status, reason = "supported", ""
        elif not claims and not facts:
            status, reason = "no_claims", "no checkable claim"
        else:
            status = "unverified"
            reason = "; ".join(sorted({c.reason for c in claims if c.reason})) or (
                report.verdict.reason or "could not be checked"
            )
        checks.append(
            SentenceCheck(
                index=first_index + n,
                text=sentence.text,
                span=Span(start=sentence.start, end=sentence.end),
                passed=status != "failed",
                status=status,
                reason=reason,
                claims=[
                    ClaimVerdict(
                        text=c.text,
                        status=c.status,
                        entailment=c.scores.entailment if c.scores else None,
                        contradiction=c.scores.contradiction if c.scores else None,
                        reason=c.reason,
                    )
                    for c in claims
                ],
                flags=flags,
            )
        )
    return checks


def error_checks(
    sentences: list[Sentence], first_index: int, exc: Exception
) -> list[SentenceCheck]:
    """A check that could not run: failed (never silently passed), with the reason."""
    return [
        SentenceCheck(
            index=first_index + n,
            text=s.text,
            span=Span(start=s.start, end=s.end),
            passed=False,
            status="unverified",
            reason=f"the check failed: {type(exc).__name__}: {exc}",
        )
        for n, s in enumerate(sentences)
    ]


def coerce_base(base: dict[str, Any]) -> dict[str, Any]:
    """Guardrail input without the response; a knowledge-base path stays a path."""
    out = {k: v for k, v in base.items() if k != "response" and v is not None}
    kb = out.get("knowledge_base")
    if isinstance(kb, Path):
        out["knowledge_base"] = str(kb)
    return out
