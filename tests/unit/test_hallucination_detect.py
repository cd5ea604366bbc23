"""``detect`` end to end on a scripted verifier: statuses, the date rule, the per-claim fallback,
lexical window selection, early exit and the score cache (no model, milliseconds)."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.config import HallucinationConfig
from guardrail.hallucination.claims import sentence_claims
from guardrail.hallucination.detector import detect, judge_claims, score_claims
from guardrail.hallucination.evidence import Evidence
from guardrail.hallucination.plan import SpeedConfig
from guardrail.hallucination.windows import make_windows
from guardrail.report import ClaimStatus, HallucinationType, VerdictLabel
from guardrail.verifiers.cache import ScoreCache
from guardrail.verifiers.scripted import ScriptedVerifier

PASSAGE = (
    "Orvik Labs was founded in 1994 and has its headquarters in Lyon. "
    "The company employs about 120 people. "
    "Its best-known product is a soil sensor."
)
FILLER = "The board meets monthly and reviews safety, hiring and product quality. " * 3


class Configured(HallucinationConfig):
    """A ``HallucinationConfig`` carrying the ``speed`` section (until the lead adds the field)."""

    speed: SpeedConfig = SpeedConfig()


def config(**speed: Any) -> HallucinationConfig:
    return Configured(
        policy="weakest_link",
        threshold={"enabled": False, "fixed": 0.5},
        logical_consistency=False,
        top_m_windows=2,
        speed=SpeedConfig(**speed),
    )


def evidence(*texts: str, window_tokens: int = 400) -> Evidence:
    ev = Evidence(window_tokens=window_tokens, window_stride=window_tokens)
    for i, text in enumerate(texts):
        ev.windows += make_windows(text, i, window_tokens, window_tokens)
        ev.known_texts.append(text)
    return ev


def run(
    response: str, verifier: ScriptedVerifier, ev: Evidence, cfg: HallucinationConfig, **kw: Any
) -> Any:
    claims = sentence_claims(response, cfg, "en")
    return detect(response, claims, ev, verifier, cfg, retrieval_score=0.8, **kw)


def test_supported_and_contradicted_claims_give_statuses_flags_and_verdict() -> None:
    response = "Orvik Labs employs about 120 people. Its best-known product is a drone."
    verifier = ScriptedVerifier(
        {
            ("employs about 120", "Orvik Labs employs about 120 people."): "entailment",
            (None, "Its best-known product is a drone."): "contradiction",
        }
    )
    result = run(response, verifier, evidence(PASSAGE), config())
    assert [c.status for c in result.claims] == [ClaimStatus.SUPPORTED, ClaimStatus.CONTRADICTED]
    assert result.verdict.label is VerdictLabel.HALLUCINATION
    [flag] = [f for f in result.flags if f.type is HallucinationType.CONTRADICTS_FACT]
    assert response[flag.span.start : flag.span.end].startswith("Its best-known product")
    assert result.claims[0].evidence is not None
    assert "120 people" in result.claims[0].evidence.snippet


def test_all_supported_is_verified() -> None:
    response = "Orvik Labs employs about 120 people."
    verifier = ScriptedVerifier({(None, response): "entailment"})
    result = run(response, verifier, evidence(PASSAGE), config())
    assert result.verdict.label is VerdictLabel.VERIFIED
    assert result.pairs_scored == 1


def test_date_rule_overrides_an_entailing_verifier() -> None:
    # small NLI models often miss a wrong year: the verifier says "entailment"
    response = "Orvik Labs was founded in 1990."
    verifier = ScriptedVerifier({(None, response): "entailment"})
    result = run(response, verifier, evidence(PASSAGE), config())
    [claim] = result.claims
    assert claim.status is ClaimStatus.CONTRADICTED
    assert "1994" in (claim.reason or "")
    temporal = [f for f in result.flags if f.type is HallucinationType.TEMPORAL_ERROR]
    assert temporal and response[temporal[0].span.start : temporal[0].span.end] == "1990"
    assert result.verdict.label is VerdictLabel.HALLUCINATION


def test_date_rule_can_be_switched_off() -> None:
    response = "Orvik Labs was founded in 1990."
    verifier = ScriptedVerifier({(None, response): "entailment"})
    cfg = config().model_copy(update={"date_check": False})
    assert run(response, verifier, evidence(PASSAGE), cfg).claims[0].status is (
        ClaimStatus.SUPPORTED
    )


def test_failed_batch_falls_back_per_claim_and_only_the_broken_claim_is_unverified() -> None:
    response = "Orvik Labs employs about 120 people. Its best-known product is a soil sensor."
    verifier = ScriptedVerifier(
        {(None, "Orvik Labs employs about 120 people."): "entailment"},
        fail_on={"Its best-known product is a soil sensor."},
    )
    result = run(response, verifier, evidence(PASSAGE), config())
    ok, broken = result.claims
    assert ok.status is ClaimStatus.SUPPORTED
    assert broken.status is ClaimStatus.UNVERIFIED
    assert "verifier failed" in (broken.reason or "")
    assert len(verifier.calls) == 3  # the batch, then one call per claim
    assert result.verdict.label is not VerdictLabel.VERIFIED
    assert any("per-claim fallback" in n for n in result.notes)


def test_uncovered_language_and_no_evidence_are_unverified_not_scored() -> None:
    verifier = ScriptedVerifier(languages=("de",))
    result = run("Orvik Labs employs about 120 people.", verifier, evidence(PASSAGE), config())
    assert result.claims[0].status is ClaimStatus.UNVERIFIED
    assert "not covered" in (result.claims[0].reason or "")
    assert verifier.calls == []
    empty = run("Orvik Labs employs about 120 people.", ScriptedVerifier(), Evidence(), config())
    assert empty.claims[0].reason == "no evidence text to check against"


def test_lexical_selection_pairs_the_claim_with_the_window_naming_its_figure() -> None:
    # six one-sentence windows; the claim must be scored against the one with "120"
    texts = [FILLER] * 5 + ["The company employs about 120 people in total."]
    ev = evidence(*texts)
    response = "The company employs about 120 people."
    verifier = ScriptedVerifier({("120 people", response): "entailment"})
    cfg = config(lexical_candidates=3, embed_candidates=False, max_windows_per_claim=1)
    result = run(response, verifier, ev, cfg)
    assert verifier.pairs_scored == 1
    assert result.claims[0].status is ClaimStatus.SUPPORTED
    assert result.claims[0].evidence is not None and result.claims[0].evidence.passage_index == 5


def test_early_exit_skips_the_other_windows_of_a_clearly_entailed_claim() -> None:
    texts = ["The company employs about 120 people.", "About 120 people work for the company."]
    response = "The company employs about 120 people. Its product is a drone."
    script: dict[tuple[str | None, str], Any] = {
        (None, "The company employs about 120 people."): (0.97, 0.02, 0.01)
    }
    verifier = ScriptedVerifier(script)
    cfg = config(embed_candidates=False, early_exit_entailment=0.9)
    result = run(response, verifier, evidence(*texts), cfg)
    assert [len(c) for c in verifier.calls] == [2, 1]  # best window of each claim, then the rest
    assert result.claims[0].status is ClaimStatus.SUPPORTED
    assert result.claims[1].status is ClaimStatus.UNSUPPORTED
    without = ScriptedVerifier(script)
    run(response, without, evidence(*texts), config(early_exit_entailment=None))
    assert [len(c) for c in without.calls] == [4]


def test_score_cache_is_shared_across_calls() -> None:
    response = "Orvik Labs employs about 120 people."
    verifier = ScriptedVerifier({(None, response): "entailment"})
    cache = ScoreCache(100)
    first = run(response, verifier, evidence(PASSAGE), config(), cache=cache)
    second = run(response, verifier, evidence(PASSAGE), config(), cache=cache)
    assert len(verifier.calls) == 1
    assert first.verdict.label is second.verdict.label is VerdictLabel.VERIFIED
    assert second.pairs_scored == 1 and cache.stats()["hits"] == 1


def test_steps_compose_to_detect() -> None:
    response = "Orvik Labs employs about 120 people. Its best-known product is a drone."
    verifier = ScriptedVerifier({(None, "Its best-known product is a drone."): "contradiction"})
    cfg = config()
    claims = sentence_claims(response, cfg, "en")
    scoring = score_claims(claims, evidence(PASSAGE), verifier, cfg)
    assert set(scoring.plan.claim_pairs) == {0, 1} and not scoring.failed
    entailments, unchecked, flags, threshold = judge_claims(
        response, scoring, evidence(PASSAGE), cfg, 0.8
    )
    assert threshold == pytest.approx(0.5)
    assert len(entailments) == 2 and unchecked == []
    assert {f.claim_index for f in flags} == {0, 1}


def test_sentence_first_settles_on_the_sentence_and_otherwise_changes_nothing() -> None:
    response = "The company employs about 120 people. Its best-known product is a drone."
    sentence = "The company employs about 120 people."
    script: dict[tuple[str | None, str], Any] = {
        (sentence, sentence): (0.97, 0.02, 0.01),  # the short premise: the claim's own sentence
        (None, sentence): (0.6, 0.3, 0.1),  # any window: unsure
        # the second claim: its whole window (matched by a fragment only the window holds)
        # is neutral; its short premise alone would look contradicted
        ("Orvik Labs was founded in 1994", "Its best-known product is a drone."): "neutral",
        ("Its best-known product is a soil sensor.", "Its best-known product is a drone."): (
            0.3,
            0.1,
            0.6,
        ),
    }
    ev = evidence(PASSAGE)
    on = ScriptedVerifier(script)
    got = run(response, on, ev, config(embed_candidates=False, early_exit_entailment=0.9))
    assert [len(c) for c in on.calls] == [2, 1]  # both short premises, then claim 2's window
    first, second = got.claims
    assert first.status is ClaimStatus.SUPPORTED and first.scores.entailment == 0.97
    off = ScriptedVerifier(script)
    cfg_off = config(embed_candidates=False, early_exit_entailment=0.9, sentence_first=False)
    want = run(response, off, ev, cfg_off)
    # the unsettled claim is judged on its window alone: the short premise's contradiction is
    # not counted, so it is exactly what it was without sentence_first
    assert second.status is want.claims[1].status is ClaimStatus.UNSUPPORTED
    assert second.scores == want.claims[1].scores
    assert not any(f.type is HallucinationType.CONTRADICTS_FACT for f in got.flags)


def test_a_strong_contradiction_from_the_short_premise_settles_the_claim() -> None:
    response = "The company employs about 120 people. Orvik Labs was founded in 1994 in Graz."
    passage = (
        "Orvik Labs was founded in 1994 and has its headquarters in Lyon. "
        "The company employs about 120 people."
    )
    sentence = "Orvik Labs was founded in 1994 and has its headquarters in Lyon."
    claim = "Orvik Labs was founded in 1994 in Graz."
    script: dict[tuple[str | None, str], Any] = {
        (None, "The company employs about 120 people."): (0.97, 0.02, 0.01),
        (None, claim): (0.2, 0.7, 0.1),  # the whole window (and anything else): unsure
        (sentence, claim): (0.01, 0.03, 0.96),  # exactly the short premise: contradiction
    }
    ev = evidence(passage, FILLER)
    settled = ScriptedVerifier(script)
    cfg = config(embed_candidates=False, early_exit_entailment=0.9, early_exit_contradiction=0.9)
    got = run(response, settled, ev, cfg)
    assert [len(c) for c in settled.calls] == [2]  # no second call: both claims are settled
    assert got.claims[1].status is ClaimStatus.CONTRADICTED
    assert got.claims[1].evidence is not None and got.claims[1].evidence.snippet == sentence
    # below the bar (and without the setting) the claim goes on to its windows as before
    for exit_at in (0.99, None):
        on = ScriptedVerifier(script)
        cfg = config(
            embed_candidates=False, early_exit_entailment=0.9, early_exit_contradiction=exit_at
        )
        again = run(response, on, ev, cfg)
        assert len(on.calls) == 2 and {h for _, h in on.calls[1]} == {claim}
        assert again.claims[1].status is ClaimStatus.UNSUPPORTED


def test_the_contradiction_exit_is_a_probability_or_off() -> None:
    from guardrail.config import GuardrailConfig
    from guardrail.errors import ConfigError

    assert GuardrailConfig().hallucination.speed.early_exit_contradiction == 0.95
    off = {"hallucination": {"speed": {"early_exit_contradiction": None}}}
    assert GuardrailConfig.load(off).hallucination.speed.early_exit_contradiction is None
    with pytest.raises(ConfigError):
        GuardrailConfig.load({"hallucination": {"speed": {"early_exit_contradiction": 1.5}}})
