"""The LangChain v1 agent middleware in a real ``create_agent`` graph.

The agent's model is langchain-core's ``GenericFakeChatModel`` (it stands in for Groq); the
guardrail is real, its decision set by configuration (see ``test_chains_guarded_rag``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk

from chains.agent_middleware import guard_agent, guardrail_middleware
from chains.stream_checks import SentenceCheck
from guardrail.errors import GuardrailRejected
from guardrail.pipeline import Guardrail
from guardrail.report import GuardReport
from tests.async_retriever import async_only_retriever
from tests.stage_names import STAGES

pytest.importorskip(
    "langchain.agents", reason="needs langchain v1: pip install 'answer-guardrail[chains]'"
)

ACCEPT_ALL = {
    "disabled_stages": list(STAGES),
    "failure_policy": "fail_open",
    "thresholds": {"accept": 0.0, "flag": 0.0, "correct": 0.0, "regenerate": 0.0},
}


def agent(guard: Guardrail, on_fail: str) -> object:
    from langchain.agents import create_agent

    model = GenericFakeChatModel(messages=iter([AIMessage(content="It is on Thursday at 10:00.")]))
    return create_agent(model, tools=[], middleware=[guardrail_middleware(guard, on_fail=on_fail)])


def test_accepted_answer_carries_the_report() -> None:
    out = agent(Guardrail(ACCEPT_ALL), "raise").invoke(  # type: ignore[attr-defined]
        {"messages": [{"role": "user", "content": "When is the meeting with John?"}]}
    )
    last = out["messages"][-1]
    assert last.content == "It is on Thursday at 10:00."
    assert last.additional_kwargs["guardrail_report"]["recommendation"]["action"] == "accept"
    assert len(out["messages"]) == 2  # replaced in place (same id), not appended


def test_rejected_answer_raises() -> None:
    blocked = Guardrail({"disabled_stages": list(STAGES)})
    with pytest.raises(GuardrailRejected):
        agent(blocked, "raise").invoke(  # type: ignore[attr-defined]
            {"messages": [{"role": "user", "content": "When is the meeting?"}]}
        )
    # an answer that could not be checked is never delivered as annotated (OnFail.fallback_text,
    # as with_guardrail): annotated behaves as raise
    with pytest.raises(GuardrailRejected, match="nothing checked is left to show") as caught:
        agent(blocked, "annotated").invoke(  # type: ignore[attr-defined]
            {"messages": [{"role": "user", "content": "When is the meeting?"}]}
        )
    assert caught.value.report.verdict.label.value == "UNVERIFIED"
    out = agent(blocked, "report").invoke(  # type: ignore[attr-defined]
        {"messages": [{"role": "user", "content": "When is the meeting?"}]}
    )
    assert out["messages"][-1].content == "It is on Thursday at 10:00."  # kept, marked failed
    report = out["messages"][-1].additional_kwargs["guardrail_report"]
    assert report["recommendation"]["action"] == "human_review"
    assert out["guardrail"]["action"] == "human_review"


# --- streamed answers ---------------------------------------------------------------------

EVIDENCE = "The project review meeting with John Smith is on Thursday at 10:00 in room 4B."


class ToolCallingFake(GenericFakeChatModel):
    """The fake chat model (standing in for Groq) that can call tools, streaming word by word."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        message = self._generate(messages).generations[0].message
        if message.tool_calls:
            call = message.tool_calls[0]
            chunk = {
                "name": call["name"],
                "args": json.dumps(call["args"]),
                "id": call["id"],
                "index": 0,
            }
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[chunk]))
            return
        for token in re.split(r"(\s)", message.text):
            if token:
                yield ChatGenerationChunk(message=AIMessageChunk(content=token))


def lookup(query: str) -> str:
    """Look up the office calendar."""
    return EVIDENCE


def streaming_agent(answer: str) -> object:
    from langchain.agents import create_agent

    model = ToolCallingFake(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"query": "meeting"},
                                                   "id": "call-1"}]),
                AIMessage(content=answer),
            ]
        )
    )  # fmt: skip
    return create_agent(model, tools=[lookup])


@pytest.fixture(scope="module")
def checker() -> Guardrail:
    return Guardrail({"disabled_stages": ["coherence", "fact_validation", "correction"]})


QUESTION = {"messages": [{"role": "user", "content": "When and where is the meeting with John?"}]}
ANSWER = "The meeting with John is on Thursday at 10:00. It is held in room 9C. Bring notes."


def test_streamed_agent_answer_is_checked_against_tool_results(checker: Guardrail) -> None:
    guarded = guard_agent(streaming_agent(ANSWER), checker, streaming="annotate")
    items = list(guarded.stream(QUESTION))
    text = "".join(i for i in items if isinstance(i, str))
    checks = [i for i in items if isinstance(i, SentenceCheck)]
    assert text.startswith(
        "The meeting with John is on Thursday at 10:00. It is held in room 9C. ["
    )
    assert [c.passed for c in checks][:2] == [True, False]
    report = items[-1]
    assert isinstance(report, GuardReport) and report.original == ANSWER
    assert checks[0].claims[0].status.value == "supported"  # the tool result is the evidence


async def test_streamed_agent_stop_and_events(checker: Guardrail) -> None:
    guarded = guard_agent(streaming_agent(ANSWER), checker, streaming="stop")
    events = [
        e["data"]
        async for e in guarded.astream_events(QUESTION, version="v2")
        if e["event"] == "on_custom_event" and e["name"] == "on_sentence_checked"
    ]
    assert [(e["index"], e["passed"]) for e in events] == [(0, True), (1, False)]
    chunks = [
        c async for c in guard_agent(streaming_agent(ANSWER), checker, "stop").astream(QUESTION)
    ]
    text = "".join(c for c in chunks if isinstance(c, str))
    assert "Bring notes" not in text and "stopped by the fact checker" in text


async def test_streamed_agent_awaits_its_retriever(checker: Guardrail) -> None:
    """The retriever's documents join the tool results as evidence; on ``astream`` its async
    form is awaited (its sync form fails here)."""
    retriever, asked = async_only_retriever(["The meeting with John is held in room 9C."])
    guarded = guard_agent(streaming_agent(ANSWER), checker, "annotate", retriever=retriever)
    items = [i async for i in guarded.astream(QUESTION)]
    checks = [i for i in items if isinstance(i, SentenceCheck)]
    assert asked == ["When and where is the meeting with John?"]
    assert [c.passed for c in checks][:2] == [True, True]  # room 9C is in the retrieved text


def test_the_agent_shares_report_of_and_on_fail() -> None:
    """One ``report_of`` (``chains.results``'s, importable from the agent middleware), and the
    agent's ``on_fail`` is an ``OnFail``: the enum, or its value."""
    import chains
    from chains import agent_middleware, results
    from chains.agent_middleware import GuardrailHook
    from chains.results import OnFail
    from guardrail.errors import ConfigError

    assert agent_middleware.report_of is results.report_of is chains.report_of
    guard = Guardrail(ACCEPT_ALL)
    for value in (OnFail.REGENERATE, "regenerate"):
        hook = GuardrailHook(guard, value, None, None, max_attempts=2)
        assert hook.on_fail is OnFail.REGENERATE and hook.regenerate and hook.max_attempts == 2
    once = GuardrailHook(guard, "annotated", None, None, max_attempts=3)
    assert once.on_fail is OnFail.ANNOTATED and not once.regenerate and once.max_attempts == 1
    with pytest.raises(ConfigError, match=r"'regenerate'.*not 'retry'"):
        GuardrailHook(guard, "retry", None, None)
