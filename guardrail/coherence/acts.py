"""A small dialogue-act classifier: rules over the spaCy parse, embeddings as the fallback.

``classify_act(sentence)`` reads the parse: question form (final '?', auxiliary inversion,
wh-word), imperative (a bare verb with no subject, "please"), indirect requests ("can you …",
"I need you to …"), offers ("should I …", "would you like …"), first-person reports and
commitments ("I've scheduled …", "I'll send …"), refusals ("I can't …"), greetings and thanks.
When the rules only reach the default (``inform``), the sentence's embedding is compared with
prototype sentences of each act; a close enough prototype decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from spacy.tokens import Span


class DialogueAct(StrEnum):
    QUESTION_YN = "question_yn"
    QUESTION_WH = "question_wh"
    REQUEST = "request"
    OFFER = "offer"
    CONFIRMATION = "confirmation"
    """Reporting a requested action done, or committing to it."""
    REFUSAL = "refusal"
    CLARIFICATION = "clarification"
    """A question back about the last turn (assigned by the discourse analyser, not the rules)."""
    INFORM = "inform"
    """A statement: an answer, a report, an opinion."""
    ACKNOWLEDGE = "acknowledge"
    GREETING = "greeting"
    THANKS = "thanks"

    @property
    def is_question(self) -> bool:
        return self in {DialogueAct.QUESTION_YN, DialogueAct.QUESTION_WH}


#: Prototype sentences per act for the embedding fallback.
PROTOTYPES: dict[DialogueAct, list[str]] = {
    DialogueAct.CONFIRMATION: [
        "Done, it is booked.",
        "All set, the invitation went out.",
        "Consider it done.",
        "That has been taken care of.",
    ],
    DialogueAct.REFUSAL: [
        "That is not possible.",
        "Sorry, that cannot be done.",
        "I am unable to help with that.",
    ],
    DialogueAct.ACKNOWLEDGE: ["Got it.", "Okay, understood.", "Noted.", "Alright."],
    DialogueAct.GREETING: ["Hello there!", "Good morning!", "Goodbye, have a nice day."],
    DialogueAct.THANKS: ["Thank you so much.", "Thanks a lot!", "Much appreciated."],
}
# Prototypes stay free of topical content: MiniLM similarity follows topic first, so a
# content-bearing prototype ("I need a meeting room") would capture any sentence about meetings.

GREETINGS = {"hi", "hello", "hey", "greetings", "goodbye", "bye", "morning", "evening"}
ACK_WORDS = {"ok", "okay", "alright", "noted", "understood", "got", "gotcha", "great", "perfect"}
CONFIRM_WORDS = {"done", "sure", "certainly", "absolutely", "booked", "scheduled", "yes", "yep"}
REQUEST_MODALS = {"can", "could", "would", "will"}
OFFER_VERBS = {"like", "want", "prefer"}
NEED_VERBS = {"need", "want", "like"}
FIRST_PERSON = {"i", "we"}


@dataclass(frozen=True)
class ActPrediction:
    act: DialogueAct
    confidence: float
    method: str
    """``rules`` or ``prototype``."""


def _subject(sent: Span) -> str | None:
    root = sent.root
    subj = next((c for c in root.children if c.dep_ in {"nsubj", "nsubjpass", "expl"}), None)
    return subj.lower_ if subj is not None else None


def _question_act(sent: Span, words: list[str]) -> DialogueAct:
    first, second = [*words, "", ""][:2]
    if first in {"should", "shall"} and second in {"i", "we"}:
        return DialogueAct.OFFER
    if first in {"would", "do"} and second == "you" and sent.root.lemma_ in OFFER_VERBS:
        return DialogueAct.OFFER
    if first in REQUEST_MODALS and second == "you" and sent.root.lemma_ not in OFFER_VERBS:
        return DialogueAct.REQUEST
    if first in {"what", "which", "who", "whom", "whose", "where", "when", "why", "how"}:
        return DialogueAct.QUESTION_WH
    return DialogueAct.QUESTION_YN


def classify_by_rules(sent: Span) -> ActPrediction:
    """The act of one sentence from its parse; ``inform`` with confidence 0.5 when unsure."""
    words = [t.lower_ for t in sent if not t.is_punct]
    if not words:
        return ActPrediction(DialogueAct.ACKNOWLEDGE, 0.5, "rules")
    root = sent.root
    text = sent.text.strip().lower()
    if text.endswith("?") or (sent[0].pos_ == "AUX" and sent[0].dep_ in {"aux", "ROOT"}):
        if words[0] in {"why", "what", "how"} or text.endswith("?"):
            return ActPrediction(_question_act(sent, words), 0.9, "rules")
    if words[0] in {"thanks", "thank"} or (root.lemma_ == "thank" and _subject(sent) is None):
        return ActPrediction(DialogueAct.THANKS, 0.9, "rules")
    if words[0] in GREETINGS or text.startswith(("good morning", "good afternoon")):
        return ActPrediction(DialogueAct.GREETING, 0.9, "rules")
    if words[0] == "please" or words[:2] == ["let", "'s"] or words[0] == "let's":
        return ActPrediction(DialogueAct.REQUEST, 0.9, "rules")
    subj = _subject(sent)
    if subj is None and root.tag_ == "VB" and root.dep_ == "ROOT":
        return ActPrediction(DialogueAct.REQUEST, 0.85, "rules")  # imperative
    negated = any(t.dep_ == "neg" for t in root.children) or any(
        t.dep_ == "neg" for c in root.children if c.dep_ == "aux" for t in c.children
    )
    if subj in FIRST_PERSON:
        if root.lemma_ in NEED_VERBS and any(c.dep_ in {"xcomp", "ccomp"} for c in root.children):
            return ActPrediction(DialogueAct.REQUEST, 0.8, "rules")  # "I need you to …"
        modal = [c.lower_ for c in root.children if c.dep_ == "aux"]
        if negated and (set(modal) & {"can", "ca", "could", "will", "wo"} or root.lemma_ == "be"):
            return ActPrediction(DialogueAct.REFUSAL, 0.85, "rules")
        past = root.tag_ in {"VBD", "VBN"} and root.lemma_ not in {"be", "have"}
        commit = bool(set(modal) & {"will", "'ll", "shall"})
        if (past or commit) and not negated:
            return ActPrediction(DialogueAct.CONFIRMATION, 0.8, "rules")
    if words[0] in CONFIRM_WORDS and len(words) <= 6:
        return ActPrediction(DialogueAct.CONFIRMATION, 0.8, "rules")
    if words[0] in ACK_WORDS and len(words) <= 4:
        return ActPrediction(DialogueAct.ACKNOWLEDGE, 0.8, "rules")
    if words[0] in {"unfortunately", "sorry"} and negated:
        return ActPrediction(DialogueAct.REFUSAL, 0.8, "rules")
    return ActPrediction(DialogueAct.INFORM, 0.5, "rules")


def prototype_texts() -> list[str]:
    """All prototype sentences, in a fixed order."""
    return [s for sents in PROTOTYPES.values() for s in sents]


def prototype_acts() -> list[DialogueAct]:
    """The act of each sentence of :func:`prototype_texts`."""
    return [act for act, sents in PROTOTYPES.items() for _ in sents]


def classify_act(
    sent: Span,
    vector: NDArray[np.float32] | None = None,
    prototypes: NDArray[np.float32] | None = None,
    min_similarity: float = 0.6,
) -> ActPrediction:
    """Rules first; when they only reach ``inform``, the nearest prototype if close enough."""
    rule = classify_by_rules(sent)
    if rule.confidence > 0.5 or vector is None or prototypes is None or not len(prototypes):
        return rule
    sims = prototypes @ vector
    best = int(np.argmax(sims))
    if float(sims[best]) >= min_similarity:
        return ActPrediction(prototype_acts()[best], float(sims[best]), "prototype")
    return rule
