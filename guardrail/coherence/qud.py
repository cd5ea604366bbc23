"""QUD relevance: does the response answer the question under discussion? (dimension 1)

``coverage`` looks for content of the kind the question asks for, found with the spaCy parse
(a TIME/DATE entity for *when*, a PERSON for *who*, a place entity or place PP for *where*, a
reason clause for *why*, a quantity for *how many*, yes/no or a paraphrase for polar questions,
one of the offered options for alternatives). ``similarity`` is the embedding cosine of question
and answer (the answer's vector: the normalised mean of its sentences'). ``score = 0.6 × coverage + 0.4 × similarity`` (the QUD check's weights).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from guardrail.coherence.acts import DialogueAct, classify_by_rules
from guardrail.coherence.context import CoherenceContext, Vectors, content_lemmas
from guardrail.coherence.questions import AnswerKind, QuestionInfo, classify_question
from guardrail.config import CoherenceConfig
from guardrail.report import CoherenceIssue, QUDRelevance
from guardrail.text.segmentation import parsed_sentences

if TYPE_CHECKING:
    from spacy.tokens import Doc

TIME_WORDS = re.compile(
    r"\b(\d{1,2}(:\d{2})?\s?(am|pm|a\.m\.|p\.m\.)|noon|midnight|tonight|today|tomorrow|"
    r"yesterday|o'clock|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"morning|afternoon|evening|next week|this week)\b",
    re.IGNORECASE,
)
PLACE_PREPS = {"in", "at", "on", "near", "inside", "outside", "behind", "beside", "by", "next"}
REASON_MARKERS = ("because", "due to", "owing to", "as a result", "the reason", "so that", "since")
MANNER_PREPS = {"by", "using", "via", "through", "with"}
POLAR_WORDS = {
    "yes": 1.0, "no": 1.0, "yeah": 1.0, "yep": 1.0, "nope": 1.0, "sure": 0.9, "certainly": 0.9,
    "absolutely": 0.9, "definitely": 0.9, "correct": 0.9, "right": 0.8, "unfortunately": 0.8,
    "indeed": 0.9, "of course": 0.9, "not": 0.6,
}  # fmt: skip
PERSONAL_PRONOUNS = {"he", "she", "they"}
HEDGES = ("i don't know", "i do not know", "i'm not sure", "i am not sure", "not certain")


def _ents(doc: Doc, labels: set[str]) -> list[str]:
    return [e.text for e in doc.ents if e.label_ in labels]


def _time_coverage(answer: Doc, wh_noun_time: bool) -> float:
    times = _ents(answer, {"TIME"})
    dates = _ents(answer, {"DATE"})
    if times or (dates and not wh_noun_time):
        return 1.0
    if dates or TIME_WORDS.search(answer.text):
        return 0.8 if not wh_noun_time else 0.7
    return 0.0


def _place_coverage(answer: Doc) -> float:
    if _ents(answer, {"GPE", "LOC", "FAC"}):
        return 1.0
    temporal = {t.i for e in answer.ents if e.label_ in {"TIME", "DATE"} for t in e}
    for tok in answer:
        if tok.dep_ == "prep" and tok.lower_ in PLACE_PREPS:
            objs = [c for c in tok.children if c.dep_ == "pobj" and c.i not in temporal]
            if objs and objs[0].pos_ in {"NOUN", "PROPN"}:
                return 0.8
    return 0.0


def _reason_coverage(answer: Doc) -> float:
    lower = answer.text.lower()
    if any(re.search(rf"\b{re.escape(m)}\b", lower) for m in REASON_MARKERS):
        return 1.0
    for tok in answer:
        if (
            tok.dep_ == "mark"
            and tok.lower_ in {"because", "since", "as"}
            and tok.head.dep_ == "advcl"
        ):
            return 1.0
        if tok.dep_ in {"advcl", "xcomp"} and any(c.lower_ == "to" for c in tok.children):
            return 0.7  # purpose infinitive: "to keep costs down"
    return 0.0


def _quantity_coverage(answer: Doc, duration: bool) -> float:
    labels = {"CARDINAL", "QUANTITY", "MONEY", "PERCENT"} | (
        {"DATE", "TIME"} if duration else set()
    )
    if _ents(answer, labels) or any(t.like_num for t in answer):
        return 1.0
    if any(t.lower_ in {"none", "several", "few", "many", "dozen", "all"} for t in answer):
        return 0.6
    return 0.0


def _person_coverage(answer: Doc) -> float:
    if _ents(answer, {"PERSON"}):
        return 1.0
    if _ents(answer, {"ORG", "NORP"}) or any(t.tag_ == "NNP" for t in answer):
        return 0.6
    if any(t.lower_ in PERSONAL_PRONOUNS and t.dep_ in {"nsubj", "nsubjpass"} for t in answer):
        return 0.7  # "She will present it": a person, named earlier (reference checks it)
    return 0.0


def _polar_coverage(answer: Doc, info: QuestionInfo) -> float:
    lower = answer.text.lower().strip()
    first = next((t for t in answer if not t.is_punct), None)
    if first is not None and first.lower_ in POLAR_WORDS and first.lower_ != "not":
        return POLAR_WORDS[first.lower_]
    if any(h in lower for h in HEDGES):
        return 0.5
    for phrase, value in POLAR_WORDS.items():
        if " " in phrase and lower.startswith(phrase):
            return value
    negated = any(t.dep_ == "neg" for t in answer)
    predicates = {t.lemma_.lower() for t in answer if t.pos_ in {"VERB", "ADJ", "NOUN", "ADP"}}
    if info.focus_lemma and info.focus_lemma in predicates:
        return 0.9 if negated else 0.8  # a paraphrase that (de)asserts the questioned predicate
    return 0.6 if negated else 0.2


def _option_coverage(answer: Doc, options: list[str]) -> float:
    lower = answer.text.lower()
    hits = [o for o in options if o and o.lower() in lower]
    if len(hits) == 1:
        return 1.0
    if hits:
        return 0.7 if any(t.dep_ == "neg" for t in answer) else 0.5
    return 0.2


def _thing_coverage(answer: Doc, question: Doc) -> float:
    asked = content_lemmas(question)
    said = content_lemmas(answer)
    new = said - asked
    if new and said & asked:
        return 0.9
    if new:
        return 0.6
    return 0.3


#: Requests for information ("Tell me about John") are answered by content, not by an action.
INFO_REQUEST_VERBS = frozenset(
    {"tell", "explain", "describe", "summarize", "summarise", "list", "show", "give", "name"}
)


def _action_coverage(answer: Doc, question: Doc, info: QuestionInfo) -> float:
    if info.focus_lemma in INFO_REQUEST_VERBS:
        return _thing_coverage(answer, question)
    acts = {s: classify_by_rules(s).act for s in parsed_sentences(answer)}
    verbs = {t.lemma_.lower() for t in answer if t.pos_ in {"VERB", "AUX"}}
    if set(acts.values()) & {DialogueAct.CONFIRMATION, DialogueAct.REFUSAL}:
        return 1.0 if info.focus_lemma in verbs else 0.8
    asked = content_lemmas(question)
    for sent, act in acts.items():
        if (act.is_question or act is DialogueAct.OFFER) and content_lemmas(sent) & asked:
            return 0.6  # asking for details of the request
    return 0.4 if info.focus_lemma in verbs else 0.1


def coverage(answer: Doc, question: Doc, info: QuestionInfo) -> float:
    """How much of the content the question asks for the answer contains (0…1)."""
    kind = info.kind
    if kind is AnswerKind.TIME:
        return _time_coverage(answer, wh_noun_time=info.wh_word in {"what", "which"})
    if kind is AnswerKind.PLACE:
        return _place_coverage(answer)
    if kind is AnswerKind.PERSON:
        return _person_coverage(answer)
    if kind is AnswerKind.REASON:
        return _reason_coverage(answer)
    if kind in {AnswerKind.QUANTITY, AnswerKind.DURATION}:
        return _quantity_coverage(answer, duration=kind is AnswerKind.DURATION)
    if kind is AnswerKind.MANNER:
        manner = any(t.dep_ == "prep" and t.lower_ in MANNER_PREPS for t in answer)
        steps = any(t.lower_ in {"first", "then", "step", "finally"} for t in answer)
        return 0.9 if manner or steps else 0.4
    if kind is AnswerKind.POLARITY:
        return _polar_coverage(answer, info)
    if kind is AnswerKind.OPTION:
        return _option_coverage(answer, info.options)
    if kind is AnswerKind.THING:
        return _thing_coverage(answer, question)
    if kind is AnswerKind.ACTION:
        return _action_coverage(answer, question, info)
    asked = content_lemmas(question)
    return len(asked & content_lemmas(answer)) / len(asked) if asked else 0.5


def answer_sentences(ctx: CoherenceContext) -> list[str]:
    """The response's sentences (the spaCy parse's), whose embeddings stand for the answer's."""
    return [s.text for s in parsed_sentences(ctx.answer) if s.text.strip()]


