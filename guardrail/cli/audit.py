"""``guardrail audit``: check logged answers in bulk, on this machine or on a Ray cluster.

::

    guardrail audit turns.jsonl --out audit/                      # local process pool
    guardrail audit turns.parquet --out audit/ --workers 2        # two worker processes
    guardrail audit runs.jsonl --out audit/ --engine ray          # Ray (RAY_ADDRESS: a cluster)
    guardrail audit turns.jsonl --out audit/ --resume             # continue a killed run
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "audit",
        help="check logged answers in bulk (JSONL, Parquet, LangSmith runs export)",
        description="Check every logged answer of INPUT and write results.parquet, "
        "errors.jsonl, summary.json and report.md under --out.",
    )
    p.add_argument("input", help="JSONL, Parquet or a LangSmith runs export (JSONL or JSON)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--engine", choices=("local", "ray"), default="local")
    p.add_argument(
        "--workers", type=int, default=1, help="worker processes (local) or actors (ray)"
    )
    p.add_argument(
        "--cpus-per-worker", type=int, default=1, help="threads per worker / CPUs per Ray actor"
    )
    p.add_argument(
        "--chunk-size", type=int, default=32, help="rows per chunk (the unit of saved progress)"
    )
    p.add_argument("--resume", action="store_true", help="skip rows already written to --out")
    p.add_argument("--overwrite", action="store_true", help="discard an earlier audit in --out")
    p.add_argument(
        "--format",
        dest="input_format",
        choices=("auto", "jsonl", "parquet", "langsmith"),
        default="auto",
        help="input format (default: from the file)",
    )
    p.add_argument("--config", help="guardrail config file (YAML or JSON)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guardrail.audit import AuditOptions, run_audit

    out = Path(args.out)
    summary = run_audit(
        AuditOptions(
            input=Path(args.input),
            out=out,
            engine=args.engine,
            workers=args.workers,
            cpus_per_worker=args.cpus_per_worker,
            chunk_size=args.chunk_size,
            resume=args.resume,
            overwrite=args.overwrite,
            config=args.config,
            input_format=args.input_format,
            progress=not args.no_progress,
        )
    )
    rows, run_info = summary["rows"], summary["run"]
    lines = [
        f"{rows['input']} rows: {rows['checked']} checked, {rows['errors']} errors "
        f"({rows['read_errors']} unreadable, {rows['check_errors']} refused)",
        "verdicts: " + ", ".join(f"{k} {v}" for k, v in summary["verdicts"].items()),
        "actions:  " + ", ".join(f"{k} {v}" for k, v in summary["actions"].items()),
        f"this run: {run_info['checked_this_run']} checked, {run_info['refused_this_run']} "
        f"refused in {run_info['elapsed_s']} s ({run_info['answers_per_s']} answers/s, engine "
        f"{run_info['engine']}, {run_info['workers']} workers)"
        + (
            f"; {run_info['resumed_with']} rows were done by an earlier run"
            if run_info.get("resumed_with")
            else ""
        ),
        f"wrote {out / 'results.parquet'}, {out / 'errors.jsonl'}, {out / 'summary.json'}, "
        f"{out / 'report.md'}",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
