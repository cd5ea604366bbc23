"""One structured log record per check (the check log's fields and levels) and OpenTelemetry spans.

Every report here comes from a real ``Guardrail`` run: the recommendation band is chosen
through the configuration (stages disabled, fail-open, band thresholds), and one check runs
the real claim and hallucination stages with the bundled verifier. Spans go to the
OpenTelemetry SDK's ``InMemorySpanExporter``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from guardrail.errors import InputError
from guardrail.integrations.otel import OpenTelemetryCallbackHandler
from guardrail.observability import LEVELS, LOG_CHECK, JsonFormatter, check_fields, log_check
from guardrail.pipeline import Guardrail
from guardrail.report import AcceptWithFlags, Action, GuardReport, Span
from tests.stage_names import RECORDS, STAGES, STEPS

DATA = {
    "query": "When is the meeting with John?",
    "response": "The meeting with John is on Thursday at 10:00. It is in room 9C.",
    "passages": [
        {"text": "The meeting with John is on Thursday at 10:00 in room 4B.", "score": 0.7}
    ],
    "session_id": "s-1",
    "turn_id": 3,
}
#: With every stage disabled under fail-open the confidence is 0.0; these bands then pick
#: each action in turn.
BANDS: dict[Action, dict[str, float]] = {
    Action.ACCEPT: {"accept": 0.0, "flag": 0.0, "correct": 0.0, "regenerate": 0.0},
    Action.ACCEPT_WITH_FLAGS: {"accept": 1.0, "flag": 0.0, "correct": 0.0, "regenerate": 0.0},
    Action.CORRECT_AND_DELIVER: {"accept": 1.0, "flag": 1.0, "correct": 0.0, "regenerate": 0.0},
    Action.REGENERATE: {"accept": 1.0, "flag": 1.0, "correct": 1.0, "regenerate": 0.0},
    Action.HUMAN_REVIEW: {"accept": 1.0, "flag": 1.0, "correct": 1.0, "regenerate": 1.0},
}


def band_report(action: Action) -> GuardReport:
    guard = Guardrail(
        {
            "disabled_stages": list(STAGES),
            "failure_policy": "fail_open",
            "thresholds": BANDS[action],
        }
    )
    if action is not Action.ACCEPT_WITH_FLAGS:
        return guard.invoke(DATA)
    # with every stage off there is nothing to flag, and an action never names what the report
    # does not hold (that band gives accept): flag a span, and log the record as invoke would
    report = guard.invoke(DATA, config={"metadata": {LOG_CHECK: False}})
    flagged = AcceptWithFlags(flags=[Span(start=0, end=11)])
    report = report.model_copy(update={"recommendation": flagged})
    log_check(report)
    return report


@pytest.fixture(scope="module")
def checked() -> Guardrail:
    return Guardrail({"disabled_stages": ["coherence", "fact_validation", "correction"]})


@pytest.mark.parametrize("action", list(Action))
def test_one_record_per_check_at_the_recommendation_level(
    action: Action, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="guardrail.check"):
        report = band_report(action)  # Guardrail.invoke logs the record itself
    assert report.action is action
    records = [r for r in caplog.records if r.name == "guardrail.check"]
    assert len(records) == 1
    record = records[0]
    fields = check_fields(report)
    assert record.levelno == LEVELS[action]
    assert (
        record.levelname
        == {
            Action.ACCEPT: "DEBUG",
            Action.ACCEPT_WITH_FLAGS: "INFO",
            Action.CORRECT_AND_DELIVER: "INFO",
            Action.REGENERATE: "WARNING",
            Action.HUMAN_REVIEW: "ERROR",
        }[action]
    )
    assert record.guardrail == fields  # type: ignore[attr-defined]
    assert fields["recommendation"] == action.value
    assert fields["session_id"] == "s-1" and fields["turn_id"] == 3
    assert set(fields["timings_ms"]) >= set(RECORDS)
    if action is Action.REGENERATE:
        assert "guidance" in fields
    if action is Action.HUMAN_REVIEW:
        assert fields["reason"] and fields["reason"] in record.getMessage()


def test_accept_is_silent_at_info(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="guardrail.check"):
        band_report(Action.ACCEPT)
        band_report(Action.REGENERATE)
    assert [r.levelname for r in caplog.records if r.name == "guardrail.check"] == ["WARNING"]


def test_fields_of_a_real_check_and_json_lines(checked: Guardrail) -> None:
    report = checked.invoke(DATA)
    fields = check_fields(report)
    assert fields["verdict"] == report.verdict.label.value == "HALLUCINATION"
    assert fields["hallucinations"] == len(report.hallucination_flags) >= 1
    assert fields["confidence"] == pytest.approx(report.confidence, abs=1e-4)
    assert fields["coherence"] is None  # the stage was disabled: not a made-up 1.0
    assert fields["nli_score"] is not None and fields["threshold"] is not None
    assert fields["total_ms"] == pytest.approx(sum(report.timings_ms.values()), abs=0.01)
    logger = logging.getLogger("test.guardrail.json")
    logger.propagate = False
    lines: list[str] = []

    class Sink(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    sink = Sink()
    sink.setFormatter(JsonFormatter())
    logger.addHandler(sink)
    logger.setLevel(logging.DEBUG)
    try:
        log_check(report, logger, request_id="r-9")
    finally:
        logger.removeHandler(sink)
    row = json.loads(lines[0])
    assert row["recommendation"] == report.action.value and row["request_id"] == "r-9"
    assert row["level"] == logging.getLevelName(LEVELS[report.action])


def spans_of(provider_exporter: tuple[TracerProvider, InMemorySpanExporter]) -> list[Any]:
    return list(provider_exporter[1].get_finished_spans())


@pytest.fixture()
def otel() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_one_span_per_check_and_one_child_per_stage(
    otel: tuple[TracerProvider, InMemorySpanExporter], checked: Guardrail
) -> None:
    provider, _ = otel
    handler = OpenTelemetryCallbackHandler(tracer_provider=provider)
    outer = provider.get_tracer("app")
    with outer.start_as_current_span("app.request") as app_span:
        report = checked.invoke(DATA, config={"callbacks": [handler]})
    spans = spans_of(otel)
    by_name = {s.name: s for s in spans}
    root = by_name["guardrail"]
    assert root.parent is not None and root.parent.span_id == app_span.get_span_context().span_id
    stages = [s for s in spans if s.parent is not None and s.parent.span_id == root.context.span_id]
    expected = list(STEPS)
    assert sorted(s.name for s in stages) == sorted(expected)
    assert [s.name for s in sorted(stages, key=lambda s: s.start_time)] == expected
    assert root.attributes["guardrail.verdict"] == report.verdict.label.value
    assert root.attributes["guardrail.action"] == report.action.value
    assert root.attributes["guardrail.confidence"] == pytest.approx(report.confidence)
    assert root.attributes["guardrail.session_id"] == "s-1"
    status = {s.name: s.attributes["guardrail.stage.status"] for s in stages}
    assert status["guardrail.coherence"] == "skipped" and status["guardrail.hallucination"] == "ran"
    hall = by_name["guardrail.hallucination"]
    assert hall.attributes["guardrail.stage.duration_ms"] == pytest.approx(
        report.timings_ms["hallucination"], abs=0.01
    )
    assert (
        by_name["guardrail.coherence"].attributes["guardrail.stage.reason"] == "disabled in config"
    )
    assert all(s.end_time >= s.start_time for s in spans)


async def test_async_checks_and_errors_become_spans(
    otel: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, _ = otel
    handler = OpenTelemetryCallbackHandler(tracer_provider=provider)
    guard = Guardrail({"disabled_stages": list(STAGES)})
    await guard.ainvoke(DATA, config={"callbacks": [handler]})
    with pytest.raises(InputError):
        guard.invoke({**DATA, "response": "  "}, config={"callbacks": [handler]})
    roots = [s for s in spans_of(otel) if s.name == "guardrail"]
    assert len(roots) == 2
    ok, failed = sorted(roots, key=lambda s: s.start_time)
    assert ok.attributes["guardrail.action"] == "human_review"  # fail-closed, nothing checked
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.events and failed.events[0].name == "exception"
