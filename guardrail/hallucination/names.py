"""Proper names of a text, their aliases, and the place each stands in its sentence.

The text rules of the name check (:mod:`guardrail.hallucination.alignment`), pure functions of
the text and a spaCy-like ``nlp`` (``nlp(text).ents``):

- :func:`proper_names`: the proper names of a text, of any kind: entities of
  ``PROPER_LABELS`` and runs of capitalised words that are not a sentence's start (a name the
  tagger misses, "Secure Boot");
- :func:`name_stands_in`: whether a name or an alias of it (a surname, a first name, a demonym
  sharing its stem) stands in a text;
- :func:`name_context` and :func:`same_slot`: the two tokens each side of a name, and whether
  two names stand in the same place of their sentences ("In the experiment, Miller found" /
  "In the experiment, Chicago found").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Any

from guardrail.hallucination.calibration import _stem, content_words
from guardrail.text.mentions import _sentence_initial, normalise, same_stem

NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT"})
"""spaCy labels of the names that are checked against another name of the same kind."""
PROPER_LABELS = NAME_LABELS | {"WORK_OF_ART", "LAW", "LANGUAGE"}
"""spaCy labels of the proper names the slot rule compares, whatever their kind."""

_GENERIC = frozenset(
    """university college school company corporation corp inc ltd group party united states
    state national international new north south east west central city county river lake
    mount saint san los las department ministry council committee association institute
    society league club bank church house republic kingdom empire federal royal american
    british general president king queen prince princess lord sir mr mrs ms dr""".split()
)
"""Name words too common to stand for the name alone ("University" of "University of X")."""
_TITLES = frozenset("mr mrs ms dr st prof sr jr mt sir gen lt col".split())
"""Titles capitalised before a name, not names themselves."""
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")


def _words(name: str) -> list[str]:
    return [_POSSESSIVE.sub("", w) for w in _WORD.findall(name)]


@lru_cache(maxsize=1024)
def _capitalised_words(text: str) -> tuple[str, ...]:
    """The capitalised words of ``text`` (read once per text: the documents joined are searched
    for every name of every claim)."""
    return tuple(w for w in _words(text) if w[:1].isupper())


def distinctive(name: str) -> list[str]:
    """The words of ``name`` that may stand for it alone: capitalised, 3+ letters, not generic."""
    return [
        w for w in _words(name) if len(w) >= 3 and w[:1].isupper() and w.lower() not in _GENERIC
    ]


def name_stands_in(name: str, text: str) -> bool:
    """Whether ``name`` or an alias of it stands in ``text``: the whole name (case, spaces and
    commas aside), one of its distinctive words as a capitalised word of ``text`` (a surname, a
    first name), or a word of the same stem (a demonym)."""
    key = normalise(_POSSESSIVE.sub("", name))
    if key and key in normalise(text):
        return True
    words = distinctive(name)
    if not words:
        return False
    there = _capitalised_words(text)
    return any(same_stem(w, t) for w in words for t in there)


_CAP_WORD = r"(?:[A-Z]\.){2,}|[A-Z](?:[\w&'’-]*[\w&])?"
_CAPITALISED = re.compile(
    rf"(?<![\w.&-])(?<!\w['’])(?:{_CAP_WORD})(?:\s+(?:(?:of|the|de|for)\s+)?(?:{_CAP_WORD}))*"
)
_ARTICLE = re.compile(r"^(?:the|The)\s+")
_FIELD_LABEL = re.compile(r"[A-Z][A-Z ]*:(?:\s|$)")
"""Capitals ending in a colon: a page's field label ("TITLE: ...")."""
_ACRONYM = re.compile(r"\b(?:[A-Z]\.){2,}|\b[A-Z]{2,}\b")
_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")
_APPOSITION = 3
"""Tokens between the claim's name and the evidence's rival in one sentence within which the
two are listed together ("X and Y", "Y, like X,"): the sentence names both, no swap."""


def bare_span(name: str, start: int) -> tuple[int, int]:
    """The span of ``name`` (found at ``start``) without a leading "the" and a trailing
    possessive ("the Acme's" → "Acme"): what a repair of the name replaces, so the sentence
    keeps its article and possessive. The whole span when nothing would be left."""
    article = _ARTICLE.match(name)
    possessive = _POSSESSIVE.search(name)
    first = article.end() if article else 0
    last = len(name) - (len(possessive.group(0)) if possessive else 0)
    return (start + first, start + last) if last > first else (start, start + len(name))


