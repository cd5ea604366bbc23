"""Ready LangChain chains built on guardrail: retrieval, generation, guarded RAG, wrappers.

Names are imported on first use, so ``import chains`` loads no model and no heavy library::

    from chains import GuardedRAG, PassageIndex, default_chat_model, with_guardrail
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
    "with_guardrail": "chains.middleware",
    "GuardedRunnable": "chains.middleware",
    "guardrail_middleware": "chains.agent_middleware",
    "kb_path": "chains.retrieval",
}

__all__ = [
    "Attempt",
    "Escalation",
    "GuardedAnswer",
    "GuardedRAG",
    "GuardedRunnable",
    "OnFail",
    "PassageIndex",
    "SentenceEmbeddings",
    "corpus_path",
    "default_chat_model",
    "groq_chat_model",
    "guardrail_middleware",
    "kb_path",
    "load_documents",
    "local_chat_model",
    "smollm2_gguf_path",
    "with_guardrail",
]

if TYPE_CHECKING:
    from chains.agent_middleware import guardrail_middleware
    from chains.embeddings import SentenceEmbeddings
    from chains.generation import (
        default_chat_model,
        groq_chat_model,
        local_chat_model,
        smollm2_gguf_path,
    )
    from chains.guarded_rag import GuardedRAG
    from chains.middleware import GuardedRunnable, with_guardrail
    from chains.results import Attempt, Escalation, GuardedAnswer, OnFail
    from chains.retrieval import PassageIndex, corpus_path, kb_path, load_documents


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chains' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
