"""The key layout for stored results: ``/postprocessing/{session_id}/{turn_id}/…``.

Every leaf of the published layout is emitted, in its order, with ``None`` where the report has
no value (a stage that did not run); indexed subtrees (``issues``, ``claims``,
``hallucinations``, ``corrections``) have one entry per item. The functions read the report as
JSON (``GuardReport.model_dump(mode="json")``), so reports stored by older or newer versions
export too.

Example::

    for path, value in turn_paths("demo", 0, stored.input, stored.report):
        print(path, value)        # /postprocessing/demo/0/input/llm_response  'The meeting …'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

ROOT = "/postprocessing"


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _span(item: dict[str, Any]) -> tuple[Any, Any]:
    span = item.get("span") or {}
    return span.get("start"), span.get("end")


def claim_type(claim: dict[str, Any]) -> str:
    """The layout's claim type: ``attribute`` when the predicate maps to a KB attribute."""
    explicit = claim.get("type") or claim.get("claim_type")
    if isinstance(explicit, str):
        return explicit
    return "attribute" if claim.get("attribute") else "relation"


def claim_suggestion(validation: dict[str, Any]) -> str | None:
    """The layout's suggestion for a contradicted claim: ``Replace 'X' with 'Y'``."""
    if isinstance(validation.get("suggestion"), str):
        return str(validation["suggestion"])
    kb_value = validation.get("kb_value")
    if validation.get("status") == "contradicted" and kb_value is not None:
        return f"Replace '{_get(validation, 'claim', 'object')}' with '{kb_value}'"
    return None


def _drift_detected(coherence: dict[str, Any]) -> bool | None:
    topic = coherence.get("topic_consistency") or {}
    found = _get(topic, "details", "drift_detected")
    if isinstance(found, bool):
        return found
    issues = coherence.get("issues") or []
    return any(i.get("type") in ("topic_drift", "topic_unrelated") for i in issues)


def _mismatches(coherence: dict[str, Any]) -> int:
    found = _get(coherence, "entity_consistency", "details", "mismatches")
    if isinstance(found, int):
        return found
    return sum(1 for i in coherence.get("issues") or [] if i.get("type") == "entity_mismatch")


