"""Check a response's claims against the evidence with batched verifier calls.

``detect`` runs three steps — scoring, the claim-level verdict with its flags, and the
response verdict — each a function of its own:

1. :func:`score_claims` — claims that are not check-worthy or in a language the verifier does
   not cover are set aside; the rest are paired with their candidate evidence windows (BM25,
   then embeddings of the survivors, see :mod:`guardrail.hallucination.plan`), with similar
   sentence pairs of the response and similar earlier turns, and scored in batched calls; if a
   call fails, each claim is retried alone and a claim that still fails is ``unverified``;
2. :func:`judge_claims` — claim statuses (calibrated or T(rs)), the date rule, and the flags;
   a span model behind the verifier (LettuceDetect, alone or in a hybrid) adds a flag for each
   span of the answer it marks as hallucinated (:func:`~guardrail.hallucination.flags.span_flags`);
3. :func:`response_verdict` — the Cw-CONLI verdict over the claims.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from guardrail.config import ConfidenceLadder, HallucinationConfig
from guardrail.errors import VerifierError
from guardrail.hallucination import flags as build
from guardrail.hallucination.aggregation import (
    calibrated_status,
    claim_status,
    decide_windows,
    response_verdict,
)
from guardrail.hallucination.alignment import (
    AlignmentIndex,
    NameMismatch,
    claim_alignment,
    name_mismatches,
    unplaced_names,
    unplaced_share,
    value_alignment,
)
from guardrail.hallucination.calibration import EvidenceIndex, claim_features
from guardrail.hallucination.calibration_registry import (
    CalibrationChoice,
    calibration_for,
    combined_probability,
    configured_calibration,
)
from guardrail.hallucination.checkworthy import not_checkworthy_reason
from guardrail.hallucination.evidence import Evidence, dialogue_window
from guardrail.hallucination.grounding import RegionValues, ValueMismatch, value_mismatches
from guardrail.hallucination.plan import Plan, plan_pairs, run_verifier
from guardrail.hallucination.polarity import PolarityMismatch, polarity_mismatch
from guardrail.hallucination.selection import SELECTED_WINDOW as SELECTED
from guardrail.hallucination.windows import Window, best_snippet
from guardrail.report import (
    CalibrationUsed,
    Claim,
    ClaimStatus,
    EvidencePointer,
    HallucinationFlag,
    Verdict,
    VerifierScores,
)
from guardrail.thresholds import claim_cutoffs
from guardrail.verifiers.base import LanguageRouter, NLIPrediction, Verifier
from guardrail.verifiers.cache import ScoreCache
from guardrail.verifiers.hybrid import answered_members, usage_of
from guardrail.verifiers.routing import uncovered_reason

logger = logging.getLogger(__name__)

NAME_CONFIDENCE = 0.8
"""Confidence of a WRONG_ATTRIBUTE flag of the name check whose evidence sentence gives exactly
one other name (a repair candidate); a supported claim it flags keeps ``p_supported`` at most
1 − this."""
NAME_CONFIDENCE_LOOSE = 0.6
"""The same, when the evidence sentence gives several other names of that kind."""
UNPLACED_NAMES = True
"""A name of the claim that the documents state outside its region only
(:func:`~guardrail.hallucination.alignment.unplaced_names`) counts as a missing specific in the
calibration features, as a misplaced name does (no flag of its own)."""
VALUES_BY_NAMES = True
"""A claim too short to align without its names has its values grounded where it aligns with
them (:func:`~guardrail.hallucination.alignment.value_alignment`)."""


@dataclass
class Detection:
    """What the hallucination check found."""

    claims: list[Claim]
    flags: list[HallucinationFlag]
    verdict: Verdict
    pairs_scored: int = 0
    """(premise, hypothesis) pairs whose scores were used (cache hits included)."""
    notes: list[str] = field(default_factory=list)
    calibration: CalibrationUsed | None = None
    """The calibration ``p_supported`` was computed with (``None``: no claim has one)."""


@dataclass
class Scoring:
    """Step 1's result: the claims (statuses of set-aside ones filled in), the plan, scores."""

    claims: list[Claim]
    plan: Plan
    scores: dict[int, NLIPrediction]
    failed: dict[int, str]
    """Reason per claim whose verifier call failed."""
    notes: list[str]


