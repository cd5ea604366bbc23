"""The coherence examples, end to end with the real spaCy pipeline and MiniLM embedder.

Each example runs three ways: through ``check_coherence``, through the ``Guardrail`` pipeline,
and through ``guardrail check --history examples/data/coherence_*.json --format json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from guardrail.report import CoherenceResult

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "examples" / "data"
SCHEDULE = "Please schedule a meeting with John for Monday at 2pm."
PRESENTER = "Who is presenting at Monday's budget meeting?"


def _types(result: CoherenceResult) -> list[str]:
    return [i.type for i in result.issues]


def qud_addressed(r: CoherenceResult) -> None:
    assert r.qud_relevance.addresses_qud and r.qud_relevance.score >= 0.7
    assert r.qud_relevance.details["answer_kind"] == "time"
    assert not {"qud_not_addressed", "qud_partially_addressed"} & set(_types(r))


def qud_not_addressed(r: CoherenceResult) -> None:
    assert not r.qud_relevance.addresses_qud and r.qud_relevance.score < 0.3
    assert "qud_not_addressed" in _types(r)


def on_topic(r: CoherenceResult) -> None:
    assert not r.topic_consistency.details["drift_detected"]
    assert r.topic_consistency.score >= 0.6
    assert r.discourse_coherence.score == 1.0


def topic_drift(r: CoherenceResult) -> None:
    assert r.topic_consistency.details["drift_detected"]
    assert r.topic_consistency.score < 0.3
    drift = [i for i in r.issues if i.type == "topic_drift"]
    assert drift and drift[0].span is not None
    assert "restaurant" in drift[0].description or drift[0].span.start == 0


def entity_consistent(r: CoherenceResult) -> None:
    assert r.entity_consistency.score == 1.0 and "entity_mismatch" not in _types(r)
    assert r.entity_consistency.details["checked"], "the department was checked"


def entity_mismatch(r: CoherenceResult) -> None:
    assert r.entity_consistency.score == 0.0
    issue = next(i for i in r.issues if i.type == "entity_mismatch")
    assert issue.span is not None and (issue.span.start, issue.span.end) == (16, 25)  # Marketing
    assert "Engineering" in (issue.suggestion or "")


def discourse_ok(r: CoherenceResult) -> None:
    assert r.discourse_coherence.score == 1.0
    assert r.discourse_coherence.details["main_act"] == "confirmation"
    assert not {"discourse_break", "unexpected_speech_act"} & set(_types(r))


def discourse_break(r: CoherenceResult) -> None:
    assert r.discourse_coherence.score <= 0.1
    issue = next(i for i in r.issues if i.type == "discourse_break")
    assert issue.severity > 0.8 and issue.span is not None and issue.span.start == 0


def reference_ambiguous(r: CoherenceResult) -> None:
    assert r.reference_consistency.score == 0.0
    issue = next(i for i in r.issues if i.type == "ambiguous_reference")
    assert issue.span is not None and (issue.span.start, issue.span.end) == (0, 3)


def reference_resolved(r: CoherenceResult) -> None:
    assert r.reference_consistency.score == 1.0
    assert r.reference_consistency.details["pronouns"][0]["refers_to"] == ["Sarah Lee"]
    assert not {"ambiguous_reference", "unresolved_reference"} & set(_types(r))


CASES: list[tuple[str, str, str, str, Callable[[CoherenceResult], None]]] = [
    ("qud_addressed", "coherence_meeting_time.json", "What time is the meeting with John?",
     "The meeting with John is at 2pm on Monday.", qud_addressed),
    ("qud_not_addressed", "coherence_meeting_time.json", "What time is the meeting with John?",
     "John is a great colleague who works in Engineering.", qud_not_addressed),
    ("topic_ok", "coherence_scheduling.json", SCHEDULE,
     "I've scheduled the meeting for 2pm. Should I send calendar invites to the attendees?",
     on_topic),
    ("topic_drift", "coherence_scheduling.json", SCHEDULE,
     "By the way, have you tried the new restaurant downtown? The food is amazing.", topic_drift),
    ("entity_ok", "coherence_entity_registry.json", PRESENTER,
     "John Smith from Engineering confirmed his attendance.", entity_consistent),
    ("entity_mismatch", "coherence_entity_registry.json", PRESENTER,
     "John Smith from Marketing will present the budget.", entity_mismatch),
    ("discourse_ok", "coherence_scheduling.json", SCHEDULE,
     "I've scheduled the meeting. Is there anything else?", discourse_ok),
    ("discourse_break", "coherence_scheduling.json", SCHEDULE,
     "Why did you cancel the meeting?", discourse_break),
    ("reference_ambiguous", "coherence_reference_ambiguous.json", "Who will present the budget?",
     "She will present the budget.", reference_ambiguous),
    ("reference_resolved", "coherence_reference_resolved.json", "Who will present the budget?",
     "She will present the budget.", reference_resolved),
]  # fmt: skip
IDS = [c[0] for c in CASES]


def _history(name: str) -> dict[str, Any]:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path} is missing")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def models() -> tuple[Any, Any, Any]:
    from guardrail.coherence import embed_prototypes
    from guardrail.errors import GuardrailError
    from guardrail.models import load_embedder
    from guardrail.nlp import load_spacy

    try:
        nlp, embedder = load_spacy(), load_embedder()
    except GuardrailError as exc:
        pytest.skip(f"models unavailable: {exc}")
    return nlp, embedder, embed_prototypes(embedder)


@pytest.mark.parametrize(("case", "history", "query", "response", "expect"), CASES, ids=IDS)
def test_seed_examples_direct(
    models: tuple[Any, Any, Any],
    case: str,
    history: str,
    query: str,
    response: str,
    expect: Callable[[CoherenceResult], None],
) -> None:
    from guardrail.coherence import check_coherence
    from guardrail.inputs import DialogueState

    nlp, embedder, prototypes = models
    dialogue = DialogueState.model_validate(_history(history))
    result = check_coherence(response, query, dialogue, nlp, embedder, prototypes=prototypes)
    expect(result)


ONLY_COHERENCE = {"disabled_stages": ["claims", "fact_validation", "hallucination", "correction"]}


@pytest.mark.parametrize(("case", "history", "query", "response", "expect"), CASES, ids=IDS)
def test_seed_examples_through_cli(
    models: tuple[Any, Any, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    history: str,
    query: str,
    response: str,
    expect: Callable[[CoherenceResult], None],
) -> None:
    """``guardrail check --history FILE`` (other stages disabled to keep the test quick)."""
    from guardrail.cli import main

    _history(history)
    config = tmp_path / "only-coherence.json"
    config.write_text(json.dumps(ONLY_COHERENCE), encoding="utf-8")
    argv = ["check", "--format", "json", "--config", str(config), "--query", query,
            "--response", response, "--history", str(DATA / history)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    coherence = next(s for s in report["stages"] if s["name"] == "coherence")
    assert coherence["status"] == "ran", coherence
    expect(CoherenceResult.model_validate(report["coherence"]))


def test_pipeline_feeds_coherence_into_confidence(models: tuple[Any, Any, Any]) -> None:
    from guardrail import Guardrail

    guard = Guardrail(ONLY_COHERENCE)
    good = guard.invoke({"query": SCHEDULE, "response": "I've scheduled the meeting for Monday.",
                         "dialogue": _history("coherence_scheduling.json")})  # fmt: skip
    bad = guard.invoke({"query": SCHEDULE, "response": "Why did you cancel the meeting?",
                        "dialogue": _history("coherence_scheduling.json")})  # fmt: skip
    assert good.coherence is not None and bad.coherence is not None
    # entity consistency counts once: in its own component, not again inside coherence's
    from guardrail.scoring import coherence_component

    config = guard.config
    expected = coherence_component(good.coherence, config.weights, config.coherence.weights)
    assert good.confidence_breakdown.coherence == expected
    assert good.confidence_breakdown.entity == good.coherence.entity_consistency.score
    assert good.coherence.score > bad.coherence.score
    assert good.confidence > bad.confidence
    assert bad.confidence_breakdown.penalty > 0  # the discourse break is severe (> 0.8)


def test_knowledge_base_attributes_are_checked(models: tuple[Any, Any, Any]) -> None:
    """A KB entity (duck-typed ``find_entity``) not in the registry is checked by the entity
    check when it compares values on record (``entity_kb_values``: the pipeline switches it on
    when the fact-validation stage, whose finding such a value otherwise is, is disabled)."""
    from guardrail.coherence import check_coherence
    from guardrail.config import CoherenceConfig
    from guardrail.inputs import DialogueState

    kb_mod = pytest.importorskip("guardrail.knowledge")
    kb = kb_mod.open_knowledge_base(
        {"entities": [{"id": "E42", "name": "John Smith", "aliases": ["John"], "type": "person",
                       "attributes": {"department": {"value": "Engineering", "confidence": 1.0}}}]}
    )  # fmt: skip
    nlp, embedder, prototypes = models
    text = "John Smith from Marketing will present the budget."
    on = CoherenceConfig(entity_kb_values=True)
    result = check_coherence(text, PRESENTER, DialogueState(), nlp, embedder, config=on,
                             knowledge_base=kb, prototypes=prototypes)  # fmt: skip
    assert "entity_mismatch" in _types(result)
    # by default the value on record is fact validation's finding, counted there once
    result = check_coherence(text, PRESENTER, DialogueState(), nlp, embedder, knowledge_base=kb,
                             prototypes=prototypes)  # fmt: skip
    assert "entity_mismatch" not in _types(result)


def test_unusable_input_raises_typed_error(models: tuple[Any, Any, Any]) -> None:
    from guardrail.coherence import check_coherence
    from guardrail.errors import InputError
    from guardrail.inputs import DialogueState

    nlp, embedder, prototypes = models
    with pytest.raises(InputError):
        check_coherence("   ", "q", DialogueState(), nlp, embedder, prototypes=prototypes)
    no_context = check_coherence("Fine.", "", DialogueState(), nlp, embedder, prototypes=prototypes)
    assert no_context.qud_relevance.details["applicable"] is False
    assert no_context.score == 1.0 and no_context.issues == []


def test_plain_answer_to_a_question_has_no_issue(models: tuple[Any, Any, Any]) -> None:
    """A topical statement is not mistaken for another act by the embedding fallback."""
    from guardrail.coherence import check_coherence
    from guardrail.inputs import DialogueState

    nlp, embedder, prototypes = models
    result = check_coherence("The meeting is at 2pm on Monday.", "When is the meeting?",
                             DialogueState(), nlp, embedder, prototypes=prototypes)  # fmt: skip
    assert result.issues == [] and result.score >= 0.9
    assert result.discourse_coherence.details["main_act"] == "inform"
