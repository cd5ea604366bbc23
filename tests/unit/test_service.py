"""The HTTP API in-process: limits (422 naming the field, 413), auth, store, metrics, thresholds.

The guardrail is a real ``Guardrail`` with its model stages disabled (so no model loads and a
check takes milliseconds); the store is a real SQLite file. The real-model path through a real
uvicorn server is in ``tests/integration/test_service_server.py``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

from fastapi.testclient import TestClient

from guardrail.config import GuardrailConfig
from guardrail.errors import ConfigError
from guardrail.service import create_app, load_service_config
from guardrail.service.auth import token_matches
from guardrail.service.settings import ServiceSettings
from guardrail.store import ReportStore

NO_MODELS: dict[str, Any] = {
    "disabled_stages": ["coherence", "claims", "fact_validation", "hallucination", "correction"],
    "max_response_chars": 200,
}
CHECK = {
    "query": "When is the meeting?",
    "response": "The meeting is at 2pm on Monday.",
    "passages": [{"text": "The meeting with John is at 2pm on Monday.", "score": 0.82}],
    "session_id": "demo",
}


def wait_ready(client: TestClient) -> None:
    for _ in range(200):
        if client.get("/readyz").status_code == 200:
            return
        time.sleep(0.05)
    raise AssertionError(client.get("/readyz").json())


def make_client(tmp_path: Path, **settings: Any) -> TestClient:
    app = create_app(
        GuardrailConfig.load(NO_MODELS),
        store=ReportStore(tmp_path / "results.sqlite"),
        settings=ServiceSettings(**{"max_passages": 3, "max_batch": 2, **settings}),
    )
    return TestClient(app)


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path, max_body_bytes=20_000) as c:
        wait_ready(c)
        yield c


def errors(response: Any) -> list[tuple[tuple[Any, ...], str]]:
    assert response.status_code == 422, response.text
    return [(tuple(e["loc"]), e["msg"]) for e in response.json()["detail"]]


def test_check_returns_the_report_and_stores_it(client: TestClient) -> None:
    r = client.post("/v1/check", json=CHECK)
    assert r.status_code == 200
    report = r.json()
    assert report["original"] == CHECK["response"]
    assert report["recommendation"]["action"] == "human_review"  # nothing could be checked
    assert (report["session_id"], report["turn_id"]) == ("demo", 0)
    assert r.headers["location"] == "/v1/reports/demo/0"
    stored = client.get("/v1/reports/demo/0").json()
    assert stored["report"] == report and stored["input"]["passages"][0]["score"] == 0.82
    second = client.post("/v1/check", json=CHECK).json()
    assert second["turn_id"] == 1
    page = client.get("/v1/reports", params={"session_id": "demo", "limit": 1}).json()
    assert (page["total"], page["next_offset"], page["items"][0]["turn_id"]) == (2, 1, 1)
    assert client.get("/v1/reports", params={"action": "accept"}).json()["total"] == 0
    assert client.get("/v1/reports", params={"verdict": "UNVERIFIED"}).json()["total"] == 2
    assert client.get("/v1/reports", params={"since": "2999-01-01T00:00:00Z"}).json()["total"] == 0
    missing = client.get("/v1/reports/demo/7")
    assert missing.status_code == 404 and "demo/7" in missing.text


def test_batch_checks_each_item_in_order(client: TestClient) -> None:
    items = [{**CHECK, "response": "First answer."}, {**CHECK, "response": "Second answer."}]
    r = client.post("/v1/check/batch", json={"items": items})
    assert r.status_code == 200
    assert [rep["original"] for rep in r.json()["reports"]] == ["First answer.", "Second answer."]
    bad = client.post("/v1/check/batch", json={"items": [CHECK, {**CHECK, "response": " "}]})
    assert errors(bad)[0][0] == ("body", "items", 1, "response")
    too_many = client.post("/v1/check/batch", json={"items": [CHECK] * 3})
    assert errors(too_many) == [(("body", "items"), "3 items, more than max_batch=2")]
    assert client.get("/v1/reports").json()["total"] == 2  # the rejected batches stored nothing


@pytest.mark.parametrize(
    ("body", "loc", "words"),
    [
        ({"response": 5}, ("body", "response"), "must be a string"),
        ({"response": "   "}, ("body", "response"), "empty"),
        ({"response": "x" * 201}, ("body", "response"), "max_response_chars=200"),
        (
            {"response": "ok", "passages": ["a", "b", "c", "d"]},
            ("body", "passages"),
            "max_passages",
        ),
        ({"response": "ok", "passages": [{"txt": "a"}]}, ("body", "passages"), ""),
        ({"response": "ok", "session_id": "a/b"}, ("body", "session_id"), "letters, digits"),
        ({"response": "ok", "turn_id": -1}, ("body", "turn_id"), ">= 0"),
        (
            {"response": "ok", "knowledge_base": "/etc/passwd"},
            ("body", "knowledge_base"),
            "not accepted over HTTP",
        ),
        (
            {"response": "ok", "knowledge_base": {"entities": 5}},
            ("body", "knowledge_base"),
            "entities",
        ),
        ({"response": "ok", "respons": "typo"}, ("body", "respons"), "did you mean 'response'"),
        ({"query": "no response"}, ("body", "response"), "required"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(
    client: TestClient, body: dict[str, Any], loc: tuple[str, ...], words: str
) -> None:
    found = errors(client.post("/v1/check", json=body))
    assert any(where[: len(loc)] == loc and words.lower() in msg.lower() for where, msg in found), (
        found
    )


def test_unparseable_and_oversized_bodies(client: TestClient) -> None:
    r = client.post("/v1/check", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    big = client.post("/v1/check", json={"response": "x", "query": "q" * 30_000})
    assert big.status_code == 413 and "max_body_bytes=20000" in big.text
    assert client.get("/v1/reports").json()["total"] == 0


def test_bearer_token_is_required_when_configured(tmp_path: Path) -> None:
    assert token_matches("s3cret", "s3cret") and not token_matches("s3cre", "s3cret")
    assert not token_matches(None, "s3cret")
    with make_client(tmp_path, api_token="s3cret") as c:
        wait_ready(c)
        assert c.get("/healthz").status_code == 200  # probes stay open
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
            r = c.post("/v1/check", json=CHECK, headers=headers)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
            assert c.get("/metrics", headers=headers).status_code == 401
        ok = {"Authorization": "Bearer s3cret"}
        assert c.post("/v1/check", json=CHECK, headers=ok).status_code == 200
        assert c.get("/v1/reports/demo/0", headers=ok).status_code == 200
        assert c.get("/", headers={}).status_code == 200  # the page itself holds no data


def test_metrics_count_requests_actions_and_verdicts(client: TestClient) -> None:
    client.post("/v1/check", json=CHECK)
    client.post("/v1/check", json={"response": ""})
    text = client.get("/metrics").text
    assert 'guardrail_checks_total{action="human_review"} 1' in text
    assert 'guardrail_verdicts_total{verdict="UNVERIFIED"} 1' in text
    assert 'guardrail_http_requests_total{method="POST",route="/v1/check",status="200"} 1' in text
    assert 'guardrail_http_requests_total{method="POST",route="/v1/check",status="422"} 1' in text
    assert 'guardrail_store_writes_total{outcome="ok"} 1' in text
    assert "guardrail_check_duration_seconds_count 1" in text
    assert "guardrail_ready 1" in text
    buckets = re.findall(r'guardrail_check_duration_seconds_bucket\{le="([^"]+)"\} (\d+)', text)
    counts = [int(c) for _, c in buckets]
    assert counts == sorted(counts) and buckets[-1] == ("+Inf", "1")
    for line in text.splitlines():  # every sample line is "name{labels} value"
        assert line.startswith("#") or re.fullmatch(
            r"[a-z_]+(\{[^}]*\})? [0-9.e+-]+|.*\+Inf.*", line
        )


def test_thresholds_come_from_the_config(client: TestClient) -> None:
    body = client.get("/v1/thresholds", params={"rs": 0.3}).json()
    adaptive = GuardrailConfig.load(NO_MODELS).hallucination.threshold
    assert body["adaptive"]["t_low"] == adaptive.t_low
    assert body["curve"][0] == {"rs": 0.0, "t": round(adaptive.threshold(0.0), 5)}
    assert body["curve"][100]["t"] == round(adaptive.threshold(1.0), 5)
    assert body["at"]["t"] == pytest.approx(adaptive.threshold(0.3))
    assert body["bands"]["accept"] == 0.9
    assert client.get("/v1/thresholds", params={"rs": 3}).status_code == 422


def test_openapi_schema_names_the_models(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    names = set(schema["components"]["schemas"])
    assert {"CheckRequest", "GuardReport", "BatchRequest", "Thresholds"} <= names
    assert "response" in schema["components"]["schemas"]["CheckRequest"]["required"]


def test_service_section_of_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "guardrail.yaml"
    path.write_text("max_response_chars: 300\nservice:\n  max_passages: 7\n")
    monkeypatch.setenv("GUARDRAIL_API_TOKEN", "tok")
    config, settings = load_service_config(path)
    assert config.max_response_chars == 300 and settings.max_passages == 7
    assert settings.api_token == "tok" and "tok" not in repr(settings)
    path.write_text("service:\n  api_token: leaked\n")
    with pytest.raises(ConfigError, match="GUARDRAIL_API_TOKEN"):
        load_service_config(path)
    path.write_text("service:\n  max_pasages: 7\n")
    with pytest.raises(ConfigError, match="max_pasages"):
        load_service_config(path)
