"""Entity consistency: are the attributes the response gives known entities right? (dimension 3)

Known entities come from the dialogue's entity registry and, when the input carries a knowledge
base with ``find_entity``, from the KB. Their references in the response are found by name, alias,
or an unambiguous first / last name. The spaCy dependency parse yields what the response says
about each mention: "John Smith *from Marketing*", "John, *who works in Engineering*", "John is
*the CFO*", "John's *department is Marketing*". Each asserted value is matched to the attribute
it speaks about (the key named in the text, else the attribute whose value or name is closest
in embedding space and of the same shape) and compared with the fact stage's rule
(:func:`~guardrail.text.values.compare_values`). Mismatches get the value's span.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz

from guardrail.coherence.assertions import Assertion, assertions_about
from guardrail.coherence.context import CoherenceContext, Vectors
from guardrail.config import CoherenceConfig
from guardrail.errors import KnowledgeBaseError
from guardrail.report import CoherenceIssue, DimensionScore, Span
from guardrail.text.values import compare_values

if TYPE_CHECKING:
    from spacy.tokens import Span as DocSpan

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class KnownEntity:
    """An entity with the attribute values the registry or the KB holds for it."""

    name: str
    names: list[str]
    attributes: dict[str, str]
    source: str
    """``registry`` or ``knowledge_base``."""
    kb_keys: frozenset[str] = frozenset()
    """The attributes whose values come from the knowledge base."""


@dataclass(frozen=True)
class EntityReference:
    """Where the response refers to a known entity, and what it asserts about it there.

    Not a :class:`guardrail.text.mentions.Mention` (a name, number, date or time found in any
    text by its form): a reference is resolved to a registry / KB entity and holds the
    response's parse of it, whose dependents give the assertions.
    """

    entity: KnownEntity
    span: DocSpan
    """The reference in the response's spaCy parse."""
    assertions: list[Assertion] = field(default_factory=list)
    """What the response says about the entity at this reference."""


def _kb_entity(kb: Any, name: str) -> KnownEntity | None:
    """Look ``name`` up in a knowledge base that has ``find_entity`` (duck-typed)."""
    if kb is None or not hasattr(kb, "find_entity"):
        return None
    try:
        found = kb.find_entity(name)
    except KnowledgeBaseError as exc:
        logger.warning("knowledge-base lookup of %r failed: %s", name, exc)
        return None
    if found is None:
        return None
    raw = getattr(found, "attributes", None)
    if raw is None and isinstance(found, dict):
        raw = found.get("attributes")
    attrs: dict[str, str] = {}
    for key, value in dict(raw or {}).items():
        if hasattr(value, "value"):
            value = value.value
        elif isinstance(value, dict) and "value" in value:
            value = value["value"]
        attrs[str(key)] = str(value)
    canonical = str(getattr(found, "name", None) or name)
    aliases = [str(a) for a in getattr(found, "aliases", []) or []]
    return KnownEntity(canonical, [canonical, *aliases], attrs, "knowledge_base", frozenset(attrs))


def _registry(ctx: CoherenceContext) -> list[KnownEntity]:
    """Registry entities; attributes the registry lacks are filled in from the KB."""
    out = []
    for info in ctx.entities:
        attrs = {str(k): str(v) for k, v in info.attributes.items() if v is not None}
        kb = _kb_entity(ctx.knowledge_base, info.name)
        source = "registry"
        if kb is not None:
            missing = {k: v for k, v in kb.attributes.items() if k not in attrs}
            if missing:
                attrs.update(missing)
                source = "registry and knowledge base"
        own = {str(k) for k in info.attributes}
        kb_keys = frozenset(k for k in attrs if k not in own)
        out.append(KnownEntity(info.name, [info.name, *info.aliases], attrs, source, kb_keys))
    return out


def _name_forms(entities: list[KnownEntity]) -> list[tuple[str, KnownEntity]]:
    """Full names and aliases, then first / last names that point to one entity only."""
    forms = [(n, e) for e in entities for n in e.names if n.strip()]
    parts: dict[str, list[KnownEntity]] = {}
    for e in entities:
        for part in {p for n in e.names for p in n.split() if len(p) > 1 and p[0].isupper()}:
            parts.setdefault(part, []).append(e)
    forms += [(p, es[0]) for p, es in parts.items() if len({id(e) for e in es}) == 1]
    return sorted(forms, key=lambda f: -len(f[0]))


def find_references(ctx: CoherenceContext) -> list[EntityReference]:
    """References to registry / KB entities in the response, with what is asserted about them."""
    doc = ctx.answer
    taken: set[int] = set()
    references: list[EntityReference] = []
    for form, entity in _name_forms(_registry(ctx)):
        for m in re.finditer(rf"(?<!\w){re.escape(form)}(?!\w)", ctx.response):
            span = doc.char_span(m.start(), m.end(), alignment_mode="expand")
            if span is None or any(t.i in taken for t in span):
                continue
            taken.update(t.i for t in span)
            references.append(EntityReference(entity, span, assertions_about(span)))
    for ent in doc.ents:
        if ent.label_ not in {"PERSON", "ORG"} or any(t.i in taken for t in ent):
            continue
        known = _kb_entity(ctx.knowledge_base, ent.text)
        if known is not None:
            taken.update(t.i for t in ent)
            references.append(EntityReference(known, ent, assertions_about(ent)))
    return sorted(references, key=lambda m: m.span.start)


