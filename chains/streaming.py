"""Guard an answer while it streams: pass tokens through, check each sentence once complete.

A sentence is complete as soon as its end punctuation arrives and the sentence splitter agrees
that a following capitalised word would start a new sentence (so ``Dr.`` and ``e.g.`` never
cut one early; a dot right after a digit waits one token, as ``3.`` may become ``3.5``), or
when the next sentence has begun, or when the stream ends. The token that completes a sentence
is shown before its check runs. Sentences that complete together are checked together in one
``Guardrail.invoke`` (the response is those sentences, with the same query, passages and
knowledge base), so the verifier scores all their claims in one batch. Each result is a
:class:`SentenceCheck`, dispatched as the custom event ``on_sentence_checked`` (visible in
``astream_events(version="v2")``). When the stream ends, one full ``Guardrail.invoke`` on the
whole streamed answer gives the final :class:`~guardrail.report.GuardReport`.

A sentence's result follows the claim outcomes of its check (see :mod:`chains.stream_checks`):
a sentence whose claim that check would *remove* (confidently unsupported or contradicted, a
blocking flag, a value the knowledge base contradicts) **fails**; a sentence whose claim it
would show *annotated* (uncertain, unverified) **passes with a note**, the same label
``Guardrail.invoke`` writes (``[uncertain: not confirmed by the sources]``). What a failed
sentence does is :attr:`StreamingConfig.policy`:

- ``annotate``: tokens stream as they arrive; a marker follows the failed sentence
  (``StreamingConfig.annotation``);
- ``stop``: tokens stream as they arrive; the stream ends after the failed sentence with a
  notice, then the final report;
- ``buffer``: nothing reaches the user before its sentence is checked; a failed sentence is
  withheld and replaced by a notice.

A noted sentence is never withheld nor stops the stream: under ``annotate`` and ``stop`` the
note follows the sentence (its tokens are already shown), under ``buffer`` it is placed before
the sentence's end punctuation, as ``Guardrail.invoke`` places it.

What equals ``Guardrail.invoke`` and what does not:

- **guaranteed**: the final report (``final_check``, on by default) *is*
  ``Guardrail.invoke`` on the streamed answer with the same query, passages, knowledge base
  and dialogue (under ``stop``, on the answer as cut after the failed sentence), so its action,
  claim outcomes, corrections and ``delivered_text`` are invoke's;
  :attr:`SentenceGuard.delivered_text` is that text, the one to keep on screen once the stream
  ends (``None``: nothing may be kept, the answer is to be regenerated or reviewed);
- **not guaranteed**: the streamed text. Each sentence is judged by a check of that sentence
  (or the sentences completing with it) alone, so a claim whose reading depends on earlier
  sentences may be judged differently, and the answer-level part of the decision (too much
  removed, what remains no longer answers the question, fail-closed on the whole answer)
  cannot be known before the end: the stream may show sentences of an answer whose final
  report says ``regenerate``. Failure markers and notices are the streaming ones
  (:class:`StreamingConfig`), and a note follows a sentence already shown; repairs
  (knowledge-base values) are not applied to streamed text — such a sentence fails instead.
  Once the stream ends, replace what was shown by :attr:`SentenceGuard.delivered_text`.

Example::

    tokens = ["The meeting ", "is at 2pm. ", "It is in room 9."]
    for item in guard_stream(tokens, Guardrail(), {"query": q, "passages": docs}, "annotate"):
        print(item)   # text pieces, SentenceCheck objects, then the final GuardReport
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any, Never

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import patch_config

from chains.drive import Call, Driven, Logic, mapped
from chains.stream_checks import (
    SENTENCE_EVENT,
    SentenceCheck,
    StreamingConfig,
    StreamPolicy,
    coerce_base,
    error_checks,
    sentence_checks,
)
from guardrail.correction.annotate import annotation_marker, marker_gap
from guardrail.errors import GuardrailError
from guardrail.observability import LOG_CHECK
from guardrail.report import GuardReport
from guardrail.text.segmentation import completed_sentences
from guardrail.text.sentences import Sentence

#: Run name of a per-sentence check (so traces, feedback and spans tell it from the final one).
CHECK_RUN = "sentence_check"

#: What a guarded stream yields: text for the user, each sentence's check, the final report.
StreamItem = str | SentenceCheck | GuardReport


class StreamsThroughGuard:
    """``stream``/``astream`` for a guarded Runnable: one loop, sync and async (and the
    drivers of its ``invoke`` logic, ``_run_steps``, for ``_run`` / ``_arun``).

    The loop pulls the wrapped Runnable's chunks, feeds their answer text to a
    :class:`SentenceGuard` (each sentence checked once complete), stops when the guard stops,
    closes the guard, then yields the Runnable's own last items. The stream runs inside
    LangChain's callback machinery so every sentence check and the final result appear in the
    trace. ``state`` is a dict created per stream (it holds that stream's guard under
    ``"guard"``); nothing per stream is stored on ``self``.

    The Runnable supplies ``_root(config)`` (its root run config), ``_chunks`` / ``_achunks``
    (the chunks to guard) and ``_guard`` (the stream's guard, made on first text); it may
    override ``_text``, ``_shown``, ``_closing`` and ``_tail`` / ``_atail``.
    """

    def _chunks(self, value: Any, state: dict[str, Any], child: RunnableConfig) -> Iterator[Any]:
        """The wrapped Runnable's streamed chunks for ``value``."""
        raise NotImplementedError

    def _achunks(
        self, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> AsyncIterator[Any]:
        """Async :meth:`_chunks`."""
        raise NotImplementedError

    def _guard(
        self, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> Logic[Never, SentenceGuard]:
        """The stream's guard (``state["guard"]``), made when the first text arrives (sans-IO:
        fetching its evidence, e.g. from a retriever, is a yielded call)."""
        raise NotImplementedError

    def _text(self, chunk: Any, state: dict[str, Any]) -> tuple[str | None, Any]:
        """A chunk's answer text and what passes through as is (``None``: nothing)."""
        return chunk, None

    def _shown(self, item: StreamItem, state: dict[str, Any]) -> Any:
        """A guard's item as this Runnable streams it (``None``: not streamed)."""
        return item

    def _closing(self, state: dict[str, Any]) -> SentenceGuard | None:
        """The guard to close when the chunks end (``None``: none)."""
        guard: SentenceGuard | None = state.get("guard")
        return guard

    def _tail(self, state: dict[str, Any], child: RunnableConfig) -> list[Any]:
        """What follows the closed guard's items (the Runnable's result, if any)."""
        return []

    async def _atail(self, state: dict[str, Any], child: RunnableConfig) -> list[Any]:
        """Async :meth:`_tail`."""
        return []

    def _chunk_steps(
        self, chunk: Any, value: Any, state: dict[str, Any], child: RunnableConfig
    ) -> Logic[Any, bool]:
        """One chunk: what passes through, then the guard's items as shown (the guard made on
        the first text); returns whether the guard has stopped."""
        text, passthrough = self._text(chunk, state)
        if passthrough is not None:
            yield passthrough
        if not text:
            return False
        guard = yield from self._guard(value, state, child)
        yield from mapped(guard.feed_steps(text), lambda item: self._shown(item, state))
        return guard.stopped

    def _end_steps(self, state: dict[str, Any], child: RunnableConfig) -> Logic[Any, None]:
        """The chunks have ended: the closed guard's items as shown, then the tail."""
        closing = self._closing(state)
        if closing is not None:
            yield from mapped(closing.close_steps(), lambda item: self._shown(item, state))
        tail: list[Any] = yield Call(self._tail, self._atail, (state, child))
        yield from tail

    def _run_steps(self, value: Any, child: RunnableConfig) -> Logic[Never, Any]:
        """The Runnable's ``invoke`` as sans-IO logic (``child``: the config of its children)."""
        raise NotImplementedError

    def _run(self, value: Any, run_manager: Any, config: RunnableConfig) -> Any:
        child = patch_config(config, callbacks=run_manager.get_child())
        return Driven(self._run_steps(value, child)).run()

    async def _arun(self, value: Any, run_manager: Any, config: RunnableConfig) -> Any:
        child = patch_config(config, callbacks=run_manager.get_child())
        return await Driven(self._run_steps(value, child)).arun()

    def _stream(
        self, inputs: Iterator[Any], run_manager: Any, config: RunnableConfig
    ) -> Generator[Any, None, None]:
        value = next(inputs)
        child = patch_config(config, callbacks=run_manager.get_child())
        state: dict[str, Any] = {}
        for chunk in self._chunks(value, state, child):
            if (yield from Driven(self._chunk_steps(chunk, value, state, child)).drive()):
                break
        yield from Driven(self._end_steps(state, child)).drive()

    async def _astream(
        self, inputs: AsyncIterator[Any], run_manager: Any, config: RunnableConfig
    ) -> AsyncIterator[Any]:
        value = await anext(inputs)
        child = patch_config(config, callbacks=run_manager.get_child())
        state: dict[str, Any] = {}
        async for chunk in self._achunks(value, state, child):
            fed = Driven(self._chunk_steps(chunk, value, state, child))
            async for out in fed.adrive():
                yield out
            if fed.result:
                break
        async for out in Driven(self._end_steps(state, child)).adrive():
            yield out

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Stream the answer's text as it is written, each sentence checked once complete
        (``on_sentence_checked`` events; a failed sentence handled by the streaming policy,
        :class:`chains.stream_checks.StreamingConfig`), then the final result."""
        runnable: Any = self
        yield from runnable._transform_stream_with_config(
            iter([input]), runnable._stream, runnable._root(config), **kwargs
        )

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        runnable: Any = self

        async def one() -> AsyncIterator[Any]:
            yield input

        async for chunk in runnable._atransform_stream_with_config(
            one(), runnable._astream, runnable._root(config), **kwargs
        ):
            yield chunk


def _with_note(segment: str, note: str | None) -> str:
    """``segment`` (a sentence and its leading space) with ``note`` before its end
    punctuation, where ``Guardrail.invoke`` puts the note of a sentence-long claim."""
    if not note:
        return segment
    end = len(segment.rstrip())
    while end > 0 and segment[end - 1] in ".,;:!? ":
        end -= 1
    return segment[:end] + annotation_marker(segment, end, note) + segment[end:]


class SentenceGuard:
    """One guarded stream: feed it text deltas, get back what to show and the checks.

    Create one per stream (it holds that stream's text). ``base`` is the guardrail input
    without the response (query, passages, knowledge base, dialogue, session / turn ids).
    ``config`` is the LangChain config of the enclosing run: when given, each check is a child
    run and dispatches ``on_sentence_checked``.
    """

    def __init__(
        self,
        guardrail: Any,
        base: dict[str, Any],
        settings: StreamingConfig | dict[str, Any] | str | None = None,
        config: RunnableConfig | None = None,
    ) -> None:
        self.guardrail = guardrail
        self.base = coerce_base(base)
        self.settings = StreamingConfig.load(settings)
        self.config = config
        self.text = ""
        self.checks: list[SentenceCheck] = []
        self.stopped = False
        self._done = 0  # end of the last completed sentence
        self._released = 0  # under buffer: how much text has been shown
        self._held = ""  # otherwise: trailing whitespace not shown yet
        self._end: int | None = None  # under stop: where the answer was cut
        self.final_report: GuardReport | None = None

    # --- pure bookkeeping -------------------------------------------------------------------

    def _push(self, delta: str) -> tuple[str, list[Sentence]]:
        self.text += delta
        shown = ""
        if self.settings.policy is not StreamPolicy.BUFFER:
            # Trailing whitespace waits for the next token, so a marker sits right after
            # the sentence it is about.
            pending = self._held + delta
            shown = pending.rstrip()
            self._held = pending[len(shown) :]
        return shown, self._complete(final=False)

    def _complete(self, final: bool) -> list[Sentence]:
        parts = completed_sentences(self.text[self._done :], final)
        found = [Sentence(p.text, p.start + self._done, p.end + self._done) for p in parts]
        if found:
            self._done = found[-1].end
        return found

    def _resolve(self, checks: list[SentenceCheck]) -> list[StreamItem]:
        s = self.settings
        out: list[StreamItem] = []
        for check in checks:
            self.checks.append(check)
            out.append(check)
            if s.policy is StreamPolicy.BUFFER:
                segment = self.text[self._released : check.span.end]
                lead = segment[: len(segment) - len(segment.lstrip())]
                out.append(
                    _with_note(segment, check.note)
                    if check.passed
                    else lead + s.withheld_notice.format(reason=check.reason)
                )
                self._released = check.span.end
            elif check.passed:
                if check.note:
                    out.append(annotation_marker(self.text, check.span.end, check.note))
            elif s.policy is StreamPolicy.ANNOTATE:
                note = s.annotation.format(reason=check.reason)
                if note.startswith(" "):  # the marker's gap: none after CJK text
                    note = marker_gap(self.text, check.span.end) + note.lstrip(" ")
                out.append(note)
            else:
                out.append(s.stop_notice.format(reason=check.reason))
                self.stopped = True
                self._end = check.span.end
                break
        return [item for item in out if not isinstance(item, str) or item]

    def _tail(self) -> list[StreamItem]:
        if self.stopped:
            return []
        if self.settings.policy is not StreamPolicy.BUFFER:
            held, self._held = self._held, ""
            return [held] if held else []
        rest, self._released = self.text[self._released :], len(self.text)
        return [rest] if rest else []

    def _check_config(self) -> RunnableConfig | None:
        """Sentence checks are runs named ``sentence_check`` (the final check is ``guardrail``),
        not logged as checked answers (their final check is)."""
        if self.config is None:
            return None
        config = patch_config(self.config, run_name=CHECK_RUN)
        config["metadata"] = {**(config.get("metadata") or {}), LOG_CHECK: False}
        return config

    def _check_input(self, sentences: list[Sentence]) -> dict[str, Any]:
        chunk = self.text[sentences[0].start : sentences[-1].end]
        return {**self.base, "response": chunk}

    def _checks(
        self, sentences: list[Sentence], report: GuardReport | Exception, t0: float
    ) -> list[SentenceCheck]:
        first = len(self.checks)
        if isinstance(report, Exception):
            checks = error_checks(sentences, first, report)
        else:
            checks = sentence_checks(report, sentences, sentences[0].start, first)
        ms = (time.perf_counter() - t0) * 1000.0
        return [c.model_copy(update={"check_ms": round(ms, 3)}) for c in checks]

    @property
    def delivered_text(self) -> str | None:
        """What to keep on screen once the stream has ended: the final report's
        ``delivered_text`` — ``Guardrail.invoke``'s on the same answer (``None`` before the
        final check, without one, or when the answer must not be shown)."""
        return self.final_report.delivered_text if self.final_report is not None else None

    @property
    def answer(self) -> str:
        """The answer streamed so far (cut after the failed sentence under ``stop``)."""
        return self.text if self._end is None else self.text[: self._end]

    def _final_input(self) -> dict[str, Any] | None:
        if not self.settings.final_check or not self.answer.strip():
            return None
        return {**self.base, "response": self.answer}

    # --- the logic, once (sans-IO: see :class:`Driven`) -----------------------------------

    def _check_steps(self, sentences: list[Sentence]) -> Logic[StreamItem, None]:
        t0 = time.perf_counter()
        try:
            report: GuardReport | Exception = yield Call.invoke(
                self.guardrail, self._check_input(sentences), self._check_config()
            )
        except GuardrailError as exc:
            report = exc
        checks = self._checks(sentences, report, t0)
        if self.config is not None:
            for check in checks:
                yield Call.event(SENTENCE_EVENT, check.model_dump(mode="json"), self.config)
        yield from self._resolve(checks)

    def feed_steps(self, delta: str) -> Logic[StreamItem, None]:
        """:meth:`feed` as sans-IO logic (the checks it needs are :class:`Call` steps)."""
        if self.stopped or not delta:
            return
        shown, sentences = self._push(delta)
        if shown:
            yield shown
        if sentences:
            yield from self._check_steps(sentences)

    def close_steps(self) -> Logic[StreamItem, None]:
        """:meth:`close` as sans-IO logic (the checks it needs are :class:`Call` steps)."""
        if not self.stopped:
            sentences = self._complete(final=True)
            if sentences:
                yield from self._check_steps(sentences)
        yield from self._tail()
        data = self._final_input()
        if data is not None:
            self.final_report = yield Call.invoke(self.guardrail, data, self.config)
            yield self.final_report

    # --- the drivers ------------------------------------------------------------------------

    def feed(self, delta: str) -> Iterator[StreamItem]:
        """Take the next text delta. Yields the text to show at once, then — once the check of
        any sentence it completed is done — the checks and what the policy adds."""
        yield from Driven[StreamItem, None](self.feed_steps(delta)).drive()

    def close(self) -> Iterator[StreamItem]:
        """The stream has ended: check the last sentence, release held text, final report."""
        yield from Driven[StreamItem, None](self.close_steps()).drive()

    async def afeed(self, delta: str) -> AsyncIterator[StreamItem]:
        """Async :meth:`feed`."""
        async for item in Driven[StreamItem, None](self.feed_steps(delta)).adrive():
            yield item

    async def aclose(self) -> AsyncIterator[StreamItem]:
        """Async :meth:`close`."""
        async for item in Driven[StreamItem, None](self.close_steps()).adrive():
            yield item


def guard_stream(
    deltas: Iterator[str] | list[str],
    guardrail: Any,
    base: dict[str, Any],
    settings: StreamingConfig | dict[str, Any] | str | None = None,
    config: RunnableConfig | None = None,
) -> Iterator[StreamItem]:
    """Guard a stream of text deltas: yields text, :class:`SentenceCheck`\\ s, then the report."""
    guard = SentenceGuard(guardrail, base, settings, config)
    for delta in deltas:
        yield from guard.feed(delta)
        if guard.stopped:
            break
    yield from guard.close()


async def aguard_stream(
    deltas: AsyncIterator[str],
    guardrail: Any,
    base: dict[str, Any],
    settings: StreamingConfig | dict[str, Any] | str | None = None,
    config: RunnableConfig | None = None,
) -> AsyncIterator[StreamItem]:
    """Async :func:`guard_stream`."""
    guard = SentenceGuard(guardrail, base, settings, config)
    async for delta in deltas:
        async for item in guard.afeed(delta):
            yield item
        if guard.stopped:
            break
    async for item in guard.aclose():
        yield item
