"""``guardrail check``: postprocess one answer and print the report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from guardrail.errors import InputError
from guardrail.inputs import DialogueState, check_keys, read_passage_rows
from guardrail.report import GuardReport


def register(sub: Any) -> None:
    p = sub.add_parser("check", help="check one answer against evidence, a KB and the dialogue")
    p.add_argument("--query", "-q", default="", help="the user's question")
    p.add_argument("--response", "-r", required=True, help="the LLM answer to check")
    p.add_argument("--passage", "-p", action="append", default=[], help="evidence text (repeat)")
    p.add_argument("--passages-file", help='JSONL: {"text": ..., "score": 0.82, "source": ...}')
    p.add_argument("--kb", help="knowledge base: JSON, CSV, YAML or SQLite file")
    p.add_argument(
        "--history", help='dialogue JSON: {"turns": [...], "entities": [...], "topics": [...]}'
    )
    p.add_argument("--config", help="config file (YAML or JSON)")
    p.add_argument("--session-id")
    p.add_argument("--turn-id", type=int)
    p.add_argument("--format", choices=("json", "text"), default="text")
    p.set_defaults(func=run)


def read_passages_file(path: str) -> list[dict[str, Any]]:
    """Read ``{"text", "score", "source"}`` JSON lines; typed error on a bad line or key."""
    return [row for _, row in read_passage_rows(path, strict=True)]


def read_history(path: str) -> dict[str, Any]:
    """Read the ``--history`` JSON into ``DialogueState`` fields (an unknown key is an error)."""
    file = Path(path)
    if not file.exists():
        raise InputError(f"history file not found: {path}")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected an object with 'turns'")
    check_keys(data, DialogueState.model_fields, where=path)
    return data


def build_input(args: argparse.Namespace) -> dict[str, Any]:
    passages: list[dict[str, Any]] = [{"text": t} for t in args.passage]
    if args.passages_file:
        passages += read_passages_file(args.passages_file)
    data: dict[str, Any] = {
        "query": args.query,
        "response": args.response,
        "passages": passages,
        "session_id": args.session_id,
        "turn_id": args.turn_id,
    }
    if args.history:
        data["dialogue"] = read_history(args.history)
    if args.kb:
        from guardrail.knowledge import open_knowledge_base

        data["knowledge_base"] = open_knowledge_base(args.kb)
    return data


def render_text(report: GuardReport) -> str:
    """A readable summary: verdict, confidence, action, annotated answer, flags."""
    v = report.verdict
    lines = [
        f"verdict:    {v.label.value}"
        + (
            f"  (score {v.nli_score:.3f} vs threshold {v.threshold:.3f})"
            if v.nli_score is not None and v.threshold is not None
            else ""
        )
        + (f" — {v.reason}" if v.reason else ""),
        f"confidence: {report.confidence:.3f}",
        f"action:     {report.recommendation.action}",
    ]
    rec = report.recommendation
    if rec.action == "regenerate":
        lines.append(f"guidance:   {rec.guidance}")
    elif rec.action == "human_review":
        lines.append(f"reason:     {rec.reason}")
    lines.append(f"answer:     {report.annotated}")
    if report.corrected != report.original:
        lines.append(f"corrected:  {report.corrected}")
    for flag in report.hallucination_flags:
        lines.append(
            f"  flag {flag.type.value} [{flag.span.start}:{flag.span.end}] "
            f"conf {flag.confidence:.2f}: {flag.content!r}"
            + (f" — {flag.explanation}" if flag.explanation else "")
        )
    if report.coherence is not None:
        for issue in report.coherence.issues:
            lines.append(
                f"  coherence {issue.type} (severity {issue.severity:.2f}): {issue.description}"
            )
    if report.factual_validation is not None:
        for val in report.factual_validation.claim_validations:
            extra = f" (KB: {val.kb_value})" if val.kb_value else ""
            extra += f" (turn {val.turn_id}: {val.turn_text!r})" if val.turn_text else ""
            lines.append(f"  fact {val.status.value}: {val.claim.text!r}{extra}")
    skipped = [
        f"{r.name} ({r.status.value}: {r.reason})" for r in report.stages if r.status.value != "ran"
    ]
    if skipped:
        lines.append("stages not run: " + "; ".join(skipped))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from guardrail.config import GuardrailConfig
    from guardrail.pipeline import Guardrail

    config = GuardrailConfig.load(args.config)
    guard = Guardrail(config)
    if not args.response.strip():
        guard.prepare({"response": args.response})  # raises the typed InputError
    data = build_input(args)
    report = guard.invoke(data)
    if args.format == "json":
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report) + "\n")
    return 0
