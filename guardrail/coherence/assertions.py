"""What a sentence asserts about an entity mention, read off the dependency parse.

``assertions_about(mention)`` returns the attribute values attached to a mention:

- a prepositional modifier of the name: "John Smith *from Marketing*";
- an apposition: "Sarah, *the CFO*, …";
- what its verb or relative clause says: "John *works in Engineering*", "John, who *leads
  Sales*", "John *is in Marketing*", "John *is the CFO*";
- a possessed attribute: "John's *department* is *Marketing*" (key hint ``department``).

Organisational head nouns become key hints: "the Marketing department" → value ``Marketing``,
hint ``department``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

ATTRIBUTE_PREPS = {"from", "in", "of", "at", "for", "on"}
VERB_PREPS = {"in", "at", "for", "from", "on", "with"}
OBJECT_VERBS = {"lead", "head", "manage", "run", "join", "own", "chair", "direct"}
UNIT_NOUNS = {"department", "team", "division", "group", "office", "unit", "branch", "org"}
SKIP_POBJ = {"PRON"}
NAME_MODIFIERS = {"compound", "amod", "nummod", "nmod", "flat", "quantmod", "npadvmod"}


@dataclass(frozen=True)
class Assertion:
    """A value the text attaches to an entity mention."""

    value: str
    start: int
    end: int
    """Character span of the value in the response."""
    key_hint: str | None = None
    """Attribute name the text itself gives ("department", "email"), if any."""
    relation: str = ""
    """How it was found: ``prep:from``, ``appos``, ``verb:work:in``, ``poss``, ``attr``."""


def _modifiers(tok: Token) -> list[Token]:
    """The head's own modifiers (compounds, adjectives, numbers), recursively."""
    out: list[Token] = []
    for child in tok.children:
        if child.dep_ in NAME_MODIFIERS:
            out += [child, *_modifiers(child)]
    return out


def _value(head: Token, relation: str, key_hint: str | None = None) -> Assertion | None:
    """The value phrase headed by ``head``, without determiners; unit nouns become the hint."""
    if head.pos_ in SKIP_POBJ:
        return None
    toks = [head, *_modifiers(head)]
    if head.lemma_.lower() in UNIT_NOUNS:
        mods = [t for t in toks if t.i < head.i and t.dep_ in {"compound", "amod", "nmod"}]
        if mods:
            key_hint = key_hint or head.lemma_.lower()
            toks = mods
    if not toks:
        return None
    toks = sorted(toks, key=lambda t: t.i)
    doc = head.doc
    start, end = toks[0].idx, toks[-1].idx + len(toks[-1])
    text = doc.text[start:end]
    return Assertion(text, start, end, key_hint, relation)


def _from_verb(verb: Token, skip: Token | None = None) -> list[Assertion]:
    out: list[Assertion] = []
    lemma = verb.lemma_.lower()
    for child in verb.children:
        if child is skip:
            continue
        if child.dep_ == "prep" and child.lower_ in VERB_PREPS:
            for obj in (c for c in child.children if c.dep_ == "pobj"):
                a = _value(obj, f"verb:{lemma}:{child.lower_}")
                if a is not None:
                    out.append(a)
        elif child.dep_ == "dobj" and lemma in OBJECT_VERBS:
            a = _value(child, f"verb:{lemma}")
            if a is not None:
                out.append(a)
        elif child.dep_ in {"attr", "acomp"} and lemma == "be":
            a = _value(child, "attr")
            if a is not None:
                out.append(a)
    return out


def assertions_about(mention: Span) -> list[Assertion]:
    """Attribute values the sentence attaches to ``mention`` (a span naming an entity)."""
    head = mention.root
    out: list[Assertion] = []
    for child in head.children:
        if child.i in range(mention.start, mention.end):
            continue
        if child.dep_ == "prep" and child.lower_ in ATTRIBUTE_PREPS:
            for obj in (c for c in child.children if c.dep_ == "pobj"):
                a = _value(obj, f"prep:{child.lower_}")
                if a is not None:
                    out.append(a)
        elif child.dep_ == "appos":
            a = _value(child, "appos")
            if a is not None:
                out.append(a)
        elif child.dep_ == "relcl":
            out += _from_verb(child)
    if head.dep_ in {"nsubj", "nsubjpass"}:
        out += _from_verb(head.head, skip=head)
    if head.dep_ == "poss":
        noun = head.head
        hint = noun.lemma_.lower()
        if noun.dep_ in {"nsubj", "nsubjpass"} and noun.head.lemma_ == "be":
            for child in noun.head.children:
                if child.dep_ in {"attr", "acomp"}:
                    a = _value(child, "poss", key_hint=hint)
                    if a is not None:
                        out.append(a)
    seen: set[tuple[int, int]] = set()
    unique = []
    for a in out:
        if (a.start, a.end) not in seen:
            seen.add((a.start, a.end))
            unique.append(a)
    return unique
