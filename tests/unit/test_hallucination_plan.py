"""Pair planning: BM25 candidate windows, the speed settings, and the NER-only name parse."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from guardrail.config import HallucinationConfig
from guardrail.hallucination.claims import sentence_claims
from guardrail.hallucination.evidence import Evidence
from guardrail.hallucination.plan import SpeedConfig, plan_pairs
from guardrail.hallucination.pruning import LexicalIndex, lexical_terms, shared_words
from guardrail.hallucination.windows import make_windows

WINDOWS = [
    "The board meets monthly and reviews safety, hiring and product quality.",
    "Castell Foods was founded in 1987 and has its headquarters in Porto.",
    "The company employs about 3,400 people across Europe.",
    "Customers are mostly mid-sized manufacturers and logistics firms.",
]


def test_terms_are_stemmed_content_words_and_bare_numbers() -> None:
    assert lexical_terms("It employs about 3,400 people in 2019.") == [
        "emplo",
        "peopl",
        "3400",
        "2019",
    ]


def test_bm25_ranks_the_window_with_the_claims_number_and_name_first() -> None:
    index = LexicalIndex(WINDOWS)
    assert index.top("The firm has 3,400 employees.", 1) == [2]
    assert index.top("Castell Foods is based in Porto.", 2)[0] == 1
    assert index.top("Nothing shared here at all.", 4) == [0, 1, 2, 3]  # ties: in order


def test_number_match_outweighs_shared_common_words() -> None:
    index = LexicalIndex(
        ["The company reviews product quality monthly.", "Revenue was 120 million euros."]
    )
    assert index.top("The company reported 120 million in revenue.", 1) == [1]


def evidence() -> Evidence:
    ev = Evidence(window_tokens=400, window_stride=400)
    for i, text in enumerate(WINDOWS * 2):
        ev.windows += make_windows(text, i, 400, 400)
    return ev


class WithSpeed(HallucinationConfig):
    speed: SpeedConfig = SpeedConfig()


def test_plan_without_embedder_uses_bm25_and_the_window_cap() -> None:
    cfg = WithSpeed(
        logical_consistency=False,
        top_m_windows=6,
        speed=SpeedConfig(lexical_candidates=4, embed_candidates=False, max_windows_per_claim=2),
    )
    claims = sentence_claims("The company employs 3,400 people.", cfg, "en")
    notes: list[str] = []
    plan = plan_pairs(claims, [0], evidence(), cfg, None, notes)
    staff = [w.passage_index % 4 for w in plan.claim_windows[0]]
    assert staff == [2, 2]  # both copies of the staff window
    assert len(plan.pairs) == 2
    assert notes == ["BM25 top-2 of 8 windows per claim"]


def test_without_bm25_or_embedder_every_window_is_kept() -> None:
    cfg = WithSpeed(
        logical_consistency=False, top_m_windows=6, speed=SpeedConfig(lexical_candidates=0)
    )
    claims = sentence_claims("The company employs 3,400 people.", cfg, "en")
    plan = plan_pairs(claims, [0], evidence(), cfg, None, [])
    assert [w.passage_index for w in plan.claim_windows[0]] == list(range(8))


def test_speed_section_rejects_typos() -> None:
    with pytest.raises(ValidationError, match="lexical_candidate"):
        SpeedConfig(lexical_candidate=3)  # type: ignore[call-arg]


def test_entity_parser_gives_the_full_pipelines_entities() -> None:
    from guardrail.errors import GuardrailError
    from guardrail.nlp import load_spacy
    from guardrail.stages.hallucination import EntityParser

    try:
        nlp = load_spacy()
    except GuardrailError as exc:
        pytest.skip(f"spaCy model not installed: {exc}")
    texts = [
        "Mara Olsen has led Orvik Labs in Tampere since 2011.",
        "Its best-known product is a soil sensor, sold in more than twenty countries.",
        "Pellan Energy reported revenue of 640 million euros last year.",
    ]
    parser = EntityParser(nlp, texts)
    for text in texts:
        full = [(e.text, e.label_, e.start_char) for e in nlp(text).ents]
        assert [(e.text, e.label_, e.start_char) for e in parser(text).ents] == full
    assert parser("Tomas Ruiz moved to Graz.").ents  # unseen texts are parsed on demand


def test_entity_parser_reads_claims_inside_the_shared_parse_without_parsing_them() -> None:
    from guardrail.errors import GuardrailError
    from guardrail.nlp import load_spacy
    from guardrail.stages.hallucination import EntityParser
    from guardrail.text.mentions import MentionKind, find_mentions

    try:
        nlp = load_spacy()
    except GuardrailError as exc:
        pytest.skip(f"spaCy model not installed: {exc}")
    response = "Mara Olsen has led Orvik Labs since 2011. She moved the firm to Tampere in 2015."
    doc = nlp(response)
    spans = [(0, 41), (42, len(response))]
    claims = [response[a:b] for a, b in spans]

    class Counting:
        def __init__(self) -> None:
            self.parsed: list[str] = []
            self.pipe_names = nlp.pipe_names

        def pipe(self, texts: list[str], **kw: object) -> object:
            self.parsed += texts
            return nlp.pipe(texts, **kw)

        def get_pipe(self, name: str) -> object:
            return nlp.get_pipe(name)

    counting = Counting()
    parser = EntityParser(counting, claims, doc, spans)
    assert counting.parsed == []  # both claims come from the shared parse
    for (start, end), claim in zip(spans, claims, strict=True):
        want = [
            (e.text, e.label_, e.start_char - start)
            for e in doc.ents
            if start <= e.start_char < end
        ]
        got = [(e.text, e.label_, e.start_char) for e in parser(claim).ents]
        assert got == want
        for e in parser(claim).ents:  # offsets are the claim's own
            assert claim[e.start_char : e.end_char] == e.text
    names = [m.text for m in find_mentions(claims[1], parser) if m.kind is MentionKind.NAME]
    assert "Tampere" in names
    parser("Tomas Ruiz moved to Graz.")
    assert counting.parsed == ["Tomas Ruiz moved to Graz."]  # other texts are still parsed


def test_focus_sentences_pick_the_claims_sentence_and_a_needed_neighbour() -> None:
    from guardrail.hallucination.pruning import focus_sentences

    window = " ".join(WINDOWS)
    assert focus_sentences(window, "It employs 3,400 people.") == WINDOWS[2]
    # the claim's name is in one sentence, its figure in the next: both are kept
    two = focus_sentences(window, "Castell Foods, based in Porto, employs about 3,400 people.")
    assert two == f"{WINDOWS[1]} {WINDOWS[2]}"
    assert focus_sentences(WINDOWS[1], "Castell Foods is in Porto.") is None  # one sentence
    assert focus_sentences(window, "Zebras graze quietly.") is None  # nothing shared


def test_sentence_first_puts_the_short_premise_before_the_windows() -> None:
    cfg = WithSpeed(
        logical_consistency=False, top_m_windows=2, speed=SpeedConfig(max_windows_per_claim=2)
    )
    ev = Evidence(window_tokens=400, window_stride=400)
    ev.windows += make_windows(" ".join(WINDOWS), 0, 400, 400)
    claims = sentence_claims("It employs 3,400 people.", cfg, "en")
    plan = plan_pairs(claims, [0], ev, cfg, None, [])
    assert plan.focus == {0}
    assert [plan.pairs[i][0] for i in plan.claim_pairs[0]] == [WINDOWS[2], ev.windows[0].text]
    assert plan.claim_windows[0] == [ev.windows[0], ev.windows[0]]
    off = WithSpeed(
        logical_consistency=False,
        top_m_windows=2,
        speed=SpeedConfig(max_windows_per_claim=2, sentence_first=False),
    )
    plain = plan_pairs(claims, [0], ev, off, None, [])
    assert plain.focus == set() and [plain.pairs[i][0] for i in plain.claim_pairs[0]] == [
        ev.windows[0].text
    ]


def test_no_short_premise_when_it_would_be_the_whole_window() -> None:
    cfg = WithSpeed(logical_consistency=False, top_m_windows=1)
    ev = Evidence(window_tokens=400, window_stride=400)
    ev.windows += make_windows(f"{WINDOWS[1]} {WINDOWS[2]}", 0, 400, 400)
    claims = sentence_claims(
        "Castell Foods, based in Porto, employs about 3,400 people.", cfg, "en"
    )
    plan = plan_pairs(claims, [0], ev, cfg, None, [])
    assert plan.focus == set() and len(plan.claim_pairs[0]) == 1  # the window, scored once


def test_shared_words_is_the_share_of_the_shorter_sentences_content_words() -> None:
    same = shared_words(
        "Anna Berg lives in Berlin with her two children.", "Anna Berg lives alone in Berlin."
    )
    other = shared_words(
        "Orvik Labs was founded in 2000 in Graz.", "Orvik Labs operates 5 production sites."
    )
    assert same == pytest.approx(4 / 5) and other == pytest.approx(2 / 4)
    assert shared_words("It is.", "Anna lives in Berlin.") == 0.0  # no content words


def _logic_plan(response: str, **kw: float) -> list[tuple[str, str]]:
    cfg = WithSpeed(logical_consistency=True, top_m_windows=1, **kw)
    claims = sentence_claims(response, cfg, "en")
    plan = plan_pairs(claims, list(range(len(claims))), evidence(), cfg, None, [])
    return [(claims[a].text, claims[b].text) for a, b, _ in plan.logic]


def test_only_sentences_about_the_same_thing_are_checked_against_each_other() -> None:
    response = (
        "Castell Foods was founded in 1987 and has its headquarters in Porto. "
        "Castell Foods operates 6 production sites. "
        "Castell Foods was founded in 1987 and has its headquarters in Lyon."
    )
    # without an embedder the neighbours are the candidates; the gate leaves out the pairs
    # about different attributes (founding vs sites), and 0 turns it off
    assert _logic_plan(response) == []
    assert len(_logic_plan(response, logic_min_shared_words=0.0)) == 2
    both = _logic_plan(
        "Castell Foods has its headquarters in Porto. Castell Foods has its headquarters in Lyon."
    )
    assert len(both) == 1


def test_entity_parsers_of_one_call_share_its_parses_and_parse_the_question_once() -> None:
    from guardrail.stages.base import Parses
    from guardrail.stages.hallucination import EntityParser

    class Counting:
        def __init__(self) -> None:
            self.pipe_names: list[str] = []
            self.parsed: list[str] = []

        def pipe(self, texts: list[str], **kw: object) -> list[str]:
            self.parsed += list(texts)
            return [f"doc of {t}" for t in texts]

    nlp = Counting()
    parses = Parses()
    parses.add({"Who founded Orvik Labs?": "the coherence stage's parse"})
    assert parses.known("Who founded Orvik Labs?") == "the coherence stage's parse"
    assert parses.known("Where is Tampere?") is None and nlp.parsed == []
    first = EntityParser(nlp, parses=parses, once=["Where is Tampere?"])
    # another stage's parse is taken as it is; the question is parsed through the call's parses
    assert first("Who founded Orvik Labs?") == "the coherence stage's parse"
    assert first("Where is Tampere?") == "doc of Where is Tampere?"
    second = EntityParser(nlp, parses=parses, once=["Where is Tampere?"])  # the re-check's
    assert second("Where is Tampere?") == "doc of Where is Tampere?"
    assert second("Mara Olsen moved.") == "doc of Mara Olsen moved."  # a check's own text
    assert nlp.parsed == ["Where is Tampere?", "Mara Olsen moved."]
