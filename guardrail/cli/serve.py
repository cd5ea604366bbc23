"""``guardrail serve``: the check API, stored reports, metrics and the Verify/Explore page.

::

    guardrail serve --port 8000 --store results.sqlite        # http://127.0.0.1:8000/
    GUARDRAIL_API_TOKEN=secret guardrail serve                # API calls need the bearer token
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import Any

from guardrail.cli.store import DEFAULT_STORE, default_store
from guardrail.errors import MissingDependencyError


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the HTTP service and the web page")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--config", help="guardrail config file; its 'service:' section sets limits")
    p.add_argument(
        "--store",
        default=None,
        help=f"report store: a SQLite file or a postgresql:// URL (default: $GUARDRAIL_STORE or "
        f"{DEFAULT_STORE}; created when missing)",
    )
    p.add_argument("--no-store", action="store_true", help="keep no reports")
    p.add_argument(
        "--max-inflight",
        type=_whole_number(1),
        help="checks running at once (default: the config's service.max_concurrent_checks, 2)",
    )
    p.add_argument(
        "--max-queue",
        type=_whole_number(0),
        help="check requests waiting for a worker; past it a 503 with Retry-After "
        "(default: service.max_queue, 32)",
    )
    p.add_argument("--kb", help="knowledge base for checks that bring none (JSON/CSV/YAML/SQLite)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    p.set_defaults(func=run)


def _whole_number(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number ``≥ least``, else the flag's own one-line error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"must be a whole number ≥ {least}, not {text!r}")
        return value

    return parse


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ModuleNotFoundError as exc:
        raise MissingDependencyError("uvicorn", "service") from exc
    from guardrail.service import create_app, load_service_config
    from guardrail.store import open_store

    logging.getLogger("guardrail").setLevel(args.log_level.upper())
    config, settings = load_service_config(args.config)
    overrides = {"max_concurrent_checks": args.max_inflight, "max_queue": args.max_queue}
    settings = settings.with_values(**{k: v for k, v in overrides.items() if v is not None})
    store = None if args.no_store else open_store(args.store or default_store())
    kb = None
    if args.kb:
        from guardrail.knowledge import open_knowledge_base

        kb = open_knowledge_base(args.kb)
    app = create_app(config, store=store, settings=settings, knowledge_base=kb)
    where = f"store {store.where}" if store else "no store"
    auth = "bearer token required" if settings.api_token else "no auth"
    sys.stderr.write(
        f"guardrail: serving on http://{args.host}:{args.port}/ ({where}, {auth}); "
        "loading models…\n"
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
