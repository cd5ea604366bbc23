"""LlamaIndex support: an evaluator, a guarded query engine, packaged embeddings, an offline LLM.

- :class:`GuardrailEvaluator` implements LlamaIndex's ``BaseEvaluator``: ``evaluate`` /
  ``evaluate_response`` (and the async forms) return a :class:`GuardrailEvaluationResult`
  — ``passing`` (the report has text to show: ``report.delivered_text`` is not ``None``),
  ``score`` (the confidence), ``feedback`` (verdict, action and why) and the full
  :class:`GuardReport` in ``report``.
  With a ``Response``, each source node's score is the passage's retrieval score, so the
  adaptive threshold T(rs) sees how confident retrieval was. A keyword argument it does not
  take (``context=`` for ``contexts=``) raises :class:`~guardrail.errors.InputError` naming the
  nearest one, rather than being dropped (the answer would be checked without its evidence);
  the other evaluators' ``reference`` and ``sleep_time_in_seconds``, which a
  ``BatchEvalRunner`` hands to every evaluator, are accepted and not used.
- :class:`GuardedQueryEngine` wraps any query engine: each response is checked against its own
  source nodes and, as :func:`chains.middleware.with_guardrail` does, its text becomes the
  report's ``delivered_text`` — exactly what ``Guardrail.invoke`` delivers for that answer
  (the original, or the annotated text with its removals and repairs) — or, when there is none
  (``regenerate`` / ``human_review``), ``on_fail`` decides; the report is in
  ``response.metadata["guardrail_report"]``.
- :class:`PackagedEmbedding` is the offline MiniLM (or any LangChain ``Embeddings``) as a
  LlamaIndex ``BaseEmbedding``; :class:`ExtractiveLLM` answers from the context without a
  model (use it with :data:`EXTRACTIVE_QA_TEMPLATE`), for offline apps and tests.

Needs ``pip install 'answer-guardrail[llama-index]'``.

Example::

    index = VectorStoreIndex.from_documents(docs, embed_model=PackagedEmbedding())
    engine = GuardedQueryEngine.wrap(index.as_query_engine(llm=llm), on_fail="annotated")
    print(engine.query("When is the meeting with John?"))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guardrail.errors import GuardrailError, GuardrailRejected, InputError, MissingDependencyError
from guardrail.inputs import Passage, unknown_key_message
from guardrail.report import GuardReport

try:
    from llama_index.core.base.base_query_engine import BaseQueryEngine
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.base.llms.types import (
        CompletionResponse,
        CompletionResponseGen,
        LLMMetadata,
    )
    from llama_index.core.base.response.schema import Response
    from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
    from llama_index.core.llms import CustomLLM
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.prompts import PromptTemplate
    from llama_index.core.query_engine import CustomQueryEngine
    from llama_index.core.schema import NodeWithScore
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("llama-index-core", "llama-index") from exc

ON_FAIL = ("raise", "corrected", "annotated", "report")
REPORT_KEY = "guardrail_report"

#: Keyword arguments of other LlamaIndex evaluators that ``BatchEvalRunner`` passes to every
#: evaluator of a run: accepted by :class:`GuardrailEvaluator` and not used.
SHARED_EVAL_KWARGS = frozenset({"reference", "sleep_time_in_seconds"})

#: The QA prompt :class:`ExtractiveLLM` reads (LlamaIndex's variables, our grounded format).
EXTRACTIVE_QA_TEMPLATE = PromptTemplate("Context:\n{context_str}\n\nQuestion: {query_str}")


def _guardrail(guardrail: Any) -> Any:
    if guardrail is not None:
        return guardrail
    from guardrail.pipeline import Guardrail

    return Guardrail()


def node_passages(nodes: Sequence[NodeWithScore]) -> list[Passage]:
    """Source nodes as passages; the node score is the retrieval score."""
    passages = []
    for n in nodes:
        meta = n.node.metadata or {}
        source = meta.get("file_name") or meta.get("file_path") or n.node.node_id
        passages.append(Passage(text=n.node.get_content(), score=n.score, source=str(source)))
    return passages


def check_kwargs(kwargs: dict[str, Any], taken: tuple[str, ...]) -> None:
    """``InputError`` naming a keyword argument the evaluator does not take (and the nearest
    one it does); :data:`SHARED_EVAL_KWARGS` pass."""
    valid = {*taken, *SHARED_EVAL_KWARGS}
    for key in kwargs:
        if key not in valid:
            raise InputError(unknown_key_message(key, valid, what="argument"))


def context_passages(contexts: Sequence[Any] | None) -> list[Passage]:
    """``contexts`` as passages: strings, or passage dicts / Documents (typed errors)."""
    return [Passage.coerce(c) for c in contexts or []]


def feedback_text(report: GuardReport) -> str:
    """One readable line: verdict, action, confidence and the reason or guidance."""
    rec = report.recommendation
    why = getattr(rec, "reason", None) or getattr(rec, "guidance", None) or report.verdict.reason
    flags = "; ".join(f"{f.type.value}: {f.content!r}" for f in report.hallucination_flags[:3])
    parts = [
        f"{report.verdict.label.value}, {report.action.value} (confidence {report.confidence:.2f})",
        why or "",
        f"flags: {flags}" if flags else "",
    ]
    return " — ".join(p for p in parts if p)


class GuardrailEvaluationResult(EvaluationResult):
    """LlamaIndex's ``EvaluationResult`` with the guardrail's report and action."""

    report: GuardReport | None = None
    """The full report (``None`` when the input could not be checked)."""
    action: str | None = None
    """The recommendation (``accept`` … ``human_review``)."""


class GuardrailEvaluator(BaseEvaluator):
    """Evaluates a response with the guardrail (LlamaIndex ``BaseEvaluator``).

    Args:
        guardrail: the checker (``Guardrail()`` by default).
        knowledge_base: a knowledge base (handle or path) for fact validation.
    """

    def __init__(self, guardrail: Any = None, knowledge_base: Any = None) -> None:
        self.guardrail = _guardrail(guardrail)
        self.knowledge_base = knowledge_base

    def _get_prompts(self) -> dict[str, Any]:
        """No LLM prompts: the checks are models and rules."""
        return {}

    def _update_prompts(self, prompts_dict: Any) -> None:
        """Nothing to update (see :meth:`_get_prompts`)."""

    def _input(self, query: str | None, response: str | None, passages: list[Passage]) -> Any:
        data: dict[str, Any] = {
            "query": query or "",
            "response": response or "",
            "passages": passages,
        }
        if self.knowledge_base is not None:
            data["knowledge_base"] = self.knowledge_base
        return data

    def _result(
        self, query: str | None, response: str | None, passages: list[Passage], report: Any
    ) -> GuardrailEvaluationResult:
        common = {"query": query, "response": response, "contexts": [p.text for p in passages]}
        if isinstance(report, GuardrailError):
            return GuardrailEvaluationResult(
                **common, passing=False, invalid_result=True, invalid_reason=str(report)
            )
        return GuardrailEvaluationResult(
            **common,
            passing=report.delivered_text is not None,
            score=report.confidence,
            feedback=feedback_text(report),
            report=report,
            action=report.action.value,
        )

    def _check(self, query: str | None, response: str | None, passages: list[Passage]) -> Any:
        try:
            return self.guardrail.invoke(self._input(query, response, passages))
        except GuardrailError as exc:  # bad input: an invalid (not passing) result
            return exc

    async def _acheck(
        self, query: str | None, response: str | None, passages: list[Passage]
    ) -> Any:
        try:
            return await self.guardrail.ainvoke(self._input(query, response, passages))
        except GuardrailError as exc:
            return exc

    def evaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> GuardrailEvaluationResult:
        """Check ``response`` against ``contexts`` (no retrieval scores).

        Raises:
            InputError: a keyword argument this evaluator does not take (see the module doc).
        """
        check_kwargs(kwargs, ("query", "response", "contexts"))
        passages = context_passages(contexts)
        return self._result(query, response, passages, self._check(query, response, passages))

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> GuardrailEvaluationResult:
        """Async :meth:`evaluate`."""
        check_kwargs(kwargs, ("query", "response", "contexts"))
        passages = context_passages(contexts)
        return self._result(
            query, response, passages, await self._acheck(query, response, passages)
        )

    def evaluate_response(
        self, query: str | None = None, response: Response | None = None, **kwargs: Any
    ) -> GuardrailEvaluationResult:
        """Check a query engine's ``Response`` against its source nodes (with their scores)."""
        check_kwargs(kwargs, ("query", "response"))
        text = response.response if response is not None else None
        passages = node_passages(response.source_nodes) if response is not None else []
        return self._result(query, text, passages, self._check(query, text, passages))

    async def aevaluate_response(
        self, query: str | None = None, response: Response | None = None, **kwargs: Any
    ) -> GuardrailEvaluationResult:
        """Async :meth:`evaluate_response`."""
        check_kwargs(kwargs, ("query", "response"))
        text = response.response if response is not None else None
        passages = node_passages(response.source_nodes) if response is not None else []
        return self._result(query, text, passages, await self._acheck(query, text, passages))


