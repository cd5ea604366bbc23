"""Hard training pairs aimed at how LLMs hallucinate, built from ``nli-train`` evidence texts.

``generate(pairs_file, n, seed)`` reads the premises of licence-clean evidence sets in the
training file (never evaluation sets), groups them into topic documents (premises from the same
Wikipedia page start with the same words), cuts sentence-aligned windows of the size the
pipeline scores (35–90 words, about 50–130 tokens) and writes claim-level pairs against a window:

========================  ==================================================  =================
kind                      hypothesis                                          label
========================  ==================================================  =================
``hard_supported``        a window sentence, reduced / clause-moved /          entailment
                          pronoun-resolved (keeps every fact)
``hard_merged``           two window sentences joined into one claim          entailment
``hard_number``           a number or year swapped (same document first)      contradiction
``hard_date``             a month swapped                                      contradiction
``hard_negation``         negated / un-negated                                 contradiction
``hard_antonym``          one word replaced by its antonym                    contradiction
``hard_entity``           a name swapped for another name of the document     not entailed
``hard_detail``           a supported sentence plus an invented specific       not entailed
``hard_elsewhere``        a sentence of the document outside the window       not entailed
``hard_partial``          supported sentence joined with one outside it        not entailed
``hard_qualifier``        a qualifier dropped ("formerly", "nearly", "former",  not entailed
                          "co-", "one of the largest", "nominated" → "won")
``hard_swapword``         a common word swapped for a word of the document     not entailed
                          outside the window ("fan called" → "coach called")
``window_<set>``          an original pair whose one-sentence premise is      original label
                          placed among sentences of the same document
========================  ==================================================  =================

"Not entailed" rows carry ``"two_way": true`` (trained as entailed vs not, see ``data.py``).
The same seed gives the same file. Documented in ``data/hardgen/SOURCES.md``.
"""

from __future__ import annotations

import gzip
import json
import logging
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardrail.text.sentences import split_before_capitals

logger = logging.getLogger(__name__)

#: Evidence sets whose licence allows a commercial model (nli-train SOURCES.md: YES / YES (SA)).
SOURCE_DATASETS: tuple[str, ...] = (
    "fever_docnli",
    "fever_rte",
    "vitaminc_test",
    "fm2",
    "fever_robustness",
    "scifact_rte",
    "folio",
)
#: Sets whose one-sentence premises are re-windowed with their document (``window_<set>``).
WINDOW_DATASETS: tuple[str, ...] = ("fever_rte", "vitaminc_test", "fever_robustness", "fm2")

KIND_SHARES: dict[str, float] = {
    "hard_supported": 0.14,
    "hard_merged": 0.07,
    "hard_number": 0.10,
    "hard_date": 0.03,
    "hard_negation": 0.07,
    "hard_antonym": 0.04,
    "hard_entity": 0.08,
    "hard_detail": 0.09,
    "hard_elsewhere": 0.07,
    "hard_partial": 0.06,
    "hard_qualifier": 0.04,
    "hard_swapword": 0.06,
    "window": 0.15,
}

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
_ABBREV = re.compile(r"\b(?:[A-Z]|Mr|Mrs|Ms|Dr|St|Jr|Sr|Inc|Ltd|Co|No|vs|U\.S|e\.g|i\.e)\.$")
_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w,])|(?<![\w.,])\d+(?:\.\d+)?(?![\w])")
_NAME = re.compile(
    r"(?<=[a-z,] )(?<!of )(?!(?:January|February|March|April|May|June|July|August|September|"
    r"October|November|December)\b)(?:[A-Z][a-z]+(?: (?:of |de |the )?[A-Z][a-z]+)*)"
)
_STARTERS = {"The", "This", "It", "He", "She", "They", "His", "Her", "Its", "Their", "A", "An"}


@dataclass(frozen=True)
class HardPair:
    premise: str
    hypothesis: str
    label: str
    kind: str
    source: str
    two_way: bool = False

    def row(self) -> dict[str, Any]:
        return {
            "premise": self.premise,
            "hypothesis": self.hypothesis,
            "label": self.label,
            "dataset": self.kind,
            "two_way": self.two_way,
            "source": self.source,
        }


