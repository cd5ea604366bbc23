"""Regenerate with guidance inside a chain you already have: ``guided(model)`` + ``with_guardrail``.

The chat models are scripted (langchain-core's ``GenericFakeChatModel``, and a model that
answers right only once it is told what to fix); they stand in for Groq / the local model.
The guardrail is real (every stage runs); its verifier is the ``ScriptedVerifier`` test
double, so the wrong answer is confidently contradicted (``regenerate``) and the right one
supported (``accept``) without a model. What each model call received is read from the
callbacks (``on_chat_model_start``), the retrieval queries from a recording retriever.
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain_classic.chains import create_retrieval_chain
from langchain_classic.chains.combine_documents import create_stuff_documents_chain
from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from pydantic import Field

from chains import GuardedAnswer, OnExhausted, guided, with_guardrail
from chains.regenerate import GUIDANCE_KEY, Regeneration, guidance_text
from chains.results import REPORT_KEY
from guardrail.errors import GuardrailRejected
from guardrail.pipeline import Guardrail
from guardrail.report import Action
from guardrail.tracing import FEEDBACK_KEYS, RunTreeCollector
from guardrail.verifiers.scripted import ScriptedVerifier

QUESTION = "Who leads the Atlas project?"
EVIDENCE = "Priya Raman leads the Atlas project. The project started in March."
RIGHT = "Priya Raman leads the Atlas project."
WRONG = "Tom Berg leads the Atlas project."
WRONG_START = "The project started in May."
WRONG_BUDGET = "It has a budget of 4 million euros."
DOCS = [Document(page_content=EVIDENCE, metadata={"source": "atlas.md", "score": 0.8})]
FIX_MARK = "rejected by a fact checker"  # from chains.generation.GUIDANCE_PROMPT


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    verifier = ScriptedVerifier(
        {
            (None, RIGHT): "entailment",
            (None, WRONG): "contradiction",
            (None, WRONG_START): "contradiction",
            (None, WRONG_BUDGET): "contradiction",
        }
    )
    return Guardrail(verifier=verifier)


class RecordingRetriever(BaseRetriever):
    """Returns :data:`DOCS` and records every query it is asked."""

    queries: list[str] = Field(default_factory=list)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.queries.append(query)
        return DOCS


class ModelCalls(BaseCallbackHandler):
    """The messages of every chat model call, in order."""

    def __init__(self) -> None:
        self.calls: list[list[BaseMessage]] = []

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[BaseMessage]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.calls.extend(messages)


class TakesAdvice(BaseChatModel):
    """Answers wrong, unless a system message says the previous answer was rejected."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        told = any(isinstance(m, SystemMessage) and FIX_MARK in m.text for m in messages)
        message = AIMessage(content=RIGHT if told else WRONG)
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def _llm_type(self) -> str:
        return "takes-advice"


def scripted(*answers: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=a) for a in answers]))


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def tutorial_chain(model: Runnable[Any, Any], retriever: BaseRetriever) -> Runnable[Any, Any]:
    """LangChain's tutorial RAG chain (string in, string out), the model wrapped in guided()."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context:\n{context}"), ("human", "{question}")]
    )
    setup = {"context": retriever | format_docs, "question": RunnablePassthrough()}
    return setup | prompt | guided(model) | StrOutputParser()


def retrieval_chain(model: Runnable[Any, Any], retriever: BaseRetriever) -> Runnable[Any, Any]:
    """``create_retrieval_chain`` (dict in, dict out), the model wrapped in guided()."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context:\n{context}"), ("human", "{input}")]
    )
    return create_retrieval_chain(retriever, create_stuff_documents_chain(guided(model), prompt))


def assert_guided_second_call(calls: list[list[BaseMessage]], question: str = QUESTION) -> None:
    """Call 1 is the chain's own prompt; call 2 adds the guidance on the system side only."""
    assert len(calls) == 2
    first, second = calls
    assert not any(FIX_MARK in m.text for m in first)
    assert isinstance(second[0], SystemMessage)
    assert FIX_MARK in second[0].text and WRONG in second[0].text
    assert second[0].text.startswith(first[0].text)  # the chain's system prompt, then guidance
    assert [m.text for m in second[1:]] == [m.text for m in first[1:]]
    assert second[-1].text == question  # the user's question is untouched


# --- the tutorial chain (string input) --------------------------------------------------------


