"""Turn a text into resolved claims: parse, extract, resolve subjects, map predicates.

Used for the response and for every earlier dialogue turn, so both sides of a history check
go through the same extraction. Mentions are tracked in order (named entities and claim
subjects), so a pronoun resolves to the most recent compatible entity before it — in this
text or, through ``earlier``, in the turns before it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from guardrail.facts.extraction import RawClaim, extract_raw_claims
from guardrail.facts.predicates import SYNONYMS, PredicateMapper, PredicateMatch
from guardrail.facts.resolution import PRONOUN_GENDER, EntityResolver, ResolvedSubject
from guardrail.report import ExtractedClaim

_MENTION_LABELS = {"PERSON", "ORG", "GPE", "NORP", "FAC", "PRODUCT", "LOC"}


@dataclass(frozen=True)
class ResolvedClaim:
    """An extracted claim with its subject entity and attribute."""

    raw: RawClaim
    subject: ResolvedSubject | None
    match: PredicateMatch | None
    confidence: float
    subject_text: str = ""
    """The mention the claim is about (differs from ``raw.subject_text`` for "same as")."""

    @property
    def attribute(self) -> str | None:
        return self.match.attribute if self.match is not None else None

    @property
    def hypothesis(self) -> str:
        """The claim as a sentence naming its subject ("John Smith joined … in 2019")."""
        text, name = self.raw.text, self.subject.name if self.subject else self.subject_text
        s, e = (
            self.raw.subject_span.start - self.raw.span.start,
            self.raw.subject_span.end - (self.raw.span.start),
        )
        if self.subject_text != self.raw.subject_text:  # "same year as John": restate for John
            return f"{name} {self.raw.predicate} {self.raw.object}"
        if 0 <= s < e <= len(text):
            mention = text[s:e]
            possessive = mention.casefold() in ("his", "her", "its", "their")
            return text[:s] + (f"{name}'s" if possessive else name) + text[e:]
        return f"{name} {text}"

    def to_extracted(self) -> ExtractedClaim:
        return ExtractedClaim(
            text=self.raw.text,
            subject=self.subject.name if self.subject else self.subject_text,
            predicate=self.attribute or self.raw.predicate,
            object=self.raw.object,
            span=self.raw.span,
            object_span=self.raw.object_span,
            confidence=round(self.confidence, 4),
            entity_id=self.subject.entity_id if self.subject else None,
            attribute=self.attribute,
        )


@dataclass
class TextAnalysis:
    """The resolved claims of one text and the entities it mentions (in order)."""

    claims: list[ResolvedClaim] = field(default_factory=list)
    mentions: list[ResolvedSubject] = field(default_factory=list)
    unresolved_names: list[tuple[str, int, int, str]] = field(default_factory=list)
    """Named entities that resolved to nothing: ``(text, start, end, label)``."""


class ClaimAnalyzer:
    """Parses texts into :class:`ResolvedClaim` objects.

    Args:
        nlp: a callable returning the spaCy pipeline.
        resolver: subject resolution against the KB and the registry.
        mapper: predicate → attribute mapping.
    """

    def __init__(
        self, nlp: Callable[[], Any], resolver: EntityResolver, mapper: PredicateMapper
    ) -> None:
        self.nlp = nlp
        self.resolver = resolver
        self.mapper = mapper

    def analyse(self, text: str, earlier: list[ResolvedSubject] | None = None) -> TextAnalysis:
        """Claims of ``text``; ``earlier`` are entities mentioned before it (oldest first)."""
        doc = self.nlp()(text)
        out = TextAnalysis()
        positioned: list[tuple[int, ResolvedSubject]] = []
        for ent in doc.ents:
            if ent.label_ not in _MENTION_LABELS:
                continue
            found = self.resolver.resolve_name(ent.text)
            if found is not None:
                positioned.append((ent.start_char, found))
            else:
                out.unresolved_names.append((ent.text, ent.start_char, ent.end_char, ent.label_))
        for raw in extract_raw_claims(doc):
            before = [m for pos, m in sorted(positioned, key=lambda p: p[0])
                      if pos < raw.subject_span.start]  # fmt: skip
            context = [*(earlier or []), *before]
            if raw.subject_text.casefold() in PRONOUN_GENDER:
                subject = self.resolver.resolve_pronoun(raw.subject_text, context)
            else:
                subject = self.resolver.resolve_name(raw.subject_text)
            if subject is not None:
                positioned.append((raw.subject_span.start, subject))
            out.claims.append(self._resolved(raw, subject, raw.subject_text))
            for name, _span in raw.also_subjects:
                also = self.resolver.resolve_name(name)
                if also is not None:
                    out.claims.append(self._resolved(raw, also, name))
        out.mentions = [m for _, m in sorted(positioned, key=lambda p: p[0])]
        return out

    def _resolved(
        self, raw: RawClaim, subject: ResolvedSubject | None, mention: str
    ) -> ResolvedClaim:
        attributes: dict[str, str | None]
        if subject is not None and subject.entity is not None:
            attributes = {k: v.value for k, v in subject.entity.attributes.items()}
        else:
            attributes = dict.fromkeys(SYNONYMS)
            if subject is not None and subject.info is not None:
                attributes.update({k: str(v) for k, v in subject.info.attributes.items()})
        match = self.mapper.map(
            raw.predicate, raw.predicate_lemmas, raw.attribute_noun, raw.object, attributes
        )
        confidence = raw.confidence * (subject.confidence if subject is not None else 0.5)
        if match is not None and match.via == "embedding":
            confidence *= min(1.0, 0.5 + match.score)
        return ResolvedClaim(raw, subject, match, confidence, mention)
