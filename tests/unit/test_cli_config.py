"""``guardrail config``: the schema and the defaults, printed by the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from guardrail.cli import main
from guardrail.config import GuardrailConfig


def test_schema_is_the_config_models_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema == GuardrailConfig.model_json_schema()
    blocking = schema["$defs"]["ConfidenceLadder"]["properties"]["blocking"]
    assert blocking["default"] == 0.8 and "blocks delivering" in blocking["description"]


def test_defaults_are_the_profile_as_yaml_and_load_back(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config"]) == 0
    data = yaml.safe_load(capsys.readouterr().out)
    assert GuardrailConfig.load(data) == GuardrailConfig.load(None)
    assert data["hallucination"]["window_tokens"] == 128
    assert main(["config", "--defaults", "--profile", "online"]) == 0
    online = yaml.safe_load(capsys.readouterr().out)
    assert online["hallucination"]["window_tokens"] == 400
    assert GuardrailConfig.load(online) == GuardrailConfig.from_profile("online")


def test_a_file_is_shown_as_loaded_and_a_bad_one_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "guardrail.yaml"
    path.write_text("decision:\n  granularity: answer\n")
    assert main(["config", "--config", str(path)]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["decision"]["granularity"] == "answer"
    path.write_text("decision:\n  granularty: answer\n")
    assert main(["config", "--config", str(path)]) == 2
    assert "granularty" in capsys.readouterr().err
    assert main(["config", "--schema", "--defaults"]) == 2
