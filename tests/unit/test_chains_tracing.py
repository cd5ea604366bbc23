"""The local run tree of a Guardrail run, and the feedback a report yields (no network).

The stages are disabled here so the test runs in milliseconds; each stage is still its own
child run (recorded as skipped). ``tests/integration/test_chains_tracing.py`` repeats the shape
check with every stage running, and sends the runs and feedback to a local LangSmith endpoint.
"""

from __future__ import annotations

from guardrail.pipeline import Guardrail
from guardrail.report import GuardReport
from guardrail.tracing import FEEDBACK_KEYS, RunTreeCollector, feedback_items
from tests.stage_names import RECORDS, STAGES, STEPS

EXPECTED_CHILDREN = list(STEPS)
DATA = {
    "query": "When is the meeting?",
    "response": "The meeting is at 2pm on Monday.",
    "passages": [{"text": "The meeting with John is at 2pm on Monday in room 4B.", "score": 0.82}],
    "session_id": "session-7",
    "turn_id": 3,
}


def test_guardrail_invoke_produces_one_child_run_per_stage() -> None:
    guard = Guardrail({"disabled_stages": list(STAGES)})
    collector = RunTreeCollector()
    report = guard.invoke(DATA, {"callbacks": [collector], "tags": ["unit"]})
    assert len(collector.roots) == 1
    root = collector.roots[0]
    assert root.name == "guardrail"
    assert root.names() == EXPECTED_CHILDREN
    assert root.output == report and isinstance(root.output, GuardReport)
    for child in [c for c in root.children if c.name.removeprefix("guardrail.") in RECORDS]:
        # each stage run shows its own status, not the pipeline state
        assert child.outputs == {
            "status": "skipped",
            "reason": "disabled in config",
            "duration_ms": report.timings_ms[child.name.removeprefix("guardrail.")],
        }
        assert child.inputs["response"] == DATA["response"]
    recommendation = root.children[-1].outputs or {}
    assert recommendation["action"] == report.action.value == "human_review"
    assert root.outputs is not None and root.outputs["guardrail.action"] == "human_review"
    meta = root.metadata
    assert meta["session_id"] == "session-7" and meta["turn_id"] == 3
    assert meta["guardrail_profile"] == "offline"
    assert meta["guardrail_thresholds"]["accept"] == 0.90
    assert meta["guardrail_verifier"] == "bundled"
    assert meta["guardrail_embedding"] == "offline:all-MiniLM-L6-v2"
    assert "unit" in root.tags
    assert all(child.metadata["session_id"] == "session-7" for child in root.children)


async def test_ainvoke_tree_has_the_same_shape() -> None:
    guard = Guardrail({"disabled_stages": list(STAGES)})
    collector = RunTreeCollector()
    await guard.ainvoke(DATA, {"callbacks": [collector]})
    assert collector.roots[0].names() == EXPECTED_CHILDREN


def test_feedback_items_follow_the_report() -> None:
    report = Guardrail({"disabled_stages": list(STAGES)}).invoke(DATA)
    items = {item["key"]: item for item in feedback_items(report)}
    assert tuple(items) == FEEDBACK_KEYS
    assert items["guardrail.confidence"]["score"] == round(report.confidence, 6)
    assert items["guardrail.verdict"]["value"] == report.verdict.label.value
    assert items["guardrail.action"]["value"] == "human_review"
    assert items["guardrail.action"]["score"] == 0
    assert "Could not check the answer" in items["guardrail.action"]["comment"]
