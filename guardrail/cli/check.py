"""``guardrail check``: postprocess one answer and print the report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from guardrail.errors import InputError
from guardrail.inputs import DialogueState, check_keys, read_passage_rows
from guardrail.report import Correction, CorrectionType, GuardReport, HumanReview, Regenerate

#: ``guardrail check --help`` epilog: where the time of one check goes (measured; docs/how-to has the figures).
TIMING_EPILOG = """\
timing: each `guardrail check` is a new process, and most of its time is loading, not
checking: the imports and the models (verifier, embedder, spaCy) load before the answer is
checked. Measured on 2 cores: a cold check took 2.8 s wall clock in the base install (385 MB
peak RSS), 4.8 s in the full development install (torch is imported there by spaCy's thinc);
once the models are loaded, a check of a short answer takes 30-90 ms. For
many answers keep one process: `guardrail audit` (a file of answers), `guardrail serve`
(HTTP) or `Guardrail().batch(...)` in Python.

long answers: --response-file PATH, or --response-file - (or --response -) to read stdin.

decisions: by default each claim is decided on its own (--granularity claim): supported claims
are shown unmarked, uncertain ones annotated, confident problems repaired (knowledge-base value,
or an evidence value the verifier re-checks) or removed, and the answer is regenerated only when
what remains no longer answers the question or too little is left. --granularity answer is the
all-or-nothing rule: any unrepaired unsupported claim regenerates the whole answer."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="check one answer against evidence, a KB and the dialogue",
        epilog=TIMING_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--query", "-q", default="", help="the user's question")
    answer = p.add_mutually_exclusive_group(required=True)
    answer.add_argument("--response", "-r", help="the LLM answer to check ('-': read stdin)")
    answer.add_argument(
        "--response-file",
        metavar="PATH",
        help="read the answer from a UTF-8 file ('-': stdin), for answers too long for argv",
    )
    p.add_argument("--passage", "-p", action="append", default=[], help="evidence text (repeat)")
    p.add_argument("--passages-file", help='JSONL: {"text": ..., "score": 0.82, "source": ...}')
    p.add_argument("--kb", help="knowledge base: JSON, CSV, YAML or SQLite file")
    p.add_argument(
        "--history", help='dialogue JSON: {"turns": [...], "entities": [...], "topics": [...]}'
    )
    p.add_argument("--config", help="config file (YAML or JSON)")
    p.add_argument(
        "--granularity",
        choices=("claim", "answer"),
        default=None,
        help="decide claim by claim (the default) or all or nothing (decision.granularity)",
    )
    p.add_argument(
        "--verifier",
        help="verifier preset, path or HF id (models.verifier); A,B for a hybrid with fallback; "
        "a preset from a local copy: PRESET=DIR (`guardrail verifiers` lists the presets)",
    )
    p.add_argument(
        "--route",
        action="append",
        default=[],
        metavar="LANG=VERIFIER",
        help="check claims in LANG with another verifier (repeat; models.verifier_languages), "
        "e.g. zh=multilingual-minilmv2-l6-xnli, or zh=multilingual-minilmv2-l6-xnli=DIR for a "
        "local copy; other languages stay with --verifier",
    )
    p.add_argument("--session-id")
    p.add_argument("--turn-id", type=int)
    p.add_argument("--format", choices=("json", "text"), default="text")
    p.set_defaults(func=run)


def read_response(args: argparse.Namespace) -> str:
    """The answer: ``--response TEXT``, or read from ``--response-file PATH`` / stdin (``-``).

    Read whole as UTF-8, one final newline dropped (as ``$(cat FILE)`` would); the length
    limit is the guardrail's (``max_response_chars``: a typed ``InputError`` naming it).
    """
    path = args.response_file
    if path is None and args.response != "-":
        return str(args.response)
    if path is None or path == "-":
        where, data = "stdin", sys.stdin.buffer.read()
    else:
        file = Path(path)
        if not file.is_file():
            raise InputError(f"response file not found: {path}")
        where, data = path, file.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: the response is not UTF-8 text (byte {exc.start})") from exc
    return text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text


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


def band_override(report: GuardReport) -> str | None:
    """Why the action is not the band the confidence alone falls in (``None``: it is).

    Reads ``report.decision`` tolerantly (``band``, and ``gate`` or else ``overrides_band`` for
    the reason), so a report without those fields prints no reason instead of failing.
    """
    decision = getattr(report, "decision", None)
    band = getattr(decision, "band", None)
    band = getattr(band, "value", band)
    action = report.recommendation.action
    if not band or str(band) == action:
        return None
    # ``gate`` is the reason; ``overrides_band`` (newer reports) is a whole sentence with it.
    reason = getattr(decision, "gate", None) or getattr(decision, "overrides_band", None)
    why = f"action {action} although confidence {report.confidence:.3f} is in the {band} band"
    return f"{why}: {reason}" if reason else why


def _short(text: str, width: int = 72) -> str:
    """``text`` on one line, cut to ``width`` characters (``…`` marks a cut)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def delivered_line(report: GuardReport) -> str:
    """``delivered:`` and the text the user is shown, or that nothing is shown and why."""
    text = report.delivered_text
    if text is None:
        return f"delivered:  nothing delivered ({report.recommendation.action})"
    return f"delivered:  {text}" if text.strip() else "delivered:  (nothing left)"


def claim_lines(report: GuardReport) -> list[str]:
    """One row per claim: its outcome, ``p_supported`` and its text (shortened)."""
    if not report.claims:
        return []
    lines = ["claims:     outcome          p_supp  claim"]
    for claim in report.claims:
        outcome = claim.outcome.value if claim.outcome is not None else "-"
        p = f"{claim.p_supported:.3f}" if claim.p_supported is not None else "    -"
        where = f"  [{claim.span.start}:{claim.span.end}]".ljust(12)
        lines.append(f"{where}{outcome:<16} {p:>6}  {_short(claim.text)}")
    return lines


def correction_line(c: Correction) -> str:
    """A removal with its span and reason, a repair as old → new with its source, a spelling
    or grammar edit, or an annotation with its note."""
    where = f"[{c.span.start}:{c.span.end}]"
    old = _short(c.original.strip())
    if c.type is CorrectionType.REMOVAL:
        reason = (c.message or "").removeprefix("removed: ").strip() or "no reason given"
        return f"  removed {where} {old!r} — {reason}"
    if c.type is CorrectionType.ANNOTATION:
        return f"  annotated {where} {old!r} {c.replacement}"
    label = "repaired" if c.type is CorrectionType.FACTUAL else c.type.value
    line = f"  {label} {where} {old!r} → {c.replacement!r}"
    extra = [c.source] if c.source else []
    if c.type is CorrectionType.FACTUAL and c.verified is not None:
        extra.append("re-checked: " + ("supported" if c.verified else "not supported"))
    return line + (f" ({'; '.join(extra)})" if extra else "")


def render_text(report: GuardReport) -> str:
    """A readable summary: verdict, confidence, action, the answer and what is delivered, each
    claim's outcome, the removals and repairs with their spans, flags."""
    v = report.verdict
    lines = [
        f"verdict:    {v.label}"
        + (
            f"  (score {v.nli_score:.3f} vs threshold {v.threshold:.3f})"
            if v.nli_score is not None and v.threshold is not None
            else ""
        )
        + (f" — {v.reason}" if v.reason else ""),
        f"confidence: {report.confidence:.3f}",
        f"action:     {report.recommendation.action}",
    ]
    why = band_override(report)
    if why:
        lines.append(f"why:        {why}")
    rec = report.recommendation
    if isinstance(rec, Regenerate):
        lines.append(f"guidance:   {rec.guidance}")
    elif isinstance(rec, HumanReview):
        lines.append(f"reason:     {rec.reason}")
    lines.append(f"answer:     {report.original}")
    if report.corrected != report.original:
        lines.append(f"corrected:  {report.corrected}")
    lines.append(delivered_line(report))
    lines += claim_lines(report)
    edits = sorted(report.corrections, key=lambda c: (c.span.start, c.span.end))
    if edits:
        lines.append("corrections:")
        lines += [correction_line(c) for c in edits]
    coherence = report.coherence.issues if report.coherence is not None else []
    facts = report.factual_validation
    if report.hallucination_flags or coherence or (facts and facts.claim_validations):
        lines.append("findings:")
    for flag in report.hallucination_flags:
        lines.append(
            f"  flag {flag.type} [{flag.span.start}:{flag.span.end}] "
            f"conf {flag.confidence:.2f}: {flag.content!r}"
            + (f" — {flag.explanation}" if flag.explanation else "")
        )
    for issue in coherence:
        lines.append(
            f"  coherence {issue.type} (severity {issue.severity:.2f}): {issue.description}"
        )
    if facts is not None:
        for val in facts.claim_validations:
            extra = f" (KB: {val.kb_value})" if val.kb_value else ""
            extra += f" (turn {val.turn_id}: {val.turn_text!r})" if val.turn_text else ""
            lines.append(f"  fact {val.status}: {val.claim.text!r}{extra}")
    skipped = [
        f"{r.name} ({r.status}: {r.reason})" for r in report.stages if r.status.value != "ran"
    ]
    if skipped:
        lines.append("stages not run: " + "; ".join(skipped))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from guardrail.config import GuardrailConfig
    from guardrail.pipeline import Guardrail

    config = GuardrailConfig.load(args.config)
    if args.granularity is not None:
        decision = config.decision.model_copy(update={"granularity": args.granularity})
        config = config.model_copy(update={"decision": decision})
    verifier = None
    if args.verifier or args.route:
        from guardrail.verifiers.loader import load_routed, load_verifier
        from guardrail.verifiers.routing import route_options
        from guardrail.verifiers.spec import LanguageRoutes, parse_languages

        spec = args.verifier or config.models.verifier  # parsed once, when it loads
        update: dict[str, Any] = {"verifier": spec}
        if args.route:
            update["verifier_languages"] = route_options(args.route)
        models = config.models.model_copy(update=update)
        config = config.model_copy(update={"models": models})
        # a missing model (the default or a route's) ends here: one line, exit 2
        verifier = load_verifier(spec)
        languages = parse_languages(models.verifier_languages)
        if isinstance(languages, LanguageRoutes):
            for _, route in languages.routes:
                load_verifier(route)
        verifier = load_routed(verifier, languages)
    args.response = read_response(args)
    guard = Guardrail(config, verifier=verifier)
    if not args.response.strip():
        guard.prepare({"response": args.response})  # raises the typed InputError
    data = build_input(args)
    report = guard.invoke(data)
    if args.format == "json":
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report) + "\n")
    return 0
