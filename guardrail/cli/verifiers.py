"""``guardrail verifiers``: list the fact-checker presets and how each is called."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

EPILOG = """\
use a preset: `guardrail check --verifier minicheck-deberta-l ...` (fetched from the hub by its
id when the machine can reach it), `--verifier minicheck-deberta-l=./models/x` for a local copy
(offline), `--verifier hhem-2.1-open,bundled` for a hybrid with fallback. Claims in other languages:
`--route zh=multilingual-minilmv2-l6-xnli` (offline: zh=multilingual-minilmv2-l6-xnli=DIR)
sends them to a preset that reads them (languages: below). In a config file:
models.verifier: "minicheck-deberta-l", {"preset": "minicheck-deberta-l", "path": "./models/x"}
or ["hhem-2.1-open", "bundled"].

accuracy: LLM-AggreFact average balanced accuracy as published (- = none published). speed:
pairs/s measured here on a tiny random model of the same architecture (2 busy cores; torch, and
ONNX Runtime after export-verifier --preset), which compares the calling formats, not the
full-size models."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "verifiers",
        help="list the verifier presets (hub id, kind, labels, accuracy, speed)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--format", choices=("json", "text", "markdown"), default="text")
    p.set_defaults(func=run)


def rows() -> list[dict[str, Any]]:
    """One dict per preset, in listing order."""
    from guardrail.verifiers.presets import PRESETS, preset_names

    return [asdict(PRESETS[name]) for name in preset_names()]


def render_text(items: list[dict[str, Any]]) -> str:
    """A fixed-width table: name, kind, hub id, accuracy, speed, then the labels and the
    languages lines."""
    lines = [f"{'preset':<30} {'kind':<10} {'acc':>5} {'pairs/s':>10}  hub id"]
    for r in items:
        acc = f"{r['published_bacc']:.1f}" if r["published_bacc"] is not None else "-"
        speed = f"{r['cpu_pairs_per_s']:.0f}" if r["cpu_pairs_per_s"] is not None else "-"
        if r["onnx_pairs_per_s"] is not None:
            speed += f"/{r['onnx_pairs_per_s']:.0f}"
        lines.append(f"{r['name']:<30} {r['kind']:<10} {acc:>5} {speed:>10}  {r['hub_id']}")
        lines.append(f"{'':<30} labels: {r['labels']}")
        lines.append(f"{'':<30} languages: {', '.join(r['languages'])}")
    return "\n".join(lines)


def render_markdown(items: list[dict[str, Any]]) -> str:
    """The presets table of the README and the docs (a test keeps them equal to this)."""
    lines = [
        "| preset | hub id | kind | labels | languages | LLM-AggreFact bAcc (published) "
        "| tiny-model pairs/s torch / ONNX |",
        "|---|---|---|---|---|---:|---:|",
    ]
    for r in items:
        acc = f"{r['published_bacc']:.1f}" if r["published_bacc"] is not None else "—"
        speed = f"{r['cpu_pairs_per_s']:.0f}" if r["cpu_pairs_per_s"] is not None else "—"
        if r["onnx_pairs_per_s"] is not None:
            speed += f" / {r['onnx_pairs_per_s']:.0f}"
        hub = f"`{r['hub_id']}`" if r["kind"] != "bundled" else "shipped in the package"
        langs = ", ".join(r["languages"])
        lines.append(
            f"| `{r['name']}` | {hub} | {r['kind']} | {r['labels']} | {langs} | {acc} | {speed} |"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    items = rows()
    if args.format == "json":
        sys.stdout.write(json.dumps(items, indent=2) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(render_markdown(items) + "\n")
    else:
        sys.stdout.write(render_text(items) + "\n")
    return 0
