"""Every face delivers what ``Guardrail.invoke`` delivers.

One answer of four sentences — two supported, one confidently contradicted (removed), one
uncertain (annotated) — goes through the guarded RAG loop, ``with_guardrail``, the LangChain v1
agent middleware, the LlamaIndex query engine and the streaming guard. Each must show exactly
``Guardrail.invoke(...).delivered_text`` for the same input, and the streaming guard's final
report must be invoke's report.

The guardrail is real (every stage runs); its verifier is the ``ScriptedVerifier`` test double,
so the claim outcomes are exact and need no model. The LLMs are langchain-core's fake chat
models (standing in for Groq / the local model).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from chains.guarded_rag import GuardedRAG
from chains.middleware import REPORT_KEY, with_guardrail
from chains.results import GuardedAnswer
from chains.stream_checks import SentenceCheck
from chains.streaming import SentenceGuard
from guardrail.decision.outcomes import UNCERTAIN_NOTE
from guardrail.inputs import Passage
from guardrail.pipeline import Guardrail
from guardrail.report import Action, ClaimOutcome, GuardReport
from guardrail.verifiers.scripted import ScriptedVerifier

QUESTION = "What is AlphaCodium?"
EVIDENCE = (
    "AlphaCodium is a code generation method developed by CodiumAI. "
    "It uses a multi-stage iterative flow that runs generated code against tests."
)
SUPPORTED_1 = "AlphaCodium is a code generation method developed by CodiumAI."
REMOVED = "It was acquired by Google in 2024."
UNCERTAIN = "The flow is slower than direct prompting."
SUPPORTED_2 = "It uses a multi-stage iterative flow."
MIXED = f"{SUPPORTED_1} {REMOVED} {UNCERTAIN} {SUPPORTED_2}"  # correct_and_deliver
FLAGGED = f"{SUPPORTED_1} {UNCERTAIN} {SUPPORTED_2}"  # accept_with_flags
CLEAN = f"{SUPPORTED_1} {SUPPORTED_2}"  # accept
NOTE = f" [{UNCERTAIN_NOTE}]"
DOCS = [Document(page_content=EVIDENCE, metadata={"source": "alphacodium.md", "score": 0.7})]
PASSAGES = [Passage.coerce(d) for d in DOCS]
RETRIEVER: RunnableLambda[str, list[Document]] = RunnableLambda(lambda q: DOCS)
ANSWERS = {"correct_and_deliver": MIXED, "accept_with_flags": FLAGGED, "accept": CLEAN}


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    verifier = ScriptedVerifier(
        {
            (None, SUPPORTED_1): "entailment",
            (None, SUPPORTED_2): "entailment",
            (None, UNCERTAIN): (0.45, 0.5, 0.05),  # p_supported between remove_below and T
            (None, REMOVED): "contradiction",
        }
    )
    return Guardrail(verifier=verifier)


def invoked(guard: Guardrail, answer: str) -> GuardReport:
    return guard.invoke({"query": QUESTION, "response": answer, "passages": PASSAGES})


def comparable(report: GuardReport) -> dict[str, Any]:
    """The report without what differs between two runs of one check (timings)."""
    data = report.model_dump(mode="json", exclude={"timings_ms"})
    for stage in data["stages"]:
        stage.pop("duration_ms")
    return data


def words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + " " for p in parts[:-1]] + [parts[-1]]


def test_the_scenario_is_one_removal_and_one_annotation(guard: Guardrail) -> None:
    report = invoked(guard, MIXED)
    assert report.action is Action.CORRECT_AND_DELIVER
    assert [c.outcome for c in report.claims] == [
        ClaimOutcome.SUPPORTED, ClaimOutcome.REMOVED, ClaimOutcome.UNCERTAIN,
        ClaimOutcome.SUPPORTED,
    ]  # fmt: skip
    delivered = report.delivered_text or ""
    assert REMOVED not in delivered and "Google" not in delivered
    assert f"{UNCERTAIN.removesuffix('.')}{NOTE}." in delivered
    assert delivered == f"{SUPPORTED_1} {UNCERTAIN.removesuffix('.')}{NOTE}. {SUPPORTED_2}"
    assert invoked(guard, FLAGGED).action is Action.ACCEPT_WITH_FLAGS
    assert invoked(guard, CLEAN).action is Action.ACCEPT


# --- the guarded RAG loop ------------------------------------------------------------------


@pytest.mark.parametrize("action", list(ANSWERS))
def test_rag_loop_delivers_without_regenerating(guard: Guardrail, action: str) -> None:
    """correct_and_deliver and accept_with_flags are delivered (invoke's text), not regenerated."""
    answer = ANSWERS[action]
    llm = FakeListChatModel(responses=[answer, "a second answer that must not be asked for"])
    result = GuardedRAG(RETRIEVER, llm, guardrail=guard, max_attempts=3).invoke(QUESTION)
    assert result.action.value == action and len(result.attempts) == 1
    assert result.answer == invoked(guard, answer).delivered_text


def test_rag_loop_regenerates_only_on_regenerate(guard: Guardrail) -> None:
    llm = FakeListChatModel(responses=[REMOVED, MIXED])  # a one-sentence wrong answer first
    result = GuardedRAG(RETRIEVER, llm, guardrail=guard, max_attempts=3).invoke(QUESTION)
    assert [a.action for a in result.attempts] == [Action.REGENERATE, Action.CORRECT_AND_DELIVER]
    assert result.attempts[1].guidance and REMOVED in result.attempts[1].guidance
    assert result.answer == invoked(guard, MIXED).delivered_text


def test_rag_loop_escalates_human_review_at_once(guard: Guardrail) -> None:
    llm = FakeListChatModel(responses=[MIXED, MIXED])
    rag = GuardedRAG(RETRIEVER, llm, guardrail=guard, max_attempts=3)
    result = rag.invoke({"question": QUESTION, "passages": []})  # no evidence: fail-closed
    assert result.action is Action.HUMAN_REVIEW and result.answer is None
    assert len(result.attempts) == 1 and result.escalation is not None
    assert result.attempts[0].action is Action.HUMAN_REVIEW


@pytest.mark.parametrize("final_check", [True, False])
def test_rag_stream_ends_with_invokes_delivered_text(guard: Guardrail, final_check: bool) -> None:
    llm = FakeListChatModel(responses=[MIXED, "must not be asked for"])
    streaming = {"policy": "annotate", "final_check": final_check}
    rag = GuardedRAG(RETRIEVER, llm, guardrail=guard, streaming=streaming)
    chunks = list(rag.stream(QUESTION))
    result = chunks[-1]
    assert isinstance(result, GuardedAnswer) and len(result.attempts) == 1
    # final_check off used to leave the attempt without a report: "empty", regenerated
    assert result.action is Action.CORRECT_AND_DELIVER
    assert result.answer == invoked(guard, MIXED).delivered_text


async def test_rag_astream_without_final_check_still_decides(guard: Guardrail) -> None:
    llm = FakeListChatModel(responses=[FLAGGED, "must not be asked for"])
    streaming = {"policy": "buffer", "final_check": False}
    rag = GuardedRAG(RETRIEVER, llm, guardrail=guard, streaming=streaming)
    chunks = [c async for c in rag.astream(QUESTION)]
    result = chunks[-1]
    assert isinstance(result, GuardedAnswer) and len(result.attempts) == 1
    assert result.action is Action.ACCEPT_WITH_FLAGS
    assert result.answer == invoked(guard, FLAGGED).delivered_text


# --- with_guardrail, the agent middleware, LlamaIndex ---------------------------------------


@pytest.mark.parametrize("action", list(ANSWERS))
def test_with_guardrail_delivers_invokes_text(guard: Guardrail, action: str) -> None:
    answer = ANSWERS[action]
    expected = invoked(guard, answer).delivered_text
    chain = (
        ChatPromptTemplate.from_messages([("human", "{input}")])
        | FakeListChatModel(responses=[answer])
        | StrOutputParser()
    )
    out = with_guardrail(chain, guard, retriever=RETRIEVER).invoke({"input": QUESTION})
    assert out == expected

    from langchain_classic.chains import create_retrieval_chain
    from langchain_classic.chains.combine_documents import create_stuff_documents_chain

    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context:\n{context}"), ("human", "{input}")]
    )
    combine = create_stuff_documents_chain(FakeListChatModel(responses=[answer]), prompt)
    rag = create_retrieval_chain(RETRIEVER, combine)
    out = with_guardrail(rag, guard).invoke({"input": QUESTION})
    assert out["answer"] == expected and out[REPORT_KEY].delivered_text == expected


