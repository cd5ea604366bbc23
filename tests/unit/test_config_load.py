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


# --- old keys ---------------------------------------------------------------------------------


@pytest.fixture
def renames(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    import guardrail.config_renames as module

    table = {
        "decision.old_share": "decision.min_kept_share",
        "hallucination.old_cap": "hallucination.max_claims",
        "old_flag": "decision.strong_flag",
    }
    monkeypatch.setattr(module, "RENAMED", table)
    return table


def test_an_old_key_is_read_under_its_new_name_with_a_warning(renames: dict[str, str]) -> None:
    data = {"decision": {"old_share": 0.4}, "hallucination": {"old_cap": 8}}
    with pytest.warns(DeprecationWarning, match="'decision.old_share'.*'decision.min_kept_share'"):
        config = GuardrailConfig.load(data)
    assert config.decision.min_kept_share == 0.4 and config.hallucination.max_claims == 8
    assert data == {"decision": {"old_share": 0.4}, "hallucination": {"old_cap": 8}}  # untouched
    assert config.hallucination.window_tokens == 128  # the profile still applies
    with pytest.warns(DeprecationWarning, match="'old_flag'.*'decision.strong_flag'"):
        assert GuardrailConfig.from_profile("online", old_flag=0.7).decision.strong_flag == 0.7
    with pytest.warns(DeprecationWarning, match="old_cap"):
        assert (
            GuardrailConfig.model_validate(
                {"hallucination": {"old_cap": 9}}
            ).hallucination.max_claims
            == 9
        )


def test_an_old_key_disagreeing_with_its_new_key_names_both(renames: dict[str, str]) -> None:
    same = {"decision": {"old_share": 0.4, "min_kept_share": 0.4}}
    with pytest.warns(DeprecationWarning):
        assert GuardrailConfig.load(same).decision.min_kept_share == 0.4
    with pytest.raises(ConfigError, match=r"decision\.old_share.*decision\.min_kept_share"):
        GuardrailConfig.load({"decision": {"old_share": 0.4, "min_kept_share": 0.3}})


def test_no_old_key_no_warning() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GuardrailConfig.load({"decision": {"min_kept_share": 0.4}})