def test_tutorial_chain_regenerates_and_delivers_the_right_answer(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(
        tutorial_chain(scripted(WRONG, RIGHT), retriever),
        guardrail=guard,
        retriever=retriever,
        on_fail="regenerate",
        max_attempts=3,
    )
    calls, collector = ModelCalls(), RunTreeCollector()
    out = safe.invoke(QUESTION, {"callbacks": [calls, collector]})
    assert out == RIGHT
    assert_guided_second_call(calls.calls)
    assert retriever.queries and set(retriever.queries) == {QUESTION}
    # every check was of the user's question
    assert [r.inputs["query"] for r in collector.find("guardrail")] == [QUESTION, QUESTION]


def test_guidance_comes_from_the_config_never_the_input(guard: Guardrail) -> None:
    model = scripted(WRONG, RIGHT)
    retriever = RecordingRetriever()
    safe = with_guardrail(
        tutorial_chain(model, retriever), guard, retriever=retriever, on_fail="regenerate"
    )
    collector = RunTreeCollector()
    safe.invoke(QUESTION, {"callbacks": [collector]})
    root = collector.roots[-1]
    assert root.names() == ["guarded_chain.attempt.1", "guarded_chain.attempt.2"]
    first, second = root.children
    assert first.inputs["input"] == second.inputs["input"] == QUESTION
    chain_runs = [c for c in second.children if c.name != "guardrail"]
    assert chain_runs[0].inputs == {"input": QUESTION}  # the chain itself got the question
    guidance = second.metadata["guardrail_guidance"]
    assert guidance and "Tom Berg" in guidance
    assert "guardrail_guidance" not in first.metadata
    assert (first.metadata["guardrail_attempt"], second.metadata["guardrail_attempt"]) == (1, 2)


def test_outside_a_loop_the_guided_model_is_the_model() -> None:
    model = scripted("plain")
    calls = ModelCalls()
    assert guided(model).invoke("hi", {"callbacks": [calls]}).content == "plain"
    assert [m.type for m in calls.calls[0]] == ["human"]
    told = Regeneration(number=2, rejected="old", guidance="Fix the name.")
    guided(scripted("ok")).invoke(
        [("human", "hi")], {"callbacks": [calls], "configurable": {GUIDANCE_KEY: told}}
    )
    system, human = calls.calls[1]
    assert isinstance(system, SystemMessage) and "Fix the name." in system.text
    assert "<previous_answer>\nold\n</previous_answer>" in system.text
    assert human.text == "hi"


# --- create_retrieval_chain (dict input) -------------------------------------------------------


def test_retrieval_chain_regenerates_and_keeps_its_output_shape(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(
        retrieval_chain(scripted(WRONG, RIGHT), retriever), guard, on_fail="regenerate"
    )
    calls = ModelCalls()
    out = safe.invoke({"input": QUESTION}, {"callbacks": [calls]})
    assert out["answer"] == RIGHT and out["input"] == QUESTION
    assert out["context"] == DOCS
    assert out[REPORT_KEY].action is Action.ACCEPT
    assert_guided_second_call(calls.calls)
    assert retriever.queries == [QUESTION, QUESTION]


async def test_async_is_the_same_loop(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(
        retrieval_chain(scripted(WRONG, RIGHT), retriever), guard, on_fail="regenerate"
    )
    calls = ModelCalls()
    out = await safe.ainvoke({"input": QUESTION}, {"callbacks": [calls]})
    assert out["answer"] == RIGHT
    assert_guided_second_call(calls.calls)
    assert retriever.queries == [QUESTION, QUESTION]

    tutorial_retriever = RecordingRetriever()
    text = with_guardrail(
        tutorial_chain(scripted(WRONG, RIGHT), tutorial_retriever),
        guard,
        retriever=tutorial_retriever,
        on_fail="regenerate",
    )
    assert await text.ainvoke(QUESTION) == RIGHT
    assert set(tutorial_retriever.queries) == {QUESTION}


def test_batch_runs_one_loop_per_input(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(
        tutorial_chain(TakesAdvice(), retriever), guard, retriever=retriever, on_fail="regenerate"
    )
    calls = ModelCalls()
    outs = safe.batch([QUESTION, QUESTION, QUESTION], {"callbacks": [calls]})
    assert outs == [RIGHT, RIGHT, RIGHT]
    assert len(calls.calls) == 6  # each input: a wrong answer, then a guided right one
    assert sum(FIX_MARK in c[0].text for c in calls.calls) == 3
    assert set(retriever.queries) == {QUESTION}
    assert asyncio.run(safe.abatch([QUESTION, QUESTION])) == [RIGHT, RIGHT]


# --- running out -------------------------------------------------------------------------------


def test_exhaustion_raises_with_every_attempt(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(
        retrieval_chain(scripted(WRONG, WRONG, WRONG), retriever),
        guard,
        on_fail="regenerate",
        max_attempts=3,
    )
    with pytest.raises(GuardrailRejected) as info:
        safe.invoke({"input": QUESTION})
    attempts = info.value.attempts
    assert [a.number for a in attempts] == [1, 2, 3]
    assert [a.answer for a in attempts] == [WRONG, WRONG, WRONG]
    assert all(a.report is not None and a.action is Action.REGENERATE for a in attempts)
    assert attempts[0].guidance is None
    assert attempts[1].guidance == guidance_text(attempts[0].report)
    assert attempts[2].guidance == guidance_text(attempts[1].report)
    assert info.value.report is attempts[-1].report
    assert "after 3 attempt" in str(info.value)


def test_exhaustion_can_escalate_as_the_guarded_rag_chain_does(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(
        tutorial_chain(scripted(WRONG, WRONG), retriever),
        guard,
        retriever=retriever,
        on_fail="regenerate",
        max_attempts=2,
        on_exhausted=OnExhausted.HUMAN_REVIEW,
    )
    result = safe.invoke(QUESTION)
    assert isinstance(result, GuardedAnswer)
    assert result.answer is None and result.action is Action.HUMAN_REVIEW
    assert result.escalation is not None and result.escalation.attempts == 2
    assert result.escalation.last_answer == WRONG and result.question == QUESTION
    assert "after 2 attempt" in result.escalation.reason
    assert [a.answer for a in result.attempts] == [WRONG, WRONG]


# --- the top run ------------------------------------------------------------------------------


def test_top_run_shows_the_outcome_and_where_its_feedback_is(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(
        tutorial_chain(scripted(WRONG, RIGHT), retriever),
        guard,
        retriever=retriever,
        on_fail="regenerate",
    )
    collector = RunTreeCollector()
    assert safe.invoke(QUESTION, {"callbacks": [collector]}) == RIGHT
    root = collector.roots[-1]
    assert root.name == "guarded_chain" and root.output == RIGHT
    assert root.metadata["guardrail_on_fail"] == "regenerate"
    outcome = (root.outputs or {})["guardrail"]
    assert outcome["action"] == "accept" and outcome["attempts"] == 2 and outcome["delivered"]
    assert outcome["verdict"] == "VERIFIED"
    assert set(outcome["feedback"]) == set(FEEDBACK_KEYS)
    assert outcome["feedback"]["guardrail.action"] == "accept"
    assert outcome["feedback"]["guardrail.confidence"] == pytest.approx(outcome["confidence"])
    [checked] = root.children[-1].find("guardrail")  # the check of the delivered answer
    assert outcome["feedback_run_id"] == str(checked.id)


def test_top_run_of_a_plain_wrap_shows_the_outcome_too(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(retrieval_chain(scripted(RIGHT), retriever), guard)
    collector = RunTreeCollector()
    safe.invoke({"input": QUESTION}, {"callbacks": [collector]})
    root = collector.roots[-1]
    assert root.output["answer"] == RIGHT
    assert (root.outputs or {})["guardrail"]["action"] == "accept"
    assert root.names()[-1] == "guardrail"  # no loop: no attempt runs


# --- corrected / annotated never deliver nothing -----------------------------------------------


@pytest.mark.parametrize("on_fail", ["corrected", "annotated"])
def test_nothing_left_to_show_raises(guard: Guardrail, on_fail: str) -> None:
    retriever = RecordingRetriever()
    safe = with_guardrail(retrieval_chain(scripted(WRONG), retriever), guard, on_fail=on_fail)
    with pytest.raises(GuardrailRejected, match="nothing checked is left to show") as info:
        safe.invoke({"input": QUESTION})
    assert not getattr(info.value.report, on_fail).strip()


@pytest.mark.parametrize("on_fail", ["corrected", "annotated"])
def test_what_is_left_after_removals_is_delivered(on_fail: str) -> None:
    cancelled = "The project was cancelled."  # contradicted, and nothing to repair it from
    guard = Guardrail(
        verifier=ScriptedVerifier(
            {
                (None, RIGHT): "entailment",
                (None, cancelled): "contradiction",
                (None, WRONG_BUDGET): "contradiction",
            }
        )
    )
    retriever = RecordingRetriever()
    answer = f"{RIGHT} {cancelled} {WRONG_BUDGET}"  # two of three claims contradicted
    safe = with_guardrail(retrieval_chain(scripted(answer), retriever), guard, on_fail=on_fail)
    out = safe.invoke({"input": QUESTION})
    assert out[REPORT_KEY].action is Action.HUMAN_REVIEW
    assert out["answer"] == RIGHT


def test_a_value_the_evidence_states_is_repaired_in_the_delivered_answer(guard: Guardrail) -> None:
    retriever = RecordingRetriever()
    answer = f"{RIGHT} {WRONG_START}"  # the month is the evidence's sentence but for one word
    safe = with_guardrail(retrieval_chain(scripted(answer), retriever), guard, on_fail="corrected")
    out = safe.invoke({"input": QUESTION})
    report = out[REPORT_KEY]
    assert report.action is Action.CORRECT_AND_DELIVER
    assert out["answer"] == f"{RIGHT} The project started in March."
    [fix] = [c for c in report.corrections if c.verified]
    assert (fix.original, fix.replacement) == ("May", "March")


class StubClient:
    """What ``LangChainTracer`` sends to LangSmith, kept in memory (no network)."""

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}

    def create_run(self, **run: Any) -> None:
        self.runs.setdefault(str(run["id"]), {}).update(run)

    def update_run(self, run_id: Any, **run: Any) -> None:
        self.runs.setdefault(str(run_id), {}).update(run)

    def flush(self) -> None:
        pass


def test_a_real_tracer_and_collect_runs_see_the_outcome_on_the_top_run(guard: Guardrail) -> None:
    from langchain_core.tracers import LangChainTracer
    from langchain_core.tracers.context import collect_runs

    retriever = RecordingRetriever()
    safe = with_guardrail(
        tutorial_chain(scripted(WRONG, RIGHT, WRONG, RIGHT), retriever),
        guard,
        retriever=retriever,
        on_fail="regenerate",
    )
    client = StubClient()
    tracer = LangChainTracer(client=client, project_name="guardrail-tests")  # type: ignore[arg-type]
    assert safe.invoke(QUESTION, {"callbacks": [tracer]}) == RIGHT
    tracer.wait_for_futures()
    [top] = [r for r in client.runs.values() if r.get("parent_run_id") is None]
    assert top["name"] == "guarded_chain"
    assert top["outputs"]["output"] == RIGHT
    assert top["outputs"]["guardrail"]["action"] == "accept"
    attempts = sorted(
        (r for r in client.runs.values() if str(r.get("parent_run_id")) == str(top["id"])),
        key=lambda r: r["dotted_order"],
    )
    assert [r["name"] for r in attempts] == ["guarded_chain.attempt.1", "guarded_chain.attempt.2"]
    assert "Tom Berg" in attempts[1]["extra"]["metadata"]["guardrail_guidance"]
    feedback_run = client.runs[top["outputs"]["guardrail"]["feedback_run_id"]]
    assert feedback_run["name"] == "guardrail"

    with collect_runs() as runs:
        safe.invoke(QUESTION)
    outputs = runs.traced_runs[0].outputs or {}
    assert outputs["output"] == RIGHT and outputs["guardrail"]["action"] == "accept"


def test_the_report_on_a_message_is_one_call_away(guard: Guardrail) -> None:
    from chains import report_of

    report = guard.invoke({"query": QUESTION, "response": RIGHT, "passages": DOCS})
    message = AIMessage(
        content=RIGHT, additional_kwargs={REPORT_KEY: report.model_dump(mode="json")}
    )
    assert report_of(message) == report
    assert report_of({"answer": RIGHT, REPORT_KEY: report}) is report
    assert report_of(AIMessage(content="unchecked")) is None


def test_guarded_rag_and_a_wrapped_chain_escalate_alike(guard: Guardrail) -> None:
    from chains import GuardedRAG

    rag = GuardedRAG(RecordingRetriever(), scripted(WRONG, WRONG), guardrail=guard, max_attempts=2)
    ours = rag.invoke(QUESTION)
    retriever = RecordingRetriever()
    wrapped = with_guardrail(
        tutorial_chain(scripted(WRONG, WRONG), retriever),
        guard,
        retriever=retriever,
        on_fail="regenerate",
        max_attempts=2,
        on_exhausted="human_review",
    ).invoke(QUESTION)
    assert ours.escalation is not None and wrapped.escalation is not None
    assert wrapped.escalation.reason == ours.escalation.reason
    assert [a.guidance for a in wrapped.attempts] == [a.guidance for a in ours.attempts]


def test_the_example_runs_offline(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    """``examples/regenerate_existing_chain.py`` end to end, its models faked at the boundary
    (the scripted verifier, a fixed retriever); the integration tier runs it for real."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "regenerate_existing_chain.py"
    spec = importlib.util.spec_from_file_location("regenerate_existing_chain", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    wrong, right = example.SCRIPT
    evidence = "Atlas is the billing migration. It is led by John Smith."
    docs = [Document(page_content=evidence, metadata={"source": "projects.md", "score": 0.8})]

    class Index:
        @classmethod
        def from_paths(cls, paths: Any) -> Index:
            return cls()

        def as_retriever(self, k: int) -> Any:
            return RunnableLambda(lambda q: docs)

    verifier = ScriptedVerifier({(None, right): "entailment", (None, wrong): "contradiction"})
    monkeypatch.setattr(example, "PassageIndex", Index)
    monkeypatch.setattr(example, "Guardrail", lambda: Guardrail(verifier=verifier))
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.setattr("sys.argv", ["regenerate_existing_chain.py"])
    assert example.main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"guarded_chain.attempt.1: {wrong!r} -> regenerate"
    assert "quoting the rejected answer: True" in lines[2]
    assert lines[3] == f"guarded_chain.attempt.2: {right!r} -> accept"
    assert lines[-1] == f"delivered: {right}"


def test_human_review_ends_the_loop_at_once() -> None:
    from guardrail.errors import ConfigError
    from tests.stage_names import STAGES

    unchecked = Guardrail({"disabled_stages": list(STAGES)})  # fail-closed: human_review
    retriever = RecordingRetriever()
    app = tutorial_chain(scripted(RIGHT, "a second answer that must not be asked for"), retriever)
    safe = with_guardrail(
        app, unchecked, retriever=retriever, on_fail="regenerate", on_exhausted="human_review"
    )
    result = safe.invoke(QUESTION)
    assert isinstance(result, GuardedAnswer) and len(result.attempts) == 1
    assert result.escalation is not None
    assert "Could not check the answer" in result.escalation.reason
    with pytest.raises(GuardrailRejected) as info:
        with_guardrail(app, unchecked, retriever=retriever, on_fail="regenerate").invoke(QUESTION)
    assert len(info.value.attempts) == 1
    with pytest.raises(ConfigError):
        with_guardrail(app, unchecked, on_fail="regenerate", max_attempts=0)
    with pytest.raises(ValueError):
        with_guardrail(app, unchecked, on_fail="regenerate", on_exhausted="shrug")


def test_an_empty_answer_is_regenerated(guard: Guardrail) -> None:
    from chains.regenerate import EMPTY_ANSWER_GUIDANCE

    retriever = RecordingRetriever()
    safe = with_guardrail(
        retrieval_chain(scripted(" ", RIGHT), retriever), guard, on_fail="regenerate"
    )
    calls = ModelCalls()
    out = safe.invoke({"input": QUESTION}, {"callbacks": [calls]})
    assert out["answer"] == RIGHT
    assert EMPTY_ANSWER_GUIDANCE in calls.calls[1][0].text


async def test_a_guided_chain_still_streams(guard: Guardrail) -> None:
    from guardrail.report import GuardReport

    retriever = RecordingRetriever()
    safe = with_guardrail(tutorial_chain(scripted(RIGHT), retriever), guard, retriever=retriever)
    chunks = list(safe.stream(QUESTION))
    text = [c for c in chunks if isinstance(c, str)]
    assert len(text) > 1 and "".join(text) == RIGHT  # token by token through guided()
    assert isinstance(chunks[-1], GuardReport) and chunks[-1].action is Action.ACCEPT
    again = with_guardrail(tutorial_chain(scripted(RIGHT), retriever), guard, retriever=retriever)
    achunks = [c async for c in again.astream(QUESTION)]
    assert "".join(c for c in achunks if isinstance(c, str)) == RIGHT
