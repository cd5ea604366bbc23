"""Capabilities are asked of the verifier (its members, its span models, its routes), never
found by walking concrete classes."""

from __future__ import annotations

from collections.abc import Sequence

from guardrail.verifiers.base import (
    HallucinatedSpan,
    LanguageRouter,
    NLIPrediction,
    Pair,
    SpanFinder,
    Verifier,
)
from guardrail.verifiers.hybrid import HybridVerifier
from guardrail.verifiers.routing import RoutedVerifier
from guardrail.verifiers.scripted import ScriptedVerifier


class Spans(Verifier):
    """Any verifier with ``spans`` is a span model: no base class to inherit."""

    name = "spans"

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        return [NLIPrediction(entailment=1, neutral=0, contradiction=0) for _ in pairs]

    def spans(
        self, passages: Sequence[str], answer: str, question: str | None = None
    ) -> list[HallucinatedSpan]:
        return [HallucinatedSpan(0, 1, 0.9, answer[:1])]


def test_a_single_model_has_no_members_and_is_its_own_span_model() -> None:
    plain, spans = ScriptedVerifier(name="nli"), Spans()
    assert plain.combined_members() == () and plain.span_models() == []
    assert isinstance(spans, SpanFinder) and spans.span_models() == [spans]
    assert not isinstance(plain, SpanFinder) and not isinstance(plain, LanguageRouter)


def test_a_hybrid_and_a_router_answer_for_what_they_are_made_of() -> None:
    nli, spans = ScriptedVerifier(name="nli"), Spans()
    hybrid = HybridVerifier([nli, spans])
    assert hybrid.combined_members() == [nli, spans] and hybrid.span_models() == [spans]
    router = RoutedVerifier(hybrid, {"zh": ScriptedVerifier(name="zh", languages=("zh",))})
    assert isinstance(router, LanguageRouter)
    assert router.combined_members() == [nli, spans]  # the default's
    assert router.span_models() == [spans]  # the default's, not a route's
    nested = HybridVerifier([RoutedVerifier(Spans(), {"de": nli})])
    assert [s.name for s in nested.span_models()] == ["spans"]
