"""MkDocs hook: the reference pages that are generated from the code, at build time.

A page asks for generated content with a marker line ``<!-- generated: NAME -->``; the hook
replaces the line with the markdown of ``GENERATORS[NAME]`` (an unknown name fails the build).
So the CLI reference is ``guardrail.cli.build_parser()``'s own help, the HTTP reference is the
FastAPI app's OpenAPI schema (the app factory is called with a stand-in checker: no model loads,
no network), the configuration tables are the config models' JSON schema (every field, its type
and its description, the docstring under it), with its default in the ``offline`` profile and
the ``online`` value where it differs, the key layout is ``guardrail.store.keys.turn_paths`` run on a report with one item
in every indexed subtree, and the benchmark tables are read from ``benchmarks/results/*.json``.

The hook also writes ``reference/openapi.json`` (the schema itself) into the site and turns the
Sphinx roles of the docstrings (``:class:`~guardrail.Guardrail```) into plain code.
"""

from __future__ import annotations

import ast
import enum
import inspect
import json
import os
import re
import sys
import textwrap
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `mkdocs build` from the repository root: import this checkout
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- generated: ([a-z0-9-]+) -->$", re.M)
RESULTS = ROOT / "benchmarks" / "results"
HELP_WIDTH = "100"


# --- helpers --------------------------------------------------------------------------------


def cell(text: Any) -> str:
    """One markdown table cell: pipes escaped, newlines folded."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: Any) -> str:
    """Inline code that survives a table cell (backticks inside become quotes)."""
    value = cell(text).replace("`", "'")
    return f"`{value}`" if value else ""


def plain_roles(text: str) -> str:
    """``:class:`~a.b.C``` → ```C```, ``:func:`a.b``` → ```a.b```; rst ````x```` → ```x```."""

    def role(m: re.Match[str]) -> str:
        target = m.group(2)
        return f"`{target.split('.')[-1]}`" if m.group(1) else f"`{target}`"

    text = re.sub(r":[a-z]+:`(~?)([^`]+)`", role, text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def docline(text: str | None) -> str:
    """A docstring as one table cell."""
    return cell(plain_roles(inspect.cleandoc(text))) if text else ""


@contextmanager
def help_width() -> Iterator[None]:
    """argparse wraps help at $COLUMNS: a fixed width makes the page reproducible."""
    saved = {k: os.environ.get(k) for k in ("COLUMNS", "NO_COLOR")}
    os.environ["COLUMNS"], os.environ["NO_COLOR"] = HELP_WIDTH, "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# --- CLI ------------------------------------------------------------------------------------


def cli_commands() -> list[tuple[str, str, Any]]:
    """``(command, one-line help, parser)`` for ``guardrail`` and every (nested) subcommand."""
    import argparse

    from guardrail.cli import build_parser

    out: list[tuple[str, str, Any]] = []

    def walk(name: str, summary: str, parser: argparse.ArgumentParser) -> None:
        out.append((name, summary, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {a.dest: a.help or "" for a in action._choices_actions}
                for sub_name, sub in action.choices.items():
                    walk(f"{name} {sub_name}", helps.get(sub_name, ""), sub)

    walk("guardrail", "", build_parser())
    return out


def render_cli() -> str:
    """Every subcommand's ``--help``, as argparse prints it, behind a summary table."""
    with help_width():
        commands = [(n, s, p.format_help()) for n, s, p in cli_commands()]
    lines = ["| command | what it does |", "|---|---|"]
    for name, summary, _ in commands[1:]:
        lines.append(f"| [`{name}`](#{anchor(name)}) | {cell(summary)} |")
    lines.append("")
    for name, summary, text in commands:
        lines += [f"## `{name}` {{#{anchor(name)}}}", ""]
        if summary:
            lines += [cell(summary[:1].upper() + summary[1:]) + ".", ""]
        text = re.sub(r"\x1b\[[0-9;]*m", "", text).rstrip()
        lines += ["```text", text, "```", ""]
    return "\n".join(lines)


def anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# --- HTTP -----------------------------------------------------------------------------------


class _NoChecker:
    """Stands in for ``Guardrail``: the schema needs the routes, not the models."""

    config: Any = None


def openapi_schema() -> dict[str, Any]:
    """The service's OpenAPI schema from the app factory (no model is loaded)."""
    from guardrail.config import GuardrailConfig
    from guardrail.service.app import create_app
    from guardrail.service.settings import ServiceSettings

    checker = _NoChecker()
    checker.config = GuardrailConfig.load(None)
    app = create_app(checker.config, guard=checker, settings=ServiceSettings())
    schema: dict[str, Any] = app.openapi()
    return schema


def schema_type(s: dict[str, Any]) -> str:
    """A JSON schema as a short type: ``string``, ``integer | null``, ``array of Passage``."""
    if "$ref" in s:
        name = s["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{anchor(name)})"
    for key in ("anyOf", "oneOf"):
        if key in s:
            return " \\| ".join(dict.fromkeys(schema_type(x) for x in s[key]))
    if "allOf" in s and len(s["allOf"]) == 1:
        return schema_type(s["allOf"][0])
    if "enum" in s:
        return " \\| ".join(code(json.dumps(v)) for v in s["enum"])
    if "const" in s:
        return code(json.dumps(s["const"]))
    kind = s.get("type", "any")
    if kind == "array":
        return f"array of {schema_type(s.get('items', {}))}"
    if kind == "object" and isinstance(s.get("additionalProperties"), dict):
        return f"object of {schema_type(s['additionalProperties'])}"
    if isinstance(kind, list):
        return " \\| ".join(kind)
    fmt = f" ({s['format']})" if "format" in s else ""
    return f"{kind}{fmt}"


def limits(s: dict[str, Any]) -> str:
    marks = {"minimum": "≥", "maximum": "≤", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
    return ", ".join(f"{sign} {s[k]}" for k, sign in marks.items() if k in s)


def render_http() -> str:
    """Every operation (parameters, body, responses), then every schema's fields."""
    schema = openapi_schema()
    info = schema["info"]
    lines = [
        f"Generated from the OpenAPI {schema['openapi']} schema of `{info['title']}` "
        f"{info['version']} ({cell(info.get('summary', ''))}); the same schema is "
        "[`openapi.json`](openapi.json) here and `GET /openapi.json` on a running server.",
        "",
        "| method | path | summary |",
        "|---|---|---|",
    ]
    ops = [(p, m, op) for p, item in schema["paths"].items() for m, op in item.items()]
    for path, method, op in ops:
        ref = anchor(f"{method} {path}")
        lines.append(f"| `{method.upper()}` | [`{path}`](#{ref}) | {cell(op.get('summary', ''))} |")
    lines.append("")
    for path, method, op in ops:
        lines += [f"## `{method.upper()} {path}` {{#{anchor(f'{method} {path}')}}}", ""]
        lines += [cell(op.get("summary", "")) + ".", ""]
        if op.get("description"):
            lines += [plain_roles(op["description"]), ""]
        params = op.get("parameters", [])
        if params:
            lines += [
                "| parameter | in | type | required | default / limits |",
                "|---|---|---|---|---|",
            ]
            for p in params:
                s = p.get("schema", {})
                extra = ", ".join(
                    x
                    for x in (
                        f"default {code(json.dumps(s['default']))}" if "default" in s else "",
                        limits(s),
                    )
                    if x
                )
                lines.append(
                    f"| `{p['name']}` | {p['in']} | {schema_type(s)} | "
                    f"{'yes' if p.get('required') else 'no'} | {extra} |"
                )
            lines.append("")
        body = op.get("requestBody")
        if body:
            for media, content in body.get("content", {}).items():
                lines += [
                    f"Request body ({code(media)}): {schema_type(content.get('schema', {}))}.",
                    "",
                ]
        lines += ["| status | meaning | body |", "|---|---|---|"]
        for status, resp in op.get("responses", {}).items():
            content = resp.get("content", {})
            body_type = ", ".join(schema_type(c.get("schema", {})) for c in content.values())
            lines.append(f"| {status} | {cell(resp.get('description', ''))} | {body_type} |")
        lines.append("")
    lines += ["## Schemas", ""]
    for name, s in schema.get("components", {}).get("schemas", {}).items():
        lines += [f"### {name} {{#{anchor(name)}}}", ""]
        if s.get("description"):
            lines += [plain_roles(inspect.cleandoc(s["description"])), ""]
        if "enum" in s:
            lines += ["One of " + ", ".join(code(json.dumps(v)) for v in s["enum"]) + ".", ""]
            continue
        props = s.get("properties", {})
        if not props:
            lines += [f"Type: {schema_type(s)}.", ""]
            continue
        required = set(s.get("required", []))
        lines += ["| field | type | required | default |", "|---|---|---|---|"]
        for field, f in props.items():
            default = code(json.dumps(f["default"])) if "default" in f else ""
            ro = " (read-only)" if f.get("readOnly") else ""
            lines.append(
                f"| `{field}`{ro} | {schema_type(f)} | {'yes' if field in required else 'no'} "
                f"| {default} |"
            )
        if s.get("additionalProperties") is False:
            lines += ["", "Unknown fields are rejected (422)."]
        lines.append("")
    return "\n".join(lines)


# --- configuration --------------------------------------------------------------------------


def attribute_docs(cls: type) -> dict[str, str]:
    """The docstrings written under class attributes (``x: int = 1`` then ``\"\"\"...\"\"\"``)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or klass.__module__.startswith("pydantic"):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, [*body[1:], None], strict=True):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = after.value.value
    return docs


def type_name(annotation: Any) -> str:
    """``Literal['a', 'b'] | None`` → ``"a" | "b" | null``; classes by name."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        return f"list of {type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping of {type_name(args[1])}" if len(args) == 2 else "mapping"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " | ".join(json.dumps(m.value) for m in annotation)
    return getattr(annotation, "__name__", str(annotation))


def as_json(value: Any) -> str:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, enum.Enum):
        value = value.value
    return json.dumps(value, ensure_ascii=False)


def is_section(annotation: Any) -> bool:
    from pydantic import BaseModel

    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def resolved(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A field's JSON schema with its ``$ref``s to enums replaced by the enum's schema."""
    if "$ref" in prop:
        target = defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
        return prop if "properties" in target else resolved(target, defs)
    out = dict(prop)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in out:
            out[key] = [resolved(x, defs) for x in out[key]]
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = resolved(out[key], defs)
    return out


def config_rows(
    model: type, offline: Any, online: Any, prefix: str = "", schema: dict[str, Any] | None = None
) -> Iterator[tuple[str, type, list[str]]]:
    """``(section key, model class, table rows)`` for a config model and its sub-sections: the
    type and the description of each field come from the model's JSON schema
    (``model_json_schema()``, the docstring under each field), the defaults from the profiles."""
    root = schema if schema is not None else model.model_json_schema()  # type: ignore[attr-defined]
    defs = root.get("$defs", {})
    node = root if model.__name__ == root.get("title") else defs.get(model.__name__, {})
    props = node.get("properties", {})
    docs = attribute_docs(model)  # for models without ``use_attribute_docstrings``
    rows: list[str] = []
    subsections: list[tuple[str, type, Any, Any]] = []
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        if field.exclude:
            continue
        key = f"{prefix}{name}"
        prop = props.get(name, {})
        meaning = docline(prop.get("description") or docs.get(name))
        a, b = getattr(offline, name), getattr(online, name) if online is not None else None
        if is_section(field.annotation):
            subsections.append((key, field.annotation, a, b))
            rows.append(f"| `{key}` | section | see [`{key}`](#{anchor(key)}) | | {meaning} |")
            continue
        other = code(as_json(b)) if online is not None and as_json(a) != as_json(b) else ""
        kind = schema_type(resolved(prop, defs)) if prop else cell(type_name(field.annotation))
        rows.append(f"| `{key}` | {kind} | {code(as_json(a))} | {other} | {meaning} |")
    yield prefix.rstrip("."), model, rows
    for key, sub, a, b in subsections:
        yield from config_rows(sub, a, b, f"{key}.", root)


def render_config() -> str:
    """One table per config section: every field, its type, defaults and meaning."""
    from guardrail.config import GuardrailConfig
    from guardrail.service.settings import ServiceSettings

    offline, online = GuardrailConfig.load(None), GuardrailConfig.from_profile("online")
    lines: list[str] = []
    header = ["| key | type | default (offline) | online | meaning |", "|---|---|---|---|---|"]
    for key, model, rows in config_rows(GuardrailConfig, offline, online):
        title = f"`{key}`" if key else "Top level"
        ref = f" {{#{anchor(key)}}}" if key else ""
        lines += [
            f"### {title}{ref}",
            "",
            f"`{model.__module__}.{model.__name__}`: " + docline(model.__doc__),
            "",
            *header,
            *rows,
            "",
        ]
    service = ServiceSettings()
    for key, model, rows in config_rows(ServiceSettings, service, None, "service."):
        lines += [
            f"### `{key}` {{#{anchor(key)}}}",
            "",
            "Read by `guardrail serve --config FILE` "
            f"only (`{model.__module__}.{model.__name__}`): "
            + docline(model.__doc__)
            + " The bearer token comes from `$GUARDRAIL_API_TOKEN`, never from the file.",
            "",
            *header,
            *rows,
            "",
        ]
    from chains.stream_checks import StreamingConfig

    for key, model, rows in config_rows(StreamingConfig, StreamingConfig(), None, "streaming."):
        lines += [
            f"### `{key}` {{#{anchor(key)}}}",
            "",
            "Read by chains' guarded streams, given to the chain as `streaming=` "
            f"(`{model.__module__}.{model.__name__}`; a `streaming` section of the guardrail "
            "config is deprecated: it still works for one release, with a warning): "
            + docline(model.__doc__),
            "",
            *header,
            *rows,
            "",
        ]
    return "\n".join(lines)


# --- stored-results key layout --------------------------------------------------------------


def sample_report() -> tuple[dict[str, Any], dict[str, Any]]:
    """An input and a report with one item in each indexed subtree (built, not checked)."""
    from guardrail import report as r

    span = r.Span(start=0, end=4)
    claim = r.ExtractedClaim(text="John's email is x", subject="John", predicate="email",
                             object="x", span=span, attribute="email")  # fmt: skip
    report = r.GuardReport(
        original="John's email is x.",
        corrected="John's email is y.",
        annotated="John's email is y.",
        coherence=r.CoherenceResult(
            issues=[
                r.CoherenceIssue(
                    type="entity_mismatch", description="…", severity=0.5, span=span, suggestion="…"
                )
            ]
        ),
        factual_validation=r.FactualValidationResult(
            claim_validations=[
                r.ClaimValidation(claim=claim, status=r.ValidationStatus.CONTRADICTED, kb_value="y")
            ]
        ),
        hallucination_flags=[
            r.HallucinationFlag(
                type=r.HallucinationType.WRONG_ATTRIBUTE,
                span=span,
                content="x",
                confidence=0.9,
                severity=0.8,
            )
        ],
        corrections=[
            r.Correction(type=r.CorrectionType.FACTUAL, span=span, original="x", replacement="y")
        ],
        confidence=0.5,
        recommendation=r.CorrectAndDeliver(),
        claims=[r.Claim(text="John's email is x.", span=span)],
    )
    return {"query": "…", "response": report.original}, report.model_dump(mode="json")


def render_keys() -> str:
    """Every path ``turn_paths`` emits, indices as ``{i}``, with the JSON type of its value."""
    from guardrail.store.keys import ROOT as KEY_ROOT
    from guardrail.store.keys import turn_paths

    data, report = sample_report()
    seen: dict[str, str] = {}
    for path, value in turn_paths("SESSION", 0, data, report):
        path = path.replace(f"{KEY_ROOT}/SESSION/0/", "")
        path = re.sub(r"/\d+/", "/{i}/", path)
        kind = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
            type(value), "string or null" if value is None else type(value).__name__
        )
        seen.setdefault(path, kind)
    lines = [
        f"Every leaf under `{KEY_ROOT}/{{session_id}}/{{turn_id}}/`, in the order "
        "`guardrail store export` writes them:",
        "",
        "| key | value |",
        "|---|---|",
    ]
    lines += [f"| `{path}` | {kind} |" for path, kind in seen.items()]
    return "\n".join(lines)


# --- benchmarks -----------------------------------------------------------------------------


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / name).read_text(encoding="utf-8"))
    return data


def pct(x: Any) -> str:
    return "" if x is None else f"{100 * float(x):.1f}"


DECISION_SETS = ("qags", "factcheck_gpt", "lfqa_rag", "lfqa", "multi-sentence+lfqa", "wice",
                 "halueval", "all")  # fmt: skip
DECISION_RUNS = (
    ("decisions_claim_level.json", "claim-level (default)"),
    ("decisions_answer_level.json", "answer-level"),
    ("decisions_before_claim_level.json", "before claim-level decisions"),
)


def render_decisions(split: str) -> str:
    """Sentence delivery, verdict and claim bAcc per set for each decisions run, one split."""
    lines = [
        "| run | set | answers | supported shown unmarked | unsupported shown unmarked "
        "| delivery bAcc | verdict bAcc | claim bAcc | fully supported sent back |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, label in DECISION_RUNS:
        sets = _load(name)["splits"][split]
        for key in DECISION_SETS:
            s = sets.get(key)
            if s is None:
                continue
            lines.append(
                f"| {label} | `{key}` | {s['n']} | {pct(s['supported_shown'])} % "
                f"| {pct(s['unsupported_shown'])} % | {pct(s['delivery_bacc'])} "
                f"| {pct(s['verdict_bacc'])} | {pct(s['claim_bacc'])} "
                f"| {pct(s['supported_sent_back'])} % |"
            )
    lines += ["", "Files: " + ", ".join(f"`{n}`" for n, _ in DECISION_RUNS) + "."]
    return "\n".join(lines)


#: Levers tried for claim accuracy, each with the file of its run; the dev figures of a
#: calibration refit are fitted on those dev parts (in-sample), the others are not.
CLAIM_LEVERS = (
    ("decisions_claim_level.json", "what ships", "yes"),
    ("decisions_calibration_refit_five_features_not_shipped.json", "calibration refit, 5 features (dev in-sample)", "no"),
    ("decisions_calibration_shape_intercepts_not_shipped.json", "calibration with per-shape intercepts (dev in-sample)", "no"),
    ("decisions_hybrid_bundled_v4_dev_not_shipped.json", "bundled + verifier-v4 hybrid", "no"),
    ("decisions_four_windows_not_shipped.json", "4 windows per claim (`four_windows.yaml`)", "no"),
    ("decisions_six_windows_not_shipped.json", "6 windows per claim (`six_windows.yaml`)", "no"),
    ("decisions_exhaustive_windows_dev_not_shipped.json", "every window (`exhaustive_windows.yaml`)", "no"),
)  # fmt: skip
LEVER_SETS = ("qags", "factcheck_gpt", "wice", "halueval", "lfqa_rag", "all")


def render_claim_levers() -> str:
    """Claim bAcc of each lever of :data:`CLAIM_LEVERS` per split it was run on."""
    lines = [
        "| lever | split | " + " | ".join(f"`{k}`" for k in LEVER_SETS) + " | shipped | file |",
        "|---|---|" + "---:|" * len(LEVER_SETS) + "---|---|",
    ]
    for name, label, shipped in CLAIM_LEVERS:
        for split, sets in _load(name)["splits"].items():
            cells = [pct((sets.get(k) or {}).get("claim_bacc")) for k in LEVER_SETS]
            lines.append(
                f"| {label} | {split} | " + " | ".join(cells) + f" | {shipped} | `{name}` |"
            )
    return "\n".join(lines)


def render_decision_runs() -> str:
    """Where each decisions file comes from: commit, config, time."""
    lines = ["| file | commit | config | dev time (wall s) | test time (wall s) |",
             "|---|---|---|---:|---:|"]  # fmt: skip
    names = [n for n, _ in DECISION_RUNS]
    names += sorted(p.name for p in RESULTS.glob("decisions_*.json") if p.name not in names)
    for name in names:
        d = _load(name)
        c = d.get("code") or {}
        commit = (c.get("commit") or "")[:10] + (" (dirty)" if c.get("dirty") else "")
        seconds = d.get("seconds") or {}
        config = d.get("config") or "offline defaults"
        config = "decision.granularity: answer" if str(config).endswith("answer.yaml") else config
        lines.append(
            f"| `{name}` | {code(commit)} | {cell(config)} "
            f"| {(seconds.get('dev') or {}).get('wall', '')} | {(seconds.get('test') or {}).get('wall', '')} |"
        )
    return "\n".join(lines)


def render_latency() -> str:
    lines = ["| file | p50 ms | p95 ms | answers/s | batch answers/s | naive p50 ms | peak MB |",
             "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for path in sorted(RESULTS.glob("latency_*.json")):
        d = _load(path.name)
        g, n = d.get("guardrail") or {}, d.get("naive") or {}  # naive: None when skipped
        fmt = lambda x: "" if x is None else f"{x:.0f}" if x >= 20 else f"{x:.1f}"  # noqa: E731
        lines.append(
            f"| `{path.name}` | {fmt(g.get('p50_ms'))} | {fmt(g.get('p95_ms'))} "
            f"| {fmt(g.get('answers_per_s'))} | {fmt(g.get('batch_answers_per_s'))} "
            f"| {fmt(n.get('p50_ms'))} | {fmt(d.get('peak_mb'))} |"
        )
    return "\n".join(lines)


VERIFIER_SETS = ("halueval_qa", "wice", "factcheck_gpt", "summedits")


def portable(model: str) -> str:
    """A model folder inside this checkout as a repository path (no machine's folders)."""
    return re.sub(r"^/\S*?/(guardrail/|runs/|checkpoints/)", r"\1", model)


def render_verifier() -> str:
    lines = ["| file | model | pairs per set | SNLI 3-way acc | "
             + " | ".join(f"{s} bAcc" for s in VERIFIER_SETS) + " | ship score |",
             "|---|---|---:|---:|" + "---:|" * len(VERIFIER_SETS) + "---:|"]  # fmt: skip
    for path in sorted(RESULTS.glob("verifier_*.json")):
        d = _load(path.name)
        acc = d.get("accuracy")
        if not acc:
            continue
        row = [str((acc.get(s) or {}).get("balanced_accuracy_fixed", "")) for s in VERIFIER_SETS]
        lines.append(
            f"| `{path.name}` | {cell(portable(str(d.get('model', '')))[:60])} | {d.get('limit', '')} "
            f"| {(acc.get('snli_test') or {}).get('accuracy_3way', '')} | "
            + " | ".join(row)
            + f" | {d.get('ship_score', '')} |"
        )
    return "\n".join(lines)


#: Balanced accuracy published by the models' authors and the LLM-AggreFact leaderboard
#: (their papers and the leaderboard's page). ``None``: not published for that set.
PUBLISHED: tuple[tuple[str, float | None, float | None, float | None], ...] = (
    # model, WiCE, Factcheck-GPT, LFQA
    ("GPT-4o", 78.5, 77.5, None),
    ("FactCG-DeBERTa-v3-Large", 74.2, 72.1, 86.7),
    ("MiniCheck-Flan-T5-Large", 72.2, 74.7, 85.2),
    ("MiniCheck-RoBERTa-L", 67.6, 73.3, 84.4),
    ("MiniCheck-DeBERTa-v3-L", 69.4, 73.0, 83.9),
    ("AlignScore", 66.0, 74.3, 84.5),
)
PUBLISHED_SETS = ("wice", "factcheck_gpt", "lfqa")


def render_published() -> str:
    """Our claim-level bAcc (test split, cut-offs fixed on dev) beside the published numbers."""
    ours = _load(DECISION_RUNS[0][0])["splits"]["test"]
    lines = [
        "| model | WiCE | Factcheck-GPT | LFQA | source |",
        "|---|---:|---:|---:|---|",
        "| **guardrail** (bundled verifier, `calibrated`) | "
        + " | ".join(f"**{pct(ours[s]['claim_bacc'])}**" for s in PUBLISHED_SETS)
        + f" | `{DECISION_RUNS[0][0]}`, test split, claim bAcc |",
    ]
    for model, *values in PUBLISHED:
        cells = ["—" if v is None else f"{v:.1f}" for v in values]
        lines.append(f"| {model} | " + " | ".join(cells) + " | published (LLM-AggreFact) |")
    return "\n".join(lines)


FOOTPRINT_ROWS = (
    ("environment_mb", "environment on disk, MB"),
    ("torch_installed", "torch installed"),
    ("torch_imported_by_a_check", "torch imported by a check"),
    ("action_on_supported_answer", "action on the README's supported answer"),
    ("import_s", "`from guardrail import Guardrail`, s"),
    ("cold_check_s", "cold `guardrail check`, wall s (median)"),
    ("peak_rss_mb", "peak RSS of that check, MB"),
    ("warm_p50_ms", "warm p50, ms (`latency.py`)"),
    ("warm_p95_ms", "warm p95, ms"),
)


def render_footprint() -> str:
    """Base install against the full development install, from ``footprint.json``."""
    d = _load("footprint.json")
    lines = ["| figure | base install (`pip install answer-guardrail`) | full dev install (`./setup.sh`) |",
             "|---|---:|---:|",
             f"| wheel, MB | {d['wheel_mb']} | {d['wheel_mb']} |"]  # fmt: skip
    for key, label in FOOTPRINT_ROWS:
        lines.append(f"| {label} | {d['base'][key]} | {d['full'][key]} |")
    lines += ["", f"Measured with `{d['command']}` on {d['machine']['cpus']} cores "
              f"(1-minute load {d['machine']['load_1min_at_start']} at the start)."]  # fmt: skip
    return "\n".join(lines)


ONE_FACT_EDITS = ("one_fact_edits_dev.json", "one_fact_edits_test.json")
EDIT_KINDS = {
    "name": "a name swapped for another of the same kind from the same documents",
    "proper": "a proper name swapped for another of any kind from the same documents",
    "number": "a number or year changed",
    "moved_number": "a number moved from elsewhere in the same documents",
    "negation": '"not" removed or inserted',
}


def render_one_fact_edits() -> str:
    """Caught / pair caught / originals kept per kind of one-fact edit, dev and test."""
    lines = [
        "| split | edit | edits | caught | repaired | pairs "
        "| caught while the original is `VERIFIED` | originals `VERIFIED` |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in ONE_FACT_EDITS:
        d = _load(name)
        for kind, label in EDIT_KINDS.items():
            if kind not in d["kinds"]:
                continue
            f = d["kinds"][kind]["all"]
            repaired = f"{pct(f['repaired'])} %" if f.get("repaired") is not None else "—"
            lines.append(
                f"| {d['split']} | {label} | {f['n']} | {pct(f['caught'])} % | {repaired} "
                f"| {f['pairs']} | {pct(f['pair_caught'])} % | {pct(f['originals_kept'])} % |"
            )
    kept = [_load(name) for name in ONE_FACT_EDITS]
    lines += ["", *_repair_outcome_lines(kept)]
    lines += [
        "",
        "Unedited sentences `VERIFIED`: "
        + ", ".join(
            f"{d['split']} {pct(d['originals']['all']['verified'])} % of "
            f"{d['originals']['all']['n']}"
            for d in kept
        )
        + ". Files: "
        + ", ".join(f"`{n}`" for n in ONE_FACT_EDITS)
        + ".",
    ]
    return "\n".join(lines)


def _repair_outcome_lines(results: list[dict[str, Any]]) -> list[str]:
    """The name and number edits of each split by repair outcome (``repair_outcomes``), pooled
    over the four kinds, for the pairs and the rest; nothing for files without it."""
    results = [d for d in results if d.get("repair_outcomes")]
    if not results:
        return []
    header = " | ".join(f"{d['split']}, original `VERIFIED` | {d['split']}, not" for d in results)
    lines = [
        f"| name and number edits | {header} |",
        "|---|" + "---:|" * (2 * len(results)),
    ]
    first = next(iter(next(iter(results[0]["repair_outcomes"].values())).values()))
    for key in first:  # the benchmark's outcomes, in its order, are the table's rows
        cells = []
        for d in results:
            for group in ("pairs", "others"):
                cells.append(sum(k[group].get(key, 0) for k in d["repair_outcomes"].values()))
        lines.append(f"| {key} | " + " | ".join(str(c) for c in cells) + " |")
    return lines


GENERATORS: dict[str, Callable[[], str]] = {
    "published": render_published,
    "cli": render_cli,
    "http": render_http,
    "config": render_config,
    "keys": render_keys,
    "decisions-test": lambda: render_decisions("test"),
    "decisions-dev": lambda: render_decisions("dev"),
    "decision-runs": render_decision_runs,
    "claim-levers": render_claim_levers,
    "latency": render_latency,
    "footprint": render_footprint,
    "verifier": render_verifier,
    "one-fact-edits": render_one_fact_edits,
}


def expand(markdown: str) -> str:
    """The markdown with every ``<!-- generated: NAME -->`` line replaced."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise KeyError(f"unknown generated block {name!r}; known: {sorted(GENERATORS)}")
        return GENERATORS[name]()

    return MARKER.sub(one, markdown)


# --- MkDocs events --------------------------------------------------------------------------


def on_config(config: Any) -> Any:
    """Snippets (``--8<-- "examples/x.py"``) resolve from the repository root, wherever the
    build runs from (pymdownx.snippets takes ``base_path`` relative to the working directory)."""
    snippets = config["mdx_configs"].setdefault("pymdownx.snippets", {})
    snippets["base_path"] = [str(ROOT)]
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    content = json.dumps(openapi_schema(), indent=1, ensure_ascii=False)
    files.append(File.generated(config, "reference/openapi.json", content=content))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return expand(markdown)


ROLE_HTML = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([^<]+)</code>")


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Docstrings' Sphinx roles (rendered as ``:class:<code>~a.B</code>``) → ``<code>B</code>``;
    an rst literal-block lead-in (``Example::``) loses its second colon."""
    html = ROLE_HTML.sub(
        lambda m: f"<code>{m.group(2).split('.')[-1] if m.group(1) else m.group(2)}</code>", html
    )
    return re.sub(r"(<p>[^<]*\w)::</p>", r"\1:</p>", html)
