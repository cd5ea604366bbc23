"""Put the guardrail in front of a chain you already have: :func:`with_guardrail`.

The wrapped chain's output must hold the answer and, ideally, its evidence: for example
``create_retrieval_chain``'s ``{"input", "context", "answer"}``. When it has no context, pass a
``retriever`` and the evidence is fetched for the question. Passages without a retrieval score
get the query–passage cosine from ``embeddings`` (when given), so the adaptive threshold has a
retrieval score to work with.

Output: the chain's own output with the answer replaced by the report's
``delivered_text`` — exactly the text ``Guardrail.invoke`` says to show for this answer (the
original for ``accept``; the annotated text, with its removals and repairs, for
``accept_with_flags`` and ``correct_and_deliver``); dict outputs also get the report under
``"guardrail_report"``. When there is no text to show (``regenerate`` / ``human_review``),
``on_fail`` decides (see :class:`chains.results.OnFail`).

Regenerate (``on_fail="regenerate"``): the chain runs again with the guardrail's guidance until
an answer passes, up to ``max_attempts`` answers — the loop every guarded chain shares
(:mod:`chains.regenerate`). The guidance travels in the run's config, never in the chain's
input; wrap the chain's chat model in :func:`chains.guidance.guided` so that it reaches the
model. Each attempt is a child run ``guarded_chain.attempt.<n>``. When no answer passes,
``on_exhausted`` decides: ``raise`` (``GuardrailRejected`` with every attempt) or
``human_review`` (the :class:`~chains.results.GuardedAnswer` escalation).

The top run (``guarded_chain``) records ``{"output": <the result>, "guardrail": <Outcome>}`` as
its outputs: the action, verdict and confidence, the feedback keys and the ``guardrail`` run the
feedback is on (:class:`chains.results.Outcome`); ``invoke`` returns the result alone.

Streaming (``stream`` / ``astream`` / ``astream_events``): the answer's tokens pass through as
they arrive, each sentence is checked once complete (``on_sentence_checked`` custom events),
the ``streaming`` policy handles a failed sentence (``annotate``, ``stop`` or ``buffer``, see
:mod:`chains.streaming`), and the last chunk is the report on the whole answer — the same
report as ``Guardrail.invoke``, whose ``delivered_text`` is what to keep on screen. ``on_fail``
does not apply to streams: the text is already shown, the final report says what to do.

Example::

    rag = create_retrieval_chain(retriever, combine_docs_chain)
    safe = with_guardrail(rag, on_fail="raise").with_fallbacks([apology_chain])
    safe.invoke({"input": "When is the meeting with John?"})
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Never
from uuid import uuid4

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.utils import AddableDict

from chains.drive import Call, Driven, Logic
from chains.embeddings import EmbeddingsEncoder
from chains.regenerate import (
    LoopEnd,
    Regeneration,
    StepKind,
    attempt_config,
    escalation,
    regenerate_loop,
    rejection,
)
from chains.results import REPORT_KEY, Attempt, GuardedAnswer, OnExhausted, OnFail, Outcome
from chains.stream_checks import SentenceCheck, StreamingConfig
from chains.streaming import SentenceGuard, StreamItem, StreamsThroughGuard
from guardrail.errors import ConfigError, GuardrailRejected, InputError
from guardrail.hallucination.retrieval import with_retrieval_scores
from guardrail.inputs import GuardInput, Passage
from guardrail.pipeline import Guardrail
from guardrail.report import Action, GuardReport

QUERY_KEYS = ("input", "question", "query")
#: The run name of a wrapped chain's top run (its outputs: ``{"output": ..., "guardrail": ...}``).
ROOT_RUN = "guarded_chain"
#: Where the top run's outputs hold the :class:`~chains.results.Outcome` (as JSON).
OUTCOME_KEY = "guardrail"


def answer_text(output: Any, answer_key: str) -> str:
    """The answer text inside a chain output (str, message, or dict holding either)."""
    value = output.get(answer_key) if isinstance(output, dict) else output
    if isinstance(value, BaseMessage):
        value = value.text
    if not isinstance(value, str):
        raise InputError(
            f"cannot find the answer in the chain output: expected a string, a message or a "
            f"dict with {answer_key!r}, got {type(output).__name__}"
        )
    return value


def query_text(value: Any, output: Any) -> str:
    """The user's question from the chain input (or the output, which often echoes it)."""
    for source in (value, output):
        if isinstance(source, str):
            return source
        if isinstance(source, dict):
            for key in QUERY_KEYS:
                if isinstance(source.get(key), str):
                    return str(source[key])
    return ""


