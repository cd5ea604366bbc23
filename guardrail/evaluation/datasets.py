"""Evaluation datasets, all read into one :class:`EvalExample` type. Nothing is downloaded.

Files, paths and dev / test rules shared with the benchmarks live in
:mod:`guardrail.evaluation.sources`; here each set keeps the dataset's own splits (``split``).

Names accepted by :func:`load_dataset` (``data_dir`` is the dataset's folder, e.g.
``../shared/data/halueval``; each folder's README gives the licence and counts):

============== ========================================================================
halueval-qa    HaluEval QA. The official ``data/qa_data.json`` when present, else the
               generation file ``generation/qa/qa_one-turn_data.json`` (``split="multi-turn"``
               picks the other one). Each row (knowledge, question, right_answer,
               hallucinated_answer) gives two examples: right → 0, hallucinated → 1.
wice           WiCE claims vs the cited page (``data/entailment_retrieval/claim/{split}``;
               split ``test`` by default). supported → 0; partially / not supported → 1.
wice-oracle    WiCE oracle chunks (``code_and_resources/entailment_inputs/oracle_chunks``):
               the ~3 chunks of one claim become its passages.
factcheck-gpt  Factcheck-GPT claims with their automatically retrieved evidence
               (``factcheck-GPT-benchmark.jsonl``); claim factual → 0, not factual → 1.
summedits      SummEdits (every ``data/summedits/*.json`` domain): consistent → 0.
xsumfaith      XSumFaith reassembled with articles; majority-hallucinated → 1; spans kept.
frank          FRANK XSum part reassembled with articles; inconsistent → 1.
qags           QAGS CNN/DM + XSum; a summary with any majority-"no" sentence → 1.
jsonl:PATH     The generic format below.
============== ========================================================================

Generic JSON Lines format (one object per line)::

    {"id": "q1",                              # optional; default: line number
     "query": "When is the meeting?",         # optional
     "response": "The meeting is at 3pm.",    # required
     "passages": ["The meeting is at 2pm.",   # strings or {"text": ..., "score": ...}
                  {"text": "...", "score": 0.8}],
     "label": 1,                              # 1 / true / "hallucinated" = unsupported,
                                              # 0 / false / "faithful" = supported
     "spans": [[19, 22]],                     # optional: hallucinated [start, end) offsets
     "knowledge_base": "kb.json"}             # optional: what GuardInput.knowledge_base takes
                                              # (enables the ``facts`` condition)
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from guardrail.errors import InputError
from guardrail.evaluation import summaries
from guardrail.evaluation.examples import (
    FAITHFUL,
    HALLUCINATED,
    EvalExample,
    Loader,
    need,
    read_json_or_jsonl,
    read_jsonl,
)
from guardrail.evaluation.sources import HALUEVAL_QA_ONE_TURN, WICE_CLAIM_DIR

logger = logging.getLogger(__name__)


def load_halueval_qa(data_dir: Path, split: str | None) -> Iterator[EvalExample]:
    """HaluEval QA: official ``qa_data.json`` or a generation file; two examples per row."""
    candidates = {
        "official": data_dir / "data" / "qa_data.json",
        "one-turn": data_dir / HALUEVAL_QA_ONE_TURN,
        "multi-turn": data_dir / "generation" / "qa" / "qa_multi-turn_data.json",
    }
    if split is None:
        split = "official" if candidates["official"].exists() else "one-turn"
    if split not in candidates:
        raise InputError(f"halueval-qa split must be one of {sorted(candidates)}, not {split!r}")
    path = candidates[split]
    for n, row in enumerate(read_json_or_jsonl(path)):
        where = f"{path}:{n + 1}"
        knowledge = need(row, "knowledge", where)
        question = need(row, "question", where)
        for suffix, key, label in (
            ("right", "right_answer", FAITHFUL),
            ("hallucinated", "hallucinated_answer", HALLUCINATED),
        ):
            yield EvalExample(
                id=f"halueval-qa/{split}/{n}/{suffix}",
                query=question,
                response=need(row, key, where),
                passages=[knowledge],
                label=label,
                dataset="halueval-qa",
                split=split,
            )


_WICE_LABELS = {
    "supported": FAITHFUL,
    "partially_supported": HALLUCINATED,
    "not_supported": HALLUCINATED,
}


def load_wice(data_dir: Path, split: str | None) -> Iterator[EvalExample]:
    """WiCE claims against the whole cited page (one passage of its sentences)."""
    split = split or "test"
    path = data_dir / WICE_CLAIM_DIR / f"{split}.jsonl"
    for n, row in enumerate(read_jsonl(path)):
        where = f"{path}:{n + 1}"
        label = row.get("label")
        if label not in _WICE_LABELS:
            raise InputError(f"{where}: unknown WiCE label {label!r}")
        evidence = row.get("evidence") or []
        meta = row.get("meta") or {}
        yield EvalExample(
            id=f"wice/{split}/{meta.get('id', n)}",
            response=need(row, "claim", where),
            passages=[" ".join(str(s) for s in evidence)],
            label=_WICE_LABELS[str(label)],
            dataset="wice",
            split=split,
            meta={"wice_label": label},
        )


def load_wice_oracle(data_dir: Path, split: str | None) -> Iterator[EvalExample]:
    """WiCE oracle chunks: the chunks of one claim id become its passages."""
    split = split or "test"
    path = (
        data_dir / "code_and_resources" / "entailment_inputs" / "oracle_chunks" / "claim"
    ) / f"{split}.jsonl"
    grouped: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(read_jsonl(path)):
        where = f"{path}:{n + 1}"
        key = str((row.get("meta") or {}).get("id", n))
        item = grouped.setdefault(
            key, {"claim": need(row, "claim", where), "label": row.get("label"), "chunks": []}
        )
        item["chunks"].append(" ".join(str(s) for s in row.get("evidence") or []))
    for key, item in grouped.items():
        if item["label"] not in _WICE_LABELS:
            raise InputError(f"{path}: unknown WiCE label {item['label']!r} for {key}")
        yield EvalExample(
            id=f"wice-oracle/{split}/{key}",
            response=item["claim"],
            passages=item["chunks"],
            label=_WICE_LABELS[item["label"]],
            dataset="wice-oracle",
            split=split,
            meta={"wice_label": item["label"]},
        )


def load_factcheck_gpt(data_dir: Path, split: str | None) -> Iterator[EvalExample]:
    """Factcheck-GPT claims with their retrieved evidence; claims without a label are skipped."""
    path = data_dir / "factcheck-GPT-benchmark.jsonl"
    for r, row in enumerate(read_jsonl(path)):
        prompt = str(row.get("prompt") or "")
        sentences = row.get("sentences") or {}
        for s_key, sent in sentences.items():
            claims = sent.get("claims") or []
            labels = sent.get("claims_factuality_label") or []
            evidence = sent.get("auto_evidence") or []
            for c, claim in enumerate(claims):
                label = labels[c] if c < len(labels) else None
                if not isinstance(label, bool) or not isinstance(claim, str):
                    continue
                passages = evidence[c] if c < len(evidence) else []
                yield EvalExample(
                    id=f"factcheck-gpt/{r}/{s_key}/{c}",
                    query=prompt,
                    response=claim,
                    passages=[str(p) for p in passages if str(p).strip()],
                    label=FAITHFUL if label else HALLUCINATED,
                    dataset="factcheck-gpt",
                    split=split or "all",
                )


def _label_value(value: Any, where: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("1", "true", "hallucinated", "hallucination", "unsupported", "yes"):
            return HALLUCINATED
        if low in ("0", "false", "faithful", "supported", "no"):
            return FAITHFUL
    raise InputError(f"{where}: label must be 0/1, true/false or hallucinated/faithful")


def _kb_value(path: Path, value: Any) -> Any:
    """A relative knowledge-base path is relative to the JSONL file."""
    if isinstance(value, str) and not Path(value).is_absolute():
        return str(path.parent / value)
    return value


def load_jsonl(path: Path, split: str | None) -> Iterator[EvalExample]:
    """The generic JSON Lines format (see the module docstring)."""
    for n, row in enumerate(read_jsonl(path)):
        where = f"{path}:{n + 1}"
        raw = row.get("passages") or []
        if isinstance(raw, str):
            raw = [raw]
        passages: list[str] = []
        for p in raw:
            text = p.get("text") if isinstance(p, dict) else p
            if not isinstance(text, str):
                raise InputError(f"{where}: each passage must be a string or {{'text': ...}}")
            passages.append(text)
        spans = []
        for span in row.get("spans") or []:
            if not (isinstance(span, list | tuple) and len(span) == 2):
                raise InputError(f"{where}: spans must be [start, end] pairs")
            spans.append((int(span[0]), int(span[1])))
        yield EvalExample(
            id=str(row.get("id", n)),
            query=str(row.get("query") or ""),
            response=need(row, "response", where),
            passages=passages,
            label=_label_value(row.get("label"), where),
            dataset=f"jsonl:{path.name}",
            split=split or str(row.get("split") or ""),
            spans=spans,
            meta={
                "passage_scores": [p.get("score") if isinstance(p, dict) else None for p in raw],
                "knowledge_base": _kb_value(path, row.get("knowledge_base")),
            },
        )


def _loaders() -> dict[str, Loader]:
    return {
        "halueval-qa": load_halueval_qa,
        "wice": load_wice,
        "wice-oracle": load_wice_oracle,
        "factcheck-gpt": load_factcheck_gpt,
        "summedits": summaries.load_summedits,
        "xsumfaith": summaries.load_xsumfaith,
        "frank": summaries.load_frank,
        "qags": summaries.load_qags,
    }


DATASET_NAMES = (
    "halueval-qa",
    "wice",
    "wice-oracle",
    "factcheck-gpt",
    "summedits",
    "xsumfaith",
    "frank",
    "qags",
    "jsonl:PATH",
)


def load_dataset(
    name: str,
    data_dir: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
) -> list[EvalExample]:
    """Load dataset ``name`` from ``data_dir`` (``jsonl:PATH`` needs no directory).

    ``limit`` keeps the first ``limit`` examples of a label-balanced interleaving, so a small
    run still sees both labels.
    """
    if name.startswith("jsonl:"):
        examples = list(load_jsonl(Path(name[len("jsonl:") :]), split))
    else:
        loaders = _loaders()
        if name not in loaders:
            raise InputError(f"unknown dataset {name!r}; choose one of {', '.join(DATASET_NAMES)}")
        if data_dir is None:
            raise InputError(f"dataset {name!r} needs --data-dir (its folder)")
        root = Path(data_dir)
        if not root.is_dir():
            raise InputError(f"data directory not found: {root}")
        examples = list(loaders[name](root, split))
    if not examples:
        raise InputError(f"dataset {name!r} has no examples in {data_dir or name}")
    logger.info("loaded %d examples of %s", len(examples), name)
    if limit is not None and limit < len(examples):
        examples = balanced_head(examples, limit)
    return examples


def balanced_head(examples: list[EvalExample], limit: int) -> list[EvalExample]:
    """The first ``limit`` examples, alternating labels while both remain (order kept)."""
    by_label: dict[int, list[EvalExample]] = {0: [], 1: []}
    for ex in examples:
        by_label[ex.label].append(ex)
    out: list[EvalExample] = []
    i = 0
    while len(out) < limit and (i < len(by_label[0]) or i < len(by_label[1])):
        for lab in (1, 0):
            if i < len(by_label[lab]) and len(out) < limit:
                out.append(by_label[lab][i])
        i += 1
    return out