def _pointer(window: Window, snippet: str) -> EvidencePointer:
    return EvidencePointer(
        passage_index=window.passage_index,
        window_index=window.window_index,
        snippet=snippet,
        source=window.source,
    )


def _set_aside(claims: list[Claim], verifier: Any, config: HallucinationConfig) -> list[int]:
    """Mark not-check-worthy and uncovered-language claims; the indices of the others."""
    checkable = []
    for i, c in enumerate(claims):
        if c.status is ClaimStatus.NOT_CHECKWORTHY or (
            c.reason is not None and c.status is ClaimStatus.UNVERIFIED
        ):
            continue  # already set aside (when the claims were made, or past max_claims)
        why = not_checkworthy_reason(c.text, c.language) if config.checkworthiness else None
        if why is not None:
            c.status, c.reason = ClaimStatus.NOT_CHECKWORTHY, f"not check-worthy: {why}"
            continue
        if not verifier.covers(c.language):
            c.reason = uncovered_reason(c.language, verifier)
            c.status = ClaimStatus.UNVERIFIED
            continue
        checkable.append(i)
    return checkable


def score_claims(
    claims: list[Claim],
    evidence: Evidence,
    verifier: Any,
    config: HallucinationConfig,
    embedder: Callable[[], Any] | None = None,
    cache: ScoreCache | None = None,
    no_evidence_reason: str = "no evidence text to check against",
) -> Scoring:
    """Step 1: set claims aside or pair them with evidence, and score the pairs.

    Args:
        claims: claims with spans (copied; the copies are returned).
        evidence: windows, known texts and dialogue sentences.
        verifier: an object with ``predict(pairs)`` and ``covers(language)``.
        config: the hallucination settings (``speed`` for the cost-saving steps).
        embedder: returns the sentence embedder (called only when needed).
        cache: a (premise, hypothesis) score cache shared across calls.
    """
    notes: list[str] = []
    claims = [c.model_copy() for c in claims]
    checkable = _set_aside(claims, verifier, config)
    if not evidence.windows:  # nothing to support a claim: its prior-turn pairs only (plan)
        for c in claims:
            if c.status is ClaimStatus.UNVERIFIED and c.reason is None:
                c.reason = no_evidence_reason
    speed = config.speed
    plan = plan_pairs(claims, checkable, evidence, config, embedder, notes, speed)
    if plan.pairs:
        scores, failed = run_verifier(
            verifier,
            plan,
            notes,
            cache,
            speed.early_exit_entailment,
            speed.early_exit_contradiction,
        )
    else:
        scores, failed = {}, {}
    return Scoring(claims, plan, scores, failed, notes)


def _features(
    text: str,
    preds: Sequence[NLIPrediction],
    windows: Sequence[Window],
    index: EvidenceIndex,
    nlp: Any,
    n_windows: int,
    misplaced: int = 0,
    unplaced: float = 0.0,
) -> dict[str, float]:
    """The calibration features of a claim from its windows' predictions (one per window);
    ``misplaced`` names (:func:`~guardrail.hallucination.alignment.name_mismatches`, and the
    names only other parts of the documents state:
    :func:`~guardrail.hallucination.alignment.unplaced_names`) count as missing specifics;
    ``unplaced`` is its ``unplaced_share`` (0.0 where no alignment ran: no passages, or the
    name, value and polarity checks off)."""
    decision = decide_windows(preds)
    selected = [p for p, w in zip(preds, windows, strict=True) if w.window_index == SELECTED]
    features = claim_features(
        text,
        decision.best_prediction,
        decision.contra_prediction.contradiction,
        index,
        nlp,
        best_window=windows[decision.best].text,
        evidence_windows=n_windows,
        selected=selected[0] if selected else None,
        unplaced_share=unplaced,
    )
    if misplaced:
        features["missing_specific"] = float(min(features["missing_specific"] + misplaced, 3))
    return features


