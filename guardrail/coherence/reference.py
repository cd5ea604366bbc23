"""Reference consistency: does each pronoun resolve to exactly one person? (dimension 5)

Candidates are the people of the context: the entity registry, the PERSON entities and known
first names of the dialogue window, and the names the response itself uses before the pronoun.
Gender comes from ``EntityInfo.gender`` or the packaged first-name list. A third-person pronoun
resolves when exactly one candidate of its gender and number is available (a name earlier in the
response, or in parentheses right after it, wins); two or more give ``ambiguous_reference``,
none gives ``unresolved_reference`` (``inconsistent_pronoun`` when only people of the other
gender are in context). "it" is not checked: things are too many to enumerate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from guardrail.coherence.context import CoherenceContext, char_span
from guardrail.coherence.gender import first_names, name_gender, pronoun_gender
from guardrail.report import CoherenceIssue, DimensionScore

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

GROUP_NOUNS = {"team", "group", "staff", "committee", "board", "family", "crew", "department"}
NAME_LABELS_WITH_ERRORS = {"NORP", "ORG", "GPE", "PRODUCT", "WORK_OF_ART", "LOC"}


@dataclass(frozen=True)
class Candidate:
    """A person a pronoun could refer to."""

    name: str
    gender: str | None
    number: str
    source: str
    """``registry``, ``turn:<age>`` or ``response``."""
    position: int = -1
    """Character offset in the response (response mentions only)."""


def people_in(doc: Doc) -> list[tuple[str, int]]:
    """Person names in a parsed text with their character offsets."""
    names = first_names()
    out: list[tuple[str, int]] = []
    covered: set[int] = set()
    for ent in doc.ents:
        first = ent[0].text.lower()
        if ent.label_ == "PERSON" or (ent.label_ in NAME_LABELS_WITH_ERRORS and first in names):
            out.append((ent.text, ent.start_char))
            covered.update(t.i for t in ent)
    for tok in doc:
        if tok.i not in covered and tok.pos_ == "PROPN" and tok.text.lower() in names:
            out.append((tok.text, tok.idx))
    return out


def _same_person(a: str, b: str) -> bool:
    pa, pb = a.split(), b.split()
    return a == b or (bool(pa) and bool(pb) and (pa[0] == pb[0] or set(pa) & set(pb) == set(pa)))


def candidates(ctx: CoherenceContext) -> list[Candidate]:
    """Everyone in context: registry, dialogue window, then the response's own names."""
    out: list[Candidate] = []
    for info in ctx.entities:
        if info.type not in (None, "person") and info.gender in (None, "unknown"):
            continue
        gender = info.gender if info.gender in {"male", "female"} else name_gender(info.name)
        if info.gender == "neuter":
            continue
        out.append(Candidate(info.name, gender, info.number, "registry"))

    def add(name: str, source: str, position: int = -1) -> None:
        for c in out:
            if _same_person(name, c.name) and c.source != "response":
                if source == "response":
                    out.append(Candidate(c.name, c.gender, c.number, source, position))
                return
        out.append(Candidate(name, name_gender(name), "singular", source, position))

    for turn in ctx.turns:
        for name, _ in people_in(turn.doc):
            add(name, f"turn:{turn.age}")
    for name, pos in people_in(ctx.answer):
        add(name, "response", pos)
    return out


def _parenthetical(tok: Token) -> str | None:
    """``she (Sarah)`` → ``Sarah``."""
    doc = tok.doc
    if tok.i + 2 < len(doc) and doc[tok.i + 1].text == "(" and doc[tok.i + 2].pos_ == "PROPN":
        return doc[tok.i + 2].text
    return None


