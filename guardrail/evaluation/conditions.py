"""The named evaluation conditions: each is an override of the ``hallucination`` config section.

Every condition adds one design choice to the one before it, so their metrics show what each
choice pays:

============== =============================================================================
plain          the whole response against the whole evidence, one pair per passage;
               no claims, no windows, the fixed threshold (0.5)
claims         + claim decomposition (weakest link: min over claims)
claims_windows + sliding windows over long passages (max over windows)
adaptive       + the adaptive threshold T(rs) of the retrieval score (Cw-CONLI)
facts          + the knowledge-base fact stage. None of the bundled evaluation sets has a
               knowledge base, so it is reported as not applicable unless the examples carry
               one (``meta["knowledge_base"]``, e.g. from the generic JSONL format)
ratio          the ratio rule (contradicted share > 0.3 or neutral share > 0.8)
               over claims and windows
============== =============================================================================

Stages that do not bear on the evidence check (coherence, correction, and fact validation
outside ``facts``) are disabled so the runs measure the hallucination path alone; so is the
response's self-consistency check, which does not change the verdict.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from guardrail.config import GuardrailConfig
from guardrail.errors import ConfigError


class Condition(BaseModel):
    """One named configuration of the hallucination path."""

    name: str
    description: str
    hallucination: dict[str, Any] = Field(default_factory=dict)
    """Overrides of ``GuardrailConfig.hallucination``."""
    needs_knowledge_base: bool = False


_FIXED = {"enabled": False, "fixed": 0.5}

CONDITIONS: dict[str, Condition] = {
    c.name: c
    for c in (
        Condition(
            name="plain",
            description="whole response vs whole evidence, fixed threshold",
            hallucination={"decompose_claims": False, "use_windows": False, "threshold": _FIXED},
        ),
        Condition(
            name="claims",
            description="+ claim decomposition (min over claims)",
            hallucination={"decompose_claims": True, "use_windows": False, "threshold": _FIXED},
        ),
        Condition(
            name="claims_windows",
            description="+ sliding windows (max over windows)",
            hallucination={"decompose_claims": True, "use_windows": True, "threshold": _FIXED},
        ),
        Condition(
            name="adaptive",
            description="+ adaptive threshold T(rs)",
            hallucination={
                "decompose_claims": True,
                "use_windows": True,
                "threshold": {"enabled": True},
            },
        ),
        Condition(
            name="facts",
            description="+ knowledge-base fact stage",
            hallucination={
                "decompose_claims": True,
                "use_windows": True,
                "threshold": {"enabled": True},
            },
            needs_knowledge_base=True,
        ),
        Condition(
            name="ratio",
            description="the ratio rule over claims and windows",
            hallucination={"decompose_claims": True, "use_windows": True, "policy": "ratio"},
        ),
    )
}

DEFAULT_CONDITIONS = ("plain", "claims", "claims_windows", "adaptive", "facts", "ratio")

#: Stages left out of every evaluation run (``facts`` turns fact validation back on).
EVAL_DISABLED_STAGES = ("coherence", "fact_validation", "correction")


def get_condition(name: str) -> Condition:
    """The condition called ``name`` (typed error listing the names otherwise)."""
    if name not in CONDITIONS:
        raise ConfigError(f"unknown condition {name!r}; choose from {', '.join(CONDITIONS)}")
    return CONDITIONS[name]


def condition_config(
    condition: Condition,
    base: dict[str, Any] | None = None,
    hallucination: dict[str, Any] | None = None,
) -> GuardrailConfig:
    """The ``GuardrailConfig`` of ``condition`` on top of ``base`` (offline profile default).

    ``hallucination`` adds further overrides (e.g. tuned thresholds) after the condition's.
    """
    from guardrail.config.loading import deep_merge

    data: dict[str, Any] = dict(base or {})
    section = deep_merge(dict(data.get("hallucination") or {}), condition.hallucination)
    section = deep_merge(section, {"logical_consistency": False})
    if hallucination:
        section = deep_merge(section, hallucination)
    data["hallucination"] = section
    disabled = set(data.get("disabled_stages") or []) | set(EVAL_DISABLED_STAGES)
    if condition.needs_knowledge_base:
        disabled.discard("fact_validation")
    data["disabled_stages"] = sorted(disabled)
    return GuardrailConfig.load(data)
