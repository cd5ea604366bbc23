"""The coherence check: parse once, embed once, score five dimensions, weigh them (stage 1).

Example::

    from guardrail.coherence import check_coherence
    from guardrail.models import load_embedder
    from guardrail.nlp import load_spacy

    result = check_coherence(
        response="The meeting with John is at 2pm on Monday.",
        query="What time is the meeting with John?",
        dialogue=DialogueState(),
        nlp=load_spacy(),
        embedder=load_embedder(),
    )
    result.qud_relevance.addresses_qud   # True
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from numpy.typing import NDArray

from guardrail.coherence.acts import prototype_texts
from guardrail.coherence.context import CoherenceContext, ContextTurn, Vectors
from guardrail.coherence.discourse import analyze_discourse, discourse_texts
from guardrail.coherence.entity import analyze_entity, entity_texts, find_references
from guardrail.coherence.qud import addressed_by_coverage, analyze_qud, coverage, qud_texts
from guardrail.coherence.questions import classify_question, is_elliptical
from guardrail.coherence.reference import analyze_reference
from guardrail.coherence.topic import analyze_topic, topic_texts
from guardrail.config import CoherenceConfig, CoherenceWeights
from guardrail.errors import InputError
from guardrail.inputs import DialogueState
from guardrail.report import CoherenceResult, DimensionScore, QUDRelevance
from guardrail.text.segmentation import parsed_sentences

logger = logging.getLogger(__name__)


def _context_texts(
    query: str, dialogue: DialogueState, history_turns: int
) -> tuple[list[str], list[str], str]:
    """The dialogue window's speakers and texts (the query as the latest user turn) and the
    QUD stack's top (``""``: none)."""
    window = [t for t in dialogue.turns if t.text.strip()][-history_turns:] if history_turns else []
    speakers: list[str] = [t.speaker for t in window]
    texts = [t.text for t in window]
    query = query.strip()
    if query and (not texts or texts[-1].strip() != query):
        speakers.append("user")
        texts.append(query)
    top = dialogue.qud_stack[-1].strip() if dialogue.qud_stack else ""
    return speakers, texts, top


def context_texts(query: str, dialogue: DialogueState, history_turns: int = 6) -> list[str]:
    """The texts besides the response that :func:`build_context` parses (for a caller that
    parses them ahead, with the response, in one ``nlp.pipe``)."""
    _, texts, top = _context_texts(query, dialogue, history_turns)
    return [*texts, top] if top else texts


def build_context(
    response: str,
    query: str,
    dialogue: DialogueState,
    nlp: Any,
    knowledge_base: Any = None,
    history_turns: int = 6,
    response_doc: Any = None,
) -> CoherenceContext:
    """Parse the response, the query, the QUD and the dialogue window in one ``nlp.pipe``.

    ``response_doc``: the response already parsed by ``nlp`` (the pipeline's shared parse); it
    is used instead of parsing the response again when its text is the response's.
    """
    if not response.strip():
        raise InputError("the response is empty: there is nothing to check for coherence")
    speakers, texts, top = _context_texts(query, dialogue, history_turns)
    query = query.strip()
    rest = [*texts, top] if top else texts  # the QUD stack's top is parsed only when there is one
    if response_doc is not None and getattr(response_doc, "text", None) == response:
        docs = [response_doc, *nlp.pipe(rest)] if rest else [response_doc]
    else:
        docs = list(nlp.pipe([response, *rest]))
    answer, turn_docs = docs[0], docs[1 : 1 + len(texts)]
    top_doc = docs[-1] if top else None
    turns = [
        ContextTurn(speaker=s, text=t, doc=d, age=len(texts) - 1 - i)
        for i, (s, t, d) in enumerate(zip(speakers, texts, turn_docs, strict=True))
    ]
    query_doc = turns[-1].doc if query else None
    question, source = None, "none"
    if query_doc is not None:
        question, source = query_doc, "query"
        if top and is_elliptical(query_doc):
            question, source = top_doc, "qud_stack"
    elif top:
        question, source = top_doc, "qud_stack"
    else:
        last_user = next((t for t in reversed(turns) if t.speaker == "user"), None)
        if last_user is not None:
            question, source = last_user.doc, "dialogue"
    return CoherenceContext(
        response=response,
        answer=answer,
        query=query_doc,
        question=question,
        question_source=source,
        turns=turns,
        topics=[t for t in dialogue.topics if t.strip()],
        entities=list(dialogue.entities),
        qud_stack=list(dialogue.qud_stack),
        knowledge_base=knowledge_base,
    )


def weighted_score(
    weights: CoherenceWeights,
    qud: DimensionScore,
    topic: DimensionScore,
    entity: DimensionScore,
    discourse: DimensionScore,
    reference: DimensionScore,
) -> float:
    """The coherence weights' sum, renormalised when the weights do not add up to 1."""
    pairs = [
        (weights.qud, qud.score),
        (weights.topic, topic.score),
        (weights.entity, entity.score),
        (weights.discourse, discourse.score),
        (weights.reference, reference.score),
    ]
    total = sum(w for w, _ in pairs)
    if total <= 0:
        return 1.0
    return max(0.0, min(1.0, sum(w * s for w, s in pairs) / total))


