"""Loaders for ``benchmarks/decisions.py``: answers with human labels, sentence by sentence.

Every loader yields :class:`Item` s: a query, a response, its evidence passages (no retrieval
score: the pipeline decides), the response-level label and the labelled sentences as character
ranges into the response (the claim-level labels). Pure functions, no model.

Sets (``../shared/data``, evaluation only):

- ``qags`` — QAGS CNN/DM: a model summary of 3-ish sentences vs its article; each sentence has 3
  yes/no worker votes (majority); the summary is supported iff every sentence is.
- ``factcheck_gpt`` — Factcheck-GPT: 94 ChatGPT answers, evidence = the web snippets retrieved
  for their claims. A grounding label: a claim is supported iff one of its snippets has stance
  ``completely-support``; a sentence iff all its claims are; sentences whose
  ``sentence_checkworthiness`` is not ``yes`` carry no label (they stay in the response).
- ``wice`` — WiCE claims vs the cited page's sentences: supported vs partially / not supported
  (one labelled sentence = the whole response). Its own dev / test files.
- ``halueval`` — HaluEval QA (one-turn): the right answer (supported) and the hallucinated
  answer (not) for each question, premise = the knowledge.
- ``lfqa`` — LFQA-Verification (``lfqa_dev``, half of its questions): long answers (4–9
  sentences) to ELI5 questions in six settings (:data:`LFQA_SETTINGS`), judged against the
  question's WebGPT or human-chosen documents (title + text, one passage each, cut by
  :func:`passages_of` when long); a sentence is supported iff its majority label (of 3) is
  ``supported``. One item per answer, ``Item.setting`` = its setting; the RAG settings
  (:data:`LFQA_RAG`, answers written from the documents) are also reported on their own.

Splits (the rules of :mod:`guardrail.evaluation.sources`): WiCE keeps its files; the others
split by :data:`~guardrail.evaluation.sources.DECISIONS_SPLIT` (SHA-256, ``DEV_SHARE`` = 40 %
dev, :func:`split_of`) of a key: QAGS and Factcheck-GPT the response text, HaluEval the
question (both answers of a question in one split), LFQA the ``question_id`` (the six settings
share questions and documents, so all answers to a question fall in the same split and are
sampled together).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from guardrail.evaluation.sources import (
    DECISIONS_SPLIT,
    HALUEVAL_QA_ONE_TURN,
    HashSplit,
    data_root,
    read_rows,
    wice_claims,
)
from guardrail.text.sentences import split_at_terminators

DEV_SHARE = DECISIONS_SPLIT.dev_share
"""Share of each set (bar WiCE) held out as ``dev`` for calibration and rule choice."""
PASSAGE_CHARS = 1500
"""Long documents are split into passages of about this many characters (sentence bounds)."""
DATASETS = ("qags", "factcheck_gpt", "wice", "halueval", "lfqa")
MULTI_SENTENCE = ("qags", "factcheck_gpt")
"""The short multi-sentence sets (pooled as ``multi-sentence``, as in earlier results)."""
MULTI_SENTENCE_ALL = ("qags", "factcheck_gpt", "lfqa")
"""Every multi-sentence set, the long LFQA answers included (pooled as ``multi-sentence+lfqa``)."""
LFQA_SETTINGS = ("gpt3_wdoc", "alpaca_wdoc", "gpt3_whudoc", "webgpt", "gpt3", "alpaca")
"""LFQA answer settings; ``*_whudoc`` is judged against the human-chosen documents."""
LFQA_RAG = ("gpt3_wdoc", "alpaca_wdoc", "gpt3_whudoc")
"""The settings whose answers were written from the documents they are judged against."""
DEFAULT_CAPS: dict[str, int | None] = {
    "qags": 50,
    "factcheck_gpt": None,
    "wice": 40,
    "halueval": 40,
    "lfqa": None,
}
"""Answers per set and split in a default run (a fixed sample, :func:`sample`), so that both
splits check in about 15 minutes on two cores (the pipeline spends about 3.5 CPU-s on a QAGS
summary, 8 on a Factcheck-GPT answer with its ~27 snippets, 5 on a WiCE claim against its page,
1 on a HaluEval answer; LFQA: 52 questions × 6 settings, 126 dev and 186 test answers).
``None`` = all."""

_TOKEN = re.compile(r"\w+")


@dataclass(frozen=True)
class LabelledSentence:
    """A human-labelled stretch ``[start, end)`` of the response."""

    start: int
    end: int
    supported: bool
    text: str


@dataclass
class Item:
    """One answer to check, with its labels."""

    dataset: str
    item_id: str
    split: str
    query: str
    response: str
    passages: list[str]
    supported: bool
    """Response-level label: every labelled sentence (located or not) is supported."""
    sentences: list[LabelledSentence] = field(default_factory=list)
    unlocated: int = 0
    """Labelled sentences that could not be found in the response (no claim-level label)."""
    group: str = ""
    """Items of one group are sampled together (HaluEval's two answers to a question, LFQA's
    six)."""
    setting: str = ""
    """The answer setting within the set (LFQA's ``gpt3_wdoc`` …; empty elsewhere)."""

    def guard_input(self) -> dict[str, object]:
        """The ``Guardrail`` input: passages without a score."""
        return {
            "query": self.query,
            "response": self.response,
            "passages": [{"text": p} for p in self.passages],
        }


def data_dir(override: str | None = None) -> Path:
    """``--data-dir``, else ``$GUARDRAIL_DATA_DIR``, else ``../shared/data`` beside the repo
    (:func:`guardrail.evaluation.sources.data_root`)."""
    return data_root(override)


def split_of(text: str, dev_share: float = DEV_SHARE) -> str:
    """``dev`` or ``test``, deterministic in ``text``: the decisions benchmark's hash rule
    (:data:`guardrail.evaluation.sources.DECISIONS_SPLIT`, SHA-256)."""
    return HashSplit(dev_share, DECISIONS_SPLIT.digest).of(text)


def passages_of(text: str, max_chars: int = PASSAGE_CHARS) -> list[str]:
    """Split a document into passages of at most about ``max_chars``, at sentence ends (the
    published cut: :func:`guardrail.text.sentences.split_at_terminators`)."""
    text = text.strip()
    if len(text) <= max_chars:
        return [text] if text else []
    out: list[str] = []
    current = ""
    for sentence in split_at_terminators(text):
        if current and len(current) + 1 + len(sentence) > max_chars:
            out.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        out.append(current)
    return out


def locate(response: str, sentence: str, start: int = 0) -> tuple[int, int] | None:
    """The character range of ``sentence`` in ``response`` at or after ``start``.

    Exact match first; else the longest run of matching word tokens (whitespace, bullets and
    punctuation may differ), accepted when it covers at least half of the sentence's tokens.
    """
    sentence = sentence.strip()
    if not sentence:
        return None
    found = response.find(sentence, start)
    if found >= 0:
        return found, found + len(sentence)
    resp_tokens = [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(response)]
    resp_tokens = [t for t in resp_tokens if t[1] >= start]
    sent_tokens = [m.group().lower() for m in _TOKEN.finditer(sentence)]
    if not resp_tokens or not sent_tokens:
        return None
    matcher = SequenceMatcher(None, [t[0] for t in resp_tokens], sent_tokens, autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size > 0]
    if not blocks or sum(b.size for b in blocks) < max(1, len(sent_tokens) // 2):
        return None
    first, last = blocks[0], blocks[-1]
    return resp_tokens[first.a][1], resp_tokens[last.a + last.size - 1][2]


def _labelled(
    response: str, sentences: list[tuple[str, bool | None]]
) -> tuple[list[LabelledSentence], int]:
    """Locate ``(text, supported)`` pairs in order; ``None`` labels are located, not kept."""
    out: list[LabelledSentence] = []
    unlocated = 0
    cursor = 0
    for text, supported in sentences:
        span = locate(response, text, cursor)
        if span is None:
            span = locate(response, text, 0)
        if span is None:
            unlocated += supported is not None
            continue
        cursor = span[1]
        if supported is not None:
            out.append(LabelledSentence(span[0], span[1], supported, response[span[0] : span[1]]))
    return out, unlocated


def load_qags(root: Path) -> Iterator[Item]:
    """QAGS CNN/DM summaries; sentence label = majority of the worker votes."""
    for n, row in enumerate(read_rows(root / "qags" / "data" / "mturk_cnndm.jsonl")):
        pairs: list[tuple[str, bool | None]] = []
        for sent in row["summary_sentences"]:  # type: ignore[attr-defined]
            votes = [r["response"] == "yes" for r in sent["responses"]]
            pairs.append((sent["sentence"].strip(), 2 * sum(votes) > len(votes)))
        response = " ".join(text for text, _ in pairs)
        labelled, unlocated = _labelled(response, pairs)
        yield Item(
            dataset="qags",
            item_id=f"qags-{n}",
            split=split_of(response),
            query="Summarise the article.",
            response=response,
            passages=passages_of(str(row["article"])),
            supported=all(label for _, label in pairs),
            sentences=labelled,
            unlocated=unlocated,
        )


def factcheck_claim_supported(stances: object) -> bool:
    """A claim is supported iff one of its snippets' stances is ``completely-support``."""
    return isinstance(stances, list) and "completely-support" in stances


def load_factcheck(root: Path) -> Iterator[Item]:
    """Factcheck-GPT answers judged against their own retrieved snippets (grounding labels)."""
    path = root / "factcheck_gpt" / "factcheck-GPT-benchmark.jsonl"
    for n, row in enumerate(read_rows(path)):
        response = str(row["response"]).replace("\r\n", "\n")
        pairs: list[tuple[str, bool | None]] = []
        snippets: list[str] = []
        for sent in row["sentences"].values():  # type: ignore[attr-defined]
            for group in sent.get("auto_evidence") or []:
                for snippet in group if isinstance(group, list) else []:
                    if isinstance(snippet, str) and snippet.strip() and snippet not in snippets:
                        snippets.append(snippet)
            claims = sent.get("claims") or []
            stances = sent.get("stance_claim_autoEvid") or []
            label: bool | None = None
            if sent.get("sentence_checkworthiness") == "yes" and claims:
                label = len(stances) >= len(claims) and all(
                    factcheck_claim_supported(s) for s in stances[: len(claims)]
                )
            pairs.append((str(sent["text"]).replace("\r\n", "\n"), label))
        if not any(label is not None for _, label in pairs):
            continue
        labelled, unlocated = _labelled(response, pairs)
        yield Item(
            dataset="factcheck_gpt",
            item_id=f"factcheck_gpt-{n}",
            split=split_of(response),
            query=str(row["prompt"]),
            response=response,
            passages=snippets,
            supported=all(label for _, label in pairs if label is not None),
            sentences=labelled,
            unlocated=unlocated,
        )


def load_wice(root: Path, split: str) -> Iterator[Item]:
    """WiCE claims (``dev`` or ``test`` file); evidence sentences grouped into passages."""
    for row in wice_claims(root / "wice", split):
        claim = str(row["claim"]).strip()
        meta = row.get("meta") or {}
        title = str(meta.get("claim_title") or "").strip()  # type: ignore[attr-defined]
        supported = row["label"] == "supported"
        yield Item(
            dataset="wice",
            item_id=f"wice-{meta.get('id') or hashlib.sha1(claim.encode()).hexdigest()[:10]}",  # type: ignore[attr-defined]
            split=split,
            query=f"What do we know about {title}?" if title else "Is this claim supported?",
            response=claim,
            passages=passages_of(" ".join(str(s) for s in row["evidence"])),  # type: ignore[attr-defined]
            supported=supported,
            sentences=[LabelledSentence(0, len(claim), supported, claim)],
        )


def load_halueval(root: Path) -> Iterator[Item]:
    """HaluEval QA one-turn: right and hallucinated answer of each question (same split)."""
    for n, row in enumerate(read_rows(root / "halueval" / HALUEVAL_QA_ONE_TURN)):
        question = str(row["question"])
        split = split_of(question)
        for kind, supported in (("right_answer", True), ("hallucinated_answer", False)):
            answer = str(row[kind]).strip()
            yield Item(
                dataset="halueval",
                item_id=f"halueval-{n}-{'right' if supported else 'hallucinated'}",
                split=split,
                query=question,
                response=answer,
                passages=[str(row["knowledge"])],
                supported=supported,
                sentences=[LabelledSentence(0, len(answer), supported, answer)],
                group=f"halueval-{n}",
            )


def lfqa_supported(labels: object) -> bool:
    """An LFQA sentence is supported iff most of its labels are ``supported``."""
    return isinstance(labels, list) and 2 * labels.count("supported") > len(labels)


def lfqa_docs(root: Path, setting: str) -> dict[str, list[str]]:
    """``question_id`` → passages of the documents ``setting`` is judged against."""
    name = "human" if setting.endswith("_whudoc") else "webgpt"
    rows = read_rows(root / "lfqa_dev" / "docs" / f"docs-{name}.json")
    out: dict[str, list[str]] = {}
    for row in rows:
        passages: list[str] = []
        for doc in row["docs"]:
            title = str(doc.get("title") or "").strip()
            for part in passages_of(str(doc.get("text") or "")):
                passages.append(f"{title}\n{part}" if title else part)
        out[str(row["question_id"])] = passages
    return out


def load_lfqa(root: Path, settings: tuple[str, ...] = LFQA_SETTINGS) -> Iterator[Item]:
    """LFQA answers of every setting; split and sampling group by question."""
    for setting in settings:
        docs = lfqa_docs(root, setting)
        path = root / "lfqa_dev" / "annotations" / f"annotations-{setting}.json"
        for row in read_rows(path):
            qid = str(row["question_id"])
            pairs: list[tuple[str, bool | None]] = []
            for ann in row["annotations"]:
                text = " ".join(str(ann["answer"]).replace("</s>", " ").split())
                if text:
                    pairs.append((text, lfqa_supported(ann["labels"])))
            response = " ".join(text for text, _ in pairs)
            labelled, unlocated = _labelled(response, pairs)
            yield Item(
                dataset="lfqa",
                item_id=f"lfqa-{setting}-{qid}",
                split=split_of(qid),
                query=str(row["question"]).strip(),
                response=response,
                passages=docs.get(qid, []),
                supported=all(label for _, label in pairs),
                sentences=labelled,
                unlocated=unlocated,
                group=f"lfqa-{qid}",
                setting=setting,
            )


def sample(items: list[Item], cap: int | None) -> list[Item]:
    """A fixed pseudo-random subset of about ``cap`` items (all when ``cap`` is ``None``),
    chosen by a hash of each item's id (or group) and kept in file order. Groups are taken
    whole (an LFQA question with all its settings' answers), so the last one may overshoot."""
    if cap is None or cap >= len(items):
        return items

    def key(item: Item) -> str:
        return hashlib.sha256((item.group or item.item_id).encode("utf-8")).hexdigest()

    groups = sorted(
        {item.group or item.item_id: key(item) for item in items}.items(), key=lambda kv: kv[1]
    )
    chosen: set[str] = set()
    count = 0
    sizes = Counter(item.group or item.item_id for item in items)
    for name, _ in groups:
        if count >= cap:
            break
        chosen.add(name)
        count += sizes[name]
    return [item for item in items if (item.group or item.item_id) in chosen]


def load(dataset: str, root: Path, split: str) -> list[Item]:
    """The items of one set on ``split`` (``dev``, ``test`` or ``all``)."""
    if dataset == "wice":
        splits = ["dev", "test"] if split == "all" else [split]
        return [item for s in splits for item in load_wice(root, s)]
    loaders = {
        "qags": load_qags,
        "factcheck_gpt": load_factcheck,
        "halueval": load_halueval,
        "lfqa": load_lfqa,
    }
    if dataset not in loaders:
        raise ValueError(f"unknown dataset {dataset!r}; choose from {DATASETS}")
    return [item for item in loaders[dataset](root) if split in ("all", item.split)]
