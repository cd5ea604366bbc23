"""Multilingual NLI presets on tiny random models of their architectures (no hub).

The encoded ids must be the ones the model cards' ``tokenizer(premise, hypothesis,
truncation=True)`` gives, written out independently here (XLM-R: ``<s> P </s></s> H </s>``;
mDeBERTa-v3: ``[CLS] P [SEP] H [SEP]``); the labels must be read from ``config.id2label``; and a
Chinese answer must reach the routed model from the command line in one line (``--route
zh=PRESET=DIR``), or stay UNVERIFIED with a reason naming the preset to configure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from guardrail.verifiers import load_verifier
from guardrail.verifiers.presets import PRESETS, multilingual_presets
from guardrail.verifiers.routing import RoutedVerifier, route_options, uncovered_reason
from guardrail.verifiers.scripted import ScriptedVerifier
from tests import tiny_presets as tiny

pytest.importorskip("transformers")

MINILM = "multilingual-minilmv2-l6-xnli"
MDEBERTA = "mdeberta-v3-base-xnli-2mil7"
PREMISE = "AlphaCodium 是一种基于代码生成的新方法，通过迭代改进提升 LLM 的代码能力。"
CLAIM = "AlphaCodium 是一种改进 LLM 代码生成能力的迭代方法。"
ZH_QUERY = "AlphaCodium 论文讲的是什么？"
ZH_PASSAGE = PREMISE + "该方法在 CodeContests 数据集上达到了 state-of-the-art 的性能。"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-multilingual")
    return {
        MINILM: tiny.build_multilingual_nli(root / "xlmr", "xlmr"),
        MDEBERTA: tiny.build_multilingual_nli(root / "mdeberta", "mdeberta"),
    }


def _load(models: dict[str, Path], name: str) -> Any:
    return load_verifier({"preset": name, "path": str(models[name])})


def _raw(path: Path, text: str) -> list[int]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path))
    return list(tok.backend_tokenizer.encode(text, add_special_tokens=False).ids)


def test_presets_keep_the_hub_ids_and_the_card_languages() -> None:
    minilm, mdeberta = PRESETS[MINILM], PRESETS[MDEBERTA]
    assert minilm.hub_id == "MoritzLaurer/multilingual-MiniLMv2-L6-mnli-xnli"
    assert mdeberta.hub_id == "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7"
    assert minilm.kind == mdeberta.kind == "nli"
    assert {"en", "zh", "de", "ar"} <= set(minilm.languages) and "ja" not in minilm.languages
    assert {"en", "zh", "ja", "ko", "pt"} <= set(mdeberta.languages)
    # the smallest preset that reads a language is the one suggested for it
    assert [p.name for p in multilingual_presets("zh")] == [MINILM, MDEBERTA]
    assert [p.name for p in multilingual_presets("ja")] == [MDEBERTA]
    assert multilingual_presets("xx") == []


def test_xlmr_pair_is_bos_premise_eos_eos_claim_eos(models: dict[str, Path]) -> None:
    from transformers import AutoTokenizer

    v = _load(models, MINILM)
    path = models[MINILM]
    expected = [0, *_raw(path, PREMISE), 2, 2, *_raw(path, CLAIM), 2]
    ids, types = v._encoder.encode((PREMISE, CLAIM))
    assert ids == expected
    assert set(types) == {0}  # XLM-R has one token type
    card = AutoTokenizer.from_pretrained(str(path))(PREMISE, CLAIM, truncation=True)
    assert card["input_ids"] == expected


def test_mdeberta_pair_is_cls_premise_sep_claim_sep(models: dict[str, Path]) -> None:
    from transformers import AutoTokenizer

    v = _load(models, MDEBERTA)
    path = models[MDEBERTA]
    expected = [1, *_raw(path, PREMISE), 2, *_raw(path, CLAIM), 2]
    ids, _ = v._encoder.encode((PREMISE, CLAIM))
    assert ids == expected
    card = AutoTokenizer.from_pretrained(str(path))(PREMISE, CLAIM, truncation=True)
    assert card["input_ids"] == expected


@pytest.mark.parametrize("name", [MINILM, MDEBERTA])
def test_scores_are_the_softmax_of_the_logits_in_id2label_order(
    models: dict[str, Path], name: str
) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    v = _load(models, name)
    assert v.name == name and v.covers("zh") and v.preset is PRESETS[name]
    path = str(models[name])
    enc = AutoTokenizer.from_pretrained(path)(PREMISE, CLAIM, truncation=True, return_tensors="pt")
    with torch.inference_mode():
        logits = AutoModelForSequenceClassification.from_pretrained(path)(**enc).logits[0]
    probs = torch.softmax(logits, -1).numpy()  # card: label_names = [entailment, neutral, contra]
    [p] = v.predict([(PREMISE, CLAIM)])
    assert [p.entailment, p.neutral, p.contradiction] == pytest.approx(probs.tolist(), abs=1e-5)


@pytest.mark.parametrize(("arch", "name"), [("xlmr", MINILM), ("mdeberta", MDEBERTA)])
def test_label_order_is_read_from_the_config(tmp_path: Path, arch: str, name: str) -> None:
    # the card's order: output 0 wins → entailment
    path = tiny.build_multilingual_nli(tmp_path / "card", arch)
    tiny.set_head_bias(path, (5.0, 0.0, 0.0), tiny.NLI_HEADS[arch])
    [p] = load_verifier({"preset": name, "path": str(path)}).predict([(PREMISE, CLAIM)])
    assert p.label == "entailment"
    # a model whose config orders them the other way: output 0 is contradiction
    flipped = {0: "contradiction", 1: "neutral", 2: "entailment"}
    other = tiny.build_multilingual_nli(tmp_path / "flipped", arch, id2label=flipped)
    tiny.set_head_bias(other, (5.0, 0.0, 0.0), tiny.NLI_HEADS[arch])
    [q] = load_verifier({"preset": name, "path": str(other)}).predict([(PREMISE, CLAIM)])
    assert q.label == "contradiction" and q.contradiction == pytest.approx(p.entailment)


def test_router_sends_chinese_pairs_to_the_route_and_tags_each_prediction() -> None:
    en = ScriptedVerifier(default="neutral", name="en-model", calibration_id=None)
    zh = ScriptedVerifier(default="entailment", name="zh-model", languages=("en", "zh"))
    router = RoutedVerifier(en, {"zh": zh})
    assert router.covers("en") and router.covers("zh")  # the default keeps its languages
    english = ("Paris is the capital of France.", "Paris is the capital of France.")
    chinese = (PREMISE, CLAIM)
    # an English claim against Chinese evidence goes to the verifier that reads both
    cross = (PREMISE, "AlphaCodium improves code generation by iteration.")
    out = router.predict([english, chinese, cross])
    assert [p.verifier for p in out] == ["en-model", "zh-model", "zh-model"]
    assert "verifier" not in out[1].model_dump()  # not part of any report


def test_route_option_parses_the_offline_form() -> None:
    mapping = route_options(["zh=multilingual-minilmv2-l6-xnli=/models/m", "ja=" + MDEBERTA])
    assert mapping == {"zh": f"{MINILM}=/models/m", "ja": MDEBERTA}
    from guardrail.verifiers.spec import LanguageRoutes, PresetSpec, parse_languages

    assert parse_languages(mapping) == LanguageRoutes(
        (("zh", PresetSpec(MINILM, "/models/m")), ("ja", PresetSpec(MDEBERTA)))
    )
    from guardrail.errors import ConfigError

    with pytest.raises(ConfigError, match="LANG=VERIFIER"):
        route_options(["multilingual-minilmv2-l6-xnli"])


def test_uncovered_reason_names_the_preset_to_route_to() -> None:
    bundled = ScriptedVerifier(name="guardrail-nli-v2")
    reason = uncovered_reason("zh", bundled)
    assert reason.startswith("language 'zh' not covered by verifier guardrail-nli-v2 (covers: en)")
    assert f"--route zh={MINILM}" in reason and f"zh={MINILM}=DIR" in reason
    assert f"--route ja={MDEBERTA}" in uncovered_reason("ja", bundled)
    assert "no verifier preset reads 'xx'" in uncovered_reason("xx", bundled)


def _check(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    from guardrail.cli import main

    argv = ["check", "--query", ZH_QUERY, "--response", CLAIM, "--passage", ZH_PASSAGE]
    assert main([*argv, "--format", "json", *extra]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_a_chinese_claim_without_a_route_names_the_preset(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = _check(capsys)
    assert report["verdict"]["label"] == "UNVERIFIED"
    [claim] = report["claims"]
    assert claim["status"] == "unverified"
    assert "language 'zh' not covered" in claim["reason"]
    assert f"--route zh={MINILM}" in claim["reason"]
    assert f"--route zh={MINILM}" in report["verdict"]["reason"]


def test_a_chinese_claim_is_routed_to_a_local_tiny_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tiny.build_multilingual_nli(tmp_path / "minilm", "xlmr")
    tiny.set_head_bias(path, (5.0, 0.0, 0.0), tiny.NLI_HEADS["xlmr"])  # entailment wins
    report = _check(capsys, "--verifier", "bundled", "--route", f"zh={MINILM}={path}")
    verdict = report["verdict"]
    assert verdict["label"] == "VERIFIED"
    assert "not covered" not in json.dumps(report)
    [claim] = report["claims"]
    assert claim["status"] == "supported" and claim["p_supported"] > 0.9
    assert f"verifier {MINILM}, uncalibrated (threshold 0.5)" in claim["reason"]
    assert f"routed: claim 0 (zh) by {MINILM}, uncalibrated (threshold 0.5)" in verdict["method"]
    assert verdict["threshold"] == 0.5  # the routed claim's own, not the bundled model's
    assert report["recommendation"]["action"] == "accept"


def test_routed_contradiction_flags_the_chinese_claim(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tiny.build_multilingual_nli(tmp_path / "mdeberta", "mdeberta")
    tiny.set_head_bias(path, (0.0, 0.0, 5.0), tiny.NLI_HEADS["mdeberta"])  # contradiction
    report = _check(capsys, "--route", f"zh={MDEBERTA}={path}")
    [claim] = report["claims"]
    assert claim["status"] == "contradicted"
    assert report["verdict"]["label"] == "HALLUCINATION"
    flags = report["hallucination_flags"]
    assert any(f["type"] == "contradicts_fact" for f in flags)
    assert all(f["span"]["end"] <= len(CLAIM) for f in flags)
    assert np.isclose(claim["scores"]["contradiction"], max(claim["scores"].values()))


def test_calibrate_claims_fits_a_routed_preset_for_one_language(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path], tmp_path: Path
) -> None:
    from guardrail.cli import main
    from guardrail.evaluation.claim_calibration import DEFAULT_FEATURES
    from guardrail.hallucination.calibration import ClaimCalibrator
    from guardrail.hallucination.calibration_registry import calibration_for

    pairs = [
        ("小明今年 18 岁，正在清华大学读计算机专业。", "小明是一名大学生。", 1),
        ("这篇论文发表于 2023 年。", "这篇论文是 2021 年发表的。", 0),
        (PREMISE, CLAIM, 1),
        (PREMISE, "AlphaCodium 是 Google 在 2024 年发布的代码生成工具。", 0),
    ]
    data = tmp_path / "zh.jsonl"
    rows = [
        {"evidence": p, "claim": c, "label": y, "group": f"g{k}-{i}"}
        for k in range(12)
        for i, (p, c, y) in enumerate(pairs)
    ]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    out = tmp_path / "calibrations" / "minilm-zh.json"
    spec = f"{MINILM}={models[MINILM]}"
    args = ["calibrate-claims", "--verifier", spec, "--language", "zh"]
    assert main([*args, "--data", str(data), "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["verifier"] == MINILM
    fitted = ClaimCalibrator.load(out)
    meta = fitted.meta
    assert meta["verifier_id"] == MINILM and meta["language"] == "zh"
    # without --features, the shipped calibration's features
    assert sorted(fitted.weights) == sorted(DEFAULT_FEATURES)
    verifier = _load(models, MINILM)
    folder = str(out.parent)
    assert calibration_for(verifier, folder, language="zh").label == "calibration minilm-zh.json"
    # for claims in another language the preset stays uncalibrated, and says so
    other = calibration_for(verifier, folder, language="de")
    assert other.calibrator is None and other.label == "uncalibrated (threshold 0.5)"


def test_verifiers_listing_shows_each_presets_languages() -> None:
    from guardrail.cli.verifiers import render_markdown, render_text, rows

    text = render_text(rows())
    assert f"{MINILM:<30} nli" in text
    assert "languages: en, ar, bg, de, el, es, fr, hi, ru, sw, th, tr, ur, vi, zh" in text
    table = render_markdown(rows())
    root = Path(__file__).resolve().parents[2]
    for doc in (root / "README.md", root / "docs" / "how-to" / "verifier.md"):
        assert table in doc.read_text(encoding="utf-8"), f"{doc.name}: presets table out of date"
