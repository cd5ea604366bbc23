"""The Ray engine: Ray Data ``read_parquet`` → ``map_batches`` (one ``Guardrail`` per actor) →
``write_parquet``.

The driver has already read and validated the input and written the rows still to check as
Parquet shards (``staging``); Ray Data reads them, a pool of ``workers`` actors — each a
:class:`GuardrailChecker` holding one guardrail, ``cpus_per_worker`` CPUs each — checks them in
batches, and every batch is written as one Parquet part under ``parts``. A part cut short by a
kill has no Parquet footer and is redone on ``--resume``.

Where it runs: on a local Ray instance started here (limited to this machine's CPUs, no
dashboard), or, when ``RAY_ADDRESS`` is set, on that existing cluster (``ray.init()`` reads it).
On a multi-node cluster, ``--out`` must be a path every node sees (a shared file system), and
guardrail must be installed on the nodes.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from guardrail.errors import ConfigError, MissingDependencyError

logger = logging.getLogger(__name__)


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise MissingDependencyError("ray[data]", "ray") from exc
    return ray


class GuardrailChecker:
    """The ``map_batches`` callable: one warmed-up ``Guardrail`` per actor, a batch per call."""

    def __init__(self, config: dict[str, Any], cpus: int) -> None:
        from guardrail.audit.worker import build_guardrail, limit_threads

        limit_threads(cpus)
        self.guard = build_guardrail(config, cpus)

    def __call__(self, batch: Any) -> Any:
        from guardrail.audit.results import to_table
        from guardrail.audit.worker import check_rows

        return to_table(check_rows(self.guard, batch.to_pylist()))


def start_ray(workers: int, cpus_per_worker: int) -> bool:
    """Connect to ``RAY_ADDRESS`` or start a local instance; ``True`` when we started it."""
    ray = _ray()
    if ray.is_initialized():
        return False
    if os.environ.get("RAY_ADDRESS"):
        ray.init(logging_level=logging.WARNING, log_to_driver=False)
        return True
    cpus = os.cpu_count() or 1
    if workers * cpus_per_worker > cpus:
        raise ConfigError(
            f"{workers} workers × {cpus_per_worker} CPUs need {workers * cpus_per_worker} CPUs; "
            f"this machine has {cpus}. Lower --workers / --cpus-per-worker, or set RAY_ADDRESS "
            f"to run on a cluster"
        )
    ray.init(
        address="local",  # a new instance, never another driver's local one
        num_cpus=cpus,
        include_dashboard=False,
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    return True


def run_ray(
    staging: Path,
    parts: Path,
    config: dict[str, Any],
    workers: int = 2,
    cpus_per_worker: int = 1,
    chunk_size: int = 32,
    on_part: Callable[[int], None] | None = None,
) -> None:
    """Check the staged rows on Ray and write the results as Parquet parts under ``parts``.

    ``on_part(rows)`` is called from a watcher thread as each part appears (the progress bar).
    """
    ray = _ray()
    started = start_ray(workers, cpus_per_worker)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the audit shows its own bar
    if not logger.isEnabledFor(logging.INFO):  # Ray Data's plan and sizing notes only with -v
        logging.getLogger("ray.data").setLevel(logging.WARNING)
    context.execution_options.preserve_order = False
    if hasattr(context, "use_datasource_v2"):
        # Ray ≥ 2.5x lists files in a separate task that needs a whole CPU; with every CPU held
        # by the checking actors it never runs. The V1 Parquet reader lists on the driver and
        # reads in tasks that take the CPU we give them (none).
        context.use_datasource_v2 = False
    stop = threading.Event()
    watcher = threading.Thread(
        target=_watch_parts, args=(parts, stop, on_part), name="audit-ray-watch", daemon=True
    )
    try:
        ds = ray.data.read_parquet(str(staging), num_cpus=0)
        ds = ds.map_batches(
            GuardrailChecker,
            fn_constructor_args=(config, cpus_per_worker),
            batch_size=chunk_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=cpus_per_worker,
        )
        if on_part is not None:
            watcher.start()
        ds.write_parquet(str(parts), ray_remote_args={"num_cpus": 0})
    finally:
        stop.set()
        if watcher.is_alive():
            watcher.join(timeout=5)
        if started:
            ray.shutdown()


def _watch_parts(parts: Path, stop: threading.Event, on_part: Callable[[int], None] | None) -> None:
    """Report the rows of each new complete part file (polling; parts appear whole or torn)."""
    from guardrail.audit.results import part_files, pyarrow

    pa = pyarrow()
    seen: set[Path] = set()
    while True:
        finished = stop.wait(0.5)
        for path in part_files(parts):
            if path in seen:
                continue
            try:
                rows = pa.parquet.read_metadata(path).num_rows
            except (OSError, pa.ArrowInvalid):
                continue  # still being written
            seen.add(path)
            if on_part is not None:
                on_part(int(rows))
        if finished:
            return
