"""Pairs per second of each fact-checker preset's calling format, on tiny random models.

No hub here, so the full-size models cannot be timed: each preset runs on a tiny randomly
initialised model of its architecture (``tests/tiny_presets.py``: hidden size 16, one layer)
built in a temp dir, through the preset's own formatting, chunking and aggregation. The figure
compares the cost of the formats and code paths (tokenisation, prompt length, chunking, one
decoder step, per-pair span encoding), not the speed of the 0.4B models.

    .venv/bin/python benchmarks/verifier_presets_speed.py [--pairs 64] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardrail.verifiers import load_verifier  # noqa: E402
from guardrail.verifiers.preset_export import EXPORTABLE, export_preset  # noqa: E402
from tests import tiny_presets as tiny  # noqa: E402

PREMISE = (
    "The museum opened in 1998 in the old customs house by the river. It holds about four "
    "thousand paintings, most of them donated by local families, and a small library. "
    "Entry is free on the first Sunday of every month."
)
CLAIMS = ["The museum opened in 1998.", "Entry is free every Sunday.", "It holds a library."]


def build(root: Path) -> dict[str, Path]:
    return {
        "minicheck-roberta-l": tiny.build_classifier(root / "rb", "roberta"),
        "minicheck-deberta-l": tiny.build_classifier(root / "db", "deberta"),
        "factcg-deberta-l": tiny.build_classifier(root / "fc", "deberta"),
        "minicheck-flan-t5-l": tiny.build_t5_seq2seq(root / "t5"),
        "hhem-2.1-open": tiny.build_hhem(root / "hhem"),
        "tinylettuce-17m": tiny.build_token_classifier(root / "lt"),
    }


def _time(verifier: object, pairs: list[tuple[str, str]]) -> float:
    """Best of three timed runs after a warm-up, in seconds."""
    predict = verifier.predict  # type: ignore[attr-defined]
    predict(pairs[:4])
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        predict(pairs)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=None)
    parser.add_argument(
        "--onnx", action="store_true", help="also export each exportable preset (fp32) and time it"
    )
    args = parser.parse_args()
    pairs = [(PREMISE, CLAIMS[i % len(CLAIMS)]) for i in range(args.pairs)]
    result: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in build(Path(tmp)).items():
            v = load_verifier({"preset": name, "path": str(path)}, threads=args.threads)
            best = _time(v, pairs)
            result[name] = round(len(pairs) / best, 1)
            print(f"{name:<22} {result[name]:>8.1f} pairs/s (torch)", flush=True)
            if args.onnx and getattr(v, "preset", None) and v.preset.kind in EXPORTABLE:
                out = Path(tmp) / f"{name}-onnx"
                export_preset(name, path, out, weights="fp32")
                onnx = load_verifier(str(out), threads=args.threads)
                result[f"{name} (onnx)"] = round(len(pairs) / _time(onnx, pairs), 1)
                print(f"{name:<22} {result[f'{name} (onnx)']:>8.1f} pairs/s (onnx)", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
