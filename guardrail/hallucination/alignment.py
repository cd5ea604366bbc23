"""Claim-to-evidence alignment: does each name of a claim stand where the claim's fact is told?

A name taken from the same documents ("X founded the company", where the documents say Y founded
it and mention X elsewhere) is in the evidence, so the lookup of invented specifics
(``missing_specific``, NONEXISTENT_ENTITY) stays silent and a small NLI model often entails the
swap. Alignment looks where the claim's fact is told:

1. the claim is **aligned** with the evidence sentences that best match it *without its names,
   numbers and dates* — IDF-weighted overlap of crude content stems (the stems of
   :mod:`guardrail.hallucination.calibration`), no verifier call; the aligned sentences are the
   best one and any scoring at least ``TIE_RATIO`` of it, each with the sentence before and
   after it in the same passage (the **region**);
2. each capitalised name of the claim (spaCy entities) must stand in the region. Aliases count:
   any distinctive word of the name (a surname, a first name: "Jobs" for "Steve Jobs"), a
   demonym sharing its stem ("German" / "Germany"), a fuzzy match; a name of the query is never
   checked (the question names what the answer is about);
3. a name absent from the region while the best aligned sentence gives **another name of the
   same kind** (spaCy label, ORG / GPE / LOC counted as one kind) is a :class:`NameMismatch`:
   the claim names someone else in that place. A reference without a name ("the company",
   "he") gives no other name, so it raises nothing.

The mismatch becomes a WRONG_ATTRIBUTE flag (:func:`~guardrail.hallucination.flags.wrong_name_flag`)
and counts as a missing specific in the calibration features. When the aligned sentence gives
exactly one such name, it is ``plain``: the flag carries it as ``replacement``, a repair the
correction stage re-checks with the verifier.

Example::

    >>> index = AlignmentIndex.of(["Alice Smith founded Acme in Boston. Bob Jones joined later."])
    >>> [(m.claim_name, m.evidence_name) for m in name_mismatches(
    ...     "Bob Jones founded Acme in Boston.", index, nlp)]  # doctest: +SKIP
    [('Bob Jones', 'Alice Smith')]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from guardrail.hallucination.calibration import _stem, content_words
from guardrail.text.mentions import _sentence_initial, find_mentions, normalise
from guardrail.text.sentences import split_sentences

MIN_SHARED = 2
"""Content stems the claim (names, numbers and dates masked) must share with a sentence for
that sentence to be aligned with it."""
MIN_COVERAGE = 0.2
"""Share of the masked claim's content stems (IDF-weighted) the best sentence must hold: below
it the claim is a paraphrase too loose to say where its fact is told, and nothing is checked
(chosen on the one-fact-edit benchmark's dev split: 0.3 and 0.4 catch fewer swaps; the false
flags on unedited sentences grow slowly below 0.3)."""
TIE_RATIO = 0.8
"""Sentences scoring at least this share of the best one are aligned too."""
NEIGHBOURS = 1
REGION_OTHERS = True
"""Where the best aligned sentence gives no name of the kind, look for the other name in the
rest of the region too (the fact is often told over two sentences)."""
"""Sentences before and after an aligned one (same passage) that belong to its region."""

NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT"})
"""spaCy labels of the names that are checked against another name of the same kind."""
PROPER_LABELS = NAME_LABELS | {"WORK_OF_ART", "LAW", "LANGUAGE"}
"""spaCy labels of the proper names the slot rule compares, whatever their kind."""
_PLACES = frozenset({"GPE", "LOC", "FAC", "ORG"})
"""Labels a small NER model confuses with each other ("U.S.", "Ebola", a team named after its
city), compared as one kind (see :func:`same_kind`); measured on the one-fact-edit benchmark's
dev split, keeping ORG apart from the places catches fewer swaps for as many false flags."""

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


@dataclass(frozen=True)
class EvidenceSentence:
    """One sentence of an evidence text."""

    passage: int
    position: int
    """Its position in :attr:`AlignmentIndex.sentences`."""
    text: str
    stems: frozenset[str]


@dataclass(frozen=True)
class AlignmentIndex:
    """The evidence split into sentences, with the stems' IDF (built once per check)."""

    sentences: tuple[EvidenceSentence, ...]
    idf: dict[str, float]
    query: str = ""
    joined: str = ""
    """Every evidence text joined (a name absent from all of them is not this module's
    business: ``missing_specific`` and NONEXISTENT_ENTITY count it)."""

    @classmethod
    def of(cls, texts: Iterable[str], query: str = "") -> AlignmentIndex:
        sentences: list[EvidenceSentence] = []
        texts = list(texts)
        for p, text in enumerate(texts):
            for s in split_sentences(text):
                stems = frozenset(_stem(w) for w in content_words(s.text))
                sentences.append(EvidenceSentence(p, len(sentences), s.text, stems))
        df: Counter[str] = Counter()
        for sentence in sentences:
            df.update(sentence.stems)
        n = len(sentences)
        idf = {k: math.log(1.0 + (n - v + 0.5) / (v + 0.5)) for k, v in df.items()}
        return cls(tuple(sentences), idf, query, "\n".join(texts))

    def weight(self, stem: str) -> float:
        """The IDF of ``stem`` (a stem found in no sentence weighs as the rarest)."""
        return self.idf.get(stem, math.log(1.0 + (len(self.sentences) + 0.5) / 0.5))


