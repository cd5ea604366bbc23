"""An in-memory knowledge base: a dict of entities with a name index.

Immutable after construction, so concurrent readers need no lock. Built by the JSON, CSV and
YAML loaders; use :class:`~guardrail.knowledge.sqlite.SQLiteKnowledgeBase` for a persistent one.
"""

from __future__ import annotations

from collections.abc import Iterable

from guardrail.errors import KnowledgeBaseError
from guardrail.knowledge.base import Entity, KnowledgeBase, normalise_key


class InMemoryKnowledgeBase(KnowledgeBase):
    """Entities held in memory.

    Args:
        entities: the entities; ids must be unique.
    """

    def __init__(self, entities: Iterable[Entity] = ()) -> None:
        by_id: dict[str, Entity] = {}
        index: dict[str, list[tuple[str, str, bool]]] = {}
        for entity in entities:
            if entity.id in by_id:
                raise KnowledgeBaseError(
                    f"duplicate entity id {entity.id!r} ({by_id[entity.id].name!r} and "
                    f"{entity.name!r}); give each entity its own id"
                )
            by_id[entity.id] = entity
            for i, name in enumerate(entity.names()):
                index.setdefault(normalise_key(name), []).append((entity.id, name, i > 0))
        self._by_id = by_id
        self._index = index

    def get(self, entity_id: str) -> Entity | None:
        return self._by_id.get(entity_id)

    def entities(self) -> list[Entity]:
        return list(self._by_id.values())

    def lookup_name(self, name: str) -> list[tuple[str, str, bool]]:
        return list(self._index.get(normalise_key(name), []))

    def all_names(self) -> list[tuple[str, str, bool]]:
        return [row for rows in self._index.values() for row in rows]

    def __len__(self) -> int:
        return len(self._by_id)

    def __repr__(self) -> str:
        return f"InMemoryKnowledgeBase({len(self._by_id)} entities)"
