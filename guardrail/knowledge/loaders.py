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
:class:`~guardrail.errors.KnowledgeBaseError` naming the file and line (CSV) or entity (JSON /
YAML). Nothing is dropped silently: an unknown key or column (``"atributes"``: did you mean
``attributes``?), an attribute with an unknown key (``"confidance"``) and an entity without
attributes are errors, since an entity whose attributes were lost checks nothing.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guardrail.errors import KnowledgeBaseError
from guardrail.inputs import describe_errors, unknown_key_message
from guardrail.knowledge.base import (
    AttributeValue,
    Entity,
    KnowledgeBase,
    attribute_key,
    require_attributes,
)
from guardrail.knowledge.memory import InMemoryKnowledgeBase
from guardrail.knowledge.sqlite import SQLITE_MAGIC, SQLiteKnowledgeBase

SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")

#: The keys of an entity object and of an attribute object (JSON / YAML).
ENTITY_KEYS = frozenset(Entity.model_fields)
ATTRIBUTE_KEYS = frozenset(AttributeValue.model_fields)

#: The CSV columns (``entity``, ``attribute`` and ``value`` required).
CSV_COLUMNS = frozenset(
    {"entity_id", "entity", "type", "aliases", "attribute", "value", "confidence", "source"}
)


def entities_from_data(data: Any, origin: str = "data") -> list[Entity]:
    """Validate the JSON/YAML structure (``{"entities": [...]}`` or a bare list) into entities.

    Raises:
        KnowledgeBaseError: naming ``origin``, the entity and the problem: not an object, an
            unknown key (with the nearest valid one), an invalid value, or no attributes.
    """
    if isinstance(data, dict):
        if set(data) - {"entities"}:
            extra = next(k for k in data if k != "entities")
            raise KnowledgeBaseError(
                f"{origin}: {unknown_key_message(extra, ['entities'], what='top-level key')}; "
                f"a knowledge base is {{'entities': [...]}}"
            )
        items = data.get("entities")
    else:
        items = data
    if not isinstance(items, list):
        raise KnowledgeBaseError(f"{origin}: expected {{'entities': [...]}} or a list of entities")
    out: list[Entity] = []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise KnowledgeBaseError(f"{origin}: entity #{n} must be an object")
        where = f"{origin}: entity #{n} ({item.get('name', '?')!r})"
        _check_entity_keys(item, where)
        item = dict(item)
        if "id" not in item and isinstance(item.get("name"), str):
            item["id"] = _slug(item["name"])
        try:
            entity = Entity.model_validate(item)
        except ValidationError as exc:
            raise KnowledgeBaseError(f"{where} is invalid: {describe_errors(exc)}") from exc
        require_attributes(entity, where)
        out.append(entity)
    return out


def _check_entity_keys(item: dict[str, Any], where: str) -> None:
    """``KnowledgeBaseError`` for an unknown key of the entity or of one of its attributes."""
    for key in item:
        if key not in ENTITY_KEYS:
            raise KnowledgeBaseError(f"{where}: {unknown_key_message(key, ENTITY_KEYS, 'key')}")
    attributes = item.get("attributes")
    if isinstance(attributes, dict):
        for name, value in attributes.items():
            if isinstance(value, dict):
                for key in value:
                    if key not in ATTRIBUTE_KEYS:
                        message = unknown_key_message(key, ATTRIBUTE_KEYS, "key")
                        raise KnowledgeBaseError(f"{where}, attribute {name!r}: {message}")


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
    for column in reader.fieldnames or []:
        if column.strip() and column.strip().lower() not in CSV_COLUMNS:
            message = unknown_key_message(column.strip(), CSV_COLUMNS, what="CSV column")
            raise KnowledgeBaseError(f"{file}:1: {message}")
    missing = {"entity", "attribute", "value"} - header
    if missing:
        raise KnowledgeBaseError(
            f"{file}: the CSV header needs columns entity, attribute, value "
            f"(missing: {', '.join(sorted(missing))})"
        )
    built: dict[str, dict[str, Any]] = {}
    for line, raw in enumerate(reader, start=2):
        if None in raw:  # csv.DictReader's key for values beyond the header's columns
            raise KnowledgeBaseError(
                f"{file}:{line}: the row has more values than the header has columns "
                f"(extra: {raw[None]!r}); quote values that contain commas"
            )
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in raw.items()}
        if row.get(""):  # a value under a header cell left blank (``entity,attribute,value,``)
            raise KnowledgeBaseError(
                f"{file}:{line}: the value {row['']!r} is in a column with no name; name the "
                f"column in the header ({', '.join(sorted(CSV_COLUMNS))}) or remove the value"
            )
        name, attr = row.get("entity", ""), row.get("attribute", "")
        if not name or not attr:
            raise KnowledgeBaseError(f"{file}:{line}: 'entity' and 'attribute' must not be empty")
        if not row.get("value"):
            raise KnowledgeBaseError(
                f"{file}:{line}: entity {name!r}, attribute {attr!r} has no value; give one or "
                f"leave the row out"
            )
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
        source = SQLiteKnowledgeBase(file)
        source.check_columns()
        return source.entities()
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
