"""What a trace shows of each step: its own inputs and results as plain JSON.

Each check runs every stage for real (the bundled verifier, spaCy, the embedder) on one-sentence
answers, traced by LangChain's own ``LangChainTracer`` with a stub LangSmith client that keeps
what it would send (no network), by ``collect_runs()`` and by :class:`RunTreeCollector`. A
stage run's inputs and outputs must each be plain JSON (``json.dumps`` without a fallback), at
most 4 KB, with no object repr and no token array, and must hold the stage's own result; the
top run must show the outcome under the feedback keys; the report must not change.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers import LangChainTracer
from langchain_core.tracers.context import collect_runs

from guardrail.pipeline import Guardrail
from guardrail.report import Action, GuardReport
from guardrail.stages.base import PipelineState, Stage, StageUpdate
from guardrail.trace_views import MAX_VIEW_BYTES, bounded, input_view, json_view, view_size
from guardrail.tracing import FEEDBACK_KEYS, RunTreeCollector, feedback_items, outcome
from tests.same_report import comparable
from tests.stage_names import RECORDS, STAGES, STEPS

MEETING = {
    "query": "When is the meeting?",
    "response": "The meeting is at 3pm on Monday.",
    "passages": [{"text": "The meeting with John is at 2pm on Monday in room 4B.", "score": 0.82}],
    "session_id": "session-7",
    "turn_id": 3,
}
"""A one-sentence answer with a wrong time: claims, a flag, a correction and a decision."""
ORVIK = {
    "query": "Tell me about Orvik.",
    "response": "Orvik was founded in 1990 in Lyon.",
    "knowledge_base": {
        "entities": [{"name": "Orvik", "attributes": {"founded": "1991", "location": "Lyon"}}]
    },
    "dialogue": {
        "turns": [
            {"speaker": "user", "text": "Where is Orvik based?"},
            {"speaker": "assistant", "text": "Orvik is based in Lyon."},
        ]
    },
}
"""A one-sentence answer checked against a knowledge base and a dialogue: every stage runs."""


class StubClient:
    """Stands in for ``langsmith.Client``: keeps the runs a ``LangChainTracer`` sends."""

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _merge(self, run_id: Any, data: dict[str, Any]) -> None:
        with self._lock:
            run = self.runs.setdefault(str(run_id), {})
            run.update({k: v for k, v in data.items() if v is not None})

    def create_run(self, **run: Any) -> None:
        self._merge(run["id"], run)

    def update_run(self, run_id: Any, **run: Any) -> None:
        self._merge(run_id, run)

    def flush(self) -> None:
        pass

    def by_name(self) -> dict[str, dict[str, Any]]:
        return {run["name"]: run for run in self.runs.values()}


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail()


def traced_by_langsmith(guard: Guardrail, data: dict[str, Any]) -> tuple[GuardReport, StubClient]:
    client = StubClient()
    tracer = LangChainTracer(client=client, project_name="guardrail-tests")  # type: ignore[arg-type]
    report = guard.invoke(data, {"callbacks": [tracer]})
    tracer.wait_for_futures()
    return report, client


def keys_holding_lists(view: Any) -> set[str]:
    """Every key, at any depth, whose value is a list."""
    if isinstance(view, dict):
        found = {k for k, v in view.items() if isinstance(v, list)}
        return found.union(*(keys_holding_lists(v) for v in view.values()))
    if isinstance(view, list):
        return set().union(*(keys_holding_lists(v) for v in view))
    return set()


def assert_plain(view: Any, where: str) -> None:
    """Only JSON's own types, exactly (a str-enum is not a str here)."""
    if isinstance(view, dict):
        assert all(type(k) is str for k in view), where
        for item in view.values():
            assert_plain(item, where)
    elif isinstance(view, list):
        for item in view:
            assert_plain(item, where)
    else:
        assert view is None or type(view) in (str, int, float, bool), f"{where}: {view!r}"


def assert_readable(view: Any, where: str) -> None:
    """Plain JSON, at most 4 KB, no object repr, no token array, not the pipeline state."""
    assert isinstance(view, dict), where
    assert_plain(view, where)
    text = json.dumps(view, ensure_ascii=False)  # no default=: anything but JSON data raises
    assert len(text.encode()) <= MAX_VIEW_BYTES, f"{where}: {len(text.encode())} bytes"
    assert "object at 0x" not in text and "PipelineState" not in text, where
    assert not keys_holding_lists(view) & {"tokens", "tensor", "spaces", "ents"}, where
    shown = set(view) & {"doc", "parses", "state", "input", "stages"}
    if where.startswith("guardrail.recommendation inputs"):  # each stage's name and status
        shown.discard("stages")
    assert not shown, f"{where} shows {shown}"


