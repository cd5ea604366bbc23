"""Reliability figures: fuzzed inputs, injected faults, concurrent callers, memory under a batch.

Prints: inputs tried per entry point (``Guardrail.invoke``, ``guardrail check``,
``POST /v1/check``), exceptions escaped, accepts-by-accident, spans outside the text, other
invariant breaks, fault cases survived / tried, concurrent-vs-sequential mismatches, history
differences (every report checked fresh, after a shuffled history of other inputs, in a batch
and in the service, compared field by field with the real offline verifier:
``tests/same_report.py``), and the peak resident memory while checking a batch of answers. The strategies and invariants are the
test suite's (``tests/reliability_strategies.py``); the verifier is the ``ScriptedVerifier``
test double (the label drawn per example), spaCy and the embedder are the real offline models.

    python benchmarks/reliability.py --examples 300 --batch 200
    python benchmarks/reliability.py --examples 10000          # the full campaign
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import io
import json
import logging
import resource
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def fuzz(name: str, n: int, body: Callable[..., None], *strategies: Any) -> float:
    """Run ``body`` on ``n`` generated examples (no shrinking, no database); seconds taken."""
    from hypothesis import HealthCheck, Phase, given, settings

    start = time.perf_counter()
    runner = settings(
        max_examples=n,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )(given(*strategies)(body))
    runner()
    took = time.perf_counter() - start
    print(f"  {name:<26} {took:8.1f} s")
    return took


def fuzz_section(examples: int, show: int) -> tuple[Any, float]:
    from hypothesis import strategies as st

    from guardrail.report import GuardReport
    from tests.reliability_strategies import (
        Tally,
        classify,
        guard_inputs,
        scripted_guard,
        texts,
        violations,
    )

    tally = Tally()
    labels = st.sampled_from(["entailment", "neutral", "contradiction"])
    for label in ("entailment", "neutral", "contradiction"):
        scripted_guard(label)

    def invoke(data: dict[str, Any], label: str) -> None:
        tally.add(classify(scripted_guard(label).invoke, data))

    def cli(response: str, passages: list[str], label: str) -> None:
        import guardrail.cli
        import guardrail.pipeline

        if "\x00" in response or any("\x00" in p for p in passages):
            return
        argv = ["check", "--response", response, "--format", "json"]
        for p in passages:
            argv += ["--passage", p]
        out = io.StringIO()
        original = guardrail.pipeline.Guardrail
        guardrail.pipeline.Guardrail = lambda *a, **k: scripted_guard(label)  # type: ignore[assignment,misc]
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                code = guardrail.cli.main(argv)
        except BaseException as exc:  # noqa: BLE001 - counted, never hidden
            tally.add(("escaped", [f"cli: {type(exc).__name__}: {exc}"[:200]]))
            return
        finally:
            guardrail.pipeline.Guardrail = original  # type: ignore[misc]
        if code not in (0, 2):
            tally.add(("escaped", [f"cli exit {code}"]))
        elif code == 2:
            tally.add(("typed_error", []))
        else:
            report = GuardReport.model_validate_json(out.getvalue())
            tally.add(("report", violations(report, {"response": response, "passages": passages})))

    from fastapi.testclient import TestClient

    from guardrail.service import create_app
    from guardrail.service.settings import ServiceSettings

    app = create_app(
        guard=scripted_guard("neutral"),
        settings=ServiceSettings(max_body_bytes=50_000, max_passages=20, warmup=False),
    )
    client = TestClient(app, raise_server_exceptions=False)

    def service(data: dict[str, Any]) -> None:
        r = client.post(
            "/v1/check", content=json.dumps(data), headers={"content-type": "application/json"}
        )
        if r.status_code == 200:
            tally.add(("report", violations(GuardReport.model_validate(r.json()), data)))
        elif r.status_code in (413, 422):
            tally.add(("typed_error", []))
        else:
            tally.add(("escaped", [f"http {r.status_code}: {r.text[:150]}"]))

    took = 0.0
    with client:
        took += fuzz("Guardrail.invoke", examples, invoke, guard_inputs, labels)
        took += fuzz(
            "guardrail check",
            max(1, examples // 10),
            cli,
            texts,
            st.lists(texts, max_size=3),
            labels,
        )
        took += fuzz("POST /v1/check", max(1, examples // 10), service, guard_inputs)
    for what, items in (
        ("escaped", tally.escaped),
        ("accept by accident", tally.accepts_by_accident),
        ("span outside", tally.spans_outside),
        ("other", tally.other),
    ):
        for item in sorted(set(items))[:show]:
            print(f"    {what}: {item}")
    return tally, took


def fault_section() -> tuple[int, int, list[str]]:
    """Every fault case of ``tests/unit/test_reliability_faults.py``, run directly."""
    import pytest

    from tests.unit import test_reliability_faults as faults

    tried = survived = 0
    failed: list[str] = []
    for name, fn in sorted(vars(faults).items()):
        if not name.startswith("test_") or not callable(fn):
            continue
        marks = getattr(fn, "pytestmark", [])
        params: list[dict[str, Any]] = [{}]
        for mark in marks:
            if mark.name == "parametrize":
                argname, values = mark.args
                params = [{**p, argname: v} for p in params for v in values]
        for p in params:
            tried += 1
            label = f"{name}{list(p.values()) or ''}"
            try:
                with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
                    kwargs = dict(p)
                    sig = inspect.signature(fn).parameters
                    if "tmp_path" in sig:
                        kwargs["tmp_path"] = Path(tmp)
                    if "monkeypatch" in sig:
                        kwargs["monkeypatch"] = mp
                    fn(**kwargs)
                survived += 1
            except BaseException as exc:  # noqa: BLE001 - a fault case that did not survive
                failed.append(f"{label}: {type(exc).__name__}: {str(exc)[:120]}")
    return survived, tried, failed


def history_section(n: int, show: int) -> tuple[int, int]:
    """The curated inputs and ``n`` fuzzed ones, each checked by the real ``Guardrail()``
    fresh, after a shuffled history, in a batch and in the service: (differences, inputs)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from guardrail import Guardrail
    from tests.reliability_strategies import guard_inputs
    from tests.same_report import INPUTS, history_differences

    drawn: list[dict[str, Any]] = []

    @hypothesis_seed(20261203)
    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(guard_inputs)
    def collect(data: dict[str, Any]) -> None:
        drawn.append(data)

    collect()
    inputs = [*INPUTS, *drawn[:n]]
    start = time.perf_counter()
    found = history_differences(Guardrail, inputs, seed=7)
    total = 0
    for way, diffs in found.items():
        total += len(diffs)
        print(f"  {way:<16} {len(diffs)} differences over {len(inputs)} inputs")
        for d in diffs[:show]:
            print(f"    {d}")
    print(f"  took {time.perf_counter() - start:.1f} s")
    return total, len(inputs)


