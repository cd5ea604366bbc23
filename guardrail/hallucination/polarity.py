"""Polarity: does the claim deny what the sentence telling its fact affirms, or the reverse?

A negation inserted into a supported sentence ("Training does not increase the heart's size")
keeps every word of the evidence, and a small NLI model often scores it supported. Where the
claim's fact is told (the aligned sentences of :mod:`guardrail.hallucination.alignment`), the
word a negation governs must carry the same polarity:

- a **negated word** is the first content word after ``not``, ``n't``, ``never``, ``cannot``
  or ``no longer`` (auxiliaries, ``-ly`` adverbs and determiners between are read past: "has
  not been causally linked" negates *linked*); "not only", "not just", "whether or not" and
  "if not" negate nothing;
- a :class:`PolarityMismatch` is a negated word of the claim that an aligned sentence states
  un-negated, where no aligned sentence negates it — or the reverse, a word an aligned sentence
  negates that the claim states un-negated;
- only when the best aligned sentence holds at least ``MIN_COVERAGE`` of the claim's weight (a
  loose paraphrase says too little about where the fact is told), and only where the two
  places tell the same fact: the content words within ``CONTEXT`` tokens of the word share
  ``SHARED`` stems ("tobacco and alcohol are not allowed" is not "many members allow air
  travel"), and no place where the claim states the word un-negated shares more with the
  evidence's ("it doesn't melt … as it melts" against "… as it melts");
- nothing is compared when the claim is a question, or either side sets one fact against
  another (``in contrast``, ``whereas``, ``unlike``: the negation may belong to the other
  one); and a claim that affirms a word the evidence negates must deny nothing in its own
  words ("it is unlikely that cases will lead" against "cases will not lead").

Words compare by the crude stems the alignment uses (``handled`` = ``handle``), common irregular
verbs by their base form ("did not take" against "took").

Example::

    >>> from guardrail.hallucination.alignment import AlignmentIndex, claim_alignment
    >>> index = AlignmentIndex.of(["Regular training increases the heart's size."])
    >>> alignment, _ = claim_alignment("Training does not increase the heart's size.", index, None)
    >>> polarity_mismatch("Training does not increase the heart's size.", alignment).word
    'increase'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from types import MappingProxyType

from guardrail.hallucination.alignment import Alignment, EvidenceSentence
from guardrail.hallucination.calibration import _stem, content_words

MIN_COVERAGE = 0.5
"""Share of the claim's content weight (names, numbers and dates masked) the best aligned
sentence must hold for the polarity to be compared."""
CONTEXT = 6
"""Tokens either side of a word whose content words tell which fact it belongs to."""
SHARED = 2
"""Stems the claim's and the evidence's context words must share (all of the smaller set's,
when it holds fewer)."""

_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_CUES = frozenset({"not", "never", "cannot"})
_SKIP = frozenset(
    """a an the be is are was were been being am have has had having do does did will would
    can could should shall may might must to always really just only yet even also ever quite
    very necessarily actually exactly entirely fully completely simply much any all still
    currently usually generally directly immediately truly merely""".split()
)
"""Words read past between a negation and the word it governs."""
_NOT_A_NEGATION_AFTER = frozenset({"only", "just", "merely", "simply", "least"})
"""``not only`` / ``not just``: the sentence goes on to affirm ("not only X but Y")."""
_NOT_A_NEGATION_BEFORE = frozenset({"or", "if", "whether"})
"""``whether or not``, ``if not``: no statement is negated."""
_REACH = 4
"""Tokens before a word in which a negation counts as governing it."""
_DOUBT = frozenset(
    """no none nor neither without nothing nobody hardly barely rarely seldom unable fail
    fails failed lack lacks lacked instead rather unlike than""".split()
)
"""Words that, shortly before a word, keep it from counting as affirmed (a negation or a
contrast the cue list does not read: "no evidence", "failed to show", "rather than")."""
_NEGATIVE = (
    _DOUBT | _CUES | frozenset("""unlikely impossible deny denies denied absent absence""".split())
)
"""Words by which a claim denies something of its own (it then affirms nothing for sure)."""
_CONTRAST = frozenset({"contrast", "whereas", "unlike"})
"""Words that set one fact against another in the same sentence."""
_BASE = {
    past: base
    for base, forms in {
        "become": "became",
        "begin": "began begun",
        "bring": "brought",
        "build": "built",
        "buy": "bought",
        "catch": "caught",
        "choose": "chose chosen",
        "come": "came",
        "draw": "drew drawn",
        "drive": "drove driven",
        "eat": "ate eaten",
        "fight": "fought",
        "find": "found",
        "forget": "forgot forgotten",
        "get": "got gotten",
        "give": "gave given",
        "go": "went gone",
        "grow": "grew grown",
        "hear": "heard",
        "hold": "held",
        "keep": "kept",
        "know": "knew known",
        "lose": "lost",
        "make": "made",
        "mean": "meant",
        "meet": "met",
        "pay": "paid",
        "say": "said",
        "see": "seen",
        "sell": "sold",
        "send": "sent",
        "speak": "spoke spoken",
        "spend": "spent",
        "stand": "stood",
        "take": "took taken",
        "teach": "taught",
        "tell": "told",
        "think": "thought",
        "understand": "understood",
        "win": "won",
        "write": "wrote written",
    }.items()
    for past in forms.split()
}
"""Irregular verb forms → their base form (the word after "did not")."""


def _word_stem(word: str) -> str:
    """The stem a word's polarity is compared by."""
    return _stem(_BASE.get(word, word))


