"""Problems: what the checks judged wrong, and which corrections repair them.

A *problem* blocks showing a claim as it is. Under ``claim`` granularity it is a claim whose
calibrated ``p_supported`` is below ``remove_below`` (a confident "not supported"); under
``answer`` granularity every checked claim that is not supported when the verdict is
``HALLUCINATION``. Under both: claims contradicted with confidence ≥ ``confidence.blocking``,
flags of a blocking type at least that confident (contradicts fact, wrong attribute, fabricated
fact, nonexistent entity, temporal error, contradicts prior, logical inconsistency),
knowledge-base contradictions at least that confident and dialogue-history conflicts. A
claim the evidence could not check (unverified) raises no problem of its own, except a
confident contradiction of an earlier turn: that is judged against the turns. A
WRONG_ATTRIBUTE flag on the value of a knowledge-base contradiction is that contradiction
restated (:func:`~guardrail.hallucination.flags.wrong_attribute_flags`): the two are one
problem, ``kb_contradiction``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guardrail.config import DecisionConfig, GuardrailConfig
from guardrail.report import (
    Claim,
    ClaimStatus,
    Correction,
    CorrectionType,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    Problem,
    Span,
    ValidationStatus,
    Verdict,
    VerdictLabel,
)

#: Flag types that block delivering a claim as it is (when at least ``confidence.blocking`` sure).
BLOCKING_FLAGS: frozenset[HallucinationType] = frozenset(
    {
        HallucinationType.CONTRADICTS_FACT,
        HallucinationType.WRONG_ATTRIBUTE,
        HallucinationType.FABRICATED_FACT,
        HallucinationType.NONEXISTENT_ENTITY,
        HallucinationType.TEMPORAL_ERROR,
        HallucinationType.CONTRADICTS_PRIOR,
        HallucinationType.LOGICAL_INCONSISTENCY,
    }
)
CLAIM_KINDS = frozenset({"unsupported", "contradicted"})
"""Problem kinds that are a claim's own status (the others come from flags and the KB)."""


def overlaps(a: Span, b: Span) -> bool:
    """Whether two character spans share at least one character."""
    return a.start < b.end and b.start < a.end


def _restates(problem: Problem, span: Span) -> bool:
    """Whether ``problem`` is the WRONG_ATTRIBUTE flag on the value at ``span``."""
    same_span = (problem.span.start, problem.span.end) == (span.start, span.end)
    return same_span and problem.kind == HallucinationType.WRONG_ATTRIBUTE.value


def remove_below(config: GuardrailConfig, verifier: Any = None) -> float | None:
    """The ``p_supported`` below which an unsupported claim is a confident problem: the
    config's ``decision.remove_below``, else the value in the claim calibration of
    ``verifier`` (:func:`~guardrail.hallucination.calibration_registry.calibration_for`; an
    uncalibrated verifier has none), else — no verifier given — the configured or shipped
    calibration file's (none for a configured directory: its files are keyed by verifier)."""
    if config.decision.remove_below is not None:
        return config.decision.remove_below
    configured = config.hallucination.calibration
    if verifier is None and configured is not None and Path(configured).is_dir():
        return None
    if verifier is not None:
        from guardrail.hallucination.calibration_registry import calibration_for

        return calibration_for(verifier, config.hallucination.calibration).remove_below
    from guardrail.hallucination.calibration import ClaimCalibrator

    return ClaimCalibrator.load(config.hallucination.calibration).remove_below


def claim_problem_confidence(claim: Claim) -> float:
    """How sure the check is that ``claim`` is not supported."""
    if claim.p_supported is not None:
        return round(1.0 - claim.p_supported, 4)
    if claim.scores is None:
        return 0.5
    return round(max(claim.scores.contradiction, 1.0 - claim.scores.entailment), 4)


def _confidently_unsupported(claim: Claim, cutoff: float | None) -> bool:
    if cutoff is None:
        return True
    return claim_problem_confidence(claim) > 1.0 - cutoff


