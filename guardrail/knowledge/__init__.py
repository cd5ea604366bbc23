"""Knowledge bases: entities with aliases and attributes (value, confidence, source).

- :class:`KnowledgeBase` — the interface (lookup by name, alias, case-insensitive, fuzzy).
- :class:`SQLiteKnowledgeBase` — the embedded default (one file, WAL, one-transaction import).
- :class:`InMemoryKnowledgeBase` — built from JSON / CSV / YAML or a dict.
- :func:`open_knowledge_base` — any of those from a path or object.
"""

from guardrail.knowledge.base import AttributeValue, Entity, KnowledgeBase
from guardrail.knowledge.loaders import (
    entities_from_data,
    load_csv,
    load_entities,
    load_json,
    load_yaml,
    open_knowledge_base,
)
from guardrail.knowledge.memory import InMemoryKnowledgeBase
from guardrail.knowledge.sqlite import SQLiteKnowledgeBase

__all__ = [
    "AttributeValue",
    "Entity",
    "InMemoryKnowledgeBase",
    "KnowledgeBase",
    "SQLiteKnowledgeBase",
    "entities_from_data",
    "load_csv",
    "load_entities",
    "load_json",
    "load_yaml",
    "open_knowledge_base",
]
