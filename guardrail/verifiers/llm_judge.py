"""An LLM as the verifier: any LangChain chat model judges each pair, with structured output.

The model is asked (prompt: ``prompts/nli_judge.txt``) for a label, a confidence and the three
label probabilities, as an :class:`NLIJudgement`. Models with tool calling (Groq in
production) answer through ``with_structured_output``; others are asked for JSON in text and
parsed with a pydantic parser. Pairs are sent concurrently through ``Runnable.batch``.

Example::

    from langchain_groq import ChatGroq
    judge = LLMJudgeVerifier(ChatGroq(model="llama-3.1-8b-instant", temperature=0))
    judge.predict([("Paris is the capital of France.", "France's capital is Lyon.")])
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, Field

from guardrail.errors import ConfigError, MissingDependencyError, VerifierError
from guardrail.verifiers.base import NLIPrediction, Pair, Verifier
from guardrail.verifiers.encoding import check_pairs

logger = logging.getLogger(__name__)

PROMPT_FILE = "nli_judge.txt"


class NLIJudgement(BaseModel):
    """How a premise relates to a hypothesis, as judged by an LLM."""

    label: Literal["entailment", "neutral", "contradiction"] = Field(
        description="entailment, neutral or contradiction"
    )
    confidence: float = Field(ge=0.0, le=1.0, description="confidence in the label, 0 to 1")
    entailment: float | None = Field(default=None, ge=0.0, le=1.0)
    """Probability that the premise entails the hypothesis."""
    neutral: float | None = Field(default=None, ge=0.0, le=1.0)
    """Probability that the premise neither entails nor contradicts it."""
    contradiction: float | None = Field(default=None, ge=0.0, le=1.0)
    """Probability that the premise contradicts the hypothesis."""

    def to_prediction(self) -> NLIPrediction:
        """The three probabilities; from ``label`` + ``confidence`` when they are missing.

        With only a label and confidence ``c``, the label gets ``max(c, 0.34)`` and the other
        two share the rest equally, so the label stays the most probable.
        """
        probs = (self.entailment, self.neutral, self.contradiction)
        if all(p is not None for p in probs) and sum(p or 0.0 for p in probs) > 0:
            return NLIPrediction(
                entailment=self.entailment or 0.0,
                neutral=self.neutral or 0.0,
                contradiction=self.contradiction or 0.0,
            )
        top = max(self.confidence, 0.34)
        rest = (1.0 - top) / 2.0
        values = {name: rest for name in ("entailment", "neutral", "contradiction")}
        values[self.label] = top
        return NLIPrediction(**values)


@lru_cache(maxsize=1)
def load_prompt() -> str:
    """The judge prompt template (package data) with ``{premise}``, ``{hypothesis}`` and
    ``{format_instructions}`` fields."""
    return (
        resources.files("guardrail.verifiers")
        .joinpath("prompts", PROMPT_FILE)
        .read_text(encoding="utf-8")
    )


class LLMJudgeVerifier(Verifier):
    """A chat model as NLI verifier.

    Args:
        chat_model: a LangChain ``BaseChatModel`` (``ChatGroq`` etc.).
        max_concurrency: parallel requests in one ``predict`` call.
        max_tokens: pair length budget reported to callers that size evidence windows.
    """

    def __init__(
        self,
        chat_model: Any,
        *,
        max_concurrency: int = 4,
        max_tokens: int = 4000,
        batch_size: int | None = None,
        threads: int | None = None,
    ) -> None:
        self._model = chat_model
        self.max_concurrency = max(1, int(max_concurrency))
        self.max_tokens = int(max_tokens)
        self.name = "llm:" + str(
            getattr(chat_model, "model_name", None)
            or getattr(chat_model, "model", None)
            or type(chat_model).__name__
        )
        self.languages = ("en", "zh", "de", "fr", "es", "it", "pt", "nl", "ja", "ko", "ru")
        self._chain, self._structured = _build_chain(chat_model)

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        pairs = check_pairs(pairs)
        if not pairs:
            return []
        template = load_prompt()
        instructions = "" if self._structured else _format_instructions()
        prompts = [
            template.format(premise=p, hypothesis=h, format_instructions=instructions)
            for p, h in pairs
        ]
        results = self._chain.batch(
            prompts,
            config={"max_concurrency": self.max_concurrency, "run_name": "nli_judge"},
            return_exceptions=True,
        )
        predictions: list[NLIPrediction] = []
        for k, result in enumerate(results):
            if isinstance(result, BaseException):
                raise VerifierError(f"LLM judge {self.name} failed on pair {k}: {result}") from (
                    result if isinstance(result, Exception) else None
                )
            if not isinstance(result, NLIJudgement):
                raise VerifierError(
                    f"LLM judge {self.name} gave no structured answer for pair {k}: {result!r}"
                )
            predictions.append(result.to_prediction())
        return predictions


def _format_instructions() -> str:
    from langchain_core.output_parsers import PydanticOutputParser

    return PydanticOutputParser(pydantic_object=NLIJudgement).get_format_instructions()


def _build_chain(chat_model: Any) -> tuple[Any, bool]:
    """(runnable mapping a prompt string to an ``NLIJudgement``, uses structured output)."""
    try:
        return chat_model.with_structured_output(NLIJudgement), True
    except NotImplementedError:
        from langchain_core.output_parsers import PydanticOutputParser

        logger.info("%s has no structured output; parsing JSON from text", type(chat_model))
        return chat_model | PydanticOutputParser(pydantic_object=NLIJudgement), False


def chat_model_from_spec(spec: str) -> Any:
    """A chat model from ``provider:model`` (``groq:llama-3.1-8b-instant``)."""
    provider, _, model = spec.partition(":")
    if provider != "groq" or not model:
        raise ConfigError(
            f"unknown LLM judge spec 'llm:{spec}'; use 'llm:groq:<model>' or pass a chat model"
        )
    try:
        from langchain_groq import ChatGroq
    except ImportError as exc:
        raise MissingDependencyError("langchain-groq", "groq") from exc
    return ChatGroq(model=model, temperature=0.0)  # type: ignore[call-arg]
