"""Stored results as MeTTa facts typed by the post-processing pipeline's MeTTa signatures.

Each turn becomes ground equations of its operations::

    (= (postprocess-response "answer" (dialogue-state "demo" 0) (knowledge-base "none") "query")
       (postprocessed-response …))
    (= (check-coherence "answer" (dialogue-state "demo" 0) "query") (coherence-result …))
    (= (validate-facts …) …)  (= (extract-claims "answer") (Cons (claim …) Nil))
    (= (validate-claim …) …)  (= (score-confidence …) 0.73)  (= (determine-recommendation …) …)

:data:`PRELUDE` declares those signatures (the ones these facts use, and the
``should-*`` predicates as rules over the recommendation bands) and one typed constructor per
result record, so a MeTTa interpreter with type checking (``hyperon``) loads the file and
``!(get-type (postprocess-response …))`` is ``PostprocessedResponse``. The signatures' ``Float`` is
written ``Number``, MeTTa's type of numeric literals; everything else keeps its published name.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from guardrail.config import HandlingThresholds
from guardrail.store.keys import claim_suggestion, claim_type

_SIGNATURES = """\
; the post-processing signatures (Float written as Number, MeTTa's numeric type)
(: postprocess-response (-> String DialogueState KnowledgeBase String PostprocessedResponse))
(: check-coherence (-> String DialogueState String CoherenceResult))
(: validate-facts (-> String KnowledgeBase DialogueState FactualValidationResult))
(: score-confidence (-> CoherenceResult FactualValidationResult (List HallucinationFlag) Number))
(: determine-recommendation (-> Number CoherenceResult FactualValidationResult (List HallucinationFlag) ResponseRecommendation))
(: extract-claims (-> String (List Claim)))
(: validate-claim (-> Claim KnowledgeBase DialogueState ClaimValidation))
(: generate-guidance (-> CoherenceResult FactualValidationResult (List HallucinationFlag) String))
(: should-accept (-> Number Bool))
(: should-flag (-> Number Bool))
(: should-correct (-> Number Bool))
(: should-regenerate (-> Number Bool))
; containers
(: List (-> Type Type))
(: Nil (List $t))
(: Cons (-> $t (List $t) (List $t)))
(: Maybe (-> Type Type))
(: Nothing (Maybe $t))
(: Just (-> $t (Maybe $t)))
; record constructors
(: dialogue-state (-> String Number DialogueState))
(: knowledge-base (-> String KnowledgeBase))
(: span (-> Number Number Span))
(: postprocessed-response (-> String (Maybe String) CoherenceResult FactualValidationResult (List HallucinationFlag) (List NewEntity) Number ResponseRecommendation PostprocessedResponse))
(: coherence-result (-> Number QUDRelevanceResult TopicConsistencyResult EntityConsistencyResult DiscourseCoherenceResult ReferenceConsistencyResult (List CoherenceIssue) CoherenceResult))
(: coherence-unchecked (-> String CoherenceResult))
(: qud-relevance-result (-> Number Bool (Maybe String) QUDRelevanceResult))
(: topic-consistency-result (-> Number Bool TopicConsistencyResult))
(: entity-consistency-result (-> Number Number EntityConsistencyResult))
(: discourse-coherence-result (-> Number DiscourseCoherenceResult))
(: reference-consistency-result (-> Number ReferenceConsistencyResult))
(: coherence-issue (-> String String Number (Maybe Span) (Maybe String) CoherenceIssue))
(: factual-validation-result (-> Number (List ClaimValidation) ValidationStats FactualValidationResult))
(: factual-unchecked (-> String FactualValidationResult))
(: validation-stats (-> Number Number Number Number Number ValidationStats))
(: claim (-> String String String String Span Number Claim))
(: claim-validation (-> Claim ValidationStatus (Maybe String) ClaimValidation))
(: Verified (-> Number ValidationStatus))
(: Contradicted (-> String Number ValidationStatus))
(: Unverifiable ValidationStatus)
(: HistoryConflict (-> Number ValidationStatus))
(: ValidationError (-> String ValidationStatus))
(: hallucination-flag (-> HallucinationType Span String Number (Maybe String) HallucinationFlag))
(: new-entity (-> String Span NewEntity))
(: response-correction (-> String String String Number Span ResponseCorrection))
(: Accept ResponseRecommendation)
(: AcceptWithFlags (-> (List Span) Severity ResponseRecommendation))
(: CorrectAndDeliver (-> (List ResponseCorrection) ResponseRecommendation))
(: Regenerate (-> String ResponseRecommendation))
(: HumanReview (-> String ResponseRecommendation))
"""

HALLUCINATION_SYMBOLS = {
    "fabricated_fact": "FabricatedFact",
    "nonexistent_entity": "NonexistentEntity",
    "wrong_attribute": "WrongAttribute",
    "contradicts_fact": "ContradictsFact",
    "contradicts_prior": "ContradictsPrior",
    "unsupported_claim": "UnsupportedClaim",
    "temporal_error": "TemporalError",
    "logical_inconsistency": "LogicalInconsistency",
}
SEVERITY_SYMBOLS = {"low": "Low", "medium": "Medium", "high": "High", "critical": "Critical"}


def prelude(thresholds: HandlingThresholds | None = None) -> str:
    """Type declarations and the ``should-*`` rules for the given recommendation bands."""
    t = thresholds or HandlingThresholds()
    lines = [_SIGNATURES.rstrip("\n")]
    lines += [f"(: {sym} HallucinationType)" for sym in HALLUCINATION_SYMBOLS.values()]
    lines += [f"(: {sym} Severity)" for sym in SEVERITY_SYMBOLS.values()]
    lines += [
        "; the confidence bands of the decision tree (HandlingThresholds)",
        f"(= (should-accept $c) (>= $c {t.accept!r}))",
        f"(= (should-flag $c) (and (< $c {t.accept!r}) (>= $c {t.flag!r})))",
        f"(= (should-correct $c) (and (< $c {t.flag!r}) (>= $c {t.correct!r})))",
        f"(= (should-regenerate $c) (and (< $c {t.correct!r}) (>= $c {t.regenerate!r})))",
    ]
    return "\n".join(lines) + "\n"


def string(value: Any) -> str:
    """A MeTTa string literal (``None`` → empty string)."""
    return json.dumps("" if value is None else str(value), ensure_ascii=False)


def number(value: Any) -> str:
    """A MeTTa number (``None`` → 0)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(round(float(value or 0.0), 4))


def boolean(value: Any) -> str:
    return "True" if value else "False"


def maybe(value: str | None) -> str:
    return "Nothing" if value is None else f"(Just {value})"


def mlist(items: Iterable[str]) -> str:
    """``(Cons a (Cons b Nil))``."""
    out = "Nil"
    for item in reversed(list(items)):
        out = f"(Cons {item} {out})"
    return out


def span(item: dict[str, Any] | None) -> str | None:
    if not isinstance(item, dict) or item.get("start") is None:
        return None
    return f"(span {number(item.get('start'))} {number(item.get('end'))})"


def coherence_expr(report: dict[str, Any]) -> str:
    c = report.get("coherence")
    if not isinstance(c, dict):
        return f"(coherence-unchecked {string(_stage_reason(report, 'coherence'))})"
    qud = c.get("qud_relevance") or {}
    topic = c.get("topic_consistency") or {}
    entity = c.get("entity_consistency") or {}
    details_t, details_e = topic.get("details") or {}, entity.get("details") or {}
    issues = c.get("issues") or []
    drift = details_t.get("drift_detected")
    if not isinstance(drift, bool):
        drift = any(i.get("type") in ("topic_drift", "topic_unrelated") for i in issues)
    mismatches = details_e.get("mismatches")
    if not isinstance(mismatches, int):
        mismatches = sum(1 for i in issues if i.get("type") == "entity_mismatch")
    qt = qud.get("question_type")
    issue_exprs = [
        f"(coherence-issue {string(i.get('type'))} {string(i.get('description'))} "
        f"{number(i.get('severity'))} {maybe(span(i.get('span')))} "
        f"{maybe(string(i['suggestion']) if i.get('suggestion') else None)})"
        for i in issues
    ]
    return (
        f"(coherence-result {number(c.get('score'))} "
        f"(qud-relevance-result {number(qud.get('score', 1.0))} "
        f"{boolean(qud.get('addresses_qud', True))} {maybe(string(qt) if qt else None)}) "
        f"(topic-consistency-result {number(topic.get('score', 1.0))} {boolean(drift)}) "
        f"(entity-consistency-result {number(entity.get('score', 1.0))} {number(mismatches)}) "
        f"(discourse-coherence-result {number(_get_score(c, 'discourse_coherence'))}) "
        f"(reference-consistency-result {number(_get_score(c, 'reference_consistency'))}) "
        f"{mlist(issue_exprs)})"
    )


def _get_score(c: dict[str, Any], key: str) -> float:
    dim = c.get(key) or {}
    return float(dim.get("score", 1.0))


def _stage_reason(report: dict[str, Any], name: str) -> str:
    for stage in report.get("stages") or []:
        if stage.get("name") == name:
            return f"{stage.get('status')}: {stage.get('reason') or ''}".strip(": ")
    return "not run"


def claim_expr(claim: dict[str, Any]) -> str:
    return (
        f"(claim {string(claim_type(claim))} {string(claim.get('subject'))} "
        f"{string(claim.get('predicate'))} {string(claim.get('object'))} "
        f"{span(claim.get('span')) or '(span 0 0)'} {number(claim.get('confidence', 1.0))})"
    )


def status_expr(validation: dict[str, Any]) -> str:
    status = validation.get("status")
    confidence = number(validation.get("confidence"))
    if status == "verified":
        return f"(Verified {confidence})"
    if status == "contradicted":
        return f"(Contradicted {string(validation.get('kb_value'))} {confidence})"
    if status == "history_conflict":
        return f"(HistoryConflict {number(validation.get('turn_id') or 0)})"
    if status == "error":
        return f"(ValidationError {string(validation.get('reason'))})"
    return "Unverifiable"


def validation_expr(validation: dict[str, Any]) -> str:
    suggestion = claim_suggestion(validation)
    return (
        f"(claim-validation {claim_expr(validation.get('claim') or {})} "
        f"{status_expr(validation)} {maybe(string(suggestion) if suggestion else None)})"
    )


def factual_expr(report: dict[str, Any]) -> str:
    f = report.get("factual_validation")
    if not isinstance(f, dict):
        return f"(factual-unchecked {string(_stage_reason(report, 'fact_validation'))})"
    s = f.get("stats") or {}
    stats = " ".join(
        number(s.get(k, 0))
        for k in ("total", "verified", "contradicted", "unverifiable", "history_conflicts")
    )
    validations = [validation_expr(v) for v in f.get("claim_validations") or []]
    return (
        f"(factual-validation-result {number(f.get('score'))} {mlist(validations)} "
        f"(validation-stats {stats}))"
    )


def flags_expr(report: dict[str, Any]) -> str:
    flags = []
    for flag in report.get("hallucination_flags") or []:
        symbol = HALLUCINATION_SYMBOLS.get(str(flag.get("type")), "FabricatedFact")
        suggestion = flag.get("suggestion")
        flags.append(
            f"(hallucination-flag {symbol} {span(flag.get('span')) or '(span 0 0)'} "
            f"{string(flag.get('content'))} {number(flag.get('confidence'))} "
            f"{maybe(string(suggestion) if suggestion else None)})"
        )
    return mlist(flags)


def recommendation_expr(report: dict[str, Any]) -> str:
    rec = report.get("recommendation") or {}
    action = rec.get("action")
    if action == "accept":
        return "Accept"
    if action == "accept_with_flags":
        spans = [span(s) or "(span 0 0)" for s in rec.get("flags") or []]
        severity = SEVERITY_SYMBOLS.get(str(rec.get("severity")), "Low")
        return f"(AcceptWithFlags {mlist(spans)} {severity})"
    if action == "correct_and_deliver":
        corrections = [
            f"(response-correction {string(c.get('type'))} {string(c.get('original'))} "
            f"{string(c.get('replacement'))} {number(c.get('confidence', 1.0))} "
            f"{span(c.get('span')) or '(span 0 0)'})"
            for c in rec.get("corrections") or []
        ]
        return f"(CorrectAndDeliver {mlist(corrections)})"
    if action == "regenerate":
        return f"(Regenerate {string(rec.get('guidance'))})"
    return f"(HumanReview {string(rec.get('reason'))})"


def knowledge_base_name(input: dict[str, Any]) -> str:
    kb = input.get("knowledge_base")
    if kb is None:
        return "none"
    if isinstance(kb, str):
        return kb
    return "inline"


def turn_facts(session_id: str, turn_id: int, input: dict[str, Any], report: dict[str, Any]) -> str:
    """The MeTTa facts of one stored turn."""
    response = string(input.get("response", report.get("original")))
    query = string(input.get("query"))
    ds = f"(dialogue-state {string(session_id)} {number(int(turn_id))})"
    kb = f"(knowledge-base {string(knowledge_base_name(input))})"
    cr, fvr, hfl = coherence_expr(report), factual_expr(report), flags_expr(report)
    confidence = number(report.get("confidence"))
    rec = recommendation_expr(report)
    original, corrected = report.get("original"), report.get("corrected")
    new_entities = mlist(
        f"(new-entity {string(e.get('name'))} {span(e.get('span')) or '(span 0 0)'})"
        for e in report.get("new_entities") or []
    )
    result = (
        f"(postprocessed-response {string(original)} "
        f"{maybe(string(corrected) if corrected != original else None)} {cr} {fvr} {hfl} "
        f"{new_entities} {confidence} {rec})"
    )
    claims = []
    validations = []
    factual = report.get("factual_validation")
    for v in (factual or {}).get("claim_validations") or []:
        claims.append(claim_expr(v.get("claim") or {}))
        validations.append(f"(= (validate-claim {claims[-1]} {kb} {ds}) {validation_expr(v)})")
    lines = [
        f"; /postprocessing/{session_id}/{turn_id}",
        f"(= (postprocess-response {response} {ds} {kb} {query}) {result})",
        f"(= (check-coherence {response} {ds} {query}) {cr})",
        f"(= (validate-facts {response} {kb} {ds}) {fvr})",
        f"(= (extract-claims {response}) {mlist(claims)})",
        *validations,
        f"(= (score-confidence {cr} {fvr} {hfl}) {confidence})",
        f"(= (determine-recommendation {confidence} {cr} {fvr} {hfl}) {rec})",
    ]
    rec_data = report.get("recommendation") or {}
    if rec_data.get("action") == "regenerate":
        lines.append(f"(= (generate-guidance {cr} {fvr} {hfl}) {string(rec_data.get('guidance'))})")
    return "\n".join(lines) + "\n"