@dataclass(frozen=True)
class _Judging:
    """What judging every claim of one response shares (built once by :func:`judge_claims`)."""

    response: str
    evidence: Evidence
    config: HallucinationConfig
    retrieval_score: float | None
    nlp: Any
    noted: float
    """The ladder's ``noted`` rung: a contradiction at least this sure is reported."""
    index: EvidenceIndex
    aligned: AlignmentIndex | None
    region_values: RegionValues | None

    @property
    def calibrated(self) -> bool:
        return self.config.policy == "calibrated"

    @property
    def names_checked(self) -> bool:
        return self.config.name_check and self.nlp is not None

    @classmethod
    def of(
        cls,
        response: str,
        evidence: Evidence,
        config: HallucinationConfig,
        retrieval_score: float | None,
        nlp: Any,
        question: str | None,
        ladder: ConfidenceLadder,
    ) -> _Judging:
        index = EvidenceIndex.of(evidence.known_texts or [w.text for w in evidence.windows])
        aligned: AlignmentIndex | None = None
        checks = (config.name_check and nlp is not None) or config.value_check
        if (checks or config.polarity_check) and evidence.passages:
            aligned = AlignmentIndex.of(evidence.passages, question or "")
        region_values = RegionValues(aligned) if aligned is not None else None
        return cls(
            response,
            evidence,
            config,
            retrieval_score,
            nlp,
            ladder.noted,
            index,
            aligned,
            region_values,
        )


def judge_claims(
    response: str,
    scoring: Scoring,
    evidence: Evidence,
    config: HallucinationConfig,
    retrieval_score: float | None,
    nlp: Any = None,
    calibration: CalibrationChoice | None = None,
    routed: Mapping[int, Route] | None = None,
    question: str | None = None,
    ladder: ConfidenceLadder | None = None,
) -> tuple[list[float | None], list[str], list[HallucinationFlag], float]:
    """Step 2: claim statuses, the date rule and the flags, from the scores of step 1.

    ``calibration`` is the verifier's (:func:`calibration_for`); ``None`` = the one
    ``config.calibration`` names without a verifier (:func:`configured_calibration`).
    ``routed``: by claim index, the verifier a router sent the claim to and its calibration,
    when not the default (:func:`claim_routes`). ``question``: the user's query (its names are
    not checked by ``config.name_check``). ``ladder``: the config's confidence ladder
    (``None``: the default one).

    Returns the per-claim score that enters the verdict (``None`` = not checked), the reasons
    of unchecked claims, the flags (unsorted) and the claim threshold used.
    """
    if calibration is None:
        calibration = configured_calibration(config.calibration)
    threshold = claim_cutoffs(calibration, config, retrieval_score).threshold
    routed = routed or {}
    claims, plan, scores, failed = scoring.claims, scoring.plan, scoring.scores, scoring.failed
    ladder = ladder or ConfidenceLadder()
    judging = _Judging.of(response, evidence, config, retrieval_score, nlp, question, ladder)
    flags: list[HallucinationFlag] = []
    entailments: list[float | None] = []
    unverified_reasons: list[str] = []
    for i, c in enumerate(claims):
        if c.status is ClaimStatus.NOT_CHECKWORTHY:
            continue
        if i in failed or i not in plan.claim_pairs:
            if i in failed:
                c.status, c.reason = ClaimStatus.UNVERIFIED, failed[i]
            entailments.append(None)
            unverified_reasons.append(c.reason or "not checked")
            continue
        preds = [scores[p] for p in plan.claim_pairs[i]]
        entailment, found = _judge_claim(
            judging, i, c, preds, plan.claim_windows[i], calibration, routed.get(i)
        )
        flags += found
        entailments.append(entailment)
    flags += _entity_flags(judging, claims, flags)
    flags += _pair_flags(judging, scoring)
    return entailments, unverified_reasons, flags, threshold


