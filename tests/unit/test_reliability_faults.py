"""Fault injection: failing parts end in the documented failure policy, and the same
``Guardrail`` then serves the next good call exactly as a healthy one does.

The faulty verifier wraps the ``ScriptedVerifier`` test double and can be switched between a
fault and healthy behaviour; the embedder fault is an object whose ``encode`` raises; spaCy
"missing" is ``guardrail.nlp.load_spacy`` raising ``MissingDependencyError`` (what it does
when the package is absent). Knowledge bases and the report store are real files.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from guardrail import Backends, Guardrail, GuardReport
from guardrail.errors import GuardrailError, MissingDependencyError
from guardrail.verifiers.base import NLIPrediction, Verifier
from guardrail.verifiers.scripted import ScriptedVerifier
from tests.reliability_strategies import guard_with, shared_backends, violations

GOOD = {
    "query": "When was Orvik founded?",
    "response": "Orvik was founded in 1990. It has 900 staff.",
    "passages": [{"text": "Orvik was founded in 1990 in Lyon. It has 900 staff.", "score": 0.8}],
}
DELIVERED = ("accept", "accept_with_flags", "correct_and_deliver")


def nan_prediction() -> NLIPrediction:
    """NaN scores, which ``NLIPrediction`` accepts as they are (its label is then
    ``entailment``)."""
    return NLIPrediction(entailment=math.nan, neutral=math.nan, contradiction=math.nan)


FAULTS: dict[str, Any] = {
    "raises": lambda pairs: (_ for _ in ()).throw(RuntimeError("CUDA out of memory")),
    "nan": lambda pairs: [nan_prediction() for _ in pairs],
    "too_few": lambda pairs: [NLIPrediction(entailment=1, neutral=0, contradiction=0)][
        : len(pairs) - 1
    ],
    "too_many": lambda pairs: (
        [NLIPrediction(entailment=1, neutral=0, contradiction=0)] * (len(pairs) + 2)
    ),
    "malformed": lambda pairs: [(0.9, 0.05, 0.05) for _ in pairs],
    "none": lambda pairs: None,
}


class FaultyVerifier(Verifier):
    """A ``ScriptedVerifier`` (entailment for every pair) until ``fault`` is set."""

    name = "faulty"

    def __init__(self) -> None:
        self.inner = ScriptedVerifier(default="entailment")
        self.fault: str | None = None
        self.sleep = 0.0

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIPrediction]:
        if self.sleep:
            time.sleep(self.sleep)
        if self.fault is not None:
            return FAULTS[self.fault](list(pairs))  # type: ignore[no-any-return]
        return self.inner.predict(pairs)


def healthy() -> GuardReport:
    report: GuardReport = guard_with().invoke(GOOD)
    return report


def same(a: GuardReport, b: GuardReport) -> None:
    assert a.action == b.action and a.verdict.label == b.verdict.label
    assert [c.status for c in a.claims] == [c.status for c in b.claims]
    assert a.confidence == pytest.approx(b.confidence, abs=1e-3)


@pytest.fixture(scope="module", autouse=True)
def _models_loaded() -> None:
    shared_backends()


def test_the_healthy_baseline_delivers() -> None:
    report = healthy()
    assert report.action.value in DELIVERED and violations(report, GOOD) == []


@pytest.mark.parametrize("fault", ["raises", "too_few", "too_many", "none"])
def test_a_broken_verifier_is_never_delivered_and_the_guard_recovers(fault: str) -> None:
    verifier = FaultyVerifier()
    guard = guard_with(verifier)
    verifier.fault = fault
    report = guard.invoke(GOOD)
    assert report.action.value not in DELIVERED, report.decision.gate
    assert report.verdict.label.value.lower() == "unverified"
    assert "verifier" in report.model_dump_json().lower()  # the reason is recorded
    assert violations(report, GOOD) == []
    verifier.fault = None
    same(guard.invoke(GOOD), healthy())


def finite_scores(report: GuardReport) -> bool:
    return all(
        math.isfinite(x)
        for c in report.claims
        if c.scores is not None
        for x in (c.scores.entailment, c.scores.neutral, c.scores.contradiction)
    )


def test_malformed_scores_fail_closed() -> None:
    verifier = FaultyVerifier()
    verifier.fault = "malformed"
    report = guard_with(verifier).invoke(GOOD)
    assert report.action.value not in DELIVERED
    reasons = [s.reason or "" for s in report.stages if s.status.value == "failed"]
    reasons += [c.reason or "" for c in report.claims]
    assert any("entailment" in r for r in reasons), reasons


def test_nan_scores_are_never_delivered() -> None:
    verifier = FaultyVerifier()
    verifier.fault = "nan"
    try:
        report = guard_with(verifier).invoke(GOOD)
    except GuardrailError:
        return
    assert report.action.value not in DELIVERED, (report.decision.gate, report.verdict)
    assert finite_scores(report)


@pytest.mark.parametrize("fault", ["nan", "malformed"])
def test_the_guard_recovers_after_malformed_scores(fault: str) -> None:
    verifier = FaultyVerifier()
    guard = guard_with(verifier)
    verifier.fault = fault
    try:
        guard.invoke(GOOD)
    except GuardrailError:
        pass
    verifier.fault = None
    recovered = guard.invoke(GOOD)
    assert finite_scores(recovered) and not any(
        s.status.value == "failed" for s in recovered.stages
    )
    same(recovered, healthy())


def test_a_slow_verifier_gives_the_same_result() -> None:
    verifier = FaultyVerifier()
    verifier.sleep = 0.3
    same(guard_with(verifier).invoke(GOOD), healthy())


class BrokenEmbedder:
    def __init__(self) -> None:
        self.broken = True
        self.inner = shared_backends()[1]

    def encode(self, *args: Any, **kwargs: Any) -> Any:
        if self.broken:
            raise OSError("embedding model files are missing")
        return self.inner.encode(*args, **kwargs)


@pytest.mark.injects_fault("the embedder raises OSError (files missing)")
def test_a_missing_embedder_fails_closed_with_the_reason_and_recovers() -> None:
    embedder = BrokenEmbedder()
    guard = guard_with(embedder=embedder)
    data = {**GOOD, "passages": [GOOD["passages"][0]["text"]]}  # no score: embedder needed
    report = guard.invoke(data)  # a stage that cannot load its model fails; invoke does not
    failed = [s for s in report.stages if s.status.value == "failed"]
    assert failed, "the missing embedder was not reported"
    assert any("embedding model files are missing" in (s.reason or "") for s in failed)
    assert report.action.value == "human_review" and report.delivered_text is None
    assert "could not check" in report.recommendation.reason.lower()  # type: ignore[union-attr]
    assert violations(report, data) == []
    embedder.broken = False
    same(guard.invoke(data), guard_with().invoke(data))


def test_missing_spacy_is_a_reason_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    import guardrail.nlp

    def no_spacy(*args: Any, **kwargs: Any) -> Any:
        raise MissingDependencyError("spacy", "nlp")

    monkeypatch.setattr(guardrail.nlp, "load_spacy", no_spacy)
    _, embedder = shared_backends()
    guard = Guardrail(
        backends=Backends(verifier=ScriptedVerifier(default="entailment"), embedder=embedder)
    )
    try:
        report = guard.invoke(GOOD)
    except GuardrailError as exc:
        assert "spacy" in str(exc)
        return
    assert violations(report, GOOD) == []
    failed = [s for s in report.stages if s.status.value == "failed"]
    if failed:
        assert report.action.value not in DELIVERED
        assert any("spacy" in (s.reason or "") for s in failed)


KB = {
    "entities": [
        {"name": "Orvik", "attributes": {"founded": "1990", "staff": "900", "city": "Lyon"}}
    ]
}


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe\x00garbage", b'{"entities": 5}', b"", b"SQLite format 3\x00xx"],
)
def test_a_corrupt_kb_file_is_a_typed_error_and_the_guard_recovers(
    tmp_path: Path, content: bytes
) -> None:
    guard = guard_with()
    bad = tmp_path / "kb.json"
    bad.write_bytes(content)
    with pytest.raises(GuardrailError):
        guard.invoke({**GOOD, "knowledge_base": str(bad)})
    good = tmp_path / "good.json"
    good.write_text(json.dumps(KB), encoding="utf-8")
    report = guard.invoke({**GOOD, "knowledge_base": str(good)})
    assert violations(report, GOOD) == []


def test_a_sqlite_kb_deleted_mid_run_is_a_typed_error_or_a_reason(tmp_path: Path) -> None:
    from guardrail.knowledge import SQLiteKnowledgeBase, entities_from_data

    path = tmp_path / "kb.sqlite"
    SQLiteKnowledgeBase(path, create=True).import_entities(entities_from_data(KB))
    guard = guard_with()
    first = guard.invoke({**GOOD, "knowledge_base": str(path)})
    assert violations(first, GOOD) == []
    path.unlink()
    try:
        report = guard.invoke({**GOOD, "knowledge_base": str(path)})
    except GuardrailError:
        pass
    else:
        assert violations(report, GOOD) == []
    same(guard.invoke(GOOD), healthy())


def test_a_locked_report_store_is_a_typed_store_error(tmp_path: Path) -> None:
    from guardrail.inputs import coerce_input
    from guardrail.store import ReportStore

    store = ReportStore(tmp_path / "results.sqlite", timeout=0.2)
    report = healthy()
    holder = sqlite3.connect(tmp_path / "results.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(GuardrailError):
            store.save(coerce_input({**GOOD, "session_id": "s", "turn_id": 0}), report)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    stored = store.save(coerce_input({**GOOD, "session_id": "s", "turn_id": 0}), report)
    assert stored is not None


def test_a_read_only_store_does_not_fail_the_check_over_http(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from guardrail.service import create_app
    from guardrail.service.settings import ServiceSettings
    from guardrail.store import ReportStore

    path = tmp_path / "results.sqlite"
    store = ReportStore(path, timeout=0.2)
    app = create_app(guard=guard_with(), store=store, settings=ServiceSettings(warmup=False))
    with TestClient(app, raise_server_exceptions=False) as client:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # no writer gets in: the store is read-only now
        try:
            r = client.post("/v1/check", json={**GOOD, "session_id": "s"})
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert r.status_code == 200, r.text[:300]
        assert violations(GuardReport.model_validate(r.json()), GOOD) == []
        again = client.post("/v1/check", json={**GOOD, "session_id": "s"})
        assert again.status_code == 200 and again.headers.get("location")


def test_a_locked_sqlite_kb_fails_closed_and_the_guard_recovers(tmp_path: Path) -> None:
    from guardrail.knowledge import SQLiteKnowledgeBase, entities_from_data

    kb = SQLiteKnowledgeBase(tmp_path / "kb.sqlite", create=True, timeout=0.2)
    kb.import_entities(entities_from_data(KB))
    guard = guard_with()
    data = {**GOOD, "knowledge_base": kb}
    holder = sqlite3.connect(tmp_path / "kb.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the file
    try:
        report = guard.invoke(data)
    except GuardrailError:
        pass
    else:
        failed = [s for s in report.stages if s.status.value == "failed"]
        assert failed and any("locked" in (s.reason or "") for s in failed), report.stages
        assert report.action.value not in DELIVERED
        assert violations(report, GOOD) == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    report = guard.invoke(data)
    assert not any(s.status.value == "failed" for s in report.stages), report.stages


class NoCoverVerifier(FaultyVerifier):
    def covers(self, language: str | None) -> bool:
        raise RuntimeError("language table missing")


@pytest.mark.injects_fault("the verifier's covers() raises RuntimeError")
def test_a_verifier_whose_covers_raises_is_never_delivered() -> None:
    report = guard_with(NoCoverVerifier()).invoke(GOOD)
    assert report.action.value not in DELIVERED
    assert "language table missing" in report.model_dump_json()
    assert violations(report, GOOD) == []