@pytest.mark.parametrize("action", list(ANSWERS))
def test_agent_middleware_delivers_invokes_text(guard: Guardrail, action: str) -> None:
    pytest.importorskip("langchain.agents", reason="needs langchain v1")
    from langchain.agents import create_agent

    from chains.agent_middleware import guardrail_middleware

    answer = ANSWERS[action]
    model = GenericFakeChatModel(messages=iter([AIMessage(content=answer)]))
    middleware = guardrail_middleware(guard, retriever=RETRIEVER)
    agent = create_agent(model, tools=[], middleware=[middleware])
    out = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]})
    assert out["messages"][-1].content == invoked(guard, answer).delivered_text


@pytest.mark.parametrize("action", list(ANSWERS))
def test_llama_index_engine_delivers_invokes_text(guard: Guardrail, action: str) -> None:
    pytest.importorskip("llama_index.core", reason="needs the llama-index extra")
    from llama_index.core.base.response.schema import Response
    from llama_index.core.query_engine import CustomQueryEngine
    from llama_index.core.schema import NodeWithScore, TextNode

    from guardrail.integrations.llama_index import GuardedQueryEngine, GuardrailEvaluator

    answer = ANSWERS[action]
    node = NodeWithScore(
        node=TextNode(text=EVIDENCE, metadata={"file_name": "alphacodium.md"}), score=0.7
    )

    class Engine(CustomQueryEngine):
        def custom_query(self, query_str: str) -> Response:
            return Response(response=answer, source_nodes=[node])

    out = GuardedQueryEngine.wrap(Engine(), guard).query(QUESTION)
    assert isinstance(out, Response)
    expected = guard.invoke(
        {"query": QUESTION, "response": answer,
         "passages": [{"text": EVIDENCE, "score": 0.7, "source": "alphacodium.md"}]}
    ).delivered_text  # fmt: skip
    assert out.response == expected
    result = GuardrailEvaluator(guard).evaluate(
        query=QUESTION, response=answer, contexts=[EVIDENCE]
    )
    assert result.passing is True and result.report is not None
    assert (
        result.report.delivered_text
        == guard.invoke(
            {"query": QUESTION, "response": answer, "passages": [EVIDENCE]}
        ).delivered_text
    )


