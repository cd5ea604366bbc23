"""Which sentences state a checkable fact: greetings, hedges and remarks are not claims.

A sentence is *not check-worthy* when it asserts nothing the evidence could support or refute:

- a question (it asks, it does not state);
- a greeting, thanks or acknowledgement ("Hi!", "Sure.", "Great question!", "Haha, nice!",
  "That's so cool!");
- a closing offer ("I hope this helps.", "Let me know if you have other questions.");
- a statement about the answer itself or the assistant ("Here is a summary:", "As an AI …");
- a bare hedge ("I'm not sure.", "It depends."; not "I don't know, but it opened in 1924.",
  which goes on to state something);
- an opinion with no specific content ("I think that's a great idea.").

Anything that names a number, a date or a name, or whose remainder after a hedging or opinion
opener still carries content, stays check-worthy: "I think the meeting is at 3pm" is checked.
A fact asked inside a question ("Did you know that X?", "X, isn't it?") is not set aside:
the claim is X itself (:mod:`guardrail.hallucination.question_facts`, when claims are made).
The rules are for English; other languages are left to the verifier (and its coverage rule).
"""

from __future__ import annotations

import re

from guardrail.report import Claim, ClaimStatus
from guardrail.text.mentions import find_mentions

_I = re.IGNORECASE

_GREETING = re.compile(
    r"^(hi|hello|hey|greetings|good (morning|afternoon|evening|day)|dear \w+|welcome)\b[\w\s,]*"
    r"(i'?m (good|fine|great|well|ok|okay|doing (well|good|great|fine))\b[\w\s,]*)?[.!]*$",
    _I,
)
_ACK = re.compile(
    r"^(sure|certainly|of course|absolutely|okay|ok|alright|yes|no|indeed|great|got it|"
    r"(i'?m )?(fine|good|well|doing (well|good|great|fine))(,? thanks?( you)?)?|"
    r"(that'?s a |what a )?(great|good|excellent|interesting) question|thanks?( you)?( so much)?|"
    r"you'?re welcome|no problem|happy to help|glad (to|i could) help|my pleasure|"
    r"i('d| would) be (happy|glad) to help)( with that)?[.!]*$",
    _I,
)
_CHAT = re.compile(
    r"^(?:(?:ha(?:ha)+|hah|lol|wow|oh|ah+|ooh|hmm+|yeah|yep|yes|nope|nice|cool|awesome|neat|"
    r"sweet|great|wonderful|really|true|right|exactly|me too|same here|i see|i agree|agreed|"
    r"fair enough|good point|sounds (?:good|great|fun|nice|interesting|awesome|like fun)|"
    r"(?:that|it)(?:'?s| is| sounds| was) (?:so |really |very |pretty )?(?:cool|great|nice|"
    r"awesome|interesting|funny|amazing|fun|sad|too bad|a shame|true|right|good))[\s,.!]*)+$",
    _I,
)
_CLOSING = re.compile(
    r"\b(i hope (this|that|it) (helps|answers|clarifies)|hope (this|that) helps|"
    r"let me know if|feel free to|don'?t hesitate to|if you have any (other|more|further)? ?"
    r"questions|happy to help|glad to help|is there anything else|"
    r"(please )?(consult|check with|contact) (a|an|your) (professional|doctor|expert|lawyer|advisor))",
    _I,
)
_META = re.compile(
    r"^(here('?s| is| are)|below (is|are)|the following|in summary|to summari[sz]e|in short|"
    r"to sum up|overall|let me (explain|summari[sz]e|break (this|it) down))\b",
    _I,
)
_ASSISTANT = re.compile(
    r"^(as an ai( language model| assistant)?|i am an ai|i'?m an ai|i('?m| am) (just )?(a|an) "
    r"(ai|language model|assistant))\b[^.!?]*\b(do not|don'?t|cannot|can'?t|am not|have no)\b",
    _I,
)
_HEDGE = re.compile(
    r"^((i'?m )?not (quite |really |too |so )?(sure|certain)|i do(n'?| no)t know|i cannot (say|be (sure|certain))|"
    r"it'?s hard to say|it depends|that depends|hard to tell|i have no (information|idea)|"
    r"i('?m| am) unable to (answer|say|determine))\b"
    r"(?![^.!?]*\b(?:but|however|though|although|yet)\b)[^.!?]*[.!]*$",
    _I,
)
_CHAT_OPENER = re.compile(r"^(?:lol|haha+|hah|hmm+|um+|uh|oh|ah|well|wow)\b[\s,!.]+", _I)
"""A chat interjection before the sentence proper ("lol not quite sure..")."""
_OPINION = re.compile(
    r"^(i think|i believe|i feel|in my (opinion|view)|personally|i would say|i'?d say|"
    r"i (really )?(like|love|enjoy|prefer))\b",
    _I,
)
_EVALUATIVE = re.compile(
    r"\b(great|good|nice|wonderful|interesting|fascinating|exciting|important|helpful|useful|"
    r"amazing|excellent|best|worth|beautiful|fun|idea|choice|approach|option)\b",
    _I,
)


def _specific(text: str) -> bool:
    """Whether the sentence names a number, date, time or name (something checkable)."""
    return any(ch.isdigit() for ch in text) or bool(find_mentions(text))


def not_checkworthy_reason(text: str, language: str | None = "en") -> str | None:
    """Why ``text`` states no checkable fact, or ``None`` when it should be checked."""
    if language not in (None, "en"):
        return None
    s = " ".join(text.split()).strip()
    if not s:
        return "empty"
    if s.endswith("?"):
        return "a question, not a statement"
    bare = s.strip("*_#>-•· \"'“”")
    rest = _CHAT_OPENER.sub("", bare)
    bare = rest if rest.strip(" .!,") else bare
    words = bare.split()
    if _GREETING.match(bare) and len(words) <= 8:
        return "a greeting"
    if _ACK.match(bare) or _CHAT.match(bare):
        return "an acknowledgement"
    if _HEDGE.match(bare) and not _specific(bare):
        return "a hedge that states no fact"
    if _CLOSING.search(bare) and not _specific(bare):
        return "a closing remark about the conversation"
    if _ASSISTANT.match(bare):
        return "a remark about the assistant itself"
    if _META.match(bare) and (bare.endswith(":") or not _specific(bare)) and len(words) <= 14:
        return "a remark about the answer itself"
    if (
        _OPINION.match(bare)
        and _EVALUATIVE.search(bare)
        and not _specific(bare)
        and len(words) <= 15
    ):
        return "an opinion with no checkable content"
    return None


def mark_not_checkworthy(claims: list[Claim]) -> list[Claim]:
    """``claims`` with those that state no checkable fact marked ``not_checkworthy`` and the
    reason (the others unchanged; a claim already set aside with a reason is left as it is)."""
    out = []
    for c in claims:
        if c.reason is None and c.status is ClaimStatus.UNVERIFIED:
            why = not_checkworthy_reason(c.text, c.language)
            if why is not None:
                c = c.model_copy(
                    update={
                        "status": ClaimStatus.NOT_CHECKWORTHY,
                        "reason": f"not check-worthy: {why}",
                    }
                )
        out.append(c)
    return out