def _judge_claim(
    judging: _Judging,
    i: int,
    c: Claim,
    preds: list[NLIPrediction],
    windows: list[Window],
    calibration: CalibrationChoice,
    route: Route | None,
) -> tuple[float, list[HallucinationFlag]]:
    """One checked claim's status, ``p_supported``, evidence and reason (set on ``c``); its
    score for the verdict and its flags."""
    config = judging.config
    own = route.calibration if route is not None else calibration
    cut = claim_cutoffs(own, config, judging.retrieval_score).threshold
    decision = decide_windows(preds)
    found = _mismatches(judging, c)
    misplaced, moved, flipped = found.misplaced, found.moved, found.flipped
    features_of = partial(
        _features,
        c.text,
        windows=windows,
        index=judging.index,
        nlp=judging.nlp,
        n_windows=len(judging.evidence.windows),
        misplaced=len(misplaced) + found.unplaced_names,
        unplaced=found.unplaced_share,
    )
    features = features_of(preds)
    c.features = features
    if own.members:  # a hybrid's members, each with its own calibration
        p_supported = combined_probability(own, preds, features_of)
    elif own.calibrator is not None:
        p_supported = own.calibrator.probability(features)
    else:  # uncalibrated: the verifier's own
        p_supported = decision.best_prediction.entailment
    c.p_supported = round(p_supported, 4)
    if judging.calibrated:
        c.status = calibrated_status(c.p_supported, decision, cut, judging.noted)
    else:
        c.status = claim_status(decision, cut, judging.noted)
    contradicted = c.status is ClaimStatus.CONTRADICTED
    win = windows[decision.contra if contradicted else decision.best]
    pred = decision.contra_prediction if contradicted else decision.best_prediction
    snippet = best_snippet(win.text, c.text)
    c.scores = VerifierScores(**decision.best_prediction.model_dump())
    c.evidence = _pointer(win, snippet)
    entailment = c.p_supported if judging.calibrated else decision.best_prediction.entailment
    measure = "p(supported)" if judging.calibrated else "best entailment"
    bound = "claim threshold" if judging.calibrated else "T(rs)"
    c.reason = f"{measure} {entailment:.2f} vs {bound} {cut:.2f}" + (
        f"; contradiction {pred.contradiction:.2f}" if contradicted else ""
    )
    if route is not None:
        c.reason += f"; verifier {route.verifier}, {own.label}"
    conf = max(pred.contradiction, 1.0 - entailment)
    temporal = build.temporal_flags(judging.response, c, i, win.text, snippet, conf)
    names = [
        build.wrong_name_flag(
            judging.response, c, i, m, NAME_CONFIDENCE if m.plain else NAME_CONFIDENCE_LOOSE
        )
        for m in misplaced
    ]
    names += [build.misplaced_value_flag(judging.response, c, i, m) for m in moved]
    if flipped is not None:
        names.append(build.polarity_flag(judging.response, c, i, flipped))
    if moved:  # the region's value replaces the closest window's date in the same place
        temporal = [f for f in temporal if not _overlaps_any(f.span, names)]
    return _claim_flags(judging, i, c, entailment, pred, snippet, cut, temporal, names)


@dataclass(frozen=True)
class _Placement:
    """What the region checks found of one claim (:func:`_mismatches`)."""

    misplaced: list[NameMismatch] = field(default_factory=list)
    """Names the evidence telling the claim's fact does not state, stating another there."""
    moved: list[ValueMismatch] = field(default_factory=list)
    """Values the same, for numbers, dates and times."""
    flipped: PolarityMismatch | None = None
    """A word the claim negates that this evidence affirms, or the reverse."""
    unplaced_names: int = 0
    """Names only other parts of the documents state."""
    unplaced_share: float = 0.0
    """:func:`~guardrail.hallucination.alignment.unplaced_share` (0.0 where no alignment ran)."""


