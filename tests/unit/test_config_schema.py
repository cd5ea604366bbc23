"""The configuration documents itself: every field of every config model has a description in
the JSON schema (the docstring under the field), which ``guardrail config --schema`` prints and
the configuration reference page is generated from."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from guardrail.config import GuardrailConfig


def schema_fields(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(model, field, field schema)`` for every property of the root and of every ``$defs``
    model."""
    models = {"GuardrailConfig": schema, **schema.get("$defs", {})}
    for model, body in models.items():
        for field, prop in body.get("properties", {}).items():
            yield model, field, prop


def leaf_keys(schema: dict[str, Any], node: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted keys of the fields that are not sections."""
    keys = []
    for field, prop in node.get("properties", {}).items():
        ref = prop.get("$ref")
        target = schema["$defs"][ref.rsplit("/", 1)[-1]] if ref else None
        if target is not None and "properties" in target:
            keys += leaf_keys(schema, target, f"{prefix}{field}.")
        else:
            keys.append(prefix + field)
    return keys


SCHEMA = GuardrailConfig.model_json_schema()


def test_every_config_field_has_a_description() -> None:
    missing = [f"{m}.{f}" for m, f, prop in schema_fields(SCHEMA) if not prop.get("description")]
    assert not missing, f"config fields without a description (a docstring under it): {missing}"
    models = {"GuardrailConfig": SCHEMA, **SCHEMA["$defs"]}
    undocumented = [name for name, body in models.items() if not body.get("description")]
    assert not undocumented, f"config models without a docstring: {undocumented}"


def test_the_schema_covers_every_leaf_key() -> None:
    keys = leaf_keys(SCHEMA, SCHEMA)
    assert len(keys) >= 100
    assert {"hallucination.speed.early_exit_entailment", "confidence.blocking"} <= set(keys)


@pytest.mark.parametrize("word", ["seed 0", "session 1", "seed's"])
def test_descriptions_name_the_thing_not_its_history(word: str) -> None:
    found = [
        f"{m}.{f}"
        for m, f, prop in schema_fields(SCHEMA)
        if re.search(word, prop.get("description", ""), re.I)
    ]
    assert not found, f"{word!r} in the description of {found}"
