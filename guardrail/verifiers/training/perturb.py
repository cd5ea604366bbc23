"""Sentence perturbations for :mod:`guardrail.verifiers.training.hardgen`: the edits that turn
a supported sentence into a contradicted or not-entailed claim (a number, month, name, qualifier or
word swapped, a negation, an antonym, an invented detail) or into a reworded supported one.

Each takes a sentence (and what it may draw from: the document, a name pool, a seeded
``random.Random``) and returns the new sentence, or ``None`` when the edit does not apply.
"""

from __future__ import annotations

import random
import re

MONTHS = (
    "January February March April May June July August September October November December"
).split()
PLACES = (
    "Lyon, Toronto, Osaka, Melbourne, Nairobi, Lisbon, Denver, Glasgow, Hamburg, Bogotá, Cairo, "
    "Seattle, Madrid, Oslo, Chennai, Dublin, Prague, Houston, Manila, Vienna"
).split(", ")
ANTONYMS = dict(
    pair
    for a, b in [
        ("increased", "decreased"),
        ("increase", "decrease"),
        ("largest", "smallest"),
        ("first", "last"),
        ("won", "lost"),
        ("more", "less"),
        ("higher", "lower"),
        ("before", "after"),
        ("north", "south"),
        ("east", "west"),
        ("older", "younger"),
        ("earliest", "latest"),
        ("maximum", "minimum"),
        ("always", "never"),
        ("early", "late"),
        ("male", "female"),
        ("rise", "fall"),
        ("best", "worst"),
        ("oldest", "youngest"),
        ("major", "minor"),
        ("public", "private"),
        ("success", "failure"),
        ("inside", "outside"),
        ("positive", "negative"),
        ("highest", "lowest"),
        ("accepted", "rejected"),
        ("allowed", "banned"),
        ("entered", "left"),
        ("born", "died"),
        ("upper", "lower"),
    ]
    for pair in ((a, b), (b, a))
)
AUX = r"\b(is|was|are|were|has|had|have|can|could|will|would|should|does|did|may|must)\b"
_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w,])|(?<![\w.,])\d+(?:\.\d+)?(?![\w])")
_NAME = re.compile(
    r"(?<=[a-z,] )(?<!of )(?!(?:January|February|March|April|May|June|July|August|September|"
    r"October|November|December)\b)(?:[A-Z][a-z]+(?: (?:of |de |the )?[A-Z][a-z]+)*)"
)
_STARTERS = {"The", "This", "It", "He", "She", "They", "His", "Her", "Its", "Their", "A", "An"}


def _words(sentence: str) -> set[str]:
    return set(re.findall(r"\w+", sentence.lower()))


def _strip_end(s: str) -> str:
    return s.rstrip().rstrip(".!?").rstrip()


def _lower_first(s: str) -> str:
    first = s.split(" ", 1)[0]
    return s[0].lower() + s[1:] if first in _STARTERS else s


def supported_variant(s: str, prev: str | None, rng: random.Random) -> str:
    """A rewording that keeps every fact of ``s``: drop a parenthetical, move a leading phrase,
    resolve a leading pronoun from the previous sentence's subject, or keep it as is."""
    options: list[str] = []
    dropped = re.sub(r"\s*\([^()]*\)", "", s)
    if dropped != s and len(dropped.split()) >= 4:
        options.append(dropped)
    m = re.match(r"^(In|On|During|By|After|Before|Since) ([^,]{3,40}), (.+?)[.!]?$", s)
    if m:
        options.append(
            f"{m.group(3)[0].upper()}{m.group(3)[1:]} {m.group(1).lower()} {m.group(2)}."
        )
    if prev and re.match(r"^(He|She|It|They) ", s):
        subject = re.match(r"^((?:[A-Z][\w.'-]+ ?){1,4})", prev)
        if (
            subject
            and len(subject.group(1).split()) >= 1
            and subject.group(1).split()[0] not in _STARTERS
        ):
            options.append(subject.group(1).strip() + s[s.index(" ") :])
    return rng.choice(options) if options else s


def swap_number(s: str, doc: list[str], rng: random.Random) -> str | None:
    found = list(_NUMBER.finditer(s))
    if not found:
        return None
    m = rng.choice(found)
    old = m.group(0)
    others = {x.group(0) for d in doc for x in _NUMBER.finditer(d)} - {old}
    value = float(old.replace(",", ""))
    if others and rng.random() < 0.5:
        new = rng.choice(sorted(others))
    elif re.search("(?:" + "|".join(MONTHS) + ") $", s[: m.start()]) and int(value) <= 31:
        new = str(rng.choice([d for d in range(1, 29) if d != int(value)]))
    elif re.fullmatch(r"1[5-9]\d\d|20\d\d", old):
        new = str(int(value) + rng.choice([-1, 1]) * rng.randint(1, 12))
    elif "." in old:
        new = f"{value * rng.choice([0.5, 1.5, 2.0, 0.8]):.{len(old.split('.')[1])}f}"
    else:
        number = int(value) + max(1, int(value * rng.choice([0.2, 0.5, 1.0, 2.0])))
        new = f"{number:,}" if "," in old else str(number)
    return None if new == old else s[: m.start()] + new + s[m.end() :]