def _materialise(response: Any) -> Response:
    if isinstance(response, Response):
        return response
    if hasattr(response, "get_response"):  # StreamingResponse / AsyncStreamingResponse
        found: Response = response.get_response()
        return found
    raise GuardrailError(f"cannot check a {type(response).__name__} response")


class GuardedQueryEngine(CustomQueryEngine):
    """A query engine whose responses are checked against their own source nodes.

    The response text is ``report.delivered_text`` (what ``Guardrail.invoke`` delivers: the
    original, or the annotated text with its removals and repairs); when there is none
    (``regenerate`` / ``human_review``), ``on_fail`` decides: ``raise``
    (:class:`~guardrail.errors.GuardrailRejected` with the report), ``corrected`` /
    ``annotated`` text, or ``report`` (``response`` is ``None``: nothing to show). The
    report is always in ``metadata["guardrail_report"]``. Build with :meth:`wrap`.
    """

    query_engine: BaseQueryEngine
    guardrail: Any
    on_fail: str = "raise"
    knowledge_base: Any = None

    @classmethod
    def wrap(
        cls,
        query_engine: BaseQueryEngine,
        guardrail: Any = None,
        on_fail: str = "raise",
        knowledge_base: Any = None,
    ) -> GuardedQueryEngine:
        """Wrap ``query_engine`` (``Guardrail()`` by default)."""
        if on_fail not in ON_FAIL:
            raise GuardrailError(f"on_fail must be one of {ON_FAIL}, not {on_fail!r}")
        return cls(
            query_engine=query_engine,
            guardrail=_guardrail(guardrail),
            on_fail=on_fail,
            knowledge_base=knowledge_base,
        )

    def _input(self, query: str, response: Response) -> dict[str, Any]:
        data: dict[str, Any] = {
            "query": query,
            "response": response.response or "",
            "passages": node_passages(response.source_nodes),
        }
        if self.knowledge_base is not None:
            data["knowledge_base"] = self.knowledge_base
        return data

    def decide(self, response: Response, report: GuardReport) -> Response:
        """The response to return for this report (see the class docstring)."""
        metadata = {**(response.metadata or {}), REPORT_KEY: report}
        text = report.delivered_text
        if text is None:
            if self.on_fail == "raise":
                raise GuardrailRejected(
                    f"the guardrail rejected the answer ({report.action.value}, confidence "
                    f"{report.confidence:.2f})",
                    report,
                )
            if self.on_fail == "corrected":
                text = report.corrected
            elif self.on_fail == "annotated":
                text = report.annotated
        return Response(response=text, source_nodes=response.source_nodes, metadata=metadata)

    def custom_query(self, query_str: str) -> Response:
        response = _materialise(self.query_engine.query(query_str))
        return self.decide(response, self.guardrail.invoke(self._input(query_str, response)))

    async def acustom_query(self, query_str: str) -> Response:
        response = _materialise(await self.query_engine.aquery(query_str))
        report = await self.guardrail.ainvoke(self._input(query_str, response))
        return self.decide(response, report)


