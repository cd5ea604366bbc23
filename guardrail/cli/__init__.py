"""The ``guardrail`` command: one subcommand module per capability.

Each module in ``COMMANDS`` defines ``register(subparsers)`` adding its subcommand(s) with a
``func(args) -> int`` default. Modules are imported when the parser is built, so a subcommand
whose optional dependencies are missing still lists, and fails with an install hint when run.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from guardrail.errors import GuardrailError

COMMANDS: tuple[str, ...] = (
    "guardrail.cli.check",
    "guardrail.cli.demo",
    "guardrail.cli.train",
    "guardrail.cli.kb",
    "guardrail.cli.ask",
    "guardrail.cli.evaluate",
    "guardrail.cli.serve",
    "guardrail.cli.store",
    "guardrail.cli.audit",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(
        prog="guardrail", description="Check LLM answers before users see them."
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``guardrail`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (status 2, message printed) and --help (0)
        return 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 2
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args))
    except GuardrailError as exc:
        print(f"guardrail: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("guardrail: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
