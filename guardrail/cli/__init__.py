"""The ``guardrail`` command: one subcommand module per capability.

Each module in ``COMMANDS`` defines ``register(subparsers)`` adding its subcommand(s) with a
``func(args) -> int`` default. Modules are imported when the parser is built, so a subcommand
whose optional dependencies are missing still lists, and fails with an install hint when run.

Logging is the command's to set up (the library only adds a ``NullHandler``): warnings go to
stderr, ``-v`` adds info (and the per-check record of ``guardrail.check``, which repeats what
the commands print), ``-vv`` debug, ``--quiet`` only errors.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from guardrail._version import DISTRIBUTION, __version__
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
    "guardrail.cli.verifiers",
    "guardrail.cli.calibrate_claims",
    "guardrail.cli.config",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(
        prog="guardrail", description="Check LLM answers before users see them."
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__} (installed as {DISTRIBUTION})",
        help="print the version and exit",
    )
    loud = parser.add_mutually_exclusive_group()
    loud.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging on stderr (-vv: debug)"
    )
    loud.add_argument("--quiet", action="store_true", help="log only errors on stderr")
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


#: The logger of the one record per check (``guardrail.observability``): the commands print the
#: outcome themselves, so it is shown only with ``-v`` (``guardrail serve`` has ``--log-level``).
CHECK_LOGGER = "guardrail.check"


@contextmanager
def command_logging(
    verbose: int = 0, quiet: bool = False, command: str | None = None
) -> Iterator[None]:
    """The command's logging while it runs: a stderr handler on the root logger, the level from
    the flags; the previous state comes back afterwards (``main`` may be called in-process)."""
    level = logging.ERROR if quiet else logging.WARNING - 10 * min(verbose, 2)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root, check = logging.getLogger(), logging.getLogger(CHECK_LOGGER)
    saved = root.level, check.level
    root.addHandler(handler)
    root.setLevel(level)
    if command != "serve" and not verbose:
        check.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(saved[0])
        check.setLevel(saved[1])


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``guardrail`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (status 2, message printed) and --help (0)
        return 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 2
    try:
        with command_logging(args.verbose, args.quiet, args.command):
            return int(args.func(args))
    except GuardrailError as exc:
        print(f"guardrail: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("guardrail: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
