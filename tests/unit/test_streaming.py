"""Guarded streams: tokens pass through, each sentence is checked once complete, policies.

The guardrail is real (bundled NLI verifier; the claim and hallucination stages only, to keep
the tests fast). The chat model is langchain-core's ``GenericFakeChatModel`` standing in for
Groq / the local model: it streams a scripted answer word by word.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableGenerator, RunnableLambda

from chains.middleware import REPORT_KEY, with_guardrail
from chains.stream_checks import SentenceCheck, StreamingConfig
from chains.streaming import SentenceGuard, guard_stream
from guardrail.errors import ConfigError, GuardrailError
from guardrail.pipeline import Guardrail
from guardrail.report import GuardReport, VerdictLabel

EVIDENCE = (
    "The project review meeting with John Smith is on Thursday at 10:00 in room 4B. "
    "Sarah Lee works in the Finance department."
)
BASE = {
    "query": "When and where is the meeting with John?",
    "passages": [{"text": EVIDENCE, "score": 0.7}],
}
GOOD_1 = "The meeting with John is on Thursday at 10:00."
BAD = "It takes place in room 9C."
GOOD_2 = "Sarah Lee works in the Finance department."
ANSWER = f"{GOOD_1} {BAD} {GOOD_2}"
RETRIEVER = RunnableLambda(lambda q: BASE["passages"])


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail({"disabled_stages": ["coherence", "fact_validation", "correction"]})


def words(text: str) -> list[str]:
    """Tokens as a model streams them: each word with its following space."""
    parts = text.split(" ")
    return [p + " " for p in parts[:-1]] + [parts[-1]]


def split(items: list[Any]) -> tuple[str, list[SentenceCheck], list[GuardReport]]:
    text = "".join(i for i in items if isinstance(i, str))
    checks = [i for i in items if isinstance(i, SentenceCheck)]
    reports = [i for i in items if isinstance(i, GuardReport)]
    return text, checks, reports


def test_annotate_streams_everything_and_marks_the_failed_sentence(guard: Guardrail) -> None:
    items = list(guard_stream(words(ANSWER), guard, BASE, "annotate"))
    text, checks, reports = split(items)
    assert [c.text for c in checks] == [GOOD_1, BAD, GOOD_2]
    assert [c.passed for c in checks] == [True, False, True]
    assert checks[1].status == "failed" and "contradicted" in checks[1].reason
    assert checks[1].claims and checks[1].claims[0].status.value == "contradicted"
    assert ANSWER[checks[1].span.start : checks[1].span.end] == BAD
    marker = " [fact check: contradicted by the evidence]"
    assert text == f"{GOOD_1} {BAD}{marker} {GOOD_2}"
    # Order: the check of a sentence comes before any token of the sentence after next.
    first_check = items.index(checks[0])
    assert "".join(i for i in items[:first_check] if isinstance(i, str)).startswith(GOOD_1)
    assert items[-1] is reports[0] and len(reports) == 1
    assert reports[0].original == ANSWER
    assert reports[0].verdict.label is VerdictLabel.HALLUCINATION


def test_stop_ends_the_stream_after_the_failed_sentence(guard: Guardrail) -> None:
    consumed: list[str] = []

    def tokens() -> Iterator[str]:
        for token in words(ANSWER):
            consumed.append(token)
            yield token

    text, checks, reports = split(list(guard_stream(tokens(), guard, BASE, "stop")))
    assert [c.passed for c in checks] == [True, False]
    assert text.endswith(
        "[The answer was stopped by the fact checker: contradicted by the evidence]"
    )
    assert "Sarah" not in text and "Finance" not in "".join(consumed)  # the model was cut off
    assert reports[0].original == f"{GOOD_1} {BAD}"


def test_buffer_shows_nothing_unchecked_and_withholds_the_failed_sentence(
    guard: Guardrail,
) -> None:
    sg = SentenceGuard(guard, BASE, {"policy": "buffer"})
    shown_before_check: list[str] = []
    items: list[Any] = []
    for token in words(ANSWER):
        out = list(sg.feed(token))
        if not any(isinstance(i, SentenceCheck) for i in out):
            shown_before_check += [i for i in out if isinstance(i, str)]
        items += out
    items += list(sg.close())
    assert shown_before_check == []  # text only ever comes out with its sentence's check
    text, checks, reports = split(items)
    assert [c.passed for c in checks] == [True, False, True]
    withheld = "[A sentence was withheld by the fact checker: contradicted by the evidence]"
    assert text == f"{GOOD_1} {withheld} {GOOD_2}"
    assert BAD not in text
    assert reports[0].original == ANSWER  # the final report covers the whole answer


def test_sentence_boundaries_wait_for_abbreviations_and_decimals(guard: Guardrail) -> None:
    sg = SentenceGuard(guard, BASE, StreamingConfig(final_check=False))
    assert sg._complete(final=False) == []
    for token in ["Dr.", " Smith", " paid", " $3."]:
        sg.text += token
        assert sg._complete(final=False) == [], token
    sg.text += "50 each. "
    done = sg._complete(final=False)
    assert [s.text for s in done] == ["Dr. Smith paid $3.50 each."]


def test_streaming_config_is_strict() -> None:
    assert StreamingConfig.load("stop").policy.value == "stop"
    with pytest.raises(ConfigError):
        StreamingConfig.load({"policy": "stop", "polcy": "x"})
    with pytest.raises(ConfigError):
        StreamingConfig.load("drop")


def chat_chain(answer: str) -> Any:
    model = GenericFakeChatModel(messages=iter([AIMessage(content=answer)]))
    return ChatPromptTemplate.from_messages([("human", "{input}")]) | model | StrOutputParser()


def test_with_guardrail_stream_passes_tokens_before_the_answer_ends(guard: Guardrail) -> None:
    log: list[str] = []

    def model(inputs: Iterator[Any]) -> Iterator[str]:
        for _ in inputs:
            pass
        for token in words(ANSWER):
            log.append(f"made {token.strip()}")
            yield token

    safe = with_guardrail(
        RunnableGenerator(model), guard, retriever=RETRIEVER, streaming="annotate"
    )
    chunks = []
    for chunk in safe.stream({"input": BASE["query"]}):
        if isinstance(chunk, str):
            log.append(f"shown {chunk.strip()}")
        chunks.append(chunk)
    assert log.index("shown The") < log.index("made department.")  # streamed, not held
    assert isinstance(chunks[-1], GuardReport)
    assert "".join(c for c in chunks if isinstance(c, str)).startswith(f"{GOOD_1} {BAD} [fact")


def test_with_guardrail_stream_dict_output_carries_context_and_report(guard: Guardrail) -> None:
    def app(inputs: Iterator[Any]) -> Iterator[dict[str, Any]]:
        value = next(iter(inputs))
        yield {"input": value["input"]}
        yield {"context": BASE["passages"]}
        for token in words(ANSWER):
            yield {"answer": token}

    safe = with_guardrail(RunnableGenerator(app), guard, streaming="buffer")
    chunks = list(safe.stream({"input": BASE["query"]}))
    assert chunks[0] == {"input": BASE["query"]} and chunks[1] == {"context": BASE["passages"]}
    answer = "".join(c.get("answer", "") for c in chunks)
    assert BAD not in answer and GOOD_2 in answer
    assert isinstance(chunks[-1][REPORT_KEY], GuardReport)


async def test_astream_events_show_each_sentence_check_in_order(guard: Guardrail) -> None:
    safe = with_guardrail(chat_chain(ANSWER), guard, retriever=RETRIEVER, streaming="annotate")
    sequence: list[tuple[str, Any]] = []
    async for event in safe.astream_events({"input": BASE["query"]}, version="v2"):
        if event["event"] == "on_custom_event" and event["name"] == "on_sentence_checked":
            sequence.append(("check", event["data"]))
        elif event["event"] == "on_chain_stream" and event["name"] == "guarded_chain":
            sequence.append(("chunk", event["data"]["chunk"]))
    checks = [data for kind, data in sequence if kind == "check"]
    assert [(c["text"], c["passed"]) for c in checks] == [
        (GOOD_1, True), (BAD, False), (GOOD_2, True),
    ]  # fmt: skip
    assert checks[1]["claims"][0]["status"] == "contradicted"
    kinds = [kind for kind, _ in sequence]
    assert kinds[0] == "chunk" and kinds.index("check") < len(kinds) - 5  # checks interleave
    assert isinstance(sequence[-1][1], GuardReport)


async def test_astream_stop_policy(guard: Guardrail) -> None:
    safe = with_guardrail(chat_chain(ANSWER), guard, retriever=RETRIEVER, streaming="stop")
    chunks = [c async for c in safe.astream({"input": BASE["query"]})]
    text = "".join(c for c in chunks if isinstance(c, str))
    assert "Sarah" not in text and "stopped by the fact checker" in text
    assert isinstance(chunks[-1], GuardReport) and chunks[-1].original == f"{GOOD_1} {BAD}"


def test_trace_has_one_run_per_sentence_check_then_the_final_check(guard: Guardrail) -> None:
    from guardrail.tracing import RunTreeCollector

    collector = RunTreeCollector()
    safe = with_guardrail(chat_chain(ANSWER), guard, retriever=RETRIEVER, streaming="annotate")
    list(safe.stream({"input": BASE["query"]}, {"callbacks": [collector]}))
    root = collector.roots[-1]
    assert root.name == "guarded_chain"
    checks = [n for n in root.names() if n in ("sentence_check", "guardrail")]
    assert checks == ["sentence_check"] * 3 + ["guardrail"]
    first = root.find("sentence_check")[0]
    assert first.children and first.children[0].name.startswith("guardrail.")  # its stages


def test_the_deprecated_config_streaming_section_still_works_and_is_checked_by_chains() -> None:
    from langchain_core.runnables import RunnableLambda

    from chains.middleware import with_guardrail
    from guardrail import ConfigError, Guardrail, GuardrailConfig

    with pytest.warns(DeprecationWarning, match="StreamingConfig"):
        guard = Guardrail({"streaming": {"policy": "stop", "final_check": False}})
    assert guard.config.streaming == {"policy": "stop", "final_check": False}
    assert "streaming" not in guard.config.model_dump()
    assert "streaming" not in GuardrailConfig.model_json_schema()["properties"]
    safe = with_guardrail(RunnableLambda(lambda x: "ok"), guard)
    assert safe._settings().policy.value == "stop" and not safe._settings().final_check
    with pytest.raises(ConfigError, match="polcy"), pytest.warns(DeprecationWarning):
        with_guardrail(RunnableLambda(lambda x: "ok"), Guardrail({"streaming": {"polcy": "stop"}}))


class BrokenGuard:
    """A guardrail whose every check fails with an error (each sentence then fails)."""

    def invoke(self, value: Any, config: Any = None) -> GuardReport:
        raise GuardrailError("the verifier is down")

    async def ainvoke(self, value: Any, config: Any = None) -> GuardReport:
        raise GuardrailError("the verifier is down")


@pytest.mark.parametrize(
    ("answer", "gap"),
    [("会议在周四。地点是4B室。", ""), ("The meeting is on Thursday. It is in room 4B.", " ")],
)
def test_the_streamed_annotation_has_no_space_after_cjk_text(answer: str, gap: str) -> None:
    settings = StreamingConfig(policy="annotate", annotation=" [fact check]", final_check=False)
    items = list(guard_stream(list(answer), BrokenGuard(), BASE, settings))
    text, checks, _ = split(items)
    assert checks and not any(c.passed for c in checks)
    first = checks[0].text
    assert text.startswith(f"{first}{gap}[fact check]")