def _mismatches(judging: _Judging, c: Claim) -> _Placement:
    """The names (``name_check``) and values (``value_check``) of claim ``c`` that the
    evidence telling its fact does not state, while it states another there; a word it
    negates that this evidence affirms, or the reverse (``polarity_check``); the number of its
    names only other parts of the documents state; and its ``unplaced_share``."""
    misplaced: list[NameMismatch] = []
    moved: list[ValueMismatch] = []
    aligned, config, nlp = judging.aligned, judging.config, judging.nlp
    if aligned is None or judging.region_values is None:
        return _Placement()
    english = c.language in (None, "en")
    reader = nlp if english and judging.names_checked else None
    wanted = config.value_check or (config.polarity_check and english)
    located = claim_alignment(c.text, aligned, reader) if wanted else None
    unplaced = 0
    share = unplaced_share(c.text, located[0], reader) if located is not None else 0.0
    if judging.names_checked and english:
        misplaced = name_mismatches(c.text, aligned, nlp, located)
        if UNPLACED_NAMES and located is not None:
            unplaced = unplaced_names(c.text, aligned, located, misplaced)
    if config.value_check and located is not None:
        spans = [(e.start_char, e.end_char) for e in located[1]]
        if located[0] is not None:
            moved = value_mismatches(c.text, located[0], judging.region_values, spans)
        elif VALUES_BY_NAMES and (region := value_alignment(c.text, aligned)) is not None:
            # aligned by its names: only a single rival in the value's slot says it was moved
            found = value_mismatches(c.text, region, judging.region_values, spans, by_names=True)
            moved = [m for m in found if m.candidate is not None]
    flipped = None
    if config.polarity_check and english and located is not None:
        flipped = polarity_mismatch(c.text, located[0])
    return _Placement(misplaced, moved, flipped, unplaced, share)


def _claim_flags(
    judging: _Judging,
    i: int,
    c: Claim,
    entailment: float,
    pred: NLIPrediction,
    snippet: str,
    cut: float,
    temporal: list[HallucinationFlag],
    names: list[HallucinationFlag],
) -> tuple[float, list[HallucinationFlag]]:
    """The flags of one judged claim, and its score for the verdict: a claim the name, value
    or date checks contradict loses its support (status, reason, score), whether or not the
    verifier and the calibration found it supported (:func:`_apply_findings`); its flags
    follow from how the verifier and the calibration judged it (:func:`_flags_of`)."""
    judged = c.status
    entailment = _apply_findings(judging, c, entailment, temporal, names)
    return entailment, _flags_of(judging, i, c, judged, pred, snippet, cut, temporal, names)


def _strong_dates(judging: _Judging, temporal: list[HallucinationFlag]) -> list[HallucinationFlag]:
    """The date findings sure enough to contradict a claim (``date_check`` on)."""
    if not judging.config.date_check:
        return []
    return [f for f in temporal if f.confidence >= build.VALUE_CONFIDENCE]


def _apply_findings(
    judging: _Judging,
    c: Claim,
    entailment: float,
    temporal: list[HallucinationFlag],
    names: list[HallucinationFlag],
) -> float:
    """``entailment`` after the claim's findings, with ``c``'s status and reason: the name and
    value checks (the evidence telling the claim's fact names someone else, or states another
    value, there) or, without such a finding, the date check (the evidence sentence closest to
    the claim gives another date) cap its score; a sure finding contradicts the claim, a
    looser one leaves a supported claim unsupported."""
    supported = c.status is ClaimStatus.SUPPORTED
    if names:
        stated = any(f.confidence >= build.VALUE_CONFIDENCE for f in names)
        if stated or supported:
            c.status = ClaimStatus.CONTRADICTED if stated else ClaimStatus.UNSUPPORTED
        c.reason = f"{c.reason}; {names[0].explanation}"
        return _capped(c, entailment, max(f.confidence for f in names))
    strong = _strong_dates(judging, temporal)
    if strong:
        c.status = ClaimStatus.CONTRADICTED
        c.reason = f"{c.reason}; {strong[0].explanation}"
        return _capped(c, entailment, strong[0].confidence)
    return entailment


