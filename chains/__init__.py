"""Ready LangChain chains built on guardrail: retrieval, generation, guarded RAG, wrappers.

Names are imported on first use, so ``import chains`` loads no model and no heavy library::

    from chains import GuardedRAG, PassageIndex, default_chat_model, guided, with_guardrail

The names the guides use: :func:`with_guardrail` and :func:`guided` (wrap a chain you have,
regenerating with guidance), :func:`guardrail_middleware` and :func:`guard_agent` (a LangChain
v1 agent), :class:`GuardedRAG` (the ready chain), :func:`open_kb`, :class:`StreamingConfig`,
:class:`SentenceEmbeddings`, and the typed results (:class:`GuardedAnswer`, :class:`Attempt`,
:class:`Escalation`, :class:`Outcome`, :class:`OnFail`, :class:`OnExhausted`), and
:class:`LocalModelUnavailable` (the local model cannot generate on this machine).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "SentenceEmbeddings": "chains.embeddings",
    "PassageIndex": "chains.retrieval",
    "corpus_path": "chains.retrieval",
    "load_documents": "chains.retrieval",
    "default_chat_model": "chains.generation",
    "local_chat_model": "chains.generation",
    "groq_chat_model": "chains.generation",
    "smollm2_gguf_path": "chains.generation",
    "GuardedRAG": "chains.guarded_rag",
    "Attempt": "chains.results",
    "Escalation": "chains.results",
    "GuardedAnswer": "chains.results",
    "OnFail": "chains.results",
    "OnExhausted": "chains.results",
    "Outcome": "chains.results",
    "report_of": "chains.results",
    "Regeneration": "chains.regenerate",
    "guided": "chains.guidance",
    "GuidedModel": "chains.guidance",
    "StreamingConfig": "chains.stream_checks",
    "open_kb": "chains.retrieval",
    "guard_agent": "chains.agent_middleware",
    "with_guardrail": "chains.middleware",
    "GuardedRunnable": "chains.middleware",
    "guardrail_middleware": "chains.agent_middleware",
    "kb_path": "chains.retrieval",
    "LocalModelUnavailable": "chains.errors",
}

__all__ = [
    "Attempt",
    "Escalation",
    "GuardedAnswer",
    "GuardedRAG",
    "GuardedRunnable",
    "GuidedModel",
    "LocalModelUnavailable",
    "OnExhausted",
    "OnFail",
    "Outcome",
    "PassageIndex",
    "Regeneration",
    "SentenceEmbeddings",
    "StreamingConfig",
    "corpus_path",
    "default_chat_model",
    "groq_chat_model",
    "guard_agent",
    "guardrail_middleware",
    "guided",
    "kb_path",
    "load_documents",
    "local_chat_model",
    "open_kb",
    "report_of",
    "smollm2_gguf_path",
    "with_guardrail",
]

if TYPE_CHECKING:
    from chains.agent_middleware import guard_agent, guardrail_middleware
    from chains.embeddings import SentenceEmbeddings
    from chains.errors import LocalModelUnavailable
    from chains.generation import (
        default_chat_model,
        groq_chat_model,
        local_chat_model,
        smollm2_gguf_path,
    )
    from chains.guarded_rag import GuardedRAG
    from chains.guidance import GuidedModel, guided
    from chains.middleware import GuardedRunnable, with_guardrail
    from chains.regenerate import Regeneration
    from chains.results import (
        Attempt,
        Escalation,
        GuardedAnswer,
        OnExhausted,
        OnFail,
        Outcome,
        report_of,
    )
    from chains.retrieval import PassageIndex, corpus_path, kb_path, load_documents, open_kb
    from chains.stream_checks import StreamingConfig


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chains' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