def similarity(ctx: CoherenceContext, vectors: Vectors, text: str) -> float:
    """Cosine of ``text`` and the answer: the normalised mean of the answer's sentence vectors
    (each sentence is embedded anyway, for its dialogue act and as a claim; a long answer is
    not truncated at the embedder's length limit)."""
    sents = [t for t in answer_sentences(ctx) if t in vectors]
    if not sents or not text.strip():
        return vectors.cos(ctx.response, text) if ctx.response in vectors else 0.0
    mean = np.mean([vectors.vector(t) for t in sents], axis=0)
    norm = float(np.linalg.norm(mean))
    return float(mean @ vectors.vector(text)) / norm if norm > 0 else 0.0


def qud_texts(ctx: CoherenceContext) -> list[str]:
    """Strings this analyser needs embedded."""
    out = answer_sentences(ctx) or [ctx.response]
    if ctx.question is not None:
        out.append(ctx.question.text)
    if ctx.query is not None:
        out.append(ctx.query.text)
    return out


def addressed_by_coverage(cov: float, config: CoherenceConfig) -> bool | None:
    """``addresses_qud`` when the coverage alone settles it, whatever the similarity (0…1)
    adds to ``0.6 × coverage``; ``None`` when the similarity decides."""
    if 0.6 * cov >= config.qud_addresses:
        return True
    if 0.6 * cov + 0.4 + 1e-6 < config.qud_addresses:
        return False
    return None