@dataclass(frozen=True)
class ProperName:
    """A proper name of a text: a spaCy entity of ``PROPER_LABELS``, or a run of capitalised
    words that is not a sentence's start (``label_`` empty)."""

    text: str
    label_: str
    start_char: int
    end_char: int


def checkable(name: str) -> bool:
    """A name that can stand for itself: a distinctive word, or an acronym of 2+ capitals
    ("TMZ", "U.S.")."""
    letters = name.replace(".", "")
    return bool(distinctive(name)) or (
        len(letters) >= 2 and letters.isalpha() and letters.isupper()
    )


def proper_names(nlp: Any, text: str) -> list[ProperName]:
    """The proper names of ``text``, any kind: its entities labelled ``PROPER_LABELS`` (a
    leading "the" left out) and its capitalised word runs ("Secure Boot", "All Eyez") that are
    not a sentence's first word, overlap no entity (not "Monday" as a DATE), are not a title
    and have a word that can stand for them (:func:`checkable`). In order."""
    out: list[ProperName] = []
    ents = list(nlp(text).ents)
    for e in ents:
        article = _ARTICLE.match(e.text)
        start = e.start_char + (article.end() if article else 0)
        name = text[start : e.end_char]
        if e.label_ in PROPER_LABELS and name[:1].isupper():
            out.append(ProperName(name, e.label_, start, e.end_char))
    for m in _CAPITALISED.finditer(text):
        start, end = m.span()
        if _sentence_initial(text, start):
            first = re.match(_CAP_WORD, text[start:])
            rest = re.match(r"\s+", text[start + first.end() :]) if first else None
            if not first or not rest:
                continue
            start += first.end() + rest.end()  # the run after a sentence's first word
            if not _CAPITALISED.fullmatch(text, start, end):
                continue
        name = text[start:end]
        if any(e.start_char < end and start < e.end_char for e in ents):
            continue
        if name.lower() in _TITLES or not checkable(name) or name == "I":
            continue
        if _FIELD_LABEL.match(text, start) and name.isupper():
            continue  # a field's label ("TITLE:", "PUBLISHED DATETIME:"), not a name
        out.append(ProperName(name, "", start, end))
    return sorted(out, key=lambda n: n.start_char)


def capitalised_run(text: str, start: int, end: int) -> tuple[int, int]:
    """The run of capitalised words of ``text`` that holds ``text[start:end]`` ("All Eyez"
    for the "Eyez" a tagger found, "Danube River Germania" for "Danube River"); a run that
    starts a sentence only from the name on (its first word is capitalised as the first,
    whatever it is: "Different" of "Different Baden-Württemberg languages"); ``(start, end)``
    in no longer run."""
    for m in _CAPITALISED.finditer(text):
        a, b = m.span()
        if b <= start:
            continue
        if a > start or b < end:
            break
        if _sentence_initial(text, a):
            a = start  # its words before the name may be capitalised only as the first
        return (min(a, start), max(b, end))
    return (start, end)


_TYPOGRAPHIC = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
"""Typographic marks and their plain forms: one mark, two ways of writing it."""


def _slot_token(token: str) -> str:
    if token[:1].isalnum():
        return _stem(token.translate(_TYPOGRAPHIC).lower())
    return token.translate(_TYPOGRAPHIC)


def name_context(text: str, start: int, end: int) -> tuple[str, str, str, str]:
    """The two tokens before and the two after ``text[start:end]`` (punctuation and the
    text's ends count as tokens), words crudely stemmed: the name's slot."""
    left = [m.group(0) for m in _TOKEN.finditer(text[:start])][-2:]
    right = [m.group(0) for m in _TOKEN.finditer(text[end:])][:2]
    left = ["<s>"] * (2 - len(left)) + left
    right = right + ["</s>"] * (2 - len(right))
    return (
        _slot_token(left[0]),
        _slot_token(left[1]),
        _slot_token(right[0]),
        _slot_token(right[1]),
    )


LONG_RUN = 4
"""Tokens next to two names or values, on one side, that must all be the same (a content word
among them) for the two to stand in the same place whatever their other neighbours: "to secure
more than $ 1,200,000." / "to secure more than $ 800, 000 for the property". Used only to
choose a repair among rivals already found, never to find one (chosen on the one-fact-edit
benchmark's dev split)."""


def _tokens(text: str) -> list[str]:
    return [_slot_token(m.group(0)) for m in _TOKEN.finditer(text)]


