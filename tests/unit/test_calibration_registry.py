"""Calibration follows the verifier: keyed files, the uncalibrated fallback, calibrate-claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardrail import Guardrail
from guardrail.config import GuardrailConfig
from guardrail.evaluation.claim_calibration import (
    choose_remove_below,
    choose_threshold,
    fit_claims,
    read_rows,
    score_rows,
)
from guardrail.hallucination.calibration import ClaimCalibrator
from guardrail.hallucination.calibration_registry import calibration_for
from guardrail.verifiers.scripted import ScriptedVerifier

EVIDENCE = "The museum opened in 1998 in Lyon. It holds 4,000 paintings."
SUPPORTED = "The museum opened in 1998."
INVENTED = "The museum holds 9,000 sculptures."


def _verifier(name: str = "other-model", calibration_id: str | None = None) -> ScriptedVerifier:
    return ScriptedVerifier(
        {(None, SUPPORTED): (0.8, 0.15, 0.05), (None, INVENTED): (0.3, 0.6, 0.1)},
        name=name,
        calibration_id=calibration_id,
    )


def _write(path: Path, verifier_id: str, threshold: float = 0.6) -> Path:
    cal = ClaimCalibrator(
        {"logit_entail": 1.0}, 0.0, threshold, {"verifier_id": verifier_id}, remove_below=0.2
    )
    path.write_text(json.dumps(cal.to_json()), encoding="utf-8")
    return path


def test_the_shipped_calibration_is_for_the_bundled_model_only() -> None:
    shipped = calibration_for(_verifier("scripted", calibration_id="shipped"))
    assert shipped.calibrator is ClaimCalibrator.load()
    assert shipped.label == "calibration calibration.json"
    other = calibration_for(_verifier())
    assert other.calibrator is None and other.threshold == 0.5
    assert other.label == "uncalibrated (threshold 0.5)" and other.remove_below is None


def test_a_directory_of_calibrations_is_keyed_by_verifier(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", "model-a")
    _write(tmp_path / "b.json", "other-model", threshold=0.55)
    choice = calibration_for(_verifier(), str(tmp_path))
    assert choice.label == "calibration b.json" and choice.threshold == 0.55
    assert choice.remove_below == 0.2
    assert calibration_for(_verifier("unknown"), str(tmp_path)).calibrator is None


def test_uncalibrated_verifier_uses_its_own_probability_at_one_half() -> None:
    report = Guardrail(GuardrailConfig(), verifier=_verifier()).invoke(
        {"response": f"{SUPPORTED} {INVENTED}", "passages": [EVIDENCE]}
    )
    assert "uncalibrated (threshold 0.5)" in (report.verdict.method or "")
    by_text = {c.text: c for c in report.claims}
    assert by_text[SUPPORTED].p_supported == pytest.approx(0.8, abs=1e-4)
    assert by_text[SUPPORTED].status.value == "supported"
    assert by_text[INVENTED].p_supported == pytest.approx(0.3, abs=1e-4)
    assert by_text[INVENTED].status.value != "supported"


def test_threshold_and_removal_rules() -> None:
    p = [0.1, 0.15, 0.2, 0.3, 0.35, 0.6, 0.7, 0.8, 0.9, 0.95]
    gold = [False, False, False, False, False, True, True, True, True, True]
    t = choose_threshold(p, gold)
    assert t == 0.5  # every value in (0.35, 0.6] separates them: the one nearest 0.5
    assert choose_remove_below(p, gold, t) == pytest.approx(0.5)
    assert choose_remove_below(p, [not g for g in gold], t) is None


def test_fit_claims_from_rows(tmp_path: Path) -> None:
    lines = []
    for k in range(24):
        claim = SUPPORTED if k % 2 else INVENTED
        lines.append({"evidence": [EVIDENCE], "claim": claim, "label": k % 2, "group": f"g{k}"})
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in lines), encoding="utf-8")
    rows = read_rows(data)
    scored = score_rows(rows, _verifier())
    assert len(scored) == 24 and {s.own_p for s in scored} == {0.8, 0.3}
    cal, report = fit_claims(scored, "other-model", holdout=0.3, source="rows.jsonl")
    assert cal.meta["verifier_id"] == "other-model"
    assert report["fit_claims"] + report["heldout_claims"] == 24
    assert report["after"]["balanced_accuracy"] == 1.0
    assert calibration_for(_verifier(), None).calibrator is None  # not applied until configured
    path = tmp_path / "cal" / "other.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cal.to_json()), encoding="utf-8")
    assert calibration_for(_verifier(), str(path.parent)).calibrator == cal


def test_the_v4_checkpoint_has_its_own_shipped_calibration() -> None:
    choice = calibration_for(_verifier("guardrail-nli-v4"))
    assert choice.label == "calibration guardrail-nli-v4.json"
    assert choice.calibrator is not None
    assert choice.calibrator.meta["verifier_id"] == "guardrail-nli-v4"
    assert "DEV parts" in choice.calibrator.meta["fitted_on"]


def test_a_configured_directory_of_calibrations_serves_a_whole_check(tmp_path: Path) -> None:
    _write(tmp_path / "b.json", "other-model", threshold=0.55)
    config = GuardrailConfig(hallucination={"calibration": str(tmp_path)})
    report = Guardrail(config, verifier=_verifier()).invoke(
        {"response": f"{SUPPORTED} {INVENTED}", "passages": [EVIDENCE]}
    )
    assert "calibration b.json" in (report.verdict.method or "")
    assert report.recommendation is not None