def _flags_of(
    judging: _Judging,
    i: int,
    c: Claim,
    judged: ClaimStatus | None,
    pred: NLIPrediction,
    snippet: str,
    cut: float,
    temporal: list[HallucinationFlag],
    names: list[HallucinationFlag],
) -> list[HallucinationFlag]:
    """The flags of claim ``c`` (findings already applied), ``judged`` being its status from
    the verifier and the calibration alone. A supported claim is flagged only by its findings
    (a sure date finding with a contradiction flag that names it); a claim already below the
    threshold keeps its own flag (contradicted or unsupported), beside every finding."""
    response = judging.response
    if judged is ClaimStatus.SUPPORTED:
        if names:
            return names + temporal
        strong = _strong_dates(judging, temporal)
        if not strong:
            return []
        flag = build.contradiction_flag(response, c, i, pred, snippet).model_copy(
            update={
                "confidence": strong[0].confidence,
                "explanation": f"the evidence gives another date: {strong[0].explanation}",
            }
        )
        return [flag, *strong]
    if judged is ClaimStatus.CONTRADICTED:
        own = build.contradiction_flag(response, c, i, pred, snippet)
    else:
        own = build.unsupported_flag(response, c, i, pred, cut, snippet, judging.calibrated)
    return [own, *temporal, *names]


def _capped(c: Claim, entailment: float, sure: float) -> float:
    """``entailment`` (and ``c.p_supported``) at most ``1 − sure``: a finding ``sure``
    confident against the claim."""
    if c.p_supported is not None:
        c.p_supported = round(min(c.p_supported, 1.0 - sure), 4)
    return min(entailment, 1.0 - sure)


def _entity_flags(
    judging: _Judging, claims: Sequence[Claim], flags: Sequence[HallucinationFlag]
) -> list[HallucinationFlag]:
    """NONEXISTENT_ENTITY flags of the judged claims' names, numbers and dates found in no
    evidence (an unverified claim was never read against evidence: not "fabricated")."""
    known = judging.evidence.known_texts
    if not judging.config.entity_check or not known:
        return []
    found: list[HallucinationFlag] = []
    for i, c in enumerate(claims):
        if c.status not in (ClaimStatus.UNSUPPORTED, ClaimStatus.CONTRADICTED):
            continue
        taken = [f.span for f in [*flags, *found] if f.claim_index == i and f.span != c.span]
        nlp = judging.nlp if c.language == "en" else None
        found += build.nonexistent_entity_flags(judging.response, c, i, known, taken, nlp)
    return found


def _pair_flags(judging: _Judging, scoring: Scoring) -> list[HallucinationFlag]:
    """Flags of the response's contradicting sentence pairs and of claims contradicting an
    earlier turn (which then points to that turn when it has no evidence)."""
    noted, scores, claims = judging.noted, scoring.scores, scoring.claims
    found: list[HallucinationFlag] = []
    for a, b, p in scoring.plan.logic:
        if p in scores and scores[p].contradiction >= noted:
            found.append(
                build.logical_inconsistency_flag(
                    judging.response, claims[a], claims[b], b, scores[p]
                )
            )
    for ci, ti, p in scoring.plan.prior:
        if p in scores and scores[p].contradiction >= noted:
            turn = judging.evidence.turn_sentences[ti]
            found.append(
                build.prior_turn_flag(
                    judging.response, claims[ci], ci, scores[p], turn.turn_text, turn.turn_id
                )
            )
            if claims[ci].evidence is None:
                claims[ci].evidence = _pointer(dialogue_window(turn), turn.text)
    return found


def _overlaps_any(span: Any, flags: Sequence[HallucinationFlag]) -> bool:
    return any(span.start < f.span.end and f.span.start < span.end for f in flags)


@dataclass(frozen=True)
class Route:
    """The verifier a router sent a claim to (not its default) and that verifier's calibration."""

    verifier: str
    calibration: CalibrationChoice