def agreeing_run(a: str, a_span: tuple[int, int], b: str, b_span: tuple[int, int]) -> int:
    """The longer of the two runs of equal tokens (crudely stemmed) right before and right
    after ``a[a_span]`` and ``b[b_span]`` (spans ``[start, end)``); a run without a content
    word counts 0."""
    best = 0
    sides = (
        (_tokens(a[: a_span[0]])[::-1], _tokens(b[: b_span[0]])[::-1]),
        (_tokens(a[a_span[1] :]), _tokens(b[b_span[1] :])),
    )
    for x, y in sides:
        n = 0
        while n < min(len(x), len(y)) and x[n] == y[n]:
            n += 1
        if n > best and content_words(" ".join(x[:n])):
            best = n
    return best


def mapped_slot(
    a: str, a_span: tuple[int, int], b: str, min_shared: int = 3
) -> tuple[int, int] | None:
    """The span of ``b`` that stands where ``a[a_span]`` stands in ``a``: the two texts' tokens
    (crudely stemmed) matched as sequences (longest common blocks first, :mod:`difflib`), and
    the tokens of ``b`` between the matched tokens around ``a_span``. ``None`` when fewer than
    ``min_shared`` tokens match, when no token of ``b`` lies between them, or when the span's
    own tokens are matched (it stands in ``b`` already)."""
    ta = list(_TOKEN.finditer(a))
    tb = list(_TOKEN.finditer(b))
    xa = [_slot_token(m.group(0)) for m in ta]
    xb = [_slot_token(m.group(0)) for m in tb]
    inside = [i for i, m in enumerate(ta) if a_span[0] <= m.start() < a_span[1]]
    if not inside or not tb:
        return None
    first, last = inside[0], inside[-1]
    matcher = SequenceMatcher(None, xa, xb, autojunk=False)
    blocks = [blk for blk in matcher.get_matching_blocks() if blk.size]
    if sum(blk.size for blk in blocks) < min_shared:
        return None
    lo, hi = 0, len(tb)  # tokens of b after the last match before the span, before the next
    for blk in blocks:
        if blk.a + blk.size <= first:
            lo = max(lo, blk.b + blk.size)
        elif blk.a > last:
            hi = min(hi, blk.b)
        else:
            return None  # a token of the span is matched: no other value stands for it
    if lo >= hi or (lo == 0 and hi == len(tb)):
        return None
    return tb[lo].start(), tb[hi - 1].end()


def same_slot(a: tuple[str, str, str, str], b: tuple[str, str, str, str]) -> bool:
    """Whether two names stand in the same place of their sentences (their :func:`name_context`):
    the word just before or just after them is the same and so is another of the two words each
    side, a content word among them ("In the experiment, Miller found" / "In the experiment,
    Chicago found"), or both neighbours and a third word are the same ("appear in the U.S. and
    other" / "appear in the British and other"); not two commas of a list."""
    equal = [x for x, y in zip(a, b, strict=True) if x == y]
    if not (a[1] == b[1] or a[2] == b[2]) or len(equal) < 2:
        return False
    return any(content_words(t) for t in equal) or (
        a[1] == b[1] and a[2] == b[2] and len(equal) >= 3
    )


def named_in(name: str, text: str) -> bool:
    """:func:`name_stands_in`, or any capitalised word of ``name`` of 4+ letters, common name
    words included ("British", "United States"), sharing its stem with a capitalised word of
    ``text`` ("British" / "Britain"). An acronym of up to three letters ("US", "U.S.") stands
    only as a word of its own capitals, not inside "used"."""
    letters = name.replace(".", "")
    if len(letters) <= 3 and letters.isalpha() and letters.isupper():
        return letters in {w.replace(".", "") for w in _ACRONYM.findall(text)}
    if name_stands_in(name, text):
        return True
    there = _capitalised_words(text)
    return any(
        same_stem(w, t) for w in _words(name) if len(w) >= 4 and w[:1].isupper() for t in there
    )


def aliases(a: str, b: str) -> bool:
    """Whether either name stands in the other (:func:`named_in`): one name, two forms."""
    return named_in(a, b) or named_in(b, a)


def listed_with(name: str, rival: ProperName, sentence: str) -> bool:
    """Whether ``name`` (or an alias) stands in ``sentence`` within ``_APPOSITION`` tokens of
    ``rival``: the two are listed together there."""
    tokens = list(_TOKEN.finditer(sentence))
    inside = [i for i, t in enumerate(tokens) if rival.start_char <= t.start() < rival.end_char]
    if not inside:
        return False
    lo, hi = max(0, inside[0] - _APPOSITION - 1), inside[-1] + _APPOSITION + 2
    near = sentence[tokens[lo].start() : tokens[min(hi, len(tokens)) - 1].end()]
    return named_in(name, near.replace(rival.text, " "))
