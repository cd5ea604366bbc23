"""One wrong value, one finding, on the real pipeline: the knowledge-base
contradiction is fact validation's finding, stored once; the report shows it as a
WRONG_ATTRIBUTE flag too (a view of that finding), the coherence entity check leaves the value
on record to fact validation, and the confidence counts it in the factual component only."""

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
    # the report shows it as a flag, a view of that one finding
    restated = [f for f in report.hallucination_flags
                if f.type is HallucinationType.WRONG_ATTRIBUTE]  # fmt: skip
    assert [f.replacement for f in restated] == ["Sales"]
    # coherence leaves the value on record to fact validation: no second finding there
    assert not any(i.type == "entity_mismatch" for i in report.coherence.issues)
    # the confidence counts it in the factual component only, with its one penalty
    b = report.confidence_breakdown
    assert b.factual is not None and b.factual < 1.0
    assert b.entity == 1.0
    others = [f for f in report.hallucination_flags if f not in restated]
    assert b.hallucination == pytest.approx(hallucination_score(others))
    # the decision names it once
    assert report.decision is not None
    kinds = [p.kind for p in report.decision.problems]
    assert kinds.count("kb_contradiction") == 1 and "wrong_attribute" not in kinds
    # and the answer is still not delivered as it is
    assert report.action.value not in ("accept", "accept_with_flags")
