"""The Verify and Explore page in headless Debian Chromium, against a real server and models.

Drives ``/usr/bin/chromium`` through ``/usr/bin/chromedriver`` (Debian's ``chromium`` and
``chromium-driver``, installed by setup.sh); nothing is downloaded. Submits seed 001's
AlphaCodium example and checks the verdict stamp, the highlighted spans with their reasons, the
recommendation band and the threshold panel; saves a screenshot (to ``$GUARDRAIL_SCREENSHOT``
when set — that is how ``docs/verify_page.png`` is made — else into the test's tmp dir).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_service_server import ROOT, running

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
REQUEST = json.loads((ROOT / "examples/data/check_request.json").read_text())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from guardrail.service import create_app
    from guardrail.store import ReportStore

    store = ReportStore(tmp_path_factory.mktemp("page") / "results.sqlite")
    with running(create_app(None, store=store)) as base:
        yield base


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip(
            "Debian's chromium and chromium-driver are not installed (setup.sh installs them)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager fetch anything
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,1500",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: Any, condition: Any, timeout: float = 300) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(condition)


def by_id(driver: Any, element_id: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id)


def test_verify_page_shows_why_the_answer_fails(server: str, browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/#/verify")
    wait(browser, lambda d: by_id(d, "check-button").is_enabled(), timeout=30)
    by_id(browser, "query").send_keys(REQUEST["query"])
    by_id(browser, "response").send_keys(REQUEST["response"])
    by_id(browser, "passages").send_keys(REQUEST["passages"][0]["text"])
    by_id(browser, "retrieval-score").send_keys("0.71")
    session = by_id(browser, "session-id")
    session.clear()
    session.send_keys("page-test")
    by_id(browser, "check-button").click()
    wait(browser, lambda d: by_id(d, "result").get_attribute("data-state") in ("done", "error"))
    assert by_id(browser, "error").text == ""
    assert by_id(browser, "result").get_attribute("data-state") == "done"

    stamp = by_id(browser, "verdict-stamp")
    assert stamp.text == "HALLUCINATION"
    assert "stamp-HALLUCINATION" in stamp.get_attribute("class")
    flags = browser.find_elements(By.CSS_SELECTOR, "#answer mark.flag")
    assert flags, "no highlighted span"
    google = [m for m in flags if m.text == "Google"]
    assert google and "nonexistent entity" in google[0].get_attribute("title")
    answer_text = by_id(browser, "answer").text
    assert answer_text == REQUEST["response"]  # highlighting keeps the text intact

    active = browser.find_elements(By.CSS_SELECTOR, "#bands .band.active")
    assert len(active) == 1 and active[0].get_attribute("data-action") in (
        "regenerate",
        "human_review",
    )
    assert by_id(browser, "gauge-text").text.endswith("%")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#timings tr")) >= 6
    assert by_id(browser, "threshold-curve").get_attribute("points").count(",") == 101

    # The threshold panel redraws for another retrieval score.
    before = by_id(browser, "rs-value").text
    browser.execute_script(
        "const s = document.getElementById('rs-slider'); s.value = '0.05';"
        "s.dispatchEvent(new Event('input'));"
    )
    after = by_id(browser, "rs-value").text
    assert after.startswith("rs 0.05") and after != before
    browser.execute_script(
        "const s = document.getElementById('rs-slider'); s.value = '0.71';"
        "s.dispatchEvent(new Event('input'));"
    )

    target = Path(os.environ.get("GUARDRAIL_SCREENSHOT") or tmp_path / "verify_page.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(target))
    assert target.stat().st_size > 10_000
    print(f"screenshot: {target}")


def test_explore_lists_and_opens_stored_reports(server: str, browser: Any) -> None:
    import httpx
    from selenium.webdriver.common.by import By

    httpx.post(server + "/v1/check", json={**REQUEST, "session_id": "explore"}, timeout=300)
    browser.get(server + "/#/explore")
    by_id(browser, "filter-session").send_keys("explore")
    browser.find_element(By.CSS_SELECTOR, "#filter-form button").click()
    wait(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#reports tbody tr[data-key='explore/0']"),
        30,
    )
    rows = browser.find_elements(By.CSS_SELECTOR, "#reports tbody tr")
    assert [r.get_attribute("data-key") for r in rows] == ["explore/0"]
    by_verdict = browser.find_element(By.ID, "filter-verdict")
    by_verdict.send_keys("VERIFIED")
    browser.find_element(By.CSS_SELECTOR, "#filter-form button").click()
    wait(browser, lambda d: "nothing stored" in by_id(d, "page-info").text, 30)
    by_verdict.send_keys("HALLUCINATION")
    browser.find_element(By.CSS_SELECTOR, "#filter-form button").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#reports tbody tr"), 30)
    browser.find_elements(By.CSS_SELECTOR, "#reports tbody tr")[0].click()
    wait(browser, lambda d: by_id(d, "result").get_attribute("data-state") == "done", 60)
    assert "#/report/explore/0" in browser.current_url
    assert by_id(browser, "verdict-stamp").text == "HALLUCINATION"
    assert by_id(browser, "response").get_attribute("value") == REQUEST["response"]
