"""The agent middleware's regenerate loop and its pause for a person, in real ``create_agent``
graphs.

The chat model is a scripted tool-calling fake (it stands in for Groq) that records what each
call was sent; the tool is a lookup returning the office calendar. The guardrail is real —
spaCy, the embedder and the decision — with a ``ScriptedVerifier``: the wrong answer's claim is
contradicted by the evidence, the right one entailed; the decision follows from that.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from pydantic import Field

from chains.agent_middleware import guardrail_middleware, report_of
from chains.regenerate import Regeneration, guidance_text
from chains.results import Attempt, OnFail
from guardrail.errors import ConfigError, GuardrailRejected, InputError
from guardrail.report import ClaimStatus, GuardReport
from guardrail.tracing import RunTreeCollector
from tests.reliability_strategies import guard_with

pytest.importorskip(
    "langchain.agents", reason="needs langchain v1: pip install 'answer-guardrail[chains]'"
)
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

EVIDENCE = "The project review meeting with John Smith is on Thursday at 10:00 in room 4B."
QUESTION = "Where is the project review meeting with John Smith?"
WRONG = "The project review meeting with John Smith is in room 9C."
RIGHT = "The project review meeting with John Smith is in room 4B."
SUPPORTED = "The project review meeting with John Smith is on Thursday at 10:00."


class ScriptedToolModel(GenericFakeChatModel):
    """A scripted chat model that can call tools and records the messages of every call."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def lookup(query: str) -> str:
    """Look up the office calendar."""
    return EVIDENCE


def call_lookup(n: int = 1) -> AIMessage:
    call = {"name": "lookup", "args": {"query": "project review"}, "id": f"call-{n}"}
    return AIMessage(content="", tool_calls=[call])


def model(*replies: AIMessage | str) -> ScriptedToolModel:
    script = [r if isinstance(r, AIMessage) else AIMessage(content=r) for r in replies]
    return ScriptedToolModel(messages=iter(script))


@pytest.fixture(scope="module")
def checker() -> Any:
    """The real guardrail; the verifier says the wrong answer is contradicted, the right one
    entailed (and any other pair neutral)."""
    from guardrail.verifiers.scripted import ScriptedVerifier

    verifier = ScriptedVerifier(
        {
            (None, WRONG): "contradiction",
            (None, RIGHT): "entailment",
            (None, SUPPORTED): "entailment",
        }
    )
    return guard_with(verifier)


def ask(text: str = QUESTION) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def same(a: GuardReport, b: GuardReport) -> bool:
    skip = {"timings_ms", "stages"}
    return a.model_dump(exclude=skip) == b.model_dump(exclude=skip)


def system_text(messages: list[BaseMessage]) -> str:
    return "\n".join(m.text for m in messages if isinstance(m, SystemMessage))


# --- regenerate within one invoke ---------------------------------------------------------


def test_one_invoke_regenerates_with_guidance_and_delivers_the_right_answer(checker: Any) -> None:
    llm = model(call_lookup(), WRONG, RIGHT)
    middleware = guardrail_middleware(checker, on_fail="regenerate", max_attempts=3)
    agent = create_agent(llm, tools=[lookup], middleware=[middleware])
    out = agent.invoke(ask())

    last = out["messages"][-1]
    assert last.content == RIGHT
    assert [type(m).__name__ for m in out["messages"]] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage",
    ]  # fmt: skip
    assert all(m.text != WRONG for m in out["messages"])  # the rejected answer is gone
    # the second answer's model call saw the guidance and the rejected answer; the first did not
    assert len(llm.seen) == 3
    assert "rejected by a fact checker" not in system_text(llm.seen[1])
    guided = system_text(llm.seen[2])
    assert "rejected by a fact checker" in guided and WRONG in guided
    # the regenerated answer is checked against the turn's tool result
    report = report_of(last)
    assert report is not None and report.original == RIGHT
    assert report == GuardReport.model_validate(last.additional_kwargs["guardrail_report"])
    assert report.claims[0].status is ClaimStatus.SUPPORTED
    assert out["guardrail"] == {
        "action": report.action.value,
        "verdict": report.verdict.label.value,
        "confidence": report.confidence,
        "attempts": 2,
    }
    assert report.action.value in ("accept", "accept_with_flags")


