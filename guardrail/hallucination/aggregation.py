"""From verifier predictions to claim statuses and the response verdict (pure functions).

Per claim, the entailment is the max over its windows; the window that gave it is
the evidence. A claim is

- ``supported`` when that entailment ≥ T(rs),
- ``contradicted`` when not supported and some window contradicts it with probability ≥
  ``contradiction_flag`` (that window is then the evidence),
- ``unsupported`` otherwise.

With ``date_check`` (see the detector), a supported claim whose date differs from the one in
the closest evidence sentence becomes ``contradicted`` and its score is capped at
``1 - confidence`` of that date mismatch before aggregation.

The response verdict uses one of three policies over the checked claims:

- ``calibrated`` (default): each claim's ``p_supported`` (verifier scores and lexical features
  through the logistic model in :mod:`guardrail.hallucination.calibration`, fitted on held-out
  dev data) against the claim threshold chosen on the same dev data; a claim below it is
  ``contradicted`` (contradiction ≥ ``contradiction_flag``) or ``unsupported``; HALLUCINATION
  iff some checked claim is below it. The score reported is the lowest ``p_supported``.

- ``weakest_link`` (the Cw-CONLI verdict): score = min entailment over claims; VERIFIED iff
  score ≥ T(rs).
- ``ratio`` (the ratio rule): HALLUCINATION iff contradicted / checked > ``contradiction_ratio`` or
  unsupported / checked > ``neutral_ratio``; the claim statuses use the same T(rs).

Claims that could not be checked never count as support: if the checked claims would give
VERIFIED while some claims are unverified, the verdict is UNVERIFIED and says why. An answer
whose every claim is ``not_checkworthy`` is NOTHING_TO_CHECK: it states nothing to check,
which is not a failure to check — unless the user's question asks for a fact: then the answer
("No.") is one the rules cannot check, and the verdict is UNVERIFIED.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from guardrail.config import HallucinationConfig
from guardrail.hallucination.question_facts import asks_for_a_fact, yes_or_no
from guardrail.report import ClaimStatus, Verdict, VerdictLabel
from guardrail.thresholds import claim_cutoffs
from guardrail.verifiers.base import NLIPrediction


@dataclass(frozen=True)
class WindowDecision:
    """The deciding windows of one claim (indices into the windows it was scored against)."""

    best: int
    """Window with the highest entailment."""
    best_prediction: NLIPrediction
    contra: int
    """Window with the highest contradiction."""
    contra_prediction: NLIPrediction


def decide_windows(predictions: Sequence[NLIPrediction]) -> WindowDecision:
    """Max entailment and max contradiction over one claim's windows (first wins on ties)."""
    if not predictions:
        raise ValueError("a claim needs at least one window prediction")
    best = max(range(len(predictions)), key=lambda i: predictions[i].entailment)
    contra = max(range(len(predictions)), key=lambda i: predictions[i].contradiction)
    return WindowDecision(best, predictions[best], contra, predictions[contra])


def claim_status(
    decision: WindowDecision, threshold: float, contradiction_flag: float
) -> ClaimStatus:
    """Status of one claim for the threshold ``T(rs)``."""
    if decision.best_prediction.entailment >= threshold:
        return ClaimStatus.SUPPORTED
    if decision.contra_prediction.contradiction >= contradiction_flag:
        return ClaimStatus.CONTRADICTED
    return ClaimStatus.UNSUPPORTED


def calibrated_status(
    p_supported: float, decision: WindowDecision, threshold: float, contradiction_flag: float
) -> ClaimStatus:
    """Status of one claim under the ``calibrated`` policy."""
    if p_supported >= threshold:
        return ClaimStatus.SUPPORTED
    if decision.contra_prediction.contradiction >= contradiction_flag:
        return ClaimStatus.CONTRADICTED
    return ClaimStatus.UNSUPPORTED


def weakest_link(entailments: Sequence[float]) -> float:
    """The weakest link: the response is as supported as its least supported claim."""
    if not entailments:
        raise ValueError("weakest_link needs at least one score")
    return min(entailments)


@dataclass(frozen=True)
class RatioOutcome:
    """The ratio rule's counts and its decision."""

    contradiction_ratio: float
    neutral_ratio: float
    hallucination: bool


def ratio_rule(
    statuses: Sequence[ClaimStatus], contradiction_ratio: float, neutral_ratio: float
) -> RatioOutcome:
    """The ratio rule: hallucination iff contradicted share > ``contradiction_ratio`` or unsupported
    share > ``neutral_ratio`` (over checked claims)."""
    skip = (ClaimStatus.UNVERIFIED, ClaimStatus.NOT_CHECKWORTHY)
    checked = [s for s in statuses if s not in skip]
    if not checked:
        raise ValueError("ratio_rule needs at least one checked claim")
    c = sum(s is ClaimStatus.CONTRADICTED for s in checked) / len(checked)
    n = sum(s is ClaimStatus.UNSUPPORTED for s in checked) / len(checked)
    return RatioOutcome(c, n, c > contradiction_ratio or n > neutral_ratio)


NOTHING_TO_CHECK_REASON = "the answer states no checkable fact"
UNCHECKED_ANSWER_REASON = (
    "the question asks for a fact, and the answer states none that can be checked"
)