def claim_routes(verifier: Any, scoring: Scoring, config: HallucinationConfig) -> dict[int, Route]:
    """By claim index, the verifier a router sent the claim to and its calibration, for claims
    not scored by the router's default (empty without routes).

    A claim's verifier is the one that scored most of its pairs (they differ only when its
    windows are in several scripts); its calibration is that verifier's for the claim's language
    (:func:`calibration_for`), so a multilingual route without its own is uncalibrated.
    """
    if not isinstance(verifier, LanguageRouter) or not verifier.routes:
        return {}
    default = verifier.default.name
    chosen: dict[int, str] = {}
    for i, idx in scoring.plan.claim_pairs.items():
        names = [scoring.scores[p].verifier for p in idx if p in scoring.scores]
        named = Counter(n for n in names if n is not None)
        if named and named.most_common(1)[0][0] != default:
            chosen[i] = named.most_common(1)[0][0]
    out: dict[int, Route] = {}
    cache: dict[tuple[str, str | None], CalibrationChoice] = {}
    for i, name in chosen.items():
        language = scoring.claims[i].language
        if (name, language) not in cache:
            route = verifier.verifier_named(name)
            preds = [
                scoring.scores[p]
                for j, n in chosen.items()
                if n == name
                for p in scoring.plan.claim_pairs[j]
                if p in scoring.scores
            ]
            cache[(name, language)] = calibration_for(
                route,
                config.calibration,
                answered=answered_members(preds),
                language=language,
            )
        out[i] = Route(name, cache[(name, language)])
    return out


def routes_note(claims: Sequence[Claim], routed: Mapping[int, Route]) -> str | None:
    """``routed: claim 1 (zh) by multilingual-minilmv2-l6-xnli, uncalibrated ...`` for
    ``verdict.method``, or ``None`` when no claim left the default verifier."""
    if not routed:
        return None
    groups: dict[tuple[str, str], list[str]] = {}
    for i, route in sorted(routed.items()):
        key = (route.verifier, route.calibration.label)
        groups.setdefault(key, []).append(f"{i} ({claims[i].language or '?'})")
    parts = [
        f"claim{'s' if len(ids) > 1 else ''} {', '.join(ids)} by {name}, {label}"
        for (name, label), ids in groups.items()
    ]
    return "routed: " + "; ".join(parts)


def _span_flags(
    verifier: Any,
    response: str,
    evidence: Evidence,
    question: str | None,
    scoring: Scoring,
    flags: list[HallucinationFlag],
) -> list[HallucinationFlag]:
    """The flags of the spans each span model behind ``verifier`` finds in ``response``; a
    model that fails adds none and a note (its claim scores decided already)."""
    found: list[HallucinationFlag] = []
    for model in verifier.span_models() if isinstance(verifier, Verifier) else ():
        try:
            spans = model.spans(evidence.passages, response, question or None)
        except VerifierError as exc:
            logger.warning("span flags of %s failed: %s", model.name, exc)
            scoring.notes.append(f"span flags: {model.name} failed ({type(exc).__name__})")
            continue
        found += build.span_flags(response, spans, scoring.claims, [*flags, *found], model.name)
    return found


