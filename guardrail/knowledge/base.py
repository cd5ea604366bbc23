"""The knowledge-base contract: entities with aliases and attributes, looked up by name.

A :class:`KnowledgeBase` answers three questions for the fact-validation stage: which entity a
name means (:meth:`KnowledgeBase.find_entity`: exact name, alias, case-insensitive, then fuzzy),
what an attribute of it is (:meth:`KnowledgeBase.attribute`), and which facts to hand the
hallucination stage as extra evidence (:meth:`KnowledgeBase.render_facts`).

Backends implement four primitives (:meth:`get`, :meth:`entities`, :meth:`lookup_name`,
:meth:`all_names`); matching logic lives here, once.

Example::

    kb = InMemoryKnowledgeBase([Entity(id="E42", name="John Smith", aliases=["John"],
                                       attributes={"email": AttributeValue(value="j@x.com")})])
    kb.find_entity("john").name                  # 'John Smith' (alias, case-insensitive)
    kb.render_facts(["John Smith"])              # ["John Smith's email is j@x.com."]
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from pydantic import Field, field_validator

from guardrail.errors import KnowledgeBaseError
from guardrail.inputs import StrictModel

#: Minimum rapidfuzz score (0–100) for a fuzzy name match.
FUZZY_NAME_SCORE = 88.0


def normalise_key(text: str) -> str:
    """Case-folded, whitespace-collapsed form used for name and attribute lookups."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def attribute_key(name: str) -> str:
    """Canonical attribute key: ``"Join Date"`` / ``"join-date"`` → ``"join_date"``."""
    return re.sub(r"[\s\-]+", "_", name.strip()).casefold()


