"""The typed, JSON-serialisable results: claims, flags, verdict, recommendation and the report.

Everything the post-processed response holds is here, plus the Cw-CONLI verdict, the
claims with their verifier scores, and a record of which stages ran.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, computed_field


class Span(BaseModel):
    """A half-open character range ``[start, end)`` into the original response."""

    start: int
    end: int

    def slice(self, text: str) -> str:
        """The text this span covers."""
        return text[self.start : self.end]

    @property
    def range(self) -> tuple[int, int]:
        """``(start, end)``."""
        return (self.start, self.end)

    def overlaps(self, other: Span) -> bool:
        """Whether the two spans share at least one character
        (:func:`guardrail.text.spans.overlaps`)."""
        from guardrail.text.spans import overlaps

        return overlaps(self.range, other.range)


class VerdictLabel(StrEnum):
    """The verdict on the whole response."""

    VERIFIED = "VERIFIED"
    """The evidence supports the response (score ≥ T(rs))."""
    HALLUCINATION = "HALLUCINATION"
    """The evidence does not support it (score < T(rs)) or contradicts it."""
    UNVERIFIED = "UNVERIFIED"
    """Checkable claims could not be checked (no evidence, unsupported language, verifier
    down): never delivered as checked."""
    NOTHING_TO_CHECK = "NOTHING_TO_CHECK"
    """The answer states no checkable fact (a question to the user, a greeting, thanks, an
    opinion): there is nothing the evidence could support or refute."""


class StageStatus(StrEnum):
    """What happened to a stage in one run."""

    RAN = "ran"
    SKIPPED = "skipped"
    """Not applicable (e.g. no knowledge base given) or not available in this build."""
    FAILED = "failed"


class ClaimStatus(StrEnum):
    """Verifier outcome for one claim."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    UNVERIFIED = "unverified"
    """Not checked: unsupported language, no evidence, or the verifier failed on it."""
    NOT_CHECKWORTHY = "not_checkworthy"
    """States no checkable fact (a greeting, a hedge, a question back, an opinion, a remark
    about the answer itself); not scored and never counted as unsupported."""


class ClaimOutcome(StrEnum):
    """What the delivered text does with one claim (see :mod:`guardrail.decision`). When the
    answer is not delivered (``regenerate`` / ``human_review``) the outcomes say what a delivery
    would have done with each claim."""

    SUPPORTED = "supported"
    """Shown unmarked: the evidence supports it."""
    UNCERTAIN = "uncertain"
    """Shown with an annotation: not confirmed, but not confidently wrong either."""
    UNVERIFIED = "unverified"
    """Shown with an annotation: it could not be checked (no readable evidence)."""
    REPAIRED = "repaired"
    """Shown corrected: a knowledge-base value, or an evidence value the verifier re-checked."""
    REMOVED = "removed"
    """Left out of the delivered text (a ``removal`` correction with its span and reason)."""
    NOT_CHECKWORTHY = "not_checkworthy"
    """States no checkable fact; shown unmarked."""


class HallucinationType(StrEnum):
    """The hallucination types; severity weights in ``HALLUCINATION_SEVERITY``."""

    FABRICATED_FACT = "fabricated_fact"
    NONEXISTENT_ENTITY = "nonexistent_entity"
    WRONG_ATTRIBUTE = "wrong_attribute"
    CONTRADICTS_FACT = "contradicts_fact"
    CONTRADICTS_PRIOR = "contradicts_prior"
    UNSUPPORTED_CLAIM = "unsupported_claim"
    TEMPORAL_ERROR = "temporal_error"
    LOGICAL_INCONSISTENCY = "logical_inconsistency"


#: The severity weight per hallucination type.
HALLUCINATION_SEVERITY: dict[HallucinationType, float] = {
    HallucinationType.FABRICATED_FACT: 1.0,
    HallucinationType.NONEXISTENT_ENTITY: 0.9,
    HallucinationType.WRONG_ATTRIBUTE: 0.8,
    HallucinationType.CONTRADICTS_FACT: 1.0,
    HallucinationType.CONTRADICTS_PRIOR: 0.85,
    HallucinationType.UNSUPPORTED_CLAIM: 0.5,
    HallucinationType.TEMPORAL_ERROR: 0.7,
    HallucinationType.LOGICAL_INCONSISTENCY: 0.6,
}


