"""Claim extraction: (subject, predicate, object) triples with spans, from a spaCy parse.

For every main or conjoined verb of every sentence, the dependency parse gives the subject
(inherited from the first verb for "He joined … and works …"), and the complements; the most
value-like complement (email, URL, number, date, proper noun, then common noun) becomes the
object. Patterns handled:

- copula with a possessed attribute noun: "John Smith's email is X", "His phone number is X",
  "The email of John Smith is X" → subject John Smith, attribute noun ``email``;
- verb + complement: "He joined the company in 2019" → (He, joined the company in, 2019);
- a generic head with a proper-noun modifier: "works in the Marketing department" → object
  ``Marketing``, attribute noun ``department``;
- "same X as E" ("I joined in 2020, same year as John") → the claim also holds for E.

Negated clauses are not extracted (they assert no attribute value). Emails, URLs and phone
numbers are located by pattern within the parsed object, since tokenisers split them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from guardrail.report import Span
from guardrail.text.segmentation import parsed_sentences
from guardrail.text.values import EMAIL_RE, URL_RE

PHONE_SPAN_RE = re.compile(r"\+?\(?\d[\d\s().\-/]{5,}\d")
_OBJECT_DEPS = ("dobj", "attr", "acomp", "oprd", "dative", "pobj")
_DROP_FROM_OBJECT = {"prep", "acl", "relcl", "punct", "cc", "conj", "npadvmod", "advcl", "det"}
_VALUE_ENTS = {"DATE", "TIME", "MONEY", "QUANTITY", "PERCENT", "CARDINAL", "ORDINAL"}
_NAME_ENTS = {"PERSON", "ORG", "GPE", "LOC", "FAC", "PRODUCT", "NORP", "EVENT", "WORK_OF_ART"}


@dataclass(frozen=True)
class RawClaim:
    """A claim as parsed, before its subject is resolved or its predicate mapped."""

    text: str
    span: Span
    subject_text: str
    subject_span: Span
    predicate: str
    """Surface predicate, e.g. ``"joined the company in"``."""
    predicate_lemmas: str
    """Lemmatised content words of the predicate, e.g. ``"join company in"``."""
    attribute_noun: str | None
    """The attribute named in the sentence ("email", "phone number", "department")."""
    object: str
    object_span: Span
    confidence: float
    sentence: int
    subject_is_pronoun: bool = False
    also_subjects: tuple[tuple[str, Span], ...] = field(default_factory=tuple)
    """Further subjects the claim holds for ("same year as John")."""


def extract_raw_claims(doc: Any, offset: int = 0) -> list[RawClaim]:
    """All claims of a parsed text; spans are shifted by ``offset``."""
    claims: list[RawClaim] = []
    for s_index, sent in enumerate(parsed_sentences(doc)):
        if sent.text.rstrip().endswith("?"):
            continue  # questions assert nothing
        for verb in sent:
            if not _is_clause_head(verb):
                continue
            claim = _claim_for_verb(doc, verb, s_index, offset)
            if claim is not None:
                claims.append(claim)
    return claims


def _is_clause_head(tok: Any) -> bool:
    if tok.pos_ not in ("VERB", "AUX"):
        return False
    if tok.dep_ == "ROOT":
        return True
    return tok.dep_ in ("conj", "ccomp") and tok.head.pos_ in ("VERB", "AUX")


def _subject_of(verb: Any) -> Any | None:
    for child in verb.children:
        if child.dep_ in ("nsubj", "nsubjpass"):
            return child
    if verb.dep_ == "conj":
        return _subject_of(verb.head)
    return None


def _name_tokens(tok: Any) -> list[Any]:
    """A name with its compounds / flat parts ("John Smith")."""
    parts = [c for c in tok.lefts if c.dep_ in ("compound", "flat", "amod") and c.pos_ == "PROPN"]
    left = min([tok.i, *(t.i for p in parts for t in p.subtree)])
    return [t for t in tok.doc[left : tok.i + 1] if t.dep_ not in ("case", "det", "punct")]


def _noun_phrase(tok: Any) -> list[Any]:
    """Compounds and the head noun ("phone number")."""
    left = min([tok.i, *(c.i for c in tok.lefts if c.dep_ == "compound")])
    return list(tok.doc[left : tok.i + 1])


def _value_score(tok: Any) -> int:
    if tok.like_email or tok.like_url or tok.ent_type_ in _VALUE_ENTS or tok.like_num:
        return 3
    if tok.pos_ == "PROPN" or tok.ent_type_ in _NAME_ENTS:
        return 2
    if any(c.dep_ == "compound" and c.pos_ == "PROPN" for c in tok.lefts):
        return 2
    return 1 if tok.pos_ in ("NOUN", "ADJ", "NUM") else 0


def _object_tokens(tok: Any) -> list[Any]:
    keep: list[Any] = [tok]
    stack = [c for c in tok.children if c.dep_ not in _DROP_FROM_OBJECT]
    while stack:
        child = stack.pop()
        keep.append(child)
        stack.extend(c for c in child.children if c.dep_ not in ("relcl", "acl", "conj", "cc"))
    keep.sort(key=lambda t: t.i)
    while keep and keep[-1].is_punct:
        keep.pop()
    return keep


def _char_span(tokens: list[Any]) -> tuple[int, int]:
    last = tokens[-1]
    end = last.idx + len(last.text)
    if _glued_full_stop(last):
        end -= 1
    return tokens[0].idx, end


def _glued_full_stop(tok: Any) -> bool:
    """A sentence-final token the tokenizer left its full stop on ("room 4B." → "4B.")."""
    text = tok.text
    return (
        len(text) > 1 and text.endswith(".") and text.count(".") == 1 and tok.i == tok.sent.end - 1
    )


def _pattern_override(doc: Any, start: int, end: int) -> tuple[int, int] | None:
    """An email / URL / phone number overlapping [start, end) in the sentence text."""
    sent = doc[doc.char_span(start, end, alignment_mode="expand").start].sent
    base = sent.start_char
    for pattern in (EMAIL_RE, URL_RE, PHONE_SPAN_RE):
        for m in pattern.finditer(sent.text):
            s, e = base + m.start(), base + m.end()
            while e > s and doc.text[e - 1] in ".,;:!?)" and pattern is not PHONE_SPAN_RE:
                e -= 1
            if s < end and e > start:
                return s, e
    return None


def _same_as_subjects(verb: Any, offset: int) -> tuple[tuple[str, Span], ...]:
    found: list[tuple[str, Span]] = []
    for tok in verb.subtree:
        if tok.lower_ != "as" or tok.dep_ != "prep":
            continue
        if not any(t.lower_ in ("same", "like") for t in tok.head.subtree):
            continue
        for pobj in tok.children:
            if pobj.dep_ == "pobj" and (pobj.pos_ == "PROPN" or pobj.ent_type_ == "PERSON"):
                toks = _name_tokens(pobj)
                s, e = _char_span(toks)
                found.append((verb.doc.text[s:e], Span(start=s + offset, end=e + offset)))
    return tuple(found)


def _candidates(complements: list[Any]) -> list[tuple[Any, Any | None]]:
    """The tokens that may be the object, each with the preposition introducing it."""
    candidates: list[tuple[Any, Any | None]] = []
    for comp in complements:
        if comp.dep_ == "prep":
            candidates += [(p, comp) for p in comp.children if p.dep_ == "pobj"]
        else:
            candidates.append((comp, None))
            # "has an annual pay of 95,000": the value hangs off the complement noun
            candidates += [
                (p, prep)
                for prep in comp.children
                if prep.dep_ == "prep" and prep.lower_ == "of"
                for p in prep.children
                if p.dep_ == "pobj" and _value_score(p) >= 3
            ]
    return candidates


def _possessed_attribute(verb: Any, subject: Any) -> tuple[str, Any, float] | None:
    """``(attribute noun, owner token, confidence)`` when the subject is an attribute of an
    owner ("X's email is", "His phone number is", "The email of X is"), else ``None``."""
    if verb.lemma_ != "be" or subject.pos_ != "NOUN":
        return None
    poss = next((c for c in subject.children if c.dep_ == "poss"), None)
    of = next(
        (p for c in subject.children if c.dep_ == "prep" and c.lower_ == "of"
         for p in c.children if p.dep_ == "pobj"),
        None,
    )  # fmt: skip
    owner = poss if poss is not None else of
    if owner is None:
        return None
    attribute_noun = " ".join(t.lemma_.lower() for t in _noun_phrase(subject))
    return attribute_noun, owner, 0.95 if poss is not None else 0.9


def _predicate_tokens(
    verb: Any, complements: list[Any], best: Any, prep: Any | None
) -> tuple[list[Any], str | None]:
    """The predicate's tokens (the verb, its particles and the non-object complements, up to
    the object) and the attribute noun a value's owning complement names ("pay of")."""
    pred_tokens = [verb, *(c for c in verb.children if c.dep_ in ("prt", "aux", "auxpass"))]
    for comp in complements:
        if (
            comp.i == best.i
            or (prep is not None and comp.i == prep.i)
            or best.i in {t.i for t in comp.subtree}
        ):
            continue
        if comp.i < best.i and comp.dep_ in ("dobj", "prep"):
            pred_tokens += [t for t in comp.subtree if not t.is_punct]
    owner_noun = None
    if prep is not None:
        if prep.head.i != verb.i:  # the complement noun the value belongs to ("pay of")
            owner = prep.head
            pred_tokens += [t for t in owner.subtree if t.i < prep.i and not t.is_punct]
            owner_noun = owner.lemma_.lower()
        pred_tokens.append(prep)
    return pred_tokens, owner_noun


