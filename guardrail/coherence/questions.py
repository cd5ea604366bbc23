"""Question classification over a spaCy parse: polar, wh- (with its word), how, alternative.

``classify_question(doc)`` returns a :class:`QuestionInfo` with the type, the wh-word, the
*answer kind* the question asks for (a time for "what time", a quantity for "how many", …) and,
for alternative questions, the offered options. Pure: no model beyond the parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from guardrail.text.segmentation import parsed_sentences

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


class QuestionType(StrEnum):
    """The QUD check's question types."""

    YES_NO = "yes_no"
    WH = "wh"
    HOW = "how"
    ALTERNATIVE = "alternative"
    STATEMENT = "statement"
    """Not a question: a statement or a request; relevance is judged by content."""


class AnswerKind(StrEnum):
    """What kind of content answers the question."""

    TIME = "time"
    PERSON = "person"
    PLACE = "place"
    REASON = "reason"
    QUANTITY = "quantity"
    DURATION = "duration"
    MANNER = "manner"
    THING = "thing"
    POLARITY = "polarity"
    OPTION = "option"
    ACTION = "action"
    """A request: answered by doing it (confirmation), declining, or asking for details."""
    CONTENT = "content"


@dataclass(frozen=True)
class QuestionInfo:
    """The classification of one question."""

    type: QuestionType
    kind: AnswerKind
    wh_word: str | None = None
    options: list[str] = field(default_factory=list)
    focus_lemma: str | None = None
    """Main verb / predicate lemma of the question (for polar paraphrase checks)."""

    @property
    def label(self) -> str:
        """``wh:when``, ``yes_no``, ``how:many`` …"""
        if self.type is QuestionType.WH and self.wh_word:
            return f"wh:{self.wh_word}"
        if self.type is QuestionType.HOW and self.wh_word:
            return f"how:{self.wh_word}" if self.wh_word != "how" else "how"
        return self.type.value


WH_WORDS = {"what", "which", "who", "whom", "whose", "where", "when", "why"}
TIME_NOUNS = {"time", "date", "day", "hour", "year", "month", "week", "moment", "deadline"}
PLACE_NOUNS = {"place", "location", "room", "city", "country", "address", "venue", "building"}
PERSON_NOUNS = {"person", "people", "one", "guy", "woman", "man", "colleague", "employee"}
REASON_NOUNS = {"reason", "cause", "purpose"}
HOW_QUANTITY = {"many", "much", "old", "far", "big", "large", "tall", "high", "often"}
HOW_DURATION = {"long", "soon"}
LEAD_IN = {"and", "so", "but", "ok", "okay", "well", "then", "also", "oh", "hey", "please"}
WH_KIND = {
    "who": AnswerKind.PERSON,
    "whom": AnswerKind.PERSON,
    "whose": AnswerKind.PERSON,
    "where": AnswerKind.PLACE,
    "when": AnswerKind.TIME,
    "why": AnswerKind.REASON,
}


def _question_sentence(doc: Doc) -> Span:
    """The last sentence that ends with '?' (the question asked), else the first sentence."""
    sents = list(parsed_sentences(doc))
    asked = [s for s in sents if s.text.rstrip().endswith("?")]
    return asked[-1] if asked else sents[0]


def _first_content(sent: Span) -> list[Token]:
    toks = [t for t in sent if not t.is_punct]
    while toks and toks[0].lower_ in LEAD_IN:
        toks = toks[1:]
    return toks


def _options(sent: Span) -> list[str]:
    """The conjuncts joined by 'or' in an alternative question ("Monday or Tuesday")."""
    for tok in sent:
        if tok.lower_ == "or" and tok.dep_ == "cc":
            head = tok.head
            conjuncts = [head, *[c for c in head.children if c.dep_ == "conj"]]
            if len(conjuncts) < 2:
                continue
            out = []
            for c in conjuncts:
                nested = {t.i for d in c.children if d.dep_ == "conj" for t in d.subtree}
                words = [
                    t.text
                    for t in c.subtree
                    if t.i not in nested and t.dep_ not in {"cc", "punct", "det"}
                ]
                # a verb conjunct ("stay or go") keeps only itself and its objects
                out.append(" ".join(words) if c.pos_ != "AUX" else c.text)
            return out
    return []


