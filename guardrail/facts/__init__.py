"""Fact validation: claim extraction, subject resolution, predicate mapping, value comparison,
knowledge-base and dialogue-history checks (post-processing stage 2)."""

from guardrail.facts.analysis import ClaimAnalyzer, ResolvedClaim, TextAnalysis
from guardrail.facts.extraction import RawClaim, extract_raw_claims
from guardrail.facts.history import HistoryChecker, HistoryFinding
from guardrail.facts.predicates import SYNONYMS, PredicateMapper, PredicateMatch
from guardrail.facts.resolution import EntityResolver, ResolvedSubject
from guardrail.facts.validator import FactValidation, FactValidator, factual_score
from guardrail.text.values import Comparison, MatchRule, ValueKind, compare_values

__all__ = [
    "SYNONYMS",
    "ClaimAnalyzer",
    "Comparison",
    "EntityResolver",
    "FactValidation",
    "FactValidator",
    "HistoryChecker",
    "HistoryFinding",
    "MatchRule",
    "PredicateMapper",
    "PredicateMatch",
    "RawClaim",
    "ResolvedClaim",
    "ResolvedSubject",
    "TextAnalysis",
    "ValueKind",
    "compare_values",
    "extract_raw_claims",
    "factual_score",
]
