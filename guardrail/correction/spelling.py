"""Spelling (pyspellchecker) and two safe grammar rules, never touching what must not change.

A word is corrected only when all of these hold:

- the speller does not know it, and it is not in the ``protected`` vocabulary (the query,
  evidence, dialogue and knowledge base: a term the user or the record uses is never
  "fixed") nor a technical term (:mod:`guardrail.correction.lexicon`);
- it is not another region's spelling of a known word, a regular derivation of one, or a
  compound of two (:mod:`guardrail.correction.variants`: "optimises", "dequantize",
  "webhook");
- it is not a name (spaCy proper noun or entity, capitalised mid-sentence), an acronym,
  camelCase, a number or anything with a digit, an email or URL, a word with an apostrophe,
  part of a code-like chunk (hyphens, underscores, dots, slashes: "ISO-8601", "v2.3.1",
  "snake_case"), or inside quotes or a code span;
- the correction is close: one edit for words of fewer than eight letters, two otherwise
  (transpositions cost one), unambiguous, and for three-letter words only a swap of two
  letters into a very common word ("teh" → "the").

Grammar rules: a doubled word ("the the" → "the"); "a" / "an" before a vowel / consonant
letter ("a engineer" → "an engineer"); words starting with h or u (hour, unit) and eu- / one
are left alone, since their sound is not their letter.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any

from guardrail.correction.edits import Edit
from guardrail.correction.lexicon import technical_terms
from guardrail.correction.variants import legitimate_form
from guardrail.report import Correction, CorrectionType, Span
from guardrail.text.segmentation import parsed_sentences

QUOTED_RE = re.compile(
    r"```.*?```|`[^`]*`|\"[^\"]*\"|“[^”]*”|‘[^’]*’|(?<!\w)'[^'\n]{1,200}'(?!\w)", re.DOTALL
)
_EDGE_PUNCT = ".,;:!?\"'()[]{}“”‘’«»*"
_CODE_CHARS = re.compile(r"[-_./\\@#:=+<>|~^$%&*0-9]")
COMMON_WORD_FREQUENCY = 4e-7
"""A speller word at least this frequent (share of its corpus) counts as common: a derivation
one edit from a common word ("goverment") is read as a typo of it."""
VERY_COMMON_WORD_FREQUENCY = 1e-3
"""Three-letter words are only corrected into words this frequent (the, and, you)."""
FOREIGN_MIN_UNKNOWN = 3
FOREIGN_SHARE = 0.4
"""A sentence with at least 3 unknown words making up 40 % of its words is not corrected."""
_CODE_LINE = re.compile(r"[{}]|;\s*$|<<|>>|==|!=|->|::|\w\(\w*\)|</?[a-z][a-z0-9]*[^<>]*>")
_A_EXCEPTIONS = ("eu", "one", "once")

SPELLING_PRIORITY = 1
GRAMMAR_PRIORITY = 2


def quoted_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges inside quotation marks."""
    return [(m.start(), m.end()) for m in QUOTED_RE.finditer(text)]


def _protected_token(
    tok: Any, text: str, quoted: list[tuple[int, int]], vocabulary: AbstractSet[str]
) -> bool:
    word: str = tok.text
    if tok.ent_type_ or tok.like_num or tok.like_email or tok.like_url:
        return True
    if tok.pos_ == "PROPN" and not word.islower():
        return True  # a lower-case "proper noun" is the tagger guessing on an unknown word
    if any(ch.isdigit() for ch in word) or "'" in word or "’" in word:
        return True
    if not tok.is_alpha or len(word) < 3:
        return True
    if word[0].isupper():
        if not (tok.is_sent_start and word[1:].islower()):
            return True  # capitalised mid-sentence: a name the tagger missed; acronyms
        if tok.pos_ in ("NOUN", "X"):
            return True  # "Udemy", "Carbone" opening a sentence: likely a name
    if any(ch.isupper() for ch in word[1:]):
        return True  # camelCase, McDonald
    if tok.lower_ in vocabulary:
        return True
    end = tok.idx + len(word)
    if end < len(text) and text[end] in "'’":
        return True  # elision: "lookin'"
    prev = tok.doc[tok.i - 1].text if tok.i > 0 else ""
    if len(prev) == 1 and prev.isalpha() and prev not in "AaI":
        return True  # a split word: "L ifting" in an acrostic, "e mail"
    if any(s <= tok.idx < e for s, e in quoted):
        return True
    return _in_code_chunk(text, tok.idx, end)


