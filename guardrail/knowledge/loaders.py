"""Read knowledge bases from JSON, YAML or CSV, and open any supported source.

JSON / YAML::

    {"entities": [{"id": "E42", "name": "John Smith", "aliases": ["John"], "type": "person",
                   "attributes": {"email": {"value": "john.smith@company.com",
                                            "confidence": 1.0, "source": "HR"},
                                  "join_date": 2020}}]}          # bare value → confidence 1.0

CSV, one row per attribute (header required; ``entity_id``, ``type``, ``aliases`` (``;``-
separated), ``confidence`` and ``source`` optional)::

    entity_id,entity,type,aliases,attribute,value,confidence,source
    E42,John Smith,person,John;J. Smith,email,john.smith@company.com,1.0,HR

Every row is validated before anything is returned: a bad row raises a
:class:`~guardrail.errors.KnowledgeBaseError` naming the file and line.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guardrail.errors import KnowledgeBaseError
from guardrail.knowledge.base import AttributeValue, Entity, KnowledgeBase, attribute_key
from guardrail.knowledge.memory import InMemoryKnowledgeBase
from guardrail.knowledge.sqlite import SQLITE_MAGIC, SQLiteKnowledgeBase

SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def entities_from_data(data: Any, origin: str = "data") -> list[Entity]:
    """Validate the JSON/YAML structure (``{"entities": [...]}`` or a bare list) into entities."""
    items = data.get("entities") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise KnowledgeBaseError(f"{origin}: expected {{'entities': [...]}} or a list of entities")
    out: list[Entity] = []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise KnowledgeBaseError(f"{origin}: entity #{n} must be an object")
        item = dict(item)
        if "id" not in item and isinstance(item.get("name"), str):
            item["id"] = _slug(item["name"])
        try:
            out.append(Entity.model_validate(item))
        except ValidationError as exc:
            name = item.get("name", "?")
            raise KnowledgeBaseError(f"{origin}: entity #{n} ({name!r}) is invalid: {exc}") from exc
    return out


def load_json(path: str | Path) -> list[Entity]:
    """Entities from a JSON file."""
    file = _existing(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise KnowledgeBaseError(f"{file}: not valid JSON ({exc})") from exc
    return entities_from_data(data, str(file))


def load_yaml(path: str | Path) -> list[Entity]:
    """Entities from a YAML file (same structure as JSON)."""
    import yaml

    file = _existing(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise KnowledgeBaseError(f"{file}: not valid YAML ({exc})") from exc
    return entities_from_data(data, str(file))


def load_csv(path: str | Path) -> list[Entity]:
    """Entities from a CSV file with one row per (entity, attribute, value, confidence, source)."""
    file = _existing(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise KnowledgeBaseError(f"{file}: not UTF-8 text ({exc})") from exc
    reader = csv.DictReader(text.splitlines())
    header = {h.strip().lower() for h in reader.fieldnames or []}
    missing = {"entity", "attribute", "value"} - header
    if missing:
        raise KnowledgeBaseError(
            f"{file}: the CSV header needs columns entity, attribute, value "
            f"(missing: {', '.join(sorted(missing))})"
        )
    built: dict[str, dict[str, Any]] = {}
    for line, raw in enumerate(reader, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in raw.items()}
        name, attr = row.get("entity", ""), row.get("attribute", "")
        if not name or not attr:
            raise KnowledgeBaseError(f"{file}:{line}: 'entity' and 'attribute' must not be empty")
        entity_id = row.get("entity_id") or _slug(name)
        try:
            confidence = float(row["confidence"]) if row.get("confidence") else 1.0
            value = AttributeValue(
                value=row.get("value", ""), confidence=confidence, source=row.get("source") or None
            )
        except (ValueError, ValidationError) as exc:
            raise KnowledgeBaseError(f"{file}:{line}: invalid attribute row: {exc}") from exc
        entry = built.setdefault(
            entity_id, {"id": entity_id, "name": name, "aliases": [], "attributes": {}}
        )
        if entry["name"] != name:
            raise KnowledgeBaseError(
                f"{file}:{line}: entity id {entity_id!r} is named {entry['name']!r} earlier "
                f"and {name!r} here"
            )
        if row.get("type"):
            entry["type"] = row["type"]
        for alias in (row.get("aliases") or "").split(";"):
            if alias.strip() and alias.strip() not in entry["aliases"]:
                entry["aliases"].append(alias.strip())
        entry["attributes"][attribute_key(attr)] = value
    return entities_from_data(list(built.values()), str(file))


def load_entities(path: str | Path) -> list[Entity]:
    """Entities from a JSON, YAML or CSV file (by extension, else by content)."""
    file = _existing(path)
    kind = _detect(file)
    if kind == "sqlite":
        return SQLiteKnowledgeBase(file).entities()
    loader = {"json": load_json, "yaml": load_yaml, "csv": load_csv}[kind]
    return loader(file)


def open_knowledge_base(source: Any) -> KnowledgeBase:
    """A knowledge base from a path (JSON/CSV/YAML/SQLite), a dict / list, or a KB object.

    An already-built :class:`KnowledgeBase` passes through unchanged. Files are told apart by
    extension, else by content (the SQLite magic header, a leading ``{`` / ``[`` …).
    """
    if isinstance(source, KnowledgeBase):
        return source
    if isinstance(source, dict | list):
        return InMemoryKnowledgeBase(entities_from_data(source))
    if isinstance(source, str | Path):
        file = _existing(source)
        if _detect(file) == "sqlite":
            return SQLiteKnowledgeBase(file)
        return InMemoryKnowledgeBase(load_entities(file))
    raise KnowledgeBaseError(
        f"cannot open a knowledge base from {type(source).__name__}; pass a file path, a dict "
        f"with 'entities', or a KnowledgeBase"
    )


def _detect(file: Path) -> str:
    suffix = file.suffix.lower()
    if suffix in SQLITE_SUFFIXES:
        return "sqlite"
    if suffix == ".json":
        return "json"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".csv":
        return "csv"
    with file.open("rb") as fh:
        head = fh.read(512)
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if text.startswith(("{", "[")):
        return "json"
    first = text.splitlines()[0].lower() if text else ""
    if "," in first and "entity" in first and "attribute" in first:
        return "csv"
    return "yaml"


def _existing(path: str | Path) -> Path:
    file = Path(path)
    if not file.is_file():
        raise KnowledgeBaseError(f"knowledge base file not found: {file}")
    return file


def _slug(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", name.casefold()).strip("-") or "entity"
