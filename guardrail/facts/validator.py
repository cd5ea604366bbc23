"""Fact validation (post-processing stage 2): claims against the knowledge base and the dialogue.

Each extracted claim gets one status:

- ``verified`` — the KB attribute matches (confidence = the record's confidence), or, with no
  KB value, the most recent turn stating it agrees (confidence 0.7, source ``turn N``);
- ``contradicted`` — the KB attribute differs (``kb_value``, the record's confidence);
- ``history_conflict`` — no KB value, but an earlier turn contradicts it;
- ``unverifiable`` — subject or attribute unknown, and no turn speaks to it;
- ``error`` — the lookup itself failed.

A history conflict is reported (``turn_id``, ``turn_text``) whatever the status, so a claim can
be both contradicted by the KB and in conflict with a turn; ``stats.history_conflicts`` counts
those claims.

**Score.** ``(V + 0.5·U) / (V + U + 2·C)`` where V = verified, U = unverifiable and C = claims
contradicted by the KB or (without KB value) by the history; errors are left out. A
contradiction weighs twice a verification; an unchecked claim counts half. 1.0 with no claims.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from guardrail.errors import KnowledgeBaseError
from guardrail.facts.analysis import ClaimAnalyzer, ResolvedClaim
from guardrail.facts.history import AnalysedTurn, HistoryChecker, HistoryFinding
from guardrail.facts.resolution import ResolvedSubject
from guardrail.inputs import DialogueState
from guardrail.report import (
    ClaimValidation,
    ExtractedClaim,
    FactualStats,
    FactualValidationResult,
    ValidationStatus,
)
from guardrail.text.values import compare_values

logger = logging.getLogger(__name__)

HISTORY_AGREEMENT_CONFIDENCE = 0.7


@dataclass(frozen=True)
class FactValidation:
    """Everything fact validation produced for one response."""

    claims: list[ResolvedClaim]
    extracted: list[ExtractedClaim]
    result: FactualValidationResult


def factual_score(stats: FactualStats, conflicts_only: int) -> float:
    """The factual score (see the module docstring); ``conflicts_only`` = history conflicts
    that are the claim's status (not already counted as KB contradictions)."""
    v, u = stats.verified, stats.unverifiable
    c = stats.contradicted + conflicts_only
    denominator = v + u + 2 * c
    return 1.0 if denominator == 0 else round((v + 0.5 * u) / denominator, 4)


