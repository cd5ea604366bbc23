"""Dialogue-history checks: does a claim contradict something said in an earlier turn?

Two complementary tests:

- **value comparison** — when an earlier turn states the same attribute of the same entity
  ("I joined in 2020, same year as John." → John Smith's join_date 2020), the values are
  compared with :func:`~guardrail.text.values.compare_values`; the most recent such turn
  decides (agreement or conflict);
- **the NLI verifier** — for claims no turn states by value, each recent turn mentioning the
  claim's entity is the premise and the claim, restated with its subject's name, the
  hypothesis; a contradiction probability of at least ``contradiction_threshold`` (and the top
  label) is a conflict.

A conflict names the turn id and quotes the turn.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from guardrail.errors import VerifierError
from guardrail.facts.analysis import ResolvedClaim
from guardrail.inputs import DialogueTurn
from guardrail.text.values import compare_values

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HistoryFinding:
    """What an earlier turn says about a claim."""

    turn_id: int
    turn_text: str
    conflict: bool
    via: str
    """``value`` (same attribute compared) or ``verifier`` (NLI contradiction)."""
    confidence: float
    stated_value: str | None = None


@dataclass(frozen=True)
class AnalysedTurn:
    turn: DialogueTurn
    claims: list[ResolvedClaim]


def _turn_id(turn: DialogueTurn, index: int) -> int:
    return turn.turn_id if turn.turn_id is not None else index


class HistoryChecker:
    """Checks claims against analysed earlier turns.

    Args:
        edit_distance_ratio: passed to the value comparison.
        verifier: an NLI :class:`~guardrail.verifiers.base.Verifier`, or ``None`` to compare
            values only.
        contradiction_threshold: minimum contradiction probability for a verifier conflict.
    """

    def __init__(
        self,
        edit_distance_ratio: float = 0.1,
        verifier: object | None = None,
        contradiction_threshold: float = 0.8,
    ) -> None:
        self.edit_distance_ratio = edit_distance_ratio
        self.verifier = verifier
        self.contradiction_threshold = contradiction_threshold

    def by_value(
        self, claim: ResolvedClaim, turns: Sequence[AnalysedTurn]
    ) -> HistoryFinding | None:
        """The most recent turn stating the same entity's same attribute, compared by value."""
        if claim.subject is None or claim.attribute is None:
            return None
        for index in range(len(turns) - 1, -1, -1):
            analysed = turns[index]
            for earlier in analysed.claims:
                if (
                    earlier.subject is None
                    or earlier.subject.key != claim.subject.key
                    or earlier.attribute != claim.attribute
                ):
                    continue
                result = compare_values(
                    claim.raw.object, earlier.raw.object, self.edit_distance_ratio
                )
                return HistoryFinding(
                    turn_id=_turn_id(analysed.turn, index),
                    turn_text=analysed.turn.text,
                    conflict=not result.matches,
                    via="value",
                    confidence=round(earlier.confidence, 4),
                    stated_value=earlier.raw.object,
                )
        return None

    def by_verifier(
        self, claims: Sequence[ResolvedClaim], turns: Sequence[AnalysedTurn]
    ) -> dict[int, HistoryFinding]:
        """NLI conflicts for ``claims`` (index → finding); empty without a verifier."""
        if self.verifier is None:
            return {}
        pairs: list[tuple[str, str]] = []
        where: list[tuple[int, int]] = []
        for c_index, claim in enumerate(claims):
            if claim.subject is None:
                continue
            names = {claim.subject.name, *(claim.subject.entity.aliases if claim.subject.entity
                                           else ()), *(claim.subject.info.aliases
                                                       if claim.subject.info else ())}  # fmt: skip
            pattern = re.compile(
                r"\b(?:" + "|".join(re.escape(n) for n in names if n) + r")\b", re.I
            )
            for t_index, analysed in enumerate(turns):
                mentions = pattern.search(analysed.turn.text) or any(
                    e.subject is not None and e.subject.key == claim.subject.key
                    for e in analysed.claims
                )
                if mentions:
                    pairs.append((analysed.turn.text, claim.hypothesis))
                    where.append((c_index, t_index))
        if not pairs:
            return {}
        try:
            predictions = self.verifier.predict(pairs)  # type: ignore[attr-defined]
        except VerifierError as exc:
            logger.warning("history check: verifier failed, values only: %s", exc)
            return {}
        found: dict[int, HistoryFinding] = {}
        for (c_index, t_index), pred in zip(where, predictions, strict=True):
            if pred.contradiction < self.contradiction_threshold or pred.label != "contradiction":
                continue
            analysed = turns[t_index]
            previous = found.get(c_index)
            if previous is None or pred.contradiction > previous.confidence:
                found[c_index] = HistoryFinding(
                    turn_id=_turn_id(analysed.turn, t_index),
                    turn_text=analysed.turn.text,
                    conflict=True,
                    via="verifier",
                    confidence=round(float(pred.contradiction), 4),
                )
        return found
