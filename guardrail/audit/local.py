"""The local engine: a process pool, one ``Guardrail`` per worker process, loaded once.

Each worker process builds its guardrail in the pool's initializer (models load there, once);
the driver hands it chunks of rows and writes each finished chunk as one Parquet part,
atomically, in the order chunks finish. At most ``2 × workers`` chunks are in flight, so the
input streams through in bounded memory whatever its size.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from typing import Any

from guardrail.audit.rows import AuditRow
from guardrail.errors import GuardrailError

logger = logging.getLogger(__name__)

#: This worker process's guardrail, built once by the pool initializer. Each process has its
#: own; nothing is shared between processes.
_guard: Any = None


def _init_worker(config: dict[str, Any], cpus: int) -> None:
    global _guard
    from guardrail.audit.worker import build_guardrail, limit_threads

    limit_threads(cpus)
    _guard = build_guardrail(config, cpus)


def _check_chunk(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from guardrail.audit.worker import check_rows

    return check_rows(_guard, rows)


def chunked(rows: Iterable[AuditRow], size: int) -> Iterator[list[dict[str, Any]]]:
    """Rows in lists of ``size`` (the last one shorter), as plain dicts for pickling."""
    it = iter(rows)
    while chunk := [r.as_dict() for r in islice(it, size)]:
        yield chunk


def run_local(
    rows: Iterable[AuditRow],
    config: dict[str, Any],
    write: Callable[[list[dict[str, Any]]], None],
    workers: int = 1,
    cpus_per_worker: int = 1,
    chunk_size: int = 32,
) -> int:
    """Check ``rows`` in a pool of ``workers`` processes; ``write`` receives each finished chunk.

    Returns the number of rows checked. Raises ``GuardrailError`` when a worker cannot start
    (e.g. a model fails to load) — a setup problem, not a bad row.
    """
    context = multiprocessing.get_context("spawn")  # no forked copies of loaded models or locks
    done = 0
    pending: set[Future[list[dict[str, Any]]]] = set()

    def collect(block: bool) -> None:
        nonlocal done, pending
        if not pending:
            return
        finished, pending = wait(pending, return_when=FIRST_COMPLETED, timeout=None if block else 0)
        for fut in finished:
            results = fut.result()
            write(results)
            done += len(results)

    try:
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(config, cpus_per_worker),
        ) as pool:
            for chunk in chunked(rows, chunk_size):
                while len(pending) >= 2 * workers:
                    collect(block=True)
                pending.add(pool.submit(_check_chunk, chunk))
                collect(block=False)
            while pending:
                collect(block=True)
    except BrokenProcessPool as exc:
        raise GuardrailError(
            "an audit worker died or could not start (a model failed to load, it ran out of "
            "memory, or a script called run_audit outside `if __name__ == '__main__':`, which "
            "worker processes need); run `guardrail check` once to see a model error, then "
            "resume with --resume"
        ) from exc
    return done