def _in_code_chunk(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is part of a code-like chunk between spaces ("ISO-8601",
    "state-of-the-art", "snake_case", "v2.3.1", "a/b", "config.yaml") or of a line of code
    ("cout << x << endl;")."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    if len(_CODE_LINE.findall(line)) >= 2:
        return True
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    chunk = text[start:end].strip(_EDGE_PUNCT)
    return not chunk.isalpha() and bool(_CODE_CHARS.search(chunk))


class _Lexicon:
    """What counts as a known word: the speller, technical terms and the protected vocabulary."""

    def __init__(self, speller: Any, vocabulary: AbstractSet[str]) -> None:
        self.speller = speller
        self.trusted_words = technical_terms() | frozenset(vocabulary)

    def known(self, word: str) -> bool:
        return word in self.trusted_words or word in self.speller

    def trusted(self, word: str) -> bool:
        return word in self.trusted_words

    def common(self, word: str) -> bool:
        return float(self.speller.word_usage_frequency(word)) >= COMMON_WORD_FREQUENCY

    def misspelt(self, word: str) -> bool:
        if self.known(word):
            return False
        return legitimate_form(word, self.known, self.common, self.trusted) is None


def misspelt(word: str, speller: Any, vocabulary: AbstractSet[str] = frozenset()) -> bool:
    """Whether a lower-case word is unknown and no regional variant, derivation or compound."""
    return _Lexicon(speller, vocabulary).misspelt(word)


def _foreign_sentences(doc: Any, lexicon: _Lexicon) -> list[tuple[int, int]]:
    """Character ranges of sentences that are mostly unknown words (another language, lorem
    ipsum, jargon): their "typos" are not typos."""
    out = []
    for sent in parsed_sentences(doc):
        words = [t.lower_ for t in sent if t.is_alpha and len(t.text) >= 3]
        unknown = sum(not lexicon.known(w) for w in words)
        if unknown >= FOREIGN_MIN_UNKNOWN and unknown >= FOREIGN_SHARE * len(words):
            out.append((sent.start_char, sent.end_char))
    return out


def spelling_corrections(
    doc: Any, speller: Any, vocabulary: set[str], max_distance: int = 2
) -> list[Edit]:
    """Misspelled words of a parsed text as edits (``tag`` = the :class:`Correction`)."""
    text: str = doc.text
    quoted = quoted_ranges(text)
    lexicon = _Lexicon(speller, vocabulary)
    candidates = [t for t in doc if not _protected_token(t, text, quoted, vocabulary)]
    candidates = [t for t in candidates if lexicon.misspelt(t.lower_)]
    if not candidates:
        return []
    foreign = _foreign_sentences(doc, lexicon)
    edits: list[Edit] = []
    for tok in candidates:
        if any(s <= tok.idx < e for s, e in foreign):
            continue
        word = tok.lower_
        prev = doc[tok.i - 1].lower_ if tok.i > 0 else ""
        if prev in ("a", "i") and lexicon.known(prev + word):
            continue  # a split word: "I nspiring"
        limit = min(max_distance, 1 if len(word) < 8 else 2)
        picked = _best_candidate(speller, word, limit)
        if picked is None:
            continue
        best, distance = picked
        fixed = best.capitalize() if tok.text[0].isupper() else best
        confidence = 0.85 if distance == 1 else 0.65
        correction = Correction(
            type=CorrectionType.SPELLING,
            span=Span(start=tok.idx, end=tok.idx + len(tok.text)),
            original=tok.text,
            replacement=fixed,
            confidence=confidence,
            source="pyspellchecker",
            message=f"spelling: {tok.text!r} → {fixed!r}",
        )
        edits.append(Edit(tok.idx, tok.idx + len(tok.text), fixed, SPELLING_PRIORITY, correction))
    return edits


def _nearby_words(speller: Any, word: str, max_distance: int) -> list[tuple[int, str]]:
    """Known words within ``max_distance`` edits (transpositions cost 1), with the distance.

    One pass of rapidfuzz over the speller's dictionary (milliseconds); pyspellchecker's own
    distance-2 candidate search takes seconds per word.
    """
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    dictionary = getattr(getattr(speller, "word_frequency", None), "dictionary", None)
    if dictionary is None:
        found = [(OSA.distance(word, c), c) for c in speller.candidates(word) or ()]
        return [(d, c) for d, c in found if 0 < d <= max_distance]
    hits = process.extract(
        word, dictionary.keys(), scorer=OSA.distance, score_cutoff=max_distance, limit=None
    )
    return [(int(d), c) for c, d, _ in hits if 0 < d]


def _best_candidate(speller: Any, word: str, max_distance: int) -> tuple[str, int] | None:
    """The closest known word; ties go to the same first letter, then to frequency.

    ``None`` when nothing is close enough or the choice stays ambiguous (two equally close,
    equally plausible words), since a wrong "fix" is worse than none. A three-letter word is
    only corrected by swapping two letters into a very common word ("teh" → "the").
    """
    scored = _nearby_words(speller, word, max_distance)
    if not scored:
        return None
    nearest = min(d for d, _ in scored)
    tied = [c for d, c in scored if d == nearest]
    same_start = [c for c in tied if c[0] == word[0]]
    tied = same_start or tied
    ranked = sorted(tied, key=lambda c: -float(speller.word_usage_frequency(c)))
    if len(ranked) > 1:
        top, second = (float(speller.word_usage_frequency(c)) for c in ranked[:2])
        if second > 0.5 * top:
            return None
    best = ranked[0]
    if len(word) < 4:
        swapped = sorted(best) == sorted(word) and nearest == 1
        if not swapped or float(speller.word_usage_frequency(best)) < VERY_COMMON_WORD_FREQUENCY:
            return None
    return best, nearest


def grammar_corrections(doc: Any) -> list[Edit]:
    """Doubled words and a/an agreement, as edits."""
    quoted = quoted_ranges(doc.text)
    edits: list[Edit] = []
    tokens = list(doc)
    for prev, tok in itertools.pairwise(tokens):
        if any(s <= tok.idx < e for s, e in quoted):
            continue
        if tok.is_alpha and tok.lower_ == prev.lower_ and tok.lower_ not in ("had", "that"):
            start = prev.idx + len(prev.text)
            edits.append(
                _grammar_edit(doc.text, start, tok.idx + len(tok.text), "", "doubled word")
            )
        elif prev.lower_ in ("a", "an") and tok.is_alpha:
            wanted = article_for(tok.text)
            if wanted is not None and prev.lower_ != wanted:
                fixed = wanted.capitalize() if prev.text[0].isupper() else wanted
                why = f"'{fixed} {tok.text}'"
                edits.append(
                    _grammar_edit(doc.text, prev.idx, prev.idx + len(prev.text), fixed, why)
                )
    return edits


def article_for(word: str) -> str | None:
    """The indefinite article ``word`` takes ("a" or "an"); ``None`` when the rule cannot
    tell (conservative: words starting with h / u, hour, unit, umbrella, are left alone)."""
    lower = word.lower()
    if not lower[:1].isalpha() or lower[0] in "hu":
        return None
    return "an" if lower[0] in "aeio" and not lower.startswith(_A_EXCEPTIONS) else "a"


def articles_for_repairs(text: str, edits: list[Edit], repairs: list[Edit]) -> list[Edit]:
    """``edits`` with the a/an agreement judged on the word each of the ``repairs`` puts in
    place: a grammar edit of the article just before a repaired span is dropped (it judged the
    word being replaced), and an article that does not agree with the repair's first word is
    corrected."""
    out = list(edits)
    for repair in repairs:
        before = re.search(r"(?<![\w-])([Aa]n?)\s+$", text[: repair.start])
        if before is None:
            continue
        start, end = before.span(1)
        stale = [e for e in out if (e.start, e.end, e.priority) == (start, end, GRAMMAR_PRIORITY)]
        out = [e for e in out if e not in stale]
        first = re.match(r"[^\W\d_]+", repair.replacement)
        wanted = article_for(first.group(0)) if first else None
        if wanted is not None and text[start:end].lower() != wanted:
            fixed = wanted.capitalize() if text[start].isupper() else wanted
            out.append(_grammar_edit(text, start, end, fixed, f"'{fixed} {repair.replacement}'"))
    return out


def _grammar_edit(text: str, start: int, end: int, replacement: str, why: str) -> Edit:
    correction = Correction(
        type=CorrectionType.GRAMMAR,
        span=Span(start=start, end=end),
        original=text[start:end],
        replacement=replacement,
        confidence=0.9,
        source="rules",
        message=f"grammar: {why}",
    )
    return Edit(start, end, replacement, GRAMMAR_PRIORITY, correction)


def vocabulary_of(texts: list[str]) -> set[str]:
    """Lower-cased words of the given texts (the protected vocabulary)."""
    return {w.casefold() for text in texts for w in re.findall(r"[^\W\d_]+", text)}


def load_speller(factory: Callable[[], Any] | None = None) -> Any:
    """A ``pyspellchecker`` English speller (install hint when missing)."""
    if factory is not None:
        return factory()
    try:
        from spellchecker import SpellChecker
    except ImportError as exc:
        from guardrail.errors import MissingDependencyError

        raise MissingDependencyError("pyspellchecker", "nlp") from exc
    return SpellChecker(language="en", distance=2)
