"""The decision: from claim outcomes and the confidence bands to one recommendation.

In order (``report.decision`` records each step):

1. **Unchecked** (fail-closed): a checking stage failed, nothing could be verified, or the
   verdict is ``UNVERIFIED`` → ``human_review`` with the reason, whatever the score.
   **Nothing to check** is not unchecked: an answer whose every claim is ``not_checkworthy``
   (a question to the user, a greeting, thanks, an opinion) with no problem found is
   ``accept``-ed as it is — unless the user asked something it does not answer (the question
   check says so): then ``regenerate`` to address it (``human_review`` below the regenerate
   band).
2. ``claim`` granularity (default) — the answer's action follows from its claims
   (:mod:`guardrail.decision.outcomes`):

   - ``regenerate`` (``human_review`` below the regenerate band) when a confident problem could
     be neither repaired nor removed, when removals leave less than ``min_kept_share`` of the
     checkworthy claims, or when what remains no longer answers the question (the QUD
     check run on the delivered text) — a one-claim wrong answer is regenerated, also below
     the band when a confident problem names its claim and nothing else is wrong (its
     confidence is that claim's own score, not a doubt about the check). A reply to a
     remark rather than to a question or request ("I like football." → "Me too! Did you know
     that …?") answers nothing, so these two rules do not apply to it: its wrong fact is
     removed and the rest delivered, unless no text is left;
   - ``correct_and_deliver`` when confident problems were repaired or removed;
   - ``accept_with_flags`` when only uncertain or unverified claims are left, annotated;
   - every claim supported and nothing found by any check → ``accept``, whatever the
     confidence (it stays on the report);
   - else the confidence bands; an ``accept_with_flags`` band with nothing to flag (no
     uncertain claim, flag or coherence issue with a span) is ``accept``: an action never
     names what the report does not hold.

   ``answer`` granularity — all or nothing: any problem not repaired → ``regenerate`` /
   ``human_review``; all repaired → ``correct_and_deliver``; no problem → the confidence bands.

So a claim the report calls unsupported or contradicted is never delivered unmarked: it is
removed, repaired or annotated, or the answer is not delivered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from guardrail.config import ConfidenceLadder, HandlingThresholds, ScoringCutoffs
from guardrail.decision.bands import (
    DEFAULT_CUTOFFS,
    DEFAULT_LADDER,
    band_of,
    human_review_reason,
    recommend,
    regeneration_guidance,
)
from guardrail.decision.problems import CLAIM_KINDS
from guardrail.report import (
    Accept,
    AcceptWithFlags,
    Action,
    Claim,
    ClaimOutcome,
    ClaimStatus,
    CoherenceResult,
    CorrectAndDeliver,
    Correction,
    CorrectionType,
    Decision,
    FactualValidationResult,
    HallucinationFlag,
    HumanReview,
    Problem,
    QUDRelevance,
    Recommendation,
    Regenerate,
    Severity,
    ValidationStatus,
)

FAIL_CLOSED = "fail-closed: an answer that could not be checked is not delivered"
"""The gate of step 1 (the reason says what could not be checked)."""
NOTHING_TO_CHECK = "nothing to check"
"""The gate of an answer whose every claim is ``not_checkworthy``."""
ADDRESS_THE_QUESTION = "Please directly address the user's question."
NOT_CHECKWORTHY = ClaimStatus.NOT_CHECKWORTHY


def asked_something(coherence: CoherenceResult | None) -> bool | None:
    """Whether the user asked something — a question or a request — rather than made a remark
    ("I watched it last night."), by the question check (``None``: it did not run)."""
    if coherence is None:
        return None
    qud = coherence.qud_relevance
    if not qud.details.get("applicable"):
        return False
    return qud.question_type != "statement" or qud.details.get("answer_kind") == "action"


def clarifies(coherence: CoherenceResult | None) -> bool:
    """Whether the answer's main act is a question back about the user's last turn (the
    discourse check's ``clarification``: "Which order number is it about?")."""
    if coherence is None:
        return False
    return coherence.discourse_coherence.details.get("main_act") == "clarification"


@dataclass(frozen=True)
class Checked:
    """Everything the decision reads about one checked answer."""

    confidence: float
    problems: Sequence[Problem]
    claims: Sequence[Claim]
    """With ``outcome`` set (see :func:`~guardrail.decision.outcomes.claim_outcomes`)."""
    coherence: CoherenceResult | None
    factual: FactualValidationResult | None
    flags: list[HallucinationFlag]
    corrections: list[Correction]
    unchecked: list[str]
    delivered_qud: QUDRelevance | None = None
    """The QUD check on the text left after removals (``None``: nothing removed, or the
    check could not run)."""
    annotated: bool = True
    """Whether the correction stage produced the corrected and annotated text."""
    original: str = ""
    corrected: str | None = None
    """The text after repairs and removals (``None``: the correction stage did not run)."""

    def kept_text_share(self) -> float | None:
        """Share of the original's non-space characters left after the removals (``None``:
        nothing was removed, or the corrected text is not known)."""
        if self.corrected is None or not any(
            x.type is CorrectionType.REMOVAL for x in self.corrections
        ):
            return None
        before = len("".join(self.original.split()))
        after = len("".join((self.corrected or "").split()))
        return after / before if before else 0.0


def _problem_item(p: Problem, details: list[str]) -> str:
    why = f" ({'; '.join(details)})" if details else ""
    if p.kind == "unsupported":
        return (
            f"The evidence does not support '{p.text}'{why}: remove it or state only what the "
            "evidence says."
        )
    if p.kind in ("contradicted", "contradicts_fact", "temporal_error"):
        return f"The evidence contradicts '{p.text}'{why}: correct it from the evidence."
    if p.kind in ("kb_contradiction", "wrong_attribute"):
        return f"'{p.text}' conflicts with the knowledge base: use the recorded value."
    return f"Fix or remove '{p.text}' ({p.kind.replace('_', ' ')})."


def claim_guidance(problems: Sequence[Problem], flagged: Sequence[Claim] = ()) -> list[str]:
    """One instruction per problem claim (its flags named as details), then one per uncertain
    claim not already named: each claim once."""
    named = {p.claim_index for p in problems if p.kind in CLAIM_KINDS and p.claim_index is not None}
    details: dict[int, list[str]] = {}
    for p in problems:
        if p.kind not in CLAIM_KINDS and p.claim_index in named and p.claim_index is not None:
            details.setdefault(p.claim_index, []).append(f"'{p.text}': {p.kind.replace('_', ' ')}")
    items: list[str] = []
    texts: set[str] = set()
    for p in problems:
        if p.kind not in CLAIM_KINDS and p.claim_index in named:
            continue
        extra = details.get(p.claim_index, []) if p.claim_index is not None else []
        items.append(_problem_item(p, extra))
        texts.add(p.text)
    for c in flagged:
        if c.text not in texts and not any(c.text in t or t in c.text for t in texts):
            texts.add(c.text)
            items.append(
                f"The sources do not confirm '{c.text}': support it from the evidence or "
                "leave it out."
            )
    return list(dict.fromkeys(items))


def _guidance(checked: Checked, problems: Sequence[Problem], flagged: Sequence[Claim],
              cutoffs: ScoringCutoffs, extra: Sequence[str] = ()) -> Regenerate:  # fmt: skip
    rest = regeneration_guidance(checked.coherence, checked.factual, [], cutoffs)
    items = list(dict.fromkeys([*extra, *claim_guidance(problems, flagged), *rest]))
    if not items:
        items = ["Please answer again using only facts stated in the provided evidence."]
    return Regenerate(guidance=" ".join(items), items=items)


def _not_delivered(
    checked: Checked,
    problems: Sequence[Problem],
    flagged: Sequence[Claim],
    why: str,
    thresholds: HandlingThresholds,
    cutoffs: ScoringCutoffs,
    extra: Sequence[str] = (),
    ladder: ConfidenceLadder = DEFAULT_LADDER,
) -> tuple[Recommendation, str]:
    if checked.confidence >= thresholds.regenerate:
        return _guidance(checked, problems, flagged, cutoffs, extra), why
    if _one_named_wrong_claim(checked, problems, cutoffs):
        return _guidance(checked, problems, flagged, cutoffs, extra), (
            f"{why}; the answer's one claim is wrong and the guidance names it (its confidence "
            f"{checked.confidence:.2f} is that claim's score, not a doubt about the check)"
        )
    reason = human_review_reason(
        checked.confidence, checked.coherence, checked.factual, checked.flags,
        cutoffs=cutoffs, thresholds=thresholds, ladder=ladder,
    )  # fmt: skip
    named = "; ".join(f"{p.kind}: '{p.text}'" for p in problems[:5])
    reason = f"{why}. {reason}" + (f" Problems: {named}." if named else "")
    return HumanReview(reason=reason), f"{why}, and confidence below the regenerate band"


def _one_named_wrong_claim(
    checked: Checked, problems: Sequence[Problem], cutoffs: ScoringCutoffs
) -> bool:
    """Whether the answer states one checkworthy claim, a confident problem names it, and
    nothing else is wrong: its regeneration guidance says what to fix, so it is regenerated
    whatever the confidence (which, for one claim, is that claim's own score)."""
    checkworthy = [c for c in checked.claims if c.status is not NOT_CHECKWORTHY]
    if len(checkworthy) != 1 or checkworthy[0].status is ClaimStatus.UNVERIFIED:
        return False
    index = checked.claims.index(checkworthy[0])
    if not problems or any(p.claim_index != index for p in problems):
        return False
    coherence = checked.coherence
    return coherence is None or coherence.score >= cutoffs.incoherent_below


def decide(
    checked: Checked,
    *,
    thresholds: HandlingThresholds,
    granularity: str = "claim",
    min_kept_share: float = 0.5,
    cutoffs: ScoringCutoffs = DEFAULT_CUTOFFS,
    ladder: ConfidenceLadder = DEFAULT_LADDER,
) -> tuple[Recommendation, Decision]:
    """The recommendation and the record of how it was reached (see the module docstring);
    ``ladder`` is the config's confidence ladder (``GuardrailConfig.confidence``)."""
    claims = checked.claims
    checkworthy = [c for c in claims if c.status is not ClaimStatus.NOT_CHECKWORTHY]
    checked_claims = [c for c in checkworthy if c.status is not ClaimStatus.UNVERIFIED]
    supported = sum(c.status is ClaimStatus.SUPPORTED for c in checked_claims)
    removed = [c for c in checkworthy if c.outcome is ClaimOutcome.REMOVED]
    flagged = [c for c in claims if c.outcome in (ClaimOutcome.UNCERTAIN, ClaimOutcome.UNVERIFIED)]
    kept = (len(checkworthy) - len(removed)) / len(checkworthy) if checkworthy else None
    band = band_of(checked.confidence, thresholds)
    record = Decision(
        problems=list(checked.problems),
        band=band.value,
        supported_fraction=round(supported / len(checked_claims), 4) if checked_claims else None,
        checkworthy_claims=len(checkworthy),
        not_checkworthy_claims=len(claims) - len(checkworthy),
        granularity=granularity,
        removed_claims=len(removed),
        kept_share=round(kept, 4) if kept is not None else None,
    )
    rec, gate = _choose(checked, removed, flagged, kept, thresholds, granularity,
                        min_kept_share, cutoffs, ladder)  # fmt: skip
    action = Action(rec.action)
    override = None
    if action is not band:
        override = (
            f"{action.value} although the confidence {checked.confidence:.2f} falls in the "
            f"{band.value} band: {gate}"
        )
    return rec, record.model_copy(update={"gate": gate, "overrides_band": override})


Choice = tuple[Recommendation, str]
"""A recommendation and the gate that chose it (the reason ``report.decision`` records)."""


@dataclass(frozen=True)
class _Context:
    """What the rules of :func:`_choose` read: the checked answer, its claims' outcomes and the
    decision's settings."""

    checked: Checked
    removed: Sequence[Claim]
    """The checkworthy claims the delivered text leaves out."""
    flagged: Sequence[Claim]
    """The claims shown annotated (uncertain or unverified)."""
    kept: float | None
    """Share of the checkworthy claims kept (``None``: no checkworthy claim)."""
    thresholds: HandlingThresholds
    granularity: str
    min_kept_share: float
    cutoffs: ScoringCutoffs
    ladder: ConfidenceLadder

    def not_delivered(
        self, problems: Sequence[Problem], flagged: Sequence[Claim], why: str,
        extra: Sequence[str] = (),
    ) -> Choice:  # fmt: skip
        """``regenerate`` (``human_review`` below the regenerate band) because of ``why``."""
        return _not_delivered(
            self.checked, problems, flagged, why, self.thresholds, self.cutoffs, extra,
            self.ladder,
        )  # fmt: skip


def _choose(
    checked: Checked,
    removed: Sequence[Claim],
    flagged: Sequence[Claim],
    kept: float | None,
    thresholds: HandlingThresholds,
    granularity: str,
    min_kept_share: float,
    cutoffs: ScoringCutoffs,
    ladder: ConfidenceLadder,
) -> Choice:
    """The first rule that applies, in the order of the module docstring: the gates, then the
    claim-level or answer-level rules, then the confidence bands."""
    ctx = _Context(checked, removed, flagged, kept, thresholds, granularity, min_kept_share,
                   cutoffs, ladder)  # fmt: skip
    level = _answer_level_rules if granularity == "answer" else _claim_level_rules
    for rule in (_unchecked_rule, _nothing_to_check_rule, level):
        choice = rule(ctx)
        if choice is not None:
            return choice
    return _confidence_band_rules(ctx)


def _unchecked_rule(ctx: _Context) -> Choice | None:
    """Fail-closed: an answer that could not be checked goes to a person, whatever its score."""
    c = ctx.checked
    if not c.unchecked:
        return None
    reason = human_review_reason(
        c.confidence, c.coherence, c.factual, c.flags, c.unchecked, ctx.cutoffs, ctx.thresholds,
        ctx.ladder,
    )  # fmt: skip
    return HumanReview(reason=reason), FAIL_CLOSED


def _nothing_to_check_rule(ctx: _Context) -> Choice | None:
    """An answer whose every claim is ``not_checkworthy`` and with no problem is accepted,
    unless the user asked something it does not answer: then it is not delivered."""
    c = ctx.checked
    if not c.claims or c.problems or any(x.status is not NOT_CHECKWORTHY for x in c.claims):
        return None
    qud = c.coherence.qud_relevance if c.coherence is not None else None
    if not (asked_something(c.coherence) and qud is not None and not qud.addresses_qud):
        return Accept(), NOTHING_TO_CHECK
    if qud.question_type == "statement" and clarifies(c.coherence):
        # a remark or a request, answered with a question about it: nothing was left
        # unanswered (the question check is for questions)
        return Accept(), NOTHING_TO_CHECK
    why = "nothing to check, and the answer does not address the question asked"
    return ctx.not_delivered([], [], why, [ADDRESS_THE_QUESTION])


def _fixes(checked: Checked) -> list[Correction]:
    """The corrections that change the text (annotations excluded)."""
    return [x for x in checked.corrections if x.type is not CorrectionType.ANNOTATION]


def _answer_level_rules(ctx: _Context) -> Choice | None:
    """``answer`` granularity, all or nothing: a problem not repaired → not delivered; every
    problem repaired → ``correct_and_deliver``; no problem → no choice (the bands decide)."""
    problems = list(ctx.checked.problems)
    unfixed = [p for p in problems if p.fixed_by is None]
    if unfixed:
        gate = f"{len(unfixed)} unrepaired problem(s): never delivered as is"
        return ctx.not_delivered(unfixed, [], gate)
    if problems:
        return CorrectAndDeliver(corrections=_fixes(ctx.checked)), (
            f"all {len(problems)} problem(s) repaired in the corrected text"
        )
    return None


def _claim_level_rules(ctx: _Context) -> Choice | None:
    """``claim`` granularity: not delivered when a reason of :func:`_undeliverable` holds;
    else ``correct_and_deliver`` when confident problems were repaired or removed, else
    ``accept_with_flags`` when uncertain claims are annotated; else no choice (the bands)."""
    c = ctx.checked
    problems = list(c.problems)
    reasons, extra = _undeliverable(ctx)
    if reasons:
        named = [p for p in problems if p.fixed_by in (None, "removal")]
        return ctx.not_delivered(named, ctx.flagged, "; ".join(reasons), extra)
    if problems:
        gate = f"{len(problems)} confident problem(s): {len(ctx.removed)} claim(s) removed"
        repaired = len({p.claim_index for p in problems if p.fixed_by not in (None, "removal")})
        if repaired:
            gate += f", {repaired} repaired"
        if ctx.flagged:
            gate += f"; {len(ctx.flagged)} uncertain claim(s) annotated"
        return CorrectAndDeliver(corrections=_fixes(c)), gate
    if ctx.flagged:
        spans = [x.span for x in ctx.flagged]
        severity = Severity.MEDIUM if len(spans) > 3 else Severity.LOW
        return AcceptWithFlags(flags=spans, severity=severity), (
            f"no confident problem; {len(ctx.flagged)} uncertain claim(s) annotated"
        )
    return None


def _undeliverable(ctx: _Context) -> tuple[list[str], list[str]]:
    """Why the claim-level delivery cannot be shown (empty: it can), and the guidance items
    those reasons add: a confident problem neither repaired nor removed, removals leaving too
    little, a delivered text that no longer answers the question, or uncertain claims that
    could not be annotated. A reply to a remark answers nothing: what is left after removals
    needs only be text."""
    c, removed, kept, share = ctx.checked, ctx.removed, ctx.kept, ctx.min_kept_share
    reasons: list[str] = []
    extra: list[str] = []
    unfixed = [p for p in c.problems if p.fixed_by is None]
    if unfixed:
        reasons.append(f"{len(unfixed)} confident problem(s) could be neither repaired nor removed")
    text_kept = c.kept_text_share()
    asked = asked_something(c.coherence) is not False
    if removed and asked and kept is not None and kept < share:
        reasons.append(
            f"removing {len(removed)} claim(s) would leave {kept:.0%} of the answer "
            f"(< min_kept_share {share:.0%})"
        )
    elif text_kept is not None and (text_kept == 0.0 or (kept is None and text_kept < share)):
        reasons.append(
            f"the removals would leave {text_kept:.0%} of the answer's text "
            f"(< min_kept_share {share:.0%})"
        )
    qud = c.delivered_qud
    if removed and asked and qud is not None and not qud.addresses_qud:
        reasons.append("what remains after the removals does not answer the question")
        extra.append(ADDRESS_THE_QUESTION)
    if ctx.flagged and not c.annotated:
        reasons.append("uncertain claims could not be annotated (the correction stage did not run)")
    return reasons, extra


def _confidence_band_rules(ctx: _Context) -> Choice:
    """No rule above applied: ``accept`` when every claim is supported and nothing was found,
    else the confidence band — never ``accept`` with a claim to flag, and never
    ``accept_with_flags`` with nothing to flag."""
    c, flagged = ctx.checked, ctx.flagged
    if _all_supported_nothing_found(c):
        return Accept(), (
            f"every claim supported and nothing found (the confidence {c.confidence:.2f} "
            "stays on the report)"
        )
    rec = recommend(
        c.confidence, c.coherence, c.factual, c.flags, c.corrections, ctx.thresholds,
        cutoffs=ctx.cutoffs, ladder=ctx.ladder,
    )  # fmt: skip
    if rec.action == "accept" and flagged:
        # a claim the report does not call supported is never shown unmarked
        rec = AcceptWithFlags(flags=[x.span for x in flagged])
    if isinstance(rec, AcceptWithFlags) and not rec.flags:
        # an action never names what the report does not hold: flag the coherence issues
        spans = [i.span for i in c.coherence.issues if i.span is not None] if c.coherence else []
        if not spans:
            return Accept(), (
                f"no blocking problem and nothing to flag (the confidence {c.confidence:.2f} "
                "falls in the accept-with-flags band)"
            )
        rec = AcceptWithFlags(flags=spans, severity=rec.severity)
    return rec, f"no blocking problem: the confidence band for {c.confidence:.2f}"


def _all_supported_nothing_found(c: Checked) -> bool:
    """Whether every checkworthy claim is supported and no check found anything: no flag, no
    coherence issue, no knowledge-base or dialogue finding, no correction."""
    checkworthy = [x for x in c.claims if x.status is not NOT_CHECKWORTHY]
    if not checkworthy or any(x.status is not ClaimStatus.SUPPORTED for x in checkworthy):
        return False
    if c.flags or c.corrections or (c.coherence is not None and c.coherence.issues):
        return False
    found = (ValidationStatus.CONTRADICTED, ValidationStatus.HISTORY_CONFLICT)
    factual = c.factual
    return factual is None or all(v.status not in found for v in factual.claim_validations)
