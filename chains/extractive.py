"""A deterministic extractive answerer: the evidence sentences that best match the question.

The offline generator that always works (an offline mock answer, made useful): when neither
Groq nor the local SmolLM2 model is available (not installed, or unable to run on this machine:
:class:`~chains.errors.LocalModelUnavailable`), :class:`ExtractiveChatModel` answers with the
top one or two sentences of the context, ranked by the question words they contain (then by
passage order). It never invents anything, so its answers are what the guardrail should
accept. On a regeneration prompt it skips the sentences of the rejected answer.

It is a LangChain chat model reading the grounded prompt of :func:`chains.generation.answer_prompt`
(``Context: … Question: …``), so it drops into any chain in place of an LLM, and it streams
word by word.

Example::

    model = ExtractiveChatModel(reason="llama-cpp-python is not installed")
    (answer_prompt() | model).invoke({"context": "[1] The meeting is at 2pm.",
                                      "question": "When is the meeting?", "guidance": ""})
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from guardrail.text.sentences import split_sentences

#: A further sentence is added only when it matches the question at least this well,
#: relative to the best sentence.
RELATIVE_SCORE = 0.75

#: What the extractive answerer says when no sentence of the context matches the question.
NO_ANSWER = "I do not know: the context does not answer the question."

_STOPWORDS = frozenset(
    """a an the is are was were be been being am do does did of in on at to for from by with
    and or but not no what when where who whom whose which why how this that these those it its
    i you he she we they me him her us them my your his our their there here as about into
    than then so if can could would should will shall may might must have has had any some
    please tell me know""".split()
)
_PROMPT = re.compile(
    r"Context:\s*\n(?P<context>.*?)\n\s*\nQuestion:\s*(?P<question>.*?)"
    r"(?:\n\s*\nYour previous answer was rejected[^\n]*?Previous answer:\s*(?:<previous_answer>)?"
    r"(?P<previous>.*?)(?:</previous_answer>\s*)?\nFix it as follows:.*)?\s*$",
    re.DOTALL,
)
_NUMBERED = re.compile(r"\n\s*\n(?=\[\d+\]\s)")


def _words(text: str) -> set[str]:
    """Content words, lower-cased, plural ``s`` dropped; ``a.b@c.com`` also gives a, b, c."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words} - _STOPWORDS


def _clean(text: str) -> str:
    return " ".join(text.split())


def extractive_answer(
    question: str,
    passages: Sequence[Any],
    max_sentences: int = 2,
    exclude: Sequence[str] = (),
) -> str:
    """The ``max_sentences`` context sentences sharing most words with ``question``.

    Args:
        question: the user's question.
        passages: strings or objects with a ``text`` attribute (e.g. ``Passage``).
        max_sentences: at most this many sentences, in their order in the context.
        exclude: sentences not to use again (a rejected answer's).

    Returns :data:`NO_ANSWER` when no sentence shares a word with the question.
    """
    wanted = _words(question)
    banned = {_clean(s) for e in exclude for s in (x.text for x in split_sentences(e))}
    candidates: list[tuple[int, int, str, set[str]]] = []
    for pi, passage in enumerate(passages):
        text = passage if isinstance(passage, str) else str(getattr(passage, "text", ""))
        for si, sentence in enumerate(split_sentences(text)):
            clean = _clean(sentence.text)
            if clean and not clean.startswith("#") and clean not in banned:
                candidates.append((pi, si, clean, _words(clean)))
    # Words that are rare in the context (names, e-mail parts) count more than common ones.
    df: dict[str, int] = {}
    for *_, words in candidates:
        for w in words & wanted:
            df[w] = df.get(w, 0) + 1
    n = len(candidates)
    ranked = [
        (sum(math.log(1 + n / df[w]) for w in words & wanted), pi, si, clean)
        for pi, si, clean, words in candidates
        if words & wanted
    ]
    ranked.sort(key=lambda r: (-r[0], r[1], r[2]))
    if not ranked:
        return NO_ANSWER
    top = ranked[0][0]
    best = [r for r in ranked[:max_sentences] if r[0] >= RELATIVE_SCORE * top]
    return " ".join(r[3] for r in sorted(best, key=lambda r: (r[1], r[2])))


def parse_prompt(text: str) -> tuple[str, list[str], str | None]:
    """(question, passages, previous answer) from a ``Context: … Question: …`` prompt.

    Numbered passages (``[1] …``) are split at their numbers, others at blank lines. A prompt
    in another format is read as a bare question with no context.
    """
    match = _PROMPT.search(text)
    if match is None:
        return text.strip(), [], None
    context = match.group("context").strip()
    if re.match(r"\[\d+\]\s", context):
        parts = [re.sub(r"^\[\d+\]\s*", "", p) for p in _NUMBERED.split(context)]
    else:
        parts = re.split(r"\n\s*\n", context)
    passages = [p.strip() for p in parts if p.strip()]
    previous = match.group("previous")
    return match.group("question").strip(), passages, previous.strip() if previous else None


def answer_messages(messages: list[BaseMessage], max_sentences: int = 2) -> str:
    """The extractive answer to the last human message of a grounded prompt."""
    human = next((m for m in reversed(messages) if m.type == "human"), None)
    if human is None:
        return NO_ANSWER
    question, passages, previous = parse_prompt(human.text)
    return extractive_answer(question, passages, max_sentences, [previous] if previous else ())


class ExtractiveChatModel(BaseChatModel):
    """A chat model that answers with the context sentences best matching the question."""

    max_sentences: int = 2
    """How many context sentences an answer has at most."""
    reason: str = ""
    """Why this fallback is in use (shown in ``model_id`` and by ``guardrail ask``)."""

    @property
    def _llm_type(self) -> str:
        return "extractive"

    @property
    def model_name(self) -> str:
        """A readable id: ``extractive-fallback`` (with the reason when there is one)."""
        return f"extractive-fallback ({self.reason})" if self.reason else "extractive-fallback"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = answer_messages(messages, self.max_sentences)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        text = answer_messages(messages, self.max_sentences)
        for token in re.findall(r"\S+\s*", text):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            if run_manager is not None:
                run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk
