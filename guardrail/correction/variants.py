"""Is an unknown word still a real word? Regional variants, derivations and compounds.

The spelling pass only fixes a word the dictionary does not know. pyspellchecker's English
list is American and misses most technical vocabulary, so "unknown" is not "misspelt":
"optimises" (British), "dequantize" (prefix + known word), "microservices" (compound) are all
correct. :func:`legitimate_form` says why such a word is real, given a ``known`` predicate
(the speller, the protected vocabulary and :mod:`guardrail.correction.lexicon`):

- **regional variant** — British/American (and other regional) spelling rules applied in both
  directions: -ise/-ize, -isation/-ization, -yse/-yze, -our/-or, -re/-er, -ogue/-og,
  -ence/-ense, -lled/-lling/-ller/-led, -il/-ill (fulfil), ae/oe → e, -mme → -m,
  judgement/judgment, ageing/aging, and a few irregular pairs (grey/gray, tyre/tire, …);
- **derivation** — a known stem with a common suffix (-s, -ed, -ing, -er, -ly, -ness, -ize,
  -ization, -able, …) or a known word behind a common prefix (un-, re-, de-, micro-, hyper-,
  …), recursively (``tokenizers`` → ``tokenizer`` → ``tokenize`` → ``token``). A derivation
  spelled against the regular rule (``occured`` while ``occurred`` is known) is not accepted;
- **compound** — two known words of at least three letters each (``webhook``, ``runtime``).

Each check fails closed: an unsure answer keeps the word unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

Known = Callable[[str], bool]

# (pattern, replacement), applied one match at a time, up to two rules deep.
_REGIONAL_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        # British → American only: the dictionary is American
        # -ise / -ize, -isation / -ization, -yse / -yze
        (r"(?<=[a-z]{2})is(?=(e|es|ed|ing|er|ers|ation|ations|ational|able|ability)$)", "iz"),
        (r"(?<=[a-z])ys(?=(e|es|ed|ing|er|ers)$)", "yz"),
        # -our / -or (colour, behaviour, favourite, honourable)
        (r"(?<=[a-z])our(?=[a-z]*$)", "or"),
        # -re / -er (centre, theatre, fibre, manoeuvre), centred / centring
        (r"(?<=[bcdgkmnptv])re(?=s?$)", "er"),
        (r"(?<=[bcdgkmnptv])r(?=(ed|ing)$)", "er"),
        # -ogue / -og (catalogue, dialogue, analogue)
        (r"ogue(?=s?$)", "og"),
        (r"ogu(?=(ed|ing)$)", "og"),
        # -ence / -ense (defence, offence, licence, pretence)
        (r"(?<=[a-z]{2})ence(?=s?$)", "ense"),
        # doubled l: travelled, modelling, traveller, counsellor, jewellery
        (r"(?<=[aeiou])ll(?=(ed|ing|er|ers|or|ors|ery|ous|ation|ations)$)", "l"),
        # single final l before -ment / -ful / -s: fulfil, enrolment, skilful, instalment
        (r"(?<=[a-z]{3}[io])l(?=(ment|ments|ful|fully|s)?$)", "ll"),
        # ae / oe → e (paediatric, anaemia, oestrogen, foetus, manoeuvre)
        (r"(?<=[a-z])ae(?=[a-z]{3})|^ae(?=[a-z]{4})", "e"),
        (r"(?<=[a-z])oe(?=[a-z]{3})|^oe(?=[a-z]{4})", "e"),
        # -mme → -m (programme, kilogramme)
        (r"(?<=[a-z]{3})mme(?=s?$)", "m"),
        # judgement, acknowledgement
        (r"(?<=dg)ement", "ment"),
        # jewellery / jewelry
        (r"ellery$", "elry"),
    )
)

_IRREGULAR_PAIRS: tuple[tuple[str, str], ...] = (
    ("grey", "gray"), ("tyre", "tire"), ("cheque", "check"), ("mould", "mold"),
    ("smoulder", "smolder"), ("plough", "plow"), ("aluminium", "aluminum"),
    ("sceptic", "skeptic"), ("kerb", "curb"), ("draught", "draft"), ("pyjama", "pajama"),
    ("artefact", "artifact"), ("cosy", "cozy"), ("storey", "story"), ("sulph", "sulf"),
    ("whilst", "while"), ("amongst", "among"), ("moustache", "mustache"),
    ("doughnut", "donut"), ("tonne", "ton"), ("practis", "practic"), ("speciality", "specialty"),
    ("aeroplane", "airplane"), ("gaol", "jail"),
    ("furore", "furor"), ("focuss", "focus"), ("benefitt", "benefit"), ("annexe", "annex"),
    ("programme", "program"), ("ageing", "aging"), ("likeable", "likable"),
    ("sizeable", "sizable"), ("rateable", "ratable"), ("saleable", "salable"),
    ("moveable", "movable"), ("loveable", "lovable"), ("useable", "usable"),
    ("shakeable", "shakable"),
)  # fmt: skip


def regional_variants(word: str) -> set[str]:
    """Spellings of ``word`` in other regional conventions (one or two rules applied)."""
    first = _one_step(word)
    out = set(first)
    for w in first:
        out |= _one_step(w)
    out.discard(word)
    return out


def _one_step(word: str) -> set[str]:
    out: set[str] = set()
    for pattern, replacement in _REGIONAL_RULES:
        for m in pattern.finditer(word):
            out.add(word[: m.start()] + replacement + word[m.end() :])
    for a, b in _IRREGULAR_PAIRS:
        if a in word:
            out.add(word.replace(a, b))
    return out


def is_regional_variant(word: str, known: Known) -> bool:
    """Whether ``word`` is another region's spelling of a known word."""
    return any(known(v) for v in regional_variants(word))


# suffix → ways to rebuild the stem ("" = strip only); order matters little.
_SUFFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("izations", ("ize", "")), ("isations", ("ise", "")), ("ization", ("ize", "")),
    ("isation", ("ise", "")), ("ations", ("ate", "e", "")), ("ation", ("ate", "e", "")),
    ("izers", ("ize", "")), ("izer", ("ize", "")), ("isers", ("ise", "")), ("iser", ("ise", "")),
    ("izing", ("ize", "")), ("ising", ("ise", "")), ("ized", ("ize", "")), ("ised", ("ise", "")),
    ("izes", ("ize", "")), ("ises", ("ise", "")), ("ize", ("", "e", "y")), ("ise", ("", "e", "y")),
    ("nesses", ("",)), ("ness", ("", "y")), ("lessly", ("",)), ("less", ("",)),
    ("fully", ("",)), ("ful", ("", "y")), ("ments", ("",)), ("ment", ("",)),
    ("ships", ("",)), ("ship", ("",)), ("wards", ("",)), ("ward", ("",)), ("wise", ("",)),
    ("abilities", ("", "e", "ate")), ("ability", ("", "e", "ate")),
    ("ibility", ("", "e")), ("ities", ("", "e")), ("ity", ("", "e")),
    ("ably", ("", "e", "ate")), ("able", ("", "e", "ate")), ("ible", ("", "e")),
    ("isms", ("", "e")), ("ism", ("", "e")), ("ists", ("", "e")), ("ist", ("", "e")),
    ("ically", ("ic", "")), ("ally", ("al", "")), ("ily", ("y",)), ("ly", ("",)),
    ("ators", ("ate",)), ("ator", ("ate",)), ("ors", ("", "e")), ("or", ("", "e")),
    ("ies", ("y",)), ("ied", ("y",)), ("ier", ("y",)), ("iers", ("y",)),
    ("ings", ("", "e")), ("ing", ("", "e")), ("ers", ("", "e")), ("er", ("", "e")),
    ("ed", ("", "e")), ("es", ("", "e")), ("s", ("",)), ("al", ("", "e")), ("ic", ("", "e")),
)  # fmt: skip

_PREFIXES: tuple[str, ...] = (
    "counter", "pseudo", "under", "cyber", "micro", "macro", "hyper", "inter", "intra",
    "super", "multi", "neuro", "cross", "trans", "ultra", "extra", "back", "down", "fine",
    "meta", "nano", "post", "anti", "semi", "self", "auto", "mono", "poly", "tele", "over",
    "non", "pre", "sub", "bio", "geo", "mis", "out", "dis", "un", "re", "de", "co", "up",
)  # fmt: skip

_VOWELS = frozenset("aeiou")


def _regular_spellings(stem: str, suffix: str) -> set[str]:
    """How English normally joins ``stem`` and a suffix (doubling, e-drop, y → i)."""
    out = {stem + suffix}
    if suffix[:1] in _VOWELS:
        if stem.endswith("e"):
            out.add(stem[:-1] + suffix)
        last = stem[-1:]
        if last and last not in _VOWELS and last not in "wxy" and len(stem) >= 3:
            if stem[-2] in _VOWELS and stem[-3] not in _VOWELS:
                out.add(stem + last + suffix)  # occur → occurred
    if suffix == "ly" and stem.endswith("ic"):
        out.add(stem + "ally")  # basic → basically
    if stem.endswith("y") and len(stem) > 2 and stem[-2] not in _VOWELS and suffix[:1] != "i":
        out.add(stem[:-1] + "i" + suffix)
    return out


def _stems(word: str) -> Iterator[tuple[str, set[str]]]:
    """(stem, regular spellings) pairs: ``word`` minus a suffix, with the stem rebuilt, and
    how English would normally spell that stem with that suffix (to spot "occured")."""
    for suffix, rebuilds in _SUFFIXES:
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        base = word[: -len(suffix)]
        for tail in rebuilds:
            yield base + tail, (_regular_spellings(base, suffix) if tail == "" else set())
        if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in _VOWELS:
            # doubled consonant: travelled is British; "comming" is not coming
            yield base[:-1], (set() if base[-1] == "l" else {base[:-1] + suffix})


def is_derivation(word: str, known: Known, depth: int = 3) -> bool:
    """Whether ``word`` is a known word with a common suffix or prefix (recursively)."""
    if depth <= 0:
        return False
    for stem, regular in _stems(word):
        if not (known(stem) or is_regional_variant(stem, known)):
            if not is_derivation(stem, known, depth - 1):
                continue
        if any(known(r) for r in regular - {word}):
            continue  # a misspelt inflection: "occured" while "occurred" exists
        return True
    for prefix in _PREFIXES:
        rest = word[len(prefix) :]
        minimum = 5 if len(prefix) == 2 else 4  # "untill" is not un + till
        if word.startswith(prefix) and len(rest) >= minimum:
            if rest[0] == "-":
                return True
            if known(rest) or is_regional_variant(rest, known):
                return True
            if is_derivation(rest, known, depth - 1):
                return True
    return False


# Words that are also suffixes: "usefull" is not use + full, "writting" not writ + ting.
_NOT_A_TAIL = frozenset(
    "full fully ally ing ings ting ming ning ment ments ness tion tions sion sions able ably "
    "ible ward wards wise less ship ism ist ists ity ion ions ous ive ance ence ant ent".split()
)


def is_compound(word: str, known: Known) -> bool:
    """Whether ``word`` is two known words (three letters or more each), the second possibly
    derived (``chatbots``, ``hyperparameters``)."""
    for cut in range(3, len(word) - 2):
        head, tail = word[:cut], word[cut:]
        if tail in _NOT_A_TAIL:
            continue
        if not (known(head) or is_regional_variant(head, known)):
            continue
        if known(tail) or is_regional_variant(tail, known) or is_derivation(tail, known, 2):
            return True
    return False


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def one_edit_away(word: str) -> Iterator[str]:
    """Every string one deletion, transposition, substitution or insertion from ``word``."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    for a, b in splits:
        if b:
            yield a + b[1:]
        if len(b) > 1:
            yield a + b[1] + b[0] + b[2:]
        for c in _LETTERS:
            if b and c != b[0]:
                yield a + c + b[1:]
            yield a + c + b


def legitimate_form(
    word: str,
    known: Known,
    common: Known | None = None,
    trusted: Known | None = None,
) -> str | None:
    """Why a word unknown to the dictionary is still a real word (``None`` = no reason).

    ``word`` is lower-case; ``known`` says whether a lower-case word is known. A derivation
    or compound one edit away from a ``common`` word ("goverment" = "gover" + "ment", one
    letter from "government") is read as a typo of that word, unless it derives from a
    ``trusted`` word (the protected vocabulary, technical terms: "repos" from "repo").
    """
    if is_regional_variant(word, known):
        return "regional variant"
    reason = None
    if is_derivation(word, known):
        reason = "derivation"
    elif is_compound(word, known):
        reason = "compound"
    if reason is None or common is None or not any(common(w) for w in one_edit_away(word)):
        return reason
    if trusted is not None and (is_derivation(word, trusted) or is_compound(word, trusted)):
        return reason
    return None