def detok(text: str) -> str:
    """Undo FEVER/PTB tokenisation (``-LRB-``, `` , ``, `` 's``) so text reads like a page."""
    for a, b in (
        ("-LRB-", "("),
        ("-RRB-", ")"),
        ("-LSB-", "["),
        ("-RSB-", "]"),
        ("``", '"'),
        ("''", '"'),
    ):
        text = text.replace(a, b)
    text = re.sub(r"\s+([,.;:!?%)\]]|'s\b|n't\b)", r"\1", text)
    text = re.sub(r"([(\[$])\s+", r"\1", text)
    text = re.sub(r"\(\s*\)|\[[^\]]*\]", "", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of at least three words: :func:`guardrail.text.sentences.split_before_capitals`
    (``.!?`` + space + capital/digit) not after the abbreviations of ``_ABBREV``."""
    return [s for s in split_before_capitals(text, _ABBREV) if len(s.split()) >= 3]


_KEY_STOP = _STARTERS | set(
    "In On At After During Before By From As When Since Although While However Following "
    "According With For Under Despite These Those There Some Many Most One Two Other Both All "
    "Each Several Because If Once Later Today Its Their Our We You I Also".split()
)


def topic_key(premise: str) -> str:
    """The leading name of a premise ("Neil Diamond", "Port of Spain"): premises from one page
    start with it. Premises starting otherwise are their own document."""
    m = re.match(
        r"^((?:[A-Z][\w'.-]*)(?: (?:of|the|de|and) [A-Z][\w'.-]*| [A-Z][\w'.-]*){0,3})", premise
    )
    if not m or m.group(1).split()[0] in _KEY_STOP or len(m.group(1)) < 4:
        return premise
    return m.group(1).lower()


def _words(sentence: str) -> set[str]:
    return set(re.findall(r"\w+", sentence.lower()))


def near_duplicate(sentence: str, kept: list[str], limit: float = 0.5) -> bool:
    """True if ``sentence`` shares over ``limit`` of its words (Jaccard) with a kept sentence:
    VitaminC-style contrastive edits of one sentence must not sit in one window."""
    words = _words(sentence)
    for other in kept:
        other_words = _words(other)
        union = len(words | other_words)
        if union and len(words & other_words) / union > limit:
            return True
    return False


def load_documents(rows: Iterable[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """(source set, sentences) per topic: unique premises grouped by their leading name, with
    near-duplicate sentences (contrastive edits) left out."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    seen: set[str] = set()
    for row in rows:
        if row.get("dataset") not in SOURCE_DATASETS:
            continue
        premise = detok(str(row["premise"]))
        if premise in seen:
            continue
        seen.add(premise)
        group = groups[(str(row["dataset"]), topic_key(premise))]
        if len(group) >= 12:
            continue
        for sentence in split_sentences(premise):
            if not near_duplicate(sentence, group):
                group.append(sentence)
    return [(src, sents) for (src, _), sents in sorted(groups.items()) if sents]


def window_of(sentences: list[str], rng: random.Random, around: int) -> tuple[int, int]:
    """Sentence range [lo, hi) holding ``around`` with 35–90 words in all (when available)."""
    budget = rng.randint(35, 90)
    lo, hi = around, around + 1
    words = len(sentences[around].split())
    while True:
        grown = False
        for side in rng.sample((0, 1), 2):
            if side == 0 and lo > 0 and words + len(sentences[lo - 1].split()) <= budget:
                lo -= 1
                words += len(sentences[lo].split())
                grown = True
            elif side == 1 and hi < len(sentences) and words + len(sentences[hi].split()) <= budget:
                words += len(sentences[hi].split())
                hi += 1
                grown = True
        if not grown:
            return lo, hi


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


def _make(
    kind: str, doc: list[str], lo: int, hi: int, i: int, pool: list[str], rng: random.Random
) -> tuple[str, str, bool] | None:
    """(hypothesis, label, two_way) of one ``kind`` for window ``doc[lo:hi]`` and sentence i."""
    s = doc[i]
    prev = doc[i - 1] if i > lo else None
    text = " ".join(doc)
    outside = [k for k in range(len(doc)) if k < lo or k >= hi]
    if kind == "hard_supported":
        variant = supported_variant(s, prev, rng)
        if variant == s and hi - lo < 2:  # a bare copy of a one-sentence premise teaches nothing
            return None
        return variant, "entailment", False
    if kind == "hard_merged":
        others = [k for k in range(lo, hi) if k != i]
        if not others:
            return None
        j = rng.choice(others)
        a, b = (s, doc[j]) if i < j else (doc[j], s)
        return join(a, b), "entailment", False
    if kind == "hard_number":
        new = swap_number(s, doc, rng)
        return (new, "contradiction", False) if new else None
    if kind == "hard_date":
        new = swap_month(s, rng)
        return (new, "contradiction", False) if new else None
    if kind == "hard_negation":
        new = negate(s)
        return (new, "contradiction", False) if new else None
    if kind == "hard_antonym":
        new = antonym(s, rng)
        return (new, "contradiction", False) if new else None
    if kind == "hard_entity":
        new = swap_entity(s, doc, pool, rng)
        return (new, "neutral", True) if new else None
    if kind == "hard_detail":
        return invent_detail(s, text, rng), "neutral", True
    if kind == "hard_elsewhere":
        if not outside:
            return None
        return doc[rng.choice(outside)], "neutral", True
    if kind == "hard_partial":
        if not outside:
            return None
        extra = doc[rng.choice(outside)]
        return (join(s, extra) if rng.random() < 0.5 else join(extra, s)), "neutral", True
    if kind == "hard_qualifier":
        new = drop_qualifier(s, rng)
        return (new, "neutral", True) if new else None
    if kind == "hard_swapword":
        if not outside:
            return None
        new = swap_word(s, " ".join(doc[lo:hi]), [doc[k] for k in outside], rng)
        return (new, "neutral", True) if new else None
    raise ValueError(kind)


MAX_PAIR_WORDS = 115
"""Premise + hypothesis words kept below this, so the pair fits 160 tokens untruncated."""


def fits(premise: str, hypothesis: str) -> bool:
    return (
        bool(hypothesis.strip())
        and len(premise.split()) + len(hypothesis.split()) <= MAX_PAIR_WORDS
    )


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def windowed_originals(
    rows: list[dict[str, Any]], docs: list[tuple[str, list[str]]], n: int, rng: random.Random
) -> list[HardPair]:
    """Original entailed / contradicted pairs with their one-sentence premise inside a window."""
    index: dict[str, tuple[list[str], int]] = {}
    for _, sents in docs:
        if len(sents) >= 2:
            for k, sent in enumerate(sents):
                index.setdefault(sent, (sents, k))
    candidates = []
    for row in rows:
        if row.get("dataset") in WINDOW_DATASETS and row["label"] in (
            "entailment",
            "contradiction",
        ):
            premise = detok(str(row["premise"]))
            if premise in index:
                candidates.append((row, index[premise]))
    rng.shuffle(candidates)
    out = []
    for row, (sents, k) in candidates[:n]:
        lo, hi = window_of(sents, rng, k)
        if hi - lo < 2 or not fits(" ".join(sents[lo:hi]), str(row["hypothesis"])):
            continue
        out.append(
            HardPair(
                " ".join(sents[lo:hi]),
                detok(str(row["hypothesis"])),
                str(row["label"]),
                f"window_{row['dataset']}",
                str(row["dataset"]),
            )
        )
    return out


def generate(pairs_file: str | Path, n: int = 60_000, seed: int = 13) -> list[HardPair]:
    """About ``n`` hard pairs (shares in ``KIND_SHARES``) from the evidence of ``pairs_file``."""
    rng = random.Random(seed)
    rows = read_rows(pairs_file)
    docs = load_documents(rows)
    pool = sorted({m.group(0) for _, d in docs[:5000] for s in d for m in _NAME.finditer(s)})
    logger.info("%d documents from %d rows", len(docs), len(rows))
    quotas = {k: int(n * share) for k, share in KIND_SHARES.items() if k != "window"}
    made: Counter[str] = Counter()
    out: list[HardPair] = []
    seen: set[tuple[str, str]] = set()
    order = list(range(len(docs)))
    for _ in range(6):  # passes over the documents until every quota is met
        rng.shuffle(order)
        for d in order:
            src, doc = docs[d]
            open_kinds = [k for k, q in quotas.items() if made[k] < q]
            if not open_kinds:
                break
            i = rng.randrange(len(doc))
            if len(doc[i].split()) < 5:
                continue
            lo, hi = window_of(doc, rng, i)
            for kind in rng.sample(open_kinds, min(2, len(open_kinds))):
                made_one = _make(kind, doc, lo, hi, i, pool, rng)
                if made_one is None:
                    continue
                hypothesis, label, two_way = made_one
                premise = " ".join(doc[lo:hi])
                if (premise, hypothesis) in seen or not fits(premise, hypothesis):
                    continue
                seen.add((premise, hypothesis))
                out.append(HardPair(premise, hypothesis, label, kind, src, two_way))
                made[kind] += 1
    out += windowed_originals(rows, docs, int(n * KIND_SHARES["window"]), rng)
    rng.shuffle(out)
    return out


def write(pairs: list[HardPair], path: str | Path) -> dict[str, int]:
    """Write JSONL.gz rows (``premise, hypothesis, label, dataset, two_way, source``); counts."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(json.dumps(pair.row(), ensure_ascii=False) + "\n")
    return dict(Counter(p.kind for p in pairs).most_common())


def sample(pairs: list[HardPair], per_kind: int, seed: int) -> list[HardPair]:
    """``per_kind`` pairs of every kind (for review in SOURCES.md)."""
    rng = random.Random(seed)
    by_kind: dict[str, list[HardPair]] = defaultdict(list)
    for pair in pairs:
        by_kind[pair.kind].append(pair)
    picked: list[HardPair] = []
    for kind in sorted(by_kind):
        picked += rng.sample(by_kind[kind], min(per_kind, len(by_kind[kind])))
    return picked


def review_table(pairs: list[HardPair]) -> str:
    """Markdown table of pairs for a reviewer (premise shortened to 220 characters)."""
    lines = ["| # | kind | label | premise (window) | hypothesis |", "|---|---|---|---|---|"]
    for k, p in enumerate(pairs, 1):
        premise = p.premise if len(p.premise) <= 220 else p.premise[:217] + "..."
        cells = [premise.replace("|", "/"), p.hypothesis.replace("|", "/")]
        label = p.label + (" (2-way)" if p.two_way else "")
        lines.append(f"| {k} | {p.kind} | {label} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"
