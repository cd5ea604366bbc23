"""Evidence selection per claim: sentences ranked across passages, joined into one premise that is
scored first and kept beside the windows (hallucination.selection; no model)."""

from __future__ import annotations

from guardrail.config import HallucinationConfig
from guardrail.hallucination.claims import sentence_claims
from guardrail.hallucination.detector import detect
from guardrail.hallucination.evidence import gather_evidence
from guardrail.hallucination.plan import plan_pairs, run_verifier
from guardrail.hallucination.selection import (
    SELECTED_WINDOW,
    SentencePool,
    split_evidence,
)
from guardrail.inputs import GuardInput, Passage
from guardrail.report import ClaimStatus
from guardrail.verifiers.scripted import ScriptedVerifier

ARTICLE = (
    "The storm reached the coast on Monday. Schools were closed across the region. "
    "Officials said 120 homes lost power. Repairs are expected to take a week."
)
OTHER = "Ferries to the islands were cancelled. The airport stayed open all day."


def pool(*texts: str, titles: tuple[str | None, ...] = ()) -> SentencePool:
    return SentencePool(
        split_evidence(
            (t, i, f"doc{i}", titles[i] if i < len(titles) else None) for i, t in enumerate(texts)
        )
    )


def test_split_evidence_keeps_each_sentences_span_and_passage() -> None:
    sentences = split_evidence([(ARTICLE, 0, "a", None), (OTHER, 1, None, "Travel")])
    assert len(sentences) == 6
    for s in sentences:
        text = ARTICLE if s.passage_index == 0 else OTHER
        assert text[s.start : s.end] == s.text
    assert sentences[4].title == "Travel" and sentences[0].source == "a"


def test_rank_puts_the_sentence_with_the_claims_number_first_and_drops_unrelated_ones() -> None:
    p = pool(ARTICLE, OTHER)
    ranked = p.rank("About 120 homes were without power.")
    assert p.sentences[ranked[0]].text == "Officials said 120 homes lost power."
    assert all("Ferries" not in p.sentences[i].text for i in ranked)  # shares no term
    assert p.rank("Zebras graze quietly.") == []
    assert p.premise("Zebras graze quietly.", k=1, budget=100) is None


def test_premise_joins_the_top_sentences_in_document_order_within_the_budget() -> None:
    p = pool(ARTICLE, OTHER)
    claim = "Power was lost in 120 homes when the storm reached the coast."
    two = p.premise(claim, k=2, budget=100)
    assert two is not None
    assert two.text == (
        "The storm reached the coast on Monday. Officials said 120 homes lost power."
    )  # document order, not rank order
    assert two.window.window_index == SELECTED_WINDOW and two.window.passage_index == 0
    assert ARTICLE[two.window.start : two.window.end].startswith("The storm")
    one = p.premise(claim, k=2, budget=3)  # the best sentence always goes in
    assert one is not None and len(one.sentences) == 1


def test_premise_puts_the_passage_title_first_unless_titles_are_off() -> None:
    p = pool(OTHER, titles=("Travel disruption",))
    with_title = p.premise("Ferries to the islands were cancelled.", k=1, budget=100)
    assert with_title is not None
    assert with_title.text == "Travel disruption. Ferries to the islands were cancelled."
    bare = p.premise("Ferries to the islands were cancelled.", k=1, budget=100, titles=False)
    assert bare is not None and bare.text == "Ferries to the islands were cancelled."


def data(*passages: Passage) -> GuardInput:
    return GuardInput(query="What did the storm do?", response="x", passages=list(passages))


def test_the_selected_premise_is_scored_first_and_kept_when_it_does_not_settle_the_claim() -> None:
    cfg = HallucinationConfig(
        logical_consistency=False, window_tokens=12, window_stride=12, selection={"enabled": True}
    )
    ev = gather_evidence(data(Passage(text=ARTICLE)), 12, 12, None, sentences=True)
    claims = sentence_claims("Officials said 120 homes lost power.", cfg, "en")
    plan = plan_pairs(claims, [0], ev, cfg, None, [])
    assert plan.selected == {0} and plan.focus == set()
    premises = [plan.pairs[i][0] for i in plan.claim_pairs[0]]
    assert premises[0] == "Officials said 120 homes lost power."
    assert plan.claim_windows[0][0].window_index == SELECTED_WINDOW
    # the windows follow (one of them may hold the same sentence among others)
    assert len(premises) > 1 and all(p != premises[0] for p in premises[1:])
    verifier = ScriptedVerifier({}, default=(0.6, 0.3, 0.1))  # settles nothing at 0.8
    run_verifier(verifier, plan, [], early_exit=0.8)
    assert plan.claim_windows[0][0].window_index == SELECTED_WINDOW  # kept, unlike a focus premise
    assert len(plan.claim_pairs[0]) == len(premises)


