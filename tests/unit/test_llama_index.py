"""The LlamaIndex integration: evaluator, guarded query engine, packaged embeddings, offline LLM.

Everything is real: a ``VectorStoreIndex`` embedded with the packaged MiniLM, the guardrail
with the bundled verifier (claim and hallucination stages, for speed), and ``ExtractiveLLM``
(deterministic code, no model) as the query engine's LLM. A wrong answer is made by editing
the real engine's response, as a hallucinating LLM would write it.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("llama_index.core", reason="needs the llama-index extra")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.response.schema import Response
from llama_index.core.evaluation import BaseEvaluator

from guardrail.errors import GuardrailError, GuardrailRejected
from guardrail.integrations.llama_index import (
    EXTRACTIVE_QA_TEMPLATE,
    ExtractiveLLM,
    GuardedQueryEngine,
    GuardrailEvaluationResult,
    GuardrailEvaluator,
    PackagedEmbedding,
)
from guardrail.pipeline import Guardrail
from guardrail.report import GuardReport

QUESTION = "When is the meeting with John?"
DOCS = [
    "The project review meeting with John Smith is on Thursday at 10:00 in room 4B.",
    "Sarah Lee works in the Finance department.",
    "The cafeteria serves lunch from noon until two.",
]


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail({"disabled_stages": ["coherence", "fact_validation", "correction"]})


@pytest.fixture(scope="module")
def engine() -> Any:
    index = VectorStoreIndex.from_documents(
        [Document(text=t, metadata={"file_name": f"doc{i}.txt"}) for i, t in enumerate(DOCS)],
        embed_model=PackagedEmbedding(),
    )
    return index.as_query_engine(
        llm=ExtractiveLLM(), text_qa_template=EXTRACTIVE_QA_TEMPLATE, similarity_top_k=2
    )


def wrong(response: Response) -> Response:
    text = (response.response or "").replace("room 4B", "room 9C")
    return Response(response=text, source_nodes=response.source_nodes)


def test_query_engine_answers_offline_with_scored_sources(engine: Any) -> None:
    response = engine.query(QUESTION)
    assert response.response == DOCS[0]
    assert response.source_nodes[0].node.get_content() == DOCS[0]
    scores = [n.score for n in response.source_nodes]
    assert scores == sorted(scores, reverse=True) and 0.3 < scores[0] <= 1.0


def test_evaluator_implements_the_interface(engine: Any, guard: Guardrail) -> None:
    evaluator = GuardrailEvaluator(guard)
    assert isinstance(evaluator, BaseEvaluator)
    response = engine.query(QUESTION)
    good = evaluator.evaluate_response(query=QUESTION, response=response)
    assert isinstance(good, GuardrailEvaluationResult) and isinstance(good.report, GuardReport)
    assert good.passing is True and good.score == pytest.approx(good.report.confidence)
    assert good.report.verdict.retrieval_score == pytest.approx(
        response.source_nodes[0].score, abs=1e-3
    )
    assert good.feedback and good.feedback.startswith("VERIFIED")
    bad = evaluator.evaluate_response(query=QUESTION, response=wrong(response))
    assert bad.passing is False and bad.report is not None
    assert bad.feedback and bad.feedback.startswith("HALLUCINATION")
    assert bad.score is not None and good.score is not None and bad.score < good.score
    assert bad.contexts == [n.node.get_content() for n in response.source_nodes]


async def test_evaluate_with_contexts_and_invalid_input(guard: Guardrail) -> None:
    evaluator = GuardrailEvaluator(guard)
    result = await evaluator.aevaluate(
        query=QUESTION, response="The meeting is in room 9C.", contexts=[DOCS[0]]
    )
    assert result.passing is False and result.action in {"regenerate", "human_review"}
    empty = evaluator.evaluate(query=QUESTION, response="", contexts=[DOCS[0]])
    assert (
        empty.invalid_result and empty.passing is False and "empty" in (empty.invalid_reason or "")
    )
    none = evaluator.evaluate_response(query=QUESTION, response=None)
    assert none.invalid_result and none.report is None


def wrong_engine(engine: Any) -> Any:
    from llama_index.core.query_engine import CustomQueryEngine

    class WrongEngine(CustomQueryEngine):
        inner: Any

        def custom_query(self, query_str: str) -> Response:
            return wrong(self.inner.query(query_str))

    return WrongEngine(inner=engine)


def test_guarded_query_engine_applies_the_recommendation(engine: Any, guard: Guardrail) -> None:
    ok = GuardedQueryEngine.wrap(engine, guard).query(QUESTION)
    report = ok.metadata["guardrail_report"]
    assert report.action.value in {"accept", "accept_with_flags", "correct_and_deliver"}
    assert ok.response == report.delivered_text and ok.source_nodes
    bad_engine = wrong_engine(engine)
    with pytest.raises(GuardrailRejected) as info:
        GuardedQueryEngine.wrap(bad_engine, guard).query(QUESTION)
    assert "room 9C" in info.value.report.original
    annotated = GuardedQueryEngine.wrap(bad_engine, guard, on_fail="annotated").query(QUESTION)
    assert annotated.response == annotated.metadata["guardrail_report"].annotated
    reported = GuardedQueryEngine.wrap(bad_engine, guard, on_fail="report").query(QUESTION)
    assert reported.response is None and reported.metadata["guardrail_report"].original
    with pytest.raises(GuardrailError):
        GuardedQueryEngine.wrap(engine, guard, on_fail="ignore")


async def test_guarded_query_engine_async(engine: Any, guard: Guardrail) -> None:
    out = await GuardedQueryEngine.wrap(engine, guard).aquery(QUESTION)
    assert out.response is not None and "guardrail_report" in out.metadata


def test_extractive_llm_streams(engine: Any) -> None:
    llm = ExtractiveLLM()
    prompt = EXTRACTIVE_QA_TEMPLATE.format(context_str="\n\n".join(DOCS), query_str=QUESTION)
    assert llm.complete(prompt).text == DOCS[0]
    deltas = [r.delta for r in llm.stream_complete(prompt)]
    assert len(deltas) > 5 and "".join(d or "" for d in deltas) == DOCS[0]
