"""Guarded RAG end to end: retrieve → generate → guardrail, regenerating with guidance on failure.

Each call is one root run ``guarded_rag`` with children ``guarded_rag.retrieve`` and, per attempt,
``guarded_rag.attempt.<number>`` (itself holding ``guarded_rag.generate`` and the ``guardrail``
run with its ``guardrail.*`` stages). The loop is the one every guarded chain shares
(:mod:`chains.regenerate`); the decision per attempt follows the report's recommendation:

- ``accept`` / ``accept_with_flags`` / ``correct_and_deliver`` → deliver
  ``report.delivered_text``, exactly what ``Guardrail.invoke`` says to show (the original; the
  annotated text with its removals and repairs): an answer repaired or delivered with flags is
  never regenerated;
- ``regenerate`` — and only ``regenerate`` (or an empty answer) — → re-prompt with
  ``report.recommendation.guidance`` (up to ``max_attempts``); still failing after the last
  attempt → escalate;
- ``human_review`` → an :class:`~chains.results.Escalation` instead of an answer.

Streaming: ``stream`` / ``astream`` yield the first answer's text as the model writes it, each
sentence checked as soon as it is complete (``on_sentence_checked`` events in
``astream_events``); the ``streaming`` policy decides what a failed sentence does — ``annotate``
(mark it), ``stop`` (end the text with a notice) or ``buffer`` (show nothing unchecked, withhold
the failed sentence). The last chunk is the final :class:`GuardedAnswer`, decided by the full
check of the whole answer — ``Guardrail.invoke`` on it, run even when the streaming settings
turn ``final_check`` off, as the loop needs its decision — (regenerating, unstreamed, when it
asks for it): its ``answer`` is what may be kept on screen.

Example::

    guard = Guardrail()
    index = PassageIndex.from_paths(["docs/"], SentenceEmbeddings.of_guardrail(guard))
    rag = GuardedRAG(index, llm=default_chat_model(), guardrail=guard)
    result = rag.invoke("When is the meeting with John?")
    print(result.answer or result.escalation.reason)
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, Never
from uuid import uuid4

from langchain_core.language_models import BaseChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda

from chains.drive import Call, Driven, Logic
from chains.generation import (
    answer_prompt,
    default_chat_model,
    format_context,
    format_guidance,
    is_fallback,
    model_id,
)
from chains.regenerate import (
    EMPTY_ANSWER_GUIDANCE,
    LoopEnd,
    Regeneration,
    StepKind,
    attempt_config,
    escalation,
    regenerate_loop,
)
from chains.results import Attempt, GuardedAnswer
from chains.retrieval import PassageIndex
from chains.stream_checks import StreamingConfig
from chains.streaming import SentenceGuard, StreamsThroughGuard
from guardrail.errors import ConfigError, InputError
from guardrail.inputs import Passage
from guardrail.pipeline import Guardrail

logger = logging.getLogger(__name__)

__all__ = ["EMPTY_ANSWER_GUIDANCE", "GuardedRAG"]

#: A request's question, its extra guardrail inputs and its passages.
Retrieved = tuple[str, dict[str, Any], list[Passage]]


def _question_of(value: Any) -> tuple[str, dict[str, Any]]:
    """The question and the extra guardrail inputs (dialogue, session / turn ids, passages)."""
    if isinstance(value, str):
        question, extra = value, {}
    elif isinstance(value, dict):
        question = value.get("question") or value.get("input") or value.get("query") or ""
        extra = {
            k: value[k]
            for k in ("dialogue", "session_id", "turn_id", "knowledge_base", "passages")
            if value.get(k) is not None
        }
    else:
        raise InputError(
            f"guarded RAG input must be a question string or a dict with 'question', "
            f"not {type(value).__name__}"
        )
    if not isinstance(question, str) or not question.strip():
        raise InputError("the question is empty: nothing to answer")
    return question, extra


def _is_a_whole_chain(llm: Any) -> bool:
    """Whether ``llm`` is a chain that starts by building its own prompt (a prompt template or
    a map of inputs first), which cannot take the prompt GuardedRAG hands its model."""
    from langchain_core.prompts import BasePromptTemplate
    from langchain_core.runnables import RunnableParallel, RunnableSequence

    first = llm.first if isinstance(llm, RunnableSequence) else llm
    return isinstance(first, BasePromptTemplate | RunnableParallel)


class GuardedRAG(StreamsThroughGuard, Runnable[str | dict[str, Any], GuardedAnswer]):
    """Retrieval-augmented generation whose answers are checked before they are returned.

    Args:
        retriever: a :class:`PassageIndex`, or any Runnable mapping a query to passages or
            LangChain ``Document``s (scores read from ``metadata["score"]``). Built with
            ``SentenceEmbeddings.of_guardrail(guardrail)``, the index embeds on the guardrail's
            own embedder (one model in memory, each text embedded once).
        llm: the chat model; by default :func:`chains.generation.default_chat_model` (Groq,
            else local SmolLM2, else the extractive fallback — ``fallback`` is then true and
            ``model_name`` says so).
        guardrail: the checker; ``Guardrail()`` (offline profile) by default.
        max_attempts: how many answers to generate before escalating.
        k: passages to retrieve.
        knowledge_base: a knowledge base (handle or path) given to every check.
        streaming: the policy for a failed sentence in ``stream`` / ``astream`` (see
            :class:`chains.stream_checks.StreamingConfig`).
    """

    def __init__(
        self,
        retriever: PassageIndex | Runnable[Any, Any],
        llm: BaseChatModel | Runnable[Any, Any] | None = None,
        guardrail: Guardrail | None = None,
        max_attempts: int = 3,
        k: int = 4,
        knowledge_base: Any = None,
        streaming: StreamingConfig | dict[str, Any] | str | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ConfigError("max_attempts must be at least 1")
        self.k = k
        self.retriever: Runnable[Any, Any] = (
            retriever.as_runnable(k)
            if isinstance(retriever, PassageIndex)
            else retriever.with_config(run_name="guarded_rag.retrieve")
        )
        if llm is None:
            llm = default_chat_model()
        if _is_a_whole_chain(llm):
            raise ConfigError(
                "GuardedRAG's llm is a chat model: it gets GuardedRAG's own prompt (the question "
                "and the retrieved passages), not your chain's input. To regenerate inside a chain "
                "of your own, wrap it: with_guardrail(chain, on_fail='regenerate', "
                "retriever=...) with guided(model) in place of the model (see the how-to "
                "'Wrap an existing LangChain app')"
            )
        self.llm = llm
        self.model_name = model_id(llm)
        self.fallback = is_fallback(llm)
        self.guardrail = guardrail if guardrail is not None else Guardrail()
        self.streaming = StreamingConfig.load(
            streaming
            if streaming is not None
            else getattr(self.guardrail.config, "streaming", None)
        )
        self.max_attempts = max_attempts
        self.knowledge_base = knowledge_base
        self.generate: Runnable[dict[str, Any], str] = (
            answer_prompt() | llm | StrOutputParser()
        ).with_config(run_name="guarded_rag.generate")
        self.attempt = RunnableLambda(
            self._attempt, afunc=self._aattempt, name="guarded_rag.attempt"
        )

    @property
    def InputType(self) -> Any:  # noqa: N802 - LangChain's name
        return str | dict[str, Any]

    @property
    def OutputType(self) -> type[GuardedAnswer]:  # noqa: N802 - LangChain's name
        return GuardedAnswer

    # --- one attempt --------------------------------------------------------------------

    def _prompt_vars(self, data: dict[str, Any]) -> dict[str, Any]:
        return {
            "context": format_context(data["passages"]),
            "question": data["question"],
            "guidance": format_guidance(data.get("previous"), data.get("guidance")),
        }

    def _guard_input(self, data: dict[str, Any], answer: str) -> dict[str, Any]:
        out = {"query": data["question"], "response": answer, "passages": data["passages"]}
        if self.knowledge_base is not None:
            out["knowledge_base"] = self.knowledge_base
        return {**out, **data.get("extra", {})}

    def _attempt_steps(self, data: dict[str, Any], config: RunnableConfig) -> Logic[Never, Attempt]:
        answer = (yield Call.invoke(self.generate, self._prompt_vars(data), config)).strip()
        if not answer:
            return Attempt(
                number=data["number"], guidance=data.get("guidance"), answer="",
                error="the model returned an empty answer",
            )  # fmt: skip
        run_id = uuid4()  # the guardrail run's id: where its feedback is recorded
        checked: RunnableConfig = {**config, "run_id": run_id}
        report = yield Call.invoke(self.guardrail, self._guard_input(data, answer), checked)
        return Attempt(
            number=data["number"], guidance=data.get("guidance"), answer=answer, report=report,
            run_id=str(run_id),
        )  # fmt: skip

    def _attempt(self, data: dict[str, Any], config: RunnableConfig) -> Attempt:
        return Driven(self._attempt_steps(data, config)).run()

    async def _aattempt(self, data: dict[str, Any], config: RunnableConfig) -> Attempt:
        return await Driven(self._attempt_steps(data, config)).arun()

    # --- the loop -----------------------------------------------------------------------

    def _passages(self, raw: Any) -> list[Passage]:
        return [Passage.coerce(p) for p in (raw or [])]

    def _finish(self, question: str, end: LoopEnd, passages: list[Passage]) -> GuardedAnswer:
        if end.step.kind is StepKind.DELIVER:
            return GuardedAnswer(
                question=question,
                answer=end.step.text,
                action=end.last.action,
                attempts=list(end.attempts),
                passages=passages,
                model=self.model_name,
            )
        return escalation(question, end, passages, self.model_name)

    def _loop_steps(self, question: str, passages: list[Passage], extra: dict[str, Any],
                    child: RunnableConfig, attempts: list[Attempt]) -> Logic[Never, GuardedAnswer]:  # fmt: skip
        """Run attempts after those in ``attempts`` until one ends the loop (the shared loop,
        :func:`chains.regenerate.regenerate_loop`; this chain's prompt carries the guidance)."""

        def make(number: int, regeneration: Regeneration | None) -> Call:
            data = {"question": question, "passages": passages, "number": number, "extra": extra,
                    "guidance": regeneration.guidance if regeneration else None,
                    "previous": regeneration.rejected if regeneration else None}  # fmt: skip
            step = attempt_config(child, "guarded_rag", number, regeneration, in_config=False)
            return Call.invoke(self.attempt, data, step)

        end = yield from regenerate_loop(make, self.max_attempts, attempts)
        return self._finish(question, end, passages)

    def _retrieve_steps(self, value: Any, child: RunnableConfig) -> Logic[Never, Retrieved]:
        """The question, the extra inputs and the passages (given, else retrieved)."""
        question, extra = _question_of(value)
        if "passages" in extra:
            return question, extra, self._passages(extra.pop("passages"))
        return question, extra, self._passages((yield Call.invoke(self.retriever, question, child)))

    def _retrieve(self, value: Any, child: RunnableConfig) -> Retrieved:
        return Driven(self._retrieve_steps(value, child)).run()

    async def _aretrieve(self, value: Any, child: RunnableConfig) -> Retrieved:
        return await Driven(self._retrieve_steps(value, child)).arun()

    def _run_steps(self, value: Any, child: RunnableConfig) -> Logic[Never, GuardedAnswer]:
        question, extra, passages = yield from self._retrieve_steps(value, child)
        return (yield from self._loop_steps(question, passages, extra, child, []))

    # --- streaming ----------------------------------------------------------------------

    def _open_stream(self, question: str, extra: dict[str, Any], passages: list[Passage],
                     state: dict[str, Any], child: RunnableConfig) -> dict[str, Any]:  # fmt: skip
        """The first attempt's data (``state["data"]``) and the stream's guard."""
        data = {"question": question, "passages": passages, "number": 1, "extra": extra}
        base = self._guard_input(data, "")
        state["data"] = data
        state["guard"] = SentenceGuard(self.guardrail, base, self.streaming, child)
        return data

    def _chunks(self, value: Any, state: dict[str, Any], child: RunnableConfig) -> Iterator[Any]:
        data = self._open_stream(*self._retrieve(value, child), state, child)
        yield from self.generate.stream(self._prompt_vars(data), child)

    async def _achunks(
        self, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> AsyncIterator[Any]:
        data = self._open_stream(*await self._aretrieve(value, child), state, child)
        async for token in self.generate.astream(self._prompt_vars(data), child):
            yield token

    def _guard(
        self, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> Logic[Never, SentenceGuard]:
        guard: SentenceGuard = state["guard"]  # made with the passages when the stream opened
        return guard
        yield  # a generator like every guard's, with no call to make

    def _shown(self, item: Any, state: dict[str, Any]) -> Any:
        return item if isinstance(item, str) else None  # checks stay events; the answer is last

    def _streamed_attempt_steps(
        self, data: dict[str, Any], guard: SentenceGuard, child: RunnableConfig
    ) -> Logic[Never, Attempt]:
        if not guard.answer.strip():
            return Attempt(number=1, answer="", error="the model returned an empty answer")
        report = guard.final_report
        if report is None:  # final_check off: the loop still needs the full check's decision
            report = yield Call.invoke(self.guardrail, self._guard_input(data, guard.answer), child)
        return Attempt(number=1, answer=guard.answer, report=report)

    def _tail_steps(self, state: dict[str, Any], child: RunnableConfig) -> Logic[Never, list[Any]]:
        data, guard = state["data"], state["guard"]
        attempts = [(yield from self._streamed_attempt_steps(data, guard, child))]
        result = yield from self._loop_steps(
            data["question"], data["passages"], data["extra"], child, attempts
        )
        return [result]

    def _tail(self, state: dict[str, Any], child: RunnableConfig) -> list[Any]:
        return Driven(self._tail_steps(state, child)).run()

    async def _atail(self, state: dict[str, Any], child: RunnableConfig) -> list[Any]:
        return await Driven(self._tail_steps(state, child)).arun()

    def _root(self, config: RunnableConfig | None) -> RunnableConfig:
        cfg: RunnableConfig = dict(config or {})  # type: ignore[assignment]
        metadata = dict(cfg.get("metadata") or {})
        metadata.setdefault("guarded_rag_model", self.model_name)
        metadata.setdefault("guarded_rag_max_attempts", self.max_attempts)
        metadata.setdefault("guarded_rag_k", self.k)
        cfg["metadata"] = metadata
        cfg.setdefault("run_name", "guarded_rag")
        return cfg

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardedAnswer:
        """Answer one question (a string, or a dict with ``question`` and optional
        ``dialogue`` / ``session_id`` / ``turn_id`` / ``passages``)."""
        return self._call_with_config(self._run, input, self._root(config), **kwargs)

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> GuardedAnswer:
        """Async :meth:`invoke`."""
        return await self._acall_with_config(self._arun, input, self._root(config), **kwargs)
