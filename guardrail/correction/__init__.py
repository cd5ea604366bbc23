"""Response correction (post-processing stage 4): spelling / grammar, factual replacement from the
knowledge base, annotations, removals and new entities, with spans into the original text."""

from guardrail.correction.corrector import CorrectionOutcome, ResponseCorrector, count_by_type
from guardrail.correction.edits import Edit, OffsetMap, apply_edits, resolve_overlaps
from guardrail.correction.entities import new_entities
from guardrail.correction.spelling import load_speller, vocabulary_of

__all__ = [
    "CorrectionOutcome",
    "Edit",
    "OffsetMap",
    "ResponseCorrector",
    "apply_edits",
    "count_by_type",
    "load_speller",
    "new_entities",
    "resolve_overlaps",
    "vocabulary_of",
]
