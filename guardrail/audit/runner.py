"""``run_audit``: read the input, check what is not done yet, write parts, then the results.

The output directory holds::

    manifest.json     the input's hash and the config's, so --resume refuses a changed input
    parts/            durable chunks of result rows (the resume state)
    results.parquet   one row per checked answer, in input order (written at the end)
    errors.jsonl      every row that could not be checked, with the reason
    summary.json      counts of verdicts, actions and flags, per session, the worst answers
    report.md         the same, short, for people

A run killed at any point leaves only complete parts; ``--resume`` re-reads the input, skips the
keys those parts hold and checks the rest, so the final files equal an uninterrupted run's.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from guardrail.audit import results as res
from guardrail.audit.rows import AuditRow, RowError, count_rows, detect_format, read_rows
from guardrail.audit.summary import render_markdown, summarise
from guardrail.errors import ConfigError, InputError

logger = logging.getLogger(__name__)

OUTPUTS = ("results.parquet", "errors.jsonl", "summary.json", "report.md", "manifest.json")
#: Rows per staged input shard for the Ray engine.
SHARD_ROWS = 1024


@dataclass(frozen=True)
class AuditOptions:
    """How to run one audit."""

    input: Path
    out: Path
    engine: Literal["local", "ray"] = "local"
    workers: int = 1
    """Worker processes (local) or actors (Ray), each with one Guardrail."""
    cpus_per_worker: int = 1
    """Threads per worker (local) or CPUs reserved per actor (Ray)."""
    chunk_size: int = 32
    """Rows per chunk: the unit of work and of durable progress (one Parquet part)."""
    resume: bool = False
    overwrite: bool = False
    config: Any = None
    """A GuardrailConfig, dict, YAML path or ``None`` (offline profile)."""
    input_format: str = "auto"
    progress: bool = False
    """Show a progress bar (rate and ETA) on stderr (``guardrail audit`` does, unless
    ``--no-progress``; a library call writes nothing on stderr unless asked)."""
    extra_run_info: dict[str, Any] = field(default_factory=dict)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _prepare_out(opts: AuditOptions, manifest: dict[str, Any]) -> None:
    """Create, check (``--resume``) or clear (``--overwrite``) the output directory."""
    out = opts.out
    path = out / "manifest.json"
    started = path.exists() or (out / "parts").exists()
    if started and opts.overwrite:
        for name in OUTPUTS:
            (out / name).unlink(missing_ok=True)
        for name in ("parts", ".staging"):
            shutil.rmtree(out / name, ignore_errors=True)
    elif started and not opts.resume:
        raise InputError(
            f"{out} already holds an audit; pass --resume to continue it or --overwrite to "
            f"start again"
        )
    elif started and path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        for what in ("input_sha256", "config_sha256"):
            if old.get(what) != manifest[what]:
                thing = what.split("_")[0]
                raise InputError(
                    f"the {thing} differs from the one {out} was started with; resume with the "
                    f"same {thing}, or pass --overwrite to start again"
                )
    out.mkdir(parents=True, exist_ok=True)
    _write_text(path, json.dumps(manifest, indent=2) + "\n")


def _progress(total: int | None, initial: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit="answer",
        desc="audit",
        file=sys.stderr,
        disable=not enabled,
        smoothing=0.1,
        dynamic_ncols=True,
    )


def _pending(
    opts: AuditOptions, fmt: str, done: set[str], errors: list[dict[str, Any]], bar: Any
) -> Iterator[AuditRow]:
    """The input's rows not yet done; read errors go to ``errors`` (and count as handled)."""
    for item in read_rows(opts.input, fmt):
        if isinstance(item, RowError):
            errors.append(item.as_dict())
            bar.update(1)
        elif item.key not in done:
            yield item


def _stage_for_ray(rows: Iterator[AuditRow], staging: Path) -> int:
    """Write the rows to check as Parquet shards for Ray Data to read; returns the count."""
    pa = res.pyarrow()
    staging.mkdir(parents=True, exist_ok=True)
    count = shard = 0
    buffer: list[dict[str, Any]] = []

    def flush() -> None:
        nonlocal shard, buffer
        if buffer:
            pa.parquet.write_table(
                pa.Table.from_pylist(buffer), str(staging / f"shard-{shard:06d}.parquet")
            )
            shard += 1
            buffer = []

    for row in rows:
        buffer.append(row.as_dict())
        count += 1
        if len(buffer) >= SHARD_ROWS:
            flush()
    flush()
    return count


def _check(opts: AuditOptions, fmt: str, config: dict[str, Any], done: set[str],
           errors: list[dict[str, Any]], bar: Any) -> int:  # fmt: skip
    """Run the chosen engine over the pending rows; returns how many rows it was given (the
    checked ones and the ones the guardrail refused: see ``finalise`` for the split)."""
    parts, token = opts.out / "parts", res.run_token()
    pending = _pending(opts, fmt, done, errors, bar)
    if opts.engine == "local":
        from guardrail.audit.local import run_local

        seq = 0

        def write(results: list[dict[str, Any]]) -> None:
            nonlocal seq
            res.write_part(parts, f"local-{token}-{seq:06d}", results)
            seq += 1
            bar.update(len(results))

        return run_local(
            pending, config, write, opts.workers, opts.cpus_per_worker, opts.chunk_size
        )
    from guardrail.audit.ray_engine import run_ray

    staging = opts.out / ".staging" / token
    try:
        count = _stage_for_ray(pending, staging)
        if count:
            run_ray(staging, parts / f"ray-{token}", config, opts.workers,
                    opts.cpus_per_worker, opts.chunk_size, on_part=bar.update)  # fmt: skip
    finally:
        shutil.rmtree(opts.out / ".staging", ignore_errors=True)
    return count


