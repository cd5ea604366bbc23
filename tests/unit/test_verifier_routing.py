"""``models.verifier_languages``: claims routed to a verifier that reads their language."""

from __future__ import annotations

from guardrail import Guardrail
from guardrail.verifiers.routing import RoutedVerifier, routed
from guardrail.verifiers.scripted import ScriptedVerifier

ZH_EVIDENCE = "北京是中国的首都。"
ZH_CLAIM = "北京是中国的首都。"


def test_pairs_go_to_the_route_of_their_language() -> None:
    en = ScriptedVerifier(default="neutral", name="en-model")
    zh = ScriptedVerifier(default="entailment", name="zh-model", languages=("zh",))
    v = RoutedVerifier(en, {"en": en, "zh": zh})
    assert v.covers("zh") and v.covers("en") and not v.covers("fr")
    out = v.predict([("Paris is in France.", "Paris is in France."), (ZH_EVIDENCE, ZH_CLAIM)])
    assert out[0].label == "neutral" and out[1].label == "entailment"


def test_the_list_form_only_changes_covered_languages() -> None:
    base = ScriptedVerifier(name="x")
    assert routed(base, ["en"]) is base
    wider = routed(base, ["en", "de"])
    assert wider.covers("de") and wider.name == "x"


def test_a_chinese_claim_is_verified_only_with_a_route() -> None:
    answer = {"response": ZH_CLAIM, "passages": [ZH_EVIDENCE]}
    plain = Guardrail({"models": {"verifier_languages": ["en"]}}).invoke(answer)
    assert all(c.status.value == "unverified" for c in plain.claims)
    zh = ScriptedVerifier(default="entailment", name="zh-nli", languages=("zh",))
    config = {"models": {"verifier_languages": {"en": "bundled", "zh": zh}}}
    report = Guardrail(config).invoke(answer)
    assert [c.status.value for c in report.claims] == ["supported"]
    assert report.verdict.method and report.verdict.method.startswith("routed(")