def concurrency_section() -> tuple[int, int]:
    """Threads (1/4/16), batch and abatch vs sequential: (mismatching reports, reports)."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.unit.test_reliability_concurrency import INPUTS, fresh, signature

    want = [fresh().invoke(x) for x in INPUTS]
    runs: dict[str, list[Any]] = {}
    for workers in (1, 4, 16):
        guard = fresh()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            runs[f"threads {workers}"] = list(pool.map(guard.invoke, INPUTS * 2))
        runs[f"batch {workers}"] = fresh().batch(INPUTS, {"max_concurrency": workers})
    runs["abatch 8"] = asyncio.run(fresh().abatch(INPUTS, {"max_concurrency": 8}))
    mismatches = total = 0
    for name, got in runs.items():
        bad = 0
        for g, w in zip(got, want * (len(got) // len(want)), strict=True):
            total += 1
            if signature(g) != signature(w) or abs(g.confidence - w.confidence) > 1e-3:
                bad += 1
        mismatches += bad
        print(f"  {name:<12} {bad} mismatches of {len(got)}")
    return mismatches, total


def memory_section(n: int) -> None:
    from tests.unit.test_reliability_concurrency import INPUTS, fresh

    guard = fresh()
    items = [
        {**x, "response": f"{x['response']} Item {i} was logged on day {i % 28 + 1}."}
        for i, x in enumerate(INPUTS * (n // len(INPUTS) + 1))
    ][:n]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    reports = guard.batch(items, {"max_concurrency": 4}, return_exceptions=True)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    errors = sum(1 for r in reports if isinstance(r, BaseException))
    print(f"  batch of {n} answers: {took:.1f} s ({n / took:.1f} answers/s), {errors} errors")
    print(f"  peak RSS {peak:.0f} MB (before the batch {before:.0f} MB, +{peak - before:.0f} MB)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--examples",
        type=int,
        default=300,
        help="fuzzed inputs for invoke (guardrail check and POST /v1/check get a tenth each)",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=200,
        help="fuzzed inputs (beside the curated ones) for the same-input-same-report check",
    )
    parser.add_argument("--batch", type=int, default=1000, help="answers in the memory batch")
    parser.add_argument("--show", type=int, default=5, help="examples of each problem to print")
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")

    from tests.reliability_strategies import shared_backends

    start = time.perf_counter()
    shared_backends()
    print(f"models loaded in {time.perf_counter() - start:.1f} s")

    print("fuzzing:")
    tally, took = fuzz_section(args.examples, args.show)
    print("faults:")
    survived, tried, failed = fault_section()
    for f in failed:
        print(f"    not survived: {f}")
    print("concurrency:")
    mismatches, compared = concurrency_section()
    print("history:")
    differences, histories = history_section(args.history, args.show)
    print("memory:")
    memory_section(args.batch)

    print("\nsummary")
    print(
        f"  inputs tried                 {tally.tried} ({tally.reports} reports, "
        f"{tally.typed_errors} typed errors; {tally.tried / took:.1f} inputs/s)"
    )
    print(f"  exceptions escaped           {len(tally.escaped)}")
    print(f"  accepts by accident          {len(tally.accepts_by_accident)}")
    print(f"  spans outside text           {len(tally.spans_outside)}")
    print(f"  other invariant breaks       {len(tally.other)}")
    print(f"  fault cases survived / tried {survived} / {tried}")
    print(f"  concurrent-vs-sequential     {mismatches} mismatches of {compared}")
    print(f"  history differences          {differences} over {histories} inputs x 4 ways")
    print(
        f"  estimate for --examples 10000: {10000 * 1.2 * took / max(1, tally.tried) / 60:.0f} min"
        " of fuzzing (plus model load, faults and the batch)"
    )
    bad = len(tally.escaped) + len(tally.accepts_by_accident) + len(tally.spans_outside)
    return 1 if bad or mismatches or differences else 0


if __name__ == "__main__":
    sys.exit(main())
