"""The knowledge-base example (John Smith), end to end, with the real spaCy pipeline and MiniLM.

KB: John Smith {email john.smith@company.com (1.0), join_date 2020 (0.95), department
Engineering (1.0)}; history: "I joined in 2020, same year as John." (turn 1) and "John works in
Engineering." (turn 3). The response contradicts all three facts and both turns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guardrail import Guardrail
from guardrail.cli import main
from guardrail.config import GuardrailConfig
from guardrail.decision import plan_answer
from guardrail.inputs import GuardInput
from guardrail.knowledge import SQLiteKnowledgeBase, load_entities
from guardrail.report import Action, CorrectionType, ValidationStatus
from guardrail.stages.base import PipelineState, Resources
from guardrail.stages.correction import CorrectionStage, RepairStage
from guardrail.stages.facts import FactValidationStage

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[2] / "examples" / "data"
KB_JSON = DATA / "john_smith_kb.json"
HISTORY = DATA / "john_smith_history.json"
QUERY = "What is John's email, and when did he join?"
RESPONSE = (
    "John Smith's email is john.s@company.org. He joined the company in 2019 and works in the "
    "Marketing department."
)
CORRECTED = (
    "John Smith's email is john.smith@company.com. He joined the company in 2020 and works in "
    "the Engineering department."
)


@pytest.fixture(scope="module")
def history() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(HISTORY.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def kb_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kb") / "kb.sqlite"
    SQLiteKnowledgeBase(path, create=True).import_entities(load_entities(KB_JSON))
    return path


def _check_factual(factual: Any) -> None:
    validations = factual.claim_validations
    assert [v.status for v in validations] == [ValidationStatus.CONTRADICTED] * 3
    assert [
        (v.claim.subject, v.claim.attribute, v.claim.object, v.kb_value) for v in validations
    ] == [
        ("John Smith", "email", "john.s@company.org", "john.smith@company.com"),
        ("John Smith", "join_date", "2019", "2020"),
        ("John Smith", "department", "Marketing", "Engineering"),
    ]
    assert [v.confidence for v in validations] == [1.0, 0.95, 1.0]
    assert [(v.turn_id, v.turn_text) for v in validations[1:]] == [
        (1, "I joined in 2020, same year as John."),
        (3, "John works in Engineering."),
    ]
    assert validations[0].turn_id is None
    assert factual.stats.contradicted == 3 and factual.stats.history_conflicts == 2
    assert factual.score == 0.0
    for v in validations:  # spans point into the original response
        span = v.claim.object_span
        assert RESPONSE[span.start : span.end] == v.claim.object


@pytest.mark.parametrize("kb_kind", ["json", "sqlite"])
def test_kb_example_stages(kb_kind: str, kb_sqlite: Path, history: dict[str, Any]) -> None:
    config = GuardrailConfig.load(None)
    resources = Resources(config)
    kb = str(KB_JSON) if kb_kind == "json" else str(kb_sqlite)
    state = PipelineState(
        input=GuardInput(query=QUERY, response=RESPONSE, knowledge_base=kb, dialogue=history)
    )
    facts = FactValidationStage(config, resources)
    assert facts.skip_reason(state) is None
    state = state.model_copy(update=facts.run(state).fields())
    _check_factual(state.factual)
    # the repairs, the decision's plan (the pipeline's plan step), then the plan applied
    state = state.model_copy(update=RepairStage(config, resources).run(state).fields())
    plan = plan_answer([], [], state.factual, None, state.repairs or [], None, None, config)
    state = state.model_copy(update={"plan": plan})
    state = state.model_copy(update=CorrectionStage(config, resources).run(state).fields())
    assert state.corrected == CORRECTED
    factual_fixes = [c for c in state.corrections if c.type is CorrectionType.FACTUAL]
    assert [(c.original, c.replacement) for c in factual_fixes] == [
        ("john.s@company.org", "john.smith@company.com"),
        ("2019", "2020"),
        ("Marketing", "Engineering"),
    ]
    assert all(RESPONSE[c.span.start : c.span.end] == c.original for c in state.corrections)


def test_kb_example_through_the_python_api(kb_sqlite: Path, history: dict[str, Any]) -> None:
    report = Guardrail().invoke(
        {
            "query": QUERY,
            "response": RESPONSE,
            "knowledge_base": str(kb_sqlite),
            "dialogue": history,
        }
    )
    assert report.factual_validation is not None
    _check_factual(report.factual_validation)
    assert report.corrected == CORRECTED
    assert report.action is not Action.ACCEPT
    assert report.confidence < 0.5


def test_kb_example_through_the_cli(
    tmp_path: Path, history: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "kb.sqlite"
    history_file = tmp_path / "h.json"
    history_file.write_text(json.dumps(history), encoding="utf-8")
    assert main(["kb", "import", str(KB_JSON), "--db", str(db)]) == 0
    capsys.readouterr()
    argv = ["check", "--kb", str(db), "--history", str(history_file), "-q", QUERY, "-r", RESPONSE]
    assert main([*argv, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    _check_factual(_Obj.wrap(report["factual_validation"]))
    assert report["corrected"] == CORRECTED
    assert report["recommendation"]["action"] != "accept"
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "(turn 3: 'John works in Engineering.')" in text
    assert f"corrected:  {CORRECTED}" in text


class _Obj:
    """Attribute access over the JSON report, so the same checks read both forms."""

    def __init__(self, data: Any) -> None:
        self._data = data

    @classmethod
    def wrap(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return cls(data)
        if isinstance(data, list):
            return [cls.wrap(d) for d in data]
        return data

    def __getattr__(self, name: str) -> Any:
        value = self._data[name]
        if name == "status":
            return ValidationStatus(value)
        return self.wrap(value)
