"""The Verify and Explore page in headless Debian Chromium, against a real server and models.

Drives ``/usr/bin/chromium`` through ``/usr/bin/chromedriver`` (Debian's ``chromium`` and
``chromium-driver``, installed by setup.sh); nothing is downloaded. Submits the
AlphaCodium example and checks the verdict stamp, the highlighted spans with their reasons, the
recommendation band and the threshold panel. The delivered view shows what the report says:
on the AlphaCodium answer with one invented sentence, that sentence struck
through (``<del>``) and the supported ones plain, each claim's outcome listed, a repair as
old → new, hostile answer text never parsed as HTML; that check saves a screenshot (to
``$GUARDRAIL_SCREENSHOT`` when set — that is how ``docs/verify_page.png`` is made — else into
the test's tmp dir). Also:
the note when the decision overrides the confidence band, T(rs) drawn at the retrieval score the
check used (none: the strict end, not an invented 0.50), an error clearing the old result, and
``/docs`` / ``/redoc`` rendering the API operations with the network off
(``$GUARDRAIL_DOCS_SCREENSHOT``: how ``docs/images/api-docs.png`` is made).

Chromium runs with the network off: every host name resolves to nothing
(``--host-resolver-rules``), so only the server on 127.0.0.1 can be reached.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import headless_chromium
from tests.integration.test_service_server import ROOT, running

pytestmark = pytest.mark.integration

REQUEST = json.loads((ROOT / "examples/data/check_request.json").read_text())
KB = json.loads((ROOT / "examples/data/john_smith_kb.json").read_text())
#: Repaired from the knowledge base: correct_and_deliver although the confidence is ~0.
KB_REPAIRED = {
    "query": "Tell me about John",
    "response": "John Smith's email is john.s@company.org.",
    "knowledge_base": KB,
}
#: The AlphaCodium answer: two supported sentences and an invented one (removed).
ALPHA = {
    "query": "Who created AlphaCodium?",
    "response": "AlphaCodium was created by CodiumAI. It is a code generation method. "
    "It was acquired by Google in 2024.",
    "passage": "AlphaCodium is a code generation method developed by CodiumAI. It uses a "
    "test-based, multi-stage flow to improve code generation by large language models.",
}
SUPPORTED = ["AlphaCodium was created by CodiumAI.", "It is a code generation method."]
INVENTED = "It was acquired by Google in 2024."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from guardrail.service import create_app
    from guardrail.store import ReportStore

    store = ReportStore(tmp_path_factory.mktemp("page") / "results.sqlite")
    with running(create_app(None, store=store)) as base:
        yield base


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile"), "1280,1500") as driver:
        yield driver


def wait(driver: Any, condition: Any, timeout: float = 300) -> Any:
    """Poll ``condition`` until truthy; an element re-rendered meanwhile is polled again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(
        driver, timeout, poll_frequency=0.2, ignored_exceptions=[StaleElementReferenceException]
    ).until(condition)


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
    # The band of the confidence is the recommended one here: no override note.
    assert not by_id(browser, "band-override").is_displayed()
    assert by_id(browser, "rs-slider").get_attribute("value") == "0.71"  # the score the check used
    report = json.loads(browser.execute_script("return JSON.stringify(state.report)"))
    labels = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#threshold-plot text")]
    assert f"used {report['verdict']['threshold']:.2f}" in labels  # this build's claim threshold

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

    # Nothing is delivered: the delivered view says so, and the claims are listed.
    action = report["recommendation"]["action"]
    assert by_id(browser, "delivered-text").text == f"nothing delivered ({action})"
    assert "withheld" in by_id(browser, "delivered").get_attribute("class")
    assert by_id(browser, "delivered-status").text.startswith("(nothing delivered")
    assert outcomes(browser) == [c["outcome"] for c in report["claims"]]
    assert browser.save_screenshot(str(tmp_path / "regenerate.png"))


def outcomes(browser: Any) -> list[str]:
    """The outcome of each row of the page's claim list."""
    from selenium.webdriver.common.by import By

    rows = browser.find_elements(By.CSS_SELECTOR, "#claims tbody tr")
    return [r.get_attribute("data-outcome") for r in rows]


def kept_text(browser: Any) -> str:
    """The delivered view's text without what it strikes through (``del``)."""
    return str(
        browser.execute_script(
            "const n = document.getElementById('delivered').cloneNode(true);"
            "n.querySelectorAll('del').forEach((d) => d.remove()); return n.textContent;"
        )
    )


