"""Value comparison rules of fact validation: exact, normalised by kind, edit distance."""

from __future__ import annotations

import pytest

from guardrail.facts.validator import factual_score
from guardrail.report import FactualStats
from guardrail.text.values import MatchRule, ValueKind, compare_values, parse_date, value_kind


@pytest.mark.parametrize(
    ("claimed", "reference"),
    [
        ("Engineering", "engineering"),
        ("  2020 ", "2020"),
        ("JOHN.SMITH@COMPANY.COM", "john.smith@company.com"),
    ],
)
def test_exact_ignores_case_and_whitespace(claimed: str, reference: str) -> None:
    result = compare_values(claimed, reference)
    assert result.matches and result.rule is MatchRule.EXACT


@pytest.mark.parametrize(
    ("claimed", "reference", "kind"),
    [
        ("mailto:John.Smith@company.com", "john.smith@company.com", ValueKind.EMAIL),
        ("https://www.example.com/", "example.com", ValueKind.URL),
        ("555-123-4567", "+1 (555) 123 4567", ValueKind.PHONE),
        ("March 2018", "2018-03-01", ValueKind.DATE),
        ("1st March 2018", "2018-03-01", ValueKind.DATE),
        ("2020", "2020-05-02", ValueKind.DATE),
        ("85k", "85,000", ValueKind.NUMBER),
        ("$5m", "5,000,000 USD", ValueKind.NUMBER),
        ("5 km", "5000 m", ValueKind.NUMBER),
        ("3 hours", "180 minutes", ValueKind.NUMBER),
        ("twenty", "20", ValueKind.NUMBER),
        ("the Engineering department", "Engineering", ValueKind.TEXT),
    ],
)
def test_normalised_matches(claimed: str, reference: str, kind: ValueKind) -> None:
    result = compare_values(claimed, reference)
    assert result.matches, result
    assert result.rule is MatchRule.NORMALISED
    assert result.kind is kind


@pytest.mark.parametrize(
    ("claimed", "reference"),
    [
        ("john.s@company.org", "john.smith@company.com"),
        ("2019", "2020"),
        ("April 2018", "2018-03-01"),
        ("555-123-4568", "+1 555 123 4567"),
        ("86,000", "85,000"),
        ("5 km", "5 kg"),
        ("Marketing", "Engineering"),
    ],
)
def test_different_values(claimed: str, reference: str) -> None:
    result = compare_values(claimed, reference)
    assert not result.matches and result.rule is MatchRule.DIFFERENT


def test_edit_distance_applies_to_text_below_the_ratio() -> None:
    close = compare_values("Enginering", "Engineering", edit_distance_ratio=0.1)
    assert close.matches and close.rule is MatchRule.EDIT_DISTANCE
    assert close.distance is not None and close.distance < 0.1
    # the same pair with a stricter ratio is different
    assert not compare_values("Enginering", "Engineering", edit_distance_ratio=0.05).matches


def test_structured_values_never_match_fuzzily() -> None:
    # one character apart, but a different address
    result = compare_values("john.smith@company.con", "john.smith@company.com")
    assert not result.matches and result.kind is ValueKind.EMAIL


def test_value_kinds_and_dates() -> None:
    assert value_kind("a@b.co") is ValueKind.EMAIL
    assert value_kind("2020") is ValueKind.DATE
    assert value_kind("Finance") is ValueKind.TEXT
    assert parse_date("March 1, 2018") == (2018, 3, 1)
    assert parse_date("Marchy 2018") is None


def test_factual_score_definition() -> None:
    assert factual_score(FactualStats(), 0) == 1.0  # nothing to check
    assert factual_score(FactualStats(total=3, contradicted=3), 0) == 0.0
    assert factual_score(FactualStats(total=2, verified=2), 0) == 1.0
    assert factual_score(FactualStats(total=2, unverifiable=2), 0) == 0.5
    # one verified, one contradicted: (1) / (1 + 2) — a contradiction weighs double
    assert factual_score(FactualStats(total=2, verified=1, contradicted=1), 0) == pytest.approx(
        1 / 3, abs=1e-4
    )
    # a history-only conflict counts like a contradiction
    assert factual_score(
        FactualStats(total=2, verified=1, history_conflicts=1), 1
    ) == pytest.approx(1 / 3, abs=1e-4)
