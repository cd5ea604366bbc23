"""``guardrail serve`` killed with SIGKILL in the middle of a write burst, then restarted on the
same store with no manual step: every report answered 2xx with a ``Location`` is there, intact,
and the store passes its integrity check. On SQLite, and on PostgreSQL when a test server is
configured (``tests/store_backends.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the service extra is not installed")
import httpx

from guardrail.store import open_store
from tests.integration.test_service_server import ROOT, free_port, wait_for
from tests.store_backends import BACKENDS, fresh_postgres_url

pytestmark = pytest.mark.integration

KILLS = 2


@contextmanager
def serve(store: str, log: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``guardrail serve`` on ``store`` as a process; yields it and its base URL once ready."""
    port = free_port()
    cmd = [sys.executable, "-m", "guardrail.cli", "serve", "--port", str(port), "--store", store,
           "--log-level", "warning"]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(base + "/readyz")
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)


def body(i: int, session: str) -> dict[str, Any]:
    return {
        "query": "When is the meeting?",
        "response": f"The meeting is at {1 + i % 11}pm on Monday.",
        "passages": [{"text": "The meeting with John is at 2pm on Monday.", "score": 0.8}],
        "session_id": session,
    }


def burst_until_killed(proc: subprocess.Popen[bytes], base: str, kill_after: int) -> list[Any]:
    """Four clients send checks; after ``kill_after`` answers the server gets SIGKILL.

    Returns ``(location, report)`` of every check answered 200 before the server died."""
    acked: list[tuple[str, dict[str, Any]]] = []
    lock = threading.Lock()

    def client(worker: int) -> None:
        with httpx.Client(timeout=120) as http:
            for i in range(200):  # bounded: the kill comes long before
                try:
                    r = http.post(base + "/v1/check", json=body(i, f"crash-w{worker}"))
                except httpx.TransportError:
                    return  # the server is gone
                if r.status_code == 200:
                    with lock:
                        acked.append((r.headers["location"], r.json()))
                        if len(acked) >= kill_after and proc.poll() is None:
                            proc.send_signal(signal.SIGKILL)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(client, range(4)))
    proc.wait(timeout=60)
    return acked


@pytest.mark.parametrize("backend", BACKENDS)
def test_sigkill_mid_burst_loses_no_acknowledged_report(backend: str, tmp_path: Path) -> None:
    spec = fresh_postgres_url() if backend == "postgresql" else str(tmp_path / "results.sqlite")
    log = tmp_path / "serve.log"
    acked: list[Any] = []
    for k in range(KILLS):
        with serve(spec, log) as (proc, base):
            got = burst_until_killed(proc, base, kill_after=3 + 2 * k)
            assert proc.returncode == -signal.SIGKILL
            assert got, "no check was answered before the kill"
            acked += got
    time.sleep(0.1)
    with serve(spec, log) as (_, base), httpx.Client(timeout=30) as http:  # restart as is
        for location, report in acked:
            found = http.get(base + location)
            assert found.status_code == 200, (location, found.text)
            assert found.json()["report"] == report
    store = open_store(spec)
    assert store.integrity_check() == "ok"
    assert store.count() >= len(acked)
    assert len({loc for loc, _ in acked}) == len(acked)  # no two answers share a key