def swap_month(s: str, rng: random.Random) -> str | None:
    found = [mo for mo in MONTHS if re.search(rf"\b{mo}\b", s)]
    if not found:
        return None
    old = rng.choice(found)
    return re.sub(rf"\b{old}\b", rng.choice([mo for mo in MONTHS if mo != old]), s, count=1)


def negate(s: str) -> str | None:
    if re.search(r"\bnot\b", s):
        return re.sub(r"\s+not\b", "", s, count=1)
    if re.search(r"n't\b", s):
        return re.sub(
            r"(\w+)n't\b",
            lambda m: {"wo": "will", "ca": "can"}.get(m.group(1), m.group(1)),
            s,
            count=1,
        )
    m = re.search(AUX, s)
    if not m or m.start() == 0:
        return None
    return s[: m.end()] + " not" + s[m.end() :]


def antonym(s: str, rng: random.Random) -> str | None:
    words = [w for w in re.findall(r"\b[a-z]+\b", s) if w in ANTONYMS]
    if not words:
        return None
    old = rng.choice(words)
    return re.sub(rf"\b{old}\b", ANTONYMS[old], s, count=1)


def swap_entity(s: str, doc: list[str], pool: list[str], rng: random.Random) -> str | None:
    found = list(_NAME.finditer(s))
    if not found:
        return None
    m = rng.choice(found)
    names = {x.group(0) for d in doc for x in _NAME.finditer(d)} - {m.group(0)}
    names = {n for n in names if n not in s}
    candidates = sorted(names) or [p for p in rng.sample(pool, min(20, len(pool))) if p not in s]
    if not candidates:
        return None
    return s[: m.start()] + rng.choice(candidates) + s[m.end() :]


def invent_detail(s: str, doc_text: str, rng: random.Random) -> str:
    year = rng.choice([y for y in range(1950, 2024) if str(y) not in doc_text])
    detail = rng.choice(
        [
            f" in {year}",
            f" in {rng.choice([p for p in PLACES if p not in doc_text])}",
            f" for {rng.randint(3, 40)} years",
            f", according to a {year} report",
            " for the second time",
            f" with {rng.randint(2, 90)} others",
        ]
    )
    return _strip_end(s) + detail + "."


#: Qualifiers whose removal makes a claim say more than its sentence (summaries and LLM answers
#: drop them: "was formerly associated with" → "was associated with").
_QUALIFIER = re.compile(
    r"\b(?:formerly|reportedly|allegedly|nearly|almost|approximately|roughly|partly|partially|"
    r"possibly|probably|perhaps|unofficially|former) "
)
_QUALIFIER_EDITS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bone of the (\w+est)\b"), r"the \1"),
    (re.compile(r"\b(?:was|were) nominated for\b"), "won"),
    # co-founded → founded (a co-author is still an author: verbs only)
    (
        re.compile(r"\bco-(?=(?:founded|wrote|written|produced|directed|created|hosted|owned)\b)"),
        "",
    ),
)
_COMMON = re.compile(r"(?<![\w-])[a-z]{5,}(?![\w-])")


_FUNCTION = frozenset(
    """about above after again against among because before being below between could during
    every first other their there these those through under until where which while would
    should since still though without within""".split()
)
"""Common long words a swap must not touch."""


def drop_qualifier(s: str, rng: random.Random) -> str | None:
    """``s`` with one qualifier removed (see ``_QUALIFIER``), or None if it has none."""
    options: list[str] = [s[: m.start()] + s[m.end() :] for m in _QUALIFIER.finditer(s)]
    for pattern, repl in _QUALIFIER_EDITS:
        new = pattern.sub(repl, s, count=1)
        if new != s:
            options.append(new)
    return rng.choice(options) if options else None


def _word_class(word: str) -> str:
    for end in ("ing", "ed", "ly", "s"):
        if word.endswith(end):
            return end
    return ""


def swap_word(s: str, window: str, outside: list[str], rng: random.Random) -> str | None:
    """One lower-case word of ``s`` (5+ letters, not a function word) swapped for a word of the
    same ending class that occurs in ``outside`` sentences but nowhere in ``window``."""
    inside = _words(window)
    found = [m for m in _COMMON.finditer(s) if m.group(0) not in _FUNCTION]
    pool: list[str] = sorted({w for o in outside for w in _COMMON.findall(o)} - inside - _FUNCTION)
    if not found or not pool:
        return None
    m = rng.choice(found)
    same = [w for w in pool if _word_class(w) == _word_class(m.group(0))]
    if not same:
        return None
    return s[: m.start()] + rng.choice(same) + s[m.end() :]


def join(a: str, b: str) -> str:
    return f"{_strip_end(a)}, and {_lower_first(b)}"
