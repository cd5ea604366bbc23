"""Spelling (pyspellchecker) and two safe grammar rules, never touching what must not change.

Protected, never edited: named entities and proper nouns (spaCy), numbers and anything with a
digit, emails, URLs, text inside quotes, words with an apostrophe, words of fewer than four
letters, and every word of the ``protected`` vocabulary (the query, evidence, dialogue and
knowledge base, so a term the user or the record uses is never "fixed").

Grammar rules: a doubled word ("the the" → "the"); "a" / "an" before a vowel / consonant
letter ("a engineer" → "an engineer"); words starting with h or u (hour, unit) and eu- / one
are left alone, since their sound is not their letter.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from guardrail.correction.edits import Edit
from guardrail.report import Correction, CorrectionType, Span

QUOTED_RE = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|`[^`]*`")
_A_EXCEPTIONS = ("eu", "one", "once")

SPELLING_PRIORITY = 1
GRAMMAR_PRIORITY = 2


def quoted_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges inside quotation marks."""
    return [(m.start(), m.end()) for m in QUOTED_RE.finditer(text)]


def _protected_token(tok: Any, quoted: list[tuple[int, int]], vocabulary: set[str]) -> bool:
    if tok.pos_ == "PROPN" or tok.ent_type_ or tok.like_num or tok.like_email or tok.like_url:
        return True
    if any(ch.isdigit() for ch in tok.text) or "'" in tok.text or "’" in tok.text:
        return True
    if not tok.is_alpha or len(tok.text) < 4:
        return True
    if tok.text[0].isupper() and not (tok.is_sent_start and tok.text[1:].islower()):
        return True  # capitalised mid-sentence: a name the tagger missed
    if tok.text.isupper():
        return True  # acronym
    if tok.lower_ in vocabulary:
        return True
    return any(s <= tok.idx < e for s, e in quoted)


def spelling_corrections(
    doc: Any, speller: Any, vocabulary: set[str], max_distance: int = 2
) -> list[Edit]:
    """Misspelled words of a parsed text as edits (``tag`` = the :class:`Correction`)."""
    quoted = quoted_ranges(doc.text)
    candidates = [t for t in doc if not _protected_token(t, quoted, vocabulary)]
    unknown = speller.unknown([t.lower_ for t in candidates])
    edits: list[Edit] = []
    for tok in candidates:
        if tok.lower_ not in unknown:
            continue
        picked = _best_candidate(speller, tok.lower_, max_distance)
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


def _best_candidate(speller: Any, word: str, max_distance: int) -> tuple[str, int] | None:
    """The closest known word; ties go to the same first letter, then to frequency.

    ``None`` when nothing is close enough or the choice stays ambiguous (two equally close,
    equally plausible words), since a wrong "fix" is worse than none.
    """
    from rapidfuzz.distance import OSA

    candidates = [c for c in speller.candidates(word) or () if c != word]
    if not candidates:
        return None
    scored = [(OSA.distance(word, c), c) for c in candidates]  # transpositions cost 1
    nearest = min(d for d, _ in scored)
    if nearest > max_distance:
        return None
    tied = [c for d, c in scored if d == nearest]
    same_start = [c for c in tied if c[0] == word[0]]
    tied = same_start or tied
    ranked = sorted(tied, key=lambda c: -float(speller.word_usage_frequency(c)))
    if len(ranked) > 1:
        top, second = (float(speller.word_usage_frequency(c)) for c in ranked[:2])
        if second > 0.5 * top:
            return None
    return ranked[0], nearest


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
        elif prev.lower_ in ("a", "an") and tok.is_alpha and tok.lower_[0] not in "hu":
            # Conservative: words starting with h / u (hour, unit, umbrella) are left alone.
            word = tok.lower_
            vowel = word[0] in "aeio" and not word.startswith(_A_EXCEPTIONS)
            wanted = "an" if vowel else "a"
            if prev.lower_ != wanted:
                fixed = wanted.capitalize() if prev.text[0].isupper() else wanted
                why = f"'{fixed} {tok.text}'"
                edits.append(
                    _grammar_edit(doc.text, prev.idx, prev.idx + len(prev.text), fixed, why)
                )
    return edits


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
