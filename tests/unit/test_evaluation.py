"""Evaluation harness: loaders, metrics (against scikit-learn), McNemar, the score cache,
tuning split determinism and temperature scaling. Offline; the cache test uses the tiny real
BERT verifier from ``tests/verifier_conformance.py``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from guardrail.config import AdaptiveThreshold
from guardrail.errors import ConfigError, InputError
from guardrail.evaluation import calibrate as cal
from guardrail.evaluation.conditions import CONDITIONS, condition_config
from guardrail.evaluation.datasets import balanced_head, load_dataset
from guardrail.evaluation.metrics import auroc, binary_metrics, mcnemar, threshold_sweep
from guardrail.evaluation.tune import (
    TuneItem,
    dev_test_split,
    predict_ratio,
    predict_weakest_link,
    tune,
)

# --- loaders --------------------------------------------------------------------------------


def _jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


QA_ROW = {
    "knowledge": "Arthur's Magazine (1844–1846) was an American literary periodical.",
    "question": "When was Arthur's Magazine started?",
    "right_answer": "1844",
    "hallucinated_answer": "It was started in 1901.",
}


def test_halueval_generation_file_gives_two_examples_per_row(tmp_path: Path) -> None:
    _jsonl(tmp_path / "generation/qa/qa_one-turn_data.json", [QA_ROW, QA_ROW])
    ex = load_dataset("halueval-qa", tmp_path)
    assert [e.label for e in ex] == [0, 1, 0, 1]
    assert ex[0].response == "1844" and ex[1].response == "It was started in 1901."
    assert ex[0].passages == [QA_ROW["knowledge"]] and ex[0].query == QA_ROW["question"]
    assert len({e.id for e in ex}) == 4 and ex[0].split == "one-turn"


def test_halueval_prefers_the_official_file_and_reads_a_json_list(tmp_path: Path) -> None:
    _jsonl(tmp_path / "generation/qa/qa_one-turn_data.json", [QA_ROW])
    official = tmp_path / "data" / "qa_data.json"
    official.parent.mkdir(parents=True)
    official.write_text(json.dumps([QA_ROW, QA_ROW, QA_ROW]), encoding="utf-8")
    ex = load_dataset("halueval-qa", tmp_path)
    assert len(ex) == 6 and ex[0].split == "official"
    assert len(load_dataset("halueval-qa", tmp_path, split="one-turn")) == 2


def test_halueval_missing_field_is_a_typed_error(tmp_path: Path) -> None:
    _jsonl(tmp_path / "generation/qa/qa_one-turn_data.json", [{"knowledge": "k", "question": "q"}])
    with pytest.raises(InputError, match="right_answer"):
        load_dataset("halueval-qa", tmp_path)


def test_wice_labels_and_oracle_grouping(tmp_path: Path) -> None:
    rows = [
        {"label": "supported", "claim": "A.", "evidence": ["x", "y"], "meta": {"id": "d1"}},
        {"label": "partially_supported", "claim": "B.", "evidence": ["z"], "meta": {"id": "d2"}},
        {"label": "not_supported", "claim": "C.", "evidence": [], "meta": {"id": "d3"}},
    ]
    _jsonl(tmp_path / "data/entailment_retrieval/claim/test.jsonl", rows)
    ex = load_dataset("wice", tmp_path)
    assert [e.label for e in ex] == [0, 1, 1] and ex[0].passages == ["x y"]
    oracle = tmp_path / "code_and_resources/entailment_inputs/oracle_chunks/claim/test.jsonl"
    _jsonl(oracle, [rows[0], {**rows[0], "evidence": ["w"]}, rows[1]])
    ex = load_dataset("wice-oracle", tmp_path)
    assert len(ex) == 2 and ex[0].passages == ["x y", "w"]


def test_factcheck_gpt_claims(tmp_path: Path) -> None:
    sentence = {
        "claims": ["C1 is true.", "C2 is false.", "C3 unlabelled."],
        "claims_factuality_label": [True, False, None],
        "auto_evidence": [["e1", "e2"], ["e3"], ["e4"]],
    }
    _jsonl(
        tmp_path / "factcheck-GPT-benchmark.jsonl",
        [{"prompt": "Q?", "sentences": {"s1": sentence}}],
    )
    ex = load_dataset("factcheck-gpt", tmp_path)
    assert [(e.response, e.label, e.passages) for e in ex] == [
        ("C1 is true.", 0, ["e1", "e2"]),
        ("C2 is false.", 1, ["e3"]),
    ]
    assert ex[0].query == "Q?"


def test_summary_sets(tmp_path: Path) -> None:
    se = tmp_path / "se/data/summedits/summedits_news.json"
    se.parent.mkdir(parents=True)
    se.write_text(
        json.dumps(
            [
                {"id": "a", "doc": "D", "summary": "S1", "label": 1, "split": "test"},
                {"id": "b", "doc": "D", "summary": "S2", "label": 0, "split": "evaluation"},
            ]
        )
    )
    ex = load_dataset("summedits", tmp_path / "se")
    assert [e.label for e in ex] == [0, 1] and ex[0].meta["domain"] == "news"
    assert [e.id for e in load_dataset("summedits", tmp_path / "se", split="test")] == [
        "summedits/news/a"
    ]

    spans = [{"start": 0, "end": 3}, {"start": None, "end": None}, {"start": 0, "end": 3}]
    _jsonl(
        tmp_path / "xs/reassembled/xsumfaith_with_docs.jsonl",
        [
            {"bbcid": 1, "system": "Gold", "document": "D", "summary": "abc def",
             "label_majority": "hallucinated", "spans": spans},
            {"bbcid": 2, "system": "Gold", "document": "D", "summary": "ok",
             "label_majority": "faithful", "spans": []},
        ],
    )  # fmt: skip
    ex = load_dataset("xsumfaith", tmp_path / "xs")
    assert [e.label for e in ex] == [1, 0] and ex[0].spans == [(0, 3)]

    _jsonl(
        tmp_path / "fr/reassembled/frank_xsum_with_docs.jsonl",
        [{"hash": "h", "model_name": "m", "split": "test", "document": "D", "summary": "S",
          "label": "inconsistent", "Factuality": 0.0}],
    )  # fmt: skip
    assert load_dataset("frank", tmp_path / "fr")[0].label == 1

    yes = [{"response": "yes"}] * 3
    no = [{"response": "no"}, {"response": "no"}, {"response": "yes"}]
    _jsonl(
        tmp_path / "qa/data/mturk_xsum.jsonl",
        [{"article": "A", "summary_sentences": [{"sentence": "Fine.", "responses": yes},
                                                {"sentence": "Wrong.", "responses": no}]}],
    )  # fmt: skip
    ex = load_dataset("qags", tmp_path / "qa", split="xsum")
    assert ex[0].label == 1 and ex[0].response == "Fine. Wrong."
    assert [ex[0].response[s:e] for s, e in ex[0].spans] == ["Wrong."]


def test_generic_jsonl(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "mine.jsonl",
        [
            {"id": "x", "query": "Q", "response": "R", "passages": ["p", {"text": "q", "score": 0.7}],
             "label": "hallucinated", "spans": [[0, 1]]},
            {"response": "R2", "passages": "only", "label": False, "knowledge_base": "kb.json"},
        ],
    )  # fmt: skip
    ex = load_dataset(f"jsonl:{path}")
    assert ex[0].passages == ["p", "q"] and ex[0].meta["passage_scores"] == [None, 0.7]
    assert ex[0].meta["knowledge_base"] is None
    assert ex[1].meta["knowledge_base"] == str(tmp_path / "kb.json")
    assert (ex[0].label, ex[0].spans, ex[1].label, ex[1].id) == (1, [(0, 1)], 0, "1")
    bad = _jsonl(tmp_path / "bad.jsonl", [{"response": "R", "label": "maybe"}])
    with pytest.raises(InputError, match="label"):
        load_dataset(f"jsonl:{bad}")
    (tmp_path / "broken.jsonl").write_text('{"response": \n')
    with pytest.raises(InputError, match=r"broken\.jsonl:1"):
        load_dataset(f"jsonl:{tmp_path / 'broken.jsonl'}")


def test_unknown_dataset_and_missing_dir() -> None:
    with pytest.raises(InputError, match="unknown dataset"):
        load_dataset("nope", "/tmp")
    with pytest.raises(InputError, match="not found"):
        load_dataset("wice", "/definitely/not/here")


def test_balanced_head_keeps_both_labels() -> None:
    from guardrail.evaluation.datasets import EvalExample

    exs = [EvalExample(id=str(i), response="r", label=int(i >= 8), dataset="d") for i in range(10)]
    head = balanced_head(exs, 4)
    assert sorted(e.label for e in head) == [0, 0, 1, 1]


# --- conditions -----------------------------------------------------------------------------


def test_conditions_build_valid_configs() -> None:
    plain = condition_config(CONDITIONS["plain"])
    assert not plain.hallucination.decompose_claims and not plain.hallucination.use_windows
    assert not plain.hallucination.threshold.enabled
    assert "coherence" in plain.disabled_stages
    assert condition_config(CONDITIONS["adaptive"]).hallucination.threshold.enabled
    assert condition_config(CONDITIONS["ratio"]).hallucination.policy == "ratio"
    assert "fact_validation" not in condition_config(CONDITIONS["facts"]).disabled_stages
    tuned = condition_config(CONDITIONS["adaptive"], hallucination={"threshold": {"t_low": 0.9}})
    assert tuned.hallucination.threshold.t_low == 0.9
    from guardrail.evaluation.conditions import get_condition

    with pytest.raises(ConfigError):
        get_condition("bogus")


# --- metrics --------------------------------------------------------------------------------


def test_metrics_match_sklearn() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.integers(0, 2, 60)
        s = np.round(rng.random(60) + 0.4 * y, 2)  # ties included
        p = (s > 0.6).astype(int)
        m = binary_metrics(y.tolist(), p.tolist(), s.tolist())
        assert m.balanced_accuracy == pytest.approx(sk.balanced_accuracy_score(y, p))
        assert m.precision == pytest.approx(sk.precision_score(y, p, zero_division=0))
        assert m.recall == pytest.approx(sk.recall_score(y, p, zero_division=0))
        assert m.f1 == pytest.approx(sk.f1_score(y, p, zero_division=0))
        assert m.auroc == pytest.approx(sk.roc_auc_score(y, s))
        assert m.tp + m.fp + m.tn + m.fn == 60


def test_auroc_single_class_and_sweep() -> None:
    assert auroc([1, 1], [0.2, 0.3]) is None
    sweep = threshold_sweep([1, 0, 1, 0], [0.1, 0.9, 0.2, 0.8], [0.5, 0.0])
    assert sweep[0].balanced_accuracy == 1.0 and sweep[1].recall == 0.0
    with pytest.raises(ValueError):
        binary_metrics([0, 2], [0, 1])


def test_mcnemar_exact_and_chi2() -> None:
    from scipy import stats

    y = [1] * 40
    a = [1] * 30 + [0] * 10  # a right on 30
    b = [1] * 22 + [0] * 18  # b right on 22; a-only right 8, b-only right 0
    r = mcnemar(y, a, b, "a", "b")
    assert (r.a_only_correct, r.b_only_correct, r.method) == (8, 0, "exact")
    assert r.p_value == pytest.approx(stats.binomtest(0, 8, 0.5).pvalue)
    assert r.p_value == pytest.approx(2 * 0.5**8)
    y2 = [1] * 100
    a2 = [1] * 70 + [0] * 30
    b2 = [0] * 20 + [1] * 50 + [0] * 30  # a-only 20, b-only 0 → 20 discordant
    r2 = mcnemar(y2, a2, b2, exact=False)
    assert r2.method == "chi2_cc" and r2.statistic == pytest.approx((20 - 1) ** 2 / 20)
    assert r2.p_value == pytest.approx(stats.chi2.sf(361 / 20, 1))
    assert mcnemar([1, 0], [1, 0], [1, 0]).p_value == 1.0


# --- tuning ---------------------------------------------------------------------------------


def test_dev_test_split_is_deterministic_stratified_and_disjoint() -> None:
    ids = [f"e{i}" for i in range(100)]
    labels = [int(i % 4 == 0) for i in range(100)]
    dev1, test1 = dev_test_split(ids, labels, 0.3, seed=7)
    dev2, test2 = dev_test_split(list(reversed(ids)), list(reversed(labels)), 0.3, seed=7)
    assert sorted(dev1) == sorted(dev2) and sorted(test1) == sorted(test2)
    assert not set(dev1) & set(test1) and len(dev1) + len(test1) == 100
    assert sum(labels[int(i[1:])] for i in dev1) == round(0.3 * 25)
    assert set(dev_test_split(ids, labels, 0.3, seed=8)[0]) != set(dev1)
    with pytest.raises(InputError):
        dev_test_split(ids, labels, 1.5, seed=1)


def test_tuning_finds_the_separating_threshold_on_dev() -> None:
    rng = np.random.default_rng(1)
    items = []
    for i in range(200):
        label = i % 2
        e = float(rng.uniform(0.0, 0.25) if label else rng.uniform(0.35, 1.0))
        items.append(
            TuneItem(
                id=str(i),
                label=label,
                retrieval_score=float(rng.uniform(0.2, 0.8)),
                min_entailment=e,
                contradicted_share=float(label),
                unsupported_share=0.0,
            )
        )
    report = tune("synthetic", items, items, 0.3, 3, "claims_windows")
    by = {s.family: s for s in report.settings}
    assert by["fixed"].dev.balanced_accuracy == 1.0 and by["fixed"].test.balanced_accuracy == 1.0
    assert 0.25 <= by["fixed"].params["fixed"] <= 0.35
    assert by["adaptive"].dev.balanced_accuracy == 1.0
    assert by["ratio"].test.balanced_accuracy == 1.0
    assert len(report.dev_ids) == 60 and not set(report.dev_ids) & set(report.test_ids)
    assert tune("synthetic", items, items, 0.3, 3, "cw").dev_ids == report.dev_ids
    assert predict_ratio([TuneItem(id="u", label=1)], 0.3, 0.8) == [1]  # unchecked → flagged
    assert AdaptiveThreshold(**by["adaptive"].params).t_high <= by["adaptive"].params["t_low"]


# --- calibration ----------------------------------------------------------------------------


def test_temperature_scaling_recovers_overconfidence() -> None:
    rng = np.random.default_rng(2)
    n = 3000
    true_logits = rng.normal(0.0, 1.0, (n, 3))
    true_p = np.exp(true_logits) / np.exp(true_logits).sum(1, keepdims=True)
    entailed = rng.random(n) < true_p[:, 0]
    labels = np.where(entailed, 0, 1)
    overconfident = cal.scaled_probs(true_p, 1 / 3.0)  # logits × 3
    t = cal.fit_temperature(overconfident, labels)
    assert t == pytest.approx(3.0, rel=0.15)
    report = cal.calibrate(
        "syn", "plain", [str(i) for i in range(n)], overconfident, labels, 0.3, 0
    )
    assert report.helps and report.test_after.ece < report.test_before.ece
    assert cal.ece(true_p[:, 0], labels) < cal.ece(overconfident[:, 0], labels)
    np.testing.assert_allclose(cal.scaled_probs(true_p, 1.0), true_p, atol=1e-6)


def test_reliability_bins_count_everything() -> None:
    p = np.array([0.05, 0.15, 0.95, 0.95])
    bins = cal.reliability(p, np.array([1, 1, 0, 1]))
    assert sum(b.count for b in bins) == 4 and bins[9].accuracy == 0.5
    assert cal.ece(p, np.array([1, 1, 0, 1])) == pytest.approx((0.05 + 0.15 + 2 * 0.45) / 4)


def test_vectorised_rule_matches_the_config_threshold() -> None:
    rng = np.random.default_rng(4)
    items = [
        TuneItem(
            id=str(i),
            label=i % 2,
            retrieval_score=None if i % 7 == 0 else float(rng.uniform(-0.2, 1.0)),
            min_entailment=None if i % 11 == 0 else float(rng.random()),
        )
        for i in range(300)
    ]
    for t in (AdaptiveThreshold(), AdaptiveThreshold(t_low=0.9, t_high=0.1, midpoint=0.3),
              AdaptiveThreshold(enabled=False, fixed=0.35)):  # fmt: skip
        expected = [
            1 if it.min_entailment is None
            else int(it.min_entailment < t.threshold(it.retrieval_score))
            for it in items
        ]  # fmt: skip
        assert predict_weakest_link(items, t) == expected


# --- runner: report → prediction ------------------------------------------------------------


def _report(
    label: str, nli: float | None, thr: float | None, statuses: Sequence[str] = ()
) -> object:
    from guardrail.report import (
        Accept,
        Claim,
        GuardReport,
        Span,
        StageRecord,
        StageStatus,
        Verdict,
        VerdictLabel,
        VerifierScores,
    )

    claims = [
        Claim(text="c", span=Span(start=0, end=1), status=s,
              scores=VerifierScores(entailment=0.2, neutral=0.5, contradiction=0.3))
        for s in statuses
    ]  # fmt: skip
    return GuardReport(
        original="r",
        corrected="r",
        annotated="r",
        confidence=0.5,
        recommendation=Accept(),
        claims=claims,
        verdict=Verdict(label=VerdictLabel(label), nli_score=nli, threshold=thr,
                        retrieval_score=0.6, reason="why"),
        stages=[StageRecord(name="hallucination", status=StageStatus.RAN)],
    )  # fmt: skip


def test_result_from_report_scores_and_fail_closed() -> None:
    from guardrail.config import HallucinationConfig
    from guardrail.evaluation.datasets import EvalExample
    from guardrail.evaluation.runner import guard_input, result_from_report

    ex = EvalExample(id="x", response="r", passages=["p"], label=1, dataset="d")
    weakest = HallucinationConfig()
    r = result_from_report(ex, _report("HALLUCINATION", 0.3, 0.5), weakest)  # type: ignore[arg-type]
    assert (r.prediction, r.score, r.error) == (1, pytest.approx(0.2), None)
    r = result_from_report(ex, _report("VERIFIED", 0.9, 0.5), weakest)  # type: ignore[arg-type]
    assert (r.prediction, r.score) == (0, pytest.approx(-0.4))
    r = result_from_report(ex, _report("UNVERIFIED", None, None), weakest)  # type: ignore[arg-type]
    assert (r.prediction, r.score, r.error) == (1, 1.0, "why")
    # an answer that states no checkable fact hallucinates nothing: not flagged, lowest score
    r = result_from_report(ex, _report("NOTHING_TO_CHECK", None, None), weakest)  # type: ignore[arg-type]
    assert (r.prediction, r.score) == (0, -1.0)
    ratio = HallucinationConfig(policy="ratio")
    report = _report("HALLUCINATION", 0.2, 0.5, ["contradicted", "supported", "unverified"])
    r = result_from_report(ex, report, ratio)  # type: ignore[arg-type]
    assert r.score == pytest.approx(0.5 - 0.3) and len(r.claims) == 3
    ex2 = ex.model_copy(update={"passages": ["a", "b"], "meta": {"passage_scores": [0.9, None]}})
    assert [p["score"] for p in guard_input(ex2, [0.1, 0.2])["passages"]] == [0.9, 0.2]


def test_replay_agreement_and_read_details(tmp_path: Path) -> None:
    from guardrail.evaluation.tune import check_replay, read_details

    rows = [
        {"id": "a", "label": 1, "retrieval_score": 0.9,
         "claims": [{"entailment": 0.2, "neutral": 0.7, "contradiction": 0.1, "status": "unsupported"},
                    {"entailment": 0.9, "neutral": 0.05, "contradiction": 0.05, "status": "supported"}]},
        {"id": "b", "label": 0, "retrieval_score": 0.1,
         "claims": [{"entailment": 0.8, "neutral": 0.1, "contradiction": 0.1, "status": "supported"}]},
        {"id": "c", "label": 1, "retrieval_score": None,
         "claims": [{"entailment": 0.9, "neutral": 0.1, "contradiction": 0.0, "status": "unverified"}]},
    ]  # fmt: skip
    items = read_details(_jsonl(tmp_path / "details.jsonl", rows))
    assert items[0].min_entailment == 0.2 and items[0].unsupported_share == 0.5
    assert items[2].min_entailment is None  # an unchecked claim: flagged whatever T is
    report = tune("d", items * 1, None, 0.5, 0, "claims_windows")
    t = AdaptiveThreshold()
    ok = check_replay(report, items, {"a": 1, "b": 0, "c": 1}, t)
    assert ok.replay_agreement == {"weakest_link": 1.0}
    off = check_replay(report, items, {"a": 1, "b": 1, "c": 1}, t)
    assert off.replay_agreement["weakest_link"] == pytest.approx(2 / 3)