class PackagedEmbedding(BaseEmbedding):
    """A LangChain ``Embeddings`` (the packaged offline MiniLM by default) for LlamaIndex."""

    embeddings: Any = None
    """The LangChain embeddings; ``chains.embeddings.SentenceEmbeddings()`` when ``None``."""

    def model_post_init(self, context: Any) -> None:
        if self.embeddings is None:
            from chains.embeddings import SentenceEmbeddings

            self.embeddings = SentenceEmbeddings()
        if not self.model_name or self.model_name == "unknown":
            self.model_name = str(getattr(self.embeddings, "model", type(self.embeddings).__name__))

    @classmethod
    def class_name(cls) -> str:
        return "GuardrailPackagedEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        vector: list[float] = self.embeddings.embed_query(query)
        return vector

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = self.embeddings.embed_documents(list(texts))
        return vectors


class ExtractiveLLM(CustomLLM):
    """An offline LlamaIndex LLM answering with the context sentences that match the query.

    Reads prompts in :data:`EXTRACTIVE_QA_TEMPLATE`'s format (pass it as ``text_qa_template``);
    a deterministic stand-in for a generative model (see :mod:`chains.extractive`).
    """

    max_sentences: int = 2

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="extractive-fallback", is_chat_model=False)

    def _answer(self, prompt: str) -> str:
        from chains.extractive import extractive_answer, parse_prompt

        question, passages, previous = parse_prompt(prompt)
        return extractive_answer(
            question, passages, self.max_sentences, [previous] if previous else ()
        )

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._answer(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        import re

        text = self._answer(prompt)

        def gen() -> CompletionResponseGen:
            so_far = ""
            for token in re.findall(r"\S+\s*", text):
                so_far += token
                yield CompletionResponse(text=so_far, delta=token)

        return gen()
