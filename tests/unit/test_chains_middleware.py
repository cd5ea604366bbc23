"""``with_guardrail`` around existing chains, offline.

The LLM inside the wrapped chains is langchain-core's ``FakeListChatModel`` (it stands in for
Groq). The guardrail is real; its decision is set through its configuration (see
``test_chains_guarded_rag``), never faked.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_classic.chains import create_retrieval_chain
from langchain_classic.chains.combine_documents import create_stuff_documents_chain
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from chains.middleware import REPORT_KEY, answer_text, query_text, with_guardrail
from guardrail.errors import GuardrailRejected, InputError
from guardrail.pipeline import Guardrail
from guardrail.report import GuardReport
from guardrail.tracing import RunTreeCollector
from tests.async_retriever import async_only_retriever
from tests.stage_names import STAGES

DOCS = [
    Document(
        page_content="The project review meeting with John Smith is on Thursday at 10:00.",
        metadata={"source": "meetings.md", "score": 0.71},
    )
]
ACCEPT_ALL = {
    "disabled_stages": list(STAGES),
    "failure_policy": "fail_open",
    "thresholds": {"accept": 0.0, "flag": 0.0, "correct": 0.0, "regenerate": 0.0},
}


def rag_app(answer: str) -> Any:
    """An existing app: LangChain's create_retrieval_chain with a fake chat model."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context:\n{context}"), ("human", "{input}")]
    )
    llm = FakeListChatModel(responses=[answer])
    retriever = RunnableLambda(lambda x: DOCS)
    return create_retrieval_chain(retriever, create_stuff_documents_chain(llm, prompt))


def test_rejected_answer_raises_with_the_report() -> None:
    safe = with_guardrail(
        rag_app("Thursday at 10:00."), Guardrail({"disabled_stages": list(STAGES)})
    )
    with pytest.raises(GuardrailRejected) as info:
        safe.invoke({"input": "When is the meeting with John?"})
    report = info.value.report
    assert isinstance(report, GuardReport)
    assert report.action.value == "human_review"
    assert report.original == "Thursday at 10:00."


def test_fallback_reacts_to_the_rejection() -> None:
    safe = with_guardrail(rag_app("Thursday."), Guardrail({"disabled_stages": list(STAGES)}))
    apology = RunnableLambda(lambda x: {"input": x["input"], "answer": "I am not sure."})
    out = safe.with_fallbacks([apology], exceptions_to_handle=(GuardrailRejected,)).invoke(
        {"input": "When is the meeting with John?"}
    )
    assert out["answer"] == "I am not sure."


def test_on_fail_report_and_text_modes() -> None:
    blocked = Guardrail({"disabled_stages": list(STAGES)})
    app = rag_app("Thursday at 10:00.")
    report = with_guardrail(app, blocked, on_fail="report").invoke({"input": "When?"})
    assert isinstance(report, GuardReport)
    for on_fail in ("annotated", "corrected"):  # an answer that could not be checked
        with pytest.raises(GuardrailRejected, match="nothing checked is left to show"):
            with_guardrail(rag_app("Thursday."), blocked, on_fail=on_fail).invoke(
                {"input": "When?"}
            )
    with pytest.raises(ValueError):
        with_guardrail(app, blocked, on_fail="ignore")


def test_passing_answer_keeps_the_output_and_adds_the_report() -> None:
    collector = RunTreeCollector()
    safe = with_guardrail(rag_app("Thursday at 10:00."), Guardrail(ACCEPT_ALL))
    out = safe.invoke({"input": "When is the meeting with John?"}, {"callbacks": [collector]})
    assert out["answer"] == "Thursday at 10:00."
    assert out["context"] == DOCS
    report: GuardReport = out[REPORT_KEY]
    assert report.action.value == "accept"
    root = collector.roots[-1]
    assert root.name == "guarded_chain" and root.names()[-1] == "guardrail"
    guard_input = root.children[-1].inputs
    passages = guard_input["passages"]
    assert passages[0].score == pytest.approx(0.71)  # the retriever's score reaches the check
    assert guard_input["query"] == "When is the meeting with John?"