def analyze_qud(
    ctx: CoherenceContext, vectors: Vectors, config: CoherenceConfig
) -> tuple[QUDRelevance, list[CoherenceIssue]]:
    """Score how well the response addresses the question under discussion."""
    if ctx.question is None:
        details = {"applicable": False, "reason": "no question in context"}
        return QUDRelevance(details=details), []
    info = classify_question(ctx.question)
    cov = coverage(ctx.answer, ctx.question, info)
    sim = max(0.0, similarity(ctx, vectors, ctx.question.text))
    if ctx.query is not None and ctx.question_source == "qud_stack":
        sim = max(sim, similarity(ctx, vectors, ctx.query.text))
    score = max(0.0, min(1.0, 0.6 * cov + 0.4 * sim))
    issues: list[CoherenceIssue] = []
    if score < config.qud_not_addressed:
        issues.append(
            CoherenceIssue(
                type="qud_not_addressed",
                description=f"Response does not address the question: {ctx.question.text!r}",
                severity=1.0,
                suggestion=f"Answer the question directly ({info.kind.value} expected).",
            )
        )
    elif score < config.qud_partially_addressed:
        issues.append(
            CoherenceIssue(
                type="qud_partially_addressed",
                description=f"Response partially addresses the question: {ctx.question.text!r}",
                severity=0.5,
                suggestion=f"Give the {info.kind.value} the question asks for.",
            )
        )
    result = QUDRelevance(
        score=round(score, 4),
        addresses_qud=score >= config.qud_addresses,
        question_type=info.label,
        coverage=round(cov, 4),
        similarity=round(sim, 4),
        details={
            "applicable": True,
            "question": ctx.question.text,
            "question_source": ctx.question_source,
            "answer_kind": info.kind.value,
            "options": info.options,
            "qud_stack_depth": len(ctx.qud_stack),
        },
    )
    return result, issues
