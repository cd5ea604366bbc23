"""Configuration: defaults, named profiles, loading from YAML or a dict.

``GuardrailConfig()`` holds the built-in defaults; ``GuardrailConfig.load(None)`` (what
``Guardrail()`` uses) is the ``offline`` profile: everything runs from installed packages and
the model shipped in this package, with windows sized for it.
``GuardrailConfig.from_profile("online")`` names Hugging Face models instead, for machines that
can download them.

Every field has a description (the docstring under it) in
``GuardrailConfig.model_json_schema()``; ``guardrail config --schema`` prints the schema and the
configuration reference page is generated from it.

The package: :mod:`~guardrail.config.sections` (the sections and their root),
:mod:`~guardrail.config.profiles` (the named profiles), :mod:`~guardrail.config.loading`
(reading a file, merging mappings) and :mod:`~guardrail.config.renames` (old keys read under
their new names, with a warning).

Example::

    cfg = GuardrailConfig.load("guardrail.yaml")          # YAML file
    cfg = GuardrailConfig.load({"profile": "online", "hallucination": {"policy": "ratio"}})
"""

from guardrail.config.loading import deep_merge, read_config_file
from guardrail.config.profiles import PROFILES, SEED_MODELS
from guardrail.config.sections import (
    AdaptiveThreshold,
    CoherenceConfig,
    CoherenceWeights,
    ConfidenceLadder,
    ConfidenceWeights,
    CorrectionConfig,
    DecisionConfig,
    EvidenceSelectionConfig,
    FactConfig,
    FailurePolicy,
    GuardrailConfig,
    HallucinationConfig,
    HandlingThresholds,
    ModelsConfig,
    ScoringCutoffs,
    SpeedConfig,
    StageName,
    StrictModel,
)

__all__ = [
    "PROFILES",
    "SEED_MODELS",
    "AdaptiveThreshold",
    "CoherenceConfig",
    "CoherenceWeights",
    "ConfidenceLadder",
    "ConfidenceWeights",
    "CorrectionConfig",
    "DecisionConfig",
    "EvidenceSelectionConfig",
    "FactConfig",
    "FailurePolicy",
    "GuardrailConfig",
    "HallucinationConfig",
    "HandlingThresholds",
    "ModelsConfig",
    "ScoringCutoffs",
    "SpeedConfig",
    "StageName",
    "StrictModel",
    "deep_merge",
    "read_config_file",
]
