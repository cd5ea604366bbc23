"""``guardrail serve``: the check API, stored reports, metrics and the Verify/Explore page.

::

    guardrail serve --port 8000 --store results.sqlite        # http://127.0.0.1:8000/
    GUARDRAIL_API_TOKEN=secret guardrail serve                # API calls need the bearer token
    GUARDRAIL_API_TOKEN=secret guardrail serve --host 0.0.0.0 # a public interface needs one

On a loopback interface (127.0.0.0/8, ``::1``, ``localhost``) the service starts without a
token. On any other (``0.0.0.0``, ``::``, a LAN address, a name that resolves beyond loopback)
it refuses to start without ``$GUARDRAIL_API_TOKEN`` — every stored question, answer and
passage would be readable by anyone who reaches the port — unless ``--no-auth`` says to serve
it open, which it does with a warning.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import socket
import sys
from collections.abc import Callable
from typing import Any

from guardrail.cli.store import DEFAULT_STORE, default_store
from guardrail.errors import ConfigError, MissingDependencyError


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the HTTP service and the web page")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--no-auth",
        action="store_true",
        help="serve a non-loopback --host without $GUARDRAIL_API_TOKEN: every stored result is "
        "then readable, and checks can be run, by anyone who reaches the port",
    )
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


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only loopback interfaces: an address in 127.0.0.0/8 or ``::1``
    (brackets and IPv4-mapped forms too), ``localhost``, or a name every address of which is
    loopback. ``0.0.0.0``, ``::``, an empty host and a name that does not resolve are not."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if not name:
        return False
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return _loopback_address(name)
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {str(info[4][0]) for info in found}
    try:
        return bool(addresses) and all(_loopback_address(a) for a in addresses)
    except ValueError:
        return False


def _loopback_address(text: str) -> bool:
    """Whether the IP address ``text`` is loopback (``ValueError`` when it is no address)."""
    address = ipaddress.ip_address(text.partition("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def check_auth(host: str, port: int, token: str | None, no_auth: bool) -> str | None:
    """Whether ``guardrail serve`` may listen on ``host`` with this auth: raises
    :class:`ConfigError` (exit 2) for a non-loopback host with neither a token nor ``--no-auth``,
    and for ``--no-auth`` beside a token; returns the warning to print, if any."""
    from guardrail.service.settings import TOKEN_ENV

    if token and no_auth:
        raise ConfigError(
            f"--no-auth and ${TOKEN_ENV} contradict each other: unset {TOKEN_ENV} to serve "
            "without a token, or drop --no-auth"
        )
    if token or is_loopback(host):
        return None
    if not no_auth:
        raise ConfigError(
            f"refusing to serve on {host or repr(host)} without a token: it is not a loopback "
            "interface, so anyone who reaches the port could read every stored result and run "
            "checks. Either\n"
            f"  set a token:  export {TOKEN_ENV}=$(python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))')\n"
            "                (clients then send Authorization: Bearer <token>),\n"
            "  listen on loopback only:  --host 127.0.0.1 (the default),\n"
            "  or serve it open on purpose:  --no-auth (a warning is printed)."
        )
    return (
        f"guardrail: warning: --no-auth on {host}:{port}, not a loopback interface: every stored "
        "result (/v1/reports, the page's Explore view) is readable, and checks can be run, by "
        f"anyone who reaches the port; set {TOKEN_ENV} to require a bearer token\n"
    )


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
    warning = check_auth(args.host, args.port, settings.api_token, args.no_auth)
    if warning:
        sys.stderr.write(warning)
    store = None if args.no_store else open_store(args.store or default_store())
    kb = None
    if args.kb:
        from guardrail.knowledge import open_knowledge_base

        kb = open_knowledge_base(args.kb)
    app = create_app(config, store=store, settings=settings, knowledge_base=kb)
    where = f"store {store.where}" if store else "no store"
    auth = "bearer token required" if settings.api_token else "no auth"
    if warning:
        auth += " (--no-auth)"
    sys.stderr.write(
        f"guardrail: serving on http://{args.host}:{args.port}/ ({where}, {auth}); "
        "loading models…\n"
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
