"""Which (premise, hypothesis) pairs to score, and scoring them as cheaply as the checks allow.

The cost of the hallucination check is the verifier's forward passes plus the embeddings used
to choose windows. Planning keeps both small:

1. **lexical candidates** — BM25 over the evidence windows (a claim's numbers and names count
   double) keeps ``lexical_candidates`` windows per claim before any embedding;
2. **embedding re-rank** — only those survivors (and the claims) are embedded, and each claim
   keeps its ``top_m`` most similar windows (``top_m_windows``, capped by
   ``max_windows_per_claim``);
3. **early exit** — each claim's first premise is scored first, in one batched call with the
   consistency pairs; claims it entails with at least ``early_exit_entailment`` (or
   contradicts with at least ``early_exit_contradiction``) are done, the rest get their
   windows in a second call. With ``sentence_first`` that first premise is
   the one or two sentences of the best window that share the most words with the claim
   (``pruning.focus_sentences``), a third of a window's tokens; without it, the best window;
4. **score cache** — every call goes through a shared LRU cache of (premise, hypothesis)
   scores, so regenerate loops and repeated passages cost nothing the second time.

If a batched call fails, each claim is retried alone; a claim that still fails is
``unverified`` with the error as its reason (graceful degradation, claim by claim).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from guardrail.config import HallucinationConfig, SpeedConfig
from guardrail.errors import VerifierError
from guardrail.hallucination.calibration import content_stems
from guardrail.hallucination.evidence import Evidence
from guardrail.hallucination.pruning import (
    LexicalIndex,
    embed,
    focus_sentences,
    nearest,
    similar_pairs,
    stem_overlap,
    top_m_windows,
)
from guardrail.hallucination.selection import Premise
from guardrail.hallucination.windows import Window
from guardrail.report import Claim
from guardrail.verifiers.base import NLIPrediction
from guardrail.verifiers.cache import ScoreCache, cached_predict

logger = logging.getLogger(__name__)

Pair = tuple[str, str]


@dataclass
class Plan:
    """Which pairs to score; ``claim_pairs[k]`` lists claim ``k``'s pair indices, best first."""

    pairs: list[Pair] = field(default_factory=list)
    claim_windows: dict[int, list[Window]] = field(default_factory=dict)
    """The premise of each of ``claim_pairs[k]`` as a window (a selected-sentences premise has
    ``window_index`` ``SELECTED_WINDOW``)."""
    claim_pairs: dict[int, list[int]] = field(default_factory=dict)
    logic: list[tuple[int, int, int]] = field(default_factory=list)
    """(first claim, second claim, pair index)."""
    prior: list[tuple[int, int, int]] = field(default_factory=list)
    """(claim, turn sentence, pair index)."""
    focus: set[int] = field(default_factory=set)
    """Claims whose first pair is a short premise (``sentence_first``) rather than a window."""
    selected: set[int] = field(default_factory=set)
    """Claims whose first pair is their selected evidence sentences (kept among their
    premises, unlike a ``focus`` premise)."""


def windows_per_claim(config: HallucinationConfig, speed: SpeedConfig, n: int) -> int:
    """How many windows each claim is scored against: ``top_m_windows`` capped by
    ``max_windows_per_claim``; ``top_m_windows = 0`` asks for every window, uncapped."""
    if config.top_m_windows <= 0:
        return n
    m = min(config.top_m_windows, n)
    return min(m, speed.max_windows_per_claim) if speed.max_windows_per_claim > 0 else m


def _candidate_windows(
    claims: list[Claim],
    checkable: list[int],
    evidence: Evidence,
    config: HallucinationConfig,
    speed: SpeedConfig,
) -> tuple[list[list[int]], bool]:
    """Lexical candidates per claim, and whether the embedding still has to choose among them."""
    n = len(evidence.windows)
    m = windows_per_claim(config, speed, n)
    if m >= n:
        return [list(range(n)) for _ in checkable], False
    k = speed.lexical_candidates
    if k <= 0:
        return [list(range(n)) for _ in checkable], True
    index = LexicalIndex([w.text for w in evidence.windows])
    picked = [index.top(claims[i].text, max(k, m)) for i in checkable]
    return picked, speed.embed_candidates and k > m