@dataclass(frozen=True)
class Alignment:
    """The sentences a claim is aligned with and their regions (sentence ± ``NEIGHBOURS``)."""

    best: EvidenceSentence
    aligned: tuple[EvidenceSentence, ...]
    region: tuple[EvidenceSentence, ...]
    coverage: float
    """IDF-weighted share of the masked claim's stems the best sentence holds."""

    @property
    def region_text(self) -> str:
        return " ".join(s.text for s in self.region)


@dataclass(frozen=True)
class NameMismatch:
    """A name of the claim absent where the claim's fact is told, which names another there."""

    claim_name: str
    start: int
    end: int
    """Span of the claim's name in the claim text."""
    label: str
    evidence_name: str
    """The other name of the same kind in the aligned sentence (the first, if several)."""
    evidence_sentence: str
    evidence_start: int
    evidence_end: int
    """Span of ``evidence_name`` in ``evidence_sentence``."""
    plain: bool
    """The aligned sentence gives exactly one other name of that kind: a repair candidate."""


def masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each ``[start, end)`` of ``spans`` blanked."""
    out = list(text)
    for start, end in spans:
        out[start:end] = " " * (end - start)
    return "".join(out)


def align(
    claim_text: str, specifics: Sequence[tuple[int, int]], index: AlignmentIndex
) -> Alignment | None:
    """The evidence sentences that best match ``claim_text`` with its ``specifics`` (spans of
    names, numbers and dates) masked; ``None`` when no sentence shares ``MIN_SHARED`` stems and
    ``MIN_COVERAGE`` of the claim's weight."""
    stems = {_stem(w) for w in content_words(masked(claim_text, specifics))}
    if len(stems) < MIN_SHARED or not index.sentences:
        return None
    total = sum(index.weight(s) for s in stems)
    scored = []
    for sentence in index.sentences:
        shared = stems & sentence.stems
        if len(shared) >= MIN_SHARED:
            scored.append((sum(index.weight(s) for s in shared), sentence))
    if not scored:
        return None
    top = max(score for score, _ in scored)
    if top / total < MIN_COVERAGE:
        return None
    aligned = tuple(s for score, s in scored if score >= TIE_RATIO * top)
    best = next(s for score, s in scored if score == top)
    region: dict[int, EvidenceSentence] = {}
    for s in aligned:
        for pos in range(s.position - NEIGHBOURS, s.position + NEIGHBOURS + 1):
            if 0 <= pos < len(index.sentences) and index.sentences[pos].passage == s.passage:
                region[pos] = index.sentences[pos]
    return Alignment(best, aligned, tuple(region[k] for k in sorted(region)), top / total)


def same_kind(a: str, b: str) -> bool:
    """Whether spaCy labels ``a`` and ``b`` name the same kind of thing (ORG, GPE, LOC and FAC
    are often confused by small NER models and count as one kind)."""
    return a == b or (a in _PLACES and b in _PLACES)


def _words(name: str) -> list[str]:
    return [_POSSESSIVE.sub("", w) for w in _WORD.findall(name)]


def _distinctive(name: str) -> list[str]:
    """The words of ``name`` that may stand for it alone: capitalised, 3+ letters, not generic."""
    return [
        w for w in _words(name) if len(w) >= 3 and w[:1].isupper() and w.lower() not in _GENERIC
    ]


