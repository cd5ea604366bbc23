"""Chinese, Japanese and Korean answers end to end, with the original detector's examples.

A scripted verifier stands in for the multilingual model at the model boundary (routed as
``models.verifier_languages: {zh: ...}``), so each test says which rule broke: sentence and
claim splitting on CJK punctuation, spans in characters, names / numbers / dates next to CJK
characters, no name flags for text without capital letters, markers placed in CJK text, and the
calibration of a routed verifier per language.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardrail import Guardrail
from guardrail.report import GuardReport
from guardrail.text.mentions import find_mentions
from guardrail.text.sentences import split_sentences
from guardrail.verifiers.scripted import Scores, ScriptedVerifier

# The original detector's examples (premise, answer).
SUPPORTED = ("小明今年 18 岁，正在清华大学读计算机专业。", "小明是一名大学生。")
CONTRADICTED = ("这篇论文发表于 2023 年。", "这篇论文是 2021 年发表的。")
NEUTRAL = (
    "AlphaCodium 是一种代码生成方法，通过迭代改进提升 LLM 的代码能力。",
    "AlphaCodium 是 Google 在 2024 年发布的代码生成工具。它使用强化学习来训练模型。",
)


def _zh_model(**script: Scores) -> ScriptedVerifier:
    return ScriptedVerifier(
        {(None, claim): label for claim, label in script.items()},
        default="neutral",
        name="zh-nli",
        languages=("zh",),
        calibration_id=None,
    )


def _run(verifier: ScriptedVerifier, premise: str, answer: str, **config: object) -> GuardReport:
    models = {"verifier_languages": {"zh": verifier}}
    guard = Guardrail({"models": models, **config})
    return guard.invoke({"query": "这是什么？", "response": answer, "passages": [premise]})


def test_sentences_split_on_cjk_punctuation_with_character_spans() -> None:
    text = "AlphaCodium 是一种代码生成方法。它由 Google 开发！真的吗？東京は日本の首都です。"
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == [
        "AlphaCodium 是一种代码生成方法。",
        "它由 Google 开发！",
        "真的吗？",
        "東京は日本の首都です。",
    ]
    assert all(text[s.start : s.end] == s.text for s in sentences)
    korean = "서울은 한국의 수도이다. 인구는 약 950만 명이다."
    assert [s.text for s in split_sentences(korean)] == [
        "서울은 한국의 수도이다.",
        "인구는 약 950만 명이다.",
    ]


def test_mentions_next_to_cjk_characters() -> None:
    def found(text: str) -> list[tuple[str, str]]:
        return [(m.kind.value, m.text) for m in find_mentions(text)]

    assert found("它由Google开发。") == [("name", "Google")]
    assert found("小明今年18岁。") == [("number", "18")]
    assert found("这篇论文是2021年发表的。") == [("date", "2021年")]
    assert found("会议在14:30开始。") == [("time", "14:30")]
    # text with no capital letters gives no names (nothing to flag as invented)
    assert found("小明正在清华大学读计算机专业。") == []
    # English is read as before
    assert found("It was released by Google in 2024.") == [("name", "Google"), ("date", "2024")]


def test_supported_example_is_delivered_unmarked() -> None:
    premise, answer = SUPPORTED
    report = _run(_zh_model(**{answer: "entailment"}), premise, answer)
    [claim] = report.claims
    assert claim.language == "zh" and claim.status.value == "supported"
    assert (claim.span.start, claim.span.end) == (0, len(answer))
    assert report.verdict.label.value == "VERIFIED"
    assert report.recommendation.action == "accept"
    assert report.delivered_text == answer
    assert not report.hallucination_flags


def test_contradicted_example_is_flagged_at_the_year() -> None:
    premise, answer = CONTRADICTED
    report = _run(_zh_model(**{answer: "contradiction"}), premise, answer)
    [claim] = report.claims
    assert claim.status.value == "contradicted"
    assert report.verdict.label.value == "HALLUCINATION"
    spans = {f.type.value: answer[f.span.start : f.span.end] for f in report.hallucination_flags}
    assert spans["contradicts_fact"] == answer
    assert spans["temporal_error"] == "2021 年"
    assert report.delivered_text != answer  # never shown unmarked


def test_neutral_example_flags_the_invented_name_and_year_only() -> None:
    premise, answer = NEUTRAL
    report = _run(_zh_model(), premise, answer)
    assert [c.text for c in report.claims] == [
        "AlphaCodium 是 Google 在 2024 年发布的代码生成工具。",
        "它使用强化学习来训练模型。",
    ]
    assert [c.status.value for c in report.claims] == ["unsupported", "unsupported"]
    found = sorted(
        (f.type.value, answer[f.span.start : f.span.end])
        for f in report.hallucination_flags
        if f.type.value != "unsupported_claim"
    )
    # AlphaCodium is in the evidence: only Google and 2024 are new
    assert found == [("fabricated_fact", "2024 年"), ("nonexistent_entity", "Google")]
    assert report.verdict.label.value == "HALLUCINATION"


def test_numbers_written_against_cjk_text_are_found_in_the_evidence() -> None:
    premise = "小明今年 18 岁，正在清华大学读计算机专业。"
    answer = "小明今年18岁，在清华大学读书。"
    report = _run(_zh_model(), premise, answer)
    [claim] = report.claims
    assert claim.status.value == "unsupported"
    kinds = [f.type.value for f in report.hallucination_flags]
    assert "fabricated_fact" not in kinds and "nonexistent_entity" not in kinds


def test_uncertain_chinese_claim_is_annotated_right_after_its_full_stop() -> None:
    premise = NEUTRAL[0] + "该方法在 CodeContests 数据集上达到了 state-of-the-art 的性能。"
    first, second = "AlphaCodium 是一种代码生成方法。", "它在 CodeContests 上表现很好。"
    model = _zh_model(**{first: "entailment", second: (0.45, 0.5, 0.05)})
    report = _run(model, premise, first + second)
    assert [c.outcome.value for c in report.claims if c.outcome] == ["supported", "uncertain"]
    assert report.recommendation.action == "accept_with_flags"
    assert report.delivered_text == first + second + "[uncertain: not confirmed by the sources]"


def test_routed_claims_take_their_verifiers_calibration_for_their_language(
    tmp_path: Path,
) -> None:
    from guardrail.hallucination.calibration import BUNDLED

    premise, answer = SUPPORTED
    shipped = json.loads(Path(BUNDLED).read_text(encoding="utf-8"))
    folder = tmp_path / "calibrations"
    folder.mkdir()
    for language, threshold in (("zh", 0.61), ("ja", 0.33)):
        own = dict(shipped, threshold=threshold)
        own["meta"] = {"verifier_id": "zh-nli", "language": language}
        (folder / f"zh-nli-{language}.json").write_text(json.dumps(own), encoding="utf-8")
    model = _zh_model(**{answer: "entailment"})
    report = _run(model, premise, answer, hallucination={"calibration": str(folder)})
    [claim] = report.claims
    assert "calibration zh-nli-zh.json" in (claim.reason or "")
    assert "claim threshold 0.61" in (claim.reason or "")
    assert "routed: claim 0 (zh) by zh-nli, calibration zh-nli-zh.json" in report.verdict.method
    # no calibration of its own: uncalibrated at 0.5, and said so
    plain = _run(_zh_model(**{answer: "entailment"}), premise, answer)
    assert "uncalibrated (threshold 0.5)" in plain.verdict.method


@pytest.mark.parametrize("language", ["ja", "ko"])
def test_japanese_and_korean_claims_without_a_route_name_the_preset(language: str) -> None:
    answer = {"ja": "東京は日本の首都です。", "ko": "서울은 한국의 수도이다."}[language]
    report = Guardrail().invoke({"response": answer, "passages": [answer]})
    [claim] = report.claims
    assert claim.language == language and claim.status.value == "unverified"
    assert f"--route {language}=mdeberta-v3-base-xnli-2mil7" in (claim.reason or "")


def test_an_english_claim_against_chinese_evidence_goes_to_the_route_reading_both() -> None:
    answer = "The paper was published in 2023 by a team at Tsinghua University."
    premise = "这篇论文发表于 2023 年，作者来自清华大学。"
    plain = Guardrail().invoke({"response": answer, "passages": [premise]})
    assert plain.verdict.label.value == "UNVERIFIED"
    assert "--route zh=multilingual-minilmv2-l6-xnli" in (plain.verdict.reason or "")
    both = ScriptedVerifier(
        default="entailment", name="xnli", languages=("en", "zh"), calibration_id=None
    )
    report = Guardrail({"models": {"verifier_languages": {"zh": both}}}).invoke(
        {"response": answer, "passages": [premise]}
    )
    [claim] = report.claims
    assert claim.language == "en" and claim.status.value == "supported"
    assert "verifier xnli" in (claim.reason or "")
    assert both.calls  # the bundled English model never read the Chinese passage


def test_removing_a_contradicted_chinese_sentence_leaves_the_rest_intact() -> None:
    premise = SUPPORTED[0] + CONTRADICTED[0]
    answer = SUPPORTED[1] + CONTRADICTED[1]
    model = _zh_model(**{SUPPORTED[1]: "entailment", CONTRADICTED[1]: "contradiction"})
    report = _run(model, premise, answer)
    assert [c.status.value for c in report.claims] == ["supported", "contradicted"]
    [removal] = [c for c in report.corrections if c.type.value == "removal"]
    assert answer[removal.span.start : removal.span.end] == CONTRADICTED[1]
    assert report.delivered_text == SUPPORTED[1]
