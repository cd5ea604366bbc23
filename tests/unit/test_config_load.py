"""Loading a configuration: the evidence-window knobs are checked together (a key given a value
of its own where another key cancels it is a ``ConfigError`` naming both)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from guardrail.config import GuardrailConfig
from guardrail.errors import ConfigError

CONTRADICTIONS = [
    (
        {"top_m_windows": 0, "speed": {"max_windows_per_claim": 2}},
        ("hallucination.speed.max_windows_per_claim", "hallucination.top_m_windows"),
    ),
    (
        {"speed": {"early_exit_entailment": None, "early_exit_contradiction": 0.9}},
        (
            "hallucination.speed.early_exit_contradiction",
            "hallucination.speed.early_exit_entailment",
        ),
    ),
    (
        {"selection": {"sentences": 3}},
        ("hallucination.selection.sentences", "hallucination.selection.enabled"),
    ),
]


@pytest.mark.parametrize(("section", "keys"), CONTRADICTIONS)
def test_a_contradicting_pair_of_window_keys_names_both(
    section: dict[str, Any], keys: tuple[str, str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        GuardrailConfig.load({"hallucination": section})
    for key in keys:
        assert key in str(caught.value)


@pytest.mark.parametrize(
    "section",
    [
        {"top_m_windows": 0},  # the cap left at its default: every window, as before
        {"top_m_windows": 0, "speed": {"max_windows_per_claim": 0}},
        {"speed": {"early_exit_entailment": None}},
        {"speed": {"early_exit_entailment": None, "early_exit_contradiction": None}},
        {
            "speed": {
                "lexical_candidates": 0,
                "embed_candidates": True,  # the complete check
                "max_windows_per_claim": 0,
                "early_exit_entailment": None,
            }
        },
        {"selection": {"enabled": True, "sentences": 3, "token_budget": 64}},
    ],
)
def test_consistent_window_keys_load_and_a_dump_loads_again(section: dict[str, Any]) -> None:
    config = GuardrailConfig.load({"hallucination": section})
    again = GuardrailConfig.load(yaml.safe_load(yaml.safe_dump(config.model_dump(mode="json"))))
    assert again == config


def test_the_profiles_load_unchanged() -> None:
    for config in (GuardrailConfig.load(None), GuardrailConfig.from_profile("online")):
        assert config.hallucination.top_m_windows == 6
        assert config.hallucination.speed.max_windows_per_claim == 3
