"""The service through a real uvicorn server on a free loopback port, with the real models.

One server (module scope) runs the offline guardrail with the bundled verifier, wrapped only to
hold a check inside the verifier while the test looks at the server (a gate: the scores are the
real model's). Other tests start ``guardrail serve`` itself as a process: with a token, on
loopback without one, and refusing a public interface without one.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the service extra is not installed")
import httpx
import uvicorn

from guardrail.errors import ModelLoadError
from guardrail.verifiers.base import NLIPrediction, Verifier

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
REQUEST = json.loads((ROOT / "examples/data/check_request.json").read_text())
FAITHFUL = {
    **REQUEST,
    "response": "AlphaCodium is an iterative method for improving LLM code generation.",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, status: int = 200, tries: int = 1200, headers: Any = None) -> httpx.Response:
    """Poll ``url`` (0.25 s apart, bounded) until it answers ``status``."""
    last: httpx.Response | Exception | None = None
    for _ in range(tries):
        try:
            answer = httpx.get(url, timeout=5, headers=headers)
            if answer.status_code == status:
                return answer
            last = answer
        except httpx.TransportError as exc:
            last = exc
        time.sleep(0.25)
    raise AssertionError(f"{url} never answered {status}: {last}")


@contextmanager
def running(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port in a thread until the block ends;
    yields the base URL once ``/healthz`` and ``/readyz`` answer 200."""
    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(base + "/healthz")
        wait_for(base + "/readyz")
        yield base
    finally:
        srv.should_exit = True
        thread.join(timeout=30)


class Gate(Verifier):
    """The real verifier; while ``held`` is set, ``predict`` waits until it is cleared."""

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner
        self.name = inner.name
        self.languages = inner.languages
        self.max_tokens = inner.max_tokens
        self.held = threading.Event()
        self.entered = threading.Event()
        self.released = threading.Event()

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))  # type: ignore[attr-defined]

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIPrediction]:
        if self.held.is_set():
            self.entered.set()
            assert self.released.wait(timeout=300), "gate never released"
        return self.inner.predict(pairs)


@pytest.fixture(scope="module")
def gate() -> Gate:
    from guardrail.verifiers import load_verifier

    try:
        return Gate(load_verifier(None))
    except ModelLoadError as exc:
        pytest.skip(f"no verifier model available ({exc})")


@pytest.fixture(scope="module")
def server(gate: Gate, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from guardrail.pipeline import Guardrail
    from guardrail.service import create_app
    from guardrail.service.settings import ServiceSettings
    from guardrail.store import ReportStore

    store = ReportStore(tmp_path_factory.mktemp("store") / "results.sqlite")
    app = create_app(
        guard=Guardrail(verifier=gate),
        store=store,
        settings=ServiceSettings(max_concurrent_checks=2),
    )
    with running(app) as base:
        yield base


def metric(text: str, sample: str) -> float:
    for line in text.splitlines():
        if line.startswith(sample + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_alphacodium_example_is_flagged_stored_and_counted(server: str) -> None:
    before = httpx.get(server + "/metrics").text
    r = httpx.post(server + "/v1/check", json=REQUEST, timeout=300)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["verdict"]["label"] == "HALLUCINATION"
    assert report["recommendation"]["action"] in ("regenerate", "human_review")
    assert "Google" in {f["content"] for f in report["hallucination_flags"]}
    stored = httpx.get(server + r.headers["location"]).json()
    assert stored["report"]["verdict"] == report["verdict"]
    after = httpx.get(server + "/metrics").text
    action = report["recommendation"]["action"]
    sample = f'guardrail_checks_total{{action="{action}"}}'
    assert metric(after, sample) == metric(before, sample) + 1
    assert metric(after, 'guardrail_verdicts_total{verdict="HALLUCINATION"}') >= 1


def test_faithful_answer_is_verified(server: str) -> None:
    r = httpx.post(server + "/v1/check", json=FAITHFUL, timeout=300)
    assert r.status_code == 200
    assert r.json()["verdict"]["label"] == "VERIFIED"


def test_a_running_check_does_not_block_the_server(server: str, gate: Gate) -> None:
    gate.entered.clear()
    gate.released.clear()
    gate.held.set()
    # An answer no earlier test sent: its pairs are not in the guardrail's score cache, so the
    # check really reaches the verifier.
    held = {**FAITHFUL, "response": FAITHFUL["response"] + " It was checked at the gate."}
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(httpx.post, server + "/v1/check", json=held, timeout=300)
        try:
            assert gate.entered.wait(timeout=300), "the check never reached the verifier"
            # The check is inside the verifier, in a worker thread: the server still answers.
            assert httpx.get(server + "/healthz", timeout=10).status_code == 200
            text = httpx.get(server + "/metrics", timeout=10).text
            assert metric(text, "guardrail_checks_in_progress") == 1
            assert not pending.done()
        finally:
            gate.held.clear()
            gate.released.set()
        assert pending.result().status_code == 200
    assert metric(httpx.get(server + "/metrics").text, "guardrail_checks_in_progress") == 0


def test_concurrent_checks_match_one_by_one(server: str) -> None:
    bodies = [REQUEST, FAITHFUL] * 2
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(lambda b: httpx.post(server + "/v1/check", json=b, timeout=300), bodies)
        )
    labels = [r.json()["verdict"]["label"] for r in results]
    assert labels == ["HALLUCINATION", "VERIFIED"] * 2
    turns = {r.json()["turn_id"] for r in results}
    assert len(turns) == 4  # each stored under its own turn


def cli_env(**values: str) -> dict[str, str]:
    """The environment of a ``guardrail`` process: this checkout's package first on the path
    (the process runs in a temporary directory), no ``$GUARDRAIL_API_TOKEN`` unless given."""
    env = {k: v for k, v in os.environ.items() if k != "GUARDRAIL_API_TOKEN"}
    path = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return {**env, "PYTHONPATH": path, **values}


def test_guardrail_serve_command(tmp_path: Path) -> None:
    """``guardrail serve`` as a process: config file, store, token; then ``store export``."""
    config = tmp_path / "guardrail.yaml"
    config.write_text(
        "disabled_stages: [coherence, claims, fact_validation, hallucination, correction]\n"
        "service:\n  max_passages: 2\n"
    )
    store = tmp_path / "results.sqlite"
    port = free_port()
    env = cli_env(GUARDRAIL_API_TOKEN="t0ken")
    cmd = [sys.executable, "-m", "guardrail.cli", "serve", "--port", str(port)]
    proc = subprocess.Popen(
        [*cmd, "--store", str(store), "--config", str(config), "--log-level", "warning"],
        env=env,
        cwd=tmp_path,
    )
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": "Bearer t0ken"}
    try:
        wait_for(base + "/readyz", tries=400)
        assert httpx.post(base + "/v1/check", json=REQUEST).status_code == 401
        r = httpx.post(base + "/v1/check", json=REQUEST, headers=auth, timeout=60)
        assert r.status_code == 200 and r.json()["session_id"] == "demo"
        many = {**REQUEST, "passages": ["a", "b", "c"]}
        bad = httpx.post(base + "/v1/check", json=many, headers=auth)
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "passages"]
        text = httpx.get(base + "/metrics", headers=auth).text
        assert 'guardrail_checks_total{action="human_review"} 1' in text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "guardrail.cli",
            "store",
            "export",
            "--db",
            str(store),
            "--session",
            "demo",
            "--format",
            "paths",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.startswith("/postprocessing/demo/0/input/llm_response\t")
    assert '/postprocessing/demo/0/result/recommendation\t"human_review"' in out


