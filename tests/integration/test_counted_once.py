"""One wrong value, counted once in the confidence score (#29 item 1), on the real pipeline:
the report still shows every finding, the breakdown counts the knowledge-base contradiction in
the factual component only."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail import Guardrail
from guardrail.report import HallucinationType, ValidationStatus
from guardrail.scoring import hallucination_score
from tests.integration.test_work_once import INPUT as WORK_ONCE

pytestmark = pytest.mark.integration

INPUT: dict[str, Any] = {
    "query": "Which department does John work in?",
    "response": "John works in Marketing.",
    "passages": ["John Smith joined the company in 2019 and works in the Sales department."],
    "dialogue": {"entities": [{"name": "John Smith", "type": "person", "aliases": ["John"]}]},
    "knowledge_base": WORK_ONCE["knowledge_base"],  # John Smith works in Sales
}


def test_a_kb_contradiction_is_shown_everywhere_and_counted_once() -> None:
    report = Guardrail().invoke(INPUT)
    fact = report.factual_validation
    assert fact is not None and report.coherence is not None
    contradicted = [v for v in fact.claim_validations if v.status is ValidationStatus.CONTRADICTED]
    assert contradicted and contradicted[0].kb_value == "Sales"
    # every component still reports what it found
    restated = [f for f in report.hallucination_flags
                if f.type is HallucinationType.WRONG_ATTRIBUTE]  # fmt: skip
    assert restated, "the hallucination stage flags the wrong value"
    assert any(i.type == "entity_mismatch" for i in report.coherence.issues)
    assert report.coherence.entity_consistency.score < 1.0
    # the confidence counts it in the factual component only
    b = report.confidence_breakdown
    assert b.factual is not None and b.factual < 1.0
    assert b.entity == 1.0
    others = [f for f in report.hallucination_flags if f not in restated]
    assert b.hallucination == pytest.approx(hallucination_score(others))
    assert b.coherence is not None and b.coherence > report.coherence.score
    # and the answer is still not delivered as it is
    assert report.action.value not in ("accept", "accept_with_flags")