def test_a_regeneration_may_look_things_up_again(checker: Any) -> None:
    """Every model call of a regeneration has the guidance, until its answer is checked; the
    new lookup joins the turn's evidence."""
    llm = model(call_lookup(1), WRONG, call_lookup(2), RIGHT)
    middleware = guardrail_middleware(checker, on_fail="regenerate")
    out = create_agent(llm, tools=[lookup], middleware=[middleware]).invoke(ask())
    assert out["messages"][-1].content == RIGHT and out["guardrail"]["attempts"] == 2
    assert [WRONG in system_text(s) for s in llm.seen] == [False, False, True, True]
    assert sum(isinstance(m, ToolMessage) for m in out["messages"]) == 2
    assert all(m.text != WRONG for m in out["messages"])


async def test_ainvoke_regenerates_the_same_way(checker: Any) -> None:
    llm = model(call_lookup(), WRONG, RIGHT)
    middleware = guardrail_middleware(checker, on_fail=OnFail.REGENERATE)  # the enum works too
    out = await create_agent(llm, tools=[lookup], middleware=[middleware]).ainvoke(ask())
    assert out["messages"][-1].content == RIGHT and out["guardrail"]["attempts"] == 2
    assert WRONG in system_text(llm.seen[2])


def test_exhausted_regeneration_raises_with_every_attempt(checker: Any) -> None:
    llm = model(call_lookup(), WRONG, WRONG)
    middleware = guardrail_middleware(checker, on_fail="regenerate", max_attempts=2)
    agent = create_agent(llm, tools=[lookup], middleware=[middleware])
    collector = RunTreeCollector()
    with pytest.raises(GuardrailRejected) as caught:
        agent.invoke(ask(), {"callbacks": [collector]})
    attempts = caught.value.attempts
    assert all(isinstance(a, Attempt) for a in attempts)
    assert [a.number for a in attempts] == [1, 2] and [a.answer for a in attempts] == [WRONG] * 2
    assert all(a.action.value == "regenerate" for a in attempts)
    assert len(llm.seen) == 3  # the tool call and two answers: no third answer
    # the error every guarded chain raises when its loop runs out (chains.regenerate.rejection)
    assert str(caught.value).startswith(
        "the guardrail rejected every answer: No acceptable answer after 2 attempt(s)"
    )
    # the last report is carried whole; an earlier one is named by the check run it came from
    [root] = collector.roots
    checks = root.find("guardrail")
    assert [a.run_id for a in attempts] == [str(c.id) for c in checks]
    first, last = (c.output for c in checks)
    assert caught.value.report is attempts[1].report and attempts[1].report is not None
    assert same(attempts[1].report, last) and attempts[0].report is None
    assert attempts[0].guidance is None and attempts[1].guidance == guidance_text(first)


def test_the_guidance_is_for_that_question_only(checker: Any) -> None:
    """A later turn of the same thread is prompted as usual (nothing left over)."""
    llm = model(call_lookup(), WRONG, RIGHT, call_lookup(2), RIGHT)
    middleware = guardrail_middleware(checker, on_fail="regenerate")
    agent = create_agent(llm, tools=[lookup], middleware=[middleware], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    agent.invoke(ask(), config)
    out = agent.invoke(ask("And where is it again?"), config)
    assert out["messages"][-1].content == RIGHT and out["guardrail"]["attempts"] == 1
    assert all("rejected by a fact checker" not in system_text(s) for s in llm.seen[3:])


def test_an_unchecked_turn_shows_no_outcome_of_an_earlier_one(checker: Any) -> None:
    llm = model(call_lookup(), RIGHT, "")
    middleware = guardrail_middleware(checker, on_fail="regenerate")
    agent = create_agent(llm, tools=[lookup], middleware=[middleware], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "empty"}}
    assert agent.invoke(ask(), config)["guardrail"]["action"] == "accept"
    out = agent.invoke(ask("Thanks!"), config)  # the model answers nothing: nothing to check
    assert out["messages"][-1].content == "" and out.get("guardrail") is None


