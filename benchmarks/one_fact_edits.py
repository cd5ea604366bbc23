"""One fact changed: is a supported sentence with one wrong fact still VERIFIED?

Takes sentences people labelled *supported* from the decisions sets (``decisions_data.py``:
LFQA answers by question split, QAGS summaries, Factcheck-GPT answers, WiCE claims), edits one
fact in each, and checks the original and every edit **alone** against its own documents, as an
answer would be checked (the set's query, ``response`` = the sentence, ``passages`` = the
documents), with ``Guardrail(config)`` (default: the offline profile). Five kinds of edit,
each deterministic for a ``--seed`` (``--kinds`` builds only some; the originals are always
checked):

- ``name``: a PERSON / ORG / GPE name of the sentence (spaCy NER, :func:`guardrail.nlp.load_spacy`)
  replaced by another name of the same kind **taken from the same documents** (sharing no word
  with it), so every word of the edit is in the evidence;
- ``number``: a number changed (a year by 1–9 years, an amount by 20–60 %, a small count to
  another small count), never to its own value;
- ``negation``: "not" removed ("not", "n't", "never") where the sentence has one, else inserted
  after the main clause's auxiliary (``do``-support for a bare past / present verb);
- ``proper``: any proper name of the sentence (a capitalised spaCy entity labelled PERSON, ORG,
  GPE, LOC, NORP, FAC, PRODUCT, EVENT, WORK_OF_ART or LAW, or a capitalised word sequence not at
  a sentence's start) replaced by a proper name of **any** kind from the same documents that
  shares no word with the sentence's names and is not already in it (lower-cased sentences
  take none; a document's capitalised word NER does not call a name is taken only with an
  inner capital, "TMZ" or "YouTube", not a menu's "Pause");
- ``moved_number``: a number of the sentence replaced by another number **found in the same
  documents** whose value is not in the sentence: a year by a year, any other number by a
  non-year, preferably written alike (decimal part, thousands commas).

Figures per kind (and per set in the JSON):

- caught: share of edits whose verdict is not ``VERIFIED``;
- claim caught: share of edits whose claim covering the edited words is not ``supported``;
- pair caught: caught, among the edits whose unedited sentence is ``VERIFIED``;
- originals kept: share of the unedited sentences (that took this kind of edit) ``VERIFIED``;
- repaired: share of edits whose delivered text (``report.delivered_text``, whitespace aside)
  is the original sentence: the guardrail put the fact back; repaired of caught: the same
  among the caught edits.

Repair outcomes per name and number kind (``repair_outcomes`` in the JSON, a second table),
among the pairs and the rest: repaired; not caught; the original value put in but the sentence
delivered otherwise; another value put in; the original value offered by a flag and refused by
the re-check (the repaired claim, the unedited sentence's, is not supported); no value offered.

``--rows`` writes one JSON line per edit (the sentence, the change, both verdicts, the edit's
claims, action and delivered text, and how the edit was judged: its flags with their
``replacement``, its corrections, re-checked or not, its problems, fixed or not, and its claims'
``p_supported``; ``original_details``, the same for the unedited sentence).

Run (from the repository root; ``--limit`` = sentences per set, hash-sampled)::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/one_fact_edits.py --split dev --limit 0 \\
        --out benchmarks/results/one_fact_edits_dev.json      # every sentence
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/one_fact_edits.py --kinds proper moved_number
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/one_fact_edits.py --split test --limit 20  # a look
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

if __package__:
    from .decisions import Judged, code_version, environment, run
    from .decisions_data import Item, LabelledSentence, data_dir, load
else:  # run as a script: this folder is sys.path[0]
    from decisions import Judged, code_version, environment, run
    from decisions_data import Item, LabelledSentence, data_dir, load

LOG = logging.getLogger("benchmarks.one_fact_edits")
SETS = ("lfqa", "qags", "factcheck_gpt", "wice")
KINDS = ("name", "number", "negation", "proper", "moved_number")
NAME_LABELS = ("PERSON", "ORG", "GPE")
PROPER_LABELS = (
    "PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW",
)  # fmt: skip
MIN_WORDS = 4
"""Sentences shorter than this (headings, fragments) are not used."""
_NAME = re.compile(r"[A-Z][\w.&'’-]*(?: [\w.&'’-]+){0,4}")
_WORD = re.compile(r"[a-z0-9]+")
_NOT_A_NAME_WORD = {"the", "of", "and", "a", "an", "for", "in", "on", "at", "to", "de", "s"}
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w,]|\.\d)")
_CONTRACTED = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
_CAP_WORD = r"(?:[A-Z]\.){2,}|[A-Z](?:[\w&'’-]*[\w&])?"
_CAPITALISED = re.compile(
    rf"(?<![\w.&-])(?<!\w['’])(?:{_CAP_WORD})(?:\s+(?:(?:of|the|de|for)\s+)?(?:{_CAP_WORD}))*"
)
_FIRST_CAP_WORD = re.compile(_CAP_WORD)
_TITLES = {"Mr", "Mrs", "Ms", "Dr", "St", "Prof", "Sr", "Jr", "Mt", "Sir", "Gen", "Lt", "Col"}


@dataclass(frozen=True)
class Edit:
    """One fact changed in ``sentence``: ``before`` at ``start`` became ``after``."""

    kind: str
    sentence: str
    edited: str
    start: int
    """Where the change starts in ``edited``."""
    before: str
    after: str

    @property
    def end(self) -> int:
        """Where the change ends in ``edited``."""
        return self.start + len(self.after)


def replace(kind: str, sentence: str, start: int, end: int, after: str) -> Edit:
    """``sentence`` with ``[start, end)`` replaced by ``after``."""
    edited = sentence[:start] + after + sentence[end:]
    return Edit(kind, sentence, edited, start, sentence[start:end], after)


def rng_for(seed: int, *keys: str) -> random.Random:
    """A generator seeded by ``seed`` and ``keys`` (stable across processes and Pythons)."""
    digest = hashlib.sha256("\0".join([str(seed), *keys]).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# --- names ------------------------------------------------------------------------------------


def _bare(name: str) -> str:
    """The name without a leading article or a trailing possessive."""
    name = re.sub(r"^(?:the|The)\s+", "", name.strip())
    return re.sub(r"(?:'s|’s)$", "", name).strip()


def _words(name: str) -> set[str]:
    return set(_WORD.findall(name.lower())) - _NOT_A_NAME_WORD


def _is_name(text: str) -> bool:
    """A capitalised name of at most five words, each capitalised but for connectors."""
    return bool(_NAME.fullmatch(text)) and all(
        w[:1].isupper() or w.lower() in _NOT_A_NAME_WORD for w in text.split()
    )


def evidence_names(docs: Iterable[Any]) -> dict[str, list[str]]:
    """Capitalised PERSON / ORG / GPE names in the evidence's parsed ``docs``, in order of
    appearance, each under the label NER gives it most often (ties: the first)."""
    labels: dict[str, Counter[str]] = {}
    for doc in docs:
        for ent in doc.ents:
            name = _bare(ent.text)
            if ent.label_ in NAME_LABELS and _is_name(name):
                labels.setdefault(name, Counter())[ent.label_] += 1
    out: dict[str, list[str]] = {label: [] for label in NAME_LABELS}
    for name, counts in labels.items():
        out[counts.most_common(1)[0][0]].append(name)
    return out


def name_edit(doc: Any, names: dict[str, list[str]], rng: random.Random) -> Edit | None:
    """Replace one name of the parsed sentence ``doc`` by another of the same label from
    ``names`` (the evidence's) that shares no word with any name of the sentence. ``None`` for
    a lower-cased sentence, whose one capital is its first letter."""
    sentence = doc.text
    if not any(c.isupper() for c in sentence.split(maxsplit=1)[-1]):
        return None  # lower-cased text (QAGS summaries): a capital only marks the first word
    mentioned = set().union(*(_words(e.text) for e in doc.ents)) if doc.ents else set()
    ents = [e for e in doc.ents if e.label_ in NAME_LABELS and _is_name(_bare(e.text))]
    rng.shuffle(ents)
    for ent in ents:
        bare = _bare(ent.text)
        options = [
            n
            for n in names.get(ent.label_, [])
            if not _words(n) & (mentioned | _words(bare)) and n.lower() not in sentence.lower()
        ]
        if not options:
            continue
        start = ent.start_char + ent.text.index(bare)
        return replace("name", sentence, start, start + len(bare), rng.choice(options))
    return None


# --- proper names of any kind -----------------------------------------------------------------


def _sentence_starts(doc: Any) -> set[int]:
    """Where the first letter of each sentence of the parsed ``doc`` is (the whole text is one
    sentence when the parse has no sentence boundaries)."""
    try:
        bounds = [(s.start_char, s.end_char) for s in doc.sents]
    except (AttributeError, ValueError):
        bounds = [(0, len(doc.text))]
    bounds += [(m.end(), len(doc.text)) for m in re.finditer(r"\n", doc.text)]  # headings, lists
    starts = set()
    for start, end in bounds:
        first = re.search(r"[^\W\d_]", doc.text[start:end])
        if first:
            starts.add(start + first.start())
    return starts


def capitalised_spans(text: str, sentence_starts: set[int]) -> list[tuple[int, int]]:
    """``(start, end)`` of the capitalised word sequences of ``text`` ("Bank of America",
    "U.S."), leaving out a sentence's first word (capitalised anyway)."""
    out: list[tuple[int, int]] = []
    pos = 0
    while match := _CAPITALISED.search(text, pos):
        start, end = match.span()
        if start in sentence_starts:
            first = _FIRST_CAP_WORD.match(text, start)
            pos = first.end() if first else end
            continue
        out.append((start, end))
        pos = end
    return out


def _is_pronoun_i(word: str) -> bool:
    return bool(re.fullmatch(r"I(?:['’]\w+)?", word))


def _tagged_proper(doc: Any, start: int, end: int) -> bool:
    """Every capitalised token of ``doc`` in ``[start, end)`` is tagged a proper noun (not
    "Most", "Email" or "Subscribe Today"); true for a doc without tokens."""
    if not hasattr(doc, "char_span"):
        return True
    span = doc.char_span(start, end, alignment_mode="expand")
    if span is None:
        return False
    capitalised = [t for t in span if t.text[:1].isupper()]
    return bool(capitalised) and all(t.pos_ == "PROPN" for t in capitalised)


def proper_spans(doc: Any) -> list[tuple[int, int, str]]:
    """``(start, end, name)`` of the proper names of the parsed ``doc``, bare (no leading
    article, no possessive): its entities labelled one of ``PROPER_LABELS`` and capitalised,
    and its capitalised word sequences not at a sentence's or line's start that overlap no
    entity (not "Monday" when NER calls it a DATE), whose capitalised words are tagged proper
    nouns, other than a title ("Dr") or a single letter. Ordered by position."""
    text = doc.text
    out: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for ent in doc.ents:
        end_char = ent.start_char + len(ent.text)
        taken.append((ent.start_char, end_char))
        bare = _bare(ent.text)
        if ent.label_ in PROPER_LABELS and bare and _is_name(bare):
            start = ent.start_char + ent.text.index(bare)
            out.append((start, start + len(bare), bare))
    for start, end in capitalised_spans(text, _sentence_starts(doc)):
        if any(min(end, b) > max(start, a) for a, b in taken):
            continue
        name = text[start:end]
        bare = _bare(name)
        if len(bare) < 2 or not _is_name(bare) or bare in _TITLES or _is_pronoun_i(bare):
            continue
        if not _tagged_proper(doc, start, end):
            continue
        first = start + name.index(bare)
        out.append((first, first + len(bare), bare))
    return sorted(set(out))


def _looks_like_a_word(name: str) -> bool:
    """One word capitalised only at its start ("Pause", "Travel"), or a long all-capital word
    ("PUBLISHER"): in web pages, more often a menu, button or heading than a name."""
    if " " in name:
        return False
    inner = [c for c in name[1:] if c.isalpha()]
    return not any(c.isupper() for c in inner) or (
        all(c.isupper() for c in inner) and len(name) > 5
    )


def evidence_proper_names(docs: Iterable[Any]) -> list[str]:
    """Every proper name (:func:`proper_spans`) of the evidence's parsed ``docs``, once each, in
    order of appearance; a capitalised sequence that NER does not call a name must have two
    words or an inner capital ("TMZ", "YouTube", not "Pause")."""
    seen: dict[str, None] = {}
    for doc in docs:
        entities = {_bare(e.text) for e in doc.ents if e.label_ in PROPER_LABELS}
        for _, _, name in proper_spans(doc):
            if _words(name) and (name in entities or not _looks_like_a_word(name)):
                seen.setdefault(name, None)
    return list(seen)


def proper_edit(doc: Any, names: list[str], rng: random.Random) -> Edit | None:
    """Replace one proper name of the parsed sentence ``doc`` by a proper name of any kind from
    ``names`` (the evidence's) that shares no word with any name of the sentence and is not
    already in it. ``None`` for a lower-cased sentence, or when no name has a replacement."""
    sentence = doc.text
    if not any(c.isupper() for c in sentence.split(maxsplit=1)[-1]):
        return None  # lower-cased text (QAGS summaries): a capital only marks the first word
    spans = proper_spans(doc)
    mentioned = set().union(*(_words(e.text) for e in doc.ents), *(_words(n) for *_, n in spans))
    options = [
        n
        for n in names
        if _words(n) and not _words(n) & mentioned and n.lower() not in sentence.lower()
    ]
    if not spans or not options:
        return None
    start, end, _ = rng.choice(spans)
    return replace("proper", sentence, start, end, rng.choice(options))


# --- numbers ----------------------------------------------------------------------------------


def changed_number(text: str, rng: random.Random) -> str:
    """Another value for the number ``text`` (``1,200``, ``1998``, ``3.5``), formatted alike."""
    whole, _, fraction = text.partition(".")
    value = int(whole.replace(",", ""))
    if not fraction and len(whole) == 4 and 1000 <= value <= 2100:  # a year
        new = value + rng.choice([-1, 1]) * rng.randint(1, 9)
    elif value < 12:
        new = rng.choice([v for v in range(1, 13) if v != value])
    else:
        new = round(value * rng.choice([0.4, 0.5, 0.7, 1.3, 1.5, 1.6]))
        new = new if new != value else value + 1
    out = f"{new:,}" if "," in whole else str(new)
    return f"{out}.{fraction}" if fraction else out


def number_edit(sentence: str, rng: random.Random) -> Edit | None:
    """Change one number of ``sentence`` (digits only: "1998", "1,200", "3.5", "40%")."""
    found = list(_NUMBER.finditer(sentence))
    if not found:
        return None
    match = rng.choice(found)
    return replace(
        "number", sentence, match.start(), match.end(), changed_number(match.group(), rng)
    )


def _number_value(text: str) -> Decimal:
    """The value of a number as ``_NUMBER`` finds it ("1,200" = "1200", "3.50" = "3.5")."""
    return Decimal(text.replace(",", "")).normalize()


def _is_year(text: str) -> bool:
    return text.isdigit() and len(text) == 4 and 1000 <= int(text) <= 2100


def moved_number_edit(sentence: str, passages: Iterable[str], rng: random.Random) -> Edit | None:
    """Replace one number of ``sentence`` by another number of the ``passages`` whose value is
    not in the sentence: a year by a year, any other number by a non-year, preferably written
    alike (with a decimal part or not, with thousands commas or not). ``None`` without one."""
    found = list(_NUMBER.finditer(sentence))
    if not found:
        return None
    values = {_number_value(m.group()) for m in found}
    moved: dict[str, None] = {}
    for passage in passages:
        for m in _NUMBER.finditer(passage):
            if _number_value(m.group()) not in values:
                moved.setdefault(m.group(), None)
    rng.shuffle(found)
    for match in found:
        text = match.group()
        year = _is_year(text)
        same = [n for n in moved if _is_year(n) == year]
        alike = [n for n in same if ("." in n) == ("." in text) and ("," in n) == ("," in text)]
        if same:
            return replace(
                "moved_number", sentence, match.start(), match.end(), rng.choice(alike or same)
            )
    return None


# --- negation ---------------------------------------------------------------------------------

_DO = {"VBD": "did", "VBZ": "does", "VBP": "do"}


def negation_edit(doc: Any) -> Edit | None:
    """Remove the sentence's first negation ("not", "n't", "never"); without one, insert "not"
    after the main clause's auxiliary or copula, or with ``do``-support ("won" → "did not
    win"). ``None`` when the parse offers neither."""
    sentence = doc.text
    for tok in doc:
        if tok.dep_ != "neg" or tok.lower_ not in ("not", "n't", "n’t", "never"):
            continue
        if tok.lower_ in ("n't", "n’t") and tok.i > 0:  # "doesn't" → "does", "can't" → "can"
            head = doc[tok.i - 1]
            word = _CONTRACTED.get(head.lower_, head.text)
            word = word[:1].upper() + word[1:] if head.text[:1].isupper() else word
            return replace("negation", sentence, head.idx, tok.idx + len(tok.text), word)
        start, end = tok.idx, tok.idx + len(tok.text) + len(tok.whitespace_)
        if tok.i > 0 and not doc[tok.i - 1].whitespace_:  # "cannot be" → "can be"
            end = tok.idx + len(tok.text)
        elif not tok.whitespace_ and start > 0 and sentence[start - 1] == " ":  # "is not."
            start -= 1
        return replace("negation", sentence, start, end, "")
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    auxes = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    if auxes:
        aux = auxes[0]
        return replace(
            "negation", sentence, aux.idx + len(aux.text), aux.idx + len(aux.text), " not"
        )
    if root.lemma_ == "be" and root.tag_ in ("VBZ", "VBD", "VBP"):
        end = root.idx + len(root.text)
        return replace("negation", sentence, end, end, " not")
    if root.pos_ == "VERB" and root.tag_ in _DO and root.i > 0:
        return replace(
            "negation",
            sentence,
            root.idx,
            root.idx + len(root.text),
            f"{_DO[root.tag_]} not {root.lemma_}",
        )
    return None


# --- building ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A supported sentence and what it is checked with."""

    dataset: str
    item_id: str
    split: str
    query: str
    sentence: str
    passages: tuple[str, ...]

    def item(self, response: str, suffix: str) -> Item:
        """The ``Item`` that checks ``response`` alone against this sentence's documents."""
        return Item(
            dataset=self.dataset,
            item_id=f"{self.item_id}{suffix}",
            split=self.split,
            query=self.query,
            response=response,
            passages=list(self.passages),
            supported=not suffix,
            sentences=[LabelledSentence(0, len(response), not suffix, response)],
        )


def supported_sentences(items: Iterable[Item]) -> list[Source]:
    """Every people-labelled supported sentence of ``items`` with its item's documents."""
    out: list[Source] = []
    for item in items:
        for sent in item.sentences:
            text = " ".join(sent.text.split())
            if sent.supported and len(text.split()) >= MIN_WORDS and item.passages:
                out.append(
                    Source(item.dataset, f"{item.item_id}@{sent.start}", item.split, item.query,
                           text, tuple(item.passages))
                )  # fmt: skip
    return out


def sample_sources(sources: list[Source], limit: int | None, seed: int) -> list[Source]:
    """``limit`` sources (all when ``None`` / 0), chosen by a seeded hash, kept in file order."""
    if not limit or limit >= len(sources):
        return sources
    key = {s.item_id: hashlib.sha256(f"{seed}:{s.item_id}".encode()).hexdigest() for s in sources}
    chosen = set(sorted(key, key=key.__getitem__)[:limit])
    return [s for s in sources if s.item_id in chosen]


def _edit(
    kind: str,
    source: Source,
    doc: Any,
    names: dict[str, list[str]],
    proper_names: list[str],
    seed: int,
) -> Edit | None:
    """The ``kind`` edit of ``source`` (parsed: ``doc``), its generator keyed by kind and id."""
    rng = rng_for(seed, kind, source.item_id)
    if kind == "name":
        return name_edit(doc, names, rng)
    if kind == "number":
        return number_edit(source.sentence, rng)
    if kind == "negation":
        return negation_edit(doc)
    if kind == "proper":
        return proper_edit(doc, proper_names, rng)
    if kind == "moved_number":
        return moved_number_edit(source.sentence, source.passages, rng)
    raise ValueError(f"unknown edit kind: {kind}")


def build_edits(
    sources: list[Source],
    parse: Callable[[list[str]], list[Any]],
    seed: int,
    kinds: Iterable[str] = KINDS,
) -> list[tuple[Source, list[Edit]]]:
    """Every edit of ``kinds`` each source takes, in ``KINDS`` order. ``parse`` turns texts into
    spaCy ``Doc`` s (the sentences with the full pipeline, the documents for their names)."""
    wanted = set(kinds)
    unknown = wanted - set(KINDS)
    if unknown:
        raise ValueError(f"unknown edit kinds: {sorted(unknown)}")
    sentence_docs = parse([s.sentence for s in sources])
    names_of: dict[tuple[str, ...], tuple[dict[str, list[str]], list[str]]] = {}
    out: list[tuple[Source, list[Edit]]] = []
    for source, doc in zip(sources, sentence_docs, strict=True):
        if wanted & {"name", "proper"} and source.passages not in names_of:
            docs = parse(list(source.passages))
            names_of[source.passages] = (evidence_names(docs), evidence_proper_names(docs))
        names, proper_names = names_of.get(source.passages, ({}, []))
        edits = [
            _edit(kind, source, doc, names, proper_names, seed) for kind in KINDS if kind in wanted
        ]
        out.append((source, [e for e in edits if e is not None and e.edited != e.sentence]))
    return out


# --- figures ----------------------------------------------------------------------------------


def _normalised(text: str) -> str:
    return " ".join(text.split())


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def claim_caught(judged: Judged, start: int, end: int) -> bool:
    """The claim(s) covering ``[start, end)`` are not all ``supported`` (all claims when none
    overlaps the change; caught when there is no claim)."""
    covering = [s for a, b, s in judged.claims if min(b, end) - max(a, start) > 0 or a <= start < b]
    statuses = covering or [s for _, _, s in judged.claims]
    return not statuses or any(s != "supported" for s in statuses)


@dataclass
class Row:
    """One edit and the two verdicts."""

    source: Source
    edit: Edit
    original: Judged
    edited: Judged
    repairs: Repairs | None = None
    """The edited check's values offered for a repair, and those put in (``None``: not read)."""

    @property
    def caught(self) -> bool:
        return self.edited.verdict != "VERIFIED"

    @property
    def kept(self) -> bool:
        return self.original.verdict == "VERIFIED"

    @property
    def repaired(self) -> bool:
        """What the user is shown of the edit is the original sentence (whitespace aside)."""
        delivered = self.edited.delivered
        return delivered is not None and _normalised(delivered) == _normalised(self.edit.sentence)


@dataclass(frozen=True)
class Repairs:
    """What a check offered to put in place of a value, and what it put in."""

    offered: tuple[str, ...] = ()
    """The ``replacement`` of each flag."""
    put_in: tuple[str, ...] = ()
    """The ``replacement`` of each factual correction the re-check confirmed (``verified``)."""

    @classmethod
    def of(cls, report: Any) -> Repairs:
        return cls(
            offered=tuple(f.replacement for f in report.hallucination_flags if f.replacement),
            put_in=tuple(
                c.replacement
                for c in report.corrections
                if str(getattr(c.type, "value", c.type)) == "factual"
                and c.verified
                and c.replacement
            ),
        )


_ARTICLE = re.compile(r"^the\s+")

OUTCOMES = (
    "repaired",
    "not caught",
    "right value put in, sentence changed otherwise",
    "another value put in",
    "right value offered, refused by the re-check",
    "caught, no value offered",
)
"""Why a caught name or number edit was or was not repaired (:func:`repair_outcome`)."""


def repair_outcome(row: Row) -> str | None:
    """Which of :data:`OUTCOMES` an edit met (``None`` without its repairs): repaired (the
    original sentence delivered); not caught; the original value put in but the sentence
    delivered otherwise (another part corrected, removed or annotated); another value put in; the
    original value offered by a flag and refused by the re-check (the repaired claim, which is
    the unedited sentence's, not supported); no value offered."""
    if row.repairs is None:
        return None
    if row.repaired:
        return OUTCOMES[0]
    if not row.caught:
        return OUTCOMES[1]
    before = _normalised(row.edit.before).casefold()
    right = re.compile(rf"(?<![\w.,]){re.escape(before)}(?!\w|[.,]\d)")

    def names_it(value: str) -> bool:
        """``value`` is the original value: a number as a whole, with what the repair keeps
        around it ("113°F" for "113"; not "1130", nor "99.9" for "99"), a name as it was
        ("Park", not "National Park Service")."""
        value = _normalised(value).casefold()
        if row.edit.kind in ("number", "moved_number"):
            return right.search(value) is not None
        return _ARTICLE.sub("", value) == _ARTICLE.sub("", before)

    if any(names_it(v) for v in row.repairs.put_in):
        return OUTCOMES[2]
    if row.repairs.put_in:
        return OUTCOMES[3]
    if any(names_it(v) for v in row.repairs.offered):
        return OUTCOMES[4]
    return OUTCOMES[5]


def repair_outcomes(rows: list[Row], kinds: Iterable[str] = KINDS) -> dict[str, Any]:
    """Per name and number kind (negations take no repair), how many edits met each outcome,
    among the pairs (the unedited sentence ``VERIFIED``) and the rest."""
    out: dict[str, Any] = {}
    for kind in [k for k in KINDS if k in set(kinds) and k != "negation"]:
        mine = [r for r in rows if r.edit.kind == kind and r.repairs is not None]
        out[kind] = {
            group: {o: sum(repair_outcome(r) == o for r in part) for o in OUTCOMES}
            for group, part in (
                ("pairs", [r for r in mine if r.kept]),
                ("others", [r for r in mine if not r.kept]),
            )
        }
    return out


def outcome_table(outcomes: dict[str, Any]) -> str:
    """:func:`repair_outcomes` as text, one line per kind and group."""
    short = ["repaired", "missed", "right+", "wrong", "refused", "none"]
    lines = [f"{'edit':<12} {'group':<7} " + " ".join(f"{h:>8}" for h in short)]
    for kind, groups in outcomes.items():
        for group, counts in groups.items():
            lines.append(f"{kind:<12} {group:<7} " + " ".join(f"{counts[o]:>8}" for o in OUTCOMES))
    return "\n".join(lines)


def figures(rows: list[Row]) -> dict[str, Any]:
    """n, caught, claim caught, pair caught, originals kept and repaired of ``rows``."""
    pairs = [r for r in rows if r.kept]
    caught = [r for r in rows if r.caught]
    return {
        "n": len(rows),
        "caught": _share([r.caught for r in rows]),
        "claim_caught": _share([claim_caught(r.edited, r.edit.start, r.edit.end) for r in rows]),
        "pairs": len(pairs),
        "pair_caught": _share([r.caught for r in pairs]),
        "originals_kept": _share([r.kept for r in rows]),
        "repaired": _share([r.repaired for r in rows]),
        "repaired_of_caught": _share([r.repaired for r in caught]),
    }


def summarise(
    rows: list[Row], originals: list[Judged], kinds: Iterable[str] = KINDS
) -> dict[str, Any]:
    """Figures per kind (of ``kinds``), pooled and per set, plus the originals' verdicts."""
    out: dict[str, Any] = {"originals": {}, "kinds": {}}
    sets = sorted({j.item.dataset for j in originals})
    for name in [*sets, "all"]:
        mine = [j for j in originals if name in ("all", j.item.dataset)]
        out["originals"][name] = {
            "n": len(mine),
            "verified": _share([j.verdict == "VERIFIED" for j in mine]),
            "errors": sum(j.error is not None for j in mine),
        }
    for kind in [k for k in KINDS if k in set(kinds)]:
        out["kinds"][kind] = {
            name: figures(
                [r for r in rows if r.edit.kind == kind and name in ("all", r.source.dataset)]
            )
            for name in [*sets, "all"]
        }
    return out


def table(summary: dict[str, Any], split: str) -> str:
    def pct(x: float | None) -> str:
        return "" if x is None else f"{100 * x:.1f} %"

    lines = [
        f"split {split}",
        f"{'edit':<12} {'set':<14} {'n':>5} {'caught':>8} {'claim':>8} {'pairs':>6} {'pair':>8} "
        f"{'kept':>8} {'repaired':>9}",
    ]
    for kind, by_set in summary["kinds"].items():
        for name, f in by_set.items():
            lines.append(
                f"{kind:<12} {name:<14} {f['n']:>5} {pct(f['caught']):>8} "
                f"{pct(f['claim_caught']):>8} {f['pairs']:>6} {pct(f['pair_caught']):>8} "
                f"{pct(f['originals_kept']):>8} {pct(f['repaired']):>9}"
            )
    o = summary["originals"]["all"]
    lines.append(
        f"originals: {o['n']} sentences, VERIFIED {pct(o['verified'])}, errors {o['errors']}"
    )
    return "\n".join(lines)


def spacy_parser(name: str | None = None) -> Callable[[list[str]], list[Any]]:
    """``texts → docs`` with the project's spaCy pipeline (:func:`guardrail.nlp.load_spacy`)."""
    from guardrail.nlp import load_spacy

    nlp = load_spacy(name) if name else load_spacy()
    return lambda texts: list(nlp.pipe(texts, batch_size=32))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--limit", type=int, default=50, help="sentences per set (0 = all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="edit kinds to build"
    )
    parser.add_argument("--config", default=None, help="guardrail config YAML (default: offline)")
    parser.add_argument(
        "--data-dir", default=None, help="default: $GUARDRAIL_DATA_DIR or ../shared/data"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    parser.add_argument("--rows", type=Path, default=None, help="JSON lines, one per edit")
    parser.add_argument(
        "--concurrency", type=int, default=2, help="Guardrail.batch max_concurrency"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", stream=sys.stderr)
    LOG.setLevel(logging.INFO)
    logging.getLogger("benchmarks.decisions").setLevel(logging.INFO)
    logging.getLogger("guardrail").setLevel(logging.ERROR)
    root = data_dir(args.data_dir)
    if not root.is_dir():
        print(f"no data at {root}: pass --data-dir or set GUARDRAIL_DATA_DIR", file=sys.stderr)
        return 2

    from guardrail import Guardrail

    started = time.perf_counter()
    sources: list[Source] = []
    for dataset in args.sets:
        found = supported_sentences(load(dataset, root, args.split))
        sources += sample_sources(found, args.limit, args.seed)
    built = build_edits(sources, spacy_parser(), args.seed, args.kinds)
    build_seconds = time.perf_counter() - started
    LOG.info(
        "%d sentences, %d edits (%.0f s)", len(built), sum(len(e) for _, e in built), build_seconds
    )

    guard = Guardrail(args.config)
    guard.invoke(
        {"query": "Warm up?", "response": "The sky is blue.", "passages": ["The sky is blue."]}
    )
    items: list[Item] = []
    for source, edits in built:
        items.append(source.item(source.sentence, ""))
        items += [source.item(e.edited, f"#{e.kind}") for e in edits]
    start = time.perf_counter()
    judged: dict[str, Judged] = {}
    details: dict[str, dict[str, Any]] = {}
    repairs: dict[str, Repairs] = {}
    for dataset in args.sets:
        for j, report in run(guard, [i for i in items if i.dataset == dataset], args.concurrency):
            judged[j.item.item_id] = j
            if report is not None:
                repairs[j.item.item_id] = Repairs.of(report)
            if args.rows and report is not None:
                details[j.item.item_id] = report_details(report)
    check_seconds = time.perf_counter() - start
    originals = [judged[s.item_id] for s, _ in built]
    rows = [
        Row(
            s,
            e,
            judged[s.item_id],
            judged[f"{s.item_id}#{e.kind}"],
            repairs.get(f"{s.item_id}#{e.kind}"),
        )
        for s, edits in built
        for e in edits
    ]
    summary = summarise(rows, originals, args.kinds)
    outcomes = repair_outcomes(rows, args.kinds)
    print(table(summary, args.split))
    print(outcome_table(outcomes))
    print(f"({len(items)} checks in {check_seconds:.0f} s; edits built in {build_seconds:.0f} s)")
    if args.rows:
        with args.rows.open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({
                    "dataset": r.source.dataset, "item_id": r.source.item_id, "kind": r.edit.kind,
                    "before": r.edit.before, "after": r.edit.after, "edited": r.edit.edited,
                    "original_verdict": r.original.verdict, "edited_verdict": r.edited.verdict,
                    "edited_claims": r.edited.claims, "sentence": r.edit.sentence,
                    "action": r.edited.action, "delivered": r.edited.delivered,
                    "repaired": r.repaired, "outcome": repair_outcome(r),
                    **details.get(f"{r.source.item_id}#{r.edit.kind}", {}),
                    "original_details": details.get(r.source.item_id, {}),
                }, ensure_ascii=False) + "\n")  # fmt: skip
    if args.out:
        result = {
            "benchmark": "one_fact_edits",
            "code": code_version(),
            "environment": environment(),
            "config": args.config,
            "split": args.split,
            "sets": args.sets,
            "limit": args.limit,
            "seed": args.seed,
            "edit_kinds": args.kinds,
            "seconds": {"build": round(build_seconds), "check": round(check_seconds)},
            **summary,
            "repair_outcomes": outcomes,
            "examples": examples(rows, kinds=args.kinds),
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 0


def report_details(report: Any) -> dict[str, Any]:
    """What a row shows of how an edit was judged: the flags (with their ``replacement``),
    the corrections (re-checked or not), the problems (fixed or not) and the claims' scores."""
    return {
        "flags": [
            {
                "type": str(f.type.value),
                "content": f.content,
                "replacement": f.replacement,
                "evidence_value": f.evidence_value,
                "confidence": round(f.confidence, 3),
                "claim_index": f.claim_index,
            }
            for f in report.hallucination_flags
        ],
        "corrections": [
            {
                "type": str(c.type.value),
                "original": c.original,
                "replacement": c.replacement,
                "source": c.source,
                "verified": c.verified,
            }
            for c in report.corrections
        ],
        "problems": [
            {"kind": str(p.kind), "text": p.text, "fixed_by": p.fixed_by}
            for p in report.decision.problems
        ],
        "p_supported": [c.p_supported for c in report.claims],
    }


def examples(
    rows: list[Row], per_kind: int = 3, kinds: Iterable[str] = KINDS
) -> dict[str, list[dict[str, str]]]:
    """A few edits per kind that passed while the original was ``VERIFIED`` (missed pairs)."""
    out: dict[str, list[dict[str, str]]] = {}
    for kind in [k for k in KINDS if k in set(kinds)]:
        missed = [r for r in rows if r.edit.kind == kind and r.kept and not r.caught]
        out[kind] = [
            {
                "set": r.source.dataset,
                "before": r.edit.before,
                "after": r.edit.after,
                "edited": r.edit.edited,
            }
            for r in missed[:per_kind]
        ]
    return out


if __name__ == "__main__":
    sys.exit(main())
