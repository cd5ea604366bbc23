"""Traces of guardrail runs: what each run shows, the run tree kept locally, decisions recorded as
LangSmith feedback.

Every ``Guardrail.invoke`` is one root run ``guardrail`` with a child run per stage
(``guardrail.coherence`` … ``guardrail.recommendation``) and metadata naming the profile,
models, thresholds, session and turn. Each child run's inputs are what that step reads and its
outputs what it wrote, as plain JSON of at most 4 KB each (:mod:`guardrail.trace_views`): the
claims stage's ``claims``, the hallucination stage's ``flags`` and ``verdict``, the
recommendation's ``action`` and ``decision``, a stage's ``status``. The root run's outputs are
the report (``output``) and the outcome under the feedback keys (:func:`outcome`). With
LangSmith tracing on (``LANGSMITH_TRACING=true``) these runs appear there as they are; nothing
here is needed.

- :class:`RunTreeCollector` is a callback handler that keeps the finished run trees in memory
  (no network), as typed :class:`RunNode` trees — for tests, debugging and local inspection.
- :func:`record_feedback` writes a report's confidence, verdict and action as LangSmith
  feedback on its run, so runs can be filtered and charted by them;
  :class:`FeedbackRecorder` does it automatically for every guardrail run it sees.

Example::

    collector = RunTreeCollector()
    report = Guardrail().invoke(data, {"callbacks": [collector]})
    root = collector.roots[-1]
    print([child.name for child in root.children])
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.base import BaseTracer
from pydantic import BaseModel, ConfigDict, Field

from guardrail.errors import ConfigError, MissingDependencyError
from guardrail.report import ConfidenceBreakdown, GuardReport
from guardrail.trace_views import bounded, json_view

if TYPE_CHECKING:
    from guardrail.stages.base import PipelineState

logger = logging.getLogger(__name__)

#: Feedback keys written by :func:`record_feedback`.
FEEDBACK_KEYS = ("guardrail.confidence", "guardrail.verdict", "guardrail.action")


class RunNode(BaseModel):
    """One finished run with its children (a local copy of what LangSmith shows)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: UUID
    name: str
    run_type: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] | None = None
    """The run's outputs; a non-dict output (e.g. a ``GuardReport``) is under ``"output"``."""
    error: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    children: list[RunNode] = Field(default_factory=list)

    @property
    def output(self) -> Any:
        """The run's output value (unwrapped from ``{"output": ...}``)."""
        if self.outputs is None:
            return None
        return self.outputs.get("output", self.outputs)

    def find(self, name: str) -> list[RunNode]:
        """All runs named ``name`` in this tree (depth first, this node included)."""
        found = [self] if self.name == name else []
        for child in self.children:
            found += child.find(name)
        return found

    def names(self) -> list[str]:
        """The names of the direct children, in order."""
        return [child.name for child in self.children]


def _node(run: Any) -> RunNode:
    children = sorted(run.child_runs, key=lambda r: (r.dotted_order or "", r.start_time))
    return RunNode(
        id=run.id,
        name=run.name,
        run_type=run.run_type,
        inputs=dict(run.inputs or {}),
        outputs=dict(run.outputs) if run.outputs is not None else None,
        error=run.error,
        tags=list(run.tags or []),
        metadata=dict((run.extra or {}).get("metadata") or {}),
        children=[_node(c) for c in children],
    )


class RunTreeCollector(BaseTracer):
    """Keeps every finished root run, as a :class:`RunNode` tree, in ``roots`` (no network)."""

    name: str = "guardrail_run_tree_collector"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.roots: list[RunNode] = []
        self._lock = threading.Lock()

    def _persist_run(self, run: Any) -> None:
        node = _node(run)
        with self._lock:
            self.roots.append(node)

    def find(self, name: str) -> list[RunNode]:
        """All runs named ``name`` in all collected trees."""
        out: list[RunNode] = []
        for root in self.roots:
            out += root.find(name)
        return out


def feedback_items(report: GuardReport) -> list[dict[str, Any]]:
    """The feedback a report yields: ``key`` with ``score`` (numeric) and/or ``value``."""
    accepted = report.delivered_text is not None
    return [
        {"key": "guardrail.confidence", "score": round(report.confidence, 6)},
        {
            "key": "guardrail.verdict",
            "value": report.verdict.label.value,
            "score": 1 if report.verdict.label.value == "VERIFIED" else 0,
        },
        {
            "key": "guardrail.action",
            "value": report.action.value,
            "score": 1 if accepted else 0,
            "comment": getattr(report.recommendation, "reason", None)
            or getattr(report.recommendation, "guidance", None),
        },
    ]


def outcome(report: GuardReport) -> dict[str, Any]:
    """The check's outcome under the feedback keys (:data:`FEEDBACK_KEYS`), as the
    ``guardrail`` run's outputs show it: ``{"guardrail.action": "accept", "guardrail.verdict":
    "VERIFIED", "guardrail.confidence": 0.93}``."""
    return {item["key"]: item.get("value", item.get("score")) for item in feedback_items(report)}


def top_outputs(report: GuardReport) -> dict[str, Any]:
    """The ``guardrail`` run's outputs: the report under ``output`` (as LangChain puts a run's
    output) and its :func:`outcome`, so the run shows the action, verdict and confidence
    without unfolding the report."""
    return {"output": report, **outcome(report)}


def confidence_inputs(state: PipelineState) -> dict[str, Any]:
    """The ``guardrail.confidence`` run's inputs: the results the score is computed from."""
    return bounded(
        json_view({"coherence": state.coherence, "factual": state.factual, "flags": state.flags})
    )


