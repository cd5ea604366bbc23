"""Which evidence a claim is scored against: windows, selected sentences, clause parts (#30).

For each labelled sentence of ``benchmarks/decisions.py``'s sets (the sentence is the claim), the
bundled verifier scores

- ``windows`` — its 3 best windows by BM25 (128 tokens, stride 64, as the offline profile), max;
- ``selected kN`` — the premise of :mod:`guardrail.hallucination.selection` with the N
  best-matching sentences of the whole evidence, alone and in the max beside the windows
  (``max(windows, kN)``: what the pipeline does with ``selection.sentences = N``);
- ``clauses`` — the claim cut into its clauses with spaCy's parse (verb conjuncts sharing a
  subject, relative clauses on the subject: "X was born in A and moved to B" → "X was born in
  A." + "X moved to B."), each part scored like the whole (max over its windows and its best
  sentence), the claim's score the min over parts (supported only when every part is); only
  claims the parse splits are counted, against the whole claim's ``max(windows, k1)`` on the
  same claims.

Printed per set: AUROC of each score for "labelled supported" (threshold-free, so no cut-off is
tuned here). Run on the dev split to choose settings; the test split only to report.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/evidence_selection.py --split dev
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/evidence_selection.py --split dev --datasets qags
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from decisions_data import DATASETS, data_dir, load  # noqa: E402

from guardrail.hallucination.pruning import LexicalIndex  # noqa: E402
from guardrail.hallucination.selection import SentencePool, split_evidence  # noqa: E402
from guardrail.hallucination.windows import make_windows  # noqa: E402

SUBJ = {"nsubj", "nsubjpass", "csubj", "expl"}
KS = (1, 2, 3)


def _render(doc: Any, ids: set[int]) -> str:
    text = " ".join(t.text for t in doc if t.i in ids)
    text = re.sub(r"\s+([,.;:!?%)'])", r"\1", text)
    text = re.sub(r"\s+(n't|'s|'re|'ve|'d|'ll)\b", r"\1", text)
    text = re.sub(r"(,\s*)+,", ",", text).strip().strip(",;").strip()
    text = re.sub(r",\s*\.$", ".", text)
    if text and text[-1] not in ".!?":
        text += "."
    return text[:1].upper() + text[1:]


def clauses(doc: Any, min_words: int = 3) -> list[str]:
    """The clause parts of a one-sentence parse (empty when it has fewer than two)."""
    sents = list(doc.sents)
    if len(sents) != 1 or sents[0].root.pos_ not in ("VERB", "AUX"):
        return []
    root = sents[0].root
    subj = [c for c in root.children if c.dep_ in SUBJ]
    subj_ids = {t.i for s in subj for t in s.subtree}
    parts: list[set[int]] = []
    removed: set[int] = set()
    for c in root.children:
        if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX"):
            ids = {t.i for t in c.subtree}
            removed |= ids
            removed |= {x.i for x in root.children if x.dep_ == "cc" and x.i < c.i}
            own = any(g.dep_ in SUBJ for g in c.children)
            parts.append(ids if own else ids | subj_ids)
    for s in subj:
        for t in s.subtree:
            rel = [x for x in t.subtree if x.tag_ in ("WP", "WDT")]
            if t.dep_ == "relcl" and rel and rel[0].dep_ in SUBJ:
                ids = {x.i for x in t.subtree}
                removed |= ids
                head = {x.i for x in t.head.subtree if x.i <= t.head.i} - ids
                parts.append((ids - {rel[0].i}) | head)
    if not parts:
        return []
    out = [_render(doc, {t.i for t in doc} - removed)] + [_render(doc, p) for p in parts]
    out = [o for o in out if len(o.split()) >= min_words]
    return out if len(out) > 1 else []


def auroc(labels: list[bool], scores: list[float]) -> float | None:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def score_item(item: Any, verifier: Any, nlp: Any) -> list[dict[str, Any]]:
    """One row per labelled sentence: the entailment of every premise variant."""
    count = verifier.count_tokens
    texts = [(p, i, None, None) for i, p in enumerate(item.passages) if p.strip()]
    windows = [w.text for t, i, _, _ in texts for w in make_windows(t, i, 128, 64, count)]
    if not windows:
        return []
    pool = SentencePool(split_evidence(texts), count)
    index = LexicalIndex(windows)
    pairs: list[tuple[str, str]] = []
    plans = []

    def add(premise: str, claim: str) -> int:
        pairs.append((premise, claim))
        return len(pairs) - 1

    for s in item.sentences:
        plan: dict[str, Any] = {"windows": [add(windows[i], s.text) for i in index.top(s.text, 3)]}
        for k in KS:
            premise = pool.premise(s.text, k, 128)
            plan[f"k{k}"] = add(premise.text, s.text) if premise else None
        plan["clauses"] = []
        if nlp is not None:
            for part in clauses(nlp(s.text)):
                ids = [add(windows[i], part) for i in index.top(part, 3)]
                premise = pool.premise(part, 1, 128)
                plan["clauses"].append(ids + ([add(premise.text, part)] if premise else []))
        plans.append((s, plan))
    preds = [p.entailment for p in verifier.predict(pairs)]
    rows = []
    for s, plan in plans:
        win = max(preds[i] for i in plan["windows"])
        row: dict[str, Any] = {"label": s.supported, "windows": win}
        for k in KS:
            sel = preds[plan[f"k{k}"]] if plan[f"k{k}"] is not None else 0.0
            row[f"selected k{k}"] = sel
            row[f"max(windows, k{k})"] = max(win, sel)
        if plan["clauses"]:
            row["clauses"] = min(max(preds[i] for i in part) for part in plan["clauses"])
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--no-clauses", action="store_true", help="skip the spaCy clause parts")
    parser.add_argument("--out", type=Path, default=None, help="write the AUROCs as JSON")
    args = parser.parse_args(argv)
    from guardrail.nlp import load_spacy
    from guardrail.verifiers import load_verifier

    verifier = load_verifier()
    nlp = None if args.no_clauses else load_spacy()
    results: dict[str, dict[str, Any]] = {}
    for dataset in args.datasets:
        rows = [
            r
            for item in load(dataset, data_dir(), args.split)
            for r in score_item(item, verifier, nlp)
        ]
        labels = [r["label"] for r in rows]
        out: dict[str, Any] = {"claims": len(rows)}
        for name in [k for k in rows[0] if k not in ("label", "clauses")] if rows else []:
            out[name] = auroc(labels, [r[name] for r in rows])
        split = [r for r in rows if "clauses" in r]
        out["clause claims"] = len(split)
        if split:
            sub = [r["label"] for r in split]
            out["clauses: whole max(windows, k1)"] = auroc(
                sub, [r["max(windows, k1)"] for r in split]
            )
            out["clauses: min over parts"] = auroc(sub, [r["clauses"] for r in split])
        results[dataset] = out
        print(
            dataset,
            json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}),
        )
    if args.out:
        args.out.write_text(json.dumps({"split": args.split, "auroc": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
