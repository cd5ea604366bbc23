"""benchmarks/decisions.py: loaders, splits, claim alignment and metrics on tiny inline data.

No model runs here; the last test reads the real sets when ``../shared/data`` is present.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.decisions import (
    SCORE_PACKAGES,
    Judged,
    align,
    balanced_accuracy,
    by_setting,
    delivery,
    environment,
    judged_from_report,
    main,
    merge_results,
    metrics,
    pooled,
    shown_unmarked,
    table,
)
from benchmarks.decisions_data import (
    DEFAULT_CAPS,
    LFQA_SETTINGS,
    Item,
    LabelledSentence,
    data_dir,
    load,
    locate,
    passages_of,
    sample,
    split_of,
)


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _votes(*answers: str) -> list[dict[str, object]]:
    return [{"worker_id": n, "response": a} for n, a in enumerate(answers)]


def test_split_is_deterministic_and_near_the_dev_share() -> None:
    texts = [f"answer number {n}" for n in range(1000)]
    splits = [split_of(t) for t in texts]
    assert splits == [split_of(t) for t in texts]
    assert set(splits) == {"dev", "test"}
    assert 0.34 < splits.count("dev") / len(splits) < 0.46


def test_passages_split_at_sentence_ends() -> None:
    text = " ".join(f"Sentence {n} says something fairly long about topic {n}." for n in range(60))
    parts = passages_of(text, max_chars=300)
    assert len(parts) > 5
    assert all(p.endswith(".") and len(p) <= 300 for p in parts)
    assert " ".join(parts) == text
    assert passages_of("Short.") == ["Short."]


def test_locate_exact_fuzzy_and_missing() -> None:
    response = "First point here.\n1. The tool Intellilink links data sources.\nLast one."
    assert locate(response, "First point here.") == (0, 17)
    span = locate(response, "1. The tool Intellilink links data sources")
    assert span is not None and response[span[0] : span[1]].startswith("1. The tool")
    fuzzy = locate(response, "The tool  Intellilink \r\n links data-sources.")
    assert fuzzy is not None and "Intellilink links data sources" in response[fuzzy[0] : fuzzy[1]]
    assert locate(response, "Completely unrelated words about volcanoes erupting") is None


def test_qags_labels_by_majority(tmp_path: Path) -> None:
    _write_jsonl(
        tmp_path / "qags" / "data" / "mturk_cnndm.jsonl",
        [
            {
                "article": "The cat sat on the mat. It was a sunny day.",
                "summary_sentences": [
                    {
                        "sentence": "The cat sat on the mat.",
                        "responses": _votes("yes", "no", "yes"),
                    },
                    {"sentence": "It rained all day.", "responses": _votes("no", "no", "yes")},
                ],
            }
        ],
    )
    (item,) = load("qags", tmp_path, "all")
    assert item.response == "The cat sat on the mat. It rained all day."
    assert item.supported is False
    assert [(s.start, s.end, s.supported) for s in item.sentences] == [
        (0, 23, True),
        (24, 42, False),
    ]
    assert item.passages == ["The cat sat on the mat. It was a sunny day."]
    assert item.split in ("dev", "test") and load("qags", tmp_path, item.split) == [item]


def _fc_sentence(text: str, worthy: str, stances: list[list[str]]) -> dict[str, object]:
    return {
        "text": text,
        "sentence_checkworthiness": worthy,
        "claims": [f"{text} ({n})" for n in range(len(stances))],
        "auto_evidence": [[f"snippet {s}" for s in range(len(group))] for group in stances],
        "stance_claim_autoEvid": stances,
    }


def test_factcheck_grounding_labels(tmp_path: Path) -> None:
    row = {
        "prompt": "Who founded X?",
        "response": "Hello there!\r\nX was founded by Ann in 1990. It is big.",
        "sentences": {
            "sentence1": _fc_sentence("Hello there!", "other", []),
            "sentence2": _fc_sentence(
                "X was founded by Ann in 1990.",
                "yes",
                [["irrelevant", "completely-support"], ["partially-support", "refute"]],
            ),
            "sentence3": _fc_sentence("It is big.", "yes", [["completely-support"]]),
        },
    }
    _write_jsonl(tmp_path / "factcheck_gpt" / "factcheck-GPT-benchmark.jsonl", [row])
    (item,) = load("factcheck_gpt", tmp_path, "all")
    assert item.query == "Who founded X?"
    assert "\r" not in item.response
    # claim 2 of sentence 2 has no completely-support snippet: the sentence is unsupported
    assert [(s.text, s.supported) for s in item.sentences] == [
        ("X was founded by Ann in 1990.", False),
        ("It is big.", True),
    ]
    assert item.supported is False
    assert item.passages == ["snippet 0", "snippet 1"]  # deduplicated


def test_wice_and_halueval(tmp_path: Path) -> None:
    claim_dir = tmp_path / "wice" / "data" / "entailment_retrieval" / "claim"
    _write_jsonl(
        claim_dir / "dev.jsonl",
        [
            {"label": "supported", "claim": "A is B.", "evidence": ["A is B.", "C."], "meta": {"id": "d1", "claim_title": "A"}},
            {"label": "partially_supported", "claim": "A is D.", "evidence": ["A is B."], "meta": {"id": "d2"}},
        ],
    )  # fmt: skip
    _write_jsonl(claim_dir / "test.jsonl", [])
    wice = load("wice", tmp_path, "dev")
    assert [i.supported for i in wice] == [True, False]
    assert wice[0].query == "What do we know about A?" and wice[0].passages == ["A is B. C."]
    assert load("wice", tmp_path, "test") == [] and len(load("wice", tmp_path, "all")) == 2
    _write_jsonl(
        tmp_path / "halueval" / "generation" / "qa" / "qa_one-turn_data.json",
        [
            {"knowledge": f"K{n}.", "question": f"Q{n}?", "right_answer": "R", "hallucinated_answer": "H"}
            for n in range(20)
        ],
    )  # fmt: skip
    halu = load("halueval", tmp_path, "all")
    assert len(halu) == 40 and sum(i.supported for i in halu) == 20
    picked = sample(halu, 10)
    assert len(picked) == 10 and picked == sample(halu, 10)
    groups = {i.group for i in picked}
    assert all(sum(i.group == g for i in picked) == 2 for g in groups)  # pairs stay together


def _lfqa_row(qid: int, sentences: list[tuple[str, list[str]]]) -> dict[str, object]:
    return {
        "question_id": qid,
        "question": f"Why {qid}?",
        "answers": [text for text, _ in sentences],
        "annotations": [{"answer": text, "labels": labels} for text, labels in sentences],
    }


def test_lfqa_answers_split_and_sampled_by_question(tmp_path: Path) -> None:
    base = tmp_path / "lfqa_dev"
    yes, no = ["supported"] * 3, ["not_supported"] * 3
    for setting in LFQA_SETTINGS:
        rows = [
            _lfqa_row(n, [(" It is so.", yes), ("Because of A.</s>", ["supported", "partially", "supported"])])
            for n in range(12)
        ]  # fmt: skip
        if setting == "gpt3_whudoc":
            rows[0] = _lfqa_row(0, [("It is so.", yes), ("B  did it.", ["supported", "partially", "not_supported"]), ("</s>", no)])  # fmt: skip
        (base / "annotations").mkdir(parents=True, exist_ok=True)
        (base / "annotations" / f"annotations-{setting}.json").write_text(json.dumps(rows))
    long_text = " ".join(
        f"Sentence {n} of a long web page about the topic at hand." for n in range(60)
    )
    for name in ("webgpt", "human"):
        docs = [
            {"question_id": n, "question": f"Why {n}?", "docs": [
                {"doc_id": f"{name}:{n}", "title": f"{name} page {n}", "text": f"{name} says {n}."},
                {"doc_id": f"{name}:{n}b", "title": "", "text": long_text},
            ]}
            for n in range(12)
        ]  # fmt: skip
        (base / "docs").mkdir(parents=True, exist_ok=True)
        (base / "docs" / f"docs-{name}.json").write_text(json.dumps(docs))
    items = load("lfqa", tmp_path, "all")
    assert len(items) == 12 * len(LFQA_SETTINGS)
    first = {i.setting: i for i in items if i.group == "lfqa-0"}
    assert set(first) == set(LFQA_SETTINGS)
    wdoc, whudoc = first["gpt3_wdoc"], first["gpt3_whudoc"]
    assert wdoc.item_id == "lfqa-gpt3_wdoc-0" and wdoc.query == "Why 0?"
    assert wdoc.response == "It is so. Because of A."  # stray </s> and spaces gone
    assert [(s.text, s.supported) for s in wdoc.sentences] == [
        ("It is so.", True),
        ("Because of A.", True),
    ]
    assert wdoc.supported is True
    assert whudoc.response == "It is so. B did it."  # an empty "</s>" sentence is dropped
    assert [s.supported for s in whudoc.sentences] == [True, False] and not whudoc.supported
    assert wdoc.passages[0] == "webgpt page 0\nwebgpt says 0."
    assert whudoc.passages[0] == "human page 0\nhuman says 0."  # *_whudoc: human documents
    assert len(wdoc.passages) > 2 and all(len(p) <= 1500 for p in wdoc.passages)  # long doc cut
    # one question, one split, whatever the setting
    for n in range(12):
        assert len({i.split for i in items if i.group == f"lfqa-{n}"}) == 1
    dev = load("lfqa", tmp_path, "dev")
    assert dev and all(i.split == "dev" for i in dev)
    assert len(dev) + len(load("lfqa", tmp_path, "test")) == len(items)
    picked = sample(items, 10)  # whole questions: 2 questions × 6 settings
    assert len(picked) == 12 and picked == sample(items, 10)
    assert all(sum(i.group == g for i in picked) == 6 for g in {i.group for i in picked})


def test_shown_unmarked() -> None:
    text = "The sky is blue."
    assert shown_unmarked(text, "Hello. The sky  is\nblue. Grass is green.")
    assert shown_unmarked(text, "The sky is blue.")
    assert not shown_unmarked(text, None)  # regenerate / human_review: nothing shown
    assert not shown_unmarked(text, "The sky is blue [unverified].")  # note before the period
    assert not shown_unmarked(text, "The sky is blue. [possible hallucination: fabricated fact]")
    assert not shown_unmarked(text, "Grass is green.")  # removed
    assert not shown_unmarked(text, "The sky is green.")  # corrected
    assert not shown_unmarked("He is tall.", "Ahe is tall.")  # not at a word start
    # a later unmarked copy counts
    assert shown_unmarked(text, "The sky is blue. [unverified] The sky is blue. Yes.")
    assert not shown_unmarked("", "anything")


def _report(action: str, delivered: str | None) -> SimpleNamespace:
    """A hand-made stand-in for ``GuardReport`` (only what ``judged_from_report`` reads)."""
    return SimpleNamespace(
        verdict=SimpleNamespace(label="HALLUCINATION"),
        recommendation=SimpleNamespace(action=action),
        confidence=0.5,
        claims=[],
        delivered_text=delivered,
    )


def _sentences_item(name: str, sentences: list[tuple[str, bool]], setting: str = "") -> Item:
    response = " ".join(text for text, _ in sentences)
    labelled, cursor = [], 0
    for text, supported in sentences:
        start = response.index(text, cursor)
        cursor = start + len(text)
        labelled.append(LabelledSentence(start, cursor, supported, text))
    return Item(
        "lfqa", name, "test", "q", response, ["p"], all(s for _, s in sentences), labelled,
        group=name, setting=setting,
    )  # fmt: skip


def test_delivery_figures_from_reports() -> None:
    a = _sentences_item("a", [("A one.", True), ("A two.", True), ("A three.", False)], "gpt3_wdoc")
    b = _sentences_item("b", [("B one.", True), ("B two.", True)], "gpt3")
    c = _sentences_item("c", [("C one.", True), ("C two.", False)], "alpaca_wdoc")
    d = _sentences_item("d", [("D one.", True)], "webgpt")
    judged = [
        # flags: A two annotated, A three (unsupported) removed -> 1 of 2 supported shown
        judged_from_report(a, _report("correct_and_deliver", "A one. A two [unverified].")),
        # a fully supported answer sent back: nothing shown
        judged_from_report(b, _report("regenerate", None)),
        # delivered as-is: the unsupported sentence is shown unmarked too
        judged_from_report(c, _report("accept", c.response)),
        judged_from_report(d, _report("human_review", None)),
    ]
    assert judged[0].delivered == "A one. A two [unverified]."
    m = delivery(judged)
    assert (m["sentences_supported"], m["sentences_unsupported"]) == (6, 2)
    assert m["supported_shown"] == 0.3333  # A one, C one
    assert m["unsupported_shown"] == 0.5  # C two
    assert m["delivery_bacc"] == round((0.3333 + 1 - 0.5) / 2, 4)
    assert m["supported_sent_back"] == 1.0  # b and d, both fully supported, both sent back
    assert delivery([])["delivery_bacc"] is None
    full = metrics(judged)
    assert full["delivery_bacc"] == m["delivery_bacc"] and full["verdict_bacc"] is not None
    out = pooled({"lfqa": judged, "qags": [Judged(_item([True]), "VERIFIED", "accept", 0.9)]})
    assert out["lfqa_rag"]["n"] == 2  # gpt3_wdoc and alpaca_wdoc only
    assert (
        out["lfqa_rag"]["supported_shown"] == 0.6667 and out["lfqa_rag"]["unsupported_shown"] == 0.5
    )
    assert out["multi-sentence"]["n"] == 1  # QAGS + Factcheck-GPT, as before
    assert out["multi-sentence+lfqa"]["n"] == 5 and out["all"]["n"] == 5
    assert list(by_setting(judged)) == ["gpt3_wdoc", "alpaca_wdoc", "webgpt", "gpt3"]
    text = table(out, "test")
    assert "delivery bAcc" in text and "lfqa_rag" in text and "≥ 0.74 lfqa_rag" in text


def _item(supported: list[bool], name: str = "x") -> Item:
    sentences = [LabelledSentence(10 * n, 10 * n + 9, s, "s") for n, s in enumerate(supported)]
    return Item("qags", name, "test", "q", "r" * 40, ["p"], all(supported), sentences)


def test_align_by_largest_overlap() -> None:
    sentences = _item([True, False, True]).sentences
    claims = [(0, 9, "supported"), (8, 19, "unsupported"), (35, 40, "supported"), (31, 33, "x")]
    assert align(claims, sentences) == [0, 1, None, None]


def test_metrics() -> None:
    judged = [
        Judged(_item([True, True], "a"), "VERIFIED", "accept", 0.9, [(0, 9, "supported"), (10, 19, "supported")]),
        Judged(_item([True], "b"), "UNVERIFIED", "human_review", 0.4, [(0, 9, "unverified")]),
        Judged(_item([True, False], "c"), "HALLUCINATION", "accept_with_flags", 0.8,
               [(0, 9, "supported"), (10, 19, "unsupported"), (20, 25, "not_checkworthy")]),
        Judged(_item([False], "d"), "HALLUCINATION", "regenerate", 0.3, [(0, 9, "contradicted")]),
        Judged(_item([False], "e"), error="InputError: too long"),
    ]  # fmt: skip
    m = metrics(judged)
    assert (m["n"], m["supported"], m["unsupported"], m["errors"]) == (4, 2, 2, 1)
    assert m["verdict_bacc"] == 0.75  # UNVERIFIED counts as flagged
    assert m["supported_delivered"] == 0.5 and m["unsupported_delivered"] == 0.5
    assert m["delivered_bacc"] == 0.5
    assert m["claims_scored"] == 6 and m["claims_unsupported"] == 2
    assert m["claim_bacc"] == 0.875  # 3 of 4 supported claims passed, both unsupported flagged
    assert m["claims_not_checkworthy"] == 1 and m["claims_unaligned"] == 0
    assert m["actions"]["accept"] == 1 and m["actions"]["regenerate"] == 1
    assert balanced_accuracy([True, True], [True, False]) is None
    out = pooled({"qags": judged, "wice": judged[:1]})
    assert set(out) == {"qags", "wice", "multi-sentence", "all"}
    assert out["all"]["n"] == 5
    text = table(out, "test")
    assert "≥ 0.75" in text and "≤ 0.10" in text and "4 (2/2)" in text


def test_merge_splits_of_the_same_code_only(tmp_path: Path) -> None:
    m = metrics([Judged(_item([True]), "VERIFIED", "accept", 0.9, [(0, 9, "supported")])])
    base = {"code": {"commit": "abc", "source_sha256": "s1"}, "limit": None, "config": None}
    (tmp_path / "test.json").write_text(json.dumps({**base, "splits": {"test": {"qags": m}}}))
    (tmp_path / "dev.json").write_text(json.dumps({**base, "splits": {"dev": {"qags": m}}}))
    out = tmp_path / "before.json"
    assert (
        main(
            ["--merge", str(tmp_path / "test.json"), str(tmp_path / "dev.json"), "--out", str(out)]
        )
        == 0
    )
    assert set(json.loads(out.read_text())["splits"]) == {"test", "dev"}
    other = {**base, "code": {"commit": "def", "source_sha256": "s2"}, "splits": {"all": {}}}
    (tmp_path / "other.json").write_text(json.dumps(other))
    with pytest.raises(ValueError, match="different code"):
        main(["--merge", str(tmp_path / "other.json"), "--out", str(out)])


def test_environment_is_recorded_and_merges_only_when_equal(tmp_path: Path) -> None:
    env = environment()
    assert env["python"] and env["onnxruntime"] and env["tokenizers"]  # installed here
    assert set(env) == {"python", *SCORE_PACKAGES}
    m = metrics([Judged(_item([True]), "VERIFIED", "accept", 0.9, [(0, 9, "supported")])])
    base = {"code": {"commit": "abc", "source_sha256": "s1"}, "limit": None, "config": None}
    old = {**base, "splits": {"test": {"qags": m}}}  # written before environments were kept
    dev = {**base, "environment": env, "splits": {"dev": {"qags": m}}}
    assert set(merge_results(old, dev)["splits"]) == {"test", "dev"}
    moved = {**base, "environment": {**env, "onnxruntime": "0.0.1"}, "splits": {"x": {}}}
    with pytest.raises(ValueError, match="different environment"):
        merge_results(dev, moved)


def test_missing_data_dir_is_a_clear_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path / "absent")]) == 2
    assert "no data at" in capsys.readouterr().err


@pytest.mark.skipif(not data_dir().is_dir(), reason=f"shared data not present at {data_dir()}")
def test_real_sets_load_with_located_sentences() -> None:
    root = data_dir()
    counts = {name: len(load(name, root, "all")) for name in DEFAULT_CAPS}
    assert counts == {"qags": 235, "factcheck_gpt": 92, "wice": 707, "halueval": 500, "lfqa": 312}
    for name in ("qags", "factcheck_gpt", "lfqa"):
        items = load(name, root, "all")
        assert sum(i.unlocated for i in items) <= 3
        assert all(i.sentences and i.passages for i in items)
        assert {i.split for i in items} == {"dev", "test"}
    lfqa = load("lfqa", root, "all")
    assert sum(len(i.sentences) for i in lfqa) == 2014
    assert sum(i.split == "dev" for i in lfqa) == 126  # 21 of the 52 questions
    questions = {i.group: i.split for i in lfqa}
    assert all(questions[i.group] == i.split for i in lfqa)
