"""Subject resolution: which entity a claim is about.

A mention resolves through the knowledge base (exact name, alias, case-insensitive, fuzzy —
see :meth:`~guardrail.knowledge.KnowledgeBase.find_entity`), then through the dialogue's entity
registry. A pronoun resolves to the most recent compatible entity mentioned before it (in the
response, then in the dialogue history): "he" / "she" need a person whose gender, when the
registry or the KB record states one, agrees; "it" needs a non-person.

The canonical KB name is the claim subject ("John Smith"), so guidance and corrections name it.
"""

from __future__ import annotations

from dataclasses import dataclass

from guardrail.inputs import EntityInfo
from guardrail.knowledge.base import Entity, KnowledgeBase, normalise_key

PRONOUN_GENDER: dict[str, str] = {
    **dict.fromkeys(("he", "him", "his", "himself"), "male"),
    **dict.fromkeys(("she", "her", "hers", "herself"), "female"),
    **dict.fromkeys(("it", "its", "itself"), "neuter"),
    **dict.fromkeys(("they", "them", "their", "theirs"), "plural"),
}
FIRST_SECOND_PERSON = {"i", "me", "my", "mine", "we", "us", "our", "you", "your"}
_PERSON_TYPES = {"person", "people", "human", "employee", "staff", "individual"}


@dataclass(frozen=True)
class ResolvedSubject:
    """The entity a mention refers to."""

    name: str
    """Canonical name (the KB name when the KB knows it)."""
    key: str
    """Identity used to compare claims across turns (``kb:E42`` / ``registry:john smith``)."""
    via: str
    """``kb_name``, ``kb_alias``, ``kb_fuzzy``, ``registry``, or ``pronoun:<how>``."""
    confidence: float
    entity: Entity | None = None
    info: EntityInfo | None = None

    @property
    def entity_id(self) -> str | None:
        return self.entity.id if self.entity is not None else None


class EntityResolver:
    """Resolves mentions against a knowledge base and a dialogue entity registry.

    Args:
        kb: the knowledge base, or ``None``.
        registry: the dialogue's known entities.
    """

    def __init__(self, kb: KnowledgeBase | None, registry: list[EntityInfo]) -> None:
        self.kb = kb
        self.registry = registry

    def resolve_name(self, mention: str) -> ResolvedSubject | None:
        """A proper-name mention → entity (KB first, then the registry)."""
        text = mention.strip()
        if not text or text.casefold() in FIRST_SECOND_PERSON or text.casefold() in PRONOUN_GENDER:
            return None
        info = self._registry_match(text)
        if self.kb is not None:
            entity = self.kb.find_entity(text)
            if entity is None and info is not None:
                entity = self.kb.find_entity(info.name, fuzzy=False)
            if entity is not None:
                bare = normalise_key(text.removesuffix("'s").removesuffix("’s"))
                if bare == normalise_key(entity.name):
                    via, conf = "kb_name", 1.0
                elif any(bare == normalise_key(a) for a in entity.aliases):
                    via, conf = "kb_alias", 0.95
                else:
                    via, conf = "kb_fuzzy", 0.85
                if info is None:
                    info = self._registry_match(entity.name)
                return ResolvedSubject(entity.name, f"kb:{entity.id}", via, conf, entity, info)
        if info is not None:
            return ResolvedSubject(
                info.name, f"registry:{normalise_key(info.name)}", "registry", 0.9, None, info
            )
        return None

    def _registry_match(self, mention: str) -> EntityInfo | None:
        key = normalise_key(mention.removesuffix("'s").removesuffix("’s"))
        for info in self.registry:
            if key in {normalise_key(n) for n in (info.name, *info.aliases)}:
                return info
        from rapidfuzz import fuzz

        scored = [
            (max(fuzz.ratio(key, normalise_key(n)) for n in (info.name, *info.aliases)), info)
            for info in self.registry
        ]
        scored = [s for s in scored if s[0] >= 88.0]
        if len(scored) == 1:
            return scored[0][1]
        return None

    def gender(self, subject: ResolvedSubject) -> str | None:
        """The entity's gender from the registry, else the KB record (``None`` = unknown)."""
        if subject.info is not None and subject.info.gender not in (None, "unknown"):
            return subject.info.gender
        if subject.entity is not None:
            return subject.entity.gender
        return None

    def is_person(self, subject: ResolvedSubject) -> bool | None:
        kinds = [subject.info.type if subject.info else None]
        kinds.append(subject.entity.type if subject.entity else None)
        known = [k.casefold() for k in kinds if k]
        if not known:
            return None
        return any(k in _PERSON_TYPES for k in known)

    def resolve_pronoun(
        self, pronoun: str, earlier: list[ResolvedSubject]
    ) -> ResolvedSubject | None:
        """The most recent entity in ``earlier`` (oldest first) that ``pronoun`` can refer to."""
        wanted = PRONOUN_GENDER.get(pronoun.casefold())
        if wanted is None:
            return None
        for candidate in reversed(earlier):
            gender, person = self.gender(candidate), self.is_person(candidate)
            if wanted in ("male", "female"):
                if person is False or (gender is not None and gender != wanted):
                    continue
                sure = gender == wanted
            elif wanted == "neuter":
                if person is True or gender in ("male", "female"):
                    continue
                sure = person is False
            else:
                number = candidate.info.number if candidate.info else None
                sure = number == "plural"
            confidence = candidate.confidence * (0.95 if sure else 0.8)
            how = "gender" if sure else "recency"
            return ResolvedSubject(
                candidate.name,
                candidate.key,
                f"pronoun:{how}",
                confidence,
                candidate.entity,
                candidate.info,
            )
        return None