# --- the streaming guard ---------------------------------------------------------------------


def stream(guard: Guardrail, answer: str, policy: str) -> tuple[str, list[SentenceCheck], Any]:
    sg = SentenceGuard(guard, {"query": QUESTION, "passages": PASSAGES}, policy)
    items: list[Any] = []
    for token in words(answer):
        items += list(sg.feed(token))
        if sg.stopped:
            break
    items += list(sg.close())
    text = "".join(i for i in items if isinstance(i, str))
    assert isinstance(items[-1], GuardReport) and items[-1] is sg.final_report
    return text, [i for i in items if isinstance(i, SentenceCheck)], sg


@pytest.mark.parametrize("policy", ["annotate", "buffer", "stop"])
def test_stream_final_report_is_invokes_report(guard: Guardrail, policy: str) -> None:
    _, _, sg = stream(guard, MIXED, policy)
    expected = invoked(guard, sg.answer)  # under stop: the answer as cut
    assert comparable(sg.final_report) == comparable(expected)
    assert sg.delivered_text == expected.delivered_text == sg.final_report.delivered_text


def test_stream_sentences_follow_the_claim_outcomes(guard: Guardrail) -> None:
    text, checks, _ = stream(guard, MIXED, "annotate")
    assert [c.text for c in checks] == [SUPPORTED_1, REMOVED, UNCERTAIN, SUPPORTED_2]
    assert [c.status for c in checks] == ["supported", "failed", "uncertain", "supported"]
    assert [c.passed for c in checks] == [True, False, True, True]  # uncertain is shown
    assert checks[1].claims[0].outcome is ClaimOutcome.REMOVED
    assert checks[2].claims[0].outcome is ClaimOutcome.UNCERTAIN
    assert checks[2].note == UNCERTAIN_NOTE  # the label invoke writes for it
    assert text == (
        f"{SUPPORTED_1} {REMOVED} [fact check: contradicted by the evidence] "
        f"{UNCERTAIN}{NOTE} {SUPPORTED_2}"
    )


