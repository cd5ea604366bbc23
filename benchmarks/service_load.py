"""``guardrail serve`` under load, past its limits, killed, soaked, fed hostile input, on PostgreSQL.

Starts ``guardrail serve`` (the real offline models, a real store) as its own process on a free
127.0.0.1 port and drives it over HTTP. Every loop is bounded in requests and in time; nothing
but 127.0.0.1 is contacted. Steps (``--quick`` runs each, shorter, in under 5 minutes on 2 cores):

1. load: 1, 8, 32 and 128 concurrent clients over a fixed mix (valid answers of three lengths,
   batches, invalid bodies, oversized bodies, unknown routes); per level requests/s,
   p50/p95/p99, responses by status, reports stored vs answered 2xx, server RSS start/end;
2. flood: a server with ``--max-inflight 2 --max-queue 8`` under a ramp of concurrent clients:
   the first load answered 503 (each with ``Retry-After``), ``/readyz`` saturated, peak RSS;
3. kills: SIGKILL the server mid write-burst, restart it on the same store (no manual step)
   and fetch every report answered 2xx with a ``Location``: present and intact, integrity ok;
   the same for ``guardrail audit --resume`` killed mid-run (no row lost, none duplicated);
4. soak: N varied checks through one server, RSS sampled ten times, growth printed;
5. hostile: HTML/JS in answers, passages, source titles and session ids, rendered on the
   Verify/Explore page in headless Chromium: cases tried, scripts executed, elements injected;
6. postgresql: two service processes sharing one PostgreSQL store (stored = answered across
   both), given ``--postgres URL`` or ``$GUARDRAIL_TEST_POSTGRES_URL``.

Ends with ``acknowledged A, stored S, lost L, kills K, hostile cases H, executed X``.

    python benchmarks/service_load.py --quick
    python benchmarks/service_load.py                     # 400 requests a level, 20 kills, 10,000 soak
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from service_harness import (
    PASSAGE,
    ROOT,
    Server,
    Tally,
    Totals,
    check_body,
    drive,
    level_line,
    open_store,
    rss_mb,
    valid_check,
)


def step_load(server: Server, store: Any, per_level: int, totals: Totals) -> None:
    print("1. load (mix: 60% valid checks of 3 lengths, batches, invalid, oversized, unknown)")
    for level in (1, 8, 32, 128):
        before, rss0 = store.count(), rss_mb(server.pid)
        t = asyncio.run(drive([server.base], per_level, level, f"load{level}", 300))
        stored = store.count() - before
        totals.acknowledged += t.acknowledged
        totals.stored += stored
        totals.lost += max(0, t.acknowledged - stored)
        print(level_line(level, t, stored, (rss0, rss_mb(server.pid))))


def step_flood(store_spec: str, logs: Path, quick: bool, totals: Totals) -> None:
    print("2. flood: --max-inflight 2 --max-queue 8, valid checks only, ramped clients")
    server = Server(store_spec, logs / "flood.log", "--max-inflight", "2", "--max-queue", "8")
    server.start()
    store = open_store(store_spec)
    try:
        rss0, first_503, saturated_seen = rss_mb(server.pid), None, False
        for level in (1, 2, 4, 8, 16, 32, 64, 128):
            before = store.count()

            async def run(level: int = level) -> tuple[Tally, bool]:
                task = asyncio.create_task(
                    drive([server.base], min(2 * level, 96 if quick else 512), level, f"f{level}",
                          120, make=lambda i, s: ("POST", "/v1/check", check_body(i, "medium", s),
                                                  {"content-type": "application/json"}))
                )  # fmt: skip
                seen = False
                async with httpx.AsyncClient(timeout=10) as http:
                    while not task.done():
                        seen |= (await http.get(server.base + "/readyz")).json()["status"] == (
                            "saturated"
                        )
                        await asyncio.sleep(0.05)
                return await task, seen

            t, seen = asyncio.run(run())
            saturated_seen |= seen
            stored = store.count() - before
            totals.acknowledged += t.acknowledged
            totals.stored += stored
            totals.lost += max(0, t.acknowledged - stored)
            if first_503 is None and t.statuses.get("503"):
                first_503 = level
            print(level_line(level, t, stored, (rss0, rss_mb(server.pid)))
                  + f"  no Retry-After: {t.retry_after_missing}")  # fmt: skip
        print(f"  first 503 at {first_503} concurrent clients; /readyz said saturated: "
              f"{saturated_seen}; RSS start {rss0:.0f} MB, peak {rss_mb(server.pid, 'VmHWM'):.0f}"
              f" MB, end {rss_mb(server.pid):.0f} MB")  # fmt: skip
    finally:
        server.stop()


async def kill_burst(server: Server, k: int, after: int) -> Tally:
    """Eight clients send checks; once ``after`` are answered 2xx the server gets SIGKILL."""

    def killed(t: Tally) -> bool:
        if t.acknowledged >= after and server.proc and server.proc.poll() is None:
            server.kill()
        return server.proc is not None and server.proc.poll() is not None

    return await drive([server.base], 400, 8, f"kill{k}", 120, make=valid_check, stop_when=killed)


def step_kills(store_spec: str, logs: Path, kills: int, totals: Totals) -> None:
    print(
        f"3. kills: SIGKILL mid write-burst, restart on the same store, fetch every 2xx ({kills})"
    )
    rng = random.Random(32)
    server = Server(store_spec, logs / "kills.log").start()
    lost_here = acked_here = 0
    try:
        for k in range(kills):
            t = asyncio.run(kill_burst(server, k, rng.randint(2, 12)))
            if server.proc is not None and server.proc.poll() is None:
                server.kill()
            server = Server(store_spec, logs / "kills.log").start()  # the same store, as is
            missing = 0
            with httpx.Client(timeout=30) as http:
                for location, report in t.acked:
                    got = http.get(server.base + location) if location else None
                    if got is None or got.status_code != 200 or got.json()["report"] != report:
                        missing += 1
            integrity = open_store(store_spec).integrity_check()
            lost_here += missing + (integrity != "ok")
            acked_here += t.acknowledged
            print(f"  kill {k + 1}: {t.acknowledged} answered 2xx before the kill, "
                  f"{t.acknowledged - missing} found intact after restart, integrity {integrity}")  # fmt: skip
        totals.kills += kills
        totals.acknowledged += acked_here
        totals.stored += acked_here - lost_here
        totals.lost += lost_here
    finally:
        server.stop()


def step_audit_kill(logs: Path, runs: int, totals: Totals) -> None:
    import pyarrow.parquet as pq

    from guardrail.audit.results import part_files

    print(f"3b. guardrail audit killed mid-run then --resume ({runs})")
    rows = []
    for line in (ROOT / "examples/data/audit_sample.jsonl").read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue  # the sample's deliberately unreadable line
        if isinstance(row, dict) and str(row.get("response", "")).strip():
            rows.append(row)
    src = logs / "audit_in.jsonl"
    with src.open("w") as f:
        for i in range(40):
            f.write(json.dumps({**rows[i % len(rows)], "session_id": f"a{i}", "turn_id": 0}) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    for run in range(runs):
        out = logs / f"audit{run}"
        cmd = [sys.executable, "-m", "guardrail.cli", "audit", str(src), "--out", str(out),
               "--chunk-size", "4", "--no-progress"]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 300
        while len(part_files(out / "parts")) < 1 + run % 3 and proc.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        killed = proc.poll() is None
        if killed:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        subprocess.run([*cmd, "--resume"], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        keys = [
            r["key"] for r in pq.read_table(out / "results.parquet", columns=["key"]).to_pylist()
        ]
        errors = (
            (out / "errors.jsonl").read_text().count("\n") if (out / "errors.jsonl").exists() else 0
        )
        dup = len(keys) - len(set(keys))
        lost = 40 - len(set(keys)) - errors
        totals.kills += int(killed)
        totals.lost += max(0, lost)
        print(f"  run {run + 1}: killed {killed}, rows {len(keys)} + {errors} errors of 40, "
              f"duplicated {dup}, lost {max(0, lost)}")  # fmt: skip


def step_soak(server: Server, store: Any, n: int, totals: Totals) -> None:
    print(f"4. soak: {n} varied checks through one server, RSS sampled every {n // 10}")
    samples: list[float] = []
    before = store.count()
    acked = 0
    kinds = ("short", "medium", "long")
    for part in range(10):
        t = asyncio.run(drive([server.base], n // 10, 4, f"soak{part}", 3600,
                              make=lambda i, s, p=part: ("POST", "/v1/check",
                                                         check_body(p * 7919 + i, kinds[i % 3], s),
                                                         {"content-type": "application/json"})))  # fmt: skip
        acked += t.acknowledged
        samples.append(rss_mb(server.pid))
    stored = store.count() - before
    totals.acknowledged += acked
    totals.stored += stored
    totals.lost += max(0, acked - stored)
    growth = 100 * (samples[-1] - samples[0]) / samples[0]
    print("  RSS MB: " + " ".join(f"{s:.0f}" for s in samples))
    print(f"  growth from check {n // 10} to {n}: {growth:+.1f} %  (stored {stored} / 2xx {acked})")


HOSTILE = [
    '<img src=x data-pwn onerror="window.pwned=1">',
    "</script><script data-pwn>window.pwned=1</script>",
    '"><svg data-pwn onload="window.pwned=1">',
    '<iframe data-pwn srcdoc="<script>parent.pwned=1</script>"></iframe>',
    '<a data-pwn href="javascript:window.pwned=1">x</a>',
]


def step_hostile(server: Server, logs: Path, totals: Totals) -> None:
    print("5. hostile: HTML/JS in answer, passage, source title, session id -> the page")
    try:
        import pytest

        from tests.chromium import headless_chromium
    except ImportError as exc:
        print(f"  skipped: {exc}")
        return
    cases: list[tuple[str, str]] = []
    with httpx.Client(timeout=300) as http:
        for j, payload in enumerate(HOSTILE):
            for fld in ("answer", "passage", "source"):
                body = check_body(j, "short", "hostile")
                if fld == "answer":
                    body["response"] = f"The meeting is at 2pm {payload} on Monday."
                elif fld == "passage":
                    body["passages"][0]["text"] = f"{PASSAGE} {payload}"
                else:
                    body["passages"][0]["source"] = payload
                r = http.post(server.base + "/v1/check", json=body)
                r.raise_for_status()
                cases.append((fld, r.headers["location"]))
            bad = http.post(server.base + "/v1/check", json={**check_body(j, "short", payload)})
            totals.hostile += 1
            totals.executed += int(bad.status_code == 200)  # a hostile session id must be a 422
    executed = 0
    try:
        with headless_chromium(logs / "chromium-profile") as browser:
            from selenium.webdriver.common.by import By

            pages = [
                server.base + "/#/report/" + loc.removeprefix("/v1/reports/") for _, loc in cases
            ]
            pages.append(server.base + "/#/explore")
            rendered = 0
            for page in pages:
                browser.get("about:blank")
                browser.get(page)
                end = time.monotonic() + 30
                while time.monotonic() < end and not browser.execute_script(
                    "var r = document.getElementById('result'); "
                    "return location.hash.includes('explore') || (r && r.dataset.state === 'done')"
                ):
                    time.sleep(0.1)
                time.sleep(0.3)
                text = browser.find_element(By.TAG_NAME, "body").text
                values = browser.execute_script(
                    "return [...document.querySelectorAll('textarea, input')].map(e => e.value)"
                    ".join(' ')"
                )
                rendered += int("data-pwn" in text + values)
                injected = browser.find_elements(By.CSS_SELECTOR, "[data-pwn]")
                ran = browser.execute_script("return window.pwned") is not None
                executed += int(bool(injected) or ran)
            # The control: the same payload parsed as HTML is seen by the detection above.
            browser.execute_script(
                "document.body.insertAdjacentHTML('beforeend', arguments[0])", HOSTILE[0]
            )
            time.sleep(0.3)
            control = bool(browser.find_elements(By.CSS_SELECTOR, "[data-pwn]")) and (
                browser.execute_script("return window.pwned") == 1
            )
            print(
                f"  pages showing the payload as text: {rendered} of {len(pages)}; "
                f"detection control (payload parsed as HTML on purpose) seen: {control}"
            )
            totals.hostile += len(pages)
    except pytest.skip.Exception as exc:
        print(f"  page cases skipped: {exc}")
    totals.executed += executed
    print(
        f"  {totals.hostile} cases ({len(cases)} stored reports opened, the Explore list, "
        f"{len(HOSTILE)} hostile session ids), executed or injected: {totals.executed}"
    )


def step_postgres(url: str | None, logs: Path, total: int, totals: Totals) -> None:
    print("6. two service processes sharing one PostgreSQL store")
    if not url:
        print("  skipped: no --postgres URL and no $GUARDRAIL_TEST_POSTGRES_URL")
        return
    import psycopg

    schema = "load_" + uuid.uuid4().hex[:12]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    spec = f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    servers = [Server(spec, logs / f"pg{i}.log") for i in range(2)]
    try:
        for s in servers:
            s.start()
        store = open_store(spec)
        t = asyncio.run(drive([s.base for s in servers], total, 32, "pg", 600))
        stored = store.count()
        totals.acknowledged += t.acknowledged
        totals.stored += stored
        totals.lost += max(0, t.acknowledged - stored)
        print(level_line(32, t, stored, (rss_mb(servers[0].pid), rss_mb(servers[1].pid))))
        keys = [(r["session_id"], r["turn_id"]) for _, r in t.acked]
        print(f"  distinct (session, turn) keys {len(set(keys))} of {len(keys)} answered")
    finally:
        for s in servers:
            s.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run of every step (< 5 min)")
    parser.add_argument("--per-level", type=int, help="requests per concurrency level")
    parser.add_argument("--kills", type=int, help="SIGKILL runs of the server")
    parser.add_argument("--soak", type=int, help="checks in the soak")
    parser.add_argument("--postgres", default=os.environ.get("GUARDRAIL_TEST_POSTGRES_URL"))
    parser.add_argument("--steps", default="1,2,3,4,5,6", help="which steps to run")
    args = parser.parse_args()
    q = args.quick
    per_level = args.per_level or (48 if q else 400)
    kills = args.kills if args.kills is not None else (3 if q else 20)
    soak = args.soak or (300 if q else 10_000)
    steps = set(args.steps.split(","))
    totals = Totals()
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="guardrail-load-") as tmp:
        logs = Path(tmp)
        spec = str(logs / "load.sqlite")
        if steps & {"1", "4", "5"}:
            server = Server(spec, logs / "load.log").start()
            store = open_store(spec)
            try:
                if "1" in steps:
                    step_load(server, store, per_level, totals)
                if "4" in steps:
                    step_soak(server, store, soak, totals)
                if "5" in steps:
                    step_hostile(server, logs, totals)
            finally:
                server.stop()
            print(f"  the load store: integrity {store.integrity_check()}")
        if "2" in steps:
            step_flood(str(logs / "flood.sqlite"), logs, q, totals)
        if "3" in steps:
            step_kills(str(logs / "kills.sqlite"), logs, kills, totals)
            step_audit_kill(logs, 1 if q else 3, totals)
        if "6" in steps:
            step_postgres(args.postgres, logs, 64 if q else 400, totals)
    print(f"(took {time.monotonic() - began:.0f} s)")
    print(
        f"acknowledged {totals.acknowledged}, stored {totals.stored}, lost {totals.lost}, "
        f"kills {totals.kills}, hostile cases {totals.hostile}, executed {totals.executed}"
    )
    return 0 if totals.lost == 0 and totals.executed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
