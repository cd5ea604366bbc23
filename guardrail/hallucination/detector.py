"""Check a response's claims against the evidence with one batched verifier call.

Steps (seed 000 v2 with seed 001's per-sentence view and seed 004's flag types):

1. evidence windows (passages + KB facts), sized in verifier tokens;
2. claims the verifier cannot read (language) are ``unverified``;
3. claims, windows and dialogue sentences are embedded once; each claim keeps its top-m
   windows; similar sentence pairs of the response and similar earlier turns are paired too;
4. all pairs — (window, claim), (sentence, sentence), (turn, claim) — go to ``predict`` in one
   call; if that call fails, each claim is retried alone and a claim that still fails is
   ``unverified`` with the error as its reason;
5. claim statuses, flags and the Cw-CONLI verdict.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from guardrail.config import HallucinationConfig
from guardrail.errors import VerifierError
from guardrail.hallucination import flags as build
from guardrail.hallucination.aggregation import (
    calibrated_status,
    claim_status,
    decide_windows,
    response_verdict,
)
from guardrail.hallucination.calibration import ClaimCalibrator, EvidenceIndex, claim_features
from guardrail.hallucination.checkworthy import not_checkworthy_reason
from guardrail.hallucination.evidence import Evidence, dialogue_window
from guardrail.hallucination.pruning import embed, nearest, similar_pairs, top_m_windows
from guardrail.hallucination.windows import Window, best_snippet
from guardrail.report import (
    Claim,
    ClaimStatus,
    EvidencePointer,
    HallucinationFlag,
    Verdict,
    VerifierScores,
)
from guardrail.verifiers.base import NLIPrediction

logger = logging.getLogger(__name__)

Pair = tuple[str, str]


@dataclass
class Detection:
    """What the hallucination check found."""

    claims: list[Claim]
    flags: list[HallucinationFlag]
    verdict: Verdict
    pairs_scored: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class _Plan:
    """Which pairs to score; ``groups[k]`` holds the pair indices of one claim."""

    pairs: list[Pair] = field(default_factory=list)
    claim_windows: dict[int, list[int]] = field(default_factory=dict)
    claim_pairs: dict[int, list[int]] = field(default_factory=dict)
    logic: list[tuple[int, int, int]] = field(default_factory=list)
    """(first claim, second claim, pair index)."""
    prior: list[tuple[int, int, int]] = field(default_factory=list)
    """(claim, turn sentence, pair index)."""


def _score(verifier: Any, pairs: Sequence[Pair]) -> list[NLIPrediction]:
    if not pairs:
        return []
    preds = list(verifier.predict(list(pairs)))
    if len(preds) != len(pairs):
        raise VerifierError(f"verifier returned {len(preds)} predictions for {len(pairs)} pairs")
    return preds


def _plan(
    claims: list[Claim],
    checkable: list[int],
    evidence: Evidence,
    config: HallucinationConfig,
    embedder: Callable[[], Any] | None,
    notes: list[str],
) -> _Plan:
    plan = _Plan()
    windows = evidence.windows
    need_prune = 0 < config.top_m_windows < len(windows)
    need_logic = config.logical_consistency and len(checkable) > 1
    need_prior = bool(evidence.turn_sentences) and bool(checkable)
    claim_vecs = window_vecs = turn_vecs = None
    if embedder is not None and (need_prune or need_logic or need_prior):
        texts = [claims[i].text for i in checkable]
        texts += [w.text for w in windows] if need_prune else []
        texts += [t.text for t in evidence.turn_sentences] if need_prior else []
        try:
            vecs = embed(embedder(), texts)
        except Exception as exc:  # noqa: BLE001 - degrade to unpruned scoring, recorded in the method
            logger.warning("embedding failed, scoring all windows: %s", exc)
            notes.append(f"embedder unavailable ({type(exc).__name__}): no pruning")
        else:
            k = len(checkable)
            claim_vecs = vecs[:k]
            window_vecs = vecs[k : k + len(windows)] if need_prune else None
            turn_vecs = vecs[k + (len(windows) if need_prune else 0) :] if need_prior else None
    if need_prune and claim_vecs is not None and window_vecs is not None:
        selected = top_m_windows(claim_vecs, window_vecs, config.top_m_windows)
        notes.append(f"top-{config.top_m_windows} of {len(windows)} windows per claim")
    else:
        selected = [list(range(len(windows))) for _ in checkable]
        notes.append(f"all {len(windows)} windows per claim")
    for pos, ci in enumerate(checkable):
        plan.claim_windows[ci] = selected[pos]
        plan.claim_pairs[ci] = []
        for wi in selected[pos]:
            plan.claim_pairs[ci].append(len(plan.pairs))
            plan.pairs.append((windows[wi].text, claims[ci].text))
    if need_logic:
        if claim_vecs is not None:
            local = similar_pairs(claim_vecs, config.logic_min_similarity, config.max_logic_pairs)
        else:
            local = [(p, p + 1) for p in range(len(checkable) - 1)][: config.max_logic_pairs]
        for a, b in local:
            i, j = checkable[a], checkable[b]
            plan.logic.append((i, j, len(plan.pairs)))
            plan.pairs.append((claims[i].text, claims[j].text))
    if need_prior:
        if claim_vecs is not None and turn_vecs is not None:
            near = nearest(
                claim_vecs, turn_vecs, config.prior_turn_candidates, config.prior_min_similarity
            )
        else:
            near = [list(range(len(evidence.turn_sentences)))[-8:] for _ in checkable]
        for pos, ci in enumerate(checkable):
            for ti in near[pos]:
                plan.prior.append((ci, ti, len(plan.pairs)))
                plan.pairs.append((evidence.turn_sentences[ti].text, claims[ci].text))
    return plan


def _run_verifier(
    verifier: Any, plan: _Plan, notes: list[str]
) -> tuple[dict[int, NLIPrediction], dict[int, str]]:
    """Scores by pair index, and the failure reason per claim that could not be scored."""
    try:
        preds = _score(verifier, plan.pairs)
        notes.append(f"1 batched call of {len(plan.pairs)} pairs")
        return dict(enumerate(preds)), {}
    except Exception as exc:  # noqa: BLE001 - degrade per claim (seed 001), recorded below
        logger.warning("batched verifier call failed, retrying per claim: %s", exc)
        notes.append(f"batched call failed ({type(exc).__name__}); per-claim fallback")
    scores: dict[int, NLIPrediction] = {}
    failed: dict[int, str] = {}
    groups: list[tuple[int | None, list[int]]] = list(plan.claim_pairs.items())  # type: ignore[arg-type]
    groups.append((None, [p for *_, p in plan.logic] + [p for *_, p in plan.prior]))
    for ci, idx in groups:
        try:
            scores.update(zip(idx, _score(verifier, [plan.pairs[i] for i in idx]), strict=True))
        except Exception as exc:  # noqa: BLE001 - this claim (or the consistency pairs) stays unchecked
            reason = f"verifier failed: {type(exc).__name__}: {exc}"
            if ci is None:
                notes.append(f"consistency checks skipped ({reason})")
            else:
                failed[ci] = reason
    return scores, failed


def _pointer(window: Window, snippet: str) -> EvidencePointer:
    return EvidencePointer(
        passage_index=window.passage_index,
        window_index=window.window_index,
        snippet=snippet,
        source=window.source,
    )


def detect(
    response: str,
    claims: list[Claim],
    evidence: Evidence,
    verifier: Any,
    config: HallucinationConfig,
    retrieval_score: float | None,
    embedder: Callable[[], Any] | None = None,
    nlp: Any = None,
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
    """
    notes: list[str] = []
    calibrator = ClaimCalibrator.load(config.calibration)
    calibrated = config.policy == "calibrated"
    claim_threshold = (
        config.claim_threshold if config.claim_threshold is not None else calibrator.threshold
    )
    threshold = claim_threshold if calibrated else config.threshold.threshold(retrieval_score)
    claims = [c.model_copy() for c in claims]
    name = getattr(verifier, "name", type(verifier).__name__)
    covered = getattr(verifier, "languages", None)
    checkable = []
    for i, c in enumerate(claims):
        if c.reason is not None and c.status is ClaimStatus.UNVERIFIED:
            continue  # already set aside (e.g. past max_claims)
        why = not_checkworthy_reason(c.text, c.language) if config.checkworthiness else None
        if why is not None:
            c.status, c.reason = ClaimStatus.NOT_CHECKWORTHY, f"not check-worthy: {why}"
            continue
        if not verifier.covers(c.language):
            lang = c.language or "unknown"
            c.reason = (
                f"language '{lang}' not covered by verifier {name} (covers: "
                + (", ".join(covered) if covered else "?")
                + ")"
            )
            c.status = ClaimStatus.UNVERIFIED
            continue
        checkable.append(i)
    index = EvidenceIndex.of(evidence.known_texts or [w.text for w in evidence.windows])
    if not evidence.windows:
        for c in claims:
            if c.status is ClaimStatus.UNVERIFIED and c.reason is None:
                c.reason = "no evidence text to check against"
        checkable = []
    plan = _plan(claims, checkable, evidence, config, embedder, notes)
    scores, failed = _run_verifier(verifier, plan, notes) if plan.pairs else ({}, {})
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
        windows = [evidence.windows[w] for w in plan.claim_windows[i]]
        decision = decide_windows(preds)
        features = claim_features(
            c.text, decision.best_prediction, decision.contra_prediction.contradiction, index, nlp
        )
        c.features = features
        c.p_supported = round(calibrator.probability(features), 4)
        if calibrated:
            c.status = calibrated_status(
                c.p_supported, decision, threshold, config.contradiction_flag
            )
        else:
            c.status = claim_status(decision, threshold, config.contradiction_flag)
        contradicted = c.status is ClaimStatus.CONTRADICTED
        win = windows[decision.contra if contradicted else decision.best]
        pred = decision.contra_prediction if contradicted else decision.best_prediction
        snippet = best_snippet(win.text, c.text)
        c.scores = VerifierScores(**decision.best_prediction.model_dump())
        c.evidence = _pointer(win, snippet)
        entailment = c.p_supported if calibrated else decision.best_prediction.entailment
        measure = "p(supported)" if calibrated else "best entailment"
        bound = "claim threshold" if calibrated else "T(rs)"
        c.reason = f"{measure} {entailment:.2f} vs {bound} {threshold:.2f}" + (
            f"; contradiction {pred.contradiction:.2f}" if contradicted else ""
        )
        conf = max(pred.contradiction, 1.0 - entailment)
        temporal = build.temporal_flags(response, c, i, win.text, snippet, conf)
        if c.status is ClaimStatus.SUPPORTED:
            # Date check: the evidence sentence closest to the claim gives another date.
            strong = [f for f in temporal if f.confidence >= build.VALUE_CONFIDENCE]
            if config.date_check and strong:
                c.status = ClaimStatus.CONTRADICTED
                c.reason += f"; {strong[0].explanation}"
                entailment = min(entailment, 1.0 - strong[0].confidence)
                if c.p_supported is not None:
                    c.p_supported = round(min(c.p_supported, 1.0 - strong[0].confidence), 4)
                flag = build.contradiction_flag(response, c, i, pred, snippet)
                flags.append(
                    flag.model_copy(
                        update={
                            "confidence": strong[0].confidence,
                            "explanation": f"the evidence gives another date: {strong[0].explanation}",
                        }
                    )
                )
                flags += strong
        else:
            if contradicted:
                flags.append(build.contradiction_flag(response, c, i, pred, snippet))
            else:
                flags.append(build.unsupported_flag(response, c, i, pred, threshold, snippet))
            flags += temporal
        entailments.append(entailment)
    for i, c in enumerate(claims):
        if config.entity_check and c.status is not ClaimStatus.SUPPORTED and evidence.known_texts:
            taken = [f.span for f in flags if f.claim_index == i and f.span != c.span]
            flags += build.nonexistent_entity_flags(
                response, c, i, evidence.known_texts, taken, nlp if c.language == "en" else None
            )
    for a, b, p in plan.logic:
        if p in scores and scores[p].contradiction >= config.contradiction_flag:
            flags.append(
                build.logical_inconsistency_flag(response, claims[a], claims[b], b, scores[p])
            )
    for ci, ti, p in plan.prior:
        if p in scores and scores[p].contradiction >= config.contradiction_flag:
            turn = evidence.turn_sentences[ti]
            flags.append(
                build.prior_turn_flag(
                    response, claims[ci], ci, scores[p], turn.turn_text, turn.turn_id
                )
            )
            if claims[ci].evidence is None:
                claims[ci].evidence = _pointer(dialogue_window(turn), turn.text)
    unit = "claims" if config.decompose_claims else "whole response"
    if evidence.window_tokens:
        sizing = f"windows {evidence.window_tokens}/{evidence.window_stride} tokens"
    else:
        sizing = "whole passages"
    method = "; ".join([name, unit, sizing, *notes])
    verdict = response_verdict(
        entailments,
        [c.status for c in claims],
        unverified_reasons,
        retrieval_score,
        config,
        method,
        threshold=threshold,
    )
    flags.sort(key=lambda f: (f.span.start, f.span.end, f.type.value))
    return Detection(claims, flags, verdict, len(plan.pairs), notes)
