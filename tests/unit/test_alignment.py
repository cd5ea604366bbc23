"""Claim-to-evidence alignment: a name swapped for another of the same documents is flagged,
aliases and nearby mentions are not (guardrail.hallucination.alignment)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from guardrail.correction.factual import evidence_edits
from guardrail.hallucination.alignment import (
    AlignmentIndex,
    NameMismatch,
    _without_tail,
    align,
    cased_like,
    claim_alignment,
    name_mismatches,
    unplaced_names,
    unplaced_share,
    value_alignment,
)
from guardrail.hallucination.flags import wrong_name_flag
from guardrail.hallucination.names import (
    ProperName,
    agreeing_run,
    capitalised_run,
    mapped_slot,
    name_context,
    name_stands_in,
    named_in,
    proper_names,
    same_slot,
)
from guardrail.report import Claim, ClaimStatus, HallucinationType, Span

LABELS = {
    "Alice Smith": "PERSON",
    "Smith": "PERSON",
    "Bob Jones": "PERSON",
    "Carol White": "PERSON",
    "Acme": "ORG",
    "Globex": "ORG",
    "Boston": "GPE",
    "Germany": "GPE",
    "German": "NORP",
    "Miller": "PERSON",
    "Chicago": "GPE",
}


@dataclass(frozen=True)
class _Ent:
    text: str
    label_: str
    start_char: int
    end_char: int


@dataclass(frozen=True)
class _Doc:
    ents: list[_Ent]


def fake_nlp(text: str, labels: dict[str, str] = LABELS) -> _Doc:
    """Entities of ``labels`` found in ``text`` (longest names first, no overlaps)."""
    ents: list[_Ent] = []
    for name in sorted(labels, key=len, reverse=True):
        for m in re.finditer(rf"\b{re.escape(name)}\b", text):
            if not any(e.start_char < m.end() and m.start() < e.end_char for e in ents):
                ents.append(_Ent(name, labels[name], m.start(), m.end()))
    return _Doc(sorted(ents, key=lambda e: e.start_char))


PASSAGE = (
    "Acme is a maker of rockets based in Boston. "
    "Alice Smith founded the company in 1998 after leaving university. "
    "The firm now employs four hundred engineers. "
    "Bob Jones joined the board of directors much later."
)


def test_swapped_name_is_flagged_with_both_names() -> None:
    index = AlignmentIndex.of([PASSAGE])
    claim = "Bob Jones founded Acme in 1998 after leaving university."
    found = name_mismatches(claim, index, fake_nlp)
    assert [(m.claim_name, m.evidence_name) for m in found] == [("Bob Jones", "Alice Smith")]
    m = found[0]
    assert claim[m.start : m.end] == "Bob Jones"
    assert m.evidence_sentence[m.evidence_start : m.evidence_end] == "Alice Smith"
    assert m.plain


def test_supported_sentence_is_not_flagged() -> None:
    index = AlignmentIndex.of([PASSAGE])
    assert name_mismatches("Alice Smith founded Acme in 1998.", index, fake_nlp) == []


def test_surname_alias_is_not_flagged() -> None:
    index = AlignmentIndex.of([PASSAGE.replace("Alice Smith founded", "Smith founded")])
    assert name_mismatches("Alice Smith founded the company in 1998.", index, fake_nlp) == []


def test_name_in_adjacent_sentence_is_not_flagged() -> None:
    text = (
        "Carol White chaired the meeting in Boston. "
        "She announced that Acme would build a new rocket factory. "
        "Bob Jones later criticised the plan."
    )
    index = AlignmentIndex.of([text])
    claim = "Carol White announced that Acme would build a new rocket factory."
    assert name_mismatches(claim, index, fake_nlp) == []


def test_reference_without_name_is_not_flagged() -> None:
    text = "Rockets are loud. Nothing else here at all. The company built a rocket factory in 2001."
    index = AlignmentIndex.of(["Acme makes rockets.", text])
    assert name_mismatches("Acme built a new rocket factory in 2001.", index, fake_nlp) == []


def test_name_of_the_query_is_not_checked() -> None:
    index = AlignmentIndex.of([PASSAGE], query="When did Bob Jones start?")
    claim = "Bob Jones founded Acme in 1998 after leaving university."
    assert name_mismatches(claim, index, fake_nlp) == []


def test_name_absent_from_all_evidence_is_left_to_missing_specific() -> None:
    index = AlignmentIndex.of([PASSAGE])
    claim = "Dave Brown founded Acme in 1998 after leaving university."
    assert name_mismatches(claim, index, fake_nlp) == []


def test_alignment_masks_names_and_needs_overlap() -> None:
    index = AlignmentIndex.of([PASSAGE])
    claim = "Bob Jones founded Acme in 1998 after leaving university."
    found = align(claim, [(0, 9), (18, 22), (26, 30)], index)
    assert found is not None and found.best.text.startswith("Alice Smith founded")
    assert align("Totally unrelated words here.", [], index) is None


def test_demonym_and_alias_lookup() -> None:
    assert name_stands_in("Germany", "a German company")
    assert name_stands_in("Steve Jobs", "Jobs said so")
    assert not name_stands_in("University of Oxford", "the University of Cambridge")


def test_flag_and_repair() -> None:
    response = "Bob Jones founded Acme in 1998 after leaving university."
    index = AlignmentIndex.of([PASSAGE])
    m = name_mismatches(response, index, fake_nlp)[0]
    claim = Claim(text=response, span=Span(start=0, end=len(response)))
    flag = wrong_name_flag(response, claim, 0, m, 0.8)
    assert flag.type is HallucinationType.WRONG_ATTRIBUTE
    assert flag.content == "Bob Jones" and flag.replacement == "Alice Smith"
    assert flag.evidence is not None and "Alice Smith" in flag.evidence
    assert flag.suggestion is not None and "Alice Smith" in flag.suggestion
    edits = evidence_edits(response, [flag])
    assert [(e.start, e.end, e.replacement) for e in edits] == [(0, 9, "Alice Smith")]


def test_a_repair_ending_in_a_dot_takes_the_place_of_the_sentences_own() -> None:
    from guardrail.correction.edits import apply_edits

    response = "We contained the few cases of Ebola in the Goma."
    sentence = "We contained the few cases of Ebola in the U.S., unlike the flu."
    start, at = response.index("Goma"), sentence.index("U.S.")
    m = NameMismatch("Goma", start, start + 4, "GPE", "U.S.", sentence, at, at + 4, plain=True)
    claim = Claim(text=response, span=Span(start=0, end=len(response)))
    flag = wrong_name_flag(response, claim, 0, m, 0.8)
    assert flag.replacement == "U.S."
    fixed = apply_edits(response, evidence_edits(response, [flag]))
    assert fixed == "We contained the few cases of Ebola in the U.S."
    mid = "Cases in the Goma rose."
    m = NameMismatch("Goma", 13, 17, "GPE", "U.S.", sentence, at, at + 4, plain=True)
    flag = wrong_name_flag(mid, Claim(text=mid, span=Span(start=0, end=len(mid))), 0, m, 0.8)
    assert apply_edits(mid, evidence_edits(mid, [flag])) == "Cases in the U.S. rose."


def _detect(name_check: bool) -> Any:
    from guardrail.config import HallucinationConfig
    from guardrail.hallucination.claims import sentence_claims
    from guardrail.hallucination.detector import detect
    from guardrail.hallucination.evidence import Evidence
    from guardrail.hallucination.windows import make_windows
    from guardrail.verifiers.scripted import ScriptedVerifier

    response = "Bob Jones founded Acme in 1998 after leaving university."
    cfg = HallucinationConfig(
        policy="weakest_link",
        threshold={"enabled": False, "fixed": 0.5},
        logical_consistency=False,
        name_check=name_check,
    )
    ev = Evidence(window_tokens=400, window_stride=400, passages=[PASSAGE])
    ev.windows = make_windows(PASSAGE, 0, 400, 400)
    ev.known_texts = [PASSAGE]
    verifier = ScriptedVerifier({(None, response): "entailment"})  # the verifier is fooled
    claims = sentence_claims(response, cfg, "en")
    return detect(response, claims, ev, verifier, cfg, 0.8, nlp=fake_nlp)


def test_detect_unsupports_a_claim_whose_name_is_misplaced() -> None:
    found = _detect(name_check=True)
    assert found.claims[0].status is ClaimStatus.UNSUPPORTED
    wrong = [f for f in found.flags if f.type is HallucinationType.WRONG_ATTRIBUTE]
    assert [(f.content, f.replacement) for f in wrong] == [("Bob Jones", "Alice Smith")]
    assert _detect(name_check=False).claims[0].status is ClaimStatus.SUPPORTED


# --- the slot rule: a proper name of any kind in the claim's place ---------------------------

STUDY = (
    "The lab moved to Chicago in 2015. "
    "In the experiment, Miller found that mice slept longer after exercise. "
    "The results were published a year later."
)


def _swaps(claim: str, texts: list[str], query: str = "") -> list[tuple[str, str, bool]]:
    index = AlignmentIndex.of(texts, query=query)
    return [
        (m.claim_name, m.evidence_name, m.plain) for m in name_mismatches(claim, index, fake_nlp)
    ]


def test_a_place_for_a_person_is_flagged() -> None:
    claim = "In the experiment, Chicago found that mice slept longer after exercise."
    assert _swaps(claim, [STUDY]) == [("Chicago", "Miller", True)]


def test_a_product_for_its_sibling_is_flagged() -> None:
    plans = "The Basic plan costs $10 a month; the Pro plan costs $30. Both include support."
    assert _swaps("The Pro plan costs $10 a month.", [plans]) == [("Pro", "Basic", True)]


def test_a_name_the_tagger_misses_is_flagged() -> None:
    text = (
        "The leaked key lets users install Linux on their laptops and tablets. "
        "Secure Boot was meant to stop unsigned systems."
    )
    claim = "The leaked key lets users install Secure Boot on their laptops and tablets."
    assert _swaps(claim, [text]) == [("Secure Boot", "Linux", True)]


def test_an_acronym_for_a_key_term_is_flagged() -> None:
    text = (
        "Companies list their shares through a process called an IPO, an initial public offering. "
        "Most trade on the NYSE afterwards."
    )
    claim = (
        "Companies list their shares through a process called an NYSE, an initial public offering."
    )
    assert _swaps(claim, [text]) == [("NYSE", "IPO", True)]


def test_a_name_told_in_the_neighbour_of_the_aligned_sentence_is_its_repair() -> None:
    # the claim joins two sentences and aligns with the second; its name's place is the first's
    text = (
        "Prices are in USD. The progress bar at the top of the open WebDav "
        "window on the client is misleading. It zooms across rapidly while copying outgoing "
        "files into a local cache on the client, then, as the bar sets near the end, it "
        "actually performs the transfer."
    )
    claim = (
        "The progress bar at the top of the open USD window on the client is misleading, in that "
        "it zooms across rapidly while copying outgoing files into a local cache on the client, "
        "then, as the bar sets near the end, it actually performs the transfer."
    )
    assert _swaps(claim, [text]) == [("USD", "WebDav", True)]
    # a neighbour's name in another place is no repair
    other = text.replace("the open WebDav window on the client", "WebDav's window")
    assert _swaps(claim, [other]) == []
    # nor is it where the region tells the claim's own name: the neighbour is another fact
    drugs = (
        "Ibuprofen is metabolized by the kidneys and therefore is not a great option for those "
        "with kidney issues. Acetaminophen is metabolized by the liver, so it is not a great "
        "option for those with liver issues."
    )
    claim = (
        "Acetaminophen is metabolized by the liver, so it is not a great option for those with "
        "liver issues."
    )
    labels = {"Ibuprofen": "PRODUCT", "Acetaminophen": "PRODUCT"}
    found = name_mismatches(claim, AlignmentIndex.of([drugs]), lambda t: fake_nlp(t, labels))
    assert found == []


def test_any_rules_evidence_name_stands_without_the_words_the_claim_gives_after_its_own() -> None:
    labels = {"Baker": "PERSON", "Dusky Antechinus": "PERSON"}
    index = AlignmentIndex.of(
        [
            "Baker wrote the paper in a laboratory far away.",
            "It had been described by mammalogists as a subspecies of the Dusky Antechinus.",
        ]
    )
    claim = "It had been described by mammalogists as a subspecies of the Baker antechinus."
    [found] = name_mismatches(claim, index, lambda t: fake_nlp(t, labels))
    assert (found.claim_name, found.evidence_name, found.candidate) == ("Baker", "Dusky", "Dusky")


def test_a_finding_covers_the_whole_capitalised_run_its_name_is_cut_from() -> None:
    labels = {"Eyez": "ORG", "Warner": "ORG", "Tom Whalley": "PERSON"}
    index = AlignmentIndex.of(
        [
            "All Eyez on Me was the album of the year in the charts.",
            "His mother chose an executor for the estate, naming former Warner executive Tom "
            "Whalley.",
        ]
    )
    claim = (
        "His mother chose an executor for the estate, naming former All Eyez executive Tom Whalley."
    )
    [found] = name_mismatches(claim, index, lambda t: fake_nlp(t, labels))
    # the tagger's "Eyez" alone would be repaired to "All Warner"
    assert (found.claim_name, found.candidate) == ("All Eyez", "Warner")
    assert claim[found.start : found.end] == "All Eyez"


def test_two_names_joined_in_the_claim_where_the_evidence_gives_one_are_one_finding() -> None:
    labels = {"MY123": "ORG", "Slipstream": "ORG", "Golden Key Super": "ORG"}
    index = AlignmentIndex.of(
        [
            "MY123 and Slipstream found the key in the wild.",
            "It is impossible for Microsoft to fully revoke the leaked Golden Key Super policy.",
        ]
    )
    claim = "It is impossible for Microsoft to fully revoke the leaked MY123 and Slipstream policy."
    [found] = name_mismatches(claim, index, lambda t: fake_nlp(t, labels))
    # repaired apart, the sentence would say "Golden Key Super and Golden Key Super policy"
    assert (found.claim_name, found.candidate) == ("MY123 and Slipstream", "Golden Key Super")


def test_a_run_that_starts_a_sentence_is_taken_from_the_name_on() -> None:
    text = (
        "Different Baden-Württemberg languages have names. A southern Danube River Germania tribe."
    )
    name = text.index("Baden")
    assert capitalised_run(text, name, name + len("Baden-Württemberg")) == (
        name,
        name + len("Baden-Württemberg"),
    )
    river = text.index("Danube")
    start, end = capitalised_run(text, river, river + len("Danube River"))
    assert text[start:end] == "Danube River Germania"


def test_the_same_name_in_its_place_is_not_flagged() -> None:
    claim = "In the experiment, Miller found that mice slept longer after exercise."
    assert _swaps(claim, [STUDY]) == []


def test_a_name_of_the_query_is_not_checked_by_the_slot_rule() -> None:
    claim = "In the experiment, Chicago found that mice slept longer after exercise."
    assert _swaps(claim, [STUDY], query="What was found in Chicago?") == []


def test_a_reference_without_a_name_in_the_slot_is_not_flagged() -> None:
    text = "Chicago is a large city. In the experiment, the team found that mice slept longer."
    assert _swaps("In the experiment, Chicago found that mice slept longer.", [text]) == []


def test_a_surname_in_the_slot_is_not_flagged() -> None:
    text = "Acme grew fast. In the experiment, Alice Smith found that mice slept longer."
    assert _swaps("In the experiment, Smith found that mice slept longer.", [text]) == []


def test_names_listed_together_are_not_a_swap() -> None:
    text = "Acme opened in Boston. The prize went to Alice Smith and Bob Jones in 1998."
    assert _swaps("The prize went to Bob Jones in 1998.", [text]) == []


def test_a_demonym_in_the_slot_is_not_flagged() -> None:
    text = "Berlin is large. The first engines were built by German engineers in 1886."
    assert _swaps("The first engines were built by Germany engineers in 1886.", [text]) == []


def test_proper_names_of_any_kind_and_untagged_runs() -> None:
    text = "In 2018, the U.S. and Secure Boot met. Then Bob Jones left."
    found = [(n.text, n.label_) for n in proper_names(fake_nlp, text)]
    assert found == [("U.S.", ""), ("Secure Boot", ""), ("Bob Jones", "PERSON")]


def test_a_field_label_in_capitals_is_no_name() -> None:
    text = "(meta data) TITLE: Jackalopes hire a coach | PUBLISHED DATETIME: 2019-05-20 by the NAHL"
    found = [n.text for n in proper_names(fake_nlp, text)]
    assert "TITLE" not in found and "PUBLISHED DATETIME" not in found
    assert "NAHL" in found  # capitals without a colon after them stay a name


def test_same_slot_needs_a_shared_neighbour_and_a_content_word() -> None:
    assert same_slot((",", "experi", "found", "that"), ("exper", "experi", "found", "that"))
    assert same_slot(("in", "the", "and", "other"), ("in", "the", "and", "other"))
    assert not same_slot(("calif", ",", ",", "and"), ("jerse", ",", ",", "penns"))
    assert not same_slot(("a", "b", "found", "x"), ("c", "d", "said", "x"))


def test_a_names_place_reads_typographic_marks_as_their_plain_forms() -> None:
    curly = "the “golden key” of Microsoft’s backdoor"
    plain = 'the "golden key" of FBI\'s backdoor'
    a = curly.index("Microsoft")
    b = plain.index("FBI")
    assert name_context(curly, a, a + len("Microsoft")) == name_context(plain, b, b + len("FBI"))
    assert agreeing_run(curly, (a, a + 9), plain, (b, b + 3)) >= 3


def test_a_short_acronym_stands_only_as_a_word() -> None:
    assert not named_in("US", "the key would be used only by the police")
    assert named_in("US", "the U.S. government")
    text = "Nothing here yet. The US government insists that the key is used only by the police."
    claim = "The Ohio government insists that the key is used only by the police."
    index = AlignmentIndex.of(["Ohio passed a law.", text])
    found = name_mismatches(claim, index, fake_nlp)
    assert [(m.claim_name, m.evidence_name) for m in found] == [("Ohio", "US")]


# --- what a repair of a name replaces -------------------------------------------------------


def test_a_repair_replaces_the_bare_name() -> None:
    from guardrail.hallucination.names import bare_span

    text = "It was like the Acme's plant."
    start = text.index("the Acme's")
    assert bare_span("the Acme's", start) == (text.index("Acme"), text.index("'s"))
    assert bare_span("Acme", 4) == (4, 8)
    assert bare_span("The", 0) == (0, 3)  # nothing left: the whole span


def _with_the_globex(text: str) -> _Doc:
    """The fake NER, reading "the Globex" as one ORG (the longest name first)."""
    return fake_nlp(text, {**LABELS, "the Globex": "ORG"})


def test_a_name_with_its_article_keeps_the_article_in_the_repair() -> None:
    nlp = _with_the_globex
    claim = "Rockets are made by the Globex, based in Boston."
    index = AlignmentIndex.of(["Rockets are made by Acme, based in Boston.", "Globex sells toys."])
    [m] = name_mismatches(claim, index, nlp)
    assert (m.claim_name, claim[m.start : m.end], m.evidence_name) == ("Globex", "Globex", "Acme")


def test_a_name_after_the_article_takes_the_evidence_name_without_its_own() -> None:
    nlp = _with_the_globex
    text = ["Rockets are made by the Globex, based in Boston.", "Acme sells toys."]
    index = AlignmentIndex.of(text)
    [m] = name_mismatches("Rockets are made by Acme, based in Boston.", index, nlp)
    assert m.evidence_name == "the Globex"
    [m] = name_mismatches("Rockets are made by the Acme, based in Boston.", index, nlp)
    assert m.evidence_name == "Globex"


def test_of_several_names_the_one_in_the_claims_place_is_the_repair() -> None:
    text = ["The rockets are built by Globex in a large plant near Chicago.", "Acme sells toys."]
    index = AlignmentIndex.of(text)
    [m] = name_mismatches("The rockets are built by Acme in a large plant.", index, fake_nlp)
    assert (m.claim_name, m.evidence_name, m.plain, m.slotted) == ("Acme", "Globex", False, True)
    assert m.candidate == "Globex"
    response = "The rockets are built by Acme in a large plant."
    claim = Claim(text=response, span=Span(start=0, end=len(response)))
    flag = wrong_name_flag(response, claim, 0, m, 0.6)
    assert flag.replacement == "Globex"
    # two names in the place: no single candidate
    text = ["The rockets are built by Globex or by Chicago in a plant.", "Acme sells toys."]
    [m] = name_mismatches(
        "The rockets are built by Acme in a plant.", AlignmentIndex.of(text), fake_nlp
    )
    assert m.candidate is None


def test_a_neighbours_only_name_is_no_repair_unless_it_stands_in_the_claims_place() -> None:
    # the aligned sentence names no company; its neighbour names one, about something else
    text = [
        "The rockets are built in a large plant near the coast. Globex sells toys.",
        "Acme makes parts.",
    ]
    [m] = name_mismatches(
        "The rockets are built by Acme in a large plant.", AlignmentIndex.of(text), fake_nlp
    )
    assert (m.evidence_name, m.near, m.candidate) == ("Globex", True, None)


def test_the_name_in_the_claims_place_repairs_a_swap_the_kind_rule_finds_no_name_for() -> None:
    # the tagger gives "US" no label: the kind rule sees only the neighbour's company
    text = [
        "Agencies pushed for keys. The US government insists that the key serves police cases. "
        "However, Acme created its key for developers.",
        "Chicago bought new cars.",
    ]
    claim = "The Chicago government insists that the key serves police cases."
    [m] = name_mismatches(claim, AlignmentIndex.of(text), fake_nlp)
    assert (m.claim_name, m.evidence_name, m.candidate) == ("Chicago", "US", "US")


def test_agreeing_run_counts_equal_words_on_one_side_with_a_content_word() -> None:
    a = "He admitted lying to secure more than $ 5 for it."
    b = "She was lying to secure more than $ 7 in all."
    assert (
        agreeing_run(a, (a.index("5"), a.index("5") + 1), b, (b.index("7"), b.index("7") + 1)) == 6
    )
    # a run of function words and signs only counts nothing
    c, d = "It was more than $ 5.", "Yes, more than $ 7 today."
    assert (
        agreeing_run(c, (c.index("5"), c.index("5") + 1), d, (d.index("7"), d.index("7") + 1)) == 0
    )


def test_of_several_names_the_one_after_a_long_run_of_the_claims_words_is_the_repair() -> None:
    text = [
        "Acme doctors reported only a few cases of the flu in the Boston, while Globex saw none.",
        "Chicago bought new cars.",
    ]
    claim = "Doctors reported only a few cases of the flu in the Chicago."
    [m] = name_mismatches(claim, AlignmentIndex.of(text), fake_nlp)
    # "in the" beside both names holds no content word; the run before them does
    assert (m.claim_name, m.plain, m.slotted, m.candidate) == ("Chicago", False, True, "Boston")


def test_the_one_name_left_over_on_each_side_is_a_swap_and_its_repair() -> None:
    # the names stand in no common place (no neighbour word shared), so rules 3 and 4 are
    # silent; every other name pairs up and one is left over on each side
    text = [
        "In the trial Miller carefully measured the levels of the new drug in Acme patients.",
        "Chicago bought new cars.",
    ]
    claim = "Later, Chicago measured the levels of the new drug in Acme patients."
    [m] = name_mismatches(claim, AlignmentIndex.of(text), fake_nlp)
    assert (m.claim_name, m.evidence_name, m.candidate) == ("Chicago", "Miller", "Miller")


def test_two_names_left_over_in_the_sentence_are_no_swap() -> None:
    text = [
        "In the trial Miller and Alice Smith carefully measured the levels of the new drug.",
        "Chicago bought new cars.",
    ]
    claim = "Later, Chicago measured the levels of the new drug."
    assert name_mismatches(claim, AlignmentIndex.of(text), fake_nlp) == []


def test_the_name_left_over_elsewhere_in_the_sentence_is_no_swap() -> None:
    # the sentence's name left over stands where the claim has none of its own
    text = [
        "The levels of the new drug were measured in patients, as Miller reported.",
        "Chicago bought new cars.",
    ]
    claim = "In Chicago the levels of the new drug were measured in patients."
    assert name_mismatches(claim, AlignmentIndex.of(text), fake_nlp) == []


def test_mapped_slot_is_the_span_between_the_matched_words_around_the_name() -> None:
    a = "Later, Chicago measured the levels of the drug."
    b = "In the trial Miller carefully measured the levels of the drug."
    start = a.index("Chicago")
    span = mapped_slot(a, (start, start + len("Chicago")), b)
    assert span is not None and b[span[0] : span[1]] == "In the trial Miller carefully"
    # a name that stands in the other text is matched: no other span stands for it
    assert mapped_slot(b, (b.index("Miller"), b.index("Miller") + 6), b) is None


def test_of_several_names_left_over_the_one_in_the_claims_place_is_a_finding_not_a_repair() -> None:
    text = [
        "In the trial Miller carefully measured the levels of the new drug, as Alice Smith wrote.",
        "Chicago bought new cars.",
    ]
    claim = "Later, Chicago measured the levels of the new drug."
    [m] = name_mismatches(claim, AlignmentIndex.of(text), fake_nlp)
    assert (m.claim_name, m.evidence_name, m.plain, m.candidate) == (
        "Chicago",
        "Miller",
        False,
        None,
    )


def test_a_name_the_documents_state_only_outside_the_region_is_unplaced() -> None:
    text = [
        "The rockets are built by Acme in a large plant near the coast. It opened in 1998.",
        "Globex sells toys in many cities. Toys are fun.",
    ]
    index = AlignmentIndex.of(text)
    claim = "The rockets are built by Globex in a large plant near the coast."
    located = claim_alignment(claim, index, fake_nlp)
    assert unplaced_names(claim, index, located) == 1
    # a name of the region, of no document, or of the query is not
    labels = {**LABELS, "Initech": "ORG"}

    def parse(t: str) -> _Doc:
        return fake_nlp(t, labels)

    for other, query in (("Acme", ""), ("Initech", ""), ("Globex", "Is Globex a maker?")):
        index = AlignmentIndex.of(text, query)
        told = claim.replace("Globex", other)
        assert unplaced_names(told, index, claim_alignment(told, index, parse)) == 0
    # a name a mismatch already counts is not counted twice
    index = AlignmentIndex.of(text)
    at = claim.index("Globex")
    counted = NameMismatch("Globex", at, at + 6, "ORG", "Acme", text[0], 25, 29, plain=True)
    assert unplaced_names(claim, index, located, [counted]) == 0


def test_the_questions_subject_in_the_claims_place_is_the_repair() -> None:
    # rule 5 finds the swap but, with two names left over, no repair; the question's subject
    # standing in the claim's name's place is the repair (rule 6)
    text = [
        "In the trial Miller carefully measured the levels of the new drug, as Alice Smith wrote.",
        "Chicago bought new cars.",
    ]
    claim = "Later, Chicago measured the levels of the new drug."
    index = AlignmentIndex.of(text, "What did Miller measure in the trial?")
    [m] = name_mismatches(claim, index, fake_nlp)
    assert (m.claim_name, m.evidence_name, m.candidate) == ("Chicago", "Miller", "Miller")
    # the question's subject elsewhere in the sentence is no repair
    index = AlignmentIndex.of(text, "What did Alice Smith write?")
    [m] = name_mismatches(claim, index, fake_nlp)
    assert (m.claim_name, m.evidence_name, m.candidate) == ("Chicago", "Miller", None)
    # nor when the claim names the question's subject itself
    claim = "Later, Chicago measured the levels of the new drug for Miller."
    index = AlignmentIndex.of(text, "What did Miller measure in the trial?")
    assert all(m.candidate != "Miller" for m in name_mismatches(claim, index, fake_nlp))


def test_the_one_name_in_the_claims_place_overrides_the_only_name_of_the_kind() -> None:
    text = [
        "The trust outlines heirs to Miller's fortune, naming charities that Chicago selected "
        "to inherit a portion.",
        "Boston is a city.",
    ]
    claim = (
        "This trust also outlined heirs to Boston's fortune, naming charities to inherit a portion."
    )
    # the sentence's only place name (Chicago) is the kind rule's guess; Miller stands where
    # the claim's name stands
    assert _swaps(claim, text) == [("Boston", "Miller", True)]


def test_a_name_ending_in_the_common_noun_the_claim_gives_after_its_own_stands_without_it() -> None:
    text = [
        "Specimens were assumed to belong to a subspecies of the Dusky Antechinus, a widespread "
        "marsupial.",
        "Baker named the new species in 2014.",
    ]
    index = AlignmentIndex.of(text)
    claim = (
        "They were assumed to belong to a subspecies of the Baker antechinus, a widespread "
        "marsupial."
    )
    # "Dusky" of "Dusky Antechinus" stands where the claim's "Baker" stands ("antechinus" is
    # the claim's next word): the repair puts in "Dusky", not the whole name
    [m] = name_mismatches(claim, index, fake_nlp)
    assert (m.claim_name, m.candidate) == ("Baker", "Dusky")
    assert name_mismatches(claim.replace("Baker", "Dusky"), index, fake_nlp) == []
    # a capitalised next word is a name of the claim's own: the evidence's name stays whole
    assert _without_tail(ProperName("Danube River Germania", "", 0, 21), " Germania after") == (
        ProperName("Danube River Germania", "", 0, 21)
    )


def test_a_name_where_the_question_names_another_is_a_swap_repaired_with_the_questions() -> None:
    text = [
        "Germany, for example, was Germany to some folks long before the country united.",
        "The French name comes from the Alemanni, a tribe near Boston.",
    ]
    query = "Why do different European languages have such varying names for Germany?"
    index = AlignmentIndex.of(text, query)
    claim = "Different languages have varied names for Boston because of a long history."
    # the claim restates the question with a name of the documents in the question's name's
    # place (rule 9): the question's name is the repair
    [m] = name_mismatches(claim, index, fake_nlp)
    assert (m.claim_name, m.evidence_name, m.candidate, m.asked) == (
        "Boston",
        "Germany",
        "Germany",
        True,
    )
    response = claim
    whole = Claim(text=claim, span=Span(start=0, end=len(claim)))
    flag = wrong_name_flag(response, whole, 0, m, 0.8)
    assert flag.replacement == "Germany" and flag.evidence == query
    assert flag.suggestion == "the question names Germany here"
    # the question's name itself, or the name elsewhere than in the question's place, is none
    assert name_mismatches(claim.replace("Boston", "Germany"), index, fake_nlp) == []
    assert name_mismatches("Travellers to Boston use varied names for it.", index, fake_nlp) == []
    # nor is a name the question does not name where the claim's stands
    other = AlignmentIndex.of(text, "Which tribe gave Germany its French name?")
    assert name_mismatches(claim, other, fake_nlp) == []


def test_a_claim_too_short_to_align_without_its_names_aligns_with_them_for_its_values() -> None:
    text = [
        "Upon retirement, the Walls returned to Canada and lived in Blackville, New Brunswick. "
        "Marion died four years later on 24 January 1957, aged 66."
    ]
    index = AlignmentIndex.of(text)
    claim = "Smith died in Blackville, New Brunswick, on 24 January 1902."
    labels = {**LABELS, "Blackville": "GPE", "New Brunswick": "GPE"}
    assert claim_alignment(claim, index, lambda t: fake_nlp(t, labels))[0] is None
    region = value_alignment(claim, index)
    assert region is not None and "Blackville" in region.best.text
    assert value_alignment("It rained.", index) is None


def _detect_values(response: str, passage: str) -> Any:
    from guardrail.config import HallucinationConfig
    from guardrail.hallucination.claims import sentence_claims
    from guardrail.hallucination.detector import detect
    from guardrail.hallucination.evidence import Evidence
    from guardrail.hallucination.windows import make_windows
    from guardrail.verifiers.scripted import ScriptedVerifier

    labels = {**LABELS, "Blackville": "GPE", "New Brunswick": "GPE", "Marion": "PERSON"}
    cfg = HallucinationConfig(
        policy="weakest_link",
        threshold={"enabled": False, "fixed": 0.5},
        logical_consistency=False,
    )
    ev = Evidence(window_tokens=400, window_stride=400, passages=[passage])
    ev.windows = make_windows(passage, 0, 400, 400)
    ev.known_texts = [passage]
    verifier = ScriptedVerifier({(None, response): "entailment"})  # the verifier is fooled
    claims = sentence_claims(response, cfg, "en")
    return detect(response, claims, ev, verifier, cfg, 0.8, nlp=lambda t: fake_nlp(t, labels))


def test_a_short_claims_moved_date_is_found_and_repaired_where_its_names_align_it() -> None:
    passage = (
        "Upon retirement, the Walls returned to Canada and lived in Blackville, New Brunswick. "
        "Marion died four years later on 24 January 1957, aged 66. "
        "Victor died in Newcastle on 19 September 1984."
    )
    found = _detect_values("Smith died in Blackville, New Brunswick, on 24 January 1902.", passage)
    assert found.claims[0].status is not ClaimStatus.SUPPORTED
    assert [f.replacement for f in found.flags if f.replacement] == ["24 January 1957"]
    told = _detect_values("Smith died in Blackville, New Brunswick, on 24 January 1957.", passage)
    assert told.claims[0].status is ClaimStatus.SUPPORTED and told.flags == []


def test_a_name_repair_takes_the_claims_casing_but_keeps_acronyms() -> None:
    assert cased_like("Mustaine", "ARCH ENEMY") == "Arch Enemy"
    assert cased_like("Dusky", "MEGADETH") == "Megadeth"
    assert cased_like("Microsoft", "FBI") == "FBI"  # an acronym stays
    assert cased_like("NASA", "ARCH ENEMY") == "ARCH ENEMY"  # the claim writes capitals too
    assert cased_like("Tampa", "Arch Enemy") == "Arch Enemy"
    at = "Opeth and Tampa".index("Tampa")
    m = NameMismatch("Tampa", at, at + 5, "ORG", "ARCH ENEMY", "with ARCH ENEMY", 5, 15, True)
    assert m.candidate == "Arch Enemy" and m.evidence_name == "ARCH ENEMY"


def test_one_name_and_nothing_else_in_the_claims_place_is_the_repair() -> None:
    # the kind rule sees two places in the sentence and names no repair; matched word by word,
    # the claim's name stands exactly where the sentence's first "Germany" stands (rule 7)
    labels = {**LABELS, "Greece": "GPE", "Deutschland": "GPE", "Mental Floss": "ORG"}

    def parse(t: str) -> _Doc:
        return fake_nlp(t, labels)

    text = [
        "Mental Floss explains the names. Greece has its own story.",
        "Germany, for example, was Germany to some folks long before the country united and "
        "called itself Deutschland.",
    ]
    claim = (
        "Greece, for example, was Germany to some folks long before the country united and "
        "called itself Deutschland."
    )
    [m] = name_mismatches(claim, AlignmentIndex.of(text), parse)
    assert (m.claim_name, m.candidate, m.evidence_start) == ("Greece", "Germany", 0)
    # the claim's own name in its place: nothing to repair
    assert (
        name_mismatches(claim.replace("Greece", "Germany", 1), AlignmentIndex.of(text), parse) == []
    )
    # a slot holding more than one name (or other words) is no exact place
    wider = [text[0], text[1].replace("Germany,", "Germany and Deutschland,", 1)]
    assert all(m.candidate is None for m in name_mismatches(claim, AlignmentIndex.of(wider), parse))


def test_a_name_in_the_exact_place_that_the_claim_gives_elsewhere_is_no_repair() -> None:
    # "White" of the claim is the sentence's "Chet White": the name in DIIV's place is one of
    # the claim's own names, which the sentence gives nowhere else
    labels = {**LABELS, "White": "PERSON", "Chet White": "PERSON", "DIIV": "ORG"}

    def parse(t: str) -> _Doc:
        return fake_nlp(t, labels)

    text = [
        "In the summer of 2013, a recording session with producer Chet White was scrapped.",
        "DIIV released a record later.",
    ]
    claim = "In 2013, White said a recording session with producer DIIV was scrapped."
    found = name_mismatches(claim, AlignmentIndex.of(text), parse)
    assert all(m.candidate != "Chet White" for m in found)


def test_a_name_cut_from_a_longer_capitalised_run_is_not_repaired_alone() -> None:
    from guardrail.hallucination.alignment import _cut_short
    from guardrail.hallucination.names import ProperName

    text = "Straight Dope is in a place. In Chicago, Miller found it. The Acme firm grew."
    at = text.index
    assert _cut_short(ProperName("Dope", "", at("Dope"), at("Dope") + 4), text)
    # a capitalised function word ("In", "The") before a name is no part of it
    assert not _cut_short(ProperName("Chicago", "GPE", at("Chicago"), at("Chicago") + 7), text)
    assert not _cut_short(ProperName("Acme", "ORG", at("Acme"), at("Acme") + 4), text)
    assert not _cut_short(ProperName("Miller", "PERSON", at("Miller"), at("Miller") + 6), text)


def test_an_untagged_run_of_capitals_does_not_repair_a_tagged_name_by_its_exact_place() -> None:
    from guardrail.hallucination.alignment import _exact_slot_swaps
    from guardrail.hallucination.names import proper_names

    labels = {**LABELS, "Greece": "GPE"}
    text = [
        "Greece has a long history. Rome was far away.",
        "In the trial Become President carefully measured the levels of the new drug.",
    ]
    claim = "In the trial Greece carefully measured the levels of the new drug."
    index = AlignmentIndex.of(text)

    def swaps(parse: Any) -> list[str | None]:
        proper = proper_names(parse, claim)
        without = [(claim.index("Greece"), claim.index("Greece") + 6)]
        return [
            m.candidate
            for m in _exact_slot_swaps(
                claim, proper, lambda n: align(claim, without, index), index, parse
            )
        ]

    # the heading's run, untagged, stands exactly in the tagged "Greece"'s place: no repair
    assert swaps(lambda t: fake_nlp(t, labels)) == []
    # tagged as a name, it is the repair
    tagged = {**labels, "Become President": "PERSON"}
    assert swaps(lambda t: fake_nlp(t, tagged)) == ["Become President"]


def test_a_repair_name_loses_edge_punctuation_and_a_run_with_a_number_word_is_none() -> None:
    def mismatch(evidence_name: str, claim_name: str = "Tampa") -> NameMismatch:
        return NameMismatch(claim_name, 0, len(claim_name), "ORG", evidence_name, "", 0, 0, True)

    assert mismatch("Machine Head,").candidate == "Machine Head"
    assert mismatch("John Phillips 0").candidate is None  # a page's run, not a name
    assert mismatch("OR6A2").candidate == "OR6A2"  # digits inside a name are part of it
    assert mismatch("Route 66", "Route 9").candidate == "Route 66"


def test_a_pages_source_named_before_its_web_address_is_no_repair() -> None:
    def mismatch(sentence: str) -> NameMismatch:
        start = sentence.index("Mental Floss")
        return NameMismatch(
            claim_name="Greece",
            start=16,
            end=22,
            label="GPE",
            evidence_name="Mental Floss",
            evidence_sentence=sentence,
            evidence_start=start,
            evidence_end=start + len("Mental Floss"),
            plain=True,
        )

    page = "Names of Germany | Mental Floss (www.mentalfloss.com) The Gauls named the tribe."
    assert mismatch(page).candidate is None  # the site that published the page
    assert mismatch("The tribe was named by Mental Floss (in 1990).").candidate == "Mental Floss"


def test_the_acronym_the_claim_kept_spells_the_repair() -> None:
    labels = {
        **LABELS,
        "North American Hockey League": "ORG",
        "Ontario Hockey League": "ORG",
        "Saginaw Spirit": "ORG",
    }

    def nlp(text: str) -> _Doc:
        return fake_nlp(text, labels)

    text = (
        "Acme is a maker of rockets. Bob Jones has coached teams in the North American Hockey "
        "League and later teams in the Ontario Hockey League over a long career in Boston."
    )
    index = AlignmentIndex.of([text, "Globex sells toys in Chicago."])
    claim = "Bob Jones has coached teams in the Globex (NAHL) over a long career in Boston."
    [found] = name_mismatches(claim, index, nlp)
    assert (found.claim_name, found.candidate) == ("Globex", "North American Hockey League")
    [found] = name_mismatches(claim.replace("NAHL", "OHL"), index, nlp)
    assert found.candidate == "Ontario Hockey League"


def test_unplaced_share_is_the_share_of_specifics_its_region_does_not_state() -> None:
    # the calibration feature: 1.0 for a claim told nowhere in particular, else the share of
    # its names, numbers and dates missing from where it is told (stated elsewhere or nowhere)
    index = AlignmentIndex.of([PASSAGE, "Globex has sold toys in Chicago since 2005."])

    def share(claim: str) -> float:
        return unplaced_share(claim, claim_alignment(claim, index, fake_nlp)[0], fake_nlp)

    assert share("Alice Smith founded the company in 1998 after leaving university.") == 0.0
    assert share("Alice Smith founded the company in 2005 after leaving university.") == 0.5
    assert share("Alice Smith founded the company in 1977 after leaving university.") == 0.5
    assert share("The firm now employs many engineers.") == 0.0  # no specifics
    assert share("Penguins enjoy swimming in cold water.") == 1.0  # aligned with nothing
    assert unplaced_share("Alice Smith founded it.", None, fake_nlp) == 1.0


def test_a_name_its_region_gives_by_surname_is_placed_for_both_region_counts() -> None:
    # "Alice Smith" where the region says "Professor Smith": the name checks find the name
    # there (a surname), and so do unplaced_share and unplaced_names; a name stated only in
    # another passage is unplaced for both
    region = (
        "Acme is a maker of rockets based in Boston. Professor Smith founded the company in "
        "1998 after leaving university. The firm now employs four hundred engineers."
    )
    index = AlignmentIndex.of([region, "Carol White sells toys in Chicago."])
    claim = "Alice Smith founded the company in 1998 after leaving university."
    located = claim_alignment(claim, index, fake_nlp)
    assert located[0] is not None
    assert unplaced_share(claim, located[0], fake_nlp) == 0.0
    assert unplaced_names(claim, index, located) == 0
    moved = "Carol White founded the company in 1998 after leaving university."
    located = claim_alignment(moved, index, fake_nlp)
    assert unplaced_share(moved, located[0], fake_nlp) == 0.5
    assert unplaced_names(moved, index, located) == 1


def test_a_misplaced_name_caps_a_claim_the_verifier_already_doubts() -> None:
    # the finding caps p_supported whether or not the claim was supported without it, so a
    # sure finding is a confident problem (repaired or removed), not an uncertain one
    from guardrail.config import HallucinationConfig
    from guardrail.hallucination.claims import sentence_claims
    from guardrail.hallucination.detector import NAME_CONFIDENCE, detect
    from guardrail.hallucination.evidence import Evidence
    from guardrail.hallucination.windows import make_windows
    from guardrail.verifiers.scripted import ScriptedVerifier

    response = "Bob Jones founded Acme in 1998 after leaving university."

    def judged(name_check: bool) -> Any:
        cfg = HallucinationConfig(logical_consistency=False, name_check=name_check)
        ev = Evidence(window_tokens=400, window_stride=400, passages=[PASSAGE])
        ev.windows = make_windows(PASSAGE, 0, 400, 400)
        ev.known_texts = [PASSAGE]
        verifier = ScriptedVerifier({(None, response): (0.4, 0.5, 0.1)})  # unsure
        claims = sentence_claims(response, cfg, "en")
        return detect(response, claims, ev, verifier, cfg, 0.8, nlp=fake_nlp)

    unchecked, checked = judged(False), judged(True)
    assert unchecked.claims[0].status is ClaimStatus.UNSUPPORTED
    assert unchecked.claims[0].p_supported > 1.0 - NAME_CONFIDENCE  # uncertain, not confident
    claim = checked.claims[0]
    assert claim.status is ClaimStatus.UNSUPPORTED
    assert claim.p_supported is not None and claim.p_supported <= round(1.0 - NAME_CONFIDENCE, 4)
    assert "'Bob Jones'" in (claim.reason or "")
    kinds = {f.type for f in checked.flags}
    assert {HallucinationType.UNSUPPORTED_CLAIM, HallucinationType.WRONG_ATTRIBUTE} <= kinds
