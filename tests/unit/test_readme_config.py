"""The configuration shown in the README is a valid configuration (typos would be rejected)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from guardrail.config import GuardrailConfig

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_config_examples_load() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    configs = [b for b in blocks if b.startswith("profile:")]
    assert configs, "the README shows a guardrail config"
    for block in configs:
        config = GuardrailConfig.load(yaml.safe_load(block))
        assert config.hallucination.speed.sentence_first is True
