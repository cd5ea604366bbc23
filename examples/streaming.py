"""Stream a guarded answer: tokens as they arrive, each sentence's verdict once it is complete.

The app is LangChain's usual retrieval chain over the office corpus shipped in
``chains/data/corpus``. Its chat model is Groq's llama-3.1-8b-instant when GROQ_API_KEY is set;
offline, langchain-core's ``GenericFakeChatModel`` stands in for it and streams a scripted
answer word by word — with one wrong sentence (the place), to show what each policy does:

- ``annotate``: everything streams, the wrong sentence is marked right after it;
- ``stop``: the stream ends after the wrong sentence, with a notice;
- ``buffer``: nothing unchecked is shown; the wrong sentence is withheld.

The per-sentence checks come from ``astream_events(version="v2")`` as ``on_sentence_checked``
custom events; the last chunk is the report on the whole answer.

Run: HF_HUB_OFFLINE=1 python examples/streaming.py [annotate|stop|buffer]
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

from langchain_classic.chains import create_retrieval_chain
from langchain_classic.chains.combine_documents import create_stuff_documents_chain
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate

from chains import (
    PassageIndex,
    SentenceEmbeddings,
    corpus_path,
    groq_chat_model,
    kb_path,
    open_kb,
    with_guardrail,
)
from guardrail import Guardrail

QUESTION = "When and where is the project review meeting with John?"
SCRIPTED = (
    "The project review meeting with John Smith is on Thursday at 10:00. "
    "The review meeting is in the cafeteria. "
    "It covers the Atlas migration timeline and the Q3 budget."
)


def app(index: PassageIndex) -> Any:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer using only this context:\n\n{context}"), ("human", "{input}")]
    )
    if os.environ.get("GROQ_API_KEY"):
        llm: Any = groq_chat_model()
    else:  # a scripted stand-in for Groq (offline), streaming word by word
        llm = GenericFakeChatModel(messages=iter([AIMessage(content=SCRIPTED)]))
    return create_retrieval_chain(
        index.as_retriever(k=3), create_stuff_documents_chain(llm, prompt)
    )


def mark(check: dict[str, Any]) -> str:
    claims = ", ".join(
        f"{c['status']} (p_entail={c['entailment']:.2f})" if c.get("entailment") is not None
        else c["status"]
        for c in check["claims"]
    )  # fmt: skip
    verdict = "ok  " if check["passed"] else "FAIL"
    why = f" — {check['reason']}" if check["reason"] else ""
    return (f"  [{verdict}] sentence {check['index'] + 1}: {check['status']}{why}; "
            f"claims: {claims or 'none'}; checked in {check['check_ms']:.0f} ms")  # fmt: skip


async def run(policy: str, index: PassageIndex, guard: Guardrail, kb: Any) -> None:
    print(f"\n=== policy: {policy} ===")
    safe = with_guardrail(app(index), guard, knowledge_base=kb, streaming=policy)
    start = time.perf_counter()
    report = None
    mid_line = False  # whether streamed text is waiting on the current line
    async for event in safe.astream_events({"input": QUESTION}, version="v2"):
        kind, name = event["event"], event["name"]
        if kind == "on_custom_event" and name == "on_sentence_checked":
            print(("\n" if mid_line else "") + mark(event["data"]), flush=True)
            mid_line = False
        elif kind == "on_chain_stream" and name == "guarded_chain":
            chunk = event["data"]["chunk"]
            if chunk.get("answer"):
                sys.stdout.write(chunk["answer"].lstrip(" ") if not mid_line else chunk["answer"])
                sys.stdout.flush()
                mid_line = True
            report = chunk.get("guardrail_report", report)
    print(("\n" if mid_line else "") + f"[{(time.perf_counter() - start) * 1000:.0f} ms] final report on the whole answer: "
          f"{report.verdict.label.value}, {report.action.value} "
          f"(confidence {report.confidence:.2f})")  # fmt: skip


def main() -> int:
    policies = sys.argv[1:] or ["annotate", "stop", "buffer"]
    guard = Guardrail()
    index = PassageIndex.from_paths([corpus_path()], SentenceEmbeddings.of_guardrail(guard))
    kb = open_kb(kb_path())
    guard.invoke({"query": "warm-up", "response": "Models load once.", "passages": ["x"]})
    print(f"question: {QUESTION}")
    for policy in policies:
        asyncio.run(run(policy, index, guard, kb))
    return 0


if __name__ == "__main__":
    sys.exit(main())
