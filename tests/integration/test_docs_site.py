"""The documentation site builds strictly and renders offline in headless Chromium.

``mkdocs build --strict`` (the same command ``.ci/run`` runs) writes the site into a tmp dir;
``python -m http.server`` serves it on a loopback port; Debian's ``/usr/bin/chromium`` driven
through ``/usr/bin/chromedriver`` (as in ``test_page_chromium.py``) opens the home page and the
"recommendations" concept page with the network off (no host name resolves), and checks that
the navigation (Material's tabs and sidebar) and the content are rendered, and that every
resource the pages loaded came from the local server (no CDN font or script). Screenshots go to
``$GUARDRAIL_SITE_SCREENSHOTS`` when set — that is how ``docs/images/site-home.png`` and
``docs/images/site-recommendations.png`` are made
(``GUARDRAIL_SITE_SCREENSHOTS=docs/images``) — else into the test's tmp dir.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import headless_chromium

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = ROOT / ".venv" / "bin" / "mkdocs"
TABS = ["Home", "Get started", "Concepts", "How-to guides", "Reference", "Benchmarks"]
ACTIONS = ["accept", "accept_with_flags", "correct_and_deliver", "regenerate", "human_review"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    mkdocs = str(MKDOCS) if MKDOCS.exists() else shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]' (setup.sh does)")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    print(f"mkdocs build --strict: {seconds:.1f} s")
    assert (out / "index.html").is_file()
    assert (out / "concepts" / "recommendations" / "index.html").is_file()
    assert (out / "reference" / "openapi.json").is_file()
    assert not (out / "_hooks").exists()
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(site)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("http.server did not start")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile"), "1280,1000") as driver:
        yield driver


def screenshot_path(tmp_path: Path, name: str) -> Path:
    folder = os.environ.get("GUARDRAIL_SITE_SCREENSHOTS")
    target = (
        (ROOT / folder if not Path(folder).is_absolute() else Path(folder)) if folder else tmp_path
    )
    target.mkdir(parents=True, exist_ok=True)
    return target / name


def open_page(driver: Any, url: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )


def only_local_resources(driver: Any, base: str) -> None:
    """Every resource the page loaded came from the local server (fonts, scripts, styles)."""
    urls = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    foreign = [u for u in urls if not u.startswith(base) and not u.startswith("data:")]
    assert not foreign, f"resources from outside the site: {foreign}"


def rendered_navigation(driver: Any) -> None:
    from selenium.webdriver.common.by import By

    tabs = [t.text.strip() for t in driver.find_elements(By.CSS_SELECTOR, ".md-tabs__link")]
    assert tabs == TABS, tabs
    header = driver.find_element(By.CSS_SELECTOR, "header.md-header")
    assert header.is_displayed() and header.size["height"] > 30
    color = driver.execute_script("return getComputedStyle(arguments[0]).backgroundColor", header)
    assert color not in ("rgba(0, 0, 0, 0)", "transparent"), "Material's CSS did not load"
    sidebar = driver.find_element(By.CSS_SELECTOR, ".md-sidebar--primary")
    assert sidebar.is_displayed()


def test_home_page_renders_offline(served: str, browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, served + "/")
    rendered_navigation(browser)
    only_local_resources(browser, served)
    title = browser.find_element(By.CSS_SELECTOR, ".md-content h1").text
    assert title.startswith("guardrail")
    content = browser.find_element(By.CSS_SELECTOR, ".md-content").text
    assert "./setup.sh" in content and "pytest -q tests" in content
    assert "Where to go next" in content
    assert browser.find_elements(By.CSS_SELECTOR, ".md-content div.runnable")
    assert browser.find_elements(By.CSS_SELECTOR, ".md-search__input")
    path = screenshot_path(tmp_path, "site-home.png")
    assert browser.save_screenshot(str(path)) and path.stat().st_size > 20_000


def test_recommendations_page_renders_offline(served: str, browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, served + "/concepts/recommendations/")
    rendered_navigation(browser)
    only_local_resources(browser, served)
    assert browser.find_element(By.CSS_SELECTOR, ".md-content h1").text.startswith(
        "The five recommendations"
    )
    active = browser.find_elements(By.CSS_SELECTOR, ".md-sidebar--primary .md-nav__link--active")
    assert any("recommendations" in a.text.lower() for a in active), [a.text for a in active]
    first_table = browser.find_element(By.CSS_SELECTOR, ".md-content table")
    rows = [r.text for r in first_table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert [r.split()[0] for r in rows] == ACTIONS, rows
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".md-content h2")]
    assert any("claim by claim" in h for h in headings), headings
    toc = browser.find_element(By.CSS_SELECTOR, ".md-sidebar--secondary")
    assert "claim by claim" in toc.text
    path = screenshot_path(tmp_path, "site-recommendations.png")
    assert browser.save_screenshot(str(path)) and path.stat().st_size > 20_000


def test_reference_pages_are_generated(site: Path) -> None:
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "usage: guardrail check" in cli and "usage: guardrail audit" in cli
    http = (site / "reference" / "http" / "index.html").read_text(encoding="utf-8")
    assert "/v1/check/batch" in http and "GuardReport" in http
    api = (site / "reference" / "guardrail" / "index.html").read_text(encoding="utf-8")
    assert 'id="guardrail.Guardrail"' in api


def test_serve_has_the_built_site_under_guide(site: Path) -> None:
    from fastapi.testclient import TestClient

    from guardrail.config import GuardrailConfig
    from guardrail.service.app import create_app
    from guardrail.service.settings import ServiceSettings

    class Idle:
        config = GuardrailConfig.load(None)

    app = create_app(guard=Idle(), settings=ServiceSettings(warmup=False), guide_dir=site)
    with TestClient(app) as http:
        page = http.get("/guide/concepts/recommendations/")
        assert page.status_code == 200 and "The five recommendations" in page.text
        assert http.get("/guide/assets/extra.css").status_code == 200
