"""Reading a configuration: a YAML or JSON file, and laying one mapping over another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from guardrail.errors import ConfigError


def read_config_file(source: str | Path) -> dict[str, Any]:
    """The mapping in a YAML (or JSON) config file; ``ConfigError`` saying what is wrong."""
    path = Path(source)
    if not path.exists():
        raise ConfigError(f"config file not found: {path}")
    try:
        import yaml

        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except Exception as exc:
        raise ConfigError(f"could not parse config file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping")
    return data


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` laid on it, mapping by mapping (neither is changed)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out
