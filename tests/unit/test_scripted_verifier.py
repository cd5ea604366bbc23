"""The ``ScriptedVerifier`` test double: the verifier contract, and scripts that say what they mean."""

from __future__ import annotations

import pytest

from guardrail.errors import VerifierError
from guardrail.verifiers import NLIPrediction, Verifier
from guardrail.verifiers.scripted import LABEL_SCORES, ScriptedVerifier
from tests.verifier_conformance import VerifierConformance


class TestScriptedConformance(VerifierConformance):
    @pytest.fixture
    def verifier(self) -> Verifier:
        return ScriptedVerifier({(None, "A man is playing an instrument."): "entailment"})


def test_exact_premise_beats_fragment_and_fragment_beats_default() -> None:
    v = ScriptedVerifier(
        {
            ("Lyon", "It is in Lyon."): (0.7, 0.2, 0.1),
            ("The office is in Lyon.", "It is in Lyon."): "entailment",
        },
        default="contradiction",
    )
    exact, fragment, other = v.predict(
        [
            ("The office is in Lyon.", "It is in Lyon."),
            ("They moved to Lyon last year.", "It is in Lyon."),
            ("They moved to Graz.", "It is in Lyon."),
        ]
    )
    assert exact.entailment == pytest.approx(LABEL_SCORES["entailment"][0])
    assert fragment.entailment == pytest.approx(0.7)
    assert other.label == "contradiction"


def test_scores_are_normalised_predictions() -> None:
    [p] = ScriptedVerifier({(None, "h"): (2.0, 1.0, 1.0)}).predict([("p", "h")])
    assert isinstance(p, NLIPrediction)
    assert (p.entailment, p.neutral, p.contradiction) == pytest.approx((0.5, 0.25, 0.25))


def test_fail_on_raises_for_the_whole_call_and_records_it() -> None:
    v = ScriptedVerifier(fail_on={"bad claim"})
    with pytest.raises(VerifierError, match="bad claim"):
        v.predict([("p", "good claim"), ("p", "bad claim")])
    assert v.predict([("p", "good claim")])[0].label == "neutral"
    assert [len(c) for c in v.calls] == [2, 1] and v.pairs_scored == 3


def test_bad_script_is_a_typed_error() -> None:
    with pytest.raises(VerifierError, match="unknown label"):
        ScriptedVerifier({(None, "h"): "entails"})
    with pytest.raises(VerifierError, match="bad scripted scores"):
        ScriptedVerifier({(None, "h"): (1.0, 0.0)})  # type: ignore[dict-item]


def test_languages_and_limits_are_reported() -> None:
    v = ScriptedVerifier(languages=("en", "de"), max_tokens=160, name="s")
    assert v.covers("de") and not v.covers("fr") and not v.covers(None)
    assert (v.max_tokens, v.name) == (160, "s")
