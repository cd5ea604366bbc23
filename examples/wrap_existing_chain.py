"""Wrap an existing LangChain RAG app (``create_retrieval_chain``) with the guardrail.

The app below is the usual LangChain recipe: a retriever, a "stuff documents" chain and a chat
model. ``with_guardrail`` checks each answer against the retrieved context before it is
returned; with ``on_fail="raise"`` a rejected answer raises ``GuardrailRejected`` and
``with_fallbacks`` answers instead.

Chat model: Groq's llama-3.1-8b-instant when GROQ_API_KEY is set; otherwise a scripted
``FakeListChatModel`` from langchain-core stands in for it (no network here).

Run: python examples/wrap_existing_chain.py ["QUESTION"]
"""

from __future__ import annotations

import os
import sys

from langchain_classic.chains import create_retrieval_chain
from langchain_classic.chains.combine_documents import create_stuff_documents_chain
from langchain_core.language_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from chains import PassageIndex, corpus_path, groq_chat_model, kb_path, open_kb, with_guardrail
from guardrail import Guardrail, GuardrailRejected


def build_app(index: PassageIndex) -> object:
    """The existing app, unchanged: retrieval chain over the office corpus."""
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer using only this context:\n\n{context}"),
            ("human", "{input}"),
        ]
    )
    if os.environ.get("GROQ_API_KEY"):
        llm = groq_chat_model()
    else:  # a scripted stand-in for Groq (offline)
        llm = FakeListChatModel(
            responses=[
                "The project review meeting with John Smith is on Thursday at 10:00 in room 4B."
            ]
        )
    return create_retrieval_chain(
        index.as_retriever(k=3), create_stuff_documents_chain(llm, prompt)
    )


def main() -> int:
    question = sys.argv[1] if len(sys.argv) > 1 else "When is the meeting with John?"
    index = PassageIndex.from_paths([corpus_path()])
    app = build_app(index)

    guarded = with_guardrail(
        app,  # type: ignore[arg-type]
        guardrail=Guardrail(),
        on_fail="raise",
        knowledge_base=open_kb(kb_path()),
    )
    fallback = RunnableLambda(
        lambda x: {
            "input": x["input"],
            "answer": "I can't confirm that; a colleague will follow up.",
        }
    )
    safe = guarded.with_fallbacks([fallback], exceptions_to_handle=(GuardrailRejected,))

    try:
        out = guarded.invoke({"input": question})
        report = out["guardrail_report"]
        print(f"checked answer: {out['answer']}")
        print(
            f"action: {report.action.value}  confidence: {report.confidence:.3f}  "
            f"verdict: {report.verdict.label.value}"
        )
    except GuardrailRejected as exc:
        print(f"rejected: {exc}")
        print(f"action: {exc.report.action.value}  confidence: {exc.report.confidence:.3f}")
        print(
            f"why: {getattr(exc.report.recommendation, 'reason', '') or getattr(exc.report.recommendation, 'guidance', '')}"
        )
    out = safe.invoke({"input": question})
    print(f"with fallbacks: {out['answer']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