def run_audit(opts: AuditOptions) -> dict[str, Any]:
    """Audit every answer of ``opts.input`` into ``opts.out``; returns the summary.

    The local engine starts worker processes (``spawn``): a script calling this must do so
    under ``if __name__ == "__main__":``.

    Raises:
        InputError: the input is missing, or ``out`` holds another audit (see ``--resume``).
        ConfigError: bad options or guardrail config.
    """
    from guardrail.config import GuardrailConfig

    if opts.engine not in ("local", "ray"):
        raise ConfigError(f"unknown engine {opts.engine!r}; use local or ray")
    if min(opts.workers, opts.cpus_per_worker, opts.chunk_size) < 1:
        raise ConfigError("--workers, --cpus-per-worker and --chunk-size must be at least 1")
    if not opts.input.is_file():
        raise InputError(f"audit input not found: {opts.input}")
    fmt = detect_format(opts.input) if opts.input_format == "auto" else opts.input_format
    config = GuardrailConfig.load(opts.config).model_dump(mode="json")
    if "embedding_cache_size" in config.get("models", {}):
        # Each answer's result must not depend on which answers its worker saw before (the
        # engines and a resumed run share rows out differently): no cross-answer cache.
        config["models"]["embedding_cache_size"] = 0
    speed = config.get("hallucination", {}).get("speed")
    if isinstance(speed, dict) and "score_cache_size" in speed:
        speed["score_cache_size"] = 0
    config_text = json.dumps(config, sort_keys=True)
    manifest = {
        "input": str(opts.input.resolve()),
        "input_format": fmt,
        "input_sha256": _sha256(opts.input),
        "config_sha256": hashlib.sha256(config_text.encode()).hexdigest(),
    }
    _prepare_out(opts, manifest)
    start = time.perf_counter()
    scan = res.scan_parts(opts.out / "parts")
    if scan.removed:
        logger.warning("audit: removed %d incomplete part file(s)", len(scan.removed))
    errors: list[dict[str, Any]] = []
    with _progress(count_rows(opts.input, fmt), len(scan.done), opts.progress) as bar:
        _check(opts, fmt, config, scan.done, errors, bar)
    elapsed = time.perf_counter() - start
    run = {
        "input": str(opts.input),
        "engine": opts.engine,
        "workers": opts.workers,
        "cpus_per_worker": opts.cpus_per_worker,
        "resumed_with": len(scan.done),
        "elapsed_s": round(elapsed, 2),
        **opts.extra_run_info,
    }
    return finalise(opts.out, errors, run, resumed=scan.done)


def finalise(
    out: Path,
    read_errors: list[dict[str, Any]],
    run: dict[str, Any],
    resumed: set[str] | frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Merge the parts into ``results.parquet``, ``errors.jsonl``, ``summary.json``, ``report.md``.

    ``run`` gets this run's counts in the summary's own terms: ``checked_this_run`` (answers
    checked, as ``rows.checked``) and ``refused_this_run`` (answers the guardrail refused, in
    ``rows.check_errors``), counted from the parts over the keys not in ``resumed`` (the keys an
    earlier run had written); ``answers_per_s`` is checked answers per second of this run.
    """
    import pyarrow.compute as pc

    table = res.load_results(res.scan_parts(out / "parts", clean=False).files)
    now = [
        status
        for key, status in zip(
            table.column("key").to_pylist(), table.column("status").to_pylist(), strict=True
        )
        if key not in resumed
    ]
    checked, refused = now.count("ok"), now.count("error")
    elapsed = run.get("elapsed_s")
    run = {
        **run,
        "checked_this_run": checked,
        "refused_this_run": refused,
        "answers_per_s": round(checked / elapsed, 3) if elapsed else None,
    }
    ok = table.filter(pc.equal(table.column("status"), "ok"))
    refused = table.filter(pc.equal(table.column("status"), "error")).to_pylist()
    errors = read_errors + [
        {"index": r["index"], "key": r["key"], "session_id": r["session_id"],
         "turn_id": r["turn_id"], "stage": "check", "reason": r["error"],
         "row": json.dumps({"query": r["query"], "response": r["response"]}, ensure_ascii=False)}
        for r in refused
    ]  # fmt: skip
    errors.sort(key=lambda e: (e["index"], str(e.get("key"))))
    res.write_table(out / "results.parquet", ok)
    _write_text(
        out / "errors.jsonl",
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in errors),
    )
    total = table.num_rows + len(read_errors)
    summary = summarise(ok, errors, total, run)
    _write_text(out / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    _write_text(out / "report.md", render_markdown(summary))
    return summary