def detect(
    response: str,
    claims: list[Claim],
    evidence: Evidence,
    verifier: Any,
    config: HallucinationConfig,
    retrieval_score: float | None,
    embedder: Callable[[], Any] | None = None,
    nlp: Any = None,
    cache: ScoreCache | None = None,
    no_evidence_reason: str = "no evidence text to check against",
    question: str | None = None,
    ladder: ConfidenceLadder | None = None,
) -> Detection:
    """Score ``claims`` against ``evidence`` and build flags and the verdict.

    Args:
        response: the full response (spans index into it).
        claims: claims with spans; ones already ``unverified`` (e.g. past ``max_claims``) stay so.
        evidence: windows, known texts and dialogue sentences.
        verifier: an object with ``predict(pairs)`` and ``covers(language)``.
        config: the hallucination settings.
        retrieval_score: ``rs`` for T(rs).
        embedder: returns the sentence embedder (called only when needed).
        nlp: optional spaCy pipeline for names in nonexistent-entity checks.
        cache: a (premise, hypothesis) score cache shared across calls (``None`` = none).
        no_evidence_reason: why claims are unverified when ``evidence`` has no text.
        question: the user's query (a span model reads it with the passages; an answer with
            nothing to check to a question for a fact is UNVERIFIED).
        ladder: the confidence ladder (``GuardrailConfig.confidence``; ``None``: the default
            one): a contradiction at least ``noted`` sure makes a claim contradicted and is
            flagged.
    """
    scoring = score_claims(claims, evidence, verifier, config, embedder, cache, no_evidence_reason)
    routed = claim_routes(verifier, scoring, config)
    calibration = _default_calibration(verifier, scoring, routed, config)
    entailments, unverified_reasons, flags, threshold = judge_claims(
        response,
        scoring,
        evidence,
        config,
        retrieval_score,
        nlp,
        calibration,
        routed,
        question,
        ladder,
    )
    if scoring.scores and evidence.passages:
        flags += _span_flags(verifier, response, evidence, question, scoring, flags)
    verdict = response_verdict(
        entailments,
        [c.status for c in scoring.claims],
        unverified_reasons,
        retrieval_score,
        config,
        _method(verifier, scoring, evidence, config, calibration, routed),
        threshold=threshold,
        thresholds=[
            claim_cutoffs(routed[i].calibration, config, retrieval_score).threshold
            if i in routed
            else threshold
            for i, c in enumerate(scoring.claims)
            if c.status is not ClaimStatus.NOT_CHECKWORTHY
        ]
        if routed
        else None,
        question=question,
        answer=response,
    )
    flags.sort(key=lambda f: (f.span.start, f.span.end, f.type.value))
    used = None
    if any(c.p_supported is not None for c in scoring.claims):
        used = _calibration_used(calibration, routed, config, threshold)
    return Detection(scoring.claims, flags, verdict, len(scoring.scores), scoring.notes, used)


def _default_calibration(
    verifier: Any, scoring: Scoring, routed: Mapping[int, Route], config: HallucinationConfig
) -> CalibrationChoice:
    """The calibration of the claims the default verifier scored (for a hybrid, by the
    members that answered for them; a routed claim has its own)."""
    by_default = [
        scoring.scores[j]
        for i, idx in scoring.plan.claim_pairs.items()
        if i not in routed
        for j in idx
        if j in scoring.scores
    ]
    answered = answered_members(by_default if routed else scoring.scores.values())
    return calibration_for(verifier, config.calibration, answered=answered)


def _method(
    verifier: Any,
    scoring: Scoring,
    evidence: Evidence,
    config: HallucinationConfig,
    calibration: CalibrationChoice,
    routed: Mapping[int, Route],
) -> str:
    """``verdict.method``: the verifier, the members that decided, the calibration, the
    routes, claims or whole response, the windows and the notes of the scoring."""
    name = getattr(verifier, "name", type(verifier).__name__)
    unit = "claims" if config.decompose_claims else "whole response"
    if evidence.window_tokens:
        sizing = f"windows {evidence.window_tokens}/{evidence.window_stride} tokens"
    else:
        sizing = "whole passages"
    decided = usage_of(scoring.scores.values()).describe()  # which hybrid members decided
    parts = [name, *([decided] if decided else [])]
    if config.policy == "calibrated":
        parts.append(calibration.label)
    note = routes_note(scoring.claims, routed)
    return "; ".join([*parts, *([note] if note else []), unit, sizing, *scoring.notes])


def _calibration_used(
    calibration: CalibrationChoice,
    routed: Mapping[int, Route],
    config: HallucinationConfig,
    threshold: float,
) -> CalibrationUsed:
    """The record of the calibrations the claims were scored with, for the decision."""
    return CalibrationUsed(
        label=calibration.label,
        threshold=threshold,
        remove_below=claim_cutoffs(calibration, config).remove_below,
        # a route with a calibration of its own has its own cut-off; an uncalibrated one
        # (raw entailment as p_supported) is judged by the default's
        routed_remove_below={
            i: claim_cutoffs(r.calibration, config).remove_below
            for i, r in routed.items()
            if r.calibration.calibrator is not None or r.calibration.members
        },
    )