def test_the_page_strikes_through_the_removed_sentence_and_lists_each_claim(
    server: str, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/#/verify")
    wait(browser, lambda d: by_id(d, "check-button").is_enabled(), timeout=30)
    submit(browser, ALPHA["response"], ALPHA["passage"], query=ALPHA["query"])
    assert by_id(browser, "error").text == ""
    report = json.loads(browser.execute_script("return JSON.stringify(state.report)"))
    assert report["recommendation"]["action"] == "correct_and_deliver", report["decision"]
    delivered = by_id(browser, "delivered")
    struck = delivered.find_elements(By.CSS_SELECTOR, "del")
    assert [d.text.strip() for d in struck] == [INVENTED]
    assert "removed" in struck[0].get_attribute("class")
    removal = next(c for c in report["corrections"] if c["type"] == "removal")
    assert struck[0].get_attribute("title").startswith(removal["message"])
    # The supported sentences are shown, plain: not struck, not highlighted.
    for sentence in SUPPORTED:
        assert sentence in delivered.text
        for node in delivered.find_elements(By.CSS_SELECTOR, "del, mark, ins"):
            assert sentence not in node.text
    assert kept_text(browser) == report["annotated"] == " ".join(SUPPORTED)
    assert by_id(browser, "delivered-text").text == " ".join(SUPPORTED)
    assert "correct and deliver" in by_id(browser, "delivered-status").text
    assert "withheld" not in delivered.get_attribute("class")
    # The claim list: each claim with its outcome and p(supported); the legend.
    assert outcomes(browser) == ["supported", "supported", "removed"]
    cells = [
        [td.text for td in row.find_elements(By.TAG_NAME, "td")]
        for row in browser.find_elements(By.CSS_SELECTOR, "#claims tbody tr")
    ]
    assert [c[2] for c in cells] == [*SUPPORTED, INVENTED]
    assert [c[1] for c in cells] == [f"{c['p_supported']:.3f}" for c in report["claims"]]
    assert cells[2][3] == removal["message"]
    legend = by_id(browser, "legend")
    assert legend.find_elements(By.CSS_SELECTOR, "del.removed")
    assert legend.find_elements(By.CSS_SELECTOR, "mark.outcome-uncertain")
    assert legend.find_elements(By.CSS_SELECTOR, ".repair ins.new")

    target = Path(os.environ.get("GUARDRAIL_SCREENSHOT") or tmp_path / "verify_page.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(target))
    assert target.stat().st_size > 10_000
    print(f"screenshot: {target}")


def test_uncertain_claims_are_highlighted_with_their_note(server: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/#/verify")
    wait(browser, lambda d: by_id(d, "check-button").is_enabled(), timeout=30)
    submit(
        browser,
        "The meeting is at 2pm on Monday. The whole team will attend it.",
        "The meeting with John is at 2pm on Monday in room 4B. John invited the team.",
        query="When is the meeting?",
    )
    report = json.loads(browser.execute_script("return JSON.stringify(state.report)"))
    flagged = [c for c in report["claims"] if c["outcome"] in ("uncertain", "unverified")]
    if not flagged:
        pytest.skip(f"this build's verifier supports every claim here: {report['claims']}")
    marks = by_id(browser, "delivered").find_elements(By.CSS_SELECTOR, "mark.outcome")
    marked = "".join(m.text for m in marks)
    for c in flagged:
        assert c["text"].rstrip(".") in marked
    notes = [n.text for n in by_id(browser, "delivered").find_elements(By.CSS_SELECTOR, ".note")]
    assert "[uncertain: not confirmed by the sources]" in notes
    assert "The meeting is at 2pm on Monday." not in marked  # the supported claim stays plain
    if report["recommendation"]["action"] in ("accept_with_flags", "correct_and_deliver"):
        assert kept_text(browser) == report["annotated"]
    assert outcomes(browser) == [c["outcome"] for c in report["claims"]]


def test_hostile_answer_text_is_shown_as_text(server: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/#/verify")
    wait(browser, lambda d: by_id(d, "check-button").is_enabled(), timeout=30)
    hostile = (
        "AlphaCodium was created by <b>CodiumAI</b>. It was acquired by <img src=x "
        'onerror="window.pwned=1">Google in 2024.'
    )
    submit(browser, hostile, ALPHA["passage"], query=ALPHA["query"])
    assert by_id(browser, "result").get_attribute("data-state") == "done"
    result = by_id(browser, "result")
    assert not result.find_elements(By.CSS_SELECTOR, "img, b, script")
    assert browser.execute_script("return window.pwned") is None
    assert "<b>CodiumAI</b>" in by_id(browser, "answer").text
    assert "<b>CodiumAI</b>" in by_id(browser, "claims").text


HOSTILE = [
    '<img src=x data-pwn onerror="window.pwned=1">',
    "</script><script data-pwn>window.pwned=1</script>",
    '"><svg data-pwn onload="window.pwned=1">',
]


def test_hostile_passage_source_and_session_are_text_on_explore_and_report(
    server: str, browser: Any
) -> None:
    """HTML/JS in a stored passage, source title or answer, opened from Explore: shown as text,
    nothing injected, nothing run; a hostile session id never reaches the store or a URL."""
    import httpx
    from selenium.webdriver.common.by import By

    turns = []
    for i, payload in enumerate(HOSTILE):
        body = {
            "query": ALPHA["query"],
            "response": f"AlphaCodium was created by CodiumAI. {payload}",
            "passages": [
                {"text": f"{ALPHA['passage']} {payload}", "score": 0.7, "source": payload}
            ],
            "session_id": "hostile",
            "turn_id": i,
        }
        r = httpx.post(server + "/v1/check", json=body, timeout=300)
        assert r.status_code == 200, r.text
        turns.append(r.headers["location"].removeprefix("/v1/reports/"))
        bad = httpx.post(server + "/v1/check", json={**body, "session_id": payload}, timeout=60)
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "session_id"]
    browser.get(server + "/#/explore")
    by_id(browser, "filter-session").send_keys("hostile")
    browser.find_element(By.CSS_SELECTOR, "#filter-form button").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#reports tbody tr")) == 3, 30)
    assert "data-pwn" in by_id(browser, "reports").text  # the answers, as text
    for turn in turns:
        browser.get("about:blank")
        browser.get(server + "/#/report/" + turn)
        wait(browser, lambda d: by_id(d, "result").get_attribute("data-state") == "done", 60)
        shown = by_id(browser, "answer").text + (
            by_id(browser, "passages").get_attribute("value") or ""
        )
        assert "data-pwn" in shown
        assert not browser.find_elements(By.CSS_SELECTOR, "[data-pwn]")
        assert browser.execute_script("return window.pwned") is None


def test_explore_lists_and_opens_stored_reports(server: str, browser: Any) -> None:
    import httpx
    from selenium.webdriver.common.by import By

    httpx.post(server + "/v1/check", json={**REQUEST, "session_id": "explore"}, timeout=300)
    browser.get(server + "/#/explore")
    by_id(browser, "filter-session").send_keys("explore")
    browser.find_element(By.CSS_SELECTOR, "#filter-form button").click()
    # The hash change and the filter each (re)load the table: wait for the filtered rows.
    wait(
        browser,
        lambda d: (
            [
                r.get_attribute("data-key")
                for r in d.find_elements(By.CSS_SELECTOR, "#reports tbody tr")
            ]
            == ["explore/0"]
        ),
        30,
    )
    by_verdict = browser.find_element(By.ID, "filter-verdict")
    by_verdict.send_keys("VERIFIED")
    browser.find_element(By.CSS_SELECTOR, "#filter-form button").click()
    wait(browser, lambda d: "nothing stored" in by_id(d, "page-info").text, 30)
    by_verdict.send_keys("HALLUCINATION")
    browser.find_element(By.CSS_SELECTOR, "#filter-form button").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#reports tbody tr"), 30)
    browser.find_elements(By.CSS_SELECTOR, "#reports tbody tr")[0].click()
    # The result view may still show an earlier check ("done" already): wait for this report.
    wait(browser, lambda d: "#/report/explore/0" in d.current_url, 60)
    wait(
        browser,
        lambda d: (
            by_id(d, "result").get_attribute("data-state") == "done"
            and by_id(d, "response").get_attribute("value") == REQUEST["response"]
        ),
        60,
    )
    assert by_id(browser, "verdict-stamp").text == "HALLUCINATION"


def submit(
    browser: Any, response: str, passages: str = "", score: str = "", query: str = ""
) -> None:
    """Fill the Verify form, submit it and wait until this check is rendered (done or error)."""
    for element_id, value in (("query", query), ("response", response), ("passages", passages),
                              ("retrieval-score", score)):  # fmt: skip
        field = by_id(browser, element_id)
        field.clear()
        if value:
            field.send_keys(value)
    browser.execute_script("document.getElementById('result').dataset.state = 'stale'")
    by_id(browser, "check-button").click()
    wait(browser, lambda d: by_id(d, "result").get_attribute("data-state") in ("done", "error"))


def test_the_page_says_when_the_decision_overrides_the_band(
    server: str, browser: Any, tmp_path: Path
) -> None:
    import httpx
    from selenium.webdriver.common.by import By

    body = {**KB_REPAIRED, "session_id": "override"}
    report = httpx.post(server + "/v1/check", json=body, timeout=300).json()
    action, band = report["recommendation"]["action"], report["decision"]["band"]
    assert action == "correct_and_deliver" and band in ("human_review", "regenerate"), report
    browser.get(server + f"/#/report/override/{report['turn_id']}")
    wait(browser, lambda d: by_id(d, "result").get_attribute("data-state") == "done", 60)
    active = browser.find_elements(By.CSS_SELECTOR, "#bands .band.active")
    assert [a.get_attribute("data-action") for a in active] == [action]
    # The marker's band is marked too, and a note says the decision overrode it, and why.
    marked = browser.find_elements(By.CSS_SELECTOR, "#bands .band.confidence-band")
    assert [m.get_attribute("data-action") for m in marked] == [band]
    note = by_id(browser, "band-override")
    assert note.is_displayed()
    assert note.text.startswith(
        f"Decision overrides the band: confidence {report['confidence']:.3f} is in the "
    )
    why = report["decision"]["gate"] or report["decision"].get("overrides_band")
    assert "the action is correct and deliver" in note.text and why in note.text
    assert band.replace("_", " ") in by_id(browser, "band-marker").get_attribute("title")
    # The repair is shown old → new, and the claim's outcome is "repaired".
    repair = by_id(browser, "delivered").find_element(By.CSS_SELECTOR, ".repair")
    assert repair.find_element(By.CSS_SELECTOR, "del.old").text == "john.s@company.org"
    assert repair.find_element(By.CSS_SELECTOR, "ins.new").text == "john.smith@company.com"
    assert "knowledge base" in repair.get_attribute("title")
    assert kept_text(browser) == report["annotated"]
    assert outcomes(browser) == ["repaired"]
    assert browser.save_screenshot(str(tmp_path / "override.png"))


def test_threshold_is_drawn_at_the_retrieval_score_used(server: str, browser: Any) -> None:
    import httpx

    browser.get(server + "/#/verify")
    wait(browser, lambda d: by_id(d, "check-button").is_enabled(), timeout=30)
    # The retrieval-score field left at "auto": the default (calibrated) policy scores no
    # passage, so the check used no retrieval score and T(rs) took its strict end.
    submit(browser, REQUEST["response"], REQUEST["passages"][0]["text"])
    assert by_id(browser, "result").get_attribute("data-state") == "done"
    report = json.loads(browser.execute_script("return JSON.stringify(state.report)"))
    assert report["verdict"]["retrieval_score"] is None
    t_low = httpx.get(server + "/v1/thresholds").json()["adaptive"]["t_low"]
    label = by_id(browser, "rs-value")
    assert label.get_attribute("data-rs") == "none"
    assert label.text == f"no rs → T {t_low:.3f} (strict end)"  # before: "rs 0.50 → T 0.575"
    assert float(by_id(browser, "rs-cursor").get_attribute("x1")) == 34  # rs 0, not 0.50
    assert "no retrieval score" in by_id(browser, "threshold-note").text
    # A passage with its retrieval score: drawn there.
    submit(browser, REQUEST["response"], REQUEST["passages"][0]["text"], "0.33")
    assert by_id(browser, "rs-value").get_attribute("data-rs") == "0.33"
    assert by_id(browser, "rs-value").text.startswith("rs 0.33 → T ")


def test_an_error_clears_the_previous_result(server: str, browser: Any) -> None:
    browser.get(server + "/#/verify")
    wait(browser, lambda d: by_id(d, "check-button").is_enabled(), timeout=30)
    submit(browser, REQUEST["response"], REQUEST["passages"][0]["text"], "0.71")
    assert by_id(browser, "result").is_displayed()
    assert by_id(browser, "answer").text == REQUEST["response"]
    submit(browser, "   ")  # blank: the server answers 422
    assert by_id(browser, "error").text.startswith("422: body.response: the response is empty")
    assert by_id(browser, "result").get_attribute("data-state") == "error"
    assert not by_id(browser, "result").is_displayed()
    # Hidden, and emptied too (a later render never shows a mix of the old and the new).
    assert by_id(browser, "answer").get_attribute("textContent") == ""
    assert by_id(browser, "verdict-stamp").get_attribute("textContent") == "–"
    assert by_id(browser, "bands").get_attribute("childElementCount") == "0"
    assert browser.execute_script("return state.report") is None


def test_api_docs_render_offline(server: str, browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/docs")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock-summary-path"), 60)
    paths = {
        e.text.replace("\u200b", "")
        for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")
    }
    assert {"/v1/check", "/v1/check/batch", "/v1/thresholds", "/v1/reports"} <= paths, paths
    assert "Check one answer" in browser.find_element(By.CSS_SELECTOR, ".swagger-ui").text
    hosts = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => new URL(e.name).host)"
    )
    assert hosts and set(hosts) == {server.removeprefix("http://")}, hosts
    target = Path(os.environ.get("GUARDRAIL_DOCS_SCREENSHOT") or tmp_path / "api-docs.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    size = browser.get_window_size()
    browser.set_window_size(1280, 900)
    try:
        assert browser.save_screenshot(str(target))
    finally:
        browser.set_window_size(size["width"], size["height"])
    assert target.stat().st_size > 10_000
    print(f"screenshot: {target}")

    browser.get(server + "/redoc")
    wait(browser, lambda d: "Check one answer" in d.find_element(By.TAG_NAME, "body").text, 60)
