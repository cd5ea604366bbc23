"""The names of the built-in stages, in order (each runs as ``guardrail.<name>``)."""

STAGES = ("coherence", "claims", "fact_validation", "hallucination", "correction")
