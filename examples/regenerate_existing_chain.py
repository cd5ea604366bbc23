"""Regenerate with guidance inside a chain you already have: ``guided(model)`` + ``with_guardrail``.

The app is LangChain's tutorial RAG chain (a string in, a string out). Two changes make it
regenerate when the guardrail rejects an answer:

1. the chat model is wrapped in ``guided(...)`` — on a regeneration it is shown the rejected
   answer and what to fix as a system message, read from the run's config (the question, the
   retrieval query and the question the guardrail checks stay the user's);
2. the chain is wrapped in ``with_guardrail(..., on_fail="regenerate", max_attempts=3)``.

Chat model: Groq's llama-3.1-8b-instant when GROQ_API_KEY is set; otherwise langchain-core's
scripted ``GenericFakeChatModel`` plays an LLM that first names the wrong project lead and then
answers correctly (real LLMs cannot be scripted). Retrieval (FAISS over the office corpus), the
knowledge base and the guardrail are real.

Run: python examples/regenerate_existing_chain.py ["QUESTION"]
"""

from __future__ import annotations

import os
import sys
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough

from chains import (
    GuardedAnswer,
    PassageIndex,
    corpus_path,
    groq_chat_model,
    guided,
    kb_path,
    open_kb,
    with_guardrail,
)
from guardrail import Guardrail
from guardrail.tracing import RunTreeCollector

QUESTION = "Who leads the Atlas project?"
SCRIPT = [
    # a bare wrong name alone would be repaired from the documents ("John leads the Atlas
    # project.", correct_and_deliver); with an office they do not state it is sent back
    "The Atlas project is led by Maria Garcia from the London office.",
    "John Smith leads the Atlas project.",
]


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(doc.page_content for doc in docs)


def build_app(retriever: Runnable[Any, Any], model: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """The tutorial chain; the only change is ``guided(model)`` instead of ``model``."""
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer using only this context:\n\n{context}"),
            ("human", "{question}"),
        ]
    )
    return (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | guided(model)
        | StrOutputParser()
    )


class SystemPrompts(BaseCallbackHandler):
    """Keeps the system message of every chat model call (to show what the model was told)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        for call in messages:
            self.seen.append(next((m.text for m in call if m.type == "system"), ""))


def main() -> int:
    question = sys.argv[1] if len(sys.argv) > 1 else QUESTION
    retriever = PassageIndex.from_paths([corpus_path()]).as_retriever(k=3)
    if os.environ.get("GROQ_API_KEY"):
        model: Runnable[Any, Any] = groq_chat_model()
    else:  # a scripted stand-in for Groq (offline): wrong first, right second
        model = GenericFakeChatModel(messages=iter([AIMessage(content=a) for a in SCRIPT]))

    safe = with_guardrail(
        build_app(retriever, model),
        guardrail=Guardrail(),
        retriever=retriever,  # the evidence to check against: the same documents
        knowledge_base=open_kb(kb_path()),
        on_fail="regenerate",
        max_attempts=3,
        on_exhausted="human_review",  # or "raise": GuardrailRejected with every attempt
    )
    collector, prompts = RunTreeCollector(), SystemPrompts()
    result = safe.invoke(question, {"callbacks": [collector, prompts]})

    top = collector.roots[-1]  # the trace: one child run per attempt
    attempts = [run.output for run in top.children]
    for run, attempt in zip(top.children, attempts, strict=True):
        if attempt.guidance:
            rejected = attempts[attempt.number - 2].answer
            quoted = rejected in prompts.seen[attempt.number - 1]
            print(f"  regenerated with guidance: {attempt.guidance}")
            print(f"  (a system message for that call, quoting the rejected answer: {quoted})")
        print(f"{run.name}: {attempt.answer!r} -> {attempt.action.value}")
    outcome = (top.outputs or {})["guardrail"]
    print(
        f"top run outcome: action={outcome['action']} verdict={outcome['verdict']} "
        f"confidence={outcome['confidence']:.3f} feedback on run {outcome['feedback_run_id']}"
    )
    if isinstance(result, GuardedAnswer):  # escalated: a person should look at it
        reason = result.escalation.reason if result.escalation else ""
        print(f"escalated: {reason}")
    else:
        print(f"delivered: {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