def test_retriever_fetches_evidence_for_plain_chains() -> None:
    calls: list[str] = []

    def retrieve(query: str) -> list[Document]:
        calls.append(query)
        return DOCS

    chain = RunnableLambda(lambda q: AIMessage(content="Thursday at 10:00."))
    safe = with_guardrail(chain, Guardrail(ACCEPT_ALL), retriever=RunnableLambda(retrieve))
    out = safe.invoke("When is the meeting?")
    assert isinstance(out, AIMessage) and out.content == "Thursday at 10:00."
    assert calls == ["When is the meeting?"]


async def test_async_paths_await_the_retriever() -> None:
    from chains.agent_middleware import GuardrailHook
    from chains.results import OnFail

    retriever, asked = async_only_retriever(DOCS)
    chain = RunnableLambda(lambda q: AIMessage(content="Thursday at 10:00."))
    safe = with_guardrail(chain, Guardrail(ACCEPT_ALL), retriever=retriever)
    out = await safe.ainvoke("When is the meeting?")
    assert out.content == "Thursday at 10:00."
    chunks = [c async for c in safe.astream("When is it?")]
    assert isinstance(chunks[-1], GuardReport) and chunks[-1].original == "Thursday at 10:00."
    hook = GuardrailHook(Guardrail(ACCEPT_ALL), OnFail.RAISE, retriever, None)
    messages = [HumanMessage(content="When?"), AIMessage(content="On Thursday.", id="a1")]
    update = await hook.acall({"messages": messages})
    assert update is not None and update["messages"][0].content == "On Thursday."
    assert asked == ["When is the meeting?", "When is it?", "When?"]
    with pytest.raises(AssertionError, match="synchronously"):
        safe.invoke("When?")  # the sync path keeps the sync form


async def test_ainvoke() -> None:
    safe = with_guardrail(rag_app("Thursday."), Guardrail(ACCEPT_ALL))
    out = await safe.ainvoke({"input": "When?"})
    assert out["answer"] == "Thursday."


def test_answer_and_query_extraction() -> None:
    assert answer_text({"answer": AIMessage(content="hi")}, "answer") == "hi"
    assert answer_text("plain", "answer") == "plain"
    with pytest.raises(InputError):
        answer_text({"result": "x"}, "answer")
    assert query_text({"question": "q?"}, None) == "q?"
    assert query_text({}, {"input": "from output"}) == "from output"


def test_agent_hook_checks_only_final_answers() -> None:
    from langchain_core.messages import HumanMessage, ToolMessage

    from chains.agent_middleware import GuardrailHook, turn_evidence
    from chains.results import OnFail

    messages = [
        HumanMessage(content="old question"),
        AIMessage(content="old answer", id="a0"),
        HumanMessage(content="When is the meeting with John?"),
        AIMessage(content="", tool_calls=[{"name": "search", "args": {}, "id": "t1"}], id="a1"),
        ToolMessage(
            content="The meeting with John is on Thursday.", tool_call_id="t1", name="search"
        ),
        AIMessage(content="It is on Thursday.", id="a2"),
    ]
    query, passages = turn_evidence(messages[:-1])
    assert query == "When is the meeting with John?"
    assert [p.text for p in passages] == ["The meeting with John is on Thursday."]

    hook = GuardrailHook(Guardrail(ACCEPT_ALL), OnFail.RAISE, None, None)
    assert hook({"messages": messages[:4]}) is None  # a tool call is not checked
    update = hook({"messages": messages})
    assert update is not None
    checked = update["messages"][0]
    assert checked.id == "a2" and checked.content == "It is on Thursday."
    assert checked.additional_kwargs["guardrail_report"]["recommendation"]["action"] == "accept"

    blocking = GuardrailHook(Guardrail({"disabled_stages": list(STAGES)}), OnFail.RAISE, None, None)
    with pytest.raises(GuardrailRejected):
        blocking({"messages": messages})
