"""Topic consistency: does each sentence of the response stay on the dialogue's topic? (dimension 2)

The topic graph's nodes are the dialogue's declared topics, the registry's entities and the key
phrases (noun chunks) of the latest turns, weighted by recency; edges join phrases said in the same turn or whose
embeddings are close. A response sentence is scored by keyword overlap with the graph's lemmas
and by its best embedding similarity to a node or a recent turn (the design's "keyword overlap +
semantic similarity"). Sentences below ``topic_drift`` are flagged ``topic_drift`` with their
span; when every content sentence drifts the answer is ``topic_unrelated``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from guardrail.coherence.context import (
    CoherenceContext,
    Vectors,
    char_span,
    content_lemmas,
    key_phrases,
)
from guardrail.config import CoherenceConfig
from guardrail.report import CoherenceIssue, DimensionScore
from guardrail.text.segmentation import parsed_sentences

if TYPE_CHECKING:
    from spacy.tokens import Span

SHIFT_MARKERS = ("by the way", "speaking of", "incidentally", "on another note", "unrelated,")
RECENCY_DECAY = 0.8
EDGE_SIMILARITY = 0.5
ENTITY_WEIGHT = 0.8


@dataclass(frozen=True)
class TopicNode:
    phrase: str
    weight: float
    source: str
    """``topic`` (declared), ``entity`` (registry) or ``turn:<age>``."""
    turn: int | None = None


def topic_graph(ctx: CoherenceContext) -> list[TopicNode]:
    """The graph's nodes: declared topics, then key phrases of recent turns (recency-weighted)."""
    nodes: dict[str, TopicNode] = {}
    for topic in ctx.topics:
        if topic.strip():
            nodes.setdefault(topic.strip(), TopicNode(topic.strip(), 1.0, "topic"))
    for entity in ctx.entities:
        nodes.setdefault(entity.name, TopicNode(entity.name, ENTITY_WEIGHT, "entity"))
    for turn in ctx.turns:
        weight = RECENCY_DECAY**turn.age
        for phrase in key_phrases(turn.doc):
            old = nodes.get(phrase)
            if old is None or old.weight < weight:
                nodes[phrase] = TopicNode(phrase, weight, f"turn:{turn.age}", turn.age)
    return list(nodes.values())


def _edges(nodes: list[TopicNode], vectors: Vectors) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for i, a in enumerate(nodes):
        for b in nodes[i + 1 :]:
            if a.turn is not None and a.turn == b.turn:
                out.append((a.phrase, b.phrase, "same_turn"))
            elif vectors.cos(a.phrase, b.phrase) >= EDGE_SIMILARITY:
                out.append((a.phrase, b.phrase, "similar"))
    return out


def _content_sentences(ctx: CoherenceContext) -> list[Span]:
    """Response sentences that carry content (not "Is there anything else?")."""
    return [s for s in parsed_sentences(ctx.answer) if content_lemmas(s)]


def topic_applicable(ctx: CoherenceContext) -> bool:
    """Whether there is a dialogue to stay on the topic of: declared topics or a turn before the
    latest. With only the query, whether the answer is about it is the QUD dimension's job (a
    topic graph needs a dialogue: judging each sentence against the question alone flags
    on-topic elaborations as drift)."""
    return bool(ctx.topics) or any(t.age > 0 for t in ctx.turns)


def topic_texts(ctx: CoherenceContext) -> list[str]:
    """Strings this analyser needs embedded (none when it does not apply)."""
    if not topic_applicable(ctx):
        return []
    out = [n.phrase for n in topic_graph(ctx)]
    out += [t.text for t in ctx.turns]
    out += [s.text for s in _content_sentences(ctx)]
    return out


def analyze_topic(
    ctx: CoherenceContext, vectors: Vectors, config: CoherenceConfig
) -> tuple[DimensionScore, list[CoherenceIssue]]:
    """Score the response's topic consistency against the dialogue's topic graph."""
    if not topic_applicable(ctx):
        return DimensionScore(details={"applicable": False, "reason": "no dialogue context"}), []
    nodes = topic_graph(ctx)
    graph_lemmas = ctx.context_lemmas() | {
        w.lower() for e in ctx.entities for n in [e.name, *e.aliases] for w in n.split()
    }
    anchors = [n.phrase for n in nodes] + [t.text for t in ctx.turns]
    weights = {n.phrase: n.weight for n in nodes}
    weights.update({t.text: RECENCY_DECAY**t.age for t in ctx.turns})
    span_lo, span_hi = config.topic_cosine_floor, config.topic_cosine_ceiling
    sentences: list[dict[str, Any]] = []
    issues: list[CoherenceIssue] = []
    for sent in _content_sentences(ctx):
        lemmas = content_lemmas(sent)
        overlap = len(lemmas & graph_lemmas) / len(lemmas) if lemmas else 0.0
        best, anchor = 0.0, None
        for a in anchors:
            cos = vectors.cos(sent.text, a) * (0.5 + 0.5 * weights.get(a, 1.0))
            if cos > best:
                best, anchor = cos, a
        semantic = min(1.0, max(0.0, (best - span_lo) / (span_hi - span_lo)))
        score = 0.3 * overlap + 0.7 * semantic
        marker = next((m for m in SHIFT_MARKERS if m in sent.text.lower()), None)
        if marker is not None:
            score *= 0.8
        drift = score < config.topic_drift
        sentences.append(
            {
                "text": sent.text,
                "score": round(score, 4),
                "keyword_overlap": round(overlap, 4),
                "semantic": round(best, 4),
                "closest": anchor,
                "shift_marker": marker,
                "drift": drift,
            }
        )
        if drift:
            issues.append(
                CoherenceIssue(
                    type="topic_drift",
                    description=(
                        f"Sentence drifts from the conversation's topic "
                        f"(topic score {score:.2f}; closest topic: {anchor!r})"
                    ),
                    severity=0.7 if marker else 0.6,
                    span=char_span(sent),
                    suggestion="Remove the off-topic sentence or tie it to the current topic.",
                )
            )
    if not sentences:
        details = {"applicable": True, "reason": "no content sentences", "nodes": len(nodes)}
        return DimensionScore(score=1.0, details=details), []
    total = sum(len(s["text"]) for s in sentences)
    score = sum(s["score"] * len(s["text"]) for s in sentences) / total
    unrelated = all(s["drift"] for s in sentences)
    if unrelated:
        issues.append(
            CoherenceIssue(
                type="topic_unrelated",
                description="The response is unrelated to the conversation's topic",
                severity=0.8,
                suggestion="Respond about the current topic: "
                + ", ".join(n.phrase for n in sorted(nodes, key=lambda n: -n.weight)[:3]),
            )
        )
    details = {
        "applicable": True,
        "drift_detected": any(s["drift"] for s in sentences),
        "unrelated": unrelated,
        "topics": [n.phrase for n in nodes],
        "edges": [list(e) for e in _edges(nodes, vectors)],
        "sentences": sentences,
    }
    return DimensionScore(score=round(min(1.0, score), 4), details=details), issues
