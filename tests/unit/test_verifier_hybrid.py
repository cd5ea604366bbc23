"""Hybrid verification with fallback and ``--verifier`` on the command line."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from guardrail.cli import main
from guardrail.errors import ModelLoadError, VerifierError
from guardrail.verifiers import NLIPrediction, Pair, Verifier, load_verifier
from guardrail.verifiers.hybrid import HybridVerifier, usage_of
from tests import tiny_presets as tiny

pytest.importorskip("transformers")


class Fixed(Verifier):
    """Answers every pair with one prediction (or raises)."""

    def __init__(self, name: str, e: float, n: float, c: float, fail: bool = False) -> None:
        self.name, self.p, self.fail = (
            name,
            NLIPrediction(entailment=e, neutral=n, contradiction=c),
            fail,
        )

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        if self.fail:
            raise VerifierError(f"{self.name} is down")
        return [self.p for _ in pairs]


PAIRS = [("Paris is the capital of France.", "Paris is the capital.")] * 3


def test_mean_rule_and_members_named() -> None:
    v = HybridVerifier([Fixed("a", 0.9, 0.1, 0.0), Fixed("b", 0.5, 0.2, 0.3)])
    preds = v.predict(PAIRS)
    [p, *_], usage = preds, usage_of(preds)
    assert (p.entailment, p.neutral, p.contradiction) == pytest.approx((0.7, 0.15, 0.15))
    assert usage.decided == ["a", "b"] and usage.describe() == "decided by a, b"


def test_a_member_that_raises_is_dropped_for_the_call() -> None:
    v = HybridVerifier([Fixed("hhem", 0.0, 1.0, 0.0, fail=True), Fixed("bundled", 0.8, 0.1, 0.1)])
    preds = v.predict(PAIRS)
    [p, *_], usage = preds, usage_of(preds)
    assert p.entailment == pytest.approx(0.8)
    assert usage.decided == ["bundled"]
    assert "hhem dropped (failed: VerifierError)" in (usage.describe() or "")


def test_all_members_failing_is_fail_closed() -> None:
    v = HybridVerifier([Fixed("a", 1, 0, 0, fail=True), Fixed("b", 1, 0, 0, fail=True)])
    with pytest.raises(VerifierError):
        v.predict(PAIRS)
    with pytest.raises(ModelLoadError, match="lytang/MiniCheck-RoBERTa-Large"):
        load_verifier([{"preset": "minicheck-roberta-l", "path": "/nonexistent/x"}])


def test_the_command_line_form_is_the_config_form() -> None:
    from guardrail.verifiers.spec import HubSpec, HybridSpec, InvalidSpec, PresetSpec, parse_spec

    assert parse_spec("hhem-2.1-open") == PresetSpec("hhem-2.1-open")
    assert parse_spec("a/b,hhem-2.1-open=./m") == HybridSpec(
        (HubSpec("a/b"), PresetSpec("hhem-2.1-open", "./m"))
    )
    assert parse_spec("hhem-2.1-open=./m,") == PresetSpec("hhem-2.1-open", "./m")
    [bad] = parse_spec(["nope=./m"]).members  # type: ignore[union-attr]
    assert isinstance(bad, InvalidSpec) and "unknown verifier preset 'nope'" in str(bad.error)


@pytest.fixture(scope="module")
def hhem_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny.build_hhem(tmp_path_factory.mktemp("hhem") / "m")


def _check(*extra: str) -> tuple[int, dict, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(
            [
                "check",
                "-r",
                "Paris is the capital of France. It has 90 million people.",
                "-p",
                "Paris is the capital of France.",
                "--format",
                "json",
                *extra,
            ]
        )
    return rc, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def test_check_with_a_preset_and_a_degraded_hybrid(hhem_dir: Path, tmp_path: Path) -> None:
    rc, report, _ = _check("--verifier", f"hhem-2.1-open={hhem_dir}")
    assert rc == 0 and report["verdict"]["method"].startswith("hhem-2.1-open;")
    missing = tmp_path / "absent"
    rc, report, _ = _check("--verifier", f"minicheck-roberta-l={missing},hhem-2.1-open={hhem_dir}")
    method = report["verdict"]["method"]
    assert rc == 0
    assert "decided by hhem-2.1-open" in method
    assert "minicheck-roberta-l dropped (not loaded: ModelLoadError)" in method


def test_check_with_a_missing_model_is_exit_2_and_one_line(tmp_path: Path) -> None:
    rc, report, err = _check("--verifier", f"minicheck-deberta-l={tmp_path / 'none'}")
    assert rc == 2 and report == {}
    lines = [line for line in err.splitlines() if line.startswith("guardrail: error:")]
    assert len(lines) == 1 and "lytang/MiniCheck-DeBERTa-v3-Large" in lines[0]
    assert "Traceback" not in err


def test_verifiers_command_lists_presets() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["verifiers", "--format", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(out.getvalue())}
    assert rows["minicheck-flan-t5-l"]["hub_id"] == "lytang/MiniCheck-Flan-T5-Large"
    assert rows["factcg-deberta-l"]["published_bacc"] == 75.6


def test_readme_and_docs_show_the_presets_table_of_the_registry() -> None:
    from guardrail.cli.verifiers import render_markdown, rows

    root = Path(__file__).resolve().parents[2]
    table = render_markdown(rows())
    for page in (root / "README.md", root / "docs" / "how-to" / "verifier.md"):
        assert table in page.read_text(encoding="utf-8"), f"{page.name}: regenerate the table"


EVIDENCE = "The museum opened in 1998 in Lyon. It holds 4,000 paintings."
CLAIM = "The museum holds 9,000 sculptures."


def _calibration(folder: Path, verifier_id: str, weight: float, threshold: float) -> None:
    from guardrail.hallucination.calibration import ClaimCalibrator

    cal = ClaimCalibrator(
        {"logit_entail": weight}, 0.0, threshold, {"verifier_id": verifier_id}, remove_below=0.2
    )
    (folder / f"{verifier_id}.json").write_text(json.dumps(cal.to_json()), encoding="utf-8")


def _hybrid_claim(members: list[Verifier], folder: Path) -> tuple[float, str]:
    from guardrail import Guardrail
    from guardrail.config import GuardrailConfig

    config = GuardrailConfig(hallucination={"calibration": str(folder)})
    report = Guardrail(config, verifier=HybridVerifier(members)).invoke(
        {"response": CLAIM, "passages": [EVIDENCE]}
    )
    [claim] = report.claims
    assert claim.p_supported is not None
    return claim.p_supported, report.verdict.method or ""


def test_members_with_calibrations_combine_their_calibrated_probabilities(
    tmp_path: Path,
) -> None:
    _calibration(tmp_path, "a", 1.0, 0.5)  # p = its entailment
    _calibration(tmp_path, "b", 2.0, 0.6)  # p = 0.4² / (0.4² + 0.6²) for entailment 0.4
    members: list[Verifier] = [Fixed("a", 0.8, 0.1, 0.1), Fixed("b", 0.4, 0.5, 0.1)]
    p, method = _hybrid_claim(members, tmp_path)
    assert p == pytest.approx((0.8 + 0.16 / 0.52) / 2, abs=1e-4)
    assert "calibrated combination (mean p_supported of a: calibration a.json, " in method
    assert "b: calibration b.json)" in method and "decided by a, b" in method


def test_a_member_without_calibration_means_the_mean_rule(tmp_path: Path) -> None:
    _calibration(tmp_path, "a", 1.0, 0.5)
    members: list[Verifier] = [Fixed("a", 0.8, 0.1, 0.1), Fixed("b", 0.4, 0.5, 0.1)]
    p, method = _hybrid_claim(members, tmp_path)
    assert p == pytest.approx(0.6, abs=1e-4)  # the mean supported-probability, uncalibrated
    assert "mean of supported-probabilities; uncalibrated (threshold 0.5)" in method
    assert "calibrated combination" not in method


def test_a_failing_member_is_dropped_from_the_combination(tmp_path: Path) -> None:
    _calibration(tmp_path, "a", 1.0, 0.5)
    members: list[Verifier] = [Fixed("a", 0.8, 0.1, 0.1), Fixed("b", 0.4, 0.5, 0.1, fail=True)]
    p, method = _hybrid_claim(members, tmp_path)  # b has no calibration, but b did not answer
    assert p == pytest.approx(0.8, abs=1e-4)
    assert "calibrated combination (mean p_supported of a: calibration a.json)" in method
    assert "b dropped (failed: VerifierError)" in method


def test_hybrid_predictions_carry_each_answering_member() -> None:
    from guardrail.verifiers.hybrid import HybridPrediction, answered_members

    v = HybridVerifier([Fixed("a", 0.9, 0.1, 0.0), Fixed("b", 0.5, 0.2, 0.3, fail=True)])
    preds = v.predict(PAIRS)
    assert all(isinstance(p, HybridPrediction) for p in preds)
    assert answered_members(preds) == ["a"] and preds[0].members["a"].entailment == 0.9
    assert "members" not in preds[0].model_dump()
    assert answered_members([*preds, NLIPrediction(entailment=1, neutral=0, contradiction=0)]) == []


def test_which_members_answered_travels_with_the_predictions() -> None:
    """One channel: a cached prediction, or one made on another thread, still names who
    answered and who was dropped."""
    from concurrent.futures import ThreadPoolExecutor

    v = HybridVerifier(
        [Fixed("a", 0.9, 0.1, 0.0), Fixed("b", 0.5, 0.2, 0.3, fail=True)],
        load_failures={"c": "not loaded: ModelLoadError"},
    )
    with ThreadPoolExecutor(2) as pool:
        preds = pool.submit(v.predict, PAIRS).result()
    usage = usage_of(preds)
    assert usage.decided == ["a"]
    assert usage.dropped == {"c": "not loaded: ModelLoadError", "b": "failed: VerifierError"}
    assert "dropped" not in preds[0].model_dump()
    assert usage_of([NLIPrediction(entailment=1, neutral=0, contradiction=0)]).describe() is None
