"""The guarded RAG loop, offline and fast.

The chat model is faked with langchain-core's ``FakeListChatModel`` (it stands in for Groq /
the local model). The guardrail is always a real ``Guardrail``: its decision is driven by its
configuration (stages disabled, failure policy, bands), never by a faked report. The tests where
the knowledge stage drives the decision are in ``tests/integration/test_chains_regenerate.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda

from chains.guarded_rag import EMPTY_ANSWER_GUIDANCE, GuardedRAG
from chains.results import GuardedAnswer
from guardrail.errors import ConfigError, InputError
from guardrail.inputs import Passage
from guardrail.pipeline import Guardrail
from guardrail.report import Action
from guardrail.tracing import RunTreeCollector
from tests.stage_names import STAGES

PASSAGES = [
    Passage(text="The project review meeting with John Smith is on Thursday at 10:00.", score=0.7),
    Passage(text="Sarah Lee works in the Finance department.", score=0.2),
]


def retriever() -> RunnableLambda[str, list[Passage]]:
    return RunnableLambda(lambda q: PASSAGES)


def guard(**overrides: Any) -> Guardrail:
    """A real guardrail with no checking stage: its bands alone decide."""
    return Guardrail({"disabled_stages": list(STAGES), **overrides})


#: No stage runs, fail-open: confidence is 0.0; with the regenerate band at 0 every answer
#: is sent back for regeneration.
ALWAYS_REGENERATE = {
    "failure_policy": "fail_open",
    "thresholds": {"accept": 1.0, "flag": 1.0, "correct": 1.0, "regenerate": 0.0},
}
ALWAYS_ACCEPT = {
    "failure_policy": "fail_open",
    "thresholds": {"accept": 0.0, "flag": 0.0, "correct": 0.0, "regenerate": 0.0},
}


def test_accepted_answer_is_delivered_after_one_attempt() -> None:
    llm = FakeListChatModel(responses=["The meeting is on Thursday at 10:00."])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_ACCEPT))
    result = rag.invoke("When is the meeting with John?")
    assert isinstance(result, GuardedAnswer)
    assert result.action is Action.ACCEPT
    assert result.answer == "The meeting is on Thursday at 10:00."
    assert len(result.attempts) == 1 and result.attempts[0].report is not None
    assert result.passages == PASSAGES
    assert result.report is not None and result.report.original == result.answer


def test_unchecked_answer_escalates_under_fail_closed() -> None:
    llm = FakeListChatModel(responses=["The meeting is on Thursday."])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(), max_attempts=3)
    result = rag.invoke("When is the meeting with John?")
    assert result.action is Action.HUMAN_REVIEW
    assert result.answer is None and not result.delivered
    assert result.escalation is not None
    assert "Could not check the answer" in result.escalation.reason
    assert result.escalation.last_answer == "The meeting is on Thursday."
    assert len(result.attempts) == 1  # human_review ends the loop at once


def test_regenerates_with_guidance_until_the_limit_then_escalates() -> None:
    answers = ["First try.", "Second try.", "Third try."]
    llm = FakeListChatModel(responses=answers)
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_REGENERATE), max_attempts=3)
    collector = RunTreeCollector()
    result = rag.invoke("When is the meeting?", {"callbacks": [collector]})
    assert [a.answer for a in result.attempts] == answers
    assert all(a.action is Action.REGENERATE for a in result.attempts)
    assert result.action is Action.HUMAN_REVIEW and result.answer is None
    assert result.escalation is not None and result.escalation.attempts == 3
    assert "after 3 attempt" in result.escalation.reason
    guidance = result.attempts[0].report.recommendation.guidance  # type: ignore[union-attr]
    assert result.attempts[0].guidance is None
    assert result.attempts[1].guidance == guidance
    # The re-prompt really carries the guidance and the rejected answer (read from the trace).
    prompts = [str(run.inputs) for run in collector.find("guarded_rag.generate")]
    assert len(prompts) == 3
    assert guidance not in prompts[0]
    assert guidance in prompts[1] and "First try." in prompts[1]
    assert "Second try." in prompts[2]


def test_empty_answer_is_regenerated() -> None:
    llm = FakeListChatModel(responses=["  ", "Thursday at 10:00."])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_ACCEPT), max_attempts=2)
    result = rag.invoke("When is the meeting?")
    assert result.attempts[0].report is None and result.attempts[0].error
    assert result.attempts[1].guidance == EMPTY_ANSWER_GUIDANCE
    assert result.answer == "Thursday at 10:00."


def test_trace_has_retrieve_and_one_child_run_per_attempt() -> None:
    llm = FakeListChatModel(responses=["a1", "a2"])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_REGENERATE), max_attempts=2)
    collector = RunTreeCollector()
    result = rag.invoke(
        {"question": "When?", "session_id": "s1", "turn_id": 4}, {"callbacks": [collector]}
    )
    root = collector.roots[-1]
    assert root.name == "guarded_rag"
    assert root.names() == [
        "guarded_rag.retrieve",
        "guarded_rag.attempt.1",
        "guarded_rag.attempt.2",
    ]
    assert isinstance(root.output, GuardedAnswer)
    assert root.metadata["guarded_rag_max_attempts"] == 2
    first = root.children[1]
    assert "attempt:1" in first.tags
    assert first.names() == ["guarded_rag.generate", "guardrail"]
    guard_run = first.children[1]
    assert str(guard_run.id) == result.attempts[0].run_id  # the run its feedback is on
    assert guard_run.metadata["session_id"] == "s1" and guard_run.metadata["turn_id"] == 4
    assert guard_run.names()[-1] == "guardrail.recommendation"


def test_given_passages_skip_retrieval() -> None:
    def fail(_: str) -> list[Passage]:
        raise AssertionError("the retriever must not be called")

    llm = FakeListChatModel(responses=["ok answer"])
    rag = GuardedRAG(RunnableLambda(fail), llm, guardrail=guard(**ALWAYS_ACCEPT))
    result = rag.invoke({"question": "q?", "passages": [{"text": "evidence", "score": 0.5}]})
    assert result.passages[0].text == "evidence" and result.answer == "ok answer"


def test_stream_yields_the_text_then_the_final_checked_answer() -> None:
    llm = FakeListChatModel(responses=["Streamed answer. Second part."])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_ACCEPT))
    chunks = list(rag.stream("When is the meeting?"))
    text = [c for c in chunks if isinstance(c, str)]
    assert len(text) > 2 and "".join(text) == "Streamed answer. Second part."
    assert (
        isinstance(chunks[-1], GuardedAnswer)
        and chunks[-1].answer == "Streamed answer. Second part."
    )
    assert len(chunks[-1].attempts) == 1


def test_stream_regenerates_unstreamed_when_the_final_check_asks() -> None:
    llm = FakeListChatModel(responses=["First try.", "Second try."])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_REGENERATE), max_attempts=2)
    chunks = list(rag.stream("When is the meeting?"))
    assert "".join(c for c in chunks if isinstance(c, str)) == "First try."
    result = chunks[-1]
    assert isinstance(result, GuardedAnswer) and result.action is Action.HUMAN_REVIEW
    assert [a.answer for a in result.attempts] == ["First try.", "Second try."]


def test_without_a_model_the_extractive_fallback_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    import chains.generation as generation

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise generation.MissingDependencyError("llama-cpp-python", "local-llm")

    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.setattr(generation, "local_chat_model", missing)
    rag = GuardedRAG(retriever(), guardrail=guard(**ALWAYS_ACCEPT))
    assert rag.fallback and "llama-cpp-python is not installed" in rag.model_name
    result = rag.invoke("When is the meeting with John?")
    assert result.answer == PASSAGES[0].text
    assert result.model.startswith("extractive-fallback")


async def test_ainvoke_and_abatch() -> None:
    llm = FakeListChatModel(responses=["x1", "x2", "x3"])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_REGENERATE), max_attempts=3)
    result = await rag.ainvoke("When?")
    assert [a.answer for a in result.attempts] == ["x1", "x2", "x3"]
    assert result.action is Action.HUMAN_REVIEW
    accept = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_ACCEPT))
    results = await accept.abatch(["q1?", "q2?"])
    assert all(r.action is Action.ACCEPT for r in results)


def test_batch() -> None:
    llm = FakeListChatModel(responses=["same"])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_ACCEPT))
    results = rag.batch(["q1?", "q2?", "q3?"])
    assert [r.answer for r in results] == ["same", "same", "same"]


def test_bad_input_and_config_are_typed_errors() -> None:
    llm = FakeListChatModel(responses=["x"])
    rag = GuardedRAG(retriever(), llm, guardrail=guard(**ALWAYS_ACCEPT))
    with pytest.raises(InputError):
        rag.invoke("   ")
    with pytest.raises(InputError):
        rag.invoke(42)
    with pytest.raises(ConfigError):
        GuardedRAG(retriever(), llm, guardrail=guard(), max_attempts=0)


def test_a_whole_chain_as_the_model_is_a_config_error_naming_the_way() -> None:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    llm = FakeListChatModel(responses=["The meeting is on Thursday at 10:00."])
    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{question}")])
    with pytest.raises(ConfigError, match="with_guardrail"):
        GuardedRAG(retriever(), llm=prompt | llm | StrOutputParser(), guardrail=guard())
    # a model with a parser after it is still a model
    rag = GuardedRAG(retriever(), llm=llm | StrOutputParser(), guardrail=guard(**ALWAYS_ACCEPT))
    assert rag.invoke("When is the meeting with John?").answer.startswith("The meeting")
