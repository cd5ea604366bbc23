"""The names of the built-in stages and steps, in order."""

STAGES = ("coherence", "claims", "fact_validation", "hallucination", "correction")
"""The built-in stages ``disabled_stages`` takes (disabling ``correction`` disables its repair
stage too)."""
RECORDS = ("coherence", "claims", "fact_validation", "hallucination", "repair", "correction")
"""The stage records of a report (``report.stages``), in order; each runs as ``guardrail.<name>``."""
STEPS = [
    *(f"guardrail.{name}" for name in RECORDS[:5]),
    "guardrail.plan",
    "guardrail.correction",
    "guardrail.confidence",
    "guardrail.recommendation",
]
"""The child runs of one check, in order: the stages, with the decision's plan before the
correction stage that applies it, then the confidence and the recommendation."""