def _add(plan: Plan, claim: int, window: Window, premise: str, hypothesis: str) -> None:
    """Pair ``claim`` with ``premise`` (shown as ``window``)."""
    plan.claim_windows[claim].append(window)
    plan.claim_pairs[claim].append(len(plan.pairs))
    plan.pairs.append((premise, hypothesis))


def plan_pairs(
    claims: list[Claim],
    checkable: list[int],
    evidence: Evidence,
    config: HallucinationConfig,
    embedder: Callable[[], Any] | None,
    notes: list[str],
    speed: SpeedConfig | None = None,
) -> Plan:
    """The pairs of one check: (window, claim), (claim, claim) and (turn sentence, claim).

    Without evidence windows (a dialogue-only input) the ``checkable`` claims get their
    (turn sentence, claim) pairs only: nothing to support them, so no ``claim_pairs`` (they stay
    unverified), and no consistency pairs between them.
    """
    speed = speed or config.speed
    windows = evidence.windows
    if not windows:
        return _prior_only(claims, checkable, evidence, config, embedder, notes)
    plan = Plan()
    candidates, need_rank = _candidate_windows(claims, checkable, evidence, config, speed)
    need_logic = config.logical_consistency and len(checkable) > 1
    need_prior = bool(evidence.turn_sentences) and bool(checkable)
    ranked = sorted({w for c in candidates for w in c}) if need_rank else []
    vectors = _Vectors()
    if embedder is not None and (need_rank or need_logic or need_prior):
        vectors = _embed(claims, checkable, evidence, ranked, need_prior, embedder, notes)
    selected = _select_windows(
        candidates, ranked if need_rank else None, vectors, evidence, config, speed, notes
    )
    for pos, ci in enumerate(checkable):
        _add_premises(plan, claims, ci, selected[pos], evidence, config, speed)
    if need_logic:
        _add_logic(plan, claims, checkable, vectors.claims, config)
    if need_prior:
        _add_prior(plan, claims, checkable, evidence, config, vectors.claims, vectors.turns)
    return plan


@dataclass(frozen=True)
class _Vectors:
    """Embeddings of one check: its checkable claims, the windows to rank, the earlier-turn
    sentences (``None``: not embedded)."""

    claims: Any = None
    windows: Any = None
    turns: Any = None


def _embed(
    claims: list[Claim],
    checkable: list[int],
    evidence: Evidence,
    ranked: list[int],
    need_prior: bool,
    embedder: Callable[[], Any],
    notes: list[str],
) -> _Vectors:
    """The embeddings of the checkable claims, the ``ranked`` windows and (``need_prior``)
    the turn sentences, in one call; none when the embedder fails (a note says so)."""
    texts = [claims[i].text for i in checkable] + [evidence.windows[w].text for w in ranked]
    texts += [t.text for t in evidence.turn_sentences] if need_prior else []
    try:
        vecs = embed(embedder(), texts)
    except Exception as exc:  # noqa: BLE001 - degrade to lexical order, recorded in the method
        logger.warning("embedding failed, windows in lexical order: %s", exc)
        notes.append(f"embedder unavailable ({type(exc).__name__}): lexical order")
        return _Vectors()
    k = len(checkable)
    turns = vecs[k + len(ranked) :] if need_prior else None
    return _Vectors(vecs[:k], vecs[k : k + len(ranked)], turns)


def _select_windows(
    candidates: list[list[int]],
    ranked: list[int] | None,
    vectors: _Vectors,
    evidence: Evidence,
    config: HallucinationConfig,
    speed: SpeedConfig,
    notes: list[str],
) -> list[list[int]]:
    """Per checkable claim, the windows it is scored against, best first: its candidates
    ranked by embedding when they must be and can be, else in lexical order (a note says
    which). ``ranked``: the windows the embedding ranks (``None``: no ranking needed)."""
    n = len(evidence.windows)
    m = windows_per_claim(config, speed, n)
    if ranked is not None and vectors.claims is not None and vectors.windows is not None:
        position = {w: r for r, w in enumerate(ranked)}
        selected = []
        for pos, cand in enumerate(candidates):
            rows = vectors.windows[[position[w] for w in cand]]
            order = top_m_windows(vectors.claims[pos : pos + 1], rows, m)[0]
            selected.append([cand[o] for o in order])
        how = f"BM25 top-{speed.lexical_candidates}, " if len(ranked) < n else ""
        notes.append(f"{how}top-{m} of {n} windows per claim")
        return selected
    if candidates and len(candidates[0]) < n:
        notes.append(f"BM25 top-{m} of {n} windows per claim")
        return [c[:m] for c in candidates]
    # no ranking possible (or needed): every window, as without pruning
    notes.append(f"all {n} windows per claim")
    return candidates