class Severity(StrEnum):
    """Severity of a set of flags."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class VerifierScores(BaseModel):
    """Three-way NLI probabilities; they sum to 1."""

    entailment: float
    neutral: float
    contradiction: float


class EvidencePointer(BaseModel):
    """Which evidence decided a claim."""

    passage_index: int
    """Index into ``GuardInput.passages`` (-1 for knowledge-base facts, -2 for dialogue)."""
    window_index: int = 0
    """Index of the sliding window inside that passage (-1: the claim's selected evidence
    sentences, ``hallucination.selection``)."""
    snippet: str = ""
    """The window text (shortened)."""
    source: str | None = None


class Claim(BaseModel):
    """One claim of the response, with its span and the verifier's judgement."""

    text: str
    span: Span
    scores: VerifierScores | None = None
    """Best-window scores (max entailment over windows)."""
    status: ClaimStatus = ClaimStatus.UNVERIFIED
    evidence: EvidencePointer | None = None
    language: str | None = None
    reason: str | None = None
    """Why the claim has its status (e.g. ``"language 'zh' not covered by verifier"``)."""
    p_supported: float | None = None
    """Calibrated probability that the evidence supports the claim (``calibrated`` policy:
    verifier scores plus lexical features through a logistic model fitted on held-out data)."""
    features: dict[str, float] | None = None
    """The features ``p_supported`` was computed from (see ``guardrail.hallucination.calibration``)."""
    outcome: ClaimOutcome | None = None
    """What the delivered text does with this claim (set by the decision; ``None`` before it)."""


class CalibrationUsed(BaseModel):
    """The claim calibration the hallucination check scored ``p_supported`` with, recorded by
    the stage that chose it so that the decision reads the same cut-offs."""

    label: str
    """As in ``verdict.method``: ``calibration <file>``, ``uncalibrated (threshold 0.5)`` …"""
    threshold: float
    """The claim threshold: a claim is supported at ``p_supported`` ≥ this."""
    remove_below: float | None = None
    """Below this ``p_supported`` an unsupported claim is a confident problem (``None``: the
    calibration sets none, so every unsupported claim is one)."""
    routed_remove_below: dict[int, float | None] = Field(default_factory=dict)
    """For claims a language router sent to another verifier with a calibration of its own:
    that calibration's ``remove_below``, by claim index (an uncalibrated route is judged by the
    default's)."""

    def remove_below_for(self, claim_index: int) -> float | None:
        """The ``remove_below`` that applies to one claim."""
        return self.routed_remove_below.get(claim_index, self.remove_below)


class Verdict(BaseModel):
    """The adaptive verdict (Cw-CONLI, threshold T(rs))."""

    label: VerdictLabel = VerdictLabel.UNVERIFIED
    nli_score: float | None = None
    """Aggregated entailment score of the response."""
    threshold: float | None = None
    """T(rs), the threshold for this retrieval score."""
    retrieval_score: float | None = None
    policy: str | None = None
    """Aggregation policy used (``weakest_link`` or ``ratio``)."""
    method: str | None = None
    """How the verdict was reached (verifier id, claims / whole response, windows)."""
    reason: str = ""


# --- coherence (post-processing stage 1) --------------------------------------------------------


class CoherenceIssueType(StrEnum):
    """What kind of coherence problem an issue is (compares equal to its string value)."""

    QUD_NOT_ADDRESSED = "qud_not_addressed"
    """The answer does not address the question asked."""
    QUD_PARTIALLY_ADDRESSED = "qud_partially_addressed"
    """The answer addresses the question only in part."""
    TOPIC_DRIFT = "topic_drift"
    """A sentence drifts away from the answer's topic."""
    TOPIC_UNRELATED = "topic_unrelated"
    """The answer is unrelated to the dialogue's topic."""
    ENTITY_MISMATCH = "entity_mismatch"
    """A value given for a known entity differs from the one on record."""
    ENTITY_UNKNOWN = "entity_unknown"
    """A name the dialogue and the knowledge base do not know."""
    DISCOURSE_BREAK = "discourse_break"
    """Adjacent sentences do not connect."""
    UNEXPECTED_SPEECH_ACT = "unexpected_speech_act"
    """The reply's kind (question, statement …) does not fit the user's turn."""
    AMBIGUOUS_REFERENCE = "ambiguous_reference"
    """A pronoun could refer to more than one entity."""
    INCONSISTENT_PRONOUN = "inconsistent_pronoun"
    """A pronoun's gender or number does not fit the entity it refers to."""
    UNRESOLVED_REFERENCE = "unresolved_reference"
    """A pronoun refers to nothing said before."""


