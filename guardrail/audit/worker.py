"""What every audit worker does, whatever the engine: hold one ``Guardrail``, check rows.

A worker (a process of the local pool, an actor of the Ray engine) builds its
:class:`~guardrail.Guardrail` once, warms it up on a small answer so every lazily loaded model
is in memory before the first real row, and then turns rows into result rows. A row the
guardrail refuses (``InputError``: an empty or oversized answer) or that fails unexpectedly
becomes an ``error`` result with the reason; it never stops the worker.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from guardrail.audit.results import error_result, report_result
from guardrail.errors import GuardrailError

logger = logging.getLogger(__name__)

#: The answer each worker checks once at start, so model loads are not timed as a row.
WARMUP = {
    "query": "When is the meeting?",
    "response": "The meeting is at 2pm on Monday.",
    "passages": [{"text": "The meeting with John is at 2pm on Monday in room 4B.", "score": 0.8}],
}

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def limit_threads(cpus: int) -> None:
    """Keep a worker's numeric libraries to ``cpus`` threads (before they are imported)."""
    for var in _THREAD_VARS:
        os.environ[var] = str(max(1, cpus))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def build_guardrail(config: dict[str, Any], cpus: int) -> Any:
    """One ``Guardrail`` for this worker, warmed up (every model loaded once, here).

    The bundled ONNX verifier gets ``cpus`` intra-op threads, so workers sharing a machine do
    not oversubscribe it.
    """
    from guardrail import Guardrail, GuardrailConfig

    # The results table is the audit's record of every answer; one log line per answer on the
    # workers' stderr would only bury the progress bar.
    logging.getLogger("guardrail.check").setLevel(logging.CRITICAL + 1)
    cfg = GuardrailConfig.load(config)
    verifier = None
    if cfg.models.verifier is None:
        from guardrail.verifiers import load_verifier

        verifier = load_verifier(None, threads=max(1, cpus))
    guard = Guardrail(cfg, verifier=verifier)
    _no_cross_answer_scores(guard)
    guard.invoke(WARMUP)
    return guard


def _no_cross_answer_scores(guard: Any) -> None:
    """Make each answer's result independent of the answers this worker checked before.

    The hallucination stage keeps a (premise, hypothesis) score cache across calls, and the
    int8 verifier's scores depend slightly on the other pairs in their batch, so a cached score
    differs from a fresh one by up to ~1e-3: results would depend on which rows a worker saw
    first (engines and resumed runs share rows out differently). The config has no switch for
    it yet (the runner sets ``hallucination.speed.score_cache_size`` to 0 once it has), so the
    cache slot of this guardrail's resources is filled with "no cache".
    """
    resources = getattr(guard, "resources", None)
    if resources is not None and hasattr(resources, "set"):
        resources.set("hallucination.score_cache", None)


def check_row(guard: Any, row: dict[str, Any]) -> dict[str, Any]:
    """Check one audit row (``key``, ``index``, ids, ``payload``) → one result row.

    ``total_ms`` is wall time; ``cpu_ms`` the worker's CPU time for the row, which stays
    meaningful when the machine is shared.
    """
    start, cpu = time.perf_counter(), time.process_time()
    try:
        data = json.loads(row["payload"])
        report = guard.invoke(data)
    except GuardrailError as exc:
        return error_result(row, f"{type(exc).__name__}: {exc}", _ms(start), _cpu_ms(cpu))
    except Exception as exc:  # noqa: BLE001 - one bad row must not stop the run; it is recorded
        logger.warning("audit: row %s failed: %r", row.get("key"), exc)
        reason = f"unexpected {type(exc).__name__}: {exc}"
        return error_result(row, reason, _ms(start), _cpu_ms(cpu))
    return report_result(row, report.model_dump(mode="json"), _ms(start), _cpu_ms(cpu))


def check_rows(guard: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check a chunk of rows one by one (each answer is independent of the others)."""
    return [check_row(guard, row) for row in rows]


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def _cpu_ms(start: float) -> float:
    return (time.process_time() - start) * 1000.0
