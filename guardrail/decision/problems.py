"""Problems: what the checks judged wrong, and which corrections repair them.

A *problem* blocks showing a claim as it is. Under ``claim`` granularity it is a claim whose
calibrated ``p_supported`` is below ``remove_below`` (a confident "not supported"); under
``answer`` granularity every checked claim that is not supported when the verdict is
``HALLUCINATION``. Under both: claims contradicted with confidence ≥ ``confidence.blocking``,
flags of a blocking type at least that confident (contradicts fact, wrong attribute, fabricated
fact, nonexistent entity, temporal error, contradicts prior, logical inconsistency),
knowledge-base contradictions at least that confident and dialogue-history conflicts. A
claim the evidence could not check (unverified) raises no problem of its own, except a
confident contradiction of an earlier turn: that is judged against the turns. A value the
knowledge base records differently is one finding, fact validation's: one problem,
``kb_contradiction``.
"""

from __future__ import annotations

from collections.abc import Sequence

from guardrail.config import ConfidenceLadder, DecisionConfig, GuardrailConfig
from guardrail.report import (
    CalibrationUsed,
    Claim,
    ClaimStatus,
    Correction,
    CorrectionType,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    Problem,
    ValidationStatus,
    Verdict,
    VerdictLabel,
)
from guardrail.thresholds import ClaimCutoffs, claim_cutoffs

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


def remove_below(
    config: GuardrailConfig, calibration: CalibrationUsed | None, claims: Sequence[Claim]
) -> list[float | None]:
    """By claim, the ``p_supported`` below which an unsupported claim is a confident problem:
    :func:`~guardrail.thresholds.claim_cutoffs` of the calibration the hallucination stage
    scored the claim with (``state.calibration``; a claim a router sent to another verifier
    has that verifier's), with the config's ``decision.remove_below``. ``None`` = every
    unsupported claim is a confident problem."""
    if calibration is None:  # no claim scored under a calibration
        cut = claim_cutoffs(None, config.hallucination, decision=config.decision)
        return [cut.remove_below] * len(claims)
    return [
        claim_cutoffs(
            ClaimCutoffs(calibration.threshold, calibration.remove_below_for(i)),
            config.hallucination,
            decision=config.decision,
        ).remove_below
        for i in range(len(claims))
    ]


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
    cutoffs: Sequence[float | None] | float | None = None,
    ladder: ConfidenceLadder | None = None,
) -> list[Problem]:
    """Everything that blocks showing a claim as it is (see the module docstring).

    ``cutoffs`` are :func:`remove_below`, by claim, or one for all (``claim`` granularity only;
    ``None``: every unsupported claim is a confident problem). ``ladder``: the config's
    confidence ladder (``None``: the default one), whose ``blocking`` rung a finding must reach.
    """
    blocking = (ladder or ConfidenceLadder()).blocking
    problems: list[Problem] = []
    hallucination = verdict is not None and verdict.label is VerdictLabel.HALLUCINATION
    per_claim = config.granularity == "claim"
    for i, c in enumerate(claims):
        conf = claim_problem_confidence(c)
        bad = c.status in (ClaimStatus.UNSUPPORTED, ClaimStatus.CONTRADICTED)
        strong_contra = (
            c.status is ClaimStatus.CONTRADICTED
            and c.scores is not None
            and max(c.scores.contradiction, conf) >= blocking
        )
        if cutoffs is None or isinstance(cutoffs, float | int):
            cutoff = cutoffs
        else:
            cutoff = cutoffs[i] if i < len(cutoffs) else None
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
        if f.type in BLOCKING_FLAGS and f.confidence >= blocking:
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
            if v.status is ValidationStatus.CONTRADICTED and v.confidence >= blocking:
                kind = "kb_contradiction"
            elif v.status is ValidationStatus.HISTORY_CONFLICT:
                kind = "history_conflict"
            else:
                continue
            span = v.claim.object_span or v.claim.span
            index = next((i for i, c in enumerate(claims) if c.span.overlaps(span)), None)
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
        if not (same_claim or c.span.overlaps(problem.span)):
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
