"""The ``hallucination`` stage: claims vs evidence, typed flags and the Cw-CONLI verdict.

Evidence is the passages plus, when a knowledge base is given, its facts rendered as text. The
stage is skipped (with a reason) only when there is neither *and* no earlier dialogue turn; claims
are still produced by the ``claims`` stage. An answer that states no checkable fact (every claim
``not_checkworthy``: a question to the user, a greeting, thanks) needs no evidence: its verdict
is NOTHING_TO_CHECK with or without evidence, and no verifier is loaded for it when there is none. A dialogue-only input (turns, no passages, no
knowledge base) is checked against its earlier turns alone: only the claims' prior-turn pairs
are scored (:func:`~guardrail.hallucination.plan.plan_pairs`), so an answer that contradicts an
earlier turn gets its ``contradicts_prior`` flag, and every checkable claim stays UNVERIFIED
with :data:`NO_EVIDENCE` as its reason (a turn that does not contradict a claim does not support it,
and a claim read against no evidence is never "fabricated"). If the verifier cannot be loaded
the stage fails, and the pipeline's failure policy decides (fail-closed: the answer goes to
human review).

Per call, names are read from the call's shared parse of the response for claims that are
stretches of it, else from one NER-only ``nlp.pipe`` over the claims (:class:`EntityParser`);
verifier scores go through the guardrail's shared (premise, hypothesis) cache.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from guardrail.config import HallucinationConfig
from guardrail.hallucination.aggregation import nothing_to_check
from guardrail.hallucination.detector import Detection, detect
from guardrail.hallucination.evidence import gather_evidence
from guardrail.hallucination.retrieval import with_retrieval_scores
from guardrail.inputs import GuardInput
from guardrail.report import Claim, ClaimStatus, Span, Verdict, VerdictLabel
from guardrail.stages.base import Parses, PipelineState, Stage, StageUpdate
from guardrail.stages.claims import build_claims
from guardrail.text.language import (
    detect_language,
    dialogue_context,
    response_language,
    script_language,
)
from guardrail.text.mentions import Mention, MentionKind, find_mentions
from guardrail.verifiers.cache import ScoreCache

logger = logging.getLogger(__name__)

NO_EVIDENCE = "no evidence (passages or knowledge base) given"


CLAIM_ROOM = 32
"""Verifier tokens kept free for the claim (and special tokens) beside each window."""


def window_size(window_tokens: int, stride: int, verifier: Any) -> tuple[int, int]:
    """Window and stride, shrunk so a window plus a claim fits the verifier's ``max_tokens``."""
    limit = getattr(verifier, "max_tokens", None)
    if isinstance(limit, int) and limit > 2 * CLAIM_ROOM and window_tokens > limit - CLAIM_ROOM:
        shrunk = limit - CLAIM_ROOM
        return shrunk, max(1, min(stride, shrunk * stride // window_tokens))
    return window_tokens, stride


class EntityParser:
    """``nlp(text)`` for the name lookups of one check: entities only, each text parsed once.

    The name mentions (:func:`~guardrail.text.mentions.find_mentions`) read only ``doc.ents``,
    and the NER of spaCy's English pipelines has its own token vectors, so running ``ner``
    alone gives the same entities as the full pipeline at a fraction of the cost. The claims
    are parsed in one ``nlp.pipe`` call up front; other texts are parsed when asked for.

    With ``shared`` (the call's parse of the response) and the claims' character spans in
    it, a claim that is a stretch of the response is not parsed again: its entities are the
    parse's entities inside that stretch (in the context of the whole answer).
    """

    def __init__(
        self,
        nlp: Any,
        texts: Iterable[str] = (),
        shared: Any = None,
        spans: Iterable[tuple[int, int]] = (),
        parses: Parses | None = None,
        once: Iterable[str] = (),
    ) -> None:
        self.nlp = nlp
        self._parses = parses
        self._once = {t for t in once if t}
        """Texts parsed through the call's parses (``parses``), once per call however many
        checks ask (the question: the name rules of the check and of the re-check read it)."""
        self.pipe_names = list(getattr(nlp, "pipe_names", []))
        keep = {"ner", "tok2vec"} if "ner" in self.pipe_names else set(self.pipe_names)
        # tok2vec only feeds tagger and parser when ner has its own embedding layer
        shared_tok2vec = "ner" in self.pipe_names and _ner_listens(nlp)
        self._disable = [
            p for p in self.pipe_names if p not in keep or (p == "tok2vec" and not shared_tok2vec)
        ]
        self._docs: dict[str, Any] = {}
        self.mentions: dict[str, tuple[Mention, ...]] = {}
        """:func:`~guardrail.text.mentions.find_mentions` of each text, found once per check."""
        if shared is not None and getattr(shared, "has_annotation", lambda _: False)("ENT_IOB"):
            for start, end in spans:
                text = shared.text[start:end]
                if text and text not in self._docs:
                    self._docs[text] = _Entities.within(shared, start, end)
        self.prefetch(texts)

    def prefetch(self, texts: Iterable[str]) -> None:
        """Parse the ``texts`` not seen yet in one ``nlp.pipe`` call."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._docs))
        if todo:
            self._docs.update(zip(todo, self.nlp.pipe(todo, disable=self._disable), strict=True))

    def __call__(self, text: str) -> Any:
        if text not in self._docs and self._parses is not None:
            known = self._parses.known(text)  # another stage's parse (entities included)
            if known is None and text in self._once:
                known = self._parses.get(self.nlp, [text])[0]
            if known is not None:
                self._docs[text] = known
        if text not in self._docs:
            self.prefetch([text])
        return self._docs[text]


@dataclass(frozen=True, slots=True)
class _Entity:
    """An entity of the shared parse, with offsets into a stretch of the response."""

    text: str
    label_: str
    start_char: int
    end_char: int


@dataclass(frozen=True)
class _Entities:
    """What :func:`~guardrail.text.mentions.find_mentions` reads of a parse (``.ents``), for a
    stretch of the shared parse."""

    ents: list[_Entity]

    @classmethod
    def within(cls, doc: Any, start: int, end: int) -> _Entities:
        return cls(
            [
                _Entity(e.text, e.label_, e.start_char - start, e.end_char - start)
                for e in doc.ents
                if e.start_char >= start and e.end_char <= end
            ]
        )


def _ner_listens(nlp: Any) -> bool:
    """Whether the NER reads the shared ``tok2vec`` (then it must run too)."""
    try:
        ner = nlp.get_pipe("ner")
        return any(n.name == "tok2vec-listener" for n in ner.model.walk())
    except Exception:  # noqa: BLE001 - unknown pipeline layout: keep tok2vec to be safe
        return True


EVIDENCE_MIN_SCORE = 0.9
"""A passage counts as written in another language only on a detection at least this sure (or by
its script): English passages full of foreign names detect as 'de' or 'es' at 0.5–0.75."""


def readable_passages(
    data: GuardInput, verifier: Any, response_language: str | None
) -> tuple[GuardInput, str]:
    """The input without the passages the verifier cannot read, and the reason claims are
    unverified when none is left: evidence the verifier cannot read makes a claim UNVERIFIED,
    never "fabricated".

    When every passage is in an uncovered language, all are set aside. Among readable ones, only
    passages in another *script* (CJK) are: a Latin-script passage detected as another language
    is kept, since the detector's mistakes on short or name-heavy English are common (lfqa_dev
    and WiCE have English pages detected as 'ceb' or 'de' even at 0.9).
    """
    found = [
        (p, detect_language(p.text, fallback=response_language, min_score=EVIDENCE_MIN_SCORE))
        for p in data.passages
    ]
    uncovered = [(p, lang) for p, lang in found if lang is not None and not verifier.covers(lang)]
    if not uncovered:
        return data, "no evidence text to check against"
    if len(uncovered) < len(found):
        uncovered = [(p, lang) for p, lang in uncovered if script_language(p.text) is not None]
        if not uncovered:
            return data, "no evidence text to check against"
    dropped = {id(p) for p, _ in uncovered}
    name = getattr(verifier, "name", type(verifier).__name__)
    langs = ", ".join(sorted({f"'{lang}'" for _, lang in uncovered}))
    logger.debug("%d passage(s) in %s set aside: %s does not read them", len(dropped), langs, name)
    reason = f"the evidence is in {langs}, which verifier {name} does not read"
    from guardrail.verifiers.routing import route_hint

    reason += f"; {route_hint(sorted({lang for _, lang in uncovered})[0])}"
    kept = [p for p in data.passages if id(p) not in dropped]
    return data.model_copy(update={"passages": kept}), reason


def _has_evidence(data: GuardInput) -> bool:
    """Whether the input gives passages with text or a knowledge base."""
    return any(p.text.strip() for p in data.passages) or data.knowledge_base is not None


def _nothing_to_check(state: PipelineState) -> bool:
    """Whether the claims stage found only sentences that state no checkable fact."""
    return bool(state.claims) and all(
        c.status is ClaimStatus.NOT_CHECKWORTHY for c in state.claims or []
    )


def _as_unchecked(result: Detection) -> Detection:
    """A dialogue-only check as the skipped stage left it, plus its prior-turn flags: every claim
    UNVERIFIED (a not-check-worthy one too: check-worthiness only chose the claims paired with
    the turns) and the verdict UNVERIFIED for :data:`NO_EVIDENCE`. An answer with nothing to
    check keeps its NOTHING_TO_CHECK verdict."""
    if result.verdict.label is VerdictLabel.NOTHING_TO_CHECK:
        return result
    claims = [
        c.model_copy(update={"status": ClaimStatus.UNVERIFIED, "reason": NO_EVIDENCE})
        if c.status is ClaimStatus.NOT_CHECKWORTHY
        else c
        for c in result.claims
    ]
    verdict = result.verdict.model_copy(
        update={"label": VerdictLabel.UNVERIFIED, "reason": NO_EVIDENCE}
    )
    return replace(result, claims=claims, verdict=verdict)


class HallucinationStage(Stage):
    """Scores every claim against the evidence in one batched verifier call."""

    name = "hallucination"
    reads = ("claims", "language", "doc")
    writes = ("claims", "verdict", "flags", "language", "calibration")
    uses = ("nlp", "embedder", "verifier")

    def skip_reason(self, state: PipelineState) -> str | None:
        data = state.input
        if not _has_evidence(data) and not any(t.text.strip() for t in data.dialogue.turns):
            return None if _nothing_to_check(state) else NO_EVIDENCE
        return None

    def _nlp(self) -> Any:
        """The spaCy pipeline for names, or ``None`` when it cannot be loaded (regex names)."""
        from guardrail.errors import GuardrailError

        try:
            return self.resources.nlp()
        except GuardrailError as exc:
            logger.warning("spaCy unavailable, names found by capitalisation: %s", exc)
            return None

    def _detect(
        self,
        data: GuardInput,
        claims: list[Claim],
        language: str | None,
        verifier: Any,
        doc: Any = None,
        dialogue_only: bool = False,
        cfg: HallucinationConfig | None = None,
        parses: Parses | None = None,
    ) -> Detection:
        """The claims of ``data.response`` judged against its evidence (the passages the
        verifier reads, the KB facts, the dialogue): :func:`detect` with its inputs built
        (``cfg``: the hallucination settings, default the config's)."""
        cfg = cfg or self.config.hallucination
        data, no_evidence = readable_passages(data, verifier, language)
        if dialogue_only:  # the claims' prior-turn pairs alone
            no_evidence = NO_EVIDENCE
        spacy = self._nlp() if language == "en" else None
        texts = [c.text for c in claims] + [c.span.slice(data.response) for c in claims]
        shared = doc if getattr(doc, "text", None) == data.response else None
        spans = [(c.span.start, c.span.end) for c in claims]
        nlp = (
            EntityParser(spacy, texts, shared, spans, parses, once=[data.query])
            if spacy is not None
            else None
        )
        names = [
            m.text for c in claims for m in find_mentions(c.text, nlp) if m.kind is MentionKind.NAME
        ]
        counter = getattr(verifier, "count_tokens", None)
        size, stride = window_size(cfg.window_tokens, cfg.window_stride, verifier)
        evidence = gather_evidence(
            data,
            size,
            stride,
            counter if callable(counter) else None,
            use_windows=cfg.use_windows,
            entity_names=sorted(set(names)) or None,
            sentences=cfg.selection.enabled,
        )
        return detect(
            data.response,
            claims,
            evidence,
            verifier,
            cfg,
            data.retrieval_score,
            embedder=self.resources.embedder,
            nlp=nlp,
            cache=self._cache(),
            no_evidence_reason=no_evidence,
            question=data.query,
            ladder=self.config.confidence,
        )

    def _scored(self, data: GuardInput) -> GuardInput:
        """``data`` with its passages' retrieval scores for T(rs), when the policy reads them
        (``retrieval_score``); unchanged when the embedder fails (T(rs) takes its strict end)."""
        mode = self.config.retrieval_score
        if mode == "embedding" or (
            mode == "auto" and self.config.hallucination.policy != "calibrated"
        ):
            try:
                return with_retrieval_scores(data, self.resources.embedder())
            except Exception as exc:  # noqa: BLE001 - unscored passages: T(rs) takes its strict end
                logger.warning("could not score passages for T(rs), using the strict end: %s", exc)
        return data

    def judge_texts(self, state: PipelineState, texts: list[str]) -> list[Claim]:
        """``texts`` judged as the claims of one answer against the evidence of ``state``,
        what the correction stage's re-check asks of repaired claims: the same judgement as
        any claim (evidence chosen afresh, the verifier and its calibration, the name, value
        and date checks), all in one detection, without the pairs that do not decide support
        (earlier turns, claim against claim)."""
        if not texts:
            return []
        claims: list[Claim] = []
        at = 0
        for text in texts:
            span = Span(start=at, end=at + len(text))
            claims.append(Claim(text=text, span=span, language=state.language))
            at = span.end + 1
        dialogue = state.input.dialogue.model_copy(update={"turns": []})
        update = {"response": " ".join(texts), "dialogue": dialogue}
        data = self._scored(state.input.model_copy(update=update))
        cfg = self.config.hallucination.model_copy(update={"logical_consistency": False})
        verifier = self.resources.verifier()
        return self._detect(
            data, claims, state.language, verifier, cfg=cfg, parses=state.parses
        ).claims

    def _cache(self) -> ScoreCache | None:
        """The guardrail's shared score cache (``None`` when its size is 0)."""
        cache: ScoreCache | None = self.resources.score_cache()
        return cache

    def run(self, state: PipelineState) -> StageUpdate:
        cfg = self.config.hallucination
        data = state.input
        if not _has_evidence(data) and not any(t.text.strip() for t in data.dialogue.turns):
            # not skipped, so nothing to check (skip_reason): no verifier needed
            verdict = Verdict(retrieval_score=data.retrieval_score, policy=cfg.policy)
            return StageUpdate(
                claims=state.claims,
                verdict=nothing_to_check(verdict, data.query, data.response),
            )
        verifier = self.resources.verifier()  # raises when it cannot load: the stage fails
        data = self._scored(data)
        context = dialogue_context([t.text for t in data.dialogue.turns])
        language = state.language or response_language(data.response, data.query, context)
        claims = state.claims
        if claims is None:
            claims = build_claims(self, data.response, data.query, language)
        dialogue_only = not _has_evidence(state.input)
        result = self._detect(
            data, claims, language, verifier, state.doc, dialogue_only, parses=state.parses
        )
        logger.debug("hallucination: %s (%d pairs)", result.verdict.label, result.pairs_scored)
        if dialogue_only:
            result = _as_unchecked(result)
        update = StageUpdate(
            claims=result.claims,
            verdict=result.verdict,
            language=language,
            calibration=result.calibration,
        )
        if result.pairs_scored or result.flags:
            update.flags = result.flags
        return update