def _same_stem(a: str, b: str) -> bool:
    """A demonym and its place, or two forms of one name: ``German`` / ``Germany``,
    ``Chinese`` / ``China``, ``Canadian`` / ``Canada`` (a shared start of 4+ letters covering
    most of the shorter word)."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= 4 and n >= 0.7 * min(len(a), len(b))


def name_stands_in(name: str, text: str) -> bool:
    """Whether ``name`` or an alias of it stands in ``text``: the whole name (case, spaces and
    commas aside), one of its distinctive words as a capitalised word of ``text`` (a surname, a
    first name), or a word of the same stem (a demonym)."""
    key = normalise(_POSSESSIVE.sub("", name))
    if key and key in normalise(text):
        return True
    words = _distinctive(name)
    if not words:
        return False
    there = [w for w in _words(text) if w[:1].isupper()]
    return any(_same_stem(w, t) for w in words for t in there)


def _entities(nlp: Any, text: str) -> list[Any]:
    return [e for e in nlp(text).ents if e.label_ in NAME_LABELS]


def claim_alignment(
    claim_text: str, index: AlignmentIndex, nlp: Any
) -> tuple[Alignment | None, list[Any]]:
    """Where ``claim_text`` is told in the evidence (:func:`align` with its names, numbers and
    dates masked), and its checked names (spaCy entities with a distinctive word; none without
    ``nlp``)."""
    if not index.sentences:
        return None, []
    names = [e for e in _entities(nlp, claim_text) if _distinctive(e.text)] if nlp else []
    values = [(m.start, m.end) for m in find_mentions(claim_text)]  # numbers, dates (regex)
    spans = [*values, *((e.start_char, e.end_char) for e in names)]
    return align(claim_text, spans, index), names


def name_mismatches(
    claim_text: str,
    index: AlignmentIndex,
    nlp: Any,
    located: tuple[Alignment | None, list[Any]] | None = None,
) -> list[NameMismatch]:
    """The names of ``claim_text`` that the aligned evidence gives differently (module docstring).

    Args:
        claim_text: the claim.
        index: the check's evidence (:meth:`AlignmentIndex.of`).
        nlp: a spaCy pipeline (or :class:`~guardrail.stages.hallucination.EntityParser`):
            ``nlp(text).ents``; ``None`` = no names, no mismatches.
        located: :func:`claim_alignment` of the claim, when already found.
    """
    if nlp is None or not index.sentences:
        return []
    proper = proper_names(nlp, claim_text)
    if not proper:
        return []  # no name to check: no alignment needed
    if located is None:
        located = claim_alignment(claim_text, index, nlp)
    alignment, names = located
    if alignment is None:
        return []
    found = [m for m in (_kind_mismatch(e, names, alignment, index, nlp) for e in names) if m]
    values = [(m.start, m.end) for m in find_mentions(claim_text)]
    for name in proper:
        if not any(m.start < name.end_char and name.start_char < m.end for m in found):
            slot = _slot_mismatch(name, claim_text, proper, values, index, nlp)
            if slot is not None:
                found.append(slot)
    return sorted(found, key=lambda m: m.start)


def _kind_mismatch(
    ent: Any, names: list[Any], alignment: Alignment, index: AlignmentIndex, nlp: Any
) -> NameMismatch | None:
    """Rule 3 of the module docstring: ``ent`` absent from the region, which gives another name
    of its kind (in the best aligned sentence, else in the rest of the region)."""
    name = ent.text
    region = alignment.region_text
    if (
        name_stands_in(name, region)
        or (index.query and name_stands_in(name, index.query))
        or not name_stands_in(name, index.joined)
    ):
        return None
    places = [alignment.best]
    if REGION_OTHERS:
        places += [s for s in alignment.region if s is not alignment.best]
    for place in places:
        others = [
            e
            for e in _entities(nlp, place.text)
            if same_kind(e.label_, ent.label_)
            and _distinctive(e.text)
            and not any(name_stands_in(e.text, n.text) for n in names)
            and not any(name_stands_in(n.text, e.text) for n in names)
        ]
        if others:
            break
    else:
        return None
    other = others[0]
    return NameMismatch(
        claim_name=name,
        start=ent.start_char,
        end=ent.end_char,
        label=ent.label_,
        evidence_name=other.text,
        evidence_sentence=place.text,
        evidence_start=other.start_char,
        evidence_end=other.end_char,
        plain=len({normalise(e.text) for e in others}) == 1,
    )


# --- the slot rule: a proper name of any kind in the claim's place ----------------------------

_CAP_WORD = r"(?:[A-Z]\.){2,}|[A-Z](?:[\w&'’-]*[\w&])?"
_CAPITALISED = re.compile(
    rf"(?<![\w.&-])(?<!\w['’])(?:{_CAP_WORD})(?:\s+(?:(?:of|the|de|for)\s+)?(?:{_CAP_WORD}))*"
)
_ARTICLE = re.compile(r"^(?:the|The)\s+")
_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")
_APPOSITION = 3
"""Tokens between the claim's name and the evidence's rival in one sentence within which the
two are listed together ("X and Y", "Y, like X,"): the sentence names both, no swap."""


@dataclass(frozen=True)
class ProperName:
    """A proper name of a text: a spaCy entity of ``PROPER_LABELS``, or a run of capitalised
    words that is not a sentence's start (``label_`` empty)."""

    text: str
    label_: str
    start_char: int
    end_char: int


