"""``guardrail store``: inspect and export stored reports.

::

    guardrail store list [--session S] [--action regenerate]     # newest first
    guardrail store show demo [0] [--format json]                 # a session's turns / one report
    guardrail store export --session demo --format paths|json|metta
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from guardrail.errors import InputError

DEFAULT_STORE = "results.sqlite"


def default_store() -> str:
    """``$GUARDRAIL_STORE`` or ``results.sqlite`` in the working directory."""
    return os.environ.get("GUARDRAIL_STORE") or DEFAULT_STORE


def _db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        "--store",
        dest="db",
        default=None,
        help=f"report store: a SQLite file or a postgresql:// URL (default: $GUARDRAIL_STORE or "
        f"{DEFAULT_STORE})",
    )


def register(sub: Any) -> None:
    p = sub.add_parser("store", help="list, show and export stored reports")
    store_sub = p.add_subparsers(dest="store_command", required=True)

    ls = store_sub.add_parser("list", help="stored checks, newest first (or the sessions)")
    _db(ls)
    ls.add_argument("--session")
    ls.add_argument("--action", help="accept, accept_with_flags, correct_and_deliver, …")
    ls.add_argument("--verdict", help="VERIFIED, HALLUCINATION, UNVERIFIED or NOTHING_TO_CHECK")
    ls.add_argument("--limit", type=int, default=50)
    ls.set_defaults(func=run_list)

    show = store_sub.add_parser("show", help="a session's turns, or one turn's report")
    _db(show)
    show.add_argument("session")
    show.add_argument("turn", nargs="?", type=int)
    show.add_argument("--attempt", type=int, help="an earlier attempt of the turn")
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.set_defaults(func=run_show)

    exp = store_sub.add_parser("export", help="a session in the stored-results key layout")
    _db(exp)
    exp.add_argument("--session", required=True)
    exp.add_argument("--turn", type=int)
    exp.add_argument("--format", choices=("paths", "json", "metta"), default="paths")
    exp.add_argument("--config", help="config file whose recommendation bands the MeTTa uses")
    exp.set_defaults(func=run_export)


def _open(args: argparse.Namespace) -> Any:
    from guardrail.store import open_store

    return open_store(args.db or default_store(), create=False)


def run_list(args: argparse.Namespace) -> int:
    store = _open(args)
    page = store.search(
        session_id=args.session, action=args.action, verdict=args.verdict, limit=args.limit
    )
    for item in page.items:
        sys.stdout.write(
            f"{item.created_at:%Y-%m-%d %H:%M:%S}  {item.session_id}/{item.turn_id}"
            f"#{item.attempt}  {item.verdict:<13} {item.action:<19} {item.confidence:.3f}  "
            f"{item.response[:60]!r}\n"
        )
    sys.stdout.write(f"{len(page.items)} of {page.total}\n")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from guardrail.cli.check import render_text

    store = _open(args)
    if args.turn is None:
        turns = store.turns(args.session)
        if not turns:
            raise InputError(f"nothing stored for session {args.session!r} in {store.where}")
        if args.format == "json":
            data = [t.model_dump(mode="json", exclude={"input", "report"}) for t in turns]
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            return 0
        for t in turns:
            sys.stdout.write(
                f"turn {t.turn_id} (attempt {t.attempt}, {t.created_at:%Y-%m-%d %H:%M:%S})  "
                f"{t.verdict}  {t.action}  {t.confidence:.3f}\n  Q: {t.query}\n  A: {t.response}\n"
            )
        return 0
    stored = store.get(args.session, args.turn, args.attempt)
    if stored is None:
        raise InputError(f"nothing stored for session {args.session!r} turn {args.turn}")
    if args.format == "json":
        sys.stdout.write(json.dumps(stored.model_dump(mode="json"), indent=2, ensure_ascii=False))
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(
        f"{stored.session_id}/{stored.turn_id} attempt {stored.attempt}, "
        f"{stored.created_at:%Y-%m-%d %H:%M:%S} UTC\nquery:      {stored.query}\n"
    )
    sys.stdout.write(render_text(stored.guard_report()) + "\n")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from guardrail.store import export_session

    thresholds = None
    if args.config:
        from guardrail.config import GuardrailConfig

        thresholds = GuardrailConfig.load(args.config).thresholds
    store = _open(args)
    sys.stdout.write(export_session(store, args.session, args.format, args.turn, thresholds))
    return 0
