"""The decision: how the verdict and the problems it found gate seed 004's recommendation bands.

Seed 004 maps the confidence score onto five bands (accept ≥ 0.90, accept with flags ≥ 0.75,
correct and deliver ≥ 0.50, regenerate ≥ 0.30, human review below). On its own that lets an
answer with a contradicted claim through whenever the other components are high. The decision
therefore reads the evidence first:

1. **Unchecked** (fail-closed only): a checking stage failed or nothing could be verified →
   ``human_review`` with the reason, whatever the score.
2. **Problems** are what the checks judged wrong: every checked claim that is not supported when
   the verdict is ``HALLUCINATION``; and, whatever the verdict, claims contradicted with
   confidence ≥ ``decision.strong_flag``, flags of a blocking type at least that confident
   (contradicts fact, wrong attribute, fabricated fact, nonexistent entity, temporal error,
   contradicts prior, logical inconsistency), knowledge-base contradictions at least that
   confident and dialogue-history conflicts. If there are problems the verdict is (or becomes)
   ``HALLUCINATION``, the answer is never delivered as it is, and:

   - every problem repaired in the corrected text (a knowledge-base value, an evidence value
     whose corrected claim was re-checked and found supported, or the sentence removed) →
     ``correct_and_deliver`` with the corrected text;
   - otherwise, confidence ≥ the regenerate band → ``regenerate`` with guidance naming each
     unrepaired claim; below it → ``human_review``.
3. **No problems**: seed 004's bands on the confidence score, unchanged.

So ``accept`` / ``accept_with_flags`` never deliver an answer with a blocking problem, and
``correct_and_deliver`` delivers only text whose every problem was repaired.
"""

from __future__ import annotations

from collections.abc import Sequence

from guardrail.config import DecisionConfig, HandlingThresholds, ScoringCutoffs
from guardrail.report import (
    Claim,
    ClaimStatus,
    CoherenceResult,
    CorrectAndDeliver,
    Correction,
    CorrectionType,
    Decision,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    HumanReview,
    Problem,
    Recommendation,
    Regenerate,
    Span,
    ValidationStatus,
    Verdict,
    VerdictLabel,
)
from guardrail.scoring import (
    SEED,
    band_of,
    human_review_reason,
    recommend,
    regeneration_guidance,
)

#: Flag types that block delivering the answer as it is (when at least ``strong_flag`` sure).
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


def _overlaps(a: Span, b: Span) -> bool:
    return a.start < b.end and b.start < a.end


def claim_problem_confidence(claim: Claim) -> float:
    """How sure the check is that ``claim`` is not supported."""
    if claim.p_supported is not None:
        return round(1.0 - claim.p_supported, 4)
    if claim.scores is None:
        return 0.5
    return round(max(claim.scores.contradiction, 1.0 - claim.scores.entailment), 4)


