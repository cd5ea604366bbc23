"""``guardrail kb``: build and inspect a SQLite knowledge base.

::

    guardrail kb import people.json --db kb.sqlite     # JSON, CSV or YAML; one transaction
                                                       # (a bad key or entity: exit 2, none)
    guardrail kb show "John Smith" --db kb.sqlite      # name, alias or close spelling
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from guardrail.errors import KnowledgeBaseError


def register(sub: Any) -> None:
    p = sub.add_parser("kb", help="import into / inspect a SQLite knowledge base")
    kb_sub = p.add_subparsers(dest="kb_command", required=True)

    imp = kb_sub.add_parser("import", help="import a JSON, CSV or YAML file (all or nothing)")
    imp.add_argument("file", help="the file to import")
    imp.add_argument("--db", required=True, help="SQLite file (created when missing)")
    imp.add_argument(
        "--replace", action="store_true", help="replace the whole knowledge base, not merge"
    )
    imp.set_defaults(func=run_import)

    show = kb_sub.add_parser("show", help="show one entity with its aliases and attributes")
    show.add_argument("entity", help="entity name, alias or id")
    show.add_argument("--db", required=True, help="SQLite file")
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.set_defaults(func=run_show)


def run_import(args: argparse.Namespace) -> int:
    from guardrail.knowledge import SQLiteKnowledgeBase, load_entities

    try:
        entities = load_entities(args.file)  # every entity validated before the database opens
    except KnowledgeBaseError as exc:
        raise KnowledgeBaseError(f"{exc}; nothing was imported into {args.db}") from exc
    kb = SQLiteKnowledgeBase(args.db, create=True)
    count = kb.import_entities(entities, replace=args.replace)
    sys.stdout.write(f"imported {count} entities into {args.db} ({kb.count()} in total)\n")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from guardrail.knowledge import SQLiteKnowledgeBase

    kb = SQLiteKnowledgeBase(args.db)
    entity = kb.get(args.entity) or kb.find_entity(args.entity)
    if entity is None:
        raise KnowledgeBaseError(f"no entity named {args.entity!r} in {args.db}")
    if args.format == "json":
        sys.stdout.write(json.dumps(entity.model_dump(), indent=2) + "\n")
        return 0
    lines = [f"{entity.name}  (id {entity.id}" + (f", {entity.type})" if entity.type else ")")]
    if entity.aliases:
        lines.append("  aliases: " + ", ".join(entity.aliases))
    for key, attr in entity.attributes.items():
        source = f", source {attr.source}" if attr.source else ""
        lines.append(f"  {key}: {attr.value}  (confidence {attr.confidence:.2f}{source})")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
