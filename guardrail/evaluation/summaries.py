"""Loaders of the summary-faithfulness sets: SummEdits, XSumFaith, FRANK and QAGS.

Each yields :class:`~guardrail.evaluation.examples.EvalExample` with the source document as
the single passage and the summary as the response (label 1 = unfaithful). The query is empty:
these sets have none, so the retrieval score of an example is the summary–document cosine.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from guardrail.errors import InputError
from guardrail.evaluation.examples import (
    FAITHFUL,
    HALLUCINATED,
    EvalExample,
    need,
    read_json_or_jsonl,
    read_jsonl,
)


def load_summedits(data_dir: Path, split: str | None) -> Iterator[EvalExample]:
    """SummEdits: every ``data/summedits/summedits_*.json``; ``split`` filters a domain
    (e.g. ``news``) or the file's own split (``evaluation`` / ``test``)."""
    folder = data_dir / "data" / "summedits"
    files = sorted(folder.glob("summedits_*.json"))
    if not files:
        raise InputError(f"no summedits_*.json files in {folder}; check --data-dir")
    for path in files:
        domain = path.stem.removeprefix("summedits_")
        if split is not None and split not in (domain, "evaluation", "test"):
            continue
        for n, row in enumerate(read_json_or_jsonl(path)):
            where = f"{path}:{n + 1}"
            if split in ("evaluation", "test") and row.get("split") != split:
                continue
            label = str(row.get("label"))
            if label not in ("0", "1"):
                raise InputError(f"{where}: SummEdits label must be 0 or 1, not {label!r}")
            yield EvalExample(
                id=f"summedits/{domain}/{row.get('id', n)}",
                response=need(row, "summary", where),
                passages=[need(row, "doc", where)],
                label=FAITHFUL if label == "1" else HALLUCINATED,
                dataset="summedits",
                split=str(row.get("split") or ""),
                meta={"domain": domain, "edit_types": row.get("edit_types")},
            )


def _spans(row: dict[str, Any]) -> list[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    for span in row.get("spans") or []:
        start, end = span.get("start"), span.get("end")
        if isinstance(start, int) and isinstance(end, int) and end > start:
            out.add((start, end))
    return sorted(out)


def load_xsumfaith(data_dir: Path, split: str | None) -> Iterator[EvalExample]:
    """XSumFaith with articles; label from the 2-of-3 worker majority; spans of all workers."""
    path = data_dir / "reassembled" / "xsumfaith_with_docs.jsonl"
    for n, row in enumerate(read_jsonl(path)):
        where = f"{path}:{n + 1}"
        system = str(row.get("system", ""))
        if split is not None and split != system:
            continue
        majority = row.get("label_majority")
        if majority not in ("hallucinated", "faithful"):
            raise InputError(f"{where}: unknown label_majority {majority!r}")
        yield EvalExample(
            id=f"xsumfaith/{row.get('bbcid')}/{system}",
            response=need(row, "summary", where),
            passages=[need(row, "document", where)],
            label=HALLUCINATED if majority == "hallucinated" else FAITHFUL,
            dataset="xsumfaith",
            split=system,
            spans=_spans(row),
            meta={"system": system, "label_any": row.get("label_any")},
        )


def load_frank(data_dir: Path, split: str | None) -> Iterator[EvalExample]:
    """FRANK's XSum part with articles; ``split`` = ``test`` / ``valid`` (default both)."""
    path = data_dir / "reassembled" / "frank_xsum_with_docs.jsonl"
    for n, row in enumerate(read_jsonl(path)):
        where = f"{path}:{n + 1}"
        row_split = str(row.get("split", ""))
        if split is not None and split != row_split:
            continue
        label = row.get("label")
        if label not in ("consistent", "inconsistent"):
            raise InputError(f"{where}: unknown FRANK label {label!r}")
        yield EvalExample(
            id=f"frank/{row.get('hash')}/{row.get('model_name')}",
            response=need(row, "summary", where),
            passages=[need(row, "document", where)],
            label=HALLUCINATED if label == "inconsistent" else FAITHFUL,
            dataset="frank",
            split=row_split,
            meta={"model_name": row.get("model_name"), "factuality": row.get("Factuality")},
        )


def load_qags(data_dir: Path, split: str | None) -> Iterator[EvalExample]:
    """QAGS: ``split`` = ``cnndm`` / ``xsum`` (default both). A summary is unfaithful when any
    of its sentences has a majority of "no" answers; the sentence spans are the unfaithful
    ones."""
    parts = [split] if split is not None else ["cnndm", "xsum"]
    for part in parts:
        if part not in ("cnndm", "xsum"):
            raise InputError(f"qags split must be cnndm or xsum, not {part!r}")
        path = data_dir / "data" / f"mturk_{part}.jsonl"
        for n, row in enumerate(read_jsonl(path)):
            where = f"{path}:{n + 1}"
            pieces: list[str] = []
            spans: list[tuple[int, int]] = []
            offset = 0
            for sent in row.get("summary_sentences") or []:
                text = str(sent.get("sentence", "")).strip()
                votes = [r.get("response") for r in sent.get("responses") or []]
                if pieces:
                    offset += 1
                if votes.count("no") * 2 > len(votes):
                    spans.append((offset, offset + len(text)))
                pieces.append(text)
                offset += len(text)
            if not pieces:
                raise InputError(f"{where}: no summary sentences")
            yield EvalExample(
                id=f"qags/{part}/{n}",
                response=" ".join(pieces),
                passages=[need(row, "article", where)],
                label=HALLUCINATED if spans else FAITHFUL,
                dataset="qags",
                split=part,
                spans=spans,
            )
