"""The configuration shown in the docs is a valid configuration (typos would be rejected).

The full example config lives on the configuration page of the documentation site
(``docs/reference/configuration.md``); the README, now short, may show one too. Every YAML
block starting with ``profile:`` in either is loaded (the ``service:`` section of a service
config file is split off first, as ``guardrail serve --config`` does).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from guardrail.config import GuardrailConfig
from guardrail.service.settings import ServiceSettings

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CONFIG_PAGE = ROOT / "docs" / "reference" / "configuration.md"


def config_blocks(path: Path) -> list[str]:
    blocks = re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    return [b for b in blocks if b.startswith("profile:")]


def test_readme_config_examples_load() -> None:
    configs = config_blocks(CONFIG_PAGE)
    assert configs, "the configuration page shows a guardrail config"
    for block in configs:
        config = GuardrailConfig.load(yaml.safe_load(block))
        assert config.hallucination.speed.sentence_first is True


def test_every_config_block_in_the_docs_loads() -> None:
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    blocks = [b for page in pages for b in config_blocks(page)]
    assert len(blocks) >= 2  # the configuration page and the service's config file
    for block in blocks:
        data = yaml.safe_load(block)
        service = data.pop("service", None)
        GuardrailConfig.load(data)
        if service is not None:
            ServiceSettings.model_validate(service)
