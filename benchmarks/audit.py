"""Audit throughput: answers per second for the local engine (1 and 2 workers) and Ray (2 CPUs).

The input is the synthetic set of ``benchmarks/latency.py`` (same generator, same ``--seed``):
answers of 3–8 sentences about a fictional company, 3–5 passages of 100–400 tokens each, about
half with an altered fact. Each configuration audits the same rows into a fresh directory:

- ``wall`` — answers / total wall time, start-up included (worker processes or Ray, model loads);
- ``steady`` — answers / time between the first and the last part written (work only), the
  figure that scales with the cluster;

then the cluster size for 1 million answers per hour is estimated from the Ray per-CPU steady
rate. Peak memory of one worker is the largest resident set among the local workers.

Run::

    HF_HUB_OFFLINE=1 python benchmarks/audit.py                  # 120 answers
    HF_HUB_OFFLINE=1 python benchmarks/audit.py --answers 300 --skip-ray
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import make_case

TARGET_PER_HOUR = 1_000_000
HEADROOM = 0.75  # plan for 75 % of the measured rate (stragglers, retries, skew)
NODE_CPUS = 16


def steady_rate(parts: Path) -> float | None:
    """Rows per second between the first and the last part file written."""
    import pyarrow.parquet as pq

    files = sorted(parts.rglob("*.parquet"), key=lambda p: p.stat().st_mtime)
    if len(files) < 2:
        return None
    rows = sum(pq.read_metadata(p).num_rows for p in files[1:])
    span = files[-1].stat().st_mtime - files[0].stat().st_mtime
    return rows / span if span > 0 else None


def run(src: Path, workdir: Path, engine: str, workers: int, chunk: int) -> dict[str, Any]:
    from guardrail.audit import AuditOptions, run_audit

    out = workdir / f"{engine}-{workers}"
    start = time.perf_counter()
    summary = run_audit(
        AuditOptions(input=src, out=out, engine=engine, workers=workers,  # type: ignore[arg-type]
                     chunk_size=chunk, progress=False)
    )  # fmt: skip
    wall = time.perf_counter() - start
    checked = summary["rows"]["checked"] + summary["rows"]["check_errors"]
    import pyarrow.parquet as pq

    cpu = [c for c in pq.read_table(out / "results.parquet", columns=["cpu_ms"]).column(0)
           .to_pylist() if c is not None]  # fmt: skip
    return {
        "cpu_rate": 1000.0 * len(cpu) / sum(cpu) if cpu else None,
        "engine": engine,
        "workers": workers,
        "answers": checked,
        "wall_s": wall,
        "wall_rate": checked / wall,
        "steady_rate": steady_rate(out / "parts"),
        "verdicts": summary["verdicts"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answers", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk-size", type=int, default=8, help="rows per part (progress grain)")
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--json", help="also write the results to this JSON file")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="audit-bench-"))
    src = work / "synthetic.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for i in range(args.answers):
            fh.write(json.dumps({**make_case(rng), "session_id": f"s{i // 5}",
                                 "turn_id": i % 5}) + "\n")  # fmt: skip

    configs = [("local", 1), ("local", 2)] + ([] if args.skip_ray else [("ray", 2)])
    rows = []
    load_before = os.getloadavg()[0]
    for engine, workers in configs:
        print(f"running {engine} × {workers} on {args.answers} answers …", file=sys.stderr)
        rows.append(run(src, work, engine, workers, args.chunk_size))
    worker_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    load_after = os.getloadavg()[0]

    print(f"input: {args.answers} synthetic answers (benchmarks/latency.py generator, seed "
          f"{args.seed}); chunks of {args.chunk_size}; {work}")  # fmt: skip
    print()
    print(f"load average (1 min) {load_before:.1f} before, {load_after:.1f} after, on "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'engine':<10}{'workers':>8}{'wall s':>9}{'ans/s wall':>12}{'ans/s steady':>14}"
          f"{'per CPU':>9}{'ans/CPU-s':>11}")  # fmt: skip
    for r in rows:
        steady = r["steady_rate"]
        per_cpu = steady / r["workers"] if steady else float("nan")
        print(f"{r['engine']:<10}{r['workers']:>8}{r['wall_s']:>9.1f}{r['wall_rate']:>12.2f}"
              f"{steady or float('nan'):>14.2f}{per_cpu:>9.2f}"
              f"{r['cpu_rate'] or float('nan'):>11.2f}")  # fmt: skip
    same = all(r["verdicts"] == rows[0]["verdicts"] for r in rows)
    print(f"verdict counts equal across engines: {same} ({rows[0]['verdicts']})")
    print(f"peak resident memory of one local worker: {worker_mb:.0f} MB")

    basis = rows[-1]
    wall_cpu = (basis["steady_rate"] or basis["wall_rate"]) / basis["workers"]
    cpu_rate = basis["cpu_rate"] or wall_cpu
    need = TARGET_PER_HOUR / 3600.0

    def size(per_cpu: float) -> tuple[int, int]:
        cpus = math.ceil(need / (per_cpu * HEADROOM))
        return cpus, math.ceil(cpus / NODE_CPUS)

    cpus, nodes = size(cpu_rate)
    wall_cpus, wall_nodes = size(wall_cpu)
    mem = math.ceil(NODE_CPUS * worker_mb / 1024.0 * 1.25)
    print()
    print(
        f"Estimate for {TARGET_PER_HOUR:,} answers per hour ({need:.0f} answers/s): an actor "
        f"checks {cpu_rate:.2f} answers per CPU-second ({basis['engine']} × "
        f"{basis['workers']}, measured as CPU time per answer, which a shared machine does not "
        f"inflate). Planning at {HEADROOM:.0%} of that for stragglers and skew, the audit needs "
        f"about {cpus} CPUs — {nodes} nodes of {NODE_CPUS} vCPUs, one 1-CPU actor per vCPU "
        f"(--engine ray --workers {cpus} --cpus-per-worker 1), about {mem} GB of memory per "
        f"node ({worker_mb:.0f} MB per actor). From the wall-clock rate on this machine "
        f"({wall_cpu:.2f} answers/s per CPU, load average {load_after:.0f} on "
        f"{os.cpu_count()} CPUs) it would be {wall_cpus} CPUs ({wall_nodes} nodes): "
        f"the upper bound when cores are shared as here. Scaling is linear: actors share "
        f"nothing, each answer is independent, and the driver only reads the input and lists "
        f"the parts."
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": rows, "cpus_needed": cpus,
                                               "nodes": nodes}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
