"""What the coherence analysers read: parsed texts, the dialogue window and shared vectors.

The checker parses every text it needs in one ``nlp.pipe`` call and embeds every string the
analysers ask for in one ``encode`` call; the analysers then only look things up here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from guardrail.inputs import EntityInfo

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

from guardrail.report import Span as CharSpan

#: Nouns that carry no topic of their own ("anything else?").
LIGHT_NOUNS = frozenset(
    {"thing", "anything", "something", "everything", "nothing", "way", "lot", "bit", "else", "one"}
)
#: Verbs that carry no topic of their own.
LIGHT_VERBS = frozenset({"be", "have", "do", "get", "make", "let", "go", "say", "know", "think"})


@dataclass(frozen=True)
class ContextTurn:
    """One turn of the dialogue window, parsed."""

    speaker: str
    text: str
    doc: Doc
    age: int
    """0 for the latest turn (usually the query), 1 for the one before, …"""


@dataclass(frozen=True)
class CoherenceContext:
    """Everything one coherence check reads. Built once per response; never mutated."""

    response: str
    answer: Doc
    query: Doc | None
    question: Doc | None
    """The question under discussion: the query, or the top of the QUD stack."""
    question_source: str
    """``query``, ``qud_stack``, ``dialogue`` or ``none``."""
    turns: list[ContextTurn]
    """The dialogue window, oldest first, with the query as the latest user turn."""
    topics: list[str]
    entities: list[EntityInfo]
    qud_stack: list[str]
    knowledge_base: Any = None

    @property
    def last_turn(self) -> ContextTurn | None:
        """The turn the response answers (the query, else the latest user turn)."""
        users = [t for t in self.turns if t.speaker == "user"]
        return users[-1] if users else (self.turns[-1] if self.turns else None)

    def context_lemmas(self) -> set[str]:
        """Lower-case lemmas of content words in the dialogue window and the topics."""
        out: set[str] = set()
        for turn in self.turns:
            out |= content_lemmas(turn.doc)
        for topic in self.topics:
            out |= {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", topic)}
        return out


@dataclass(frozen=True)
class Vectors:
    """Unit-normalised embeddings of a fixed set of strings."""

    index: dict[str, int]
    matrix: NDArray[np.float32]
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def encode(cls, embedder: Any, texts: list[str]) -> Vectors:
        """Embed the distinct non-empty ``texts`` with one ``encode`` call."""
        unique = list(dict.fromkeys(t for t in texts if t.strip()))
        if not unique:
            return cls(index={}, matrix=np.zeros((0, 1), dtype=np.float32))
        matrix = np.asarray(
            embedder.encode(unique, normalize_embeddings=True, show_progress_bar=False),
            dtype=np.float32,
        )
        return cls(index={t: i for i, t in enumerate(unique)}, matrix=matrix)

    def __contains__(self, text: str) -> bool:
        return text in self.index

    def vector(self, text: str) -> NDArray[np.float32]:
        """The embedding of ``text`` (it must have been requested)."""
        try:
            row: NDArray[np.float32] = self.matrix[self.index[text]]
        except KeyError as exc:
            raise KeyError(f"text was not embedded: {text!r}") from exc
        return row

    def cos(self, a: str, b: str) -> float:
        """Cosine similarity of two embedded strings (0.0 with a blank one: blank strings are
        never embedded, and say nothing)."""
        if not a.strip() or not b.strip():
            return 0.0
        return float(self.vector(a) @ self.vector(b))

    def best(self, text: str, others: list[str]) -> tuple[float, str | None]:
        """The highest cosine of ``text`` against ``others`` and which one it was."""
        best, which = -1.0, None
        for other in others:
            score = self.cos(text, other)
            if score > best:
                best, which = score, other
        return (best, which) if which is not None else (0.0, None)


def content_lemmas(doc: Doc | Span) -> set[str]:
    """Lower-case lemmas of nouns, proper nouns, verbs and adjectives, without light words."""
    out: set[str] = set()
    for tok in doc:
        if tok.is_stop or tok.is_punct or not tok.is_alpha:
            continue
        lemma = tok.lemma_.lower()
        if tok.pos_ in {"NOUN", "PROPN", "ADJ"} and lemma not in LIGHT_NOUNS:
            out.add(lemma)
        elif tok.pos_ == "VERB" and lemma not in LIGHT_VERBS:
            out.add(lemma)
    return out


def key_phrases(doc: Doc | Span) -> list[str]:
    """Topic-bearing phrases: noun chunks without determiners, pronouns or light nouns."""
    out: list[str] = []
    for chunk in doc.noun_chunks:
        root = chunk.root
        if root.pos_ == "PRON" or root.lemma_.lower() in LIGHT_NOUNS:
            continue
        words = [t for t in chunk if t.pos_ not in {"DET", "PRON", "PUNCT"} and not t.is_stop]
        phrase = " ".join(t.text for t in words).strip()
        if phrase and phrase not in out:
            out.append(phrase)
    return out


def char_span(item: Span | Token) -> CharSpan:
    """Character span of a spaCy span or token in its document."""
    from spacy.tokens import Token

    if isinstance(item, Token):
        return CharSpan(start=item.idx, end=item.idx + len(item))
    return CharSpan(start=item.start_char, end=item.end_char)
