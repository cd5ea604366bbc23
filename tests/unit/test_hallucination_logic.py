"""Windows, pruning, aggregation policies, T(rs) and flag builders on given scores (no model)."""

from __future__ import annotations

import numpy as np
import pytest

from guardrail.config import AdaptiveThreshold, HallucinationConfig
from guardrail.hallucination import (
    claim_status,
    decide_windows,
    make_windows,
    ratio_rule,
    response_verdict,
    sentence_claims,
    weakest_link,
)
from guardrail.hallucination import flags as build
from guardrail.hallucination.pruning import nearest, similar_pairs, top_m_windows
from guardrail.hallucination.windows import best_snippet
from guardrail.report import (
    HALLUCINATION_SEVERITY,
    Claim,
    ClaimStatus,
    HallucinationType,
    Span,
    VerdictLabel,
)
from guardrail.verifiers.base import NLIPrediction


def p(e: float, n: float, c: float) -> NLIPrediction:
    return NLIPrediction(entailment=e, neutral=n, contradiction=c)


# --- windows -----------------------------------------------------------------------------------


def test_windows_overlap_by_stride_and_cover_everything() -> None:
    text = " ".join(f"w{i}" for i in range(10))
    ws = make_windows(text, 3, window_tokens=4, stride=2)
    assert [w.text for w in ws] == ["w0 w1 w2 w3", "w2 w3 w4 w5", "w4 w5 w6 w7", "w6 w7 w8 w9"]
    assert all(text[w.start : w.end] == w.text and w.passage_index == 3 for w in ws)
    assert [w.window_index for w in ws] == [0, 1, 2, 3]


def test_windows_count_tokens_with_the_counter() -> None:
    # each word costs 2 tokens: a 4-token window holds 2 words
    ws = make_windows("a b c d", 0, window_tokens=4, stride=4, count_tokens=lambda t: 2 * len(t))
    assert [w.text for w in ws] == ["a b", "c d"]


def test_short_passage_is_one_window() -> None:
    assert [w.text for w in make_windows("Just a few words.", 0, 400, 200)] == ["Just a few words."]


def test_supporting_sentence_past_token_1000_is_in_a_window() -> None:
    filler = " ".join(["The committee discussed routine budget items."] * 200)  # 1,200 words
    text = filler + " The bridge opened to traffic in May 1998."
    ws = make_windows(text, 0, window_tokens=128, stride=64)
    assert any("opened to traffic in May 1998" in w.text for w in ws)
    assert ws[-1].end == len(text)


def test_best_snippet_picks_the_overlapping_sentence() -> None:
    window = "Cats sleep a lot. The paper was published in 2023. Dogs bark."
    assert best_snippet(window, "The paper was published in 2021.") == (
        "The paper was published in 2023."
    )


# --- pruning -----------------------------------------------------------------------------------


def test_top_m_keeps_the_most_similar_windows() -> None:
    claims = np.array([[1.0, 0.0], [0.0, 1.0]])
    windows = np.array([[0.0, 1.0], [0.9, 0.1], [0.6, 0.8], [1.0, 0.0]])
    assert top_m_windows(claims, windows, 2) == [[3, 1], [0, 2]]
    assert top_m_windows(claims, windows, 0) == [[0, 1, 2, 3]] * 2
    assert top_m_windows(claims, windows, 10) == [[0, 1, 2, 3]] * 2


def test_similar_pairs_and_nearest() -> None:
    v = np.array([[1.0, 0.0], [0.99, 0.14], [0.0, 1.0]])
    assert similar_pairs(v, 0.9, 5) == [(0, 1)]
    assert nearest(v[:1], v[1:], k=2, min_similarity=0.5) == [[0]]


# --- aggregation and verdict -------------------------------------------------------------------


def test_max_over_windows_and_status() -> None:
    d = decide_windows([p(0.1, 0.8, 0.1), p(0.9, 0.05, 0.05), p(0.05, 0.15, 0.8)])
    assert (d.best, d.contra) == (1, 2)
    assert claim_status(d, threshold=0.5, contradiction_flag=0.5) is ClaimStatus.SUPPORTED
    assert claim_status(d, threshold=0.95, contradiction_flag=0.5) is ClaimStatus.CONTRADICTED
    assert claim_status(d, threshold=0.95, contradiction_flag=0.9) is ClaimStatus.UNSUPPORTED


