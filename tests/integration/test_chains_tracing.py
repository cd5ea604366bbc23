"""Traces with every stage running, and the real LangSmith client against a loopback server.

The server is a ``ThreadingHTTPServer`` on 127.0.0.1 that records what the real ``langsmith``
``Client`` sends (``/info``, ``/runs/multipart`` or ``/runs/batch`` / ``/runs``, ``/feedback``);
nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
import uuid
import warnings
from collections.abc import Iterator
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from guardrail.pipeline import Guardrail
from guardrail.report import GuardReport
from guardrail.tracing import FEEDBACK_KEYS, FeedbackRecorder, RunTreeCollector, record_feedback
from tests.stage_names import STAGES, STEPS

pytestmark = pytest.mark.integration

DATA = {
    "query": "When is the meeting?",
    "response": "The meeting is at 2pm on Monday.",
    "passages": [{"text": "The meeting with John is at 2pm on Monday in room 4B.", "score": 0.82}],
    "session_id": "session-9",
    "turn_id": 1,
}
EXPECTED_CHILDREN = list(STEPS)


PROJECT = {
    "id": str(uuid.uuid4()),
    "name": "guardrail-tests",
    "tenant_id": str(uuid.uuid4()),
    "start_time": "2026-01-01T00:00:00+00:00",
    "reference_dataset_id": None,
}


class Recorder(BaseHTTPRequestHandler):
    """Records each request as (method, path, headers, body) and answers like LangSmith."""

    requests: list[tuple[str, str, dict[str, str], bytes]]

    def log_message(self, *args: Any) -> None:
        pass

    def _read(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _reply(self, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _record(self, method: str) -> bytes:
        body = self._read()
        self.requests.append((method, self.path, dict(self.headers), body))
        return body

    def do_GET(self) -> None:
        self._record("GET")
        if self.path.startswith("/sessions"):  # read_project(project_name=...)
            self._reply([PROJECT])
        else:
            self._reply({})

    def do_POST(self) -> None:
        body = self._record("POST")
        if self.path.startswith("/sessions"):
            self._reply(PROJECT)
        elif self.path.startswith("/feedback"):
            data = json.loads(body)
            self._reply({**data, "id": data.get("id") or str(uuid.uuid4())})
        else:
            self._reply({})

    def do_PATCH(self) -> None:
        self._record("PATCH")
        self._reply({})


@pytest.fixture()
def langsmith_server() -> Iterator[tuple[str, list[tuple[str, str, dict[str, str], bytes]]]]:
    requests: list[tuple[str, str, dict[str, str], bytes]] = []
    handler = type("Handler", (Recorder,), {"requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", requests
    finally:
        server.shutdown()
        server.server_close()


def received_runs(
    requests: list[tuple[str, str, dict[str, str], bytes]],
) -> dict[str, dict[str, Any]]:
    """Merge every run the client sent (multipart parts, batch or single posts) by run id."""
    runs: dict[str, dict[str, Any]] = {}

    def merge(run_id: str, data: dict[str, Any]) -> None:
        runs.setdefault(run_id, {}).update(data)

    for _method, path, headers, body in requests:
        assert headers.get("Content-Encoding") in (None, "identity"), "unexpected compression"
        if path.startswith("/runs/multipart"):
            raw = b"Content-Type: " + headers["Content-Type"].encode() + b"\r\n\r\n" + body
            message = BytesParser(policy=HTTP).parsebytes(raw)
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                payload = json.loads(part.get_payload(decode=True))
                _, run_id, *field = str(name).split(".")
                merge(run_id, {field[0]: payload} if field else payload)
        elif path.startswith("/runs/batch"):
            batch = json.loads(body)
            for run in batch.get("post", []) + batch.get("patch", []):
                merge(str(run["id"]), run)
        elif path.startswith("/runs"):
            run = json.loads(body)
            merge(str(run.get("id") or path.rsplit("/", 1)[-1]), run)
    return runs


def test_trace_tree_with_every_stage() -> None:
    collector = RunTreeCollector()
    report = Guardrail().invoke(DATA, {"callbacks": [collector]})
    root = collector.roots[0]
    assert root.name == "guardrail" and root.names() == EXPECTED_CHILDREN
    assert isinstance(root.output, GuardReport) and root.output == report
    assert root.metadata["session_id"] == "session-9"


def test_langsmith_client_receives_runs_and_feedback(langsmith_server: Any) -> None:
    from langchain_core.tracers import LangChainTracer
    from langsmith import Client

    url, requests = langsmith_server
    client = Client(api_url=url, api_key="test-key")
    tracer = LangChainTracer(client=client, project_name="guardrail-tests")
    feedback = FeedbackRecorder(client, project_name="guardrail-tests")
    guard = Guardrail({"disabled_stages": list(STAGES)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = guard.invoke(DATA, {"callbacks": [tracer, feedback], "tags": ["integration"]})
        tracer.wait_for_futures()
        client.flush()
    # LangSmith deprecates run feedback without the project (session) id: none of that here.
    assert not [w for w in caught if "session_id" in str(w.message)]

    runs = received_runs(requests)
    by_name = {run.get("name"): run for run in runs.values()}
    assert set(EXPECTED_CHILDREN) | {"guardrail"} <= set(by_name)
    root = by_name["guardrail"]
    root_id = str(root["id"])
    assert root.get("parent_run_id") is None
    assert all(str(by_name[n]["parent_run_id"]) == root_id for n in EXPECTED_CHILDREN)
    metadata = root["extra"]["metadata"]
    assert metadata["session_id"] == "session-9" and metadata["turn_id"] == 1
    assert metadata["guardrail_profile"] == "offline"
    assert "integration" in root["tags"]
    # The typed output arrives as JSON with the report's fields.
    output = root["outputs"]["output"]
    assert output["recommendation"]["action"] == report.action.value
    assert output["confidence"] == pytest.approx(report.confidence)

    # Feedback: written automatically by FeedbackRecorder for the guardrail run ...
    posted = [json.loads(b) for m, p, _, b in requests if m == "POST" and p.startswith("/feedback")]
    assert [f["key"] for f in posted] == list(FEEDBACK_KEYS)
    assert {str(f["run_id"]) for f in posted} == {root_id}
    assert {str(f["session_id"]) for f in posted} == {PROJECT["id"]}
    assert {str(f["trace_id"]) for f in posted[:3]} == {root_id}
    action = next(f for f in posted if f["key"] == "guardrail.action")
    assert action["value"] == "human_review" and action["score"] == 0
    # ... and by hand, with record_feedback (the project found by the tracers' default name).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ids = record_feedback(report, root_id, client)
    assert not [w for w in caught if "session_id" in str(w.message)]
    assert len(ids) == 3
    again = [m for m, p, _, _ in requests if p.startswith("/feedback")]
    assert len(again) == 6


def test_langsmith_receives_each_stage_s_own_fields_within_4_kb(langsmith_server: Any) -> None:
    """What the real client sends for each stage run (every stage running): that stage's
    inputs and results as JSON of at most 4 KB each, no object repr, no spaCy token array; the
    root run carries the outcome under the feedback keys."""
    from langchain_core.tracers import LangChainTracer
    from langsmith import Client

    url, requests = langsmith_server
    client = Client(api_url=url, api_key="test-key")
    tracer = LangChainTracer(client=client, project_name="guardrail-tests")
    data = {**DATA, "response": "The meeting is at 3pm on Monday."}
    report = Guardrail().invoke(data, {"callbacks": [tracer]})
    tracer.wait_for_futures()
    client.flush()
    by_name = {run.get("name"): run for run in received_runs(requests).values()}
    for name in EXPECTED_CHILDREN:
        for part in ("inputs", "outputs"):
            text = json.dumps(by_name[name][part], ensure_ascii=False)
            assert len(text.encode()) <= 4096, f"{name} {part}: {len(text.encode())} bytes"
            assert "object at 0x" not in text and '"tokens"' not in text, f"{name} {part}"
    assert by_name["guardrail.claims"]["outputs"]["claims"][0]["text"] == data["response"]
    flags = by_name["guardrail.hallucination"]["outputs"]["flags"]
    assert [f["content"] for f in flags] == [f.content for f in report.hallucination_flags]
    assert by_name["guardrail.recommendation"]["outputs"]["action"] == report.action.value
    outputs = by_name["guardrail"]["outputs"]
    assert outputs["guardrail.action"] == report.action.value
    assert outputs["guardrail.verdict"] == report.verdict.label.value
    assert outputs["guardrail.confidence"] == pytest.approx(report.confidence, abs=1e-6)
