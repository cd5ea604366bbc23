"""Facts asserted inside questions: "Did you know that X?" states X as much as "X." does.

A question asks; it does not state. But some questions carry a fact the speaker takes as true:

- presupposing openers: "did you know (that) X?", "do you know that X?", "have you heard that
  X?", "are you aware that X?", "did you notice that X?";
- rhetorical openers: "isn't it true that X?", "can you believe (that) X?", "would you believe
  X?", "isn't it amazing that X?", "who knew (that) X?";
- tag questions: "X, isn't it?", "X, didn't he?", "X, right?", "X, don't you think?";
- a statement run into a question to the user: "X, does that help?", "X; shall I book it?",
  "X - would you like a copy?";
- declarative questions, a statement said with a question mark: "So the meeting is on Friday
  at 3pm?", "Orvik moved to Lyon?" (with a name, a number or a date: "That works for you?"
  states nothing to check);
- echo questions: "You mean the meeting on Friday?", "Are you asking about the 2019 model?"
  (with a name, a number or a date).

:func:`asserted_fact` finds X and its span inside the question, so the claim X is checked like
any other. Genuine questions to the user — "what did you think?", "have you seen it?", "did you
know where he was born?", "do you know the band?" — assert nothing and give ``None``. X must
itself be check-worthy (:func:`~guardrail.hallucination.checkworthy.not_checkworthy_reason`)
and hold a clause, not a bare phrase: "I know, right?" asserts nothing to check.

:func:`asks_for_a_fact` tells the other side: whether the user's message asks a question whose
answer is a fact ("Are both bands American?", "Do you know who directed it?"), rather than
making a remark or asking about the assistant itself ("Do you like it?", "What did you
think?"). A bare "No." answers the first kind: it states a fact the rules cannot check.

The rules are for English, like the check-worthiness rules.

Example::

    >>> text = "Did you know that an average game has only 5 minutes of live gameplay?"
    >>> start, end = asserted_fact(text)
    >>> text[start:end]
    'an average game has only 5 minutes of live gameplay'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from guardrail.hallucination.checkworthy import not_checkworthy_reason

_I = re.IGNORECASE

_LEAD = r"^(?:[^?]*?(?:[,;:]\s*|[.!]\s+))?(?:(?:and|but|so|also|oh|well|yeah|hey)\s+)?"
"""Whatever comes before the opener in the same sentence ("Yeah, did you know …", "I see, …")."""

_AFTER_THAT = re.compile(
    _LEAD + r"(?:do|did|have|had|are|were)\s+you\s+(?:ever\s+|also\s+|even\s+|already\s+)?"
    r"(?:know|hear|heard|realize|realise|notice|noticed|aware|read|learn|learned|learnt)"
    r"\s+that\s+",
    _I,
)
"""Openers that presuppose their complement when it is a that-clause."""
_DID_YOU_KNOW = re.compile(_LEAD + r"did\s+you\s+(?:ever\s+|also\s+|even\s+)?know\s+", _I)
""""Did you know X?" presupposes X even without "that"."""
_RHETORICAL = re.compile(
    _LEAD + r"(?:(?:is|was)(?:n'?t| not)\s+it\s+(?:true|a fact)\s+that|"
    r"(?:can|could|would)\s+you\s+(?:ever\s+)?believe(?:\s+that)?|"
    r"(?:is|was)(?:n'?t| not)\s+it\s+(?:\w+\s+)?(?:amazing|interesting|crazy|funny|cool|weird|"
    r"strange|incredible|wild|sad|surprising|fascinating|great|remarkable|ironic)\s+that|"
    r"who\s+(?:knew|would\s+have\s+(?:thought|guessed|known))(?:\s+that)?)\s+",
    _I,
)
"""Questions that state their complement for effect."""
_AUX = r"(?:is|are|was|were|do|does|did|has|have|had|will|would|can|could|should|shall|must|might)"
_TAG = re.compile(
    r"\s*(?:,\s*|\s+(?=right\b))(?:"
    + _AUX
    + r"(?:n'?t|\s+not)?\s+(?:it|he|she|they|there|you|we|that|this|i|those|these)"
    r"|right|correct|no|huh|eh|isn'?t\s+that\s+(?:right|so|true)"
    r"|don'?t\s+you\s+think|wouldn'?t\s+you\s+say|you\s+know)\s*\?+\s*$",
    _I,
)
"""A tag after a statement: "…, isn't it?", "…, right?"."""
_QUESTION_START = (
    _AUX + r"(?:n'?t)?|how|what|who|whom|whose|where|when|why|which|whether|any|anything|"
    r"or|want|need|shall|may|ready|interested|sound|sounds|ok|okay"
)
"""Words a question to the user starts with ("does that help", "would you like", "any other")."""
_RUN_INTO_QUESTION = re.compile(
    r"(?:\s*[,;:]\s+|\s+[-–—]+\s+|\s*[–—]\s*)(?=(?:" + _QUESTION_START + r")\b[^?]*\?+\s*$)",
    _I,
)
"""Where a statement runs into a question: "X, does that help?", "X - would you like …?"."""
_NOT_A_STATEMENT_START = re.compile(
    r"^(?:if|when|whenever|since|because|although|though|unless|while|as|once|before|after|"
    r"until|for|in|on|at|by|with|from|to|regarding|about|besides|given|assuming|just|also|"
    r"and|or|but|so|sure|yes|no|ok|okay|great|thanks|thank|sorry|alright|well|let\s+me|let'?s|"
    r"(?:i|we)\s+(?:can|could|will|would|may|might|shall|should)|i'll|we'll|i'd|we'd)\b",
    _I,
)
"""A part before the question that is an adverbial, a reply word or an offer ("I can book …,
would that work?"), not a statement of fact."""
_DISCOURSE = re.compile(
    r"^(?:(?:so|and|but|oh|ok|okay|well|wait|sorry|hmm+|right|then|also|just\s+to\s+confirm|"
    r"to\s+confirm|just\s+checking|let\s+me\s+check)\s*[,:]?\s+)+",
    _I,
)
"""Words that lead a declarative or echo question ("So the meeting is …?")."""
_ECHO = re.compile(
    r"^(?:(?:do|did)\s+you\s+mean|you\s+mean|you'?re\s+(?:saying|asking\s+about|talking\s+about|"
    r"referring\s+to)|you\s+are\s+(?:saying|asking\s+about|talking\s+about|referring\s+to)|"
    r"are\s+you\s+(?:saying|asking\s+about|talking\s+about|referring\s+to)|meaning|"
    r"(?:is|was)\s+(?:that|this|it)\s+about)(?:\s+that)?\s+",
    _I,
)
"""Echo openers: what follows restates what the user seems to have said."""
_DECLARATIVE_NOT = re.compile(
    r"^(?:" + _QUESTION_START + r"|you|your|i|i'?m|i'?d|we|let|should|could|can|is|are|do|does)\b",
    _I,
)
"""A question that starts so is not a declarative statement ("Is it …?", "You want …?")."""
_GENUINE = re.compile(r"^(?:how|what|who|whom|whose|where|when|why|which|whether|if|about)\b", _I)
"""A complement that makes the question a real one ("did you know where …")."""
_TRAILING = " \t\n\"'”’)]*_"


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without surrounding spaces, quotes and punctuation before the '?'."""
    while end > start and (text[end - 1] in _TRAILING or text[end - 1] in ",;:"):
        end -= 1
    while start < end and text[start].isspace():
        start += 1
    return start, end


def _holds_a_fact(clause: str, min_words: int) -> bool:
    """Whether ``clause`` is a statement worth checking (a clause, not a bare word or phrase)."""
    words = clause.split()
    if len(words) < min_words or _GENUINE.match(clause):
        return False
    return not_checkworthy_reason(clause) is None


def _specific(clause: str) -> bool:
    """Whether ``clause`` names a number, a date, a time or a name."""
    from guardrail.text.mentions import find_mentions

    return any(ch.isdigit() for ch in clause) or bool(find_mentions(clause))


def _statement_before_question(body: str) -> tuple[int, int] | None:
    """ "X, does that help?": the span of X, when X is a statement of its own."""
    for m in _RUN_INTO_QUESTION.finditer(body):
        start, end = _trim(body, 0, m.start())
        clause = body[start:end]
        lead = _DISCOURSE.match(clause)
        if lead is not None:
            start += lead.end()
            clause = body[start:end]
        if "?" in clause or _NOT_A_STATEMENT_START.match(clause) or _GENUINE.match(clause):
            return None
        if _DECLARATIVE_NOT.match(clause) and not _specific(clause):
            return None
        if _holds_a_fact(clause, 3):
            return start, end
        return None
    return None


def _declarative_or_echo(body: str, stop: int) -> tuple[int, int] | None:
    """ "So the meeting is on Friday?", "You mean the meeting on Friday?": the stated part,
    when it names something checkable."""
    lead = _DISCOURSE.match(body)
    at = lead.end() if lead is not None else 0
    echo = _ECHO.match(body, at)
    if echo is not None:
        start, end = _trim(body, echo.end(), stop)
        clause = body[start:end]
        if _GENUINE.match(clause) or not _specific(clause):
            return None
        return (start, end) if _holds_a_fact(clause, 2) else None
    start, end = _trim(body, at, stop)
    clause = body[start:end]
    if _DECLARATIVE_NOT.match(clause) or _GENUINE.match(clause) or not _specific(clause):
        return None
    if any(ch in clause for ch in "?,;"):
        return None
    return (start, end) if _holds_a_fact(clause, 2) else None


def asserted_fact(sentence: str) -> tuple[int, int] | None:
    """The span ``[start, end)`` inside ``sentence`` of the fact a question asserts, or
    ``None`` (not a question, a genuine question, or nothing checkable asserted)."""
    body = sentence.rstrip()
    if not body.endswith("?"):
        return None
    stop = len(body) - 1
    while stop > 0 and body[stop - 1] == "?":
        stop -= 1
    tag = _TAG.search(body)
    if tag is not None:
        lead = re.match(r"^(?:(?:oh|well|yeah|so|and|but)\s*,?\s+)?", body, _I)
        start, end = _trim(body, lead.end() if lead else 0, tag.start())
        clause = body[start:end]
        if _holds_a_fact(clause, 3) and "?" not in clause:
            return start, end
        return None
    for pattern, min_words in ((_AFTER_THAT, 2), (_RHETORICAL, 3), (_DID_YOU_KNOW, 3)):
        m = pattern.match(body)
        if m is None:
            continue
        start, end = _trim(body, m.end(), stop)
        clause = body[start:end]
        if "?" in clause or not _holds_a_fact(clause, min_words):
            return None
        return start, end
    found = _statement_before_question(body)
    if found is not None:
        return found
    return _declarative_or_echo(body, stop)


_ABOUT_YOU = re.compile(r"\b(?:you|your|yours|yourself|u)\b", _I)
"""A question about the assistant itself ("do you like …", "what did you think")."""
_ASKS_THROUGH_YOU = re.compile(
    r"\b(?:(?:do|did|would)\s+you\s+(?:happen\s+to\s+)?know|(?:can|could|would)\s+you\s+"
    r"(?:please\s+)?(?:tell|explain|say|remind)|do\s+you\s+have\s+any\s+idea)\b",
    _I,
)
"""A question for a fact asked through "you" ("do you know who …", "can you tell me …")."""
_QUESTION_SENTENCE = re.compile(r"[^.!?]*\?")


def asks_for_a_fact(query: str | None) -> bool:
    """Whether ``query`` asks a question whose answer is a fact: a sentence ending in '?' that
    is not about the assistant itself, or that asks for a fact through it ("do you know who
    …?"). A remark, a greeting or "do you like it?" asks for none."""
    if not query:
        return False
    for m in _QUESTION_SENTENCE.finditer(query):
        question = m.group(0).strip()
        if not question.strip("? "):
            continue
        if not _ABOUT_YOU.search(question) or _ASKS_THROUGH_YOU.search(question):
            return True
    return False


_BARE_YES_NO = re.compile(
    r"^\W*(?:(yes|yeah|yep|yup|yes indeed|indeed|correct|that'?s right|right|of course|sure)|"
    r"(no|nope|nah|not really|not at all|no,? not really))"
    r"(?:\s*[,.!]*\s*(?:it|he|she|they|there|that|i|we|you)\s+(?:is|are|was|were|do|does|did|"
    r"has|have|had|can|could|will|would)(?:n'?t|\s+not)?)?\W*$",
    _I,
)
"""A bare yes or no ("Yes.", "Nope!", "No, it isn't."): group 1 a yes, group 2 a no (the
words after it only agree with it)."""
_YES_NO_AUX = {
    "is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had", "can",
    "could", "will", "would", "should", "shall", "may", "might", "must",
}  # fmt: skip


def yes_or_no(reply: str) -> bool | None:
    """``True`` for a bare yes ("Yes.", "Yeah, it is."), ``False`` for a bare no ("Nope.",
    "No, they didn't."), ``None`` for any other reply ("Yes, I love it." says more)."""
    m = _BARE_YES_NO.match(reply)
    if m is None:
        return None
    return m.group(1) is not None


def yes_no_proposition(question: Any, yes: bool) -> str | None:
    """The statement a bare yes (or no) to the yes/no ``question`` makes: "Is the meeting on
    Monday?" + no → "The meeting is not on Monday."; "Did Orvik move to Lyon?" + yes →
    "Orvik did move to Lyon." ``question``: the question sentence tagged by spaCy (a ``Span``;
    the parts of speech are read, not the dependency parse, which short questions often
    defeat). ``None`` when it is not a plain inverted yes/no question ("What is it?", "Is it
    red or blue?")."""
    tokens = [t for t in question if not t.is_space]
    while tokens and (tokens[0].is_punct or tokens[0].lower_ in ("so", "and", "but", "oh", "well")):
        tokens = tokens[1:]
    if len(tokens) < 4 or tokens[-1].text != "?" or tokens[0].lower_ not in _YES_NO_AUX:
        return None
    if any(t.lower_ in ("or", "and") or t.text == "?" for t in tokens[1:-1]):
        return None  # alternatives and coordinated parts: where the subject ends is not read
    aux, body = tokens[0], tokens[1:-1]
    subject = _do_subject(body) if aux.lower_ in ("do", "does", "did") else _noun_phrase(body)
    if aux.lower_ in _BE and subject:
        subject = _passive_subject(body, subject)
    if not subject or subject >= len(body) or body[subject].lower_ in ("of", "'s"):
        return None  # no subject, no predicate, or a name that goes on ("Kings of Leon")
    doc = aux.doc
    subject_text = doc[body[0].i : body[subject - 1].i + 1].text
    rest = doc[body[subject].i : body[-1].i + 1].text
    if not yes and body[0].lower_ in ("both", "all", "every", "each"):
        # "Are all the rooms booked?" + no: the whole statement is denied, not each part
        return f"It is not true that {subject_text} {aux.lower_} {rest}."
    words = f"{subject_text} {aux.lower_}{'' if yes else ' not'} {rest}"
    return words[0].upper() + words[1:] + "."


def _do_subject(body: Sequence[Any]) -> int:
    """Tokens before the main verb of "did X move …"; when the tagger reads no verb ("does the
    library open at 9am": "open" as an adjective), the noun phrase the question opens with."""
    for k, t in enumerate(body):
        if t.pos_ == "VERB":
            return k
    return _noun_phrase(body)


_BE = {"is", "are", "was", "were", "am"}


def _passive_subject(body: Sequence[Any], subject: int) -> int:
    """The subject of "was X directed by …" reaches the participle when only words of a name
    stand between ("Was Home Alone directed by Chris Columbus?": the tagger ends the noun
    phrase at "Home")."""
    for k in range(subject, len(body)):
        t = body[k]
        if t.tag_ == "VBN":
            return k if k > subject else subject
        if (
            t.pos_ in ("ADP", "DET", "VERB", "AUX", "PRON", "NUM", "PART")
            or not t.text[:1].isupper()
        ):
            return subject
    return subject


def _noun_phrase(body: Sequence[Any]) -> int:
    """Length of the noun phrase ``body`` opens with ("the meeting", "both bands", "she")."""
    quantifier = body[0].lower_ in ("both", "all", "each", "some", "many", "most", "few")
    if body[0].pos_ == "PRON" and not (quantifier and len(body) > 1 and body[1].pos_ == "NOUN"):
        return 1
    k = 0
    while k < len(body) and (body[k].pos_ in ("DET", "NUM", "ADJ") or (k == 0 and quantifier)):
        k += 1
    head = k
    while (k < len(body) and body[k].pos_ in ("PROPN", "NOUN")) or (
        k < len(body) and k > head and body[k].ent_iob_ == "I"
    ):
        k += 1
    if k == head:
        return 0
    if k < len(body) and body[k].tag_ == "POS":  # "Acme 's office"
        return 0
    return k