def test_weakest_link_and_ratio_rule() -> None:
    assert weakest_link([0.9, 0.2, 0.7]) == 0.2
    s, c, u = ClaimStatus.SUPPORTED, ClaimStatus.CONTRADICTED, ClaimStatus.UNSUPPORTED
    assert not ratio_rule([s, s, s, c], 0.3, 0.8).hallucination  # 25% contradicted
    assert ratio_rule([s, s, c, c], 0.3, 0.8).hallucination  # 50% contradicted
    assert ratio_rule([u, u], 0.3, 0.8).hallucination  # 100% neutral: the neutral share decides
    assert not ratio_rule([s, u], 0.3, 0.8).hallucination


def test_threshold_is_strict_at_low_and_lenient_at_high_retrieval_score() -> None:
    t = AdaptiveThreshold()
    low, high = t.threshold(0.05), t.threshold(0.95)
    assert low == pytest.approx(t.t_low, abs=0.01)
    assert high == pytest.approx(t.t_high, abs=0.01)
    assert t.threshold(None) == t.t_low
    cfg = HallucinationConfig(policy="weakest_link")
    # The same claim score passes with confident retrieval and fails with weak retrieval.
    args = ([0.55], [ClaimStatus.SUPPORTED], [])
    assert response_verdict(*args, 0.95, cfg, "m").label is VerdictLabel.VERIFIED
    assert response_verdict(*args, 0.05, cfg, "m").label is VerdictLabel.HALLUCINATION


def test_policies_disagree_where_they_should() -> None:
    # Four claims, one weak: weakest link fails it, the ratio rule (25% unsupported) passes it.
    ent = [0.9, 0.9, 0.9, 0.1]
    st = [ClaimStatus.SUPPORTED] * 3 + [ClaimStatus.UNSUPPORTED]
    weakest = response_verdict(ent, st, [], 0.9, HallucinationConfig(), "m")
    ratio = response_verdict(ent, st, [], 0.9, HallucinationConfig(policy="ratio"), "m")
    assert weakest.label is VerdictLabel.HALLUCINATION and weakest.nli_score == 0.1
    assert ratio.label is VerdictLabel.VERIFIED and ratio.policy == "ratio"


def test_unchecked_claims_never_make_a_verified_verdict() -> None:
    cfg = HallucinationConfig()
    reason = "language 'zh' not covered by verifier v (covers: en)"
    v = response_verdict(
        [0.95, None], [ClaimStatus.SUPPORTED, ClaimStatus.UNVERIFIED], [reason], 0.9, cfg, "m"
    )
    assert v.label is VerdictLabel.UNVERIFIED and reason in v.reason
    v = response_verdict([None], [ClaimStatus.UNVERIFIED], [reason], 0.9, cfg, "m")
    assert v.label is VerdictLabel.UNVERIFIED and v.reason == reason
    # A hallucination among the checked claims is still reported as one.
    v = response_verdict(
        [0.05, None], [ClaimStatus.UNSUPPORTED, ClaimStatus.UNVERIFIED], [reason], 0.9, cfg, "m"
    )
    assert v.label is VerdictLabel.HALLUCINATION


# --- claims --------------------------------------------------------------------------------------


def test_sentence_claims_skip_fragments_and_cap() -> None:
    cfg = HallucinationConfig(max_claims=1)
    claims = sentence_claims("It rained all day. Ok. The match was cancelled.", cfg, "en")
    assert [c.text for c in claims] == ["It rained all day.", "The match was cancelled."]
    assert claims[1].status is ClaimStatus.UNVERIFIED and "max_claims" in (claims[1].reason or "")
    whole = sentence_claims("It rained. It poured.", HallucinationConfig(decompose_claims=False))
    assert [c.text for c in whole] == ["It rained. It poured."]


def test_chinese_claims_keep_spans() -> None:
    text = "小明今年十八岁。他在清华大学读计算机专业。"
    claims = sentence_claims(text, HallucinationConfig(), "zh")
    assert [c.text for c in claims] == ["小明今年十八岁。", "他在清华大学读计算机专业。"]
    assert all(text[c.span.start : c.span.end] == c.text and c.language == "zh" for c in claims)


# --- flags ---------------------------------------------------------------------------------------


def claim_of(response: str, text: str) -> Claim:
    start = response.index(text)
    return Claim(text=text, span=Span(start=start, end=start + len(text)))