class CoherenceIssue(BaseModel):
    """One coherence problem, with where it is and how bad it is."""

    type: CoherenceIssueType
    description: str
    severity: float
    """0.0 (minor) … 1.0 (critical)."""
    span: Span | None = None
    suggestion: str | None = None


class DimensionScore(BaseModel):
    """Score of one coherence dimension with its measured details."""

    score: float = 1.0
    details: dict[str, Any] = Field(default_factory=dict)


class QUDRelevance(DimensionScore):
    addresses_qud: bool = True
    question_type: str | None = None
    coverage: float | None = None
    similarity: float | None = None


class CoherenceResult(BaseModel):
    """The five coherence dimensions and their weighted score."""

    score: float = 1.0
    qud_relevance: QUDRelevance = Field(default_factory=QUDRelevance)
    topic_consistency: DimensionScore = Field(default_factory=DimensionScore)
    entity_consistency: DimensionScore = Field(default_factory=DimensionScore)
    discourse_coherence: DimensionScore = Field(default_factory=DimensionScore)
    reference_consistency: DimensionScore = Field(default_factory=DimensionScore)
    issues: list[CoherenceIssue] = Field(default_factory=list)


# --- fact validation (post-processing stage 2) --------------------------------------------------


class ExtractedClaim(BaseModel):
    """A (subject, predicate, object) claim extracted from the response."""

    text: str
    subject: str
    predicate: str
    object: str
    span: Span
    """Span of the whole claim (sentence or clause)."""
    object_span: Span | None = None
    """Span of the object value alone (what a factual correction replaces)."""
    confidence: float = 1.0
    entity_id: str | None = None
    """Knowledge-base entity the subject resolved to."""
    attribute: str | None = None
    """Knowledge-base attribute the predicate mapped to."""


class ValidationStatus(StrEnum):
    VERIFIED = "verified"
    CONTRADICTED = "contradicted"
    UNVERIFIABLE = "unverifiable"
    HISTORY_CONFLICT = "history_conflict"
    ERROR = "error"


class ClaimValidation(BaseModel):
    """The knowledge-base and dialogue validation of one extracted claim."""

    claim: ExtractedClaim
    status: ValidationStatus
    confidence: float = 0.0
    kb_value: str | None = None
    """The knowledge-base value (for ``contradicted``/``verified``)."""
    source: str | None = None
    turn_id: int | None = None
    """The conflicting turn (for ``history_conflict``)."""
    turn_text: str | None = None
    reason: str | None = None


class FactualStats(BaseModel):
    total: int = 0
    verified: int = 0
    contradicted: int = 0
    unverifiable: int = 0
    history_conflicts: int = 0
    errors: int = 0


class FactualValidationResult(BaseModel):
    """Claims validated against the knowledge base and the dialogue history."""

    score: float = 1.0
    claim_validations: list[ClaimValidation] = Field(default_factory=list)
    stats: FactualStats = Field(default_factory=FactualStats)


# --- hallucination flags (post-processing stage 3) ----------------------------------------------


class HallucinationFlag(BaseModel):
    """A typed hallucination with where it is, how sure we are and what to do about it."""

    type: HallucinationType
    span: Span
    content: str
    """The flagged text."""
    confidence: float
    severity: float
    """The severity weight of the type."""
    explanation: str = ""
    evidence: str | None = None
    """Evidence snippet that contradicts or fails to support it."""
    suggestion: str | None = None
    claim_index: int | None = None
    replacement: str | None = None
    """The value the evidence or the knowledge base gives instead of ``content`` (what a factual
    correction puts in its place), when there is exactly one."""
    evidence_value: str | None = None
    """For a misplaced name or value: what the evidence states in its place (it may be one of
    several, so not a ``replacement``)."""
    evidence_span: Span | None = None
    """Where ``evidence_value`` stands in ``evidence``."""


# --- correction (post-processing stage 4) -------------------------------------------------------


