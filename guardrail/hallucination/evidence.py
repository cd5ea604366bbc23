"""Gather the evidence of one check: passage windows, KB facts as text, dialogue sentences.

The knowledge base is duck-typed: when the object has ``render_facts(entity_names)`` its facts
(one sentence each) become one more evidence text, windowed like a passage (index ``-1``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from guardrail.errors import KnowledgeBaseError
from guardrail.hallucination.selection import SentencePool, split_evidence
from guardrail.hallucination.windows import (
    DIALOGUE_PASSAGE,
    KB_PASSAGE,
    TokenCounter,
    Window,
    make_windows,
)
from guardrail.inputs import GuardInput
from guardrail.text.sentences import split_sentences

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnSentence:
    """One sentence of an earlier dialogue turn."""

    text: str
    turn_id: int | None
    turn_text: str


@dataclass
class Evidence:
    """Everything the claims are checked against."""

    windows: list[Window] = field(default_factory=list)
    known_texts: list[str] = field(default_factory=list)
    """Texts in which a name, number or date must occur not to count as invented."""
    turn_sentences: list[TurnSentence] = field(default_factory=list)
    kb_facts: list[str] = field(default_factory=list)
    window_tokens: int = 0
    """Window size actually used (tokens)."""
    window_stride: int = 0
    passages: list[str] = field(default_factory=list)
    """Each passage whole, then the KB facts joined: the context a span model reads."""
    sentences: SentencePool | None = None
    """The sentences of the passages and KB facts, for evidence selection
    (:mod:`guardrail.hallucination.selection`); ``None`` when not asked for."""


def render_kb_facts(knowledge_base: Any, entity_names: list[str] | None) -> list[str]:
    """The KB's facts as sentences (empty when the KB cannot render them)."""
    if knowledge_base is None or not hasattr(knowledge_base, "render_facts"):
        if knowledge_base is not None:
            logger.warning(
                "knowledge base %s has no render_facts(); its facts are not used as evidence",
                type(knowledge_base).__name__,
            )
        return []
    facts = knowledge_base.render_facts(entity_names)
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        raise KnowledgeBaseError("render_facts() must return a list of strings")
    if entity_names and not facts:
        facts = knowledge_base.render_facts(None)
    return [f for f in facts if f.strip()]


def gather_evidence(
    data: GuardInput,
    window_tokens: int,
    stride: int,
    count_tokens: TokenCounter | None,
    use_windows: bool = True,
    entity_names: list[str] | None = None,
    sentences: bool = False,
) -> Evidence:
    """Windows over every passage and over the KB facts, plus the dialogue sentences.

    Args:
        data: the check's input.
        window_tokens: window size in verifier tokens.
        stride: tokens between window starts.
        count_tokens: the verifier's token counter (``None`` = words).
        use_windows: false = each passage is one window, whatever its length.
        entity_names: names the response mentions (selects KB facts; ``None`` = all).
        sentences: also split the evidence into sentences once (``Evidence.sentences``).
    """
    size = window_tokens if use_windows else 10**9
    step = stride if use_windows else 10**9
    ev = Evidence(window_tokens=window_tokens if use_windows else 0, window_stride=stride)
    texts: list[tuple[str, int, str | None, str | None]] = []
    for i, passage in enumerate(data.passages):
        if passage.text.strip():
            ev.windows += make_windows(passage.text, i, size, step, count_tokens, passage.source)
            ev.known_texts.append(passage.text)
            title = passage.metadata.get("title")
            texts.append(
                (passage.text, i, passage.source, title if isinstance(title, str) else None)
            )
    ev.kb_facts = render_kb_facts(data.knowledge_base, entity_names)
    if ev.kb_facts:
        kb_text = "\n".join(ev.kb_facts)
        ev.windows += make_windows(kb_text, KB_PASSAGE, size, step, count_tokens, "knowledge_base")
        ev.known_texts.append(kb_text)
        texts.append((kb_text, KB_PASSAGE, "knowledge_base", None))
    ev.passages = [text for text, *_ in texts]
    if sentences:
        ev.sentences = SentencePool(split_evidence(texts), count_tokens)
    if data.query.strip():
        ev.known_texts.append(data.query)
    registry = [
        " ; ".join([e.name, *e.aliases, *(f"{k}: {v}" for k, v in e.attributes.items())])
        for e in data.dialogue.entities
    ]
    if registry:
        ev.known_texts.append("\n".join(registry))  # the entity registry counts as known
    for turn in data.dialogue.turns:
        ev.known_texts.append(turn.text)
        for sentence in split_sentences(turn.text):
            if sentence.text.rstrip("\"'”’)").endswith(("?", "？")):
                continue  # a question asserts nothing to contradict
            ev.turn_sentences.append(TurnSentence(sentence.text, turn.turn_id, turn.text))
    return ev


def dialogue_window(sentence: TurnSentence) -> Window:
    """A turn sentence as a window (for evidence pointers)."""
    return Window(
        DIALOGUE_PASSAGE, sentence.turn_id or 0, sentence.text, 0, len(sentence.text), "dialogue"
    )
