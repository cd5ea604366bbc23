"""Footprint of an install: the base wheel without torch against the full development install.

For each environment, in the same run (runs alternate between the two, so both see the same
machine load):

- size on disk of the virtual environment (``du``-style: allocated blocks);
- the wheel's size (built here with ``python -m build``);
- ``from guardrail import Guardrail`` time in a fresh process (median of ``--runs``);
- a cold ``guardrail check`` in a fresh process on the README's example: wall time and the
  process's peak resident memory (median of ``--runs``);
- whether torch was imported during that check;
- warm p50 / p95 of ``benchmarks/latency.py`` (``--answers``), run by that environment's Python.

The base environment is made here: a new venv with the wheel and ``constraints.txt``, from the
package registry (``--base-venv DIR`` reuses one). The full install is ``.venv`` from
``./setup.sh`` (``--full-venv``).

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/footprint.py --json benchmarks/results/footprint.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUERY = "When is the meeting?"
SUPPORTED = "The meeting is at 2pm on Monday."
PASSAGE = "The meeting with John is at 2pm on Monday in room 4B."
IMPORT_PROBE = (
    "import time; t = time.perf_counter(); from guardrail import Guardrail; "
    "print(time.perf_counter() - t)"
)
TORCH_PROBE = (
    "import sys, json; from guardrail import Guardrail; "
    f"r = Guardrail().invoke({{'query': {QUERY!r}, 'response': {SUPPORTED!r}, "
    f"'passages': [{PASSAGE!r}]}}); "
    "print(json.dumps([str(r.recommendation.action), 'torch' in sys.modules]))"
)


def env_vars() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    return env


def disk_mb(path: Path) -> float:
    """Allocated size of a tree, as ``du`` counts it (hard links once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            st = os.lstat(os.path.join(root, name))
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total / 2**20


def peak_of(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MB (``wait4``: exact per child) and stdout of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env_vars(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed ({proc.returncode}): {err[-2000:]}")
    return wall, usage.ru_maxrss / 1024, out


def build_wheel(out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True, env=env_vars())  # fmt: skip
    (wheel,) = out.glob("answer_guardrail-*.whl")
    return wheel


def make_base(wheel: Path, where: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "-c",
                    str(ROOT / "constraints.txt"), str(wheel)],
                   check=True, env=env_vars())  # fmt: skip
    return where


def measure(name: str, env: Path, runs: int, answers: int, work: Path) -> dict[str, Any]:
    python, cli = str(env / "bin" / "python"), str(env / "bin" / "guardrail")
    imports, walls, peaks = [], [], []
    for _ in range(runs):
        imports.append(float(peak_of([python, "-c", IMPORT_PROBE], work)[2].strip()))
        wall, peak, _out = peak_of(
            [cli, "check", "--query", QUERY, "--response", SUPPORTED, "--passage", PASSAGE], work
        )
        walls.append(wall)
        peaks.append(peak)
    action, torch_loaded = json.loads(peak_of([python, "-c", TORCH_PROBE], work)[2].strip())
    latency_file = work / f"latency_{name}.json"
    peak_of([python, str(ROOT / "benchmarks" / "latency.py"), "--answers", str(answers),
             "--naive-answers", "0", "--batch-concurrency", "0", "--json", str(latency_file)],
            work)  # fmt: skip
    latency = json.loads(latency_file.read_text(encoding="utf-8"))["guardrail"]
    has_torch = subprocess.run([python, "-c", "import torch"], capture_output=True,
                               env=env_vars()).returncode == 0  # fmt: skip
    return {
        "environment_mb": round(disk_mb(env), 1),
        "torch_installed": has_torch,
        "torch_imported_by_a_check": torch_loaded,
        "action_on_supported_answer": action,
        "import_s": round(statistics.median(imports), 3),
        "cold_check_s": round(statistics.median(walls), 2),
        "cold_check_s_runs": [round(w, 2) for w in walls],
        "peak_rss_mb": round(statistics.median(peaks), 1),
        "warm_p50_ms": round(latency["p50_ms"], 1),
        "warm_p95_ms": round(latency["p95_ms"], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full-venv", type=Path, default=ROOT / ".venv")
    parser.add_argument("--base-venv", type=Path, help="reuse this base venv (else made here)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--answers", type=int, default=20, help="answers for latency.py")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wheel = build_wheel(work / "dist")
        base = args.base_venv or make_base(wheel, work / "base-venv")
        envs = {"base": base, "full": args.full_venv}
        results: dict[str, Any] = {
            "benchmark": "footprint",
            "command": "HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/footprint.py "
                       f"--runs {args.runs} --answers {args.answers}",
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "load_1min_at_start": round(os.getloadavg()[0], 2)},
            "wheel_mb": round(wheel.stat().st_size / 2**20, 1),
            "wheel": wheel.name,
        }  # fmt: skip
        # The two environments back to back: a busy machine inflates both alike.
        for name, env in envs.items():
            results[name] = measure(name, env, args.runs, args.answers, work)
            print(name, json.dumps(results[name]), flush=True)
    text = json.dumps(results, indent=2) + "\n"
    print(text)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
