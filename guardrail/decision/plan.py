"""The plan for one answer: its problems, found once, and what the delivered text does.

:func:`plan_answer` is the one place problems are found (:func:`~.problems.find_problems`, with
the cut-offs of the calibration the hallucination stage recorded) and the delivery is planned
(:func:`~.outcomes.plan_delivery`). The correction stage applies the plan; the recommendation
reads the same problems, marked with the corrections actually made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from guardrail.config import GuardrailConfig
from guardrail.decision.outcomes import DeliveryPlan, plan_delivery
from guardrail.decision.problems import find_problems, mark_fixes, remove_below
from guardrail.report import (
    CalibrationUsed,
    Claim,
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


def plan_answer(
    claims: Sequence[Claim],
    flags: Sequence[HallucinationFlag],
    factual: FactualValidationResult | None,
    verdict: Verdict | None,
    repairs: Sequence[Correction],
    calibration: CalibrationUsed | None,
    config: GuardrailConfig,
) -> AnswerPlan:
    """The answer's problems and delivery plan (see the module docstring).

    Args:
        repairs: the corrections made so far (knowledge-base and re-checked evidence values):
            a problem they fix is not removed.
        calibration: ``state.calibration`` (its ``remove_below`` decides which unsupported
            claims are confident problems).
    """
    decision = config.decision
    per_claim = decision.granularity == "claim"
    cutoffs = remove_below(config, calibration, claims) if per_claim else None
    problems = find_problems(claims, flags, factual, verdict, decision, cutoffs, config.confidence)
    problems = mark_fixes(problems, repairs)
    return AnswerPlan(problems, plan_delivery(claims, problems, remove=per_claim))