def confidence_outputs(confidence: float, breakdown: ConfidenceBreakdown) -> dict[str, Any]:
    """The ``guardrail.confidence`` run's outputs: the confidence and its breakdown."""
    return bounded(json_view({"confidence": confidence, "breakdown": breakdown}))


def recommendation_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """The ``guardrail.recommendation`` run's inputs: the confidence and what the decision
    reads (verdict, claims, flags, problems, corrections, each stage's status)."""
    state: PipelineState = data["state"]
    return bounded(
        json_view(
            {
                "confidence": data["confidence"],
                "verdict": state.verdict,
                "claims": state.claims,
                "flags": state.flags,
                "problems": state.plan.problems if state.plan is not None else None,
                "corrections": state.corrections,
                "stages": [{"name": r.name, "status": r.status} for r in state.stages],
            }
        )
    )


def recommendation_outputs(report: GuardReport) -> dict[str, Any]:
    """The ``guardrail.recommendation`` run's outputs: the action and how it was reached
    (``recommendation``, ``decision``), the report's verdict and confidence and the text
    delivered — not the whole report, which is the root run's output."""
    return bounded(
        json_view(
            {
                "action": report.action,
                "recommendation": report.recommendation,
                "decision": report.decision,
                "verdict": report.verdict,
                "confidence": report.confidence,
                "delivered_text": report.delivered_text,
            }
        )
    )


def _client(client: Any) -> Any:
    if client is not None:
        return client
    try:
        from langsmith import Client
    except ImportError as exc:
        raise MissingDependencyError("langsmith", "tracing") from exc
    return Client()


def project_id_for(client: Any, project_name: str | None = None) -> str:
    """The id of the LangSmith project (tracing session) the runs go to.

    ``project_name`` defaults to the tracers' project (``LANGSMITH_PROJECT``, else
    ``"default"``). A project not created yet (its first run still in flight) is created.
    """
    name = project_name
    if name is None:
        from langsmith.utils import get_tracer_project

        name = get_tracer_project()
    try:
        project = client.read_project(project_name=name)
    except Exception as exc:  # noqa: BLE001 - any lookup failure: create (upsert) instead
        logger.debug("LangSmith project %r not readable (%s): creating it", name, exc)
        try:
            project = client.create_project(name, upsert=True)
        except Exception as create_exc:
            raise ConfigError(
                f"cannot find or create the LangSmith project {name!r} for feedback "
                f"({create_exc}); pass project_id= explicitly"
            ) from create_exc
    return str(project.id)


def record_feedback(
    report: GuardReport,
    run_id: UUID | str,
    client: Any = None,
    trace_id: UUID | str | None = None,
    project_id: UUID | str | None = None,
    project_name: str | None = None,
) -> list[str]:
    """Write the report's confidence, verdict and action as LangSmith feedback on ``run_id``.

    Args:
        report: the guardrail report.
        run_id: the run to attach the feedback to (usually the ``guardrail`` run).
        client: a ``langsmith.Client`` (a default one, configured from the environment,
            when ``None``).
        trace_id: the root run's id, lets LangSmith batch the feedback with the trace.
        project_id: the tracing project's id (LangSmith's ``session_id``); looked up by
            ``project_name`` when not given. Run-level feedback without it is deprecated
            by LangSmith (it warns, and SmithDB-only deployments refuse it), so it is always
            sent.
        project_name: the project the run was traced to (default: the tracers' project).

    Returns the ids of the feedback records.
    """
    client = _client(client)
    session = str(project_id) if project_id is not None else project_id_for(client, project_name)
    ids: list[str] = []
    for item in feedback_items(report):
        key = item.pop("key")
        kwargs = {k: v for k, v in item.items() if v is not None}
        if trace_id is not None:
            kwargs["trace_id"] = trace_id
        feedback = client.create_feedback(run_id=run_id, key=key, session_id=session, **kwargs)
        ids.append(str(feedback.id))
    return ids


class FeedbackRecorder(BaseCallbackHandler):
    """Callback handler: records feedback (:func:`record_feedback`) on every finished run named
    ``run_name`` (the ``guardrail`` run) whose output is a :class:`GuardReport`.

    A failure to write feedback is logged, never raised: it must not break the user's chain.
    The project id is looked up once (by ``project_name``, default: the tracers' project)
    unless ``project_id`` is given.
    """

    def __init__(
        self,
        client: Any = None,
        run_name: str = "guardrail",
        project_id: UUID | str | None = None,
        project_name: str | None = None,
    ) -> None:
        self.client = client
        self.run_name = run_name
        self.project_id = str(project_id) if project_id is not None else None
        self.project_name = project_name
        self.recorded: list[UUID] = []
        self._pending: dict[UUID, UUID | None] = {}  # run id -> trace id when it is the root
        self._lock = threading.Lock()

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        if kwargs.get("name") == self.run_name:
            with self._lock:
                self._pending[run_id] = run_id if parent_run_id is None else None

    def _project(self) -> str:
        with self._lock:
            if self.project_id is not None:
                return self.project_id
        found = project_id_for(_client(self.client), self.project_name)
        with self._lock:
            self.project_id = found
        return found

    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        with self._lock:
            if run_id not in self._pending:
                return
            trace_id = self._pending.pop(run_id)
        report = outputs.get("output") if isinstance(outputs, dict) else outputs
        if not isinstance(report, GuardReport):
            return
        try:
            record_feedback(report, run_id, self.client, trace_id, self._project())
        except Exception as exc:  # noqa: BLE001 - tracing must not break the chain
            logger.warning("could not record guardrail feedback for run %s: %s", run_id, exc)
            return
        with self._lock:
            self.recorded.append(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self._pending.pop(run_id, None)