def test_a_follow_up_may_rest_on_an_earlier_turns_evidence(checker: Any) -> None:
    """A follow-up answered without a new lookup has no evidence of its own (``turn``: sent
    to a person); with ``evidence="thread"`` the first turn's tool result is its evidence."""
    for evidence, expected in (("turn", "human_review"), ("thread", "accept")):
        llm = model(call_lookup(), RIGHT, RIGHT)
        middleware = guardrail_middleware(checker, on_fail="report", evidence=evidence)
        agent = create_agent(
            llm, tools=[lookup], middleware=[middleware], checkpointer=InMemorySaver()
        )
        config: Any = {"configurable": {"thread_id": evidence}}
        agent.invoke(ask(), config)
        out = agent.invoke(ask("Remind me: where is it?"), config)
        assert out["guardrail"]["action"].startswith(expected), evidence


# --- a person's review as a pause -----------------------------------------------------------


def review_agent(checker: Any, *replies: AIMessage | str, **options: Any) -> Any:
    middleware = guardrail_middleware(checker, human_review="interrupt", **options)
    return create_agent(
        model(*replies), tools=[lookup], middleware=[middleware], checkpointer=InMemorySaver()
    )


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ({"type": "approve"}, RIGHT),
        ({"type": "edit", "text": "It is in room 4B, second floor."}, "It is in room 4B, second floor."),
        ({"type": "reject", "message": "Please ask the office."}, "Please ask the office."),
    ],
)  # fmt: skip
def test_an_answer_without_evidence_pauses_for_a_person(
    checker: Any, decision: dict[str, str], expected: str
) -> None:
    agent = review_agent(checker, RIGHT)  # answers at once: no tool call, no evidence
    config: Any = {"configurable": {"thread_id": decision["type"]}}
    paused = agent.invoke(ask(), config)

    [pause] = paused["__interrupt__"]
    value = pause.value
    assert value["action"] == "human_review" and value["question"] == QUESTION
    assert value["answer"] == RIGHT and value["reasons"] and value["attempts"] == 1
    report = GuardReport.model_validate(value["report"])  # the report, as JSON
    assert report.original == RIGHT and report.action.value == "human_review"
    assert set(value["decisions"]) == {"approve", "edit", "reject"}

    out = agent.invoke(Command(resume=decision), config)
    last = out["messages"][-1]
    assert last.content == expected and "__interrupt__" not in out
    assert last.additional_kwargs["guardrail_review"] == decision["type"]
    again = report_of(last)  # the node ran again on resume: the same report, new timings
    assert again is not None and same(again, report)
    assert out["guardrail"]["review"] == decision["type"]
    assert len(out["messages"]) == 2  # the answer was replaced, not appended


def test_exhausted_regeneration_pauses_with_every_reason(checker: Any) -> None:
    agent = review_agent(checker, call_lookup(), WRONG, WRONG, on_fail="regenerate", max_attempts=2)
    config: Any = {"configurable": {"thread_id": "exhausted"}}
    value = agent.invoke(ask(), config)["__interrupt__"][0].value
    assert value["action"] == "regenerate" and value["answer"] == WRONG
    assert value["attempts"] == 2
    assert value["reasons"][0] == "no acceptable answer after 2 attempt(s)"
    out = agent.invoke(Command(resume={"type": "reject"}), config)
    assert out["messages"][-1].content.startswith("I can't give a checked answer")
    assert [m.text for m in out["messages"] if isinstance(m, ToolMessage)] == [EVIDENCE]


async def test_the_async_agent_pauses_and_resumes(checker: Any) -> None:
    agent = review_agent(checker, RIGHT)
    config: Any = {"configurable": {"thread_id": "async"}}
    paused = await agent.ainvoke(ask(), config)
    assert paused["__interrupt__"][0].value["action"] == "human_review"
    out = await agent.ainvoke(Command(resume={"type": "edit", "text": "Room 4B."}), config)
    assert out["messages"][-1].content == "Room 4B."