class AttributeValue(StrictModel):
    """One attribute value with how sure the record is and where it came from (an unknown key,
    such as ``"confidance"``, is an error naming the nearest valid one)."""

    value: str
    """The value as text (numbers and dates are stored as written)."""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    """How reliable the record is (1.0 = verified)."""
    source: str | None = None
    """Where the value comes from (``"HR"``, a URL …)."""

    @field_validator("value", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        if isinstance(value, bool) or value is None or isinstance(value, dict | list):
            raise ValueError(f"an attribute value must be a string or number, not {value!r}")
        return str(value) if isinstance(value, int | float) else value


class Entity(StrictModel):
    """A knowledge-base entity (an unknown key, such as ``"atributes"``, is an error naming the
    nearest valid one). The loaders and the SQLite import also require at least one attribute:
    an entity with none gives the fact check nothing to compare (see :func:`require_attributes`).
    """

    id: str
    """Stable identifier (``"E42"``)."""
    name: str
    """Canonical name (``"John Smith"``); used as the claim subject."""
    type: str | None = None
    """``person``, ``organisation``, ``place`` …"""
    aliases: list[str] = Field(default_factory=list)
    """Other names (``"John"``, ``"J. Smith"``)."""
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)
    """Attribute name → value; names are canonical keys (``join_date``)."""

    @field_validator("id", "name")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    @field_validator("attributes", mode="before")
    @classmethod
    def _coerce_attributes(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(item, dict | AttributeValue):
                item = {"value": item}  # a bare value: confidence 1.0
            out[attribute_key(str(key))] = item
        return out

    @property
    def gender(self) -> str | None:
        """``male`` / ``female`` when the record says so (attribute ``gender``)."""
        attr = self.attributes.get("gender")
        return attr.value.casefold() if attr is not None else None

    def names(self) -> list[str]:
        """The canonical name followed by the aliases."""
        return [self.name, *self.aliases]


def require_attributes(entity: Entity, where: str) -> None:
    """``KnowledgeBaseError`` when ``entity`` has no attributes (``where`` names the file and
    the entity: ``kb.json: entity #2 ('John Smith')``)."""
    if not entity.attributes:
        raise KnowledgeBaseError(
            f"{where} has no attributes: give it at least one under "
            f"'attributes' (an entity without attributes gives the fact check nothing to compare)"
        )


class KnowledgeBase(ABC):
    """Entities with aliases and attributes. Implementations must be safe for concurrent reads."""

    @abstractmethod
    def get(self, entity_id: str) -> Entity | None:
        """The entity with this id, or ``None``."""

    @abstractmethod
    def entities(self) -> list[Entity]:
        """All entities."""

    @abstractmethod
    def lookup_name(self, name: str) -> list[tuple[str, str, bool]]:
        """Entities whose name or alias equals ``name`` case-insensitively.

        Returns ``(entity_id, stored_name, is_alias)`` rows.
        """

    @abstractmethod
    def all_names(self) -> list[tuple[str, str, bool]]:
        """Every ``(entity_id, name_or_alias, is_alias)``, for fuzzy matching."""

    def find_entity(self, name: str, fuzzy: bool = True) -> Entity | None:
        """Resolve a mention: exact name, exact alias, case-insensitive, then fuzzy.

        An ambiguous alias (two entities share it) resolves only when one candidate is the
        canonical name; otherwise ``None``.
        """
        mention = re.sub(r"\s+", " ", name).strip()
        mention = re.sub(r"(?:'s|’s|')$", "", mention).strip()
        if not mention:
            return None
        rows = self.lookup_name(mention)
        if rows:
            ranks: list[Callable[[tuple[str, str, bool]], bool]] = [
                lambda r: r[1] == mention and not r[2],  # exact canonical name
                lambda r: r[1] == mention,  # exact alias
                lambda r: not r[2],  # case-insensitive canonical name
                lambda r: True,  # case-insensitive alias
            ]
            for rank in ranks:
                ids = {r[0] for r in rows if rank(r)}
                if len(ids) == 1:
                    return self.get(ids.pop())
                if len(ids) > 1:
                    return None
        if not fuzzy:
            return None
        return self._fuzzy(mention)

    def _fuzzy(self, mention: str) -> Entity | None:
        from rapidfuzz import fuzz, process, utils

        names = self.all_names()
        if not names:
            return None
        choices = [n for _, n, _ in names]
        best = process.extract(
            mention, choices, scorer=fuzz.WRatio, processor=utils.default_process, limit=3
        )
        if not best or best[0][1] < FUZZY_NAME_SCORE:
            return None
        top_id = names[best[0][2]][0]
        rivals = {names[i][0] for _, score, i in best if score >= best[0][1] - 1.0}
        if len(rivals) > 1:
            return None
        # Short mentions ("Jo") match long names too easily: require similar length.
        if fuzz.ratio(mention.casefold(), choices[best[0][2]].casefold()) < 60:
            return None
        return self.get(top_id)

    def attribute(self, entity: Entity | str, name: str) -> AttributeValue | None:
        """An attribute of an entity (or entity id) by name, tolerant of case and separators."""
        found = self.get(entity) if isinstance(entity, str) else entity
        if found is None:
            return None
        return found.attributes.get(attribute_key(name))

    def render_facts(self, entity_names: list[str] | None = None) -> list[str]:
        """The facts as sentences (``"John Smith's email is john.smith@company.com."``).

        With ``entity_names``, only the entities those names resolve to (unknown names are
        skipped); otherwise every entity.
        """
        if entity_names is None:
            chosen = self.entities()
        else:
            chosen = []
            seen: set[str] = set()
            for mention in entity_names:
                entity = self.find_entity(mention)
                if entity is not None and entity.id not in seen:
                    seen.add(entity.id)
                    chosen.append(entity)
        facts: list[str] = []
        for entity in chosen:
            for key, attr in entity.attributes.items():
                value = attr.value.rstrip(".")
                facts.append(f"{entity.name}'s {key.replace('_', ' ')} is {value}.")
        return facts

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release resources (no-op unless the backend holds any)."""