def find_problems(
    claims: Sequence[Claim],
    flags: Sequence[HallucinationFlag],
    factual: FactualValidationResult | None,
    verdict: Verdict | None,
    config: DecisionConfig,
) -> list[Problem]:
    """Everything that blocks delivering the answer as it is (see the module docstring)."""
    problems: list[Problem] = []
    hallucination = verdict is not None and verdict.label is VerdictLabel.HALLUCINATION
    for i, c in enumerate(claims):
        conf = claim_problem_confidence(c)
        bad = c.status in (ClaimStatus.UNSUPPORTED, ClaimStatus.CONTRADICTED)
        strong_contra = (
            c.status is ClaimStatus.CONTRADICTED
            and c.scores is not None
            and max(c.scores.contradiction, conf) >= config.strong_flag
        )
        if bad and (hallucination or strong_contra):
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
        if f.claim_index in unchecked:
            continue  # a claim that could not be checked is unverified, not judged
        if f.type in BLOCKING_FLAGS and f.confidence >= config.strong_flag:
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
            if v.status is ValidationStatus.CONTRADICTED and v.confidence >= config.strong_flag:
                kind = "kb_contradiction"
            elif v.status is ValidationStatus.HISTORY_CONFLICT:
                kind = "history_conflict"
            else:
                continue
            problems.append(
                Problem(
                    kind=kind,
                    span=v.claim.object_span or v.claim.span,
                    text=v.claim.text,
                    confidence=v.confidence,
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
        if not (same_claim or _overlaps(c.span, problem.span)):
            continue
        kb = (c.source or "").startswith("knowledge base")
        if kb and problem.kind in ("kb_contradiction", "wrong_attribute"):
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


def _problem_guidance(problems: Sequence[Problem]) -> list[str]:
    """One instruction per problem claim (flags inside a claim are named as its details)."""
    claim_kinds = {"unsupported", "contradicted"}
    named = {p.claim_index for p in problems if p.kind in claim_kinds and p.claim_index is not None}
    details: dict[int, list[str]] = {}
    for p in problems:
        if p.kind not in claim_kinds and p.claim_index in named and p.claim_index is not None:
            details.setdefault(p.claim_index, []).append(f"'{p.text}': {p.kind.replace('_', ' ')}")
    items = []
    for p in problems:
        if p.kind not in claim_kinds and p.claim_index in named:
            continue
        extra = details.get(p.claim_index, []) if p.claim_index is not None else []
        why = f" ({'; '.join(extra)})" if extra else ""
        if p.kind == "unsupported":
            items.append(
                f"The evidence does not support '{p.text}'{why}: remove it or state only what "
                "the evidence says."
            )
        elif p.kind in ("contradicted", "contradicts_fact", "temporal_error"):
            items.append(f"The evidence contradicts '{p.text}'{why}: correct it from the evidence.")
        elif p.kind in ("kb_contradiction", "wrong_attribute"):
            items.append(f"'{p.text}' conflicts with the knowledge base: use the recorded value.")
        else:
            items.append(f"Fix or remove '{p.text}' ({p.kind.replace('_', ' ')}).")
    return list(dict.fromkeys(items))


def decide(
    *,
    confidence: float,
    verdict: Verdict,
    problems: Sequence[Problem],
    claims: Sequence[Claim],
    coherence: CoherenceResult | None,
    factual: FactualValidationResult | None,
    flags: list[HallucinationFlag],
    corrections: list[Correction],
    thresholds: HandlingThresholds,
    unchecked: list[str],
    cutoffs: ScoringCutoffs = SEED,
) -> tuple[Recommendation, Decision]:
    """The recommendation and the record of how it was reached."""
    checked = [
        c for c in claims if c.status not in (ClaimStatus.UNVERIFIED, ClaimStatus.NOT_CHECKWORTHY)
    ]
    supported = sum(c.status is ClaimStatus.SUPPORTED for c in checked)
    record = Decision(
        problems=list(problems),
        band=band_of(confidence, thresholds).value,
        supported_fraction=round(supported / len(checked), 4) if checked else None,
        checkworthy_claims=sum(c.status is not ClaimStatus.NOT_CHECKWORTHY for c in claims),
        not_checkworthy_claims=sum(c.status is ClaimStatus.NOT_CHECKWORTHY for c in claims),
    )
    if unchecked:
        rec: Recommendation = HumanReview(
            reason=human_review_reason(confidence, coherence, factual, flags, unchecked, cutoffs)
        )
        return rec, record.model_copy(
            update={"gate": "fail-closed: the answer could not be fully checked"}
        )
    if not problems:
        rec = recommend(
            confidence, coherence, factual, flags, corrections, thresholds, cutoffs=cutoffs
        )
        gate = f"no blocking problem: seed 004 band for confidence {confidence:.2f}"
        return rec, record.model_copy(update={"gate": gate})
    unfixed = [p for p in problems if p.fixed_by is None]
    if not unfixed:
        fixes = [c for c in corrections if c.type is not CorrectionType.ANNOTATION]
        gate = f"all {len(problems)} problem(s) repaired in the corrected text"
        return CorrectAndDeliver(corrections=fixes), record.model_copy(update={"gate": gate})
    if confidence >= thresholds.regenerate:
        named = {p.text for p in unfixed}
        rest = [
            item
            for item in regeneration_guidance(coherence, factual, flags, cutoffs)
            if not (item.startswith("Please verify or remove") and any(t in item for t in named))
        ]
        items = list(dict.fromkeys(_problem_guidance(unfixed) + rest))
        gate = f"{len(unfixed)} unrepaired problem(s): never delivered as is"
        return Regenerate(guidance=" ".join(items), items=items), record.model_copy(
            update={"gate": gate}
        )
    reason = human_review_reason(confidence, coherence, factual, flags, cutoffs=cutoffs)
    reason += f" {len(unfixed)} unrepaired problem(s): " + "; ".join(
        f"{p.kind}: '{p.text}'" for p in unfixed[:5]
    )
    gate = f"{len(unfixed)} unrepaired problem(s) and confidence below the regenerate band"
    return HumanReview(reason=reason), record.model_copy(update={"gate": gate})