def score_missing(query: str, passages: list[Passage], embeddings: Embeddings) -> list[Passage]:
    """Give passages without a (finite) retrieval score the query–passage cosine, by the
    guardrail's one rule (:func:`guardrail.hallucination.retrieval.with_retrieval_scores`)."""
    if not query.strip():
        return passages
    data = GuardInput(query=query, response="", passages=passages)
    return with_retrieval_scores(data, EmbeddingsEncoder(embeddings)).passages


def traced(
    output: Any,
    report: GuardReport,
    attempts: int,
    run_id: str | None,
    action: Action | None = None,
    delivered: bool | None = None,
) -> dict[str, Any]:
    """What a wrapped chain's top run records as its outputs: the chain's result under
    ``"output"`` (what ``invoke`` returns) and the :class:`~chains.results.Outcome` as JSON
    under :data:`OUTCOME_KEY` — action, verdict, confidence, the feedback keys and the run
    the feedback is on."""
    outcome = Outcome.of(report, attempts, run_id, action, delivered)
    return {"output": output, OUTCOME_KEY: outcome.model_dump(mode="json")}


class GuardedRunnable(StreamsThroughGuard, Runnable[Any, Any]):
    """A chain whose answer is checked by a :class:`Guardrail`. Build with :func:`with_guardrail`."""

    def __init__(
        self,
        chain: Runnable[Any, Any],
        guardrail: Guardrail,
        on_fail: OnFail,
        retriever: Runnable[Any, Any] | None,
        embeddings: Embeddings | None,
        answer_key: str,
        context_key: str,
        knowledge_base: Any,
        streaming: StreamingConfig | None = None,
        max_attempts: int = 1,
        on_exhausted: OnExhausted = OnExhausted.RAISE,
    ) -> None:
        if max_attempts < 1:
            raise ConfigError("max_attempts must be at least 1")
        self.max_attempts = max_attempts
        self.on_exhausted = on_exhausted
        self.attempt: Runnable[dict[str, Any], Attempt] = RunnableLambda(
            self._attempt, afunc=self._aattempt, name=f"{ROOT_RUN}.attempt"
        )
        self.chain = chain
        self.guardrail = guardrail
        self.on_fail = on_fail
        self.retriever = retriever
        self.embeddings = embeddings
        self.answer_key = answer_key
        self.context_key = context_key
        self.knowledge_base = knowledge_base
        self.streaming = streaming

    def guard_input(
        self, value: Any, output: Any, config: RunnableConfig
    ) -> Logic[Never, dict[str, Any]]:
        """The guardrail input from the chain's input and output (sans-IO: the retriever, when
        it is needed, is a yielded call, so ``ainvoke`` awaits it)."""
        data = yield from self.evidence(value, output, config)
        data["response"] = answer_text(output, self.answer_key)
        return data

    def evidence(
        self, value: Any, output: Any, config: RunnableConfig
    ) -> Logic[Never, dict[str, Any]]:
        """The guardrail input without the response: query, passages, KB, dialogue, ids
        (sans-IO, as :meth:`guard_input`)."""
        query = query_text(value, output)
        raw = output.get(self.context_key) if isinstance(output, dict) else None
        if raw is None and self.retriever is not None:
            raw = yield Call.invoke(self.retriever, query, config)
        passages = [Passage.coerce(p) for p in (raw or [])]
        if self.embeddings is not None:
            passages = score_missing(query, passages, self.embeddings)
        data: dict[str, Any] = {"query": query, "passages": passages}
        if self.knowledge_base is not None:
            data["knowledge_base"] = self.knowledge_base
        if isinstance(value, dict):
            data |= {k: value[k] for k in ("dialogue", "session_id", "turn_id") if k in value}
        return data

    def decide(self, output: Any, report: GuardReport) -> Any:
        """Apply the recommendation and ``on_fail`` to the chain output: the answer becomes
        ``report.delivered_text`` (``on_fail`` when there is none; ``corrected`` /
        ``annotated`` raise as ``raise`` does when nothing is left to show)."""
        text = report.delivered_text
        if text is None:
            if self.on_fail is OnFail.REPORT:
                return report
            text = self.on_fail.fallback_text(report)
            if text is None:
                left = "" if self.on_fail is OnFail.RAISE else "; nothing checked is left to show"
                raise GuardrailRejected(
                    f"the guardrail rejected the answer ({report.action.value}, confidence "
                    f"{report.confidence:.2f}){left}",
                    report,
                )
        return self.with_answer(output, text, report)

    def with_answer(self, output: Any, text: str, report: GuardReport) -> Any:
        """The chain output with its answer replaced by ``text`` (dicts also get the report)."""
        if isinstance(output, dict):
            return {**output, self.answer_key: text, REPORT_KEY: report}
        if isinstance(output, BaseMessage):
            return output.model_copy(update={"content": text})
        return text

    def _check_steps(
        self, value: Any, output: Any, config: RunnableConfig, number: int, guidance: str | None
    ) -> Logic[Never, Attempt]:
        """Check one output of the chain: its :class:`~chains.results.Attempt` (the guardrail
        run gets a known id, where its feedback is recorded)."""
        data = yield from self.guard_input(value, output, config)
        answer: str = data["response"]
        record = {"number": number, "guidance": guidance, "answer": answer, "output": output}
        if self.on_fail is OnFail.REGENERATE and not answer.strip():
            return Attempt(**record, error="the chain returned an empty answer")
        run_id = uuid4()
        checked: RunnableConfig = {**config, "run_id": run_id}
        report: GuardReport = yield Call.invoke(self.guardrail, data, checked)
        return Attempt(**record, report=report, run_id=str(run_id))

    def _attempt_steps(self, data: dict[str, Any], config: RunnableConfig) -> Logic[Never, Attempt]:
        """One attempt of the regenerate loop: run the chain (the regeneration is in
        ``config``, never in its input), then check its answer."""
        regeneration: Regeneration | None = data.get("regeneration")
        output = yield Call.invoke(self.chain, data["input"], config)
        guidance = regeneration.guidance if regeneration is not None else None
        return (
            yield from self._check_steps(data["input"], output, config, data["number"], guidance)
        )

    def _attempt(self, data: dict[str, Any], config: RunnableConfig) -> Attempt:
        return Driven(self._attempt_steps(data, config)).run()

    async def _aattempt(self, data: dict[str, Any], config: RunnableConfig) -> Attempt:
        return await Driven(self._attempt_steps(data, config)).arun()

    def _loop_steps(self, value: Any, child: RunnableConfig) -> Logic[Never, dict[str, Any]]:
        """``on_fail="regenerate"``: attempts until one passes or the loop escalates."""

        def make(number: int, regeneration: Regeneration | None) -> Call:
            data = {"number": number, "input": value, "regeneration": regeneration}
            return Call.invoke(
                self.attempt, data, attempt_config(child, ROOT_RUN, number, regeneration)
            )

        end: LoopEnd = yield from regenerate_loop(make, self.max_attempts)
        last = end.last
        if end.step.kind is StepKind.DELIVER:
            assert last.report is not None and end.step.text is not None
            output = self.with_answer(last.output, end.step.text, last.report)
            return traced(output, last.report, len(end.attempts), last.run_id)
        if self.on_exhausted is OnExhausted.RAISE:
            raise rejection(end)
        question = query_text(value, last.output)
        result: GuardedAnswer = escalation(question, end)
        report = end.report
        if report is None:
            return {"output": result}
        return traced(result, report, len(end.attempts), last.run_id, Action.HUMAN_REVIEW, False)

    def _run_steps(self, value: Any, child: RunnableConfig) -> Logic[Never, dict[str, Any]]:
        if self.on_fail is OnFail.REGENERATE:
            return (yield from self._loop_steps(value, child))
        output = yield Call.invoke(self.chain, value, child)
        attempt = yield from self._check_steps(value, output, child, 1, None)
        assert attempt.report is not None
        result = self.decide(output, attempt.report)
        delivered = not isinstance(result, GuardReport)
        return traced(result, attempt.report, 1, attempt.run_id, None, delivered)

    def _root(self, config: RunnableConfig | None) -> RunnableConfig:
        cfg: RunnableConfig = dict(config or {})  # type: ignore[assignment]
        cfg.setdefault("run_name", ROOT_RUN)
        metadata = dict(cfg.get("metadata") or {})
        metadata.setdefault("guardrail_on_fail", self.on_fail.value)
        if self.on_fail is OnFail.REGENERATE:
            metadata.setdefault("guardrail_max_attempts", self.max_attempts)
        cfg["metadata"] = metadata
        return cfg

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the chain, check its answer, apply the decision (regenerating with guidance
        under ``on_fail="regenerate"``). The top run's outputs hold the result under
        ``"output"`` and the :class:`~chains.results.Outcome` under ``"guardrail"``."""
        done = self._call_with_config(self._run, input, self._root(config), **kwargs)
        return done["output"]

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async :meth:`invoke`."""
        done = await self._acall_with_config(self._arun, input, self._root(config), **kwargs)
        return done["output"]

    # --- streaming --------------------------------------------------------------------------

    def _settings(self) -> StreamingConfig:
        found = self.streaming or getattr(self.guardrail.config, "streaming", None)
        return StreamingConfig.load(found)

    def _chunks(self, value: Any, state: dict[str, Any], child: RunnableConfig) -> Iterator[Any]:
        return self.chain.stream(value, child)

    def _achunks(
        self, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> AsyncIterator[Any]:
        return self.chain.astream(value, child)

    def _text(self, chunk: Any, state: dict[str, Any]) -> tuple[str | None, Any]:
        """Split a streamed chunk into the answer text in it and what passes through as is."""
        if isinstance(chunk, str):
            state.setdefault("kind", "text")
            return chunk, None
        if isinstance(chunk, BaseMessage):
            state.setdefault("kind", "message")
            return chunk.text, None
        if isinstance(chunk, dict):
            state.setdefault("kind", "dict")
            rest = {k: v for k, v in chunk.items() if k != self.answer_key}
            if self.context_key in chunk:
                state[self.context_key] = chunk[self.context_key]
            answer = chunk.get(self.answer_key)
            text = answer.text if isinstance(answer, BaseMessage) else answer
            return (text if isinstance(text, str) else ""), (AddableDict(rest) if rest else None)
        raise InputError(
            f"cannot stream the answer of this chain: chunks of type {type(chunk).__name__}"
        )

    def _shown(self, item: StreamItem, state: dict[str, Any]) -> Any:
        """A stream item as a chunk of the chain's kind (``None`` for sentence checks)."""
        kind = state.get("kind", "text")
        if isinstance(item, SentenceCheck):
            return None
        if isinstance(item, GuardReport):
            return AddableDict({REPORT_KEY: item}) if kind == "dict" else item
        if kind == "dict":
            return AddableDict({self.answer_key: item})
        return AIMessageChunk(content=item) if kind == "message" else item

    def _guard(
        self, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> Logic[Never, SentenceGuard]:
        if state.get("guard") is None:
            context = self.context_key
            output = {context: state[context]} if context in state else None
            evidence = yield from self.evidence(value, output, child)
            state["guard"] = SentenceGuard(self.guardrail, evidence, self._settings(), child)
        guard: SentenceGuard = state["guard"]
        return guard

    def _closing(self, state: dict[str, Any]) -> SentenceGuard | None:
        if state.get("guard") is None:
            raise InputError("the chain streamed no answer text: there is nothing to check")
        return super()._closing(state)


def with_guardrail(
    chain: Runnable[Any, Any],
    guardrail: Guardrail | None = None,
    on_fail: OnFail | str = OnFail.RAISE,
    retriever: Runnable[Any, Any] | None = None,
    embeddings: Embeddings | None = None,
    answer_key: str = "answer",
    context_key: str = "context",
    knowledge_base: Any = None,
    streaming: StreamingConfig | dict[str, Any] | str | None = None,
    max_attempts: int = 3,
    on_exhausted: OnExhausted | str = OnExhausted.RAISE,
) -> GuardedRunnable:
    """Wrap ``chain`` so its answers are checked before they are returned.

    Args:
        chain: any Runnable whose output is the answer (str / message) or a dict holding it.
        guardrail: the checker (``Guardrail()`` by default).
        on_fail: ``"raise"`` | ``"corrected"`` | ``"annotated"`` | ``"report"`` |
            ``"regenerate"`` (see :class:`chains.results.OnFail`).
        retriever: fetches evidence for the question when the output has no ``context_key``.
        embeddings: scores passages that have no retrieval score (query–passage cosine).
        answer_key / context_key: where the answer and the evidence are in a dict output.
        knowledge_base: a knowledge base (handle or path) for fact validation.
        streaming: how ``stream`` / ``astream`` treat a sentence that fails its check
            (a :class:`~chains.stream_checks.StreamingConfig`, a dict, or a policy name:
            ``"annotate"`` | ``"stop"`` | ``"buffer"``); default: the guardrail config's
            ``streaming`` section if it has one, else ``annotate``.
        max_attempts: with ``on_fail="regenerate"``, how many answers to generate in all.
        on_exhausted: with ``on_fail="regenerate"``, what happens when no answer passes:
            ``"raise"`` (``GuardrailRejected`` with every attempt) or ``"human_review"``
            (the :class:`~chains.results.GuardedAnswer` escalation); see
            :class:`chains.results.OnExhausted`.

    Example (the model inside the chain wrapped in :func:`chains.guidance.guided`, so a
    regeneration's guidance reaches it)::

        app = {"context": retriever | format_docs, "question": RunnablePassthrough()} \\
            | prompt | guided(model) | StrOutputParser()
        safe = with_guardrail(app, retriever=retriever, on_fail="regenerate", max_attempts=3)
        safe.invoke("Who leads the Atlas project?")
    """
    guard = guardrail if guardrail is not None else Guardrail()
    settings = streaming if streaming is not None else getattr(guard.config, "streaming", None)
    return GuardedRunnable(
        chain=chain,
        guardrail=guard,
        on_fail=OnFail(on_fail),
        retriever=retriever,
        embeddings=embeddings,
        answer_key=answer_key,
        context_key=context_key,
        knowledge_base=knowledge_base,
        streaming=StreamingConfig.load(settings),
        max_attempts=max_attempts,
        on_exhausted=OnExhausted(on_exhausted),
    )
