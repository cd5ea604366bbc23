"""Strict inputs in every face: an unknown key is an error naming the key and
the nearest valid one — in Python, the CLI, HTTP, audit rows and the LangChain / LlamaIndex
wrappers — never a key silently dropped (a dropped ``pasages`` is evidence never checked).

The guardrail runs with every stage disabled: the errors come before any stage runs, and the
valid inputs here only have to get through.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda

from chains.middleware import with_guardrail
from guardrail.audit.rows import AuditRow, RowError, read_rows
from guardrail.cli import main
from guardrail.errors import InputError
from guardrail.inputs import GuardInput, Passage, coerce_input
from guardrail.pipeline import Guardrail
from tests.stage_names import STAGES

NO_STAGES: dict[str, Any] = {"disabled_stages": list(STAGES)}
QUERY = "What is John's email?"
ANSWER = "John's email is john.s@company.org."
PASSAGE = "John Smith's email is john.smith@company.com."


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail(NO_STAGES)


# --- Python -----------------------------------------------------------------------------------


def test_python_invoke_names_the_unknown_key_and_the_nearest(guard: Guardrail) -> None:
    with pytest.raises(
        InputError, match=r"unknown input key 'pasages' \(did you mean 'passages'\?\)"
    ):
        guard.invoke({"query": QUERY, "response": ANSWER, "pasages": [PASSAGE]})
    # nested models too: a passage, a dialogue turn, the dialogue state, a registry entity
    nested = [
        (
            {"passages": [PASSAGE, {"txt": PASSAGE}]},
            r"'txt' in passages\[1\] \(did you mean 'text'",
        ),
        (
            {"dialogue": [{"speaker": "user", "text": "hi", "turnid": 0}]},
            r"'turnid' in dialogue.turns\[0\] \(did you mean 'turn_id'",
        ),
        ({"dialogue": {"turns": [], "topcs": ["email"]}}, r"'topcs' in dialogue \(did you mean"),
        (
            {"dialogue": {"entities": [{"name": "John Smith", "atributes": {"email": "x"}}]}},
            r"'atributes' in dialogue.entities\[0\] \(did you mean 'attributes'",
        ),
        ({"response_text": "x"}, r"'response_text' \(did you mean 'response'"),
    ]
    for extra, pattern in nested:
        with pytest.raises(InputError, match=pattern):
            guard.invoke({"query": QUERY, "response": ANSWER, **extra})
    with pytest.raises(InputError, match=r"unknown input key 'zzz'; valid keys: dialogue, "):
        coerce_input({"response": ANSWER, "zzz": 1})
    with pytest.raises(InputError, match=r"did you mean 'score'"):
        Passage.coerce({"text": PASSAGE, "scroe": 0.9})
    # the valid spellings still pass, and a GuardInput round-trips through JSON
    data = coerce_input(
        {"query": QUERY, "response": ANSWER, "passages": [{"text": PASSAGE, "score": 0.8}]}
    )
    assert GuardInput.model_validate_json(data.model_dump_json()).passages == data.passages
    assert guard.invoke(data).original == ANSWER


# --- CLI --------------------------------------------------------------------------------------


def test_cli_history_and_passages_file_reject_unknown_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(NO_STAGES), encoding="utf-8")
    history = tmp_path / "history.json"
    history.write_text(
        json.dumps({"turns": [{"speaker": "user", "text": QUERY}], "topcs": ["email"]}),
        encoding="utf-8",
    )
    base = ["check", "--config", str(config), "-q", QUERY, "-r", ANSWER]
    assert main([*base, "--history", str(history)]) == 2
    err = capsys.readouterr().err
    assert "unknown input key 'topcs'" in err and "did you mean 'topics'?" in err
    assert str(history) in err and "Traceback" not in err
    turn_typo = tmp_path / "turns.json"
    turn_typo.write_text(json.dumps({"turns": [{"speaker": "user", "txt": QUERY}]}), "utf-8")
    assert main([*base, "--history", str(turn_typo)]) == 2
    assert "'txt' in dialogue.turns[0] (did you mean 'text'?)" in capsys.readouterr().err
    passages = tmp_path / "passages.jsonl"
    passages.write_text(json.dumps({"text": PASSAGE, "scroe": 0.8}) + "\n", encoding="utf-8")
    assert main([*base, "--passages-file", str(passages)]) == 2
    err = capsys.readouterr().err
    assert f"{passages}:1: unknown input key 'scroe' (did you mean 'score'?)" in err
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"turns": [{"speaker": "user", "text": QUERY}]}), "utf-8")
    assert main([*base, "--history", str(good), "--format", "json"]) == 0


# --- HTTP -------------------------------------------------------------------------------------


def test_http_422_names_the_key_and_the_nearest(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from tests.unit.test_service import make_client, wait_ready

    with make_client(tmp_path) as client:
        wait_ready(client)
        bodies = [
            ({"response": ANSWER, "pasages": [PASSAGE]}, ["body", "pasages"], "'passages'"),
            (
                {"response": ANSWER, "passages": [{"txt": PASSAGE}]},
                ["body", "passages", 0, "txt"],
                "'text'",
            ),
            (
                {"response": ANSWER, "dialogue": {"turns": [], "topcs": []}},
                ["body", "dialogue", "topcs"],
                "'topics'",
            ),
        ]
        for body, loc, near in bodies:
            r = client.post("/v1/check", json=body)
            assert r.status_code == 422, r.text
            detail = r.json()["detail"]
            assert any(d["loc"] == loc and f"did you mean {near}?" in d["msg"] for d in detail), (
                detail
            )
        batch = client.post("/v1/check/batch", json={"itmes": []})
        assert batch.status_code == 422 and "did you mean 'items'?" in batch.text
        assert client.post("/v1/check", json={"response": ANSWER}).status_code == 200


# --- audit rows -------------------------------------------------------------------------------


def test_audit_row_with_an_unknown_key_is_an_error_row(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    rows = [
        {"id": "a", "query": QUERY, "response": ANSWER, "pasages": [PASSAGE]},
        {"id": "b", "query": QUERY, "response": ANSWER, "passages": [{"txt": PASSAGE}]},
        {"id": "c", "query": QUERY, "question": "Another question?", "response": ANSWER},
        {"id": "d", "question": QUERY, "answer": ANSWER, "contexts": [PASSAGE]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    items = list(read_rows(path))
    assert len(items) == len(rows)  # never lost: every row is a row or an error
    first, second, third, fourth = items
    assert isinstance(first, RowError) and first.index == 1
    assert "unknown column 'pasages' (did you mean 'passages'?)" in first.reason
    assert first.row is not None and "pasages" in first.row
    assert isinstance(second, RowError) and "did you mean 'text'?" in second.reason
    assert isinstance(third, RowError) and "both 'query' and 'question'" in third.reason
    assert isinstance(fourth, AuditRow) and json.loads(fourth.payload)["passages"] == [PASSAGE]


# --- LangChain wrapper ------------------------------------------------------------------------


def test_langchain_wrapper_rejects_unknown_keys_in_what_it_passes_on() -> None:
    def app(value: dict[str, Any]) -> dict[str, Any]:
        return {"input": value["input"], "answer": ANSWER, "context": value["context"]}

    safe = with_guardrail(RunnableLambda(app), Guardrail(NO_STAGES), on_fail="report")
    with pytest.raises(InputError, match=r"'topcs' in dialogue \(did you mean 'topics'\?\)"):
        safe.invoke({"input": QUERY, "context": [PASSAGE], "dialogue": {"topcs": ["email"]}})
    with pytest.raises(InputError, match=r"'scroe' \(did you mean 'score'\?\)"):
        safe.invoke({"input": QUERY, "context": [{"text": PASSAGE, "scroe": 0.9}]})
    report = safe.invoke({"input": QUERY, "context": [{"text": PASSAGE, "score": 0.9}]})
    assert report.original == ANSWER  # the valid spelling is checked


# --- LlamaIndex wrapper -----------------------------------------------------------------------


async def test_llama_index_evaluator_rejects_unknown_arguments(guard: Guardrail) -> None:
    pytest.importorskip("llama_index.core", reason="needs the llama-index extra")
    from guardrail.integrations.llama_index import GuardrailEvaluator

    evaluator = GuardrailEvaluator(guard)
    with pytest.raises(InputError, match=r"unknown argument 'context' \(did you mean 'contexts'"):
        evaluator.evaluate(query=QUERY, response=ANSWER, context=[PASSAGE])
    with pytest.raises(InputError, match=r"did you mean 'contexts'"):
        await evaluator.aevaluate(query=QUERY, response=ANSWER, contxts=[PASSAGE])
    with pytest.raises(InputError, match=r"unknown argument 'respose'"):
        evaluator.evaluate_response(query=QUERY, respose=None)
    with pytest.raises(InputError, match=r"did you mean 'text'"):
        evaluator.evaluate(query=QUERY, response=ANSWER, contexts=[{"txt": PASSAGE}])
    # what a BatchEvalRunner hands every evaluator passes; the real arguments are used
    result = evaluator.evaluate(query=QUERY, response=ANSWER, contexts=[PASSAGE], reference="x")
    assert result.report is not None and result.contexts == [PASSAGE]
