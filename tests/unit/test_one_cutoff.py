"""One cut-off function, one confidence ladder, no writes into a frozen model.

Which threshold and which ``remove_below`` a claim is held to is answered by
:func:`guardrail.thresholds.claim_cutoffs` alone: no other module reads the config's cut-off
keys (``hallucination.claim_threshold``, ``decision.remove_below``, T(rs)) or loads the
configured calibration file itself. The ladder lives once, on ``GuardrailConfig``; no code
writes into a model's ``__dict__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from guardrail.config import (
    ConfidenceLadder,
    DecisionConfig,
    GuardrailConfig,
    HallucinationConfig,
)
from guardrail.hallucination.calibration_registry import configured_calibration
from guardrail.thresholds import ClaimCutoffs, claim_cutoffs

PACKAGE = Path(__file__).resolve().parents[2] / "guardrail"
HOME = PACKAGE / "thresholds.py"
"""The one module that chooses a claim's cut-offs."""
CONFIG = ("config.py", "config")
"""Where the keys are defined (a module or a package)."""


def library_modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if p != HOME and p.relative_to(PACKAGE).parts[0] not in CONFIG
    )


def _chain(node: ast.expr) -> list[str]:
    """``a.b.c`` as ``["a", "b", "c"]`` (the names of an attribute chain, outermost last)."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


def cutoff_reads(source: str) -> list[str]:
    """Where ``source`` chooses a cut-off itself: reads ``claim_threshold`` or
    ``decision.remove_below``, calls T(rs) (``threshold.threshold(...)``), or loads the
    configured calibration (``ClaimCalibrator.load(<x>.calibration)``)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            chain = _chain(node)
            if chain[-1:] == ["claim_threshold"] or chain[-2:] == ["decision", "remove_below"]:
                found.append(f"line {node.lineno}: {'.'.join(chain)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            chain = _chain(node.func)
            if chain[-2:] == ["threshold", "threshold"]:
                found.append(f"line {node.lineno}: T(rs) {'.'.join(chain)}(...)")
            if chain[-2:] == ["ClaimCalibrator", "load"] and any(
                isinstance(a, ast.Attribute) and a.attr == "calibration" for a in node.args
            ):
                found.append(f"line {node.lineno}: loads the configured calibration")
    return found


def dict_writes(source: str) -> list[str]:
    """Where ``source`` writes into an object's ``__dict__`` or around ``__setattr__``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            if _chain(node.value)[-1:] == ["__dict__"]:
                found.append(f"line {node.lineno}: __dict__[...] =")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            chain = _chain(node.func)
            if chain[-2:] in (["__dict__", "update"], ["object", "__setattr__"]):
                found.append(f"line {node.lineno}: {'.'.join(chain)}(...)")
    return found


@pytest.mark.parametrize("path", library_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_cutoff_function_chooses_a_cutoff(path: Path) -> None:
    wrong = cutoff_reads(path.read_text(encoding="utf-8"))
    assert not wrong, f"{path.relative_to(PACKAGE)} chooses a cut-off itself: {wrong}"


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_code_writes_into_a_models_dict(path: Path) -> None:
    wrong = dict_writes(path.read_text(encoding="utf-8"))
    assert not wrong, f"{path.relative_to(PACKAGE)} writes into a model: {wrong}"


def test_the_walks_catch_what_they_look_for() -> None:
    source = (
        "a = config.hallucination.claim_threshold\n"
        "b = cfg.decision.remove_below\n"
        "c = cfg.threshold.threshold(rs)\n"
        "d = ClaimCalibrator.load(cfg.calibration)\n"
        "e = choice.remove_below\n"  # a calibration's own value: not a choice
    )
    assert [w.split(":")[0] for w in cutoff_reads(source)] == [
        "line 1",
        "line 2",
        "line 3",
        "line 4",
    ]
    assert len(dict_writes("m.__dict__['x'] = 1\nobject.__setattr__(m, 'x', 1)\n")) == 2
    assert dict_writes("x = vars(m)\n") == []


def test_the_ladder_lives_only_on_the_guardrail_config() -> None:
    from guardrail import config as module

    holders = [
        name
        for name, cls in vars(module).items()
        if isinstance(cls, type)
        and hasattr(cls, "model_fields")
        and cls is not GuardrailConfig
        and any(f.annotation is ConfidenceLadder for f in cls.model_fields.values())
    ]
    assert holders == []


def test_the_cutoffs_follow_the_policy_the_override_and_the_calibration() -> None:
    shipped = configured_calibration(None)
    own = ClaimCutoffs(0.6, 0.2)
    calibrated = HallucinationConfig()
    assert claim_cutoffs(own, calibrated) == ClaimCutoffs(0.6, 0.2)
    assert claim_cutoffs(own, HallucinationConfig(claim_threshold=0.7)).threshold == 0.7
    assert claim_cutoffs(own, calibrated, decision=DecisionConfig(remove_below=0.1)) == (
        ClaimCutoffs(0.6, 0.1)
    )
    rs = HallucinationConfig(policy="weakest_link")
    assert claim_cutoffs(own, rs, 0.95).threshold == rs.threshold.threshold(0.95)
    # no calibration: the configured one (the shipped file by default)
    assert claim_cutoffs(None, calibrated) == ClaimCutoffs(shipped.threshold, shipped.remove_below)


def test_a_configured_directory_without_a_verifier_is_uncalibrated(tmp_path: Path) -> None:
    choice = configured_calibration(str(tmp_path))
    assert choice.calibrator is None and choice.remove_below is None
    cut = claim_cutoffs(None, HallucinationConfig(calibration=str(tmp_path)))
    assert cut.remove_below is None


def test_a_config_ladder_reaches_the_decision() -> None:
    from guardrail.decision import find_problems
    from guardrail.report import HallucinationFlag, HallucinationType, Span

    flag = HallucinationFlag(
        type=HallucinationType.FABRICATED_FACT,
        span=Span(start=0, end=4),
        content="text",
        confidence=0.7,
        severity=0.9,
        explanation="x",
    )
    config = GuardrailConfig.load({"confidence": {"noted": 0.4, "named": 0.6, "blocking": 0.65}})
    lenient = find_problems([], [flag], None, None, config.decision, None, config.confidence)
    strict = find_problems([], [flag], None, None, config.decision, None)  # default ladder
    assert [p.kind for p in lenient] == ["fabricated_fact"] and strict == []
