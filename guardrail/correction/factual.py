"""Factual replacement: contradicted values replaced by the knowledge-base or evidence value.

A contradicted claim is corrected only when its KB record's confidence is at least
``min_confidence`` and the claim has the span of its object; the edit replaces exactly that
span, so the rest of the sentence is untouched. Claims that are not corrected are annotated
instead (see :mod:`guardrail.correction.annotate`).
"""

from __future__ import annotations

from collections.abc import Sequence

from guardrail.correction.edits import Edit
from guardrail.report import (
    Correction,
    CorrectionType,
    FactualValidationResult,
    HallucinationFlag,
    HallucinationType,
    ValidationStatus,
)

FACTUAL_PRIORITY = 3
_REPAIRED = (
    HallucinationType.TEMPORAL_ERROR,
    HallucinationType.WRONG_ATTRIBUTE,
    HallucinationType.FABRICATED_FACT,
    HallucinationType.NONEXISTENT_ENTITY,
)
"""Flag types whose ``replacement`` comes from the evidence (:func:`evidence_edits`)."""


def factual_edits(
    text: str, factual: FactualValidationResult | None, min_confidence: float
) -> list[Edit]:
    """One edit per correctable contradicted claim (``tag`` = its :class:`Correction`)."""
    if factual is None:
        return []
    edits: list[Edit] = []
    for index, validation in enumerate(factual.claim_validations):
        claim = validation.claim
        if (
            validation.status is not ValidationStatus.CONTRADICTED
            or validation.kb_value is None
            or claim.object_span is None
            or validation.confidence < min_confidence
        ):
            continue
        span = claim.object_span
        original = text[span.start : span.end]
        if original != claim.object:
            continue  # the span no longer points at the value: never edit blindly
        source = f"knowledge base ({validation.source})" if validation.source else "knowledge base"
        correction = Correction(
            type=CorrectionType.FACTUAL,
            span=span,
            original=original,
            replacement=validation.kb_value,
            confidence=validation.confidence,
            source=source,
            message=(
                f"{claim.subject}'s {claim.attribute or claim.predicate} is "
                f"{validation.kb_value!r}, not {original!r} (claim {index})"
            ),
        )
        edits.append(Edit(span.start, span.end, validation.kb_value, FACTUAL_PRIORITY, correction))
    return edits


def evidence_edits(text: str, flags: list[HallucinationFlag]) -> list[Edit]:
    """One edit per value the evidence gives instead (a date that differs from the evidence
    sentence closest to its claim, a name the evidence sentence telling the claim's fact gives
    in its place); the correction is re-checked before it counts as a repair."""
    edits: list[Edit] = []
    for flag in flags:
        if flag.type not in _REPAIRED or not flag.replacement:
            continue
        original = text[flag.span.start : flag.span.end]
        if original != flag.content or original == flag.replacement:
            continue  # the span no longer points at the value: never edit blindly
        correction = Correction(
            type=CorrectionType.FACTUAL,
            span=flag.span,
            original=original,
            replacement=flag.replacement,
            confidence=flag.confidence,
            source="evidence",
            message=f"the evidence gives {flag.replacement!r}, not {original!r}",
            claim_index=flag.claim_index,
        )
        value = written_before(text, flag.span.end, flag.replacement)
        edits.append(Edit(flag.span.start, flag.span.end, value, FACTUAL_PRIORITY, correction))
    return edits


def written_before(text: str, end: int, value: str) -> str:
    """``value`` as it goes into ``text`` in place of what ends at ``end``: without its final
    dot where the text's own dot follows ("in the U.S.", not "in the U.S..")."""
    return value[:-1] if value.endswith(".") and text.startswith(".", end) else value


SETTLED = (
    HallucinationType.UNSUPPORTED_CLAIM,
    HallucinationType.CONTRADICTS_FACT,
    HallucinationType.NONEXISTENT_ENTITY,
    HallucinationType.FABRICATED_FACT,
)
"""Flag types the hallucination check raises on a claim only because the evidence does not
support it (its own status, and the specifics found in no document, looked for only in such a
claim): a repair the verifier confirms makes the claim supported, which settles them (and a
loose date finding, :func:`_loose_date`)."""


def unsettled(
    flags: Sequence[HallucinationFlag], corrections: Sequence[Correction], sure: float
) -> list[HallucinationFlag]:
    """``flags`` without those a verified factual repair of their claim settles (``SETTLED``
    types on a claim with a correction re-checked as supported, and its date findings looser
    than ``sure`` with nothing to put in: :func:`_loose_date`); a flag of another kind (a
    second misplaced name, a date the evidence gives otherwise) is a finding of its own.
    ``sure``: the confidence from which the hallucination check's date finding stands on a
    supported claim too (its value confidence)."""
    repaired = {
        c.claim_index
        for c in corrections
        if c.type is CorrectionType.FACTUAL and c.verified and c.claim_index is not None
    }
    return [
        f
        for f in flags
        if not (f.claim_index in repaired and (f.type in SETTLED or _loose_date(f, sure)))
    ]


def _loose_date(flag: HallucinationFlag, sure: float) -> bool:
    """A date finding no surer than its claim's own doubt, with no date to put in (the closest
    window's other date, flagged only because the verifier did not support the claim: a
    supported claim never shows one): a repair the verifier confirms settles it too."""
    return (
        flag.type is HallucinationType.TEMPORAL_ERROR
        and flag.replacement is None
        and flag.confidence < sure
    )
