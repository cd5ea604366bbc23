"""Backpressure: past ``max_concurrent_checks + max_queue`` held checks, a 503 with Retry-After
at once; ``/readyz`` says ``saturated`` while full and ``ready`` once the checks have drained.

The guardrail is a real ``Guardrail`` with its model stages disabled, wrapped so that each check
waits on a gate the test opens: the server is held full for as long as the test looks at it.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

from fastapi.testclient import TestClient

from guardrail.config import GuardrailConfig
from guardrail.pipeline import Guardrail
from guardrail.service import create_app
from guardrail.service.settings import ServiceSettings
from guardrail.store import ReportStore
from tests.unit.test_service import CHECK, NO_MODELS, wait_ready


class GatedGuard:
    """A guardrail whose checks wait for ``gate`` (warm-up excepted); counts checks started."""

    def __init__(self) -> None:
        self.inner = Guardrail(GuardrailConfig.load(NO_MODELS))
        self.gate = threading.Event()
        self.started = 0
        self._lock = threading.Lock()

    @property
    def config(self) -> GuardrailConfig:
        return self.inner.config

    def invoke(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(data, dict):
            return self.inner.invoke(data)  # the warm-up check (requests arrive as models)
        with self._lock:
            self.started += 1
        assert self.gate.wait(timeout=60), "the test never opened the gate"
        return self.inner.invoke(data, *args, **kwargs)

    def batch(self, inputs: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        return [self.invoke(i) for i in inputs]


def wait_until(predicate: Any, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition never held")


@pytest.mark.parametrize(("inflight", "queue"), [(1, 0), (1, 2), (2, 1)])
def test_past_inflight_and_queue_a_503_with_retry_after(
    tmp_path: Path, inflight: int, queue: int
) -> None:
    guard = GatedGuard()
    settings = ServiceSettings(max_concurrent_checks=inflight, max_queue=queue, retry_after_s=3)
    store = ReportStore(tmp_path / "results.sqlite")
    app = create_app(guard.config, store=store, settings=settings, guard=guard)
    with TestClient(app) as client, ThreadPoolExecutor(inflight + queue) as pool:
        wait_ready(client)
        held = [pool.submit(client.post, "/v1/check", json=CHECK) for _ in range(inflight + queue)]
        wait_until(lambda: guard.started == inflight)
        wait_until(lambda: client.get("/readyz").json()["checks_held"] == inflight + queue)
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["status"] == "saturated"
        assert ready.json()["max_held"] == inflight + queue
        start = time.monotonic()
        refused = [client.post("/v1/check", json=CHECK) for _ in range(5)]
        refused.append(client.post("/v1/check/batch", json={"items": [CHECK]}))
        assert time.monotonic() - start < 10  # answered at once, not queued behind the gate
        for r in refused:
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"] == "3"
            assert r.json()["detail"][0]["type"] == "saturated"
        assert guard.started == inflight  # nothing refused reached a worker
        # a body that says it is too large is a 413 saturated or not, and takes no place
        big = "x" * (settings.max_body_bytes + 1)
        oversized = client.post(
            "/v1/check", content=big, headers={"content-type": "application/json"}
        )
        assert oversized.status_code == 413, oversized.text
        assert client.get("/readyz").json()["checks_held"] == inflight + queue
        assert client.get("/healthz").status_code == 200  # other routes still answer
        metrics = client.get("/metrics").text
        assert 'guardrail_checks_refused_total{reason="saturated"} 6' in metrics
        guard.gate.set()
        assert [f.result(timeout=60).status_code for f in held] == [200] * (inflight + queue)
        assert client.get("/readyz").json() | {"store": None} == {
            "status": "ready",
            "error": None,
            "store": None,
            "checks_held": 0,
            "max_held": inflight + queue,
        }
        assert client.post("/v1/check", json=CHECK).status_code == 200
        assert store.count() == inflight + queue + 1  # every 200 stored, no refusal stored


def test_the_cli_flags_set_the_limits() -> None:
    from guardrail.cli import build_parser

    args = build_parser().parse_args(["serve", "--max-inflight", "3", "--max-queue", "0"])
    assert (args.max_inflight, args.max_queue) == (3, 0)
    settings = ServiceSettings().with_values(max_concurrent_checks=3, max_queue=0)
    assert (settings.max_concurrent_checks, settings.max_queue) == (3, 0)


@pytest.mark.parametrize(
    ("flag", "value", "least"),
    [
        ("--max-inflight", "-1", 1),
        ("--max-inflight", "0", 1),
        ("--max-queue", "-1", 0),
        ("--max-queue", "many", 0),
    ],
)
def test_a_bad_limit_is_one_line_naming_the_flag(
    flag: str, value: str, least: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from guardrail.cli import build_parser

    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", flag, value])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith(f"argument {flag}: must be a whole number ≥ {least}, not {value!r}")
    assert "max_concurrent_checks" not in error