def _add_premises(
    plan: Plan,
    claims: list[Claim],
    ci: int,
    selected: list[int],
    evidence: Evidence,
    config: HallucinationConfig,
    speed: SpeedConfig,
) -> None:
    """Claim ``ci``'s pairs, in scoring order: its selected evidence sentences, its short
    first premise (``sentence_first``), then its windows."""
    windows, text = evidence.windows, claims[ci].text
    plan.claim_windows[ci] = []
    plan.claim_pairs[ci] = []
    choose = config.selection
    premise: Premise | None = None
    if choose.enabled and evidence.sentences is not None:
        budget = choose.token_budget or evidence.window_tokens or config.window_tokens
        premise = evidence.sentences.premise(text, choose.sentences, budget, choose.titles)
    if premise is not None:
        # scored first and kept beside the windows: the max runs over both
        plan.selected.add(ci)
        _add(plan, ci, premise.window, premise.text, text)
    focus = speed.sentence_first and speed.early_exit_entailment is not None
    short = (
        focus_sentences(windows[selected[0]].text, text)
        if (focus and premise is None and selected)
        else None
    )
    if short is not None and short != windows[selected[0]].text:
        # scored first; the claim's windows follow when it is not enough
        plan.focus.add(ci)
        _add(plan, ci, windows[selected[0]], short, text)
    for wi in selected:
        if premise is None or windows[wi].text != premise.text:
            _add(plan, ci, windows[wi], windows[wi].text, text)


