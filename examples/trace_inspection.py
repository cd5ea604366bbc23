"""Inspect guardrail traces: the local run tree, and finding flagged runs in LangSmith.

1. Locally (no network): ``RunTreeCollector`` keeps the run tree of each call — the root
   ``guardrail`` run with the outcome (action, verdict, confidence) in its outputs and the
   metadata (profile, models, thresholds, session and turn ids), and one child per stage whose
   inputs are what the stage reads and whose outputs are what it wrote (claims, flags, scores,
   corrections), as plain JSON.
2. In LangSmith (when LANGSMITH_API_KEY is set): trace a call with ``FeedbackRecorder`` so the
   confidence, verdict and action are stored as feedback, then find the flagged runs with
   ``Client.list_runs`` filters on run name, metadata and feedback.

Run: python examples/trace_inspection.py            (LangSmith part needs LANGSMITH_API_KEY)
"""

from __future__ import annotations

import json
import os
import sys

from guardrail import Guardrail
from guardrail.tracing import FeedbackRecorder, RunNode, RunTreeCollector

DATA = {
    "query": "When is the meeting?",
    "response": "The meeting is at 2pm on Monday, with the whole board.",
    "passages": [{"text": "The meeting with John is at 2pm on Monday in room 4B.", "score": 0.82}],
    "session_id": "demo-session",
    "turn_id": 1,
}

#: LangSmith filter: guardrail runs that were not delivered as is (action feedback score 0).
FLAGGED = 'and(eq(name, "guardrail"), eq(feedback_key, "guardrail.action"), eq(feedback_score, 0))'
#: LangSmith filter: low-confidence runs of one session (metadata is filterable too).
LOW_CONFIDENCE = (
    'and(eq(feedback_key, "guardrail.confidence"), lt(feedback_score, 0.5), '
    'eq(metadata_key, "session_id"), eq(metadata_value, "demo-session"))'
)


def summary(node: RunNode) -> str:
    """One line of what a run shows: the outcome for the root, status and results for a step."""
    out = node.outputs or {}
    if "guardrail.action" in out:
        return (
            f"action={out['guardrail.action']} verdict={out['guardrail.verdict']} "
            f"confidence={out['guardrail.confidence']:.3f}"
        )
    parts = [str(out.get("status", ""))]
    if "claims" in out:
        parts.append(f"{len(out['claims'])} claim(s)")
    if "verdict" in out:
        parts.append(f"verdict {out['verdict'].get('label')}")
    if "flags" in out:
        parts.append(f"{len(out['flags'])} flag(s)")
    if "confidence" in out:
        parts.append(f"confidence {out['confidence']:.3f}")
    if "action" in out:
        parts.append(f"action {out['action']}")
    if out.get("reason"):
        parts.append(str(out["reason"]))
    return ", ".join(p for p in parts if p)


def show(node: RunNode, depth: int = 0) -> None:
    print(f"{'  ' * depth}{node.name} [{node.run_type}] {summary(node)}")
    for child in node.children:
        show(child, depth + 1)


def main() -> int:
    guard = Guardrail()
    collector = RunTreeCollector()
    callbacks: list[object] = [collector]
    if os.environ.get("LANGSMITH_API_KEY"):
        callbacks.append(FeedbackRecorder())  # feedback on each guardrail run
    guard.invoke(DATA, {"callbacks": callbacks, "tags": ["trace-demo"]})

    root = collector.roots[-1]
    show(root)
    [hallucination] = root.find("guardrail.hallucination")
    flags = (hallucination.outputs or {}).get("flags", [])
    print("\nthe hallucination stage's flags, as its run shows them:")
    print(json.dumps(flags, indent=1, ensure_ascii=False)[:800])
    meta = root.metadata
    print(
        f"metadata: profile={meta['guardrail_profile']} verifier={meta['guardrail_verifier']} "
        f"session={meta.get('session_id')} turn={meta.get('turn_id')}"
    )

    print(f"\nLangSmith filter for flagged runs:\n  {FLAGGED}")
    print(f"LangSmith filter for low-confidence runs of a session:\n  {LOW_CONFIDENCE}")
    if not os.environ.get("LANGSMITH_API_KEY"):
        print("(set LANGSMITH_API_KEY and LANGSMITH_TRACING=true to trace and query LangSmith)")
        return 0
    from langsmith import Client

    client = Client()
    project = os.environ.get("LANGSMITH_PROJECT", "default")
    for run in client.list_runs(project_name=project, filter=FLAGGED, limit=10):
        print(f"flagged run {run.id} {run.name} {run.start_time} {run.extra.get('metadata', {})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
