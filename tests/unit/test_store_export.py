"""Export in the stored-results key layout: paths exactly as the layout defines them, JSON, MeTTa;
the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from guardrail.cli import main
from guardrail.errors import InputError
from guardrail.store import ReportStore, export_session, nest, turn_paths
from tests.store_backends import BACKENDS, make_store
from tests.unit.test_store import ANSWER, make_input, make_report

# The stored-results key layout ("PathMap Key Structure"), leaf by leaf ({i} = an item index).
LAYOUT_LEAVES = """
input/llm_response input/query
coherence/score coherence/qud/score coherence/qud/addresses_qud coherence/qud/question_type
coherence/topic/score coherence/topic/drift_detected coherence/entity/score
coherence/entity/mismatches coherence/discourse/score coherence/reference/score
coherence/issues/count
factual/score factual/claims_checked factual/claims_verified factual/claims_contradicted
factual/claims_unverifiable
factual/claims/{i}/type factual/claims/{i}/subject factual/claims/{i}/predicate
factual/claims/{i}/object factual/claims/{i}/status factual/claims/{i}/kb_value
factual/claims/{i}/suggestion
hallucinations/count hallucinations/{i}/span_start hallucinations/{i}/span_end
hallucinations/{i}/content hallucinations/{i}/type hallucinations/{i}/confidence
hallucinations/{i}/suggestion
correction/applied correction/correction_count correction/corrections/{i}/type
correction/corrections/{i}/original correction/corrections/{i}/corrected
correction/corrections/{i}/confidence
result/confidence result/recommendation result/corrected_response result/annotated_response
result/new_entities_count
""".split()
# The layout leaves "/{issue_idx}/ → Issue details" open: these are the issue's fields.
ISSUE_LEAVES = "type description severity span_start span_end suggestion".split()
# Beyond the original layout: where each correction is and why, what is delivered,
# and each claim's outcome.
DELIVERY_LEAVES = """
correction/corrections/{i}/span_start correction/corrections/{i}/span_end
correction/corrections/{i}/reason result/delivered_response
result/claims/{i}/text result/claims/{i}/status result/claims/{i}/outcome
""".split()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ReportStore:
    s = make_store(request.param, tmp_path)
    s.save(make_input(turn=0), make_report())
    s.save(make_input(turn=1), make_report("human_review", confidence=0.1))
    return s


def test_paths_are_exactly_the_seeds(store: ReportStore) -> None:
    turn = store.get("demo", 0)
    assert turn is not None
    paths = turn_paths("demo", 0, turn.input, turn.report)
    assert all(p.startswith("/postprocessing/demo/0/") for p, _ in paths)
    leaves = [
        re.sub(r"/\d+/", "/{i}/", p.removeprefix("/postprocessing/demo/0/")) for p, _ in paths
    ]
    issue_leaves = {f"coherence/issues/{{i}}/{leaf}" for leaf in ISSUE_LEAVES}
    claim_leaves = {leaf for leaf in DELIVERY_LEAVES if leaf.startswith("result/claims/")}
    expected = set(LAYOUT_LEAVES) | issue_leaves | set(DELIVERY_LEAVES)
    assert set(leaves) | claim_leaves == expected and set(leaves) >= expected - claim_leaves
    assert len(paths) == len(set(p for p, _ in paths))
    values = dict(paths)
    base = "/postprocessing/demo/0/"
    assert values[base + "input/llm_response"] == ANSWER
    assert values[base + "factual/claims/0/status"] == "contradicted"
    assert values[base + "factual/claims/0/kb_value"] == "john.smith@company.com"
    assert values[base + "factual/claims/0/type"] == "attribute"
    assert (
        values[base + "factual/claims/0/suggestion"]
        == "Replace 'john.s@company.org' with 'john.smith@company.com'"
    )
    assert values[base + "hallucinations/0/content"] == "2019"
    assert (
        values[base + "hallucinations/0/span_start"],
        values[base + "hallucinations/0/span_end"],
    ) == (55, 59)
    assert values[base + "correction/applied"] is True
    assert values[base + "correction/corrections/0/corrected"] == "john.smith@company.com"
    assert values[base + "result/recommendation"] == "accept_with_flags"
    assert values[base + "coherence/issues/count"] == 1


def test_missing_stage_exports_nulls_not_errors(store: ReportStore) -> None:
    report = make_report().model_copy(update={"coherence": None, "factual_validation": None})
    values = dict(turn_paths("s", 2, {"response": ANSWER}, report.model_dump(mode="json")))
    assert values["/postprocessing/s/2/coherence/score"] is None
    assert values["/postprocessing/s/2/coherence/issues/count"] is None
    assert values["/postprocessing/s/2/factual/claims_checked"] is None
    assert values["/postprocessing/s/2/input/query"] is None


def test_json_is_the_same_tree(store: ReportStore) -> None:
    data = json.loads(export_session(store, "demo", "json"))
    turn0 = data["postprocessing"]["demo"]["0"]
    assert turn0["result"]["recommendation"] == "accept_with_flags"
    assert turn0["factual"]["claims"]["0"]["subject"] == "John Smith"
    assert data["postprocessing"]["demo"]["1"]["result"]["recommendation"] == "human_review"
    turn = store.get("demo", 0)
    assert turn is not None
    assert nest(turn_paths("demo", 0, turn.input, turn.report)) == {
        "postprocessing": {"demo": {"0": turn0}}
    }


def test_metta_facts_follow_the_seed_signatures(store: ReportStore) -> None:
    text = export_session(store, "demo", "metta")
    assert text.count("(") == text.count(")")
    assert (
        "(: postprocess-response (-> String DialogueState KnowledgeBase String PostprocessedResponse))"
        in text
    )
    assert '(= (postprocess-response "John Smith' in text
    assert '(Contradicted "john.smith@company.com" 1.0)' in text
    assert "(HumanReview " in text and "(AcceptWithFlags (Cons (span 41 60) Nil) Low)" in text
    hyperon = pytest.importorskip("hyperon", reason="hyperon (MeTTa) is not installed")
    metta = hyperon.MeTTa()
    q = json.dumps(ANSWER)
    results = metta.run(
        text
        + f'!(get-type (postprocess-response {q} (dialogue-state "demo" 0) (knowledge-base "none")'
        + ' "Tell me about John"))\n'
        + f"!(extract-claims {q})\n!(should-accept 0.95)\n!(should-correct 0.6)\n!(should-flag 0.6)\n"
    )
    assert [str(r[0]) for r in results[:1]] == ["PostprocessedResponse"]
    assert '(claim "attribute" "John Smith" "email"' in str(results[1][0])
    assert [str(r[0]) for r in results[2:]] == ["True", "True", "False"]
    assert not any("Error" in str(r) for r in results)


def test_export_of_unknown_session_is_an_input_error(store: ReportStore) -> None:
    with pytest.raises(InputError, match="nothing stored"):
        export_session(store, "nobody", "paths")
    with pytest.raises(InputError, match="unknown export format"):
        export_session(store, "demo", "xml")


def test_cli_export_show_list(
    store: ReportStore, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert (
        main(["store", "export", "--db", store.where, "--session", "demo", "--format", "paths"])
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"/postprocessing/demo/0/input/llm_response\t{json.dumps(ANSWER)}"
    assert '/postprocessing/demo/1/result/recommendation\t"human_review"' in out
    assert main(["store", "show", "demo", "--db", store.where]) == 0
    shown = capsys.readouterr().out
    assert "turn 0 (attempt 1" in shown and "turn 1 (attempt 1" in shown
    assert main(["store", "show", "demo", "1", "--db", store.where, "--format", "json"]) == 0
    assert (
        json.loads(capsys.readouterr().out)["report"]["recommendation"]["action"] == "human_review"
    )
    assert main(["store", "list", "--db", store.where, "--action", "human_review"]) == 0
    assert capsys.readouterr().out.strip().endswith("1 of 1")
    assert main(["store", "show", "nobody", "--db", store.where]) == 2
    assert "nothing stored" in capsys.readouterr().err
    assert main(["store", "show", "demo", "--db", str(tmp_path / "missing.sqlite")]) == 2
