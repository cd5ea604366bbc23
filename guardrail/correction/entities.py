"""New entities: names the response mentions that the dialogue's entity registry does not know.

Named entities come from spaCy (people, organisations, places, products, events, works, laws,
nationalities / groups); a mention is known when it equals a registry name or alias (case-
insensitive, possessive ``'s`` ignored), is part of one ("Smith" of "John Smith"), or is a close
spelling of one (rapidfuzz ratio ≥ 90).
"""

from __future__ import annotations

from typing import Any

from guardrail.inputs import EntityInfo
from guardrail.report import NewEntity, Span

ENTITY_TYPES: dict[str, str] = {
    "PERSON": "person",
    "ORG": "organisation",
    "GPE": "place",
    "LOC": "place",
    "FAC": "facility",
    "PRODUCT": "product",
    "EVENT": "event",
    "WORK_OF_ART": "work",
    "LAW": "law",
    "NORP": "group",
}
KNOWN_SCORE = 90.0


def _bare(name: str) -> str:
    for suffix in ("'s", "’s", "'"):
        if name.endswith(suffix):
            return name[: -len(suffix)].rstrip()
    return name


def new_entities(doc: Any, registry: list[EntityInfo]) -> list[NewEntity]:
    """Entities in a parsed response that ``registry`` does not know, first mention each."""
    from rapidfuzz import fuzz

    known = [n.casefold() for info in registry for n in (info.name, *info.aliases)]
    found: list[NewEntity] = []
    seen: set[str] = set()
    for ent in doc.ents:
        kind = ENTITY_TYPES.get(ent.label_)
        if kind is None:
            continue
        name = _bare(ent.text.strip())
        key = name.casefold()
        if not name or key in seen or "@" in name:
            continue
        seen.add(key)
        words = set(key.split())
        if key in known or any(
            fuzz.ratio(key, k) >= KNOWN_SCORE or words <= set(k.split()) for k in known
        ):
            continue
        start = ent.start_char
        found.append(NewEntity(name=name, type=kind, span=Span(start=start, end=start + len(name))))
    return found
