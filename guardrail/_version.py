"""The release of guardrail and the name it is installed by (read by ``pyproject.toml``)."""

__version__ = "0.2.0"
DISTRIBUTION = "answer-guardrail"
"""The package index name: ``pip install answer-guardrail`` (the import name is ``guardrail``)."""
