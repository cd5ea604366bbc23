"""Requests for information ("Tell me about John") are judged by content, not by an action."""

from __future__ import annotations

from guardrail.coherence.qud import coverage
from guardrail.coherence.questions import classify_question
from guardrail.nlp import load_spacy


def test_tell_me_about_is_covered_by_content() -> None:
    nlp = load_spacy()
    question = nlp("Tell me about John")
    info = classify_question(question)
    answered = coverage(nlp("John works in the Engineering department since 2020."), question, info)
    dodged = coverage(nlp("The weather is nice today."), question, info)
    assert answered >= 0.9
    assert dodged < answered


def test_action_requests_still_need_an_action() -> None:
    nlp = load_spacy()
    question = nlp("Book the meeting room for Friday.")
    info = classify_question(question)
    assert coverage(nlp("The weather is nice today."), question, info) < 0.5
