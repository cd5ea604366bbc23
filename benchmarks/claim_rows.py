"""Labelled (evidence, claim, label) rows from the DEV parts of the decisions sets.

Input of ``guardrail calibrate-claims``: every human-labelled sentence of a dev answer
(:mod:`benchmarks.decisions_data`: QAGS, Factcheck-GPT and HaluEval by a hash of the item,
WiCE's own dev file, LFQA by question) becomes one row with its answer's evidence passages;
``group`` is the answer's group (an LFQA question, a HaluEval question), so the held-out part
of the fit never shares evidence with the fitting part. Test parts are never read.

    .venv/bin/python benchmarks/claim_rows.py --out results/claims_dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.decisions_data import DATASETS, data_dir, load, sample  # noqa: E402

CAPS: dict[str, int | None] = {
    "qags": 50,
    "factcheck_gpt": None,
    "wice": 60,
    "halueval": 60,
    "lfqa": 36,
}
"""Dev answers per set (a fixed sample): about 700 labelled claims in all."""


def rows(root: Path, caps: dict[str, int | None]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for dataset in DATASETS:
        for item in sample(load(dataset, root, "dev"), caps.get(dataset)):
            assert item.split == "dev", item
            for s in item.sentences:
                out.append(
                    {
                        "evidence": item.passages,
                        "claim": item.response[s.start : s.end],
                        "label": int(s.supported),
                        "dataset": dataset,
                        "group": f"{dataset}:{item.group or item.item_id}",
                    }
                )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="../shared/data (default)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    found = rows(data_dir(args.data_dir), CAPS)
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in found:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = Counter((str(r["dataset"]), int(str(r["label"]))) for r in found)
    print(
        json.dumps(
            {
                "rows": len(found),
                "by_set_label": {f"{d}:{y}": n for (d, y), n in sorted(counts.items())},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
