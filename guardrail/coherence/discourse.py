"""Discourse coherence: does the response perform the act the last turn calls for? (dimension 4)

The last user turn's act sets what is expected (question → answer or clarification; request →
confirmation, clarification or refusal). The response's main act (its first substantive
sentence, by :mod:`guardrail.coherence.acts`) is compared with it. A question back counts as a
clarification when it is about the last turn. A question that presupposes an event nobody
mentioned ("Why did you cancel the meeting?" after a request to schedule one) is a
``discourse_break``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from guardrail.coherence.acts import ActPrediction, DialogueAct, classify_act
from guardrail.coherence.context import CoherenceContext, Vectors, char_span, content_lemmas
from guardrail.config import CoherenceConfig
from guardrail.report import CoherenceIssue, DimensionScore
from guardrail.text.segmentation import parsed_sentences

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

A = DialogueAct
#: Acts that satisfy each act of the last turn (``None``: anything goes).
EXPECTED: dict[DialogueAct, set[DialogueAct] | None] = {
    A.QUESTION_YN: {A.INFORM, A.CONFIRMATION, A.REFUSAL, A.CLARIFICATION},
    A.QUESTION_WH: {A.INFORM, A.CONFIRMATION, A.REFUSAL, A.CLARIFICATION},
    A.REQUEST: {A.CONFIRMATION, A.CLARIFICATION, A.REFUSAL},
    A.OFFER: {A.CONFIRMATION, A.REFUSAL, A.ACKNOWLEDGE, A.INFORM, A.THANKS, A.CLARIFICATION},
}
#: Acceptable but weaker responses, with their score.
PARTIAL: dict[DialogueAct, dict[DialogueAct, float]] = {
    A.REQUEST: {A.INFORM: 0.7, A.ACKNOWLEDGE: 0.6},
    A.QUESTION_YN: {A.ACKNOWLEDGE: 0.5},
    A.QUESTION_WH: {A.ACKNOWLEDGE: 0.4},
}
SOCIAL = {A.GREETING, A.THANKS, A.ACKNOWLEDGE}
PAST_AUX = {"did", "have", "has", "had"}


@dataclass(frozen=True)
class Presupposition:
    sentence: Span
    verb: str
    """Lemma of the presupposed event's verb."""


def turn_act(doc: Doc, acts: list[ActPrediction]) -> ActPrediction:
    """The act a turn calls a reply to: its question / request / offer, else its last act."""
    for pred in acts:
        if pred.act.is_question or pred.act in {A.REQUEST, A.OFFER}:
            return pred
    return acts[-1]


def presupposition(sent: Span) -> Presupposition | None:
    """The event a wh-question takes for granted: "why …", "how come …", "when did you …"."""
    words = [t for t in sent if not t.is_punct]
    if not words or not sent.text.rstrip().endswith("?"):
        return None
    first = words[0].lower_
    root = sent.root
    if root.pos_ not in {"VERB", "AUX"} or root.lemma_ in {"be", "have", "do"}:
        return None
    aux = {c.lower_ for c in root.children if c.dep_ in {"aux", "auxpass"}}
    why = first == "why" or (first == "how" and len(words) > 1 and words[1].lower_ == "come")
    past_wh = first in {"when", "where", "who", "what", "how"} and bool(aux & PAST_AUX)
    if why or past_wh:
        return Presupposition(sent, root.lemma_.lower())
    return None


def _context_verbs(ctx: CoherenceContext) -> list[str]:
    return sorted(
        {t.lemma_.lower() for turn in ctx.turns for t in turn.doc if t.pos_ in {"VERB", "NOUN"}}
    )


def discourse_texts(ctx: CoherenceContext) -> list[str]:
    """Strings this analyser needs embedded."""
    out = [s.text for s in parsed_sentences(ctx.answer)]
    if ctx.last_turn is not None:
        out += [ctx.last_turn.text] + [s.text for s in parsed_sentences(ctx.last_turn.doc)]
    presupposed = [
        p.verb for s in parsed_sentences(ctx.answer) if (p := presupposition(s)) is not None
    ]
    if presupposed:
        out += presupposed + _context_verbs(ctx)
    return out


