"""The service in-process: a body not sent as JSON is a one-line 415, and ``/docs`` / ``/redoc``
load their assets from the server itself (no CDN). No model loads: the model stages are off."""

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
from guardrail.service import create_app
from guardrail.service.settings import ServiceSettings
from guardrail.store import ReportStore

NO_MODELS: dict[str, Any] = {
    "disabled_stages": ["coherence", "claims", "fact_validation", "hallucination", "correction"],
}
CHECK = '{"query": "When is the meeting?", "response": "The meeting is at 2pm on Monday."}'
SEND_JSON = "send JSON with content-type application/json"


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(
        GuardrailConfig.load(NO_MODELS),
        store=ReportStore(tmp_path / "results.sqlite"),
        settings=ServiceSettings(),
    )
    with TestClient(app) as c:
        for _ in range(200):
            if c.get("/readyz").status_code == 200:
                break
            time.sleep(0.05)
        yield c


def one_line_415(response: Any) -> str:
    assert response.status_code == 415, response.text
    [item] = response.json()["detail"]
    assert item["loc"] == ["header", "content-type"]
    assert SEND_JSON in item["msg"] and "\n" not in item["msg"]
    assert "dictionary" not in item["msg"]  # not pydantic's message about the parsed body
    return str(item["msg"])


@pytest.mark.parametrize("path", ["/v1/check", "/v1/check/batch"])
def test_form_encoded_body_is_a_one_line_415(client: TestClient, path: str) -> None:
    # What `curl -d @file` sends: the JSON text, labelled as a form.
    body = CHECK if path == "/v1/check" else f'{{"items": [{CHECK}]}}'
    r = client.post(
        path, content=body, headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert "got application/x-www-form-urlencoded" in one_line_415(r)


def test_missing_or_other_content_type_is_a_415(client: TestClient) -> None:
    for headers in ({"content-type": "text/plain"}, {"content-type": ""}, {}):
        r = client.post("/v1/check", content=CHECK.encode(), headers=headers)
        one_line_415(r)


def test_no_body_at_all_is_still_the_422_naming_the_body(client: TestClient) -> None:
    r = client.post("/v1/check")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body"], r.text


def test_json_content_types_still_work(client: TestClient) -> None:
    for ct in ("application/json", "application/json; charset=utf-8", "application/ld+json"):
        r = client.post("/v1/check", content=CHECK.encode(), headers={"content-type": ct})
        assert r.status_code == 200, (ct, r.text)
    # Broken JSON with the right content-type is still the 422 naming the body.
    r = client.post("/v1/check", content=b"{not", headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_openapi_documents_the_415(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert "415" in paths["/v1/check"]["post"]["responses"]
    assert "415" in paths["/v1/check/batch"]["post"]["responses"]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_assets_from_this_server(client: TestClient, page: str) -> None:
    html = client.get(page)
    assert html.status_code == 200
    urls = re.findall(r'(?:src|href)="([^"]+)"', html.text)
    urls += re.findall(r"url: '([^']+)'", html.text)
    assert urls, html.text
    for url in urls:
        assert url.startswith("/"), f"{page} loads {url} from another host"
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert len(asset.content) > 1000, url
    assert "cdn" not in html.text.lower() and "fonts.googleapis" not in html.text