def test_without_selection_the_plan_is_the_windows_and_the_focus_premise_as_before() -> None:
    cfg = HallucinationConfig(
        logical_consistency=False,
        window_tokens=400,
        window_stride=400,
        selection={"enabled": False},
    )
    ev = gather_evidence(data(Passage(text=ARTICLE)), 400, 400, None, sentences=False)
    assert ev.sentences is None
    claims = sentence_claims("Officials said 120 homes lost power.", cfg, "en")
    plan = plan_pairs(claims, [0], ev, cfg, None, [])
    assert plan.selected == set() and plan.focus == {0}
    assert [w.window_index for w in plan.claim_windows[0]] == [0, 0]


def test_a_claim_only_its_selected_sentences_entail_is_supported_with_them_as_evidence() -> None:
    # The supporting sentences sit in two passages; no single window holds both.
    cfg = HallucinationConfig(
        logical_consistency=False,
        window_tokens=12,
        window_stride=12,
        selection={"enabled": True, "sentences": 2, "token_budget": 40},
    )
    passages = (Passage(text=ARTICLE, source="news"), Passage(text=OTHER, source="travel"))
    ev = gather_evidence(data(*passages), 12, 12, None, sentences=True)
    claim_text = "Ferries were cancelled when the storm reached the coast."
    selected = "The storm reached the coast on Monday. Ferries to the islands were cancelled."
    verifier = ScriptedVerifier({(selected, claim_text): (0.97, 0.02, 0.01)}, default="neutral")
    claims = sentence_claims(claim_text, cfg, "en")
    found = detect(claim_text, claims, ev, verifier, cfg, None)
    claim = found.claims[0]
    assert claim.status is ClaimStatus.SUPPORTED
    assert claim.evidence is not None and claim.evidence.window_index == SELECTED_WINDOW
    assert claim.evidence.source == "news"  # the first selected sentence's passage
    assert claim.features is not None and claim.features["logit_selected"] > 3.0


def test_evidence_size_and_selected_premise_features() -> None:
    from guardrail.hallucination.calibration import EvidenceIndex, claim_features
    from guardrail.verifiers.base import NLIPrediction

    index = EvidenceIndex.of([ARTICLE])
    best = NLIPrediction(entailment=0.9, neutral=0.05, contradiction=0.05)
    sel = NLIPrediction(entailment=0.2, neutral=0.7, contradiction=0.1)
    claim = "Officials said 120 homes lost power."
    one = claim_features(claim, best, 0.05, index, evidence_windows=1)
    many = claim_features(claim, best, 0.05, index, evidence_windows=40, selected=sel)
    assert many["log_windows"] > one["log_windows"] > 0.0
    assert one["logit_selected"] == one["logit_entail"]  # no selected premise: the best one's
    assert many["logit_selected"] < 0.0 < many["logit_entail"]


def test_unplaced_share_feature_reads_where_the_claim_is_told() -> None:
    # the detector aligns each claim with the evidence sentences and hands the calibration the
    # share of its specifics that region does not state (1.0: told nowhere in particular)
    cfg = HallucinationConfig(logical_consistency=False, window_tokens=400, window_stride=400)
    passages = (
        "The storm reached the coast on Monday and 120 homes lost power. "
        "Crews worked through the night to repair the lines.",
        "The harbour museum reopened after 45 days of repairs.",
    )
    ev = gather_evidence(data(*(Passage(text=p) for p in passages)), 400, 400, None)
    verifier = ScriptedVerifier({}, default="neutral")

    def share(text: str, config: HallucinationConfig = cfg) -> float:
        claim = detect(text, sentence_claims(text, config, "en"), ev, verifier, config, None)
        features = claim.claims[0].features
        assert features is not None
        return features["unplaced_share"]

    assert share("When the storm reached the coast on Monday, 120 homes lost power.") == 0.0
    assert share("When the storm reached the coast on Monday, 45 homes lost power.") == 0.5
    assert share("Penguins enjoy swimming in icy water.") == 1.0
    # no alignment ran (every check that needs one is off): no information, not "told nowhere"
    off = cfg.model_copy(
        update={"name_check": False, "value_check": False, "polarity_check": False}
    )
    assert share("Penguins enjoy swimming in icy water.", off) == 0.0