def _claim_for_verb(doc: Any, verb: Any, s_index: int, offset: int) -> RawClaim | None:
    if any(c.dep_ == "neg" for c in verb.children):
        return None
    subject = _subject_of(verb)
    if subject is None:
        return None
    complements = [c for c in verb.children if c.dep_ in _OBJECT_DEPS or c.dep_ == "prep"]
    candidates = _candidates(complements)
    if not candidates:
        return None
    attribute_noun: str | None = None
    entity_tok, confidence = subject, 0.85
    if (possessed := _possessed_attribute(verb, subject)) is not None:
        attribute_noun, entity_tok, confidence = possessed
    best, prep = max(candidates, key=lambda c: (_value_score(c[0]), -c[0].i))
    if best.tag_ in ("WP", "WDT", "WRB", "WP$") or best.pos_ == "PRON":
        return None
    obj_tokens = _object_tokens(best)
    if best.pos_ == "NOUN":
        proper = [c for c in best.lefts if c.dep_ == "compound" and c.pos_ == "PROPN"]
        if proper:  # "the Marketing department" → Marketing (+ attribute noun department)
            obj_tokens = sorted({t for p in proper for t in p.subtree}, key=lambda t: t.i)
            attribute_noun = attribute_noun or best.lemma_.lower()
    if not obj_tokens:
        return None
    o_start, o_end = _char_span(obj_tokens)
    override = _pattern_override(doc, o_start, o_end)
    if override is not None:
        o_start, o_end = override
    if _value_score(best) < 2 and override is None:
        confidence = min(confidence, 0.6)
    pred_tokens, owner_noun = _predicate_tokens(verb, complements, best, prep)
    if owner_noun is not None:
        attribute_noun = attribute_noun or owner_noun
    if attribute_noun and best.pos_ == "NOUN" and obj_tokens[-1].i < best.i:
        pred_tokens.append(best)
    pred_tokens = sorted(set(pred_tokens), key=lambda t: t.i)
    predicate = " ".join(t.text for t in pred_tokens)
    lemmas = " ".join(t.lemma_.lower() for t in pred_tokens if not t.is_stop or t.dep_ == "prep")
    if attribute_noun and verb.lemma_ == "be":
        predicate = f"{attribute_noun} is"
        lemmas = attribute_noun
    subj_tokens = [entity_tok] if entity_tok.pos_ == "PRON" else _name_tokens(entity_tok)
    s_start, s_end = _char_span(subj_tokens)
    c_start, c_end = _char_span(_clause_tokens(verb, subject))
    c_start, c_end = min(c_start, o_start), max(c_end, o_end)
    return RawClaim(
        text=doc.text[c_start:c_end],
        span=Span(start=c_start + offset, end=c_end + offset),
        subject_text=doc.text[s_start:s_end],
        subject_span=Span(start=s_start + offset, end=s_end + offset),
        predicate=predicate,
        predicate_lemmas=lemmas or verb.lemma_.lower(),
        attribute_noun=attribute_noun,
        object=doc.text[o_start:o_end],
        object_span=Span(start=o_start + offset, end=o_end + offset),
        confidence=confidence,
        sentence=s_index,
        subject_is_pronoun=entity_tok.pos_ == "PRON",
        also_subjects=_same_as_subjects(verb, offset),
    )


def _clause_tokens(verb: Any, subject: Any) -> list[Any]:
    """The verb's subtree without conjoined clauses and trailing punctuation."""
    skip: set[int] = set()
    for child in verb.children:
        # A real punctuation mark only: "4B." (full stop glued on) can be parsed as punct.
        trailing_punct = child.dep_ == "punct" and child.i > verb.i and child.is_punct
        if child.dep_ in ("conj", "cc") or trailing_punct:
            skip.update(t.i for t in child.subtree)
    tokens = [t for t in verb.subtree if t.i not in skip]
    if subject.head.i == verb.i or subject.i > tokens[0].i:
        tokens = sorted({*tokens, *subject.subtree}, key=lambda t: t.i)
    while tokens and tokens[-1].is_punct:
        tokens.pop()
    while tokens and (tokens[0].is_punct or tokens[0].dep_ == "cc"):
        tokens.pop(0)
    return tokens