def embed_prototypes(embedder: Any) -> NDArray[np.float32]:
    """Embeddings of the dialogue-act prototype sentences (compute once per embedder)."""
    return np.asarray(
        embedder.encode(prototype_texts(), normalize_embeddings=True, show_progress_bar=False),
        dtype=np.float32,
    )


def check_coherence(
    response: str,
    query: str,
    dialogue: DialogueState,
    nlp: Any,
    embedder: Any,
    config: CoherenceConfig | None = None,
    knowledge_base: Any = None,
    prototypes: NDArray[np.float32] | None = None,
    response_doc: Any = None,
) -> CoherenceResult:
    """Score the five coherence dimensions of ``response`` and weigh them.

    Args:
        response: the answer to check.
        query: the user's latest turn (may be empty; the QUD stack then supplies the question).
        dialogue: turns, topics, entity registry and QUD stack.
        nlp: a spaCy ``Language`` with a parser and NER.
        embedder: a sentence-transformers model (``encode(texts, normalize_embeddings=True)``).
        config: thresholds and weights.
        knowledge_base: optional handle with ``find_entity(name)``.
        prototypes: precomputed :func:`embed_prototypes` (computed here when omitted).
        response_doc: the response's spaCy parse when the caller already has it.
    """
    cfg = config or CoherenceConfig()
    ctx = build_context(
        response, query, dialogue, nlp, knowledge_base, cfg.history_turns, response_doc
    )
    references = find_references(ctx)
    texts = qud_texts(ctx) + topic_texts(ctx) + entity_texts(references) + discourse_texts(ctx)
    vectors = Vectors.encode(embedder, texts)
    if prototypes is None:
        prototypes = embed_prototypes(embedder)
    qud, qud_issues = analyze_qud(ctx, vectors, cfg)
    topic, topic_issues = analyze_topic(ctx, vectors, cfg)
    entity, entity_issues = analyze_entity(ctx, references, vectors, cfg)
    discourse, discourse_issues = analyze_discourse(ctx, vectors, prototypes, cfg)
    reference, reference_issues = analyze_reference(ctx)
    issues = qud_issues + topic_issues + entity_issues + discourse_issues + reference_issues
    score = weighted_score(cfg.weights, qud, topic, entity, discourse, reference)
    logger.debug("coherence %.3f with %d issues", score, len(issues))
    return CoherenceResult(
        score=round(score, 4),
        qud_relevance=qud,
        topic_consistency=topic,
        entity_consistency=entity,
        discourse_coherence=discourse,
        reference_consistency=reference,
        issues=issues,
    )


def check_qud(
    response: str,
    query: str,
    dialogue: DialogueState,
    nlp: Any,
    embedder: Any,
    config: CoherenceConfig | None = None,
    response_doc: Any = None,
) -> QUDRelevance:
    """The QUD check alone, for a text other than the checked response (the decision
    asks whether what remains after removals still answers the question: ``addresses_qud``).

    When the coverage alone settles ``addresses_qud`` (:func:`addressed_by_coverage`), nothing
    is embedded: ``similarity`` is ``None`` and ``score`` the bound that settles it.
    ``response_doc``: a parse of ``response`` the caller already has (see
    :func:`kept_sentences_doc`)."""
    cfg = config or CoherenceConfig()
    ctx = build_context(response, query, dialogue, nlp, None, cfg.history_turns, response_doc)
    if ctx.question is not None:
        info = classify_question(ctx.question)
        cov = coverage(ctx.answer, ctx.question, info)
        settled = addressed_by_coverage(cov, cfg)
        if settled is not None:
            bound = 0.6 * cov if settled else min(1.0, 0.6 * cov + 0.4)
            return QUDRelevance(
                score=round(bound, 4),
                addresses_qud=settled,
                question_type=info.label,
                coverage=round(cov, 4),
                details={
                    "applicable": True,
                    "question": ctx.question.text,
                    "similarity": "not computed: the coverage settles addresses_qud",
                },
            )
    qud, _ = analyze_qud(ctx, Vectors.encode(embedder, qud_texts(ctx)), cfg)
    return qud


def kept_sentences_doc(doc: Any, text: str) -> Any:
    """The parse of ``text`` made of ``doc``'s own sentences when ``text`` is ``doc`` with
    whole sentences removed (the delivered text after removals), else ``None``: the kept
    sentences keep the tags, parse and entities they had in the full response."""
    from spacy.tokens import Doc

    wanted = text.split()
    kept: list[Any] = []
    at = 0
    for sent in parsed_sentences(doc):
        words = sent.text.split()
        if words and wanted[at : at + len(words)] == words:
            kept.append(sent)
            at += len(words)
    if not kept or at != len(wanted):
        return None
    return Doc.from_docs([s.as_doc() for s in kept])