class CorrectionType(StrEnum):
    SPELLING = "spelling"
    GRAMMAR = "grammar"
    FACTUAL = "factual"
    ANNOTATION = "annotation"
    REMOVAL = "removal"


class Correction(BaseModel):
    """One edit, with its span into the original response."""

    type: CorrectionType
    span: Span
    original: str
    replacement: str
    confidence: float = 1.0
    source: str | None = None
    message: str | None = None
    claim_index: int | None = None
    """The claim this edit repairs (factual corrections from the evidence or the KB)."""
    verified: bool | None = None
    """For a repair: whether the corrected claim was re-checked and found supported
    (``None`` = not re-checked)."""


class NewEntity(BaseModel):
    """An entity the response mentions that the dialogue registry does not know."""

    name: str
    type: str | None = None
    span: Span


# --- recommendation (post-processing stage 5) ---------------------------------------------------


class Action(StrEnum):
    """What to do with the answer: the recommendation's ``action`` (compares equal to its string
    value, which is what the JSON holds)."""

    ACCEPT = "accept"
    ACCEPT_WITH_FLAGS = "accept_with_flags"
    CORRECT_AND_DELIVER = "correct_and_deliver"
    REGENERATE = "regenerate"
    HUMAN_REVIEW = "human_review"


class Accept(BaseModel):
    """Deliver the answer as it was written (``delivered_text`` is the original)."""

    action: Literal[Action.ACCEPT] = Action.ACCEPT


class AcceptWithFlags(BaseModel):
    """Deliver the annotated text (``delivered_text``); ``flags`` are the uncertain spans."""

    action: Literal[Action.ACCEPT_WITH_FLAGS] = Action.ACCEPT_WITH_FLAGS
    flags: list[Span] = Field(default_factory=list)
    severity: Severity = Severity.LOW


class CorrectAndDeliver(BaseModel):
    """Deliver the answer with its ``corrections`` applied: the repairs and removals, with any
    uncertain claim that remains annotated (``delivered_text`` is the annotated text)."""

    action: Literal[Action.CORRECT_AND_DELIVER] = Action.CORRECT_AND_DELIVER
    corrections: list[Correction] = Field(default_factory=list)


class Regenerate(BaseModel):
    """Ask the LLM again, with ``guidance`` naming what to fix (nothing is delivered)."""

    action: Literal[Action.REGENERATE] = Action.REGENERATE
    guidance: str
    items: list[str] = Field(default_factory=list)
    """The guidance split into its individual instructions."""


class HumanReview(BaseModel):
    """Escalate to a person; ``reason`` says why (nothing is delivered)."""

    action: Literal[Action.HUMAN_REVIEW] = Action.HUMAN_REVIEW
    reason: str


Recommendation = Annotated[
    Accept | AcceptWithFlags | CorrectAndDeliver | Regenerate | HumanReview,
    Field(discriminator="action"),
]


class ProblemKind(StrEnum):
    """What blocks a claim (compares equal to its string value)."""

    UNSUPPORTED = "unsupported"
    """The evidence confidently does not support the claim."""
    CONTRADICTED = "contradicted"
    """The evidence contradicts the claim."""
    KB_CONTRADICTION = "kb_contradiction"
    """The knowledge base records the value differently."""
    HISTORY_CONFLICT = "history_conflict"
    """The claim conflicts with an earlier dialogue turn."""
    CONTRADICTS_FACT = "contradicts_fact"
    WRONG_ATTRIBUTE = "wrong_attribute"
    FABRICATED_FACT = "fabricated_fact"
    NONEXISTENT_ENTITY = "nonexistent_entity"
    TEMPORAL_ERROR = "temporal_error"
    CONTRADICTS_PRIOR = "contradicts_prior"
    LOGICAL_INCONSISTENCY = "logical_inconsistency"
    """(These seven: a confident flag of that :class:`HallucinationType`.)"""


class Problem(BaseModel):
    """A claim or flag that blocks delivering the answer as it is."""

    kind: ProblemKind
    span: Span
    text: str
    confidence: float
    claim_index: int | None = None
    fixed_by: str | None = None
    """How the corrected text repairs it (``"knowledge base"``, ``"evidence (re-checked)"``,
    ``"removal"``); ``None`` = not repaired."""