def nothing_to_check(
    base: Verdict, question: str | None = None, answer: str | None = None
) -> Verdict:
    """The verdict of an answer whose every claim is ``not_checkworthy``: NOTHING_TO_CHECK,
    unless ``question`` asks for a fact and ``answer`` is a bare yes or no (or is not given) —
    then it answers with a fact the rules could not read (the question's proposition did not
    parse), and the verdict is UNVERIFIED. Any other answer that states nothing to a question
    for a fact ("What do you think of the song?", "I'm not sure.") asserts nothing: it is
    NOTHING_TO_CHECK, and the decision's question check regenerates it when it leaves the
    question unanswered."""
    if asks_for_a_fact(question) and (answer is None or yes_or_no(answer) is not None):
        return base.model_copy(
            update={"label": VerdictLabel.UNVERIFIED, "reason": UNCHECKED_ANSWER_REASON}
        )
    return base.model_copy(
        update={"label": VerdictLabel.NOTHING_TO_CHECK, "reason": NOTHING_TO_CHECK_REASON}
    )


def response_verdict(
    entailments: Sequence[float | None],
    statuses: Sequence[ClaimStatus],
    unverified_reasons: Sequence[str],
    retrieval_score: float | None,
    config: HallucinationConfig,
    method: str,
    threshold: float | None = None,
    thresholds: Sequence[float] | None = None,
    question: str | None = None,
    answer: str | None = None,
) -> Verdict:
    """The response verdict over the claims.

    Args:
        entailments: per checked-or-uncheckable claim (not-check-worthy ones left out), its
            max-over-windows entailment, or ``p_supported`` under ``calibrated``
            (``None`` = not checked).
        statuses: per claim, its status.
        unverified_reasons: why the unchecked claims could not be checked (deduplicated here).
        retrieval_score: ``rs`` for T(rs) (``None`` → the strict end).
        config: policy, ratios and the threshold function.
        method: how the scores were obtained (recorded in the verdict).
        threshold: the claim threshold (default: :func:`~guardrail.thresholds.claim_cutoffs`'s
            without a verifier: T(rs), or the configured calibration's).
        thresholds: per entry of ``entailments``, its own threshold (claims routed to
            verifiers with calibrations of their own); default ``threshold`` for each. The
            verdict then shows the weakest claim's threshold.
        question: the user's message (an answer with nothing to check is UNVERIFIED when it
            asks for a fact, see :func:`nothing_to_check`).
        answer: the answer's text (a bare yes or no to such a question stays UNVERIFIED).
    """
    if threshold is None:
        threshold = claim_cutoffs(None, config, retrieval_score).threshold
    cuts = list(thresholds) if thresholds is not None else [threshold] * len(entailments)
    if len(cuts) != len(entailments):
        raise ValueError("thresholds must have one entry per entailment")
    below = [e < t for e, t in zip(entailments, cuts, strict=True) if e is not None]
    checked = [e for e in entailments if e is not None]
    reasons = list(dict.fromkeys(unverified_reasons))
    n_unchecked = len(entailments) - len(checked)
    base = Verdict(
        threshold=threshold, retrieval_score=retrieval_score, policy=config.policy, method=method
    )
    if not checked:
        if not entailments and any(s is ClaimStatus.NOT_CHECKWORTHY for s in statuses):
            return nothing_to_check(base, question, answer)
        why = "; ".join(reasons) or "no claim could be checked"
        return base.model_copy(update={"label": VerdictLabel.UNVERIFIED, "reason": why})
    score = weakest_link(checked)
    if thresholds is not None:  # the weakest claim's own threshold is the one shown
        weakest = min((e, t) for e, t in zip(entailments, cuts, strict=True) if e is not None)
        base = base.model_copy(update={"threshold": weakest[1]})
    if config.policy == "ratio":
        outcome = ratio_rule(statuses, config.contradiction_ratio, config.neutral_ratio)
        hallucination = outcome.hallucination
        detail = (
            f"contradicted {outcome.contradiction_ratio:.0%} (limit "
            f"{config.contradiction_ratio:.0%}), unsupported {outcome.neutral_ratio:.0%} "
            f"(limit {config.neutral_ratio:.0%})"
        )
    elif config.policy == "calibrated":
        n_below = sum(below)
        hallucination = n_below > 0
        bound = f"the claim threshold {threshold:.2f}"
        if thresholds is not None and any(t != threshold for t in cuts):
            bound = "their verifiers' claim thresholds"
        detail = (
            f"{n_below} of {len(checked)} checked claims below {bound} "
            f"(lowest p(supported) {score:.3f})"
        )
    else:
        hallucination = any(below)
        detail = f"weakest claim entailment {score:.3f} vs T(rs) {threshold:.3f}"
    if hallucination:
        label, reason = VerdictLabel.HALLUCINATION, detail
    elif n_unchecked:
        label = VerdictLabel.UNVERIFIED
        reason = f"{n_unchecked} of {len(entailments)} claims could not be checked: " + "; ".join(
            reasons
        )
    else:
        label, reason = VerdictLabel.VERIFIED, detail
    return base.model_copy(update={"label": label, "nli_score": score, "reason": reason})