def resolve(
    tok: Token, people: list[Candidate], context_nouns: Sequence[Token] = ()
) -> tuple[str, list[str]]:
    """``(status, names)``: status is resolved / weak / ambiguous / unresolved / inconsistent."""
    gender = pronoun_gender(tok.text)
    explicit = _parenthetical(tok)
    if explicit is not None:
        return "resolved", [explicit]
    earlier = [c for c in people if c.source != "response" or c.position < tok.idx]
    if gender == "plural":
        plural = [c for c in earlier if c.number == "plural"]
        plural_nouns = [
            t for t in tok.doc[: tok.i] if t.tag_ in {"NNS", "NNPS"} or t.lemma_ in GROUP_NOUNS
        ] + [t for t in context_nouns if t.tag_ in {"NNS", "NNPS"} or t.lemma_ in GROUP_NOUNS]
        distinct = {c.name for c in earlier}
        if plural or plural_nouns or len(distinct) >= 2:
            return "resolved", [c.name for c in plural] or sorted(distinct)
        return "unresolved", []
    singular = [c for c in earlier if c.number == "singular"]
    local = {c.name for c in singular if c.source == "response" and c.gender == gender}
    if len(local) == 1:
        return "resolved", sorted(local)
    if len(local) > 1:
        return "ambiguous", sorted(local)
    matching = sorted({c.name for c in singular if c.gender == gender})
    if len(matching) == 1:
        return "resolved", matching
    if len(matching) > 1:
        return "ambiguous", matching
    unknown = sorted({c.name for c in singular if c.gender is None})
    if len(unknown) == 1:
        return "weak", unknown
    if len(unknown) > 1:
        return "ambiguous", unknown
    others = sorted({f"{c.name} ({c.gender})" for c in singular})
    return ("inconsistent" if others else "unresolved"), others


CREDIT = {"resolved": 1.0, "weak": 0.8, "ambiguous": 0.0, "unresolved": 0.0, "inconsistent": 0.0}


def analyze_reference(ctx: CoherenceContext) -> tuple[DimensionScore, list[CoherenceIssue]]:
    """Resolve every third-person personal pronoun of the response against the context."""
    people = candidates(ctx)
    context_nouns = [t for turn in ctx.turns for t in turn.doc if t.pos_ in {"NOUN", "PROPN"}]
    results: list[dict[str, Any]] = []
    issues: list[CoherenceIssue] = []
    reported: set[tuple[str, str, tuple[str, ...]]] = set()
    for tok in ctx.answer:
        if tok.pos_ != "PRON" or pronoun_gender(tok.text) is None:
            continue
        status, names = resolve(tok, people, context_nouns)
        results.append(
            {"pronoun": tok.text, "start": tok.idx, "status": status, "refers_to": names}
        )
        key = (status, pronoun_gender(tok.text) or "", tuple(names))
        if status in {"resolved", "weak"} or key in reported:
            continue
        reported.add(key)
        if status == "ambiguous":
            issue = CoherenceIssue(
                type="ambiguous_reference",
                description=f"{tok.text!r} could refer to {' or '.join(names)}",
                severity=0.6,
                span=char_span(tok),
                suggestion=f"Replace {tok.text!r} with the person's name ({' or '.join(names)}).",
            )
        elif status == "inconsistent":
            issue = CoherenceIssue(
                type="inconsistent_pronoun",
                description=f"{tok.text!r} matches nobody in context: {', '.join(names)}",
                severity=0.6,
                span=char_span(tok),
                suggestion=f"Use the right pronoun or name instead of {tok.text!r}.",
            )
        else:
            issue = CoherenceIssue(
                type="unresolved_reference",
                description=f"{tok.text!r} refers to nobody mentioned in the conversation",
                severity=0.5,
                span=char_span(tok),
                suggestion=f"Say who {tok.text!r} is.",
            )
        issues.append(issue)
    score = sum(CREDIT[r["status"]] for r in results) / len(results) if results else 1.0
    details = {
        "pronouns": results,
        "candidates": [{"name": c.name, "gender": c.gender, "source": c.source} for c in people],
    }
    return DimensionScore(score=round(score, 4), details=details), issues
