"""A LlamaIndex app guarded by guardrail, offline.

Builds a real ``VectorStoreIndex`` over the office corpus shipped in ``chains/data/corpus``,
embedded with the packaged MiniLM model (``PackagedEmbedding``). The LLM is ``ExtractiveLLM``:
a deterministic, offline stand-in that answers with the best-matching context sentences (set
``--wrong`` to make it answer with a wrong room, to see a rejection). Then:

1. ``GuardrailEvaluator.evaluate_response`` checks the query engine's response against its
   source nodes (node scores = retrieval scores) and prints passing / score / feedback;
2. ``GuardedQueryEngine`` wraps the query engine and returns the checked answer.

Run: HF_HUB_OFFLINE=1 python examples/llama_index_app.py ["QUESTION"] [--wrong]
"""

from __future__ import annotations

import sys

from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.query_engine import CustomQueryEngine

from chains import corpus_path, kb_path, open_kb
from guardrail import Guardrail, GuardrailRejected
from guardrail.integrations.llama_index import (
    EXTRACTIVE_QA_TEMPLATE,
    ExtractiveLLM,
    GuardedQueryEngine,
    GuardrailEvaluator,
    PackagedEmbedding,
)


class WrongRoom(CustomQueryEngine):
    """The real query engine, with the room number in its answer altered (a hallucination)."""

    inner: object

    def custom_query(self, query_str: str) -> object:
        response = self.inner.query(query_str)  # type: ignore[attr-defined]
        response.response = (response.response or "").replace("room 4B", "room 7C")
        return response


def build_engine(wrong: bool = False) -> object:
    documents = SimpleDirectoryReader(str(corpus_path())).load_data()
    index = VectorStoreIndex.from_documents(
        documents,
        embed_model=PackagedEmbedding(),
        transformations=[SentenceSplitter(chunk_size=96, chunk_overlap=16)],
    )
    engine = index.as_query_engine(
        llm=ExtractiveLLM(), text_qa_template=EXTRACTIVE_QA_TEMPLATE, similarity_top_k=3
    )
    return WrongRoom(inner=engine) if wrong else engine


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--wrong"]
    question = args[0] if args else "When is the meeting with John?"
    engine = build_engine(wrong="--wrong" in sys.argv)
    guard = Guardrail()
    kb = open_kb(kb_path())

    response = engine.query(question)  # type: ignore[attr-defined]
    print(f"question: {question}")
    print(f"LlamaIndex answer: {response.response}")
    for node in response.source_nodes:
        meta = node.node.metadata
        print(f"  source score {node.score:.3f} {meta.get('file_name')}: "
              f"{node.node.get_content()[:60].strip()!r}")  # fmt: skip

    result = GuardrailEvaluator(guard, knowledge_base=kb).evaluate_response(question, response)
    print("\n-- GuardrailEvaluator.evaluate_response --")
    print(f"passing: {result.passing}  score: {result.score:.3f}  action: {result.action}")
    print(f"feedback: {result.feedback}")

    print("\n-- GuardedQueryEngine --")
    guarded = GuardedQueryEngine.wrap(engine, guard, on_fail="raise", knowledge_base=kb)  # type: ignore[arg-type]
    try:
        checked = guarded.query(question)
        report = checked.metadata["guardrail_report"]
        print(f"guarded answer: {checked.response}")
        print(f"verdict: {report.verdict.label.value}  action: {report.action.value}  "
              f"confidence: {report.confidence:.3f}")  # fmt: skip
    except GuardrailRejected as exc:
        print(f"rejected: {exc}")
        why = getattr(exc.report.recommendation, "guidance", None) or getattr(
            exc.report.recommendation, "reason", ""
        )
        print(f"why: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
