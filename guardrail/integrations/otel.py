"""OpenTelemetry spans for guardrail runs: one span per check, one child span per stage.

:class:`OpenTelemetryCallbackHandler` is a LangChain callback handler. Pass it in the run
config and every ``guardrail`` run becomes a span (a child of whatever span is current, so it
sits inside the application's own trace), with a child span per stage run
(``guardrail.coherence`` … ``guardrail.recommendation``). Attributes are namespaced
``guardrail.*``:

- check span: ``guardrail.verdict``, ``guardrail.action``, ``guardrail.confidence``,
  ``guardrail.nli_score``, ``guardrail.threshold``, ``guardrail.retrieval_score``,
  ``guardrail.hallucinations``, ``guardrail.claims``, ``guardrail.profile``,
  ``guardrail.session_id``, ``guardrail.turn_id``;
- stage span: ``guardrail.stage``, ``guardrail.stage.status`` (ran / skipped / failed),
  ``guardrail.stage.duration_ms``, ``guardrail.stage.reason``.

A run that raises ends its span with status ERROR and the exception recorded. Needs the
``otel`` extra (``pip install 'answer-guardrail[otel]'``); the SDK and exporter are the caller's.

Example::

    handler = OpenTelemetryCallbackHandler()          # uses the global tracer provider
    Guardrail().invoke(data, config={"callbacks": [handler]})
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from guardrail.errors import MissingDependencyError
from guardrail.report import GuardReport

#: Attribute values OpenTelemetry accepts.
_SCALARS = (str, bool, int, float)


def _set(span: Any, key: str, value: Any) -> None:
    if value is None:
        return
    if hasattr(value, "value") and isinstance(value.value, _SCALARS):  # str-enums
        value = value.value
    if isinstance(value, _SCALARS):
        span.set_attribute(key, value)


def report_attributes(report: GuardReport) -> dict[str, Any]:
    """The ``guardrail.*`` attributes of a check span."""
    v = report.verdict
    return {
        "guardrail.verdict": v.label.value,
        "guardrail.action": report.action.value,
        "guardrail.confidence": round(report.confidence, 6),
        "guardrail.nli_score": v.nli_score,
        "guardrail.threshold": v.threshold,
        "guardrail.retrieval_score": v.retrieval_score,
        "guardrail.hallucinations": len(report.hallucination_flags),
        "guardrail.claims": len(report.claims),
        "guardrail.profile": report.profile,
        "guardrail.session_id": report.session_id,
        "guardrail.turn_id": report.turn_id,
    }


def stage_attributes(name: str, output: Any) -> dict[str, Any]:
    """The ``guardrail.stage.*`` attributes of a stage span, read from the stage run's outputs
    (``status``, ``duration_ms``, ``reason``; the confidence and the recommendation runs'
    ``confidence``, ``action`` and verdict)."""
    attrs: dict[str, Any] = {"guardrail.stage": name.removeprefix("guardrail.")}
    view = output if isinstance(output, dict) else {}
    attrs["guardrail.stage.status"] = view.get("status", "ran")
    attrs["guardrail.stage.duration_ms"] = view.get("duration_ms")
    attrs["guardrail.stage.reason"] = view.get("reason")
    attrs["guardrail.confidence"] = view.get("confidence")
    attrs["guardrail.action"] = view.get("action")
    verdict = view.get("verdict")
    if isinstance(verdict, dict):
        attrs["guardrail.verdict"] = verdict.get("label")
    return attrs


class OpenTelemetryCallbackHandler(BaseCallbackHandler):
    """LangChain callback handler: OpenTelemetry spans for ``guardrail`` runs and their stages.

    Args:
        tracer_provider: the provider to get the tracer from (the global one when ``None``).
        root_name: the run name that opens a check span (``"guardrail"``).
    """

    run_inline = True  # keep span order and parenthood exact under async runs

    def __init__(self, tracer_provider: Any = None, root_name: str = "guardrail") -> None:
        try:
            from opentelemetry import trace
        except ImportError as exc:
            raise MissingDependencyError("opentelemetry-api", "otel") from exc
        self._trace = trace
        self.tracer = trace.get_tracer("guardrail", tracer_provider=tracer_provider)
        self.root_name = root_name
        self._spans: dict[UUID, Any] = {}
        self._lock = threading.Lock()

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or ""
        with self._lock:
            parent = self._spans.get(parent_run_id) if parent_run_id is not None else None
        if parent is None and name != self.root_name:
            return
        context = self._trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(name, context=context)
        if parent is None:
            meta = metadata or {}
            _set(span, "guardrail.profile", meta.get("guardrail_profile"))
            _set(span, "guardrail.session_id", meta.get("session_id"))
            _set(span, "guardrail.turn_id", meta.get("turn_id"))
        with self._lock:
            self._spans[run_id] = span

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            span = self._spans.pop(run_id, None)
        if span is None:
            return
        output = outputs.get("output", outputs) if isinstance(outputs, dict) else outputs
        name = getattr(span, "name", "")
        if isinstance(output, GuardReport) and name == self.root_name:
            attrs = report_attributes(output)
        else:
            attrs = stage_attributes(name, output)
        for key, value in attrs.items():
            _set(span, key, value)
        span.end()

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            span = self._spans.pop(run_id, None)
        if span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        span.end()