def _checkable(name: str) -> bool:
    """A name that can stand for itself: a distinctive word, or an acronym of 2+ capitals
    ("TMZ", "U.S.")."""
    letters = name.replace(".", "")
    return bool(_distinctive(name)) or (
        len(letters) >= 2 and letters.isalpha() and letters.isupper()
    )


def proper_names(nlp: Any, text: str) -> list[ProperName]:
    """The proper names of ``text``, any kind: its entities labelled ``PROPER_LABELS`` (a
    leading "the" left out) and its capitalised word runs ("Secure Boot", "All Eyez") that are
    not a sentence's first word, overlap no entity (not "Monday" as a DATE), are not a title
    and have a word that can stand for them (:func:`_checkable`). In order."""
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
        if name.lower() in _TITLES or not _checkable(name) or name == "I":
            continue
        out.append(ProperName(name, "", start, end))
    return sorted(out, key=lambda n: n.start_char)


def _slot_token(token: str) -> str:
    return _stem(token.lower()) if token[:1].isalnum() else token


def _context(text: str, start: int, end: int) -> tuple[str, str, str, str]:
    """The two tokens before and the two after ``text[start:end]`` (a possessive ending and
    the text's ends count as tokens), crudely stemmed: the name's slot."""
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


def same_slot(a: tuple[str, str, str, str], b: tuple[str, str, str, str]) -> bool:
    """Whether two names stand in the same place of their sentences (their :func:`_context`):
    the word just before or just after them is the same, and so is another of the two words
    each side, a content word among them ("In the experiment, Miller found" / "In the
    experiment, Chicago found"; not two commas of a list)."""
    equal = [x for x, y in zip(a, b, strict=True) if x == y]
    return (
        (a[1] == b[1] or a[2] == b[2]) and len(equal) >= 2 and any(content_words(t) for t in equal)
    )


def _named_in(name: str, text: str) -> bool:
    """:func:`name_stands_in`, or a word of ``name`` made only of common name words
    ("British", "United States") sharing its stem with a capitalised word of ``text``."""
    if name_stands_in(name, text):
        return True
    there = [w for w in _words(text) if w[:1].isupper()]
    return any(
        _same_stem(w, t) for w in _words(name) if len(w) >= 4 and w[:1].isupper() for t in there
    )


def _aliases(a: str, b: str) -> bool:
    return _named_in(a, b) or _named_in(b, a)


def _listed_with(name: str, rival: ProperName, sentence: str) -> bool:
    """Whether ``name`` (or an alias) stands in ``sentence`` within ``_APPOSITION`` tokens of
    ``rival``: the two are listed together there."""
    tokens = list(_TOKEN.finditer(sentence))
    inside = [i for i, t in enumerate(tokens) if rival.start_char <= t.start() < rival.end_char]
    if not inside:
        return False
    lo, hi = max(0, inside[0] - _APPOSITION - 1), inside[-1] + _APPOSITION + 2
    near = sentence[tokens[lo].start() : tokens[min(hi, len(tokens)) - 1].end()]
    return _named_in(name, near.replace(rival.text, " "))


def _slot_mismatch(
    name: ProperName,
    claim_text: str,
    claim_names: list[ProperName],
    values: list[tuple[int, int]],
    index: AlignmentIndex,
    nlp: Any,
) -> NameMismatch | None:
    """The slot rule: where the rest of the claim is told (:func:`align` with only ``name`` and
    the claim's ``values`` masked), an aligned sentence gives another proper name, of any
    kind, in the place of ``name`` (:func:`same_slot`); ``name`` being a name of the
    documents, not of the query, and the sentence not listing the two together."""
    if (index.query and _named_in(name.text, index.query)) or not name_stands_in(
        name.text, index.joined
    ):
        return None
    alignment = align(claim_text, [*values, (name.start_char, name.end_char)], index)
    if alignment is None:
        return None
    slot = _context(claim_text, name.start_char, name.end_char)
    for sentence in sorted(alignment.aligned, key=lambda s: s is not alignment.best):
        rivals = [
            r
            for r in proper_names(nlp, sentence.text)
            if same_slot(slot, _context(sentence.text, r.start_char, r.end_char))
            and not any(_aliases(r.text, n.text) for n in claim_names)
            and not _named_in(r.text, claim_text)
            and not _listed_with(name.text, r, sentence.text)
        ]
        if rivals:
            rival = rivals[0]
            return NameMismatch(
                claim_name=name.text,
                start=name.start_char,
                end=name.end_char,
                label=name.label_,
                evidence_name=rival.text,
                evidence_sentence=sentence.text,
                evidence_start=rival.start_char,
                evidence_end=rival.end_char,
                plain=len({normalise(r.text) for r in rivals}) == 1,
            )
    return None