def _wh_kind(word: Token) -> AnswerKind:
    lower = word.lower_
    if lower in WH_KIND:
        return WH_KIND[lower]
    # "what time", "which room", "what reason": the noun the wh-determiner modifies decides
    noun = word.head if word.dep_ == "det" else None
    if noun is None:
        for child in word.head.children if word.dep_ != "ROOT" else []:
            if child.dep_ in {"attr", "nsubj"} and child.pos_ == "NOUN" and child is not word:
                noun = child
    if noun is not None:
        lemma = noun.lemma_.lower()
        if lemma in TIME_NOUNS:
            return AnswerKind.TIME
        if lemma in PLACE_NOUNS:
            return AnswerKind.PLACE
        if lemma in PERSON_NOUNS:
            return AnswerKind.PERSON
        if lemma in REASON_NOUNS:
            return AnswerKind.REASON
    return AnswerKind.THING


def classify_question(doc: Doc) -> QuestionInfo:
    """Classify the question in ``doc`` (the last sentence ending in '?' if there are several)."""
    if not doc.text.strip():
        return QuestionInfo(QuestionType.STATEMENT, AnswerKind.CONTENT)
    sent = _question_sentence(doc)
    toks = _first_content(sent)
    root = sent.root
    focus = root.lemma_.lower()
    if root.lemma_ == "be":
        attrs = [c for c in root.children if c.dep_ in {"attr", "acomp", "prep"}]
        if attrs:
            focus = attrs[0].lemma_.lower()
    is_question = sent.text.rstrip().endswith("?")
    if not toks:
        return QuestionInfo(QuestionType.STATEMENT, AnswerKind.CONTENT)
    first = toks[0]
    wh = next((t for t in toks[:3] if t.lower_ in WH_WORDS or t.lower_ == "how"), None)
    if wh is not None and (is_question or wh.i == toks[0].i):
        if wh.lower_ == "how":
            nxt = wh.nbor(1) if wh.i + 1 < len(wh.doc) else None
            modifier = nxt.lower_ if nxt is not None else ""
            if modifier in HOW_QUANTITY:
                return QuestionInfo(QuestionType.HOW, AnswerKind.QUANTITY, modifier, [], focus)
            if modifier in HOW_DURATION:
                return QuestionInfo(QuestionType.HOW, AnswerKind.DURATION, modifier, [], focus)
            if modifier == "come":
                return QuestionInfo(QuestionType.WH, AnswerKind.REASON, "why", [], focus)
            return QuestionInfo(QuestionType.HOW, AnswerKind.MANNER, "how", [], focus)
        return QuestionInfo(QuestionType.WH, _wh_kind(wh), wh.lower_, [], focus)
    inverted = first.pos_ == "AUX" or first.tag_ == "MD"
    if is_question or (inverted and first.dep_ in {"aux", "ROOT", "auxpass"}):
        options = _options(sent)
        if options:
            return QuestionInfo(QuestionType.ALTERNATIVE, AnswerKind.OPTION, None, options, focus)
        if is_question or inverted:
            return QuestionInfo(QuestionType.YES_NO, AnswerKind.POLARITY, None, [], focus)
    if _is_request(sent, toks):
        return QuestionInfo(QuestionType.STATEMENT, AnswerKind.ACTION, None, [], focus)
    return QuestionInfo(QuestionType.STATEMENT, AnswerKind.CONTENT, None, [], focus)


def _is_request(sent: Span, toks: list[Token]) -> bool:
    """Imperative ("Schedule …", "Please …", "Let's …") or "I need / want you to …"."""
    root = sent.root
    has_subject = any(c.dep_ in {"nsubj", "nsubjpass", "expl"} for c in root.children)
    if sent.text.lower().lstrip().startswith(("please", "let's", "let us")):
        return True
    if root.tag_ == "VB" and not has_subject:
        return True
    subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
    wants = (
        root.lemma_ in {"need", "want", "like"} and subj is not None and subj.lower_ in {"i", "we"}
    )
    return wants and any(c.dep_ in {"ccomp", "xcomp"} for c in root.children)


def is_elliptical(doc: Doc) -> bool:
    """A fragment that leans on an earlier question: "And Sarah?", "What about Tuesday?"."""
    words = [t for t in doc if not t.is_punct]
    if not words:
        return True
    has_verb = any(t.pos_ in {"VERB", "AUX"} for t in words)
    lead = " ".join(t.lower_ for t in words[:2])
    return (not has_verb and len(words) <= 4) or lead in {"what about", "how about"}