NO_MODELS = "disabled_stages: [coherence, claims, fact_validation, hallucination, correction]\n"


def test_guardrail_serve_on_loopback_starts_without_a_token(tmp_path: Path) -> None:
    config = tmp_path / "guardrail.yaml"
    config.write_text(NO_MODELS)
    port = free_port()
    cmd = [sys.executable, "-m", "guardrail.cli", "serve", "--port", str(port), "--no-store"]
    proc = subprocess.Popen(
        [*cmd, "--config", str(config), "--log-level", "warning"],
        env=cli_env(),
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(base + "/readyz", tries=400)
        assert httpx.get(base + "/healthz").status_code == 200
        r = httpx.post(base + "/v1/check", json=REQUEST, timeout=60)  # no Authorization header
        assert r.status_code == 200, r.text
        assert httpx.get(base + "/metrics").status_code == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"serving on http://127.0.0.1:{port}/ (no store, no auth)" in err
    assert "warning" not in err.lower()


def test_guardrail_serve_refuses_a_public_host_without_a_token(tmp_path: Path) -> None:
    config = tmp_path / "guardrail.yaml"
    config.write_text(NO_MODELS)
    port = free_port()
    store = tmp_path / "results.sqlite"
    cmd = [sys.executable, "-m", "guardrail.cli", "serve", "--host", "0.0.0.0", "--port", str(port)]
    started = time.monotonic()
    done = subprocess.run(
        [*cmd, "--store", str(store), "--config", str(config)],
        env=cli_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - started < 30  # refused at start, no model loaded
    assert done.stderr.startswith("guardrail: error: refusing to serve on 0.0.0.0 without a token")
    assert "export GUARDRAIL_API_TOKEN=" in done.stderr and "--no-auth" in done.stderr
    assert "Traceback" not in done.stderr
    assert not store.exists()
    with socket.socket() as s, pytest.raises(OSError):
        s.settimeout(5)
        s.connect(("127.0.0.1", port))  # nothing listens


def test_batch_keeps_the_order_of_items(server: str) -> None:
    r = httpx.post(server + "/v1/check/batch", json={"items": [FAITHFUL, REQUEST]}, timeout=300)
    assert r.status_code == 200
    reports = r.json()["reports"]
    assert [rep["verdict"]["label"] for rep in reports] == ["VERIFIED", "HALLUCINATION"]
    assert reports[0]["turn_id"] + 1 == reports[1]["turn_id"]  # stored in item order


def test_curl_data_without_json_content_type_gets_one_line_415(server: str, tmp_path: Path) -> None:
    """``curl -d @file`` labels the JSON as a form: one line saying to send JSON, not pydantic."""
    body = tmp_path / "check.json"
    body.write_text(json.dumps(REQUEST), encoding="utf-8")
    curl = shutil.which("curl")
    if curl:
        out = subprocess.run(
            [curl, "-s", "-w", "\n%{http_code}", "-d", f"@{body}", server + "/v1/check"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        text, status = out.rsplit("\n", 1)
    else:  # what curl would send
        r = httpx.post(
            server + "/v1/check",
            content=body.read_bytes(),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        text, status = r.text, str(r.status_code)
    assert status == "415", text
    [item] = json.loads(text)["detail"]
    assert item["msg"] == (
        "send JSON with content-type application/json (got application/x-www-form-urlencoded)"
    )
    # The same file with the header is checked.
    r = httpx.post(
        server + "/v1/check",
        content=body.read_bytes(),
        headers={"content-type": "application/json"},
        timeout=300,
    )
    assert r.status_code == 200, r.text