class Decision(BaseModel):
    """How the verdict and the problems gated the recommendation (see :mod:`guardrail.decision`)."""

    problems: list[Problem] = Field(default_factory=list)
    band: Action | None = None
    """The confidence band the score alone falls in (the action the confidence alone would
    give)."""
    gate: str = ""
    """Why the action is what it is, in one sentence."""
    supported_fraction: float | None = None
    """Share of the checked claims that are supported."""
    checkworthy_claims: int = 0
    not_checkworthy_claims: int = 0
    granularity: str = "claim"
    """``claim`` (each claim delivered, annotated, repaired or removed on its own) or
    ``answer`` (all or nothing)."""
    removed_claims: int = 0
    """Checkworthy claims left out of the delivered text."""
    kept_share: float | None = None
    """Share of the checkworthy claims still in the delivered text (``None``: none to keep)."""
    overrides_band: str | None = None
    """Why the action differs from the band the confidence alone falls in (``None``: it does
    not)."""


class StageRecord(BaseModel):
    """What happened to one stage."""

    name: str
    status: StageStatus
    reason: str | None = None
    duration_ms: float = 0.0


class ConfidenceBreakdown(BaseModel):
    """The parts of the confidence score, each finding counted once: a value the
    knowledge base records differently counts in ``factual`` only, so ``coherence``, ``entity``
    and ``hallucination`` can be higher here than in the coherence result and the flags, which
    still show the finding (:mod:`guardrail.scoring`)."""

    coherence: float | None = None
    factual: float | None = None
    hallucination: float | None = None
    entity: float | None = None
    raw: float = 0.0
    """Weighted mean of the components that ran (weights renormalised over them)."""
    penalty: float = 0.0
    """Severity penalty, capped at 0.5."""
    missing: list[str] = Field(default_factory=list)
    """Components that could not be computed."""


class GuardReport(BaseModel):
    """The full result of one check."""

    original: str
    """The answer as checked. :attr:`delivered_text` for ``accept``."""
    corrected: str
    """``original`` with the correction stage's repairs and removals, without annotations
    (``original`` when that stage did not run): the text a corrected answer says, for diffs
    and logs; never shown as it is (:attr:`delivered_text` is ``annotated``)."""
    annotated: str
    """``corrected`` with the annotations on the uncertain and unverified claims (``original``
    when the correction stage did not run). :attr:`delivered_text` for ``accept_with_flags``
    and ``correct_and_deliver``."""
    coherence: CoherenceResult | None = None
    factual_validation: FactualValidationResult | None = None
    hallucination_flags: list[HallucinationFlag] = Field(default_factory=list)
    corrections: list[Correction] = Field(default_factory=list)
    new_entities: list[NewEntity] = Field(default_factory=list)
    confidence: float
    confidence_breakdown: ConfidenceBreakdown = Field(default_factory=ConfidenceBreakdown)
    recommendation: Recommendation
    decision: Decision = Field(default_factory=Decision)
    claims: list[Claim] = Field(default_factory=list)
    verdict: Verdict = Field(default_factory=Verdict)
    stages: list[StageRecord] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    language: str | None = None
    session_id: str | None = None
    turn_id: int | None = None
    profile: str = "offline"
    extensions: dict[str, Any] = Field(default_factory=dict)
    """Custom stages' own results (pydantic models or JSON data), by stage name."""

    @property
    def action(self) -> Action:
        """The recommended action (``recommendation.action``)."""
        return self.recommendation.action

    @computed_field  # type: ignore[prop-decorator]
    @property
    def delivered_text(self) -> str | None:
        """The text to show the user: the one text of the report that follows the action.

        - ``accept`` → ``original`` (nothing to repair, remove or flag);
        - ``accept_with_flags`` → ``annotated`` (the uncertain claims marked);
        - ``correct_and_deliver`` → ``annotated``: the repairs and removals of ``corrected``,
          with the uncertain claims that remain marked;
        - ``regenerate`` and ``human_review`` → ``None``: the answer must not be shown.
        """
        action = self.action
        if action is Action.ACCEPT:
            return self.original
        if action is Action.ACCEPT_WITH_FLAGS:
            return self.annotated
        if action is Action.CORRECT_AND_DELIVER:
            # the repairs and removals, with the uncertain claims that remain annotated
            return self.annotated
        return None