@dataclass(frozen=True)
class PolarityMismatch:
    """A word the claim negates and its fact's sentence affirms, or the reverse."""

    word: str
    """The claim's word (as written)."""
    start: int
    end: int
    """Span of the negation and its word in the claim (the part that flips the fact)."""
    claim_negated: bool
    """True: the claim negates the word; False: the evidence does."""
    evidence_sentence: str
    evidence_words: str
    """What the evidence sentence says in the word's place ("increases", "did not guarantee")."""


@dataclass(frozen=True)
class _Token:
    word: str
    start: int
    end: int
    cue: bool


@dataclass(frozen=True)
class _Text:
    """A text's tokens, its negations and the un-negated places of its words."""

    text: str
    tokens: tuple[_Token, ...]
    governed: tuple[tuple[int, int], ...]
    """(cue index, governed word index) of each negation."""

    @classmethod
    def of(cls, text: str) -> _Text:
        tokens = _tokens(text)
        return cls(text, tuple(tokens), tuple(_governed(tokens)))

    @cached_property
    def negated(self) -> frozenset[str]:
        return frozenset(_word_stem(self.tokens[j].word) for _, j in self.governed)

    def affirmed(self) -> Mapping[str, tuple[int, ...]]:
        """Stem → indices of the words no negation within ``_REACH`` tokens before governs
        (read once per text: a :class:`_Text` is shared by every claim aligned with it)."""
        return self._affirmed

    @cached_property
    def _affirmed(self) -> Mapping[str, tuple[int, ...]]:
        out: dict[str, list[int]] = {}
        tokens = self.tokens
        for j, t in enumerate(tokens):
            if t.cue or len(t.word) < 3 or t.word in _SKIP:
                continue
            if any(tokens[k].cue or tokens[k].word in _DOUBT for k in range(max(0, j - _REACH), j)):
                continue
            out.setdefault(_word_stem(t.word), []).append(j)
        return MappingProxyType({stem: tuple(at) for stem, at in out.items()})

    def context(self, j: int) -> set[str]:
        """Content stems within ``CONTEXT`` tokens of token ``j`` (the word itself left out)."""
        tokens = self.tokens
        before = tokens[max(0, j - CONTEXT) : j]
        after = tokens[j + 1 : j + 1 + CONTEXT]
        words = [t.word for t in (*before, *after) if not t.cue]
        own = _word_stem(tokens[j].word)
        return {s for s in (_word_stem(w) for w in content_words(" ".join(words))) if s != own}

    @property
    def contrasted(self) -> bool:
        return any(t.word in _CONTRAST for t in self.tokens)


@lru_cache(maxsize=1024)
def _read(text: str) -> _Text:
    """:meth:`_Text.of`, once per text (an evidence sentence is read for every claim aligned
    with it; a :class:`_Text` is immutable)."""
    return _Text.of(text)


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    for m in _TOKEN.finditer(text):
        word = m.group(0).lower().replace("’", "'")
        if word.endswith("n't"):
            out.append(_Token(word[:-3] or word, m.start(), m.end() - 3, False))
            out.append(_Token("not", m.end() - 3, m.end(), True))
            continue
        if word == "no" and text[m.end() : m.end() + 7].lower().startswith(" longer"):
            out.append(_Token("no", m.start(), m.end(), True))
            continue
        out.append(_Token(word, m.start(), m.end(), word in _CUES))
    return out


