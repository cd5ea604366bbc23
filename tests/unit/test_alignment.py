"""Claim-to-evidence alignment: a name swapped for another of the same documents is flagged,
aliases and nearby mentions are not (guardrail.hallucination.alignment)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from guardrail.correction.factual import evidence_edits
from guardrail.hallucination.alignment import (
    AlignmentIndex,
    align,
    name_mismatches,
    name_stands_in,
)
from guardrail.hallucination.flags import wrong_name_flag
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


def fake_nlp(text: str) -> _Doc:
    """Entities of ``LABELS`` found in ``text`` (longest names first, no overlaps)."""
    ents: list[_Ent] = []
    for name in sorted(LABELS, key=len, reverse=True):
        for m in re.finditer(rf"\b{re.escape(name)}\b", text):
            if not any(e.start_char < m.end() and m.start() < e.end_char for e in ents):
                ents.append(_Ent(name, LABELS[name], m.start(), m.end()))
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
