"""Predicate mapping: which knowledge-base attribute a claim's predicate talks about.

Three steps, first hit wins:

1. the attribute noun of the sentence ("John's **email** is …", "the Marketing **department**")
   equals an attribute key or one of its synonyms;
2. the predicate's lemmas contain a synonym phrase ("**join** the company in" → ``join_date``,
   "**work in**" → ``department``);
3. embedding similarity (all-MiniLM-L6-v2 by default): the predicate against each attribute's
   name and synonyms, max over those, at least ``threshold`` and ahead of the runner-up.

Candidates are restricted to attributes whose known value has a compatible kind: an email
object never maps onto ``join_date``; a date object maps only onto date-valued attributes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from guardrail.knowledge.base import attribute_key
from guardrail.text.values import ValueKind, value_kind

#: Attribute concept → synonym phrases (lemmatised, lower case). An attribute whose key equals
#: the concept or one of its phrases (``start_date`` → "start date") belongs to that concept.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "email": ("email", "e-mail", "mail", "email address", "e-mail address", "reach at"),
    "phone": ("phone", "phone number", "telephone", "mobile", "cell", "call at", "extension"),
    "join_date": ("join", "hire", "start", "onboard", "join date", "start date", "hire date"),
    "department": ("department", "dept", "division", "team", "work in", "belong to"),
    "title": ("title", "job title", "role", "position", "job"),
    "location": ("location", "office", "base in", "live in", "locate in", "city", "work from"),
    "manager": ("manager", "report to", "boss", "supervisor", "supervise by"),
    "birth_date": ("bear", "born", "birthday", "birth date", "date of birth"),
    "salary": ("salary", "earn", "wage", "compensation", "income"),
    "age": ("age", "year old"),
}
_DATE_WORDS = ("date", "year", "since", "birthday", "born")


@dataclass(frozen=True)
class PredicateMatch:
    """A predicate mapped onto an attribute."""

    attribute: str
    score: float
    via: str
    """``attribute_noun``, ``synonym`` or ``embedding``."""


def _contains_phrase(text: str, phrase: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text) is not None


def concept_of(attribute: str, synonyms: Mapping[str, tuple[str, ...]] = SYNONYMS) -> str | None:
    """The synonym concept an attribute key belongs to (``start_date`` → ``join_date``)."""
    key = attribute_key(attribute)
    words = key.replace("_", " ")
    for concept, phrases in synonyms.items():
        if key == concept or words in phrases:
            return concept
    return None


def kind_compatible(object_value: str, attribute: str, known_value: str | None) -> bool:
    """Whether a claimed value could be a value of this attribute."""
    obj = value_kind(object_value)
    if known_value is not None:
        ref = value_kind(known_value)
        if ValueKind.EMAIL in (obj, ref) or ValueKind.URL in (obj, ref):
            return obj == ref
        if ref is ValueKind.DATE:
            return obj in (ValueKind.DATE, ValueKind.NUMBER)
        if obj is ValueKind.DATE:
            return ref in (ValueKind.DATE, ValueKind.NUMBER)
        return True
    if obj is ValueKind.EMAIL:
        return "mail" in attribute
    if obj is ValueKind.DATE:
        return any(w in attribute for w in _DATE_WORDS)
    return True


class PredicateMapper:
    """Maps predicates onto attribute keys.

    Args:
        embedder: a callable returning a sentence-transformer (loaded on first need), or
            ``None`` to use synonyms only.
        threshold: minimum embedding similarity.
        margin: how far the best attribute must lead the runner-up.
        synonyms: the synonym table (default :data:`SYNONYMS`).
    """

    def __init__(
        self,
        embedder: Callable[[], Any] | None = None,
        threshold: float = 0.5,
        margin: float = 0.03,
        synonyms: Mapping[str, tuple[str, ...]] = SYNONYMS,
    ) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.margin = margin
        self.synonyms = synonyms

    def map(
        self,
        predicate: str,
        predicate_lemmas: str,
        attribute_noun: str | None,
        object_value: str,
        attributes: Mapping[str, str | None],
    ) -> PredicateMatch | None:
        """The attribute (a key of ``attributes``, which maps keys to known values or None)."""
        allowed = {a: v for a, v in attributes.items() if kind_compatible(object_value, a, v)}
        if not allowed:
            return None
        if attribute_noun:
            key = attribute_key(attribute_noun)
            if key in allowed:
                return PredicateMatch(key, 1.0, "attribute_noun")
            for attr in allowed:
                concept = concept_of(attr, self.synonyms)
                if concept and attribute_noun in (
                    concept.replace("_", " "),
                    *self.synonyms[concept],
                ):
                    return PredicateMatch(attr, 0.95, "attribute_noun")
        lemmas = predicate_lemmas.lower()
        best: tuple[int, str] | None = None
        for attr in allowed:
            concept = concept_of(attr, self.synonyms)
            phrases = (*self.synonyms.get(concept or "", ()), attr.replace("_", " "))
            for phrase in phrases:
                if _contains_phrase(lemmas, phrase) and (best is None or len(phrase) > best[0]):
                    best = (len(phrase), attr)
        if best is not None:
            return PredicateMatch(best[1], 0.9, "synonym")
        return self._by_embedding(predicate, attribute_noun, list(allowed))

    def _by_embedding(
        self, predicate: str, attribute_noun: str | None, attributes: list[str]
    ) -> PredicateMatch | None:
        if self.embedder is None or not attributes:
            return None
        model = self.embedder()
        query = f"{predicate} {attribute_noun}" if attribute_noun else predicate
        labels: list[tuple[str, str]] = []
        for attr in attributes:
            concept = concept_of(attr, self.synonyms)
            for text in {attr.replace("_", " "), *self.synonyms.get(concept or "", ())}:
                labels.append((attr, text))
        vectors = model.encode([query] + [t for _, t in labels], normalize_embeddings=True)
        best: dict[str, float] = {}
        for (attr, _), vec in zip(labels, vectors[1:], strict=True):
            best[attr] = max(best.get(attr, -1.0), float(vectors[0] @ vec))
        ranked = sorted(best.items(), key=lambda kv: -kv[1])
        top_attr, top = ranked[0]
        runner_up = ranked[1][1] if len(ranked) > 1 else -1.0
        if top >= self.threshold and top - runner_up >= self.margin:
            return PredicateMatch(top_attr, round(top, 4), "embedding")
        return None