def test_a_new_question_after_a_failed_one_starts_afresh(checker: Any) -> None:
    """An exhausted loop raised mid-thread; the thread's next question is attempt 1 again,
    prompted without the old guidance."""
    llm = model(call_lookup(), WRONG, WRONG, call_lookup(2), RIGHT)
    middleware = guardrail_middleware(checker, on_fail="regenerate", max_attempts=2)
    agent = create_agent(llm, tools=[lookup], middleware=[middleware], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "afresh"}}
    with pytest.raises(GuardrailRejected):
        agent.invoke(ask(), config)
    out = agent.invoke(ask("Where is the review, then?"), config)
    assert out["messages"][-1].content == RIGHT and out["guardrail"]["attempts"] == 1
    assert all("rejected by a fact checker" not in system_text(s) for s in llm.seen[3:])


def test_a_bad_decision_is_a_clear_error(checker: Any) -> None:
    agent = review_agent(checker, RIGHT)
    config: Any = {"configurable": {"thread_id": "bad"}}
    agent.invoke(ask(), config)
    with pytest.raises(InputError, match='"type": "approve"'):
        agent.invoke(Command(resume={"type": "accept"}), config)


def test_interrupt_without_a_checkpointer_fails_on_the_first_call(checker: Any) -> None:
    middleware = guardrail_middleware(checker, human_review="interrupt")
    agent = create_agent(model(RIGHT), tools=[lookup], middleware=[middleware])
    with pytest.raises(ConfigError, match="checkpointer"):
        agent.invoke(ask())


def test_bad_options_are_config_errors(checker: Any) -> None:
    with pytest.raises(ConfigError, match="on_fail"):
        guardrail_middleware(checker, on_fail="retry")
    with pytest.raises(ConfigError, match="max_attempts"):
        guardrail_middleware(checker, on_fail="regenerate", max_attempts=0)
    with pytest.raises(ConfigError, match="human_review"):
        guardrail_middleware(checker, human_review="pause")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="evidence"):
        guardrail_middleware(checker, evidence="all")  # type: ignore[arg-type]


# --- what a trace shows -------------------------------------------------------------------


def test_the_trace_shows_the_outcome_and_each_attempt(checker: Any) -> None:
    llm = model(call_lookup(), WRONG, RIGHT)
    middleware = guardrail_middleware(checker, on_fail="regenerate")
    agent = create_agent(llm, tools=[lookup], middleware=[middleware])
    collector = RunTreeCollector()
    agent.invoke(ask(), {"callbacks": [collector]})
    [root] = collector.roots
    assert root.outputs is not None and root.outputs["guardrail"]["attempts"] == 2
    assert root.outputs["guardrail"]["action"] in ("accept", "accept_with_flags")
    checks = root.find("guardrail")
    assert [[t for t in c.tags if t.startswith("attempt:")] for c in checks] == [
        ["attempt:1"], ["attempt:2"],
    ]  # fmt: skip
    [regen] = root.find("guardrail.regenerate")
    first = checks[0].output
    assert isinstance(first, GuardReport) and first.action.value == "regenerate"
    assert regen.inputs == {"attempt": 2, "guidance": first.recommendation.guidance}  # type: ignore[union-attr]
    assert "room 9C" in regen.inputs["guidance"]
    assert regen.outputs == {"answer": RIGHT}
    assert [c.run_type for c in regen.children] == ["llm"]  # the model call runs inside it
    # the guidance and the message the model is shown are the shared loop's
    assert regen.inputs["guidance"] == guidance_text(first)
    shown = Regeneration(number=2, rejected=WRONG, guidance=guidance_text(first)).message
    assert system_text(llm.seen[2]).endswith(shown)


