"""Hallucination detection: claims, evidence windows, pruning, aggregation, verdict and flags."""

from guardrail.hallucination.aggregation import (
    RatioOutcome,
    WindowDecision,
    claim_status,
    decide_windows,
    ratio_rule,
    response_verdict,
    weakest_link,
)
from guardrail.hallucination.claims import sentence_claims
from guardrail.hallucination.detector import Detection, detect
from guardrail.hallucination.evidence import Evidence, gather_evidence
from guardrail.hallucination.windows import Window, make_windows

__all__ = [
    "Detection",
    "Evidence",
    "RatioOutcome",
    "Window",
    "WindowDecision",
    "claim_status",
    "decide_windows",
    "detect",
    "gather_evidence",
    "make_windows",
    "ratio_rule",
    "response_verdict",
    "sentence_claims",
    "weakest_link",
]
