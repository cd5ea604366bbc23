"""``guardrail serve`` serves the built documentation site under ``/guide/``.

A folder with an ``index.html`` stands in for ``mkdocs build``'s ``site/`` (the real build is
``tests/integration/test_docs_site.py``); no folder, no ``/guide/`` route.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "fastapi", reason="needs the service extra: pip install 'answer-guardrail[service]'"
)

from fastapi.testclient import TestClient

from guardrail.config import GuardrailConfig
from guardrail.service.app import SITE_ENV, create_app, guide_site
from guardrail.service.settings import ServiceSettings


class Idle:
    """Stands in for the checker: these tests never check an answer."""

    config = GuardrailConfig.load(None)


def client(guide_dir: Path | None) -> TestClient:
    app = create_app(guard=Idle(), settings=ServiceSettings(warmup=False), guide_dir=guide_dir)
    return TestClient(app)


def built_site(root: Path) -> Path:
    (root / "concepts" / "recommendations").mkdir(parents=True)
    (root / "index.html").write_text("<h1>guardrail docs</h1>", encoding="utf-8")
    (root / "concepts" / "recommendations" / "index.html").write_text(
        "<h1>The five recommendations</h1>", encoding="utf-8"
    )
    return root


def test_built_site_is_served_under_guide(tmp_path: Path) -> None:
    with client(built_site(tmp_path)) as http:
        home = http.get("/guide/")
        assert home.status_code == 200 and "guardrail docs" in home.text
        page = http.get("/guide/concepts/recommendations/")
        assert page.status_code == 200 and "five recommendations" in page.text
        assert http.get("/guide", follow_redirects=True).status_code == 200
        assert http.get("/healthz").status_code == 200  # the API is unchanged


def test_no_site_no_guide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SITE_ENV, str(tmp_path / "not-built"))
    assert guide_site() is None
    with client(tmp_path / "not-built") as http:
        assert http.get("/guide/").status_code == 404


def test_site_folder_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SITE_ENV, str(built_site(tmp_path)))
    assert guide_site() == tmp_path