class FactValidator:
    """Validates a response's claims.

    Args:
        analyzer: claim extraction, subject resolution and predicate mapping.
        history: the history checker, or ``None`` to skip the dialogue.
        edit_distance_ratio: for value comparison against the KB.
    """

    def __init__(
        self,
        analyzer: ClaimAnalyzer,
        history: HistoryChecker | None,
        edit_distance_ratio: float = 0.1,
    ) -> None:
        self.analyzer = analyzer
        self.history = history
        self.edit_distance_ratio = edit_distance_ratio

    def analyse_history(self, dialogue: DialogueState, max_turns: int) -> list[AnalysedTurn]:
        """Claims of the most recent ``max_turns`` turns, pronouns carried across turns."""
        turns: list[AnalysedTurn] = []
        earlier: list[ResolvedSubject] = []
        for turn in dialogue.turns[-max_turns:] if max_turns > 0 else []:
            analysis = self.analyzer.analyse(turn.text, earlier)
            earlier = [*earlier, *analysis.mentions][-20:]
            turns.append(AnalysedTurn(turn, analysis.claims))
        return turns

    def validate(
        self, response: str, dialogue: DialogueState, max_turns: int = 20
    ) -> FactValidation:
        """Extract and validate the claims of ``response``."""
        turns = self.analyse_history(dialogue, max_turns) if self.history is not None else []
        earlier = [c.subject for t in turns for c in t.claims if c.subject is not None]
        claims = self.analyzer.analyse(response, earlier[-20:]).claims
        findings: dict[int, HistoryFinding] = {}
        if self.history is not None and turns:
            for i, claim in enumerate(claims):
                found = self.history.by_value(claim, turns)
                if found is not None:
                    findings[i] = found
            rest = [i for i in range(len(claims)) if i not in findings]
            extra = self.history.by_verifier([claims[i] for i in rest], turns)
            findings.update({rest[k]: f for k, f in extra.items()})
        validations = [self._validate(c, findings.get(i)) for i, c in enumerate(claims)]
        stats = FactualStats(
            total=len(validations),
            verified=sum(v.status is ValidationStatus.VERIFIED for v in validations),
            contradicted=sum(v.status is ValidationStatus.CONTRADICTED for v in validations),
            unverifiable=sum(v.status is ValidationStatus.UNVERIFIABLE for v in validations),
            history_conflicts=sum(1 for f in findings.values() if f.conflict),
            errors=sum(v.status is ValidationStatus.ERROR for v in validations),
        )
        conflicts_only = sum(v.status is ValidationStatus.HISTORY_CONFLICT for v in validations)
        result = FactualValidationResult(
            score=factual_score(stats, conflicts_only), claim_validations=validations, stats=stats
        )
        return FactValidation(claims, [v.claim for v in validations], result)

    def _validate(self, claim: ResolvedClaim, finding: HistoryFinding | None) -> ClaimValidation:
        extracted = claim.to_extracted()
        validation: ClaimValidation | None = None
        try:
            validation = self._against_kb(claim, extracted)
        except KnowledgeBaseError as exc:
            logger.warning("knowledge-base lookup failed for %r: %s", claim.raw.text, exc)
            return ClaimValidation(
                claim=extracted, status=ValidationStatus.ERROR, reason=f"lookup failed: {exc}"
            )
        conflict = finding is not None and finding.conflict
        if validation is None:
            if finding is not None and finding.conflict:
                validation = ClaimValidation(
                    claim=extracted,
                    status=ValidationStatus.HISTORY_CONFLICT,
                    confidence=finding.confidence,
                )
            elif finding is not None:
                validation = ClaimValidation(
                    claim=extracted,
                    status=ValidationStatus.VERIFIED,
                    confidence=HISTORY_AGREEMENT_CONFIDENCE,
                    source=f"turn {finding.turn_id}",
                    reason=f'agrees with turn {finding.turn_id}: "{finding.turn_text}"',
                )
            else:
                validation = ClaimValidation(
                    claim=extracted,
                    status=ValidationStatus.UNVERIFIABLE,
                    reason=self._why_unverifiable(claim),
                )
        if conflict and finding is not None:
            stated = f" (stated {finding.stated_value!r})" if finding.stated_value else ""
            note = (
                f'conflicts with turn {finding.turn_id}{stated}: "{finding.turn_text}" '
                f"[{finding.via}]"
            )
            validation = validation.model_copy(
                update={
                    "turn_id": finding.turn_id,
                    "turn_text": finding.turn_text,
                    "reason": f"{validation.reason}; {note}" if validation.reason else note,
                }
            )
        return validation

    def _against_kb(
        self, claim: ResolvedClaim, extracted: ExtractedClaim
    ) -> ClaimValidation | None:
        subject = claim.subject
        if subject is None or subject.entity is None or claim.attribute is None:
            return None
        attr = subject.entity.attributes.get(claim.attribute)
        if attr is None:
            return None
        result = compare_values(claim.raw.object, attr.value, self.edit_distance_ratio)
        source = attr.source or "knowledge base"
        if result.matches:
            return ClaimValidation(
                claim=extracted,
                status=ValidationStatus.VERIFIED,
                confidence=attr.confidence,
                kb_value=attr.value,
                source=source,
                reason=f"matches the knowledge base ({result.rule.value})",
            )
        return ClaimValidation(
            claim=extracted,
            status=ValidationStatus.CONTRADICTED,
            confidence=attr.confidence,
            kb_value=attr.value,
            source=source,
            reason=(
                f"the knowledge base gives {subject.name}'s {claim.attribute} as "
                f"{attr.value!r} ({source}, confidence {attr.confidence:.2f})"
            ),
        )

    @staticmethod
    def _why_unverifiable(claim: ResolvedClaim) -> str:
        if claim.subject is None:
            return f"subject {claim.subject_text!r} is not a known entity"
        if claim.attribute is None:
            return f"no known attribute matches the predicate {claim.raw.predicate!r}"
        if claim.subject.entity is None:
            return f"{claim.subject.name} is not in the knowledge base"
        return f"the knowledge base has no {claim.attribute} for {claim.subject.name}"
