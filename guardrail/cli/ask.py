"""``guardrail ask``: answer a question with the guarded RAG chain over a corpus, offline.

Retrieves from a FAISS index over the corpus (the office corpus shipped in ``chains`` by
default), generates with Groq when ``GROQ_API_KEY`` is set or the local SmolLM2 model
otherwise (or, when llama-cpp-python or the GGUF model is missing or the model cannot run on
this machine, e.g. a llama.cpp build that dies with SIGILL, the deterministic extractive
answerer, saying so in the output and in one line on stderr), checks the answer with the
guardrail, regenerates with guidance when asked to, and prints the answer (or the escalation),
the verdict, confidence, action and flags.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from guardrail.cli.check import render_text


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ask", help="answer a question from a corpus with the guarded RAG chain (offline)"
    )
    p.add_argument("question", help="the question to answer")
    p.add_argument(
        "--corpus", action="append", help="file or folder of .txt/.md/.jsonl (repeat); "
        "default: the example office corpus shipped with guardrail",
    )  # fmt: skip
    p.add_argument("--index", help="FAISS index folder: loaded if present, else built and saved")
    p.add_argument("--kb", help="knowledge base file (default: the example corpus' KB)")
    p.add_argument("--no-kb", action="store_true", help="check without a knowledge base")
    p.add_argument("--max-attempts", type=int, default=3, help="answers to try (default 3)")
    p.add_argument("-k", type=int, default=4, help="passages to retrieve (default 4)")
    p.add_argument("--config", help="guardrail config file (YAML or JSON)")
    p.add_argument("--session-id")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def _index(args: argparse.Namespace, guard: Any) -> Any:
    """The FAISS index, embedded with the guardrail's own embedder (one model in memory)."""
    from chains.embeddings import SentenceEmbeddings
    from chains.retrieval import PassageIndex, corpus_path

    embeddings = SentenceEmbeddings.of_guardrail(guard)
    if args.index and (Path(args.index) / "index.faiss").exists():
        return PassageIndex.load(args.index, embeddings)
    index = PassageIndex.from_paths(args.corpus or [corpus_path()], embeddings)
    if args.index:
        index.save(args.index)
    return index


def _knowledge_base(args: argparse.Namespace) -> Any:
    from chains.retrieval import kb_path, open_kb

    if args.no_kb:
        return None
    if args.kb:
        return open_kb(args.kb)
    return open_kb(kb_path()) if not args.corpus else None


FALLBACK_NOTICE = (
    "note: no generative model available ({reason}); answering with the extractive fallback "
    "(the context sentences that best match the question)"
)


def render_answer(result: Any, fallback_reason: str | None = None) -> str:
    """The answer or escalation, each attempt's decision, then the final report."""
    lines = [FALLBACK_NOTICE.format(reason=fallback_reason)] if fallback_reason else []
    lines.append(f"question:   {result.question}")
    if result.answer is not None:
        lines.append(f"ANSWER:     {result.answer}")
    else:
        lines.append("ANSWER:     (not delivered: escalated to human review)")
        lines.append(f"escalation: {result.escalation.reason}")
    lines.append(f"model:      {result.model}")
    for p in result.passages:
        lines.append(f"  passage score {p.score:.3f} {Path(p.source or '?').name}: "
                     f"{p.text[:70].strip()!r}")  # fmt: skip
    for attempt in result.attempts:
        lines.append(f"attempt {attempt.number}: {attempt.action.value} — {attempt.answer!r}")
        if attempt.guidance:
            lines.append(f"  prompted with guidance: {attempt.guidance}")
    if result.report is not None:
        lines.append("-- report on the last answer --")
        lines.append(render_text(result.report))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from chains.generation import default_chat_model, is_fallback
    from chains.guarded_rag import GuardedRAG
    from guardrail.config import GuardrailConfig
    from guardrail.pipeline import Guardrail

    guard = Guardrail(GuardrailConfig.load(args.config))
    llm = default_chat_model()
    reason = (getattr(llm, "reason", "") or "no local model") if is_fallback(llm) else None
    if reason is not None:
        sys.stderr.write(f"guardrail ask: {FALLBACK_NOTICE.format(reason=reason)}\n")
    rag = GuardedRAG(
        _index(args, guard),
        llm=llm,
        guardrail=guard,
        max_attempts=args.max_attempts,
        k=args.k,
        knowledge_base=_knowledge_base(args),
    )
    question: Any = {"question": args.question, "session_id": args.session_id}
    result = rag.invoke(question)
    if args.format == "json":
        data = result.model_dump(mode="json")
        data["generator_fallback"] = reason
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render_answer(result, reason) + "\n")
    return 0