def _add_logic(
    plan: Plan,
    claims: list[Claim],
    checkable: list[int],
    claim_vecs: Any,
    config: HallucinationConfig,
) -> None:
    """Pairs of the response's own claims to check for contradiction: similar ones (or, with
    no embeddings, neighbours) sharing enough content words, at most ``max_logic_pairs``."""
    n = len(checkable)
    if claim_vecs is not None:
        local = similar_pairs(claim_vecs, config.logic_min_similarity, n * (n - 1) // 2)
    else:
        local = [(p, p + 1) for p in range(n - 1)]
    stems = [content_stems(claims[ci].text) for ci in checkable]  # once per claim
    local = [
        (a, b)
        for a, b in local
        if stem_overlap(stems[a], stems[b]) >= config.logic_min_shared_words
    ][: config.max_logic_pairs]
    for a, b in local:
        i, j = checkable[a], checkable[b]
        plan.logic.append((i, j, len(plan.pairs)))
        plan.pairs.append((claims[i].text, claims[j].text))


def _add_prior(
    plan: Plan,
    claims: list[Claim],
    checkable: list[int],
    evidence: Evidence,
    config: HallucinationConfig,
    claim_vecs: Any,
    turn_vecs: Any,
) -> None:
    """Pair each checkable claim with its nearest earlier-turn sentences (the last 8 when there
    are no embeddings)."""
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


def _prior_only(
    claims: list[Claim],
    checkable: list[int],
    evidence: Evidence,
    config: HallucinationConfig,
    embedder: Callable[[], Any] | None,
    notes: list[str],
) -> Plan:
    """The plan of a check without evidence windows: prior-turn pairs only."""
    plan = Plan()
    if not (evidence.turn_sentences and checkable):
        return plan
    claim_vecs = turn_vecs = None
    if embedder is not None:
        texts = [claims[i].text for i in checkable] + [t.text for t in evidence.turn_sentences]
        try:
            vecs = embed(embedder(), texts)
        except Exception as exc:  # noqa: BLE001 - degrade to the latest turns, recorded
            logger.warning("embedding failed, claims paired with the latest turns: %s", exc)
            notes.append(f"embedder unavailable ({type(exc).__name__}): latest turns")
        else:
            claim_vecs, turn_vecs = vecs[: len(checkable)], vecs[len(checkable) :]
    _add_prior(plan, claims, checkable, evidence, config, claim_vecs, turn_vecs)
    notes.append("no evidence windows: earlier turns only")
    return plan


def score(
    verifier: Any, pairs: Sequence[Pair], cache: ScoreCache | None = None
) -> list[NLIPrediction]:
    """One prediction per pair (through ``cache`` when given); ``VerifierError`` on a bad count."""
    if not pairs:
        return []
    if cache is not None:
        return cached_predict(verifier, pairs, cache)
    preds = list(verifier.predict(list(pairs)))
    if len(preds) != len(pairs):
        raise VerifierError(f"verifier returned {len(preds)} predictions for {len(pairs)} pairs")
    return preds


def _score_groups(
    verifier: Any,
    plan: Plan,
    groups: list[tuple[int | None, list[int]]],
    cache: ScoreCache | None,
    notes: list[str],
    scores: dict[int, NLIPrediction],
    failed: dict[int, str],
) -> int:
    """Score the pair indices of ``groups`` in one call, else group by group; pairs sent."""
    wanted = [i for _, idx in groups for i in idx]
    if not wanted:
        return 0
    try:
        scores.update(
            zip(wanted, score(verifier, [plan.pairs[i] for i in wanted], cache), strict=True)
        )
        return len(wanted)
    except Exception as exc:  # noqa: BLE001 - degrade per claim, recorded below
        logger.warning("batched verifier call failed, retrying per claim: %s", exc)
        notes.append(f"batched call failed ({type(exc).__name__}); per-claim fallback")
    for ci, idx in groups:
        if not idx:
            continue
        try:
            scores.update(
                zip(idx, score(verifier, [plan.pairs[i] for i in idx], cache), strict=True)
            )
        except Exception as exc:  # noqa: BLE001 - this claim (or the consistency pairs) stays unchecked
            reason = f"verifier failed: {type(exc).__name__}: {exc}"
            if ci is None:
                notes.append(f"consistency checks skipped ({reason})")
            else:
                failed[ci] = reason
    return len(wanted)


def run_verifier(
    verifier: Any,
    plan: Plan,
    notes: list[str],
    cache: ScoreCache | None = None,
    early_exit: float | None = None,
    exit_contradiction: float | None = None,
) -> tuple[dict[int, NLIPrediction], dict[int, str]]:
    """Scores by pair index, and the failure reason per claim that could not be scored.

    With ``early_exit``, claims whose first (best-ranked) pair entails them at least that
    much keep only that pair: their other pairs are dropped from ``plan.claim_pairs`` and
    ``plan.claim_windows`` and never scored. A claim whose first pair was a short premise
    (``plan.focus``) and is not settled by it drops that pair instead: it is judged on its
    windows exactly as without ``sentence_first``. With ``exit_contradiction`` too, a claim
    its first pair contradicts at least that much is settled by that pair in the same way.
    """
    scores: dict[int, NLIPrediction] = {}
    failed: dict[int, str] = {}
    checks = [p for *_, p in plan.logic] + [p for *_, p in plan.prior]
    if early_exit is None:
        groups: list[tuple[int | None, list[int]]] = [
            (ci, list(idx)) for ci, idx in plan.claim_pairs.items()
        ]
        sent = _score_groups(
            verifier, plan, [*groups, (None, checks)], cache, notes, scores, failed
        )
        notes.append(f"1 batched call of {sent} pairs")
        return scores, failed
    first: list[tuple[int | None, list[int]]] = [
        (ci, idx[:1]) for ci, idx in plan.claim_pairs.items()
    ]
    sent = _score_groups(verifier, plan, [*first, (None, checks)], cache, notes, scores, failed)
    rest: list[tuple[int | None, list[int]]] = []
    done = 0
    for ci, idx in plan.claim_pairs.items():
        if ci in failed or not idx:
            continue
        first_pred = scores[idx[0]]
        if first_pred.entailment >= early_exit or (
            exit_contradiction is not None and first_pred.contradiction >= exit_contradiction
        ):
            plan.claim_pairs[ci] = idx[:1]
            plan.claim_windows[ci] = plan.claim_windows[ci][:1]
            done += 1
            continue
        if ci in plan.focus:  # not settled by its short premise: judged on its windows alone
            plan.claim_pairs[ci] = idx = idx[1:]
            plan.claim_windows[ci] = plan.claim_windows[ci][1:]
            if idx:
                rest.append((ci, idx))
        elif len(idx) > 1:
            rest.append((ci, idx[1:]))
    sent += _score_groups(verifier, plan, rest, cache, notes, scores, failed)
    notes.append(
        f"{sent} pairs in {1 + bool(rest)} calls; {done} claims settled by their first premise"
    )
    return scores, failed
