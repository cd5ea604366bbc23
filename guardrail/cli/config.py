"""``guardrail config``: the configuration, documented by itself.

``--schema`` prints the JSON schema of :class:`~guardrail.GuardrailConfig` (every key with its
type, default and description); without it the command prints a configuration as YAML: a
profile's values (``--profile``, default ``offline``) or a file loaded over its profile
(``--config``), which a file of your own can start from.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EPILOG = """\
a config file names only what it changes, e.g. `guardrail config > guardrail.yaml`, then keep
the keys you set. Every key, its default and its meaning: `guardrail config --schema`, or the
configuration page of the docs (generated from the same schema)."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "config",
        help="print the configuration's JSON schema (--schema) or a configuration as YAML",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--schema",
        action="store_true",
        help="the JSON schema of the configuration: every key, its type, default and description",
    )
    what.add_argument(
        "--defaults",
        action="store_true",
        help="the values of a profile as YAML (what is printed without --schema)",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "--profile",
        choices=("offline", "online"),
        default="offline",
        help="the profile whose values are printed (default: offline)",
    )
    source.add_argument(
        "--config", metavar="FILE", help="print this YAML/JSON file as loaded over its profile"
    )
    p.set_defaults(func=run)


def render_schema() -> str:
    """The JSON schema of ``GuardrailConfig``, indented."""
    from guardrail.config import GuardrailConfig

    return json.dumps(GuardrailConfig.model_json_schema(), indent=2, ensure_ascii=False)


def render_yaml(profile: str = "offline", path: str | None = None) -> str:
    """A configuration as YAML: ``path`` loaded over its profile, else ``profile``'s values."""
    import yaml

    from guardrail.config import GuardrailConfig

    config = GuardrailConfig.load(path) if path else GuardrailConfig.from_profile(profile)
    data = config.model_dump(mode="json")
    return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def run(args: argparse.Namespace) -> int:
    if args.schema:
        sys.stdout.write(render_schema() + "\n")
    else:
        sys.stdout.write(render_yaml(args.profile, args.config))
    return 0