def find_problems(
    claims: Sequence[Claim],
    flags: Sequence[HallucinationFlag],
    factual: FactualValidationResult | None,
    verdict: Verdict | None,
    config: DecisionConfig,
    cutoff: float | None = None,
) -> list[Problem]:
    """Everything that blocks showing a claim as it is (see the module docstring).

    ``cutoff`` is :func:`remove_below` (``claim`` granularity only).
    """
    problems: list[Problem] = []
    hallucination = verdict is not None and verdict.label is VerdictLabel.HALLUCINATION
    per_claim = config.granularity == "claim"
    for i, c in enumerate(claims):
        conf = claim_problem_confidence(c)
        bad = c.status in (ClaimStatus.UNSUPPORTED, ClaimStatus.CONTRADICTED)
        strong_contra = (
            c.status is ClaimStatus.CONTRADICTED
            and c.scores is not None
            and max(c.scores.contradiction, conf) >= config.confidence.blocking
        )
        judged = _confidently_unsupported(c, cutoff) if per_claim else hallucination
        if bad and (judged or strong_contra):
            problems.append(
                Problem(
                    kind=c.status.value, span=c.span, text=c.text, confidence=conf, claim_index=i
                )
            )
    unchecked = {
        i
        for i, c in enumerate(claims)
        if c.status in (ClaimStatus.UNVERIFIED, ClaimStatus.NOT_CHECKWORTHY)
    }
    for f in flags:
        if f.claim_index in unchecked and f.type is not HallucinationType.CONTRADICTS_PRIOR:
            # a claim the evidence could not check is unverified, not judged; contradicting
            # an earlier turn is judged against the turns, which were checked
            continue
        if f.type in BLOCKING_FLAGS and f.confidence >= config.confidence.blocking:
            problems.append(
                Problem(
                    kind=f.type.value,
                    span=f.span,
                    text=f.content,
                    confidence=f.confidence,
                    claim_index=f.claim_index,
                )
            )
    if factual is not None:
        for v in factual.claim_validations:
            if (
                v.status is ValidationStatus.CONTRADICTED
                and v.confidence >= config.confidence.blocking
            ):
                kind = "kb_contradiction"
            elif v.status is ValidationStatus.HISTORY_CONFLICT:
                kind = "history_conflict"
            else:
                continue
            span = v.claim.object_span or v.claim.span
            if kind == "kb_contradiction":  # one wrong value is one problem
                problems = [p for p in problems if not _restates(p, span)]
            index = next((i for i, c in enumerate(claims) if overlaps(c.span, span)), None)
            problems.append(
                Problem(
                    kind=kind,
                    span=span,
                    text=v.claim.text,
                    confidence=v.confidence,
                    claim_index=index,
                )
            )
    return problems


def _fix_of(problem: Problem, corrections: Sequence[Correction]) -> str | None:
    """How the corrected text repairs ``problem`` (``None`` = it does not)."""
    for c in corrections:
        if (
            c.type is CorrectionType.REMOVAL
            and c.span.start <= problem.span.start
            and (problem.span.end <= c.span.end)
        ):
            return "removal"
    for c in corrections:
        if c.type is not CorrectionType.FACTUAL:
            continue
        same_claim = problem.claim_index is not None and c.claim_index == problem.claim_index
        if not (same_claim or overlaps(c.span, problem.span)):
            continue
        if (c.source or "").startswith("knowledge base"):
            # the recorded value is the authority: it repairs the conflict, the flags on the
            # value and the claim's own status (any other wrong value in the claim is a
            # problem of its own that this correction does not repair)
            return "knowledge base"
        if c.verified:
            return f"{c.source or 'correction'} (re-checked)"
    return None


def mark_fixes(problems: Sequence[Problem], corrections: Sequence[Correction]) -> list[Problem]:
    """The problems with ``fixed_by`` set where the corrections repair them."""
    return [p.model_copy(update={"fixed_by": _fix_of(p, corrections)}) for p in problems]


def consistent_verdict(verdict: Verdict, problems: Sequence[Problem]) -> Verdict:
    """The verdict, turned to ``HALLUCINATION`` when problems outside it block the answer."""
    if not problems or verdict.label is VerdictLabel.HALLUCINATION:
        return verdict
    kinds = sorted({p.kind for p in problems})
    why = f"{len(problems)} blocking problem(s) found by other checks: {', '.join(kinds)}"
    reason = f"{why}; evidence verdict was {verdict.label.value}" + (
        f" ({verdict.reason})" if verdict.reason else ""
    )
    return verdict.model_copy(update={"label": VerdictLabel.HALLUCINATION, "reason": reason})