def test_langsmith_tracer_gets_each_stage_s_own_fields_as_plain_json(guard: Guardrail) -> None:
    report, client = traced_by_langsmith(guard, MEETING)
    runs = client.by_name()
    assert set(STEPS) | {"guardrail"} <= set(runs)
    for name in STEPS:
        assert_readable(runs[name]["inputs"], f"{name} inputs")
        assert_readable(runs[name]["outputs"], f"{name} outputs")
    for name in (f"guardrail.{name}" for name in RECORDS):  # a stage reads the checked input
        assert runs[name]["inputs"]["response"] == MEETING["response"]
    claims = runs["guardrail.claims"]["outputs"]
    assert claims["status"] == "ran"
    assert [c["text"] for c in claims["claims"]] == ["The meeting is at 3pm on Monday."]
    hallucination = runs["guardrail.hallucination"]
    # it reads the claims stage's claims, and writes scored claims, flags and the verdict
    assert hallucination["inputs"]["claims"] == claims["claims"]
    assert hallucination["inputs"]["passages"][0]["text"].startswith("The meeting with John")
    out = hallucination["outputs"]
    assert out["verdict"]["label"] == report.verdict.label.value
    assert out["flags"] and out["flags"] == json_view(report.hallucination_flags)
    assert out["claims"][0]["status"] == report.claims[0].status.value
    correction = runs["guardrail.correction"]
    assert correction["inputs"]["flags"] == out["flags"]
    assert correction["outputs"]["corrections"] == json_view(report.corrections)
    confidence = runs["guardrail.confidence"]["outputs"]
    assert confidence["confidence"] == pytest.approx(report.confidence)
    recommendation = runs["guardrail.recommendation"]["outputs"]
    assert recommendation["action"] == report.action.value
    assert recommendation["recommendation"] == json_view(report.recommendation)
    assert recommendation["delivered_text"] == report.delivered_text
    # the top run: the outcome under the feedback keys, beside the report
    top = runs["guardrail"]
    assert top.get("parent_run_id") is None
    assert top["outputs"]["guardrail.action"] == report.action.value
    assert top["outputs"]["guardrail.verdict"] == report.verdict.label.value
    assert top["outputs"]["guardrail.confidence"] == round(report.confidence, 6)
    assert top["outputs"]["output"] == report
    assert top["extra"]["metadata"]["session_id"] == "session-7"


def test_every_stage_runs_on_a_knowledge_base_and_a_dialogue_and_stays_readable(
    guard: Guardrail,
) -> None:
    report, client = traced_by_langsmith(guard, ORVIK)
    runs = client.by_name()
    assert all(s.status.value == "ran" for s in report.stages), report.stages
    for name in STEPS:
        assert_readable(runs[name]["inputs"], f"{name} inputs")
        assert_readable(runs[name]["outputs"], f"{name} outputs")
    facts = runs["guardrail.fact_validation"]
    assert facts["inputs"]["knowledge_base"].startswith("<")
    assert facts["inputs"]["dialogue"]["turns"][1]["text"] == "Orvik is based in Lyon."
    assert facts["outputs"]["factual"] == json_view(report.factual_validation)
    assert facts["outputs"]["extracted_claims"]
    coherence = runs["guardrail.coherence"]["outputs"]["coherence"]
    assert coherence["score"] == pytest.approx(report.coherence.score)  # type: ignore[union-attr]


def test_collect_runs_shows_the_same_views_and_the_outcome(guard: Guardrail) -> None:
    with collect_runs() as cb:
        report = guard.invoke(MEETING)
    [top] = [run for run in cb.traced_runs if run.parent_run_id is None]
    assert top.name == "guardrail" and [r.name for r in top.child_runs] == STEPS
    assert top.outputs is not None
    assert {k: top.outputs[k] for k in FEEDBACK_KEYS} == outcome(report)
    for run in top.child_runs:
        assert_readable(run.inputs, f"{run.name} inputs")
        assert_readable(run.outputs, f"{run.name} outputs")
    claims = next(r for r in top.child_runs if r.name == "guardrail.claims")
    assert claims.outputs is not None and claims.outputs["claims"][0]["text"] == MEETING["response"]