def test_buffer_withholds_the_removed_sentence_and_notes_the_uncertain_one(
    guard: Guardrail,
) -> None:
    text, _, sg = stream(guard, MIXED, "buffer")
    assert REMOVED not in text and "Google" not in text
    withheld = "[A sentence was withheld by the fact checker: contradicted by the evidence]"
    note_placed = f"{UNCERTAIN.removesuffix('.')}{NOTE}."  # where invoke places the note
    assert text == f"{SUPPORTED_1} {withheld} {note_placed} {SUPPORTED_2}"
    assert note_placed in (sg.delivered_text or "")


def test_stop_does_not_stop_on_an_uncertain_sentence(guard: Guardrail) -> None:
    text, checks, sg = stream(guard, FLAGGED, "stop")
    assert [c.passed for c in checks] == [True, True, True] and not sg.stopped
    assert text == f"{SUPPORTED_1} {UNCERTAIN}{NOTE} {SUPPORTED_2}"
    assert sg.delivered_text == invoked(guard, FLAGGED).delivered_text
    text, checks, sg = stream(guard, MIXED, "stop")
    assert sg.stopped and [c.passed for c in checks] == [True, False]
    assert sg.answer == f"{SUPPORTED_1} {REMOVED}" and UNCERTAIN not in text


def test_wrapped_streams_end_with_invokes_report(guard: Guardrail) -> None:
    chain = (
        ChatPromptTemplate.from_messages([("human", "{input}")])
        | GenericFakeChatModel(messages=iter([AIMessage(content=MIXED)]))
        | StrOutputParser()
    )
    safe = with_guardrail(chain, guard, retriever=RETRIEVER, streaming="buffer")
    chunks = list(safe.stream({"input": QUESTION}))
    report = chunks[-1]
    assert isinstance(report, GuardReport)
    assert comparable(report) == comparable(invoked(guard, MIXED))
    assert report.delivered_text == invoked(guard, MIXED).delivered_text


def test_agent_stream_ends_with_invokes_report(guard: Guardrail) -> None:
    pytest.importorskip("langchain.agents", reason="needs langchain v1")
    from langchain.agents import create_agent

    from chains.agent_middleware import guard_agent

    model = GenericFakeChatModel(messages=iter([AIMessage(content=MIXED)]))
    guarded = guard_agent(create_agent(model, tools=[]), guard, "annotate", retriever=RETRIEVER)
    items = list(guarded.stream({"messages": [{"role": "user", "content": QUESTION}]}))
    report = items[-1]
    assert isinstance(report, GuardReport) and report.original == MIXED
    assert comparable(report) == comparable(invoked(guard, MIXED))