def _governed(tokens: Sequence[_Token]) -> list[tuple[int, int]]:
    """(cue index, governed word index) of each negation."""
    found: list[tuple[int, int]] = []
    for i, t in enumerate(tokens):
        if not t.cue:
            continue
        if i > 0 and tokens[i - 1].word in _NOT_A_NEGATION_BEFORE:
            continue
        j = i + 1
        if t.word == "no" and j < len(tokens) and tokens[j].word == "longer":
            j += 1
        if j < len(tokens) and tokens[j].word in _NOT_A_NEGATION_AFTER:
            continue
        while j < len(tokens) and (
            tokens[j].word in _SKIP or (tokens[j].word.endswith("ly") and len(tokens[j].word) > 4)
        ):
            j += 1
        if j < len(tokens) and not tokens[j].cue and len(tokens[j].word) >= 3:
            found.append((i, j))
    return found


def polarity_mismatch(claim_text: str, alignment: Alignment | None) -> PolarityMismatch | None:
    """The first word whose polarity the claim and its aligned sentences disagree on (module
    docstring), else ``None``."""
    if alignment is None or alignment.coverage < MIN_COVERAGE or claim_text.rstrip().endswith("?"):
        return None
    claim = _read(claim_text)
    if claim.contrasted:
        return None
    evidence = [(s, _read(s.text)) for s in alignment.aligned]
    return _claim_denies(claim, evidence) or _claim_affirms(claim, evidence)


def _claim_denies(
    claim: _Text, evidence: list[tuple[EvidenceSentence, _Text]]
) -> PolarityMismatch | None:
    """A word the claim negates that an aligned sentence states un-negated in the same
    context, no aligned sentence negating it."""
    evidence_negated = set().union(*(t.negated for _, t in evidence))
    claim_affirmed = claim.affirmed()
    for i, j in claim.governed:
        stem = _word_stem(claim.tokens[j].word)
        if stem in evidence_negated:
            continue
        around = claim.context(j)
        elsewhere = [claim.context(k) for k in claim_affirmed.get(stem, ())]
        for sentence, text in evidence:
            if text.contrasted:
                continue
            for k in text.affirmed().get(stem, ()):
                if _denied_there(around, elsewhere, text.context(k)):
                    t, there = claim.tokens[j], text.tokens[k]
                    return PolarityMismatch(
                        claim.text[t.start : t.end],
                        claim.tokens[i].start,
                        t.end,
                        True,
                        sentence.text,
                        text.text[there.start : there.end],
                    )
    return None


def _claim_affirms(
    claim: _Text, evidence: list[tuple[EvidenceSentence, _Text]]
) -> PolarityMismatch | None:
    """A word an aligned sentence negates that the claim, denying nothing itself, states in
    the same context, no aligned sentence affirming it."""
    if any(t.word in _NEGATIVE for t in claim.tokens):
        return None
    claim_affirmed = claim.affirmed()
    evidence_affirmed = set().union(*(t.affirmed() for _, t in evidence))
    for sentence, text in evidence:
        if text.contrasted:
            continue
        for i, j in text.governed:
            stem = _word_stem(text.tokens[j].word)
            if stem in evidence_affirmed:
                continue
            around = text.context(j)
            for k in claim_affirmed.get(stem, ()):
                if _same_context(around, claim.context(k)):
                    t = claim.tokens[k]
                    said = text.text[text.tokens[i].start : text.tokens[j].end]
                    return PolarityMismatch(
                        claim.text[t.start : t.end], t.start, t.end, False, sentence.text, said
                    )
    return None


def _same_context(a: set[str], b: set[str]) -> bool:
    """Whether two places' context words tell the same fact: they share ``SHARED`` stems (or
    all of the smaller one's)."""
    return len(a & b) >= min(SHARED, len(a), len(b)) > 0


def _denied_there(around: set[str], elsewhere: list[set[str]], there: set[str]) -> bool:
    """Whether the claim's negated word (context ``around``) is the evidence's affirmed one
    (context ``there``): the same context, and no place where the claim affirms the word
    (contexts ``elsewhere``) shares more of it ("it doesn't melt … as it melts")."""
    shared = len(around & there)
    return _same_context(around, there) and all(len(e & there) <= shared for e in elsewhere)
