"""The per-sentence results of a guarded stream, and the streaming settings.

:func:`sentence_checks` splits one ``GuardReport`` on a chunk of sentences into one
:class:`SentenceCheck` per sentence (claims, facts, flags, problems and annotations are
assigned by their spans), so several sentences that complete together are checked in one
``Guardrail.invoke``.

A sentence's result follows the claim outcomes of that check, as ``Guardrail.invoke`` would
deliver the chunk (:mod:`guardrail.decision.outcomes`):

- **failed** (``passed`` false): a claim in it is *removed* (a confident problem: confidently
  unsupported or contradicted, a blocking flag), or it has any other problem of the decision
  (one a repair fixes included: the streamed text cannot be repaired), or a value contradicted
  by the knowledge base or the dialogue;
- **uncertain** (``passed`` true, ``note`` set): a claim is shown annotated (uncertain or
  unverified); ``note`` is the label of invoke's annotation (``uncertain: not confirmed by
  the sources``, ``unverified`` …), so the stream marks it with the same words;
- otherwise ``supported``, ``no_claims`` (nothing checkable) or ``unverified`` with no claim
  to annotate.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from guardrail.config import StrictModel
from guardrail.decision.outcomes import UNCERTAIN_NOTE, UNVERIFIED_NOTE
from guardrail.errors import ConfigError
from guardrail.report import (
    Claim,
    ClaimOutcome,
    ClaimStatus,
    CorrectionType,
    GuardReport,
    HallucinationFlag,
    Problem,
    Span,
    ValidationStatus,
)
from guardrail.text.sentences import Sentence

#: Name of the custom event dispatched per checked sentence.
SENTENCE_EVENT = "on_sentence_checked"


class StreamPolicy(StrEnum):
    """What a guarded stream does when a sentence fails its check."""

    ANNOTATE = "annotate"
    """Keep streaming; mark the failed sentence (``annotation`` is emitted right after it)."""
    STOP = "stop"
    """End the stream after the failed sentence with ``stop_notice``, then the final report."""
    BUFFER = "buffer"
    """Hold each sentence until it is checked; withhold a failed one (``withheld_notice``)."""


class StreamingConfig(StrictModel):
    """Settings of a guarded stream, given to the chain that streams (``streaming=``); they
    live here, beside the code reading them (the guardrail config's ``streaming`` section is
    deprecated)."""

    policy: StreamPolicy = StreamPolicy.ANNOTATE
    """What to do when a sentence fails (see :class:`StreamPolicy`)."""
    annotation: str = " [fact check: {reason}]"
    """Emitted after a failed sentence under ``annotate``; ``{reason}`` is filled in. A leading
    space follows the annotation marker's rule: it is dropped after CJK text."""
    stop_notice: str = "\n[The answer was stopped by the fact checker: {reason}]"
    """The last text piece under ``stop``."""
    withheld_notice: str = "[A sentence was withheld by the fact checker: {reason}]"
    """Replaces a failed sentence under ``buffer``."""
    final_check: bool = True
    """Check the whole streamed answer once more at the end, for the final report."""

    @classmethod
    def load(cls, value: StreamingConfig | dict[str, Any] | str | None) -> StreamingConfig:
        """From a config, a dict, a policy name, or ``None`` (defaults)."""
        if value is None:
            return cls()
        if isinstance(value, StreamingConfig):
            return value
        if isinstance(value, BaseModel):  # the same settings held by another config class
            value = value.model_dump()
        if isinstance(value, str):
            value = {"policy": value}
        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            raise ConfigError(f"invalid streaming config: {exc}") from exc


_FAILED_CLAIMS = frozenset({ClaimStatus.CONTRADICTED, ClaimStatus.UNSUPPORTED})
_NOTED = {ClaimOutcome.UNCERTAIN: UNCERTAIN_NOTE, ClaimOutcome.UNVERIFIED: UNVERIFIED_NOTE}
_FAILED_FACTS = frozenset({ValidationStatus.CONTRADICTED, ValidationStatus.HISTORY_CONFLICT})


class ClaimVerdict(BaseModel):
    """One claim of a checked sentence and the verifier's judgement."""

    text: str
    status: ClaimStatus
    entailment: float | None = None
    contradiction: float | None = None
    reason: str | None = None
    p_supported: float | None = None
    outcome: ClaimOutcome | None = None
    """What ``Guardrail.invoke`` on the checked chunk does with the claim (``removed``,
    ``uncertain`` …)."""


