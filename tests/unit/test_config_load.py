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
    (
        {"window_tokens": 50},  # the offline profile's stride is 64
        ("hallucination.window_stride", "hallucination.window_tokens"),
    ),
    (
        {"use_windows": False, "window_tokens": 300},
        ("hallucination.window_tokens", "hallucination.use_windows"),
    ),
]


def test_use_windows_off_keeps_the_profiles_window_sizes() -> None:
    config = GuardrailConfig.load({"hallucination": {"use_windows": False}})
    assert config.hallucination.window_tokens == 128
    assert GuardrailConfig.load(config.model_dump(mode="json")) == config


@pytest.mark.parametrize("key", ["coherence_issue_severity", "incoherent_below"])
def test_a_share_promised_between_0_and_1_is_bounded(key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        GuardrailConfig.load({"scoring": {key: 1.5}})


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
    import guardrail.config.renames as module

    table = {
        "decision.old_share": "decision.min_kept_share",
        "hallucination.old_cap": "hallucination.max_claims",
        "old_flag": "decision.recheck_min_entailment",
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
    with pytest.warns(DeprecationWarning, match="'old_flag'.*'decision.recheck_min_entailment'"):
        online = GuardrailConfig.from_profile("online", old_flag=0.7)
    assert online.decision.recheck_min_entailment == 0.7
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


# --- the confidence ladder --------------------------------------------------------------------

#: Each old cut-off, its value before the ladder, and the rung that holds it now.
OLD_CUTOFFS = {
    "hallucination.contradiction_flag": (0.5, "noted"),
    "correction.annotation_min_confidence": (0.5, "noted"),
    "scoring.uncertain_flag_low": (0.5, "noted"),
    "scoring.guidance_flag_confidence": (0.7, "named"),
    "decision.strong_flag": (0.8, "blocking"),
    "scoring.review_flag_confidence": (0.8, "blocking"),
    "scoring.uncertain_flag_high": (0.8, "blocking"),
    "facts.history_contradiction": (0.8, "blocking"),
    "scoring.flag_confidence": (0.85, "penalised"),
    "scoring.kb_contradiction_confidence": (0.9, "certain"),
    "correction.removal_min_confidence": (0.9, "certain"),
}


def nested(key: str, value: Any) -> dict[str, Any]:
    head, _, rest = key.partition(".")
    return {head: nested(rest, value) if rest else value}


def test_the_ladder_defaults_are_the_old_cut_offs() -> None:
    ladder = GuardrailConfig.load(None).confidence
    for _key, (value, rung) in OLD_CUTOFFS.items():
        assert getattr(ladder, rung) == value


@pytest.mark.parametrize("key", sorted(OLD_CUTOFFS))
def test_an_old_cut_off_sets_its_rung_with_a_warning(key: str) -> None:
    value, rung = OLD_CUTOFFS[key]
    value += 0.01  # still between the rungs around it
    with pytest.warns(DeprecationWarning, match=f"'{key}'.*'confidence.{rung}'"):
        config = GuardrailConfig.load(nested(key, value))
    assert getattr(config.confidence, rung) == value


def test_the_ladder_is_one_top_level_section_and_round_trips() -> None:
    config = GuardrailConfig.load({"confidence": {"noted": 0.4, "blocking": 0.75}})
    for section in (config.scoring, config.hallucination, config.correction, config.decision):
        assert "confidence" not in type(section).model_fields
    assert "confidence" not in config.model_dump()["decision"]
    again = GuardrailConfig.load(config.model_dump(mode="json"))
    assert again == config and again.confidence.blocking == 0.75


def test_disagreeing_old_cut_offs_of_one_rung_and_a_disordered_ladder_are_errors() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(ConfigError) as caught:
        GuardrailConfig.load(
            {"decision": {"strong_flag": 0.8}, "facts": {"history_contradiction": 0.7}}
        )
    assert "decision.strong_flag" in str(caught.value)
    assert "facts.history_contradiction" in str(caught.value)
    with pytest.raises(ConfigError, match=r"confidence\.named .*confidence\.blocking"):
        GuardrailConfig.load({"confidence": {"named": 0.85}})