async def test_ainvoke_traces_the_same_views(guard: Guardrail) -> None:
    collector = RunTreeCollector()
    report = await guard.ainvoke(MEETING, {"callbacks": [collector]})
    root = collector.roots[0]
    assert root.names() == STEPS and root.output == report
    for child in root.children:
        assert_readable(child.inputs, f"{child.name} inputs")
        assert_readable(child.outputs or {}, f"{child.name} outputs")
    assert root.find("guardrail.recommendation")[0].output["action"] == report.action.value


def test_the_outcome_is_the_feedback_the_guardrail_records(guard: Guardrail) -> None:
    report = guard.invoke(MEETING)
    items = {i["key"]: i for i in feedback_items(report)}
    assert outcome(report) == {
        "guardrail.confidence": items["guardrail.confidence"]["score"],
        "guardrail.verdict": items["guardrail.verdict"]["value"],
        "guardrail.action": items["guardrail.action"]["value"],
    }


def test_the_report_is_the_same_traced_or_not(guard: Guardrail) -> None:
    plain = comparable(guard.invoke(MEETING))
    _, client = traced_by_langsmith(guard, MEETING)
    with collect_runs():
        collected = comparable(guard.invoke(MEETING))
    traced = client.by_name()["guardrail"]["outputs"]["output"]
    assert comparable(traced) == plain == collected


class IgnoresChains(BaseCallbackHandler):
    """A handler that ignores chain runs: the views are not worth building for it."""

    @property
    def ignore_chain(self) -> bool:
        return True


def test_views_are_built_only_when_a_handler_records_the_run(
    guard: Guardrail, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []

    def counting(self: Stage, state: PipelineState) -> dict[str, Any]:
        built.append(self.name)
        return {}

    monkeypatch.setattr(Stage, "trace_inputs", counting)
    guard.invoke(MEETING)
    guard.invoke(MEETING, {"callbacks": [IgnoresChains()]})
    assert built == []
    guard.invoke(MEETING, {"callbacks": [RunTreeCollector()]})
    assert built == list(RECORDS)


class Verbose(Stage):
    """A custom stage with a large result: its run's outputs are cut to 4 KB, marked."""

    name = "verbose"
    reads = ("claims",)

    def run(self, state: PipelineState) -> StageUpdate:
        return StageUpdate(extension={"notes": [f"note {i} " + "x" * 600 for i in range(50)]})


def test_a_large_custom_result_is_cut_to_the_bound_with_a_marker() -> None:
    collector = RunTreeCollector()
    guard = Guardrail({"disabled_stages": list(STAGES)}, stages=[Verbose])
    report = guard.invoke(MEETING, {"callbacks": [collector]})
    [run] = collector.find("guardrail.verbose")
    assert_readable(run.outputs, "verbose outputs")
    notes = (run.outputs or {})["extension"]["notes"]
    assert notes[0].startswith("note 0 xxx") and "more characters" in notes[0]
    assert "more items" in notes[-1]
    assert len(report.extensions["verbose"]["notes"]) == 50  # the report is not cut


def test_json_view_and_bounded(guard: Guardrail) -> None:
    class Opaque:
        pass

    view = json_view({"a": Opaque(), "b": (1, 2.5, float("nan")), "c": {"d": None}})
    assert view == {"a": "<Opaque>", "b": [1, 2.5, "nan"], "c": {"d": None}}
    assert type(json_view(Action.ACCEPT)) is str and json_view(Action.ACCEPT) == "accept"
    assert bounded({"k": "short"}) == {"k": "short"}
    big = {"one": "y" * 10_000, "two": list(range(5000))}
    small = bounded(big, limit=300)
    assert view_size(small) <= 300 and set(small) == {"one", "two"}
    mixed = {"small": ["kept whole", "x" * 150], "big": ["y" * 150] * 40}
    cut = bounded(mixed, limit=1000)
    assert cut["small"] == mixed["small"] and cut["big"][-1] == "… (37 more items)"
    tiny = bounded({"a": "z" * 50, "b": "z" * 5000}, limit=90)
    assert set(tiny) == {"a", "b"} and "left out" in tiny["b"]
    assert input_view(guard.prepare(MEETING).input)["passages"][0]["score"] == 0.82