def test_each_flag_builder_has_type_span_severity_and_evidence() -> None:
    r = "The paper was published in 2021. It was written by Ann Lee."
    c0, c1 = (
        claim_of(r, "The paper was published in 2021."),
        claim_of(r, "It was written by Ann Lee."),
    )
    pred = p(0.02, 0.08, 0.9)
    contra = build.contradiction_flag(r, c0, 0, pred, "The paper was published in 2023.")
    unsup = build.unsupported_flag(r, c1, 1, p(0.1, 0.85, 0.05), 0.5, "")
    [temporal] = build.temporal_flags(
        r, c0, 0, "The paper was published in 2023.", "The paper was published in 2023.", 0.9
    )
    names = build.nonexistent_entity_flags(r, c1, 1, ["The paper was published in 2023."])
    logic = build.logical_inconsistency_flag(r, c0, c1, 1, pred)
    prior = build.prior_turn_flag(r, c0, 0, pred, "It came out in 2023.", 2)
    assert contra.type is HallucinationType.CONTRADICTS_FACT and contra.confidence == 0.9
    assert unsup.type is HallucinationType.UNSUPPORTED_CLAIM and unsup.confidence == 0.9
    assert temporal.type is HallucinationType.TEMPORAL_ERROR
    assert temporal.content == "2021" and temporal.suggestion == "the evidence says 2023"
    assert [(f.type, f.content) for f in names] == [
        (HallucinationType.NONEXISTENT_ENTITY, "Ann Lee")
    ]
    assert logic.type is HallucinationType.LOGICAL_INCONSISTENCY and logic.evidence == c0.text
    assert prior.type is HallucinationType.CONTRADICTS_PRIOR and "turn 2" in prior.explanation
    for f in (contra, unsup, temporal, *names, logic, prior):
        assert f.severity == HALLUCINATION_SEVERITY[f.type]
        assert r[f.span.start : f.span.end] == f.content


def test_a_temporal_repair_keeps_the_claims_form_of_the_date() -> None:
    r = "Arsenal will be out to beat Chelsea for the first time since 2013."
    c = claim_of(r, r)
    evidence = "Arsenal last beat Chelsea in October 2011, at Stamford Bridge."
    [flag] = build.temporal_flags(r, c, 0, evidence, evidence, 0.9)
    assert flag.content == "2013" and flag.replacement == "2011"  # the year, as the claim has it
    assert flag.suggestion == "the evidence says October 2011"


@pytest.mark.parametrize(
    ("claimed", "flagged", "replacement"),
    [
        ("On 12 July", False, None),  # a day without its year: the evidence's day
        ("In July", False, None),  # a month: a day of that month
        ("On 5 July", True, "12 July"),  # another day: repaired in the claim's form
        ("On July 5th", True, "July 12th"),
    ],
)
def test_a_day_of_a_month_without_a_year_is_compared_by_its_parts(
    claimed: str, flagged: bool, replacement: str | None
) -> None:
    r = f"{claimed}, Reading announced that he had left the club."
    c = claim_of(r, r)
    evidence = "On 12 July 2019, Reading announced that he had left the club."
    flags = build.temporal_flags(r, c, 0, evidence, evidence, 0.9)
    assert bool(flags) is flagged
    if flagged:
        assert flags[0].replacement == replacement


def test_the_evidences_date_of_another_of_the_claims_dates_is_no_rival() -> None:
    r = "On December 20, 2018, the committee announced debates set to begin in June 2019."
    c = claim_of(r, r)
    evidence = "On December 20, 2018, the committee announced its plan for twelve debates."
    # the evidence dates the announcement, which the claim states too: no date for "June 2019"
    assert build.temporal_flags(r, c, 0, evidence, evidence, 0.9) == []
    [flag] = build.temporal_flags(r, c, 0, evidence + " The first is in June 2020.", evidence, 0.4)
    assert (flag.content, flag.suggestion) == ("June 2019", "the evidence says June 2020")


def test_a_full_date_on_another_day_of_the_evidences_month_is_flagged_and_repaired() -> None:
    r = "Smith died in Blackville, New Brunswick, on 38 January 1957."
    c = claim_of(r, r)
    evidence = "Smith died at home in Blackville on 24 January 1957. His son was born in May 1957."
    [flag] = build.temporal_flags(r, c, 0, evidence, evidence, 0.4)
    assert (flag.content, flag.replacement) == ("38 January 1957", "24 January 1957")
    assert flag.confidence == 0.4  # the claim's own score: never a finding on its own
    # the same day stated, or two other days of that month: no flag
    assert build.temporal_flags(r, c, 0, evidence + " On 38 January 1957 too.", "", 0.4) == []
    two = evidence + " He was buried on 27 January 1957."
    assert build.temporal_flags(r, c, 0, two, "", 0.4) == []