class SentenceCheck(BaseModel):
    """The check of one streamed sentence (the payload of ``on_sentence_checked``)."""

    index: int
    """0-based position of the sentence in the answer."""
    text: str
    span: Span
    """Where the sentence is in the streamed answer."""
    passed: bool
    """False when the check would remove a claim of it (or it has another problem: see the
    module docstring); true for a sentence shown, annotated or not."""
    status: str
    """``supported``, ``uncertain`` (shown with ``note``), ``failed``, ``no_claims`` (nothing
    checkable) or ``unverified``."""
    reason: str = ""
    note: str | None = None
    """The annotation ``Guardrail.invoke`` puts on it (``uncertain: not confirmed by the
    sources``, ``unverified`` …), for a sentence shown although a claim is not supported."""
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


def _problem_reason(problem: Problem) -> str:
    return f"{problem.kind.replace('_', ' ')} ({problem.text!r})"


def _notes(report: GuardReport, claims: list[Claim], lo: int, hi: int) -> list[str]:
    """The annotation labels invoke puts in ``[lo, hi)``: the annotation corrections made
    there, else (no correction stage) the note of each uncertain or unverified claim."""
    made = [
        x for x in report.corrections if x.type is CorrectionType.ANNOTATION and _in(x.span, lo, hi)
    ]
    labels = [x.message or x.replacement.strip("[] ") for x in made]
    for c in claims:
        label = _NOTED.get(c.outcome) if c.outcome is not None else None
        if label is None or any(x.span.overlaps(c.span) or x.span == c.span for x in made):
            continue
        labels.append(label)
    return list(dict.fromkeys(labels))


def sentence_checks(
    report: GuardReport, sentences: list[Sentence], offset: int, first_index: int
) -> list[SentenceCheck]:
    """Split the report on a chunk of sentences into one :class:`SentenceCheck` per sentence
    (see the module docstring for what fails a sentence and what annotates it).

    ``offset`` is where the checked chunk starts in the answer (report spans are relative to the
    chunk); ``first_index`` the index of the chunk's first sentence.
    """
    checks: list[SentenceCheck] = []
    validations = report.factual_validation.claim_validations if report.factual_validation else []
    for n, sentence in enumerate(sentences):
        lo, hi = sentence.start - offset, sentence.end - offset
        mine = {i: c for i, c in enumerate(report.claims) if _in(c.span, lo, hi)}
        claims = list(mine.values())
        flags = [f for f in report.hallucination_flags if _in(f.span, lo, hi)]
        facts = [v for v in validations if _in(v.claim.span, lo, hi)]
        problems = [
            p
            for p in report.decision.problems
            if _in(p.span, lo, hi) or (p.claim_index is not None and p.claim_index in mine)
        ]
        removed = sorted(
            {p.claim_index for p in problems if p.claim_index is not None and p.claim_index in mine}
            | {i for i, c in mine.items() if c.outcome is ClaimOutcome.REMOVED}
        )
        loose = [p for p in problems if p.claim_index not in mine]
        bad_facts = [v for v in facts if v.status in _FAILED_FACTS]
        note = None
        if removed or loose or bad_facts:
            status = "failed"
            parts: list[str] = []
            for i in removed:
                c = mine[i]
                if c.status in _FAILED_CLAIMS:
                    parts.append(_claim_reason(c.status, c.text, sentence.text))
                else:
                    own = [_problem_reason(p) for p in problems if p.claim_index == i]
                    parts += own or ["removed by the check"]
            parts += [_problem_reason(p) for p in loose]
            parts += [_fact_reason(v.claim.predicate, v.kb_value, v.reason) for v in bad_facts]
            reason = "; ".join(dict.fromkeys(parts))
        elif labels := _notes(report, claims, lo, hi):
            note = "; ".join(labels)
            unverified = all(c.outcome is not ClaimOutcome.UNCERTAIN for c in claims) and any(
                c.outcome is ClaimOutcome.UNVERIFIED for c in claims
            )
            status = "unverified" if unverified else "uncertain"
            reason = (
                "; ".join(
                    _claim_reason(c.status, c.text, sentence.text)
                    for c in claims
                    if c.outcome is ClaimOutcome.UNCERTAIN and c.status in _FAILED_CLAIMS
                )
                or "; ".join(sorted({c.reason for c in claims if c.reason}))
                or note
            )
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
                note=note,
                claims=[
                    ClaimVerdict(
                        text=c.text,
                        status=c.status,
                        entailment=c.scores.entailment if c.scores else None,
                        contradiction=c.scores.contradiction if c.scores else None,
                        reason=c.reason,
                        p_supported=c.p_supported,
                        outcome=c.outcome,
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
