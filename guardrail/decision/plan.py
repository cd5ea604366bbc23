"""The plan for one answer: its problems, found once, and what the delivered text does.

:func:`plan_answer` is the one planner: the pipeline's plan step calls it once per check,
whatever stages ran (correction on or off, claim or answer granularity), after the checks and
the repair stage and before the correction stage, and hands the plan on in ``state.plan``.
It finds the problems (:func:`~.problems.find_problems`, with the cut-offs of the calibration
the hallucination stage recorded), marks those the repairs fix (:func:`~.problems.mark_fixes`)
and plans the delivery (:func:`~.outcomes.plan_delivery`). The correction stage applies the
plan; the recommendation reads the same problems, marked with the corrections actually made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from guardrail.config import GuardrailConfig
from guardrail.decision.action import asked_something
from guardrail.decision.outcomes import DeliveryPlan, plan_delivery
from guardrail.decision.problems import find_problems, mark_fixes, remove_below
from guardrail.report import (
    CalibrationUsed,
    Claim,
    CoherenceResult,
    Correction,
    FactualValidationResult,
    HallucinationFlag,
    Problem,
    Verdict,
)


@dataclass(frozen=True)
class AnswerPlan:
    """What blocks showing claims as they are, and what to remove and annotate."""

    problems: list[Problem]
    """Each with ``fixed_by`` set where the repairs already made fix it."""
    delivery: DeliveryPlan
    recheck_question: bool = False
    """Whether the correction stage runs the question check on the text its removals leave
    (``state.delivered_qud``): only at claim granularity, when the question check applied and
    the user asked something rather than made a remark — the only case the decision reads it."""


def plan_answer(
    claims: Sequence[Claim],
    flags: Sequence[HallucinationFlag],
    factual: FactualValidationResult | None,
    verdict: Verdict | None,
    repairs: Sequence[Correction],
    calibration: CalibrationUsed | None,
    coherence: CoherenceResult | None,
    config: GuardrailConfig,
) -> AnswerPlan:
    """The answer's problems and delivery plan (see the module docstring).

    Args:
        repairs: the repair stage's corrections (knowledge-base and re-checked evidence
            values, ``state.repairs``; empty when it did not run): a problem they fix is not
            removed.
        calibration: ``state.calibration`` (its ``remove_below`` decides which unsupported
            claims are confident problems).
        coherence: ``state.coherence`` (whether the user asked something, for
            ``recheck_question``).
    """
    decision = config.decision
    per_claim = decision.granularity == "claim"
    cutoffs = remove_below(config, calibration, claims) if per_claim else None
    problems = find_problems(claims, flags, factual, verdict, decision, cutoffs, config.confidence)
    problems = mark_fixes(problems, repairs)
    applicable = coherence is not None and bool(
        coherence.qud_relevance.details.get("applicable", False)
    )
    recheck = per_claim and applicable and asked_something(coherence) is not False
    return AnswerPlan(problems, plan_delivery(claims, problems, remove=per_claim), recheck)
