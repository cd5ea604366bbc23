"""Response correction (post-processing stage 4): one pass that plans every edit on the original.

All edits — spelling and grammar, factual replacements, sentence removals, annotations — are
planned against the ORIGINAL response, overlaps resolved by priority (removal > factual >
grammar > spelling; annotations are insertions), and applied together from the end:

- ``corrected`` = original + text edits (no annotations);
- ``annotated`` = original + text edits + annotations.

Every :class:`~guardrail.report.Correction` keeps its span into the original.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from guardrail.config import ConfidenceLadder, CorrectionConfig
from guardrail.correction.annotate import annotation_edits, planned_removal_edits, removal_edits
from guardrail.correction.edits import Edit, apply_edits, resolve_overlaps
from guardrail.correction.entities import new_entities
from guardrail.correction.factual import FACTUAL_PRIORITY, evidence_edits, factual_edits
from guardrail.correction.spelling import (
    articles_for_repairs,
    grammar_corrections,
    spelling_corrections,
)
from guardrail.delivery import DeliveryPlan
from guardrail.inputs import EntityInfo
from guardrail.report import (
    Correction,
    CorrectionType,
    FactualValidationResult,
    HallucinationFlag,
    NewEntity,
    Span,
)
from guardrail.text.segmentation import sentence_ranges


@dataclass(frozen=True)
class CorrectionOutcome:
    """The result of correcting one response."""

    original: str
    corrected: str
    annotated: str
    corrections: list[Correction] = field(default_factory=list)
    new_entities: list[NewEntity] = field(default_factory=list)


@dataclass(frozen=True)
class Repairs:
    """What correcting a response finds whatever the decision's plan: the text edits (spelling,
    grammar, knowledge-base and evidence values, severe removals), the sentences and the new
    entities. Found once per response (:meth:`ResponseCorrector.repairs`) and applied with or
    without a plan."""

    edits: tuple[Edit, ...]
    sentences: tuple[tuple[int, int], ...]
    new_entities: tuple[NewEntity, ...]


class ResponseCorrector:
    """Plans and applies corrections.

    Args:
        config: the correction settings.
        speller: a pyspellchecker ``SpellChecker`` (``None`` = no spelling correction).
        ladder: the confidence ladder (``GuardrailConfig.confidence``; ``None``: the default
            one): flags at least ``noted`` sure are annotated, and with ``remove_severe`` a
            critical flag at least ``certain`` sure removes its sentence.
    """

    def __init__(
        self,
        config: CorrectionConfig,
        speller: Any | None,
        ladder: ConfidenceLadder | None = None,
    ) -> None:
        self.config = config
        self.speller = speller
        self.ladder = ladder or ConfidenceLadder()

    def repairs(
        self,
        doc: Any,
        factual: FactualValidationResult | None,
        flags: list[HallucinationFlag],
        registry: list[EntityInfo],
        vocabulary: set[str],
    ) -> Repairs:
        """The plan-independent part of :meth:`correct` for the response parsed as ``doc``."""
        cfg = self.config
        text: str = doc.text
        edits: list[Edit] = []
        if cfg.auto_correct:
            if cfg.spelling and self.speller is not None:
                edits += spelling_corrections(doc, self.speller, vocabulary)
                edits += grammar_corrections(doc)
            values = factual_edits(text, factual, cfg.factual_min_confidence)
            values += evidence_edits(text, flags)
            if cfg.spelling and self.speller is not None:
                edits = articles_for_repairs(text, edits, values)
            edits += values
        sentences = sentence_ranges(doc)
        if cfg.remove_severe:
            edits += removal_edits(text, sentences, flags, self.ladder.certain)
        return Repairs(tuple(edits), tuple(sentences), tuple(new_entities(doc, registry)))

    def correct(
        self,
        doc: Any,
        factual: FactualValidationResult | None,
        flags: list[HallucinationFlag],
        registry: list[EntityInfo],
        vocabulary: set[str],
        plan: DeliveryPlan | None = None,
        supported: Sequence[Span] = (),
        repairs: Repairs | None = None,
    ) -> CorrectionOutcome:
        """Correct the response parsed as ``doc`` (a spaCy ``Doc`` of the original text).

        ``plan``: the decision's removals and claim notes (see
        :func:`guardrail.decision.plan_delivery`); ``supported``: spans of claims the evidence
        supports; ``repairs``: :meth:`repairs` of the same arguments when already found (the
        correction stage applies them twice: without the plan, then with it).
        """
        text: str = doc.text
        found = repairs or self.repairs(doc, factual, flags, registry, vocabulary)
        edits = list(found.edits)
        sentences = list(found.sentences)
        if plan is not None and plan.removals:
            edits += planned_removal_edits(text, sentences, plan.removals)
        text_edits = resolve_overlaps(edits)
        text_edits = self._cap(text_edits)
        fixed = [(e.start, e.end) for e in text_edits if e.priority >= FACTUAL_PRIORITY]
        notes = annotation_edits(
            text,
            factual,
            flags,
            fixed,
            self.ladder.noted,
            claim_notes=plan.notes if plan is not None else (),
            supported=supported,
            annotated_claims=plan.annotated_claims if plan is not None else frozenset(),
        )
        removed = [e for e in text_edits if e.replacement == "" and e.priority > FACTUAL_PRIORITY]
        notes = [n for n in notes if not any(r.start <= n.start < r.end for r in removed)]
        all_edits = resolve_overlaps([*text_edits, *notes])
        corrections = [e.tag for e in all_edits if isinstance(e.tag, Correction)]
        return CorrectionOutcome(
            original=text,
            corrected=apply_edits(text, text_edits),
            annotated=apply_edits(text, all_edits),
            corrections=corrections,
            new_entities=list(found.new_entities),
        )

    def _cap(self, edits: list[Edit]) -> list[Edit]:
        """At most ``max_corrections`` text edits, the most important first."""
        limit = self.config.max_corrections
        if len(edits) <= limit:
            return edits
        ranked = sorted(edits, key=lambda e: (-e.priority, e.start))[:limit]
        return sorted(ranked, key=lambda e: (e.start, e.end))


def count_by_type(corrections: list[Correction]) -> dict[CorrectionType, int]:
    """How many corrections of each type (for logs and reports)."""
    out: dict[CorrectionType, int] = {}
    for c in corrections:
        out[c.type] = out.get(c.type, 0) + 1
    return out