def turn_paths(
    session_id: str, turn_id: int, input: dict[str, Any], report: dict[str, Any]
) -> list[tuple[str, Any]]:
    """Every ``(path, value)`` of one turn in the key layout, in the layout's order."""
    base = f"{ROOT}/{session_id}/{turn_id}"
    out: list[tuple[str, Any]] = []

    def put(path: str, value: Any) -> None:
        out.append((f"{base}/{path}", value))

    put("input/llm_response", input.get("response", report.get("original")))
    put("input/query", input.get("query"))

    coherence = report.get("coherence")
    c = coherence if isinstance(coherence, dict) else {}
    ran = isinstance(coherence, dict)
    put("coherence/score", c.get("score"))
    put("coherence/qud/score", _get(c, "qud_relevance", "score"))
    put("coherence/qud/addresses_qud", _get(c, "qud_relevance", "addresses_qud"))
    put("coherence/qud/question_type", _get(c, "qud_relevance", "question_type"))
    put("coherence/topic/score", _get(c, "topic_consistency", "score"))
    put("coherence/topic/drift_detected", _drift_detected(c) if ran else None)
    put("coherence/entity/score", _get(c, "entity_consistency", "score"))
    put("coherence/entity/mismatches", _mismatches(c) if ran else None)
    put("coherence/discourse/score", _get(c, "discourse_coherence", "score"))
    put("coherence/reference/score", _get(c, "reference_consistency", "score"))
    issues = c.get("issues") or []
    put("coherence/issues/count", len(issues) if ran else None)
    for i, issue in enumerate(issues):
        start, end = _span(issue)
        put(f"coherence/issues/{i}/type", issue.get("type"))
        put(f"coherence/issues/{i}/description", issue.get("description"))
        put(f"coherence/issues/{i}/severity", issue.get("severity"))
        put(f"coherence/issues/{i}/span_start", start)
        put(f"coherence/issues/{i}/span_end", end)
        put(f"coherence/issues/{i}/suggestion", issue.get("suggestion"))

    factual = report.get("factual_validation")
    f = factual if isinstance(factual, dict) else {}
    stats = f.get("stats") or {}
    put("factual/score", f.get("score"))
    put("factual/claims_checked", stats.get("total"))
    put("factual/claims_verified", stats.get("verified"))
    put("factual/claims_contradicted", stats.get("contradicted"))
    put("factual/claims_unverifiable", stats.get("unverifiable"))
    for i, validation in enumerate(f.get("claim_validations") or []):
        claim = validation.get("claim") or {}
        put(f"factual/claims/{i}/type", claim_type(claim))
        put(f"factual/claims/{i}/subject", claim.get("subject"))
        put(f"factual/claims/{i}/predicate", claim.get("predicate"))
        put(f"factual/claims/{i}/object", claim.get("object"))
        put(f"factual/claims/{i}/status", validation.get("status"))
        put(f"factual/claims/{i}/kb_value", validation.get("kb_value"))
        put(f"factual/claims/{i}/suggestion", claim_suggestion(validation))

    flags = report.get("hallucination_flags") or []
    put("hallucinations/count", len(flags))
    for i, flag in enumerate(flags):
        start, end = _span(flag)
        put(f"hallucinations/{i}/span_start", start)
        put(f"hallucinations/{i}/span_end", end)
        put(f"hallucinations/{i}/content", flag.get("content"))
        put(f"hallucinations/{i}/type", flag.get("type"))
        put(f"hallucinations/{i}/confidence", flag.get("confidence"))
        put(f"hallucinations/{i}/suggestion", flag.get("suggestion"))

    corrections = report.get("corrections") or []
    original, corrected = report.get("original"), report.get("corrected")
    put("correction/applied", bool(corrections) and corrected != original)
    put("correction/correction_count", len(corrections))
    for i, corr in enumerate(corrections):
        put(f"correction/corrections/{i}/type", corr.get("type"))
        put(f"correction/corrections/{i}/original", corr.get("original"))
        put(f"correction/corrections/{i}/corrected", corr.get("replacement", corr.get("corrected")))
        put(f"correction/corrections/{i}/confidence", corr.get("confidence"))
        start, end = _span(corr)
        put(f"correction/corrections/{i}/span_start", start)
        put(f"correction/corrections/{i}/span_end", end)
        put(f"correction/corrections/{i}/reason", corr.get("message"))

    put("result/confidence", report.get("confidence"))
    put("result/recommendation", _get(report, "recommendation", "action"))
    put("result/corrected_response", corrected if corrected != original else None)
    put("result/annotated_response", report.get("annotated"))
    from guardrail.report import GuardReport

    put("result/delivered_response", GuardReport.model_validate(report).delivered_text)
    for i, claim in enumerate(report.get("claims") or []):
        put(f"result/claims/{i}/text", claim.get("text"))
        put(f"result/claims/{i}/status", claim.get("status"))
        put(f"result/claims/{i}/outcome", claim.get("outcome"))
    put("result/new_entities_count", len(report.get("new_entities") or []))
    return out


def render_paths(paths: Iterable[tuple[str, Any]]) -> str:
    """One ``path<TAB>value`` line per leaf; values as JSON (strings quoted, ``null``)."""
    return "".join(f"{p}\t{json.dumps(v, ensure_ascii=False)}\n" for p, v in paths)


def nest(paths: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """The same leaves as one nested JSON object (the PathMap trie: indices are string keys)."""
    root: dict[str, Any] = {}
    for path, value in paths:
        *parents, leaf = path.strip("/").split("/")
        node = root
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return root