def _satisfied(
    p: Presupposition, ctx: CoherenceContext, vectors: Vectors, threshold: float
) -> bool:
    verbs = _context_verbs(ctx)
    if any(v == p.verb or (len(p.verb) >= 5 and v.startswith(p.verb[:5])) for v in verbs):
        return True
    best, _ = vectors.best(p.verb, verbs)
    return best >= threshold


def analyze_discourse(
    ctx: CoherenceContext,
    vectors: Vectors,
    prototypes: NDArray[np.float32] | None,
    config: CoherenceConfig,
) -> tuple[DimensionScore, list[CoherenceIssue]]:
    """Compare the act the response performs with the act the last turn calls for."""
    last = ctx.last_turn
    if last is None:
        return DimensionScore(details={"applicable": False, "reason": "no previous turn"}), []
    floor = config.act_prototype_similarity

    def act_of(sent: Span) -> ActPrediction:
        vec = vectors.vector(sent.text) if sent.text in vectors else None
        return classify_act(sent, vec, prototypes, floor)

    called = turn_act(last.doc, [act_of(s) for s in parsed_sentences(last.doc)])
    sents = list(parsed_sentences(ctx.answer))
    acts = [act_of(s) for s in sents]
    main_i = next((i for i, a in enumerate(acts) if a.act not in SOCIAL), 0)
    main = acts[main_i].act
    last_lemmas = content_lemmas(last.doc)
    issues: list[CoherenceIssue] = []
    score = 1.0
    breaks: list[dict[str, Any]] = []
    for i, sent in enumerate(sents):
        p = presupposition(sent)
        if p is None or _satisfied(p, ctx, vectors, config.presupposition_similarity):
            continue
        breaks.append({"sentence": sent.text, "presupposed_event": p.verb})
        score = min(score, 0.1 if i == main_i else 0.4)
        issues.append(
            CoherenceIssue(
                type="discourse_break",
                description=(
                    f"The question presupposes that something was '{p.verb}'-ed, "
                    "which nobody said in this conversation"
                ),
                severity=0.9 if i == main_i else 0.7,
                span=char_span(sent),
                suggestion=f"Respond to the user's {called.act.value.replace('_', ' ')} "
                "instead of asking about something they did not say.",
            )
        )
    asks_back = main.is_question or (
        main is A.OFFER and sents[main_i].text.rstrip().endswith("?")
    )  # "Would you like me to open a return request?" after "I want to return my shoes."
    if asks_back and not breaks:
        related = vectors.cos(sents[main_i].text, last.text) >= config.clarification_similarity
        if related or content_lemmas(sents[main_i]) & last_lemmas or _refers_back(sents[main_i]):
            main = A.CLARIFICATION
    expected = EXPECTED.get(called.act)
    if expected is not None and main not in expected and not breaks:
        partial = PARTIAL.get(called.act, {}).get(main)
        if partial is not None:
            score = min(score, partial)
        else:
            score = min(score, 0.4)
            issues.append(
                CoherenceIssue(
                    type="unexpected_speech_act",
                    description=(
                        f"The last turn is a {called.act.value.replace('_', ' ')}; the response "
                        f"performs a {main.value.replace('_', ' ')} instead of "
                        + " or ".join(sorted(a.value for a in expected))
                    ),
                    severity=0.6,
                    span=char_span(sents[main_i]),
                    suggestion="Answer or act on the last turn before moving on.",
                )
            )
    details = {
        "applicable": True,
        "expected_from": called.act.value,
        "expected": sorted(a.value for a in expected) if expected is not None else None,
        "response_acts": [
            {"sentence": s.text, "act": a.act.value, "method": a.method}
            for s, a in zip(sents, acts, strict=True)
        ],
        "main_act": main.value,
        "breaks": breaks,
    }
    return DimensionScore(score=round(score, 4), details=details), issues


_BACK_REFERENCES = {"it", "that", "this", "they", "them", "those", "these", "one", "ones"}
"""Pronouns that point back to the last turn's subject ("Which order is it about?")."""


def _refers_back(question: Span) -> bool:
    """Whether the question speaks of the last turn's subject through a pronoun: "Which order
    number is it about?" after "I want to return my shoes." asks a detail of the request."""
    return any(
        t.lower_ in _BACK_REFERENCES and t.pos_ == "PRON" and t.dep_ != "expl" for t in question
    )