def test_a_full_date_on_the_evidences_day_and_month_in_another_year_is_repaired() -> None:
    r = "He signed with Cavalry FC on January 23, 2018."
    c = claim_of(r, r)
    evidence = (
        "Calgary (January 23, 2019) - Cavalry FC welcomes four players. "
        "The league began in April 2019."
    )
    [flag] = build.temporal_flags(r, c, 0, evidence, "", 0.4)
    assert (flag.content, flag.replacement, flag.confidence) == (
        "January 23, 2018",
        "January 23, 2019",
        0.4,
    )
    # two years on that day and month: a finding without a repair
    two = evidence + " A year before, on January 23, 2017, he left."
    [flag] = build.temporal_flags(r, c, 0, two, "", 0.4)
    assert flag.replacement is None
    # a date found in no passage takes the documents' one date on its day and month
    [fabricated] = build.nonexistent_entity_flags(r, c, 0, ["Intro text.", evidence])
    assert fabricated.replacement == "January 23, 2019"
    assert fabricated.evidence == "Calgary (January 23, 2019) - Cavalry FC welcomes four players."
    assert build.nonexistent_entity_flags(r, c, 0, [two])[0].replacement is None


def test_a_month_is_not_compared_with_a_year_alone() -> None:
    r = "It opened in July."
    c = claim_of(r, r)
    assert build.temporal_flags(r, c, 0, "It opened in 2019.", "It opened in 2019.", 0.9) == []


def test_temporal_flag_needs_a_differing_date_in_the_evidence() -> None:
    r = "The paper was published in 2023."
    c = claim_of(r, r)
    assert build.temporal_flags(r, c, 0, "Published in 2023.", "", 0.9) == []
    assert build.temporal_flags(r, c, 0, "It is a paper about cats.", "", 0.9) == []


def test_nonexistent_entity_skips_known_and_already_flagged_mentions() -> None:
    r = "It was released by Google in 2024."
    c = claim_of(r, r)
    assert build.nonexistent_entity_flags(r, c, 0, ["Google built it in 2024."]) == []
    year = Span(start=r.index("2024"), end=r.index("2024") + 4)
    flags = build.nonexistent_entity_flags(r, c, 0, ["Made by a lab."], skip=[year])
    assert [f.content for f in flags] == ["Google"]


@pytest.mark.parametrize(
    ("claimed", "stated"),
    [
        ("a donation of $2 million", "a $2 million donation"),
        ("a raise of 13%", "a raise of 13 percent"),
        ("three frames in a row", "3 frames in a row"),
        ("on 18 October 2018", "on Oct. 18, 2018"),
    ],
)
def test_a_value_the_evidence_writes_another_way_is_not_fabricated(
    claimed: str, stated: str
) -> None:
    r = f"The club announced {claimed}."
    c = claim_of(r, r)
    assert build.nonexistent_entity_flags(r, c, 0, [f"Reports give {stated}."]) == []
    assert [f.type for f in build.nonexistent_entity_flags(r, c, 0, ["Reports give 7."])] != []


# --- stage plumbing (no model) -----------------------------------------------------------------


def test_stage_skips_without_evidence_and_windows_fit_the_verifier() -> None:
    from guardrail.config import GuardrailConfig
    from guardrail.inputs import GuardInput
    from guardrail.stages.base import PipelineState, Resources
    from guardrail.stages.hallucination import NO_EVIDENCE, HallucinationStage, window_size

    config = GuardrailConfig()
    stage = HallucinationStage(config, Resources(config))
    bare = PipelineState(input=GuardInput(response="The paper was published in 2021."))
    assert stage.skip_reason(bare) == NO_EVIDENCE
    with_passage = PipelineState(input=GuardInput(response="x", passages=["It was in 2023."]))
    assert stage.skip_reason(with_passage) is None

    class Limits:
        max_tokens = 160

    assert window_size(400, 200, Limits()) == (128, 64)
    assert window_size(128, 64, Limits()) == (128, 64)
    assert window_size(400, 200, object()) == (400, 200)


def test_kb_facts_render_as_evidence_windows() -> None:
    from guardrail.hallucination.evidence import gather_evidence
    from guardrail.inputs import GuardInput

    class KB:
        def render_facts(self, entity_names: list[str] | None) -> list[str]:
            facts = {"Sarah Lee": "Sarah Lee works in Finance.", "Tom": "Tom works in Sales."}
            names = entity_names or list(facts)
            return [facts[n] for n in names if n in facts]

    data = GuardInput(response="Sarah Lee works in Sales.", knowledge_base=KB())
    ev = gather_evidence(data, 128, 64, None, entity_names=["Sarah Lee"])
    assert [(w.passage_index, w.text) for w in ev.windows] == [(-1, "Sarah Lee works in Finance.")]
    ev = gather_evidence(data, 128, 64, None, entity_names=["Nobody"])  # falls back to all facts
    assert ev.kb_facts == ["Sarah Lee works in Finance.", "Tom works in Sales."]
