"""The decision: claim outcomes, problems, the confidence bands and the recommendation, in one place.

- :mod:`~guardrail.decision.problems` — what blocks showing a claim as it is, and its repairs;
- :mod:`~guardrail.decision.outcomes` — what the delivered text does with each claim;
- :mod:`~guardrail.decision.plan` — the one planner: problems, their fixes and the delivery plan;
- :mod:`~guardrail.decision.bands` — the confidence bands, the decision tree, guidance and the review reason;
- :mod:`~guardrail.decision.action` — the recommendation for the whole answer.
"""

from guardrail.decision.action import Checked, claim_guidance, decide
from guardrail.decision.bands import (
    DEFAULT_CUTOFFS,
    band_of,
    human_review_reason,
    recommend,
    regeneration_guidance,
)
from guardrail.decision.outcomes import (
    DeliveryPlan,
    Note,
    Removal,
    claim_outcome,
    claim_outcomes,
    plan_delivery,
    unmarked_unsupported,
)
from guardrail.decision.plan import AnswerPlan, plan_answer
from guardrail.decision.problems import (
    BLOCKING_FLAGS,
    claim_problem_confidence,
    consistent_verdict,
    find_problems,
    mark_fixes,
    remove_below,
)

__all__ = [
    "BLOCKING_FLAGS",
    "DEFAULT_CUTOFFS",
    "AnswerPlan",
    "Checked",
    "DeliveryPlan",
    "Note",
    "Removal",
    "band_of",
    "claim_guidance",
    "claim_outcome",
    "claim_outcomes",
    "claim_problem_confidence",
    "consistent_verdict",
    "decide",
    "find_problems",
    "human_review_reason",
    "mark_fixes",
    "plan_answer",
    "plan_delivery",
    "recommend",
    "regeneration_guidance",
    "remove_below",
    "unmarked_unsupported",
]
