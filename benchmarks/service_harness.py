"""The harness of ``benchmarks/service_load.py``: ``guardrail serve`` as a process, the request
mix, bounded concurrent clients and what they got back. Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PASSAGE = (
    "The meeting with John is at 2pm on Monday in room 4B. The budget review follows on "
    "Tuesday at 10am. AlphaCodium is a code generation method developed by CodiumAI."
)
ANSWERS = {
    "short": "The meeting is at 2pm on Monday.",
    "medium": "The meeting is at 2pm on Monday in room 4B. The budget review is on Tuesday. "
    "AlphaCodium was developed by CodiumAI.",
    "long": " ".join(
        [
            "The meeting with John is at 2pm on Monday in room 4B.",
            "The budget review follows on Tuesday at 10am.",
            "AlphaCodium is a code generation method developed by CodiumAI.",
            "It was acquired by Google in 2024.",
            "The meeting lasts three hours and lunch is served.",
        ]
        * 3
    ),
}
OVERSIZED = b'{"response": "' + b"x" * 1_100_000 + b'"}'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int, field_name: str = "VmRSS") -> float:
    """Resident memory of a process in MB (``VmHWM``: its peak so far)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Server:
    """``guardrail serve`` in its own process on a free loopback port."""

    def __init__(self, store: str, log: Path, *extra: str) -> None:
        self.store, self.log, self.extra = store, log, extra
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 300) -> Server:
        cmd = [sys.executable, "-m", "guardrail.cli", "serve", "--port", str(self.port),
               "--store", self.store, "--log-level", "warning", *self.extra]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1"}  # fmt: skip
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}; see {self.log}")
            try:
                if httpx.get(self.base + "/readyz", timeout=5).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"server not ready in {timeout} s; see {self.log}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def check_body(i: int, kind: str, session: str) -> dict[str, Any]:
    """A valid check, varied by ``i`` (times and rooms change, so inputs differ)."""
    hour, room = 1 + i % 11, f"{1 + i % 9}{'ABCD'[i % 4]}"
    answer = ANSWERS[kind].replace("2pm", f"{hour}pm").replace("4B", room)
    return {
        "query": "When is the meeting?",
        "response": answer,
        "passages": [{"text": PASSAGE, "score": round(0.5 + (i % 5) / 10, 2), "source": "memo"}],
        "session_id": session,
    }


def request_mix(i: int, session: str) -> tuple[str, str, Any, dict[str, str]]:
    """Request ``i`` of the fixed mix: (method, path, body, headers); ~60 % valid checks."""
    js = {"content-type": "application/json"}
    slot = i % 10
    if slot in (0, 3, 6):
        return (
            "POST",
            "/v1/check",
            check_body(i, ("short", "medium", "long")[slot // 3], session),
            js,
        )
    if slot in (1, 7):
        return "POST", "/v1/check", check_body(i, "short", session), js
    if slot == 4:
        items = [check_body(i + k, "short", session) for k in range(2)]
        return "POST", "/v1/check/batch", {"items": items}, js
    if slot == 2:
        bad = ({"response": ""}, {"respons": "x"}, "not json", "{")[i // 10 % 4]
        return "POST", "/v1/check", bad, js if i // 10 % 4 != 2 else {"content-type": "text/plain"}
    if slot == 5:
        return "POST", "/v1/check", OVERSIZED, js
    if slot == 8:
        return ("GET", "/v1/nope", None, {}) if i // 10 % 2 else ("POST", "/v2/check", {}, js)
    return "GET", "/healthz", None, {}


@dataclass
class Tally:
    """What a run of requests got back."""

    statuses: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    acked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(Location, report) of every report answered 2xx."""
    retry_after_missing: int = 0
    elapsed: float = 0.0

    @property
    def acknowledged(self) -> int:
        return len(self.acked)


async def drive(
    bases: list[str], total: int, concurrency: int, session: str, budget_s: float,
    make: Any = request_mix, stop_when: Any = None,
) -> Tally:  # fmt: skip
    """Send ``total`` requests from ``concurrency`` clients (round-robin over ``bases``)."""
    tally = Tally()
    counter = iter(range(total))
    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency)
    deadline = time.monotonic() + budget_s

    async def client(worker: int, http: httpx.AsyncClient) -> None:
        for i in counter:
            if time.monotonic() > deadline or (stop_when is not None and stop_when(tally)):
                return
            method, path, body, headers = make(i, f"{session}-w{worker}")
            content = body if isinstance(body, bytes) else None
            if isinstance(body, str):
                content = body.encode()
            start = time.perf_counter()
            try:
                r = await http.request(
                    method, bases[i % len(bases)] + path, headers=headers, content=content,
                    json=body if isinstance(body, dict) else None,
                )  # fmt: skip
            except httpx.HTTPError as exc:
                tally.statuses[type(exc).__name__] += 1
                if stop_when is not None:
                    return
                continue
            tally.latencies.append(time.perf_counter() - start)
            tally.statuses[str(r.status_code)] += 1
            if r.status_code == 503 and "retry-after" not in r.headers:
                tally.retry_after_missing += 1
            if r.status_code == 200 and path == "/v1/check":
                tally.acked.append((r.headers.get("location", ""), r.json()))
            elif r.status_code == 200 and path == "/v1/check/batch":
                for rep in r.json()["reports"]:
                    loc = f"/v1/reports/{rep['session_id']}/{rep['turn_id']}"
                    tally.acked.append((loc, rep))

    start = time.perf_counter()
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        await asyncio.gather(*(client(w, http) for w in range(concurrency)))
    tally.elapsed = time.perf_counter() - start
    return tally


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def open_store(spec: str) -> Any:
    from guardrail.store import open_store as opener

    return opener(spec)


@dataclass
class Totals:
    acknowledged: int = 0
    stored: int = 0
    lost: int = 0
    kills: int = 0
    hostile: int = 0
    executed: int = 0


def level_line(level: int, t: Tally, stored: int, rss: tuple[float, float]) -> str:
    codes = " ".join(f"{k}:{v}" for k, v in sorted(t.statuses.items()))
    n = sum(t.statuses.values())
    return (
        f"  c={level:<4} {n / t.elapsed:6.1f} req/s  p50 {pct(t.latencies, 0.5):7.0f} ms  "
        f"p95 {pct(t.latencies, 0.95):7.0f}  p99 {pct(t.latencies, 0.99):7.0f}  [{codes}]  "
        f"stored {stored} / 2xx {t.acknowledged}  rss {rss[0]:.0f}->{rss[1]:.0f} MB"
    )


def valid_check(i: int, session: str) -> tuple[str, str, Any, dict[str, str]]:
    """Request ``i``: a valid short check (the write bursts and the flood)."""
    return (
        "POST",
        "/v1/check",
        check_body(i, "short", session),
        {"content-type": "application/json"},
    )