def test_the_model_calls_trace_no_report(checker: Any) -> None:
    """The agent's private state — part of every model call's traced input — keeps what the
    loop needs of a rejected answer (number, guidance, answer, action, check run), not its
    report."""
    llm = model(call_lookup(), WRONG, RIGHT)
    middleware = guardrail_middleware(checker, on_fail="regenerate")
    agent = create_agent(llm, tools=[lookup], middleware=[middleware])
    collector = RunTreeCollector()
    agent.invoke(ask(), {"callbacks": [collector]})
    [root] = collector.roots
    calls = root.find("model")
    assert len(calls) == 3
    regenerating = calls[2].inputs or {}
    [tried] = regenerating["guardrail_attempts"]
    assert set(tried) == {"number", "guidance", "answer", "action", "run_id"}
    assert tried["number"] == 1 and tried["answer"] == WRONG and tried["action"] == "regenerate"
    assert tried["run_id"] == str(root.find("guardrail")[0].id)
    pending = Regeneration.model_validate(regenerating["guardrail_retry"])
    assert pending.number == 2 and pending.rejected == WRONG and "room 9C" in pending.guidance
    for call in calls:
        shown = json.dumps(call.inputs, default=str)
        assert "recommendation" not in shown and "claims" not in shown
        assert len(shown) < 3000, len(shown)


@pytest.mark.parametrize("on_fail", ["corrected", "annotated"])
def test_a_failed_answer_delivers_its_checked_part(checker: Any, on_fail: str) -> None:
    """``corrected`` / ``annotated`` deliver ``OnFail.fallback_text`` of the report (here the
    supported sentence, the contradicted one removed), as a wrapped chain does."""
    mixed = f"{SUPPORTED} {WRONG}"
    llm = model(call_lookup(), mixed)
    middleware = guardrail_middleware(checker, on_fail=on_fail)
    out = create_agent(llm, tools=[lookup], middleware=[middleware]).invoke(ask())
    last = out["messages"][-1]
    report = report_of(last)
    assert report is not None and report.original == mixed and report.delivered_text is None
    assert last.content == OnFail(on_fail).fallback_text(report)
    assert WRONG not in last.content and SUPPORTED in last.content
    assert out["guardrail"]["action"] == "regenerate" and out["guardrail"]["attempts"] == 1


class StubClient:
    """Stands in for ``langsmith.Client`` (no network): keeps what a tracer and the feedback
    recorder send."""

    otel_exporter = None

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.updated: dict[str, dict[str, Any]] = {}
        self.feedback: list[dict[str, Any]] = []

    def create_run(self, **run: Any) -> None:
        self.created.append(run)

    def update_run(self, run_id: Any, **run: Any) -> None:
        self.updated.setdefault(str(run_id), {}).update(run)

    def create_feedback(self, **item: Any) -> Any:
        self.feedback.append(item)
        return type("Feedback", (), {"id": uuid.uuid4()})()

    def flush(self) -> None:
        pass


def test_a_langsmith_trace_shows_the_outcome_on_the_top_run(checker: Any) -> None:
    from langchain_core.tracers import LangChainTracer

    from guardrail.tracing import FeedbackRecorder

    client = StubClient()
    tracer = LangChainTracer(client=client, project_name="agent-tests")  # type: ignore[arg-type]
    recorder = FeedbackRecorder(client=client, project_id=uuid.uuid4())
    agent = create_agent(
        model(call_lookup(), WRONG, RIGHT),
        tools=[lookup],
        middleware=[guardrail_middleware(checker, on_fail="regenerate")],
    )
    agent.invoke(ask(), {"callbacks": [tracer, recorder]})
    tracer.wait_for_futures()

    [root] = [run for run in client.created if run.get("parent_run_id") is None]
    outcome = client.updated[str(root["id"])]["outputs"]["guardrail"]
    assert outcome["action"] == "accept" and outcome["attempts"] == 2
    assert outcome["verdict"] == "VERIFIED" and 0.0 <= outcome["confidence"] <= 1.0
    checks = [run for run in client.created if run["name"] == "guardrail"]
    assert len(checks) == 2 and {str(run["trace_id"]) for run in checks} == {str(root["id"])}
    # the feedback sits on those checks, one trace with the top run
    marked = {str(item["run_id"]) for item in client.feedback if item["key"] == "guardrail.action"}
    assert marked == {str(run["id"]) for run in checks}
    [regen] = [run for run in client.created if run["name"] == "guardrail.regenerate"]
    assert regen["inputs"]["attempt"] == 2 and "room 9C" in regen["inputs"]["guidance"]
    assert str(regen["trace_id"]) == str(root["id"])