def _shape(value: str) -> str:
    if "@" in value:
        return "email"
    digits = sum(c.isdigit() for c in value)
    return "number" if digits and digits >= len(value.replace(" ", "")) / 2 else "text"


def _same(claimed: str, known: str) -> bool:
    """The fact stage's rule (:func:`~guardrail.text.values.compare_values`): case, generic
    heads ("department") and small free-text edits are tolerated; emails, numbers, dates, phones
    and URLs never match fuzzily."""
    return compare_values(claimed, known).matches


def entity_texts(references: list[EntityReference]) -> list[str]:
    """Strings the entity analyser needs embedded."""
    out: list[str] = []
    for m in references:
        out += list(m.entity.attributes) + list(m.entity.attributes.values())
        for a in m.assertions:
            out.append(a.value)
            if a.key_hint:
                out.append(a.key_hint)
    return out


def _slot(
    a: Assertion, entity: KnownEntity, vectors: Vectors, config: CoherenceConfig
) -> tuple[str | None, float]:
    """The attribute an asserted value speaks about, and how sure (0 when none fits)."""
    attrs = entity.attributes
    if a.key_hint:
        for key in attrs:
            if fuzz.ratio(a.key_hint.lower(), key.lower()) >= 85 or a.key_hint.lower() in key:
                return key, 1.0
        best = max(attrs, key=lambda k: vectors.cos(a.key_hint or "", k), default=None)
        if best is not None and vectors.cos(a.key_hint, best) >= 0.6:
            return best, vectors.cos(a.key_hint, best)
    scored = [
        (max(vectors.cos(a.value, v), vectors.cos(a.value, k)), k)
        for k, v in attrs.items()
        if _shape(v) == _shape(a.value)
    ]
    scored = [s for s in scored if s[0] >= config.entity_slot_similarity]
    if not scored:
        return None, 0.0
    sim, key = max(scored)
    return key, sim


def analyze_entity(
    ctx: CoherenceContext,
    references: list[EntityReference],
    vectors: Vectors,
    config: CoherenceConfig,
) -> tuple[DimensionScore, list[CoherenceIssue]]:
    """Check every asserted attribute of every known entity the response mentions."""
    checked: list[dict[str, Any]] = []
    issues: list[CoherenceIssue] = []
    for m in references:
        entity = m.entity
        if not config.entity_kb_values:  # values on record are fact validation's finding
            attrs = {k: v for k, v in entity.attributes.items() if k not in entity.kb_keys}
            entity = KnownEntity(entity.name, entity.names, attrs, "registry")
        if not entity.attributes:
            continue
        m = EntityReference(entity, m.span, m.assertions)
        for a in m.assertions:
            if any(_same(a.value, v) for v in m.entity.attributes.values()):
                checked.append({"entity": m.entity.name, "value": a.value, "consistent": True})
                continue
            key, confidence = _slot(a, m.entity, vectors, config)
            if key is None:
                continue  # says nothing about a known attribute: nothing to check
            known = m.entity.attributes[key]
            ok = _same(a.value, known)
            checked.append(
                {
                    "entity": m.entity.name,
                    "attribute": key,
                    "value": a.value,
                    "known": known,
                    "source": m.entity.source,
                    "consistent": ok,
                    "span": [a.start, a.end],
                }
            )
            if not ok:
                issues.append(
                    CoherenceIssue(
                        type="entity_mismatch",
                        description=(
                            f"{m.entity.name}'s {key} is {known!r} in the {m.entity.source}, "
                            f"but the response says {a.value!r}"
                        ),
                        severity=round(min(0.9, 0.6 + 0.3 * confidence), 3),
                        span=Span(start=a.start, end=a.end),
                        suggestion=f"Replace {a.value!r} with {known!r}.",
                    )
                )
    registry_names = {p for e in _registry(ctx) for n in e.names for p in n.split()}
    said = " ".join(t.text for t in ctx.turns)
    mentioned = {t.i for m in references for t in m.span}
    unknown = [
        e
        for e in ctx.answer.ents
        if e.label_ == "PERSON"
        and not any(t.i in mentioned for t in e)
        and not set(e.text.split()) & registry_names
        and e.text not in said
    ]
    if ctx.entities:
        for e in unknown:
            issues.append(
                CoherenceIssue(
                    type="entity_unknown",
                    description=f"{e.text!r} is not a known participant of this conversation",
                    severity=0.3,
                    span=Span(start=e.start_char, end=e.end_char),
                    suggestion=f"Check that {e.text!r} is the right person.",
                )
            )
    consistent = sum(1 for c in checked if c["consistent"])
    score = consistent / len(checked) if checked else 1.0
    details = {
        "mentions": [{"entity": m.entity.name, "text": m.span.text} for m in references],
        "checked": checked,
        "mismatches": len(checked) - consistent,
        "unknown": [e.text for e in unknown],
    }
    return DimensionScore(score=round(score, 4), details=details), issues
