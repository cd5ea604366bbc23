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
from guardrail.verifiers.training.perturb import (
    _NAME,
    _STARTERS,
    _words,
    antonym,
    drop_qualifier,
    invent_detail,
    join,
    negate,
    supported_variant,
    swap_entity,
    swap_month,
    swap_number,
    swap_word,
)

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

_ABBREV = re.compile(r"\b(?:[A-Z]|Mr|Mrs|Ms|Dr|St|Jr|Sr|Inc|Ltd|Co|No|vs|U\.S|e\.g|i\.e)\.$")


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
