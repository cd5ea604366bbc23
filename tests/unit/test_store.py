"""The report store's contract on both backends (a real SQLite file and a real PostgreSQL server
when one is configured, see ``tests/store_backends.py``): keys, attempts, filters, crash safety,
schema."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from guardrail.errors import InputError
from guardrail.report import (
    AcceptWithFlags,
    ClaimValidation,
    CoherenceIssue,
    CoherenceResult,
    Correction,
    CorrectionType,
    ExtractedClaim,
    FactualStats,
    FactualValidationResult,
    GuardReport,
    HallucinationFlag,
    HallucinationType,
    HumanReview,
    Span,
    ValidationStatus,
    Verdict,
    VerdictLabel,
)
from guardrail.store import SCHEMA_VERSION, ReportStore, StoreError, open_store
from tests.store_backends import BACKENDS, make_store

ANSWER = "John Smith's email is john.s@company.org. He joined in 2019."


def make_report(
    action: str = "accept_with_flags",
    verdict: VerdictLabel = VerdictLabel.HALLUCINATION,
    confidence: float = 0.8,
) -> GuardReport:
    """A report with every part the key layout names (coherence issue, claim, flag, edit)."""
    claim = ExtractedClaim(
        text="John Smith's email is john.s@company.org.",
        subject="John Smith",
        predicate="email",
        object="john.s@company.org",
        span=Span(start=0, end=40),
        attribute="email",
    )
    rec = (
        AcceptWithFlags(flags=[Span(start=41, end=60)])
        if action == "accept_with_flags"
        else HumanReview(reason="Overall confidence too low")
    )
    return GuardReport(
        original=ANSWER,
        corrected=ANSWER.replace("john.s@company.org", "john.smith@company.com"),
        annotated=ANSWER + " [unverified]",
        coherence=CoherenceResult(
            score=0.9,
            issues=[
                CoherenceIssue(
                    type="ambiguous_reference",
                    description="'He' could be John or Tom",
                    severity=0.4,
                    span=Span(start=41, end=43),
                )
            ],
        ),
        factual_validation=FactualValidationResult(
            score=0.0,
            claim_validations=[
                ClaimValidation(
                    claim=claim,
                    status=ValidationStatus.CONTRADICTED,
                    confidence=1.0,
                    kb_value="john.smith@company.com",
                )
            ],
            stats=FactualStats(total=1, contradicted=1),
        ),
        hallucination_flags=[
            HallucinationFlag(
                type=HallucinationType.TEMPORAL_ERROR,
                span=Span(start=55, end=59),
                content="2019",
                confidence=0.9,
                severity=0.7,
                suggestion="the evidence says 2020",
            )
        ],
        corrections=[
            Correction(
                type=CorrectionType.FACTUAL,
                span=Span(start=22, end=40),
                original="john.s@company.org",
                replacement="john.smith@company.com",
                confidence=1.0,
            )
        ],
        confidence=confidence,
        recommendation=rec,
        verdict=Verdict(label=verdict, nli_score=0.2, threshold=0.5, retrieval_score=0.7),
    )


def make_input(session: str | None = "demo", turn: int | None = None) -> dict[str, object]:
    return {
        "query": "Tell me about John",
        "response": ANSWER,
        "passages": [{"text": "John Smith joined in 2020.", "score": 0.7}],
        "session_id": session,
        "turn_id": turn,
    }


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ReportStore:
    return make_store(request.param, tmp_path)


@pytest.fixture()
def sqlite_store(tmp_path: Path) -> ReportStore:
    return ReportStore(tmp_path / "results.sqlite")


def test_save_and_get_round_trip(store: ReportStore) -> None:
    saved = store.save(make_input(turn=3), make_report())
    assert (saved.session_id, saved.turn_id, saved.attempt) == ("demo", 3, 1)
    got = store.get("demo", 3)
    assert got is not None
    assert got.report == make_report().model_copy(
        update={"session_id": "demo", "turn_id": 3}
    ).model_dump(mode="json")
    assert got.input["passages"][0]["text"] == "John Smith joined in 2020."
    assert got.guard_report().verdict.label is VerdictLabel.HALLUCINATION
    assert (got.action, got.verdict, got.confidence) == ("accept_with_flags", "HALLUCINATION", 0.8)
    assert store.get("demo", 4) is None and store.get("other", 3) is None


def test_turns_are_numbered_and_rechecks_add_attempts(store: ReportStore) -> None:
    assert [store.save(make_input(), make_report()).turn_id for _ in range(3)] == [0, 1, 2]
    again = store.save(make_input(turn=1), make_report(action="human_review", confidence=0.1))
    assert (again.turn_id, again.attempt) == (1, 2)
    assert store.get("demo", 1).action == "human_review"  # type: ignore[union-attr]
    assert store.get("demo", 1, attempt=1).action == "accept_with_flags"  # type: ignore[union-attr]
    assert [(t.turn_id, t.attempt) for t in store.turns("demo")] == [(0, 1), (1, 2), (2, 1)]
    assert store.count() == 4
    no_session = store.save(make_input(session=None), make_report())
    assert no_session.session_id == "default" and no_session.report["session_id"] == "default"


def test_search_filters_and_pages(store: ReportStore) -> None:
    for i in range(5):
        store.save(make_input(session="a"), make_report())
        store.save(
            make_input(session="b"),
            make_report("human_review", VerdictLabel.UNVERIFIED, 0.1 * i),
        )
    page = store.search(session_id="a", limit=2)
    assert page.total == 5 and len(page.items) == 2 and page.next_offset == 2
    assert [i.turn_id for i in page.items] == [4, 3]  # newest first
    last = store.search(session_id="a", limit=2, offset=4)
    assert len(last.items) == 1 and last.next_offset is None
    assert store.search(action="human_review").total == 5
    assert store.search(verdict="UNVERIFIED", session_id="a").total == 0
    assert store.search(since=datetime.now(UTC) + timedelta(hours=1)).total == 0
    assert store.search(since=datetime.now(UTC) - timedelta(hours=1)).total == 10
    assert [s for s, _, _ in store.sessions()] == ["b", "a"]


def test_unusable_keys_are_input_errors(store: ReportStore) -> None:
    with pytest.raises(InputError, match="session_id"):
        store.save(make_input(session="a/b"), make_report())
    with pytest.raises(InputError, match="turn_id"):
        store.save(make_input(), make_report(), turn_id=-1)
    assert store.count() == 0


def test_file_is_wal_and_versioned(sqlite_store: ReportStore, tmp_path: Path) -> None:
    store = sqlite_store
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="upgrade guardrail"):
        ReportStore(store.path)
    with pytest.raises(StoreError, match="not found"):
        ReportStore(tmp_path / "missing.sqlite", create=False)


_WRITER = textwrap.dedent(
    """
    import sys, time
    from guardrail.report import GuardReport
    from guardrail.store import open_store

    spec, report_file = sys.argv[1], sys.argv[2]

    class StallsBeforeCommit(type(open_store(spec))):
        def _insert(self, conn, stored, created):
            super()._insert(conn, stored, created)
            print("inserted", flush=True)
            time.sleep(120)

    report = GuardReport.model_validate_json(open(report_file).read())
    StallsBeforeCommit(spec).save({"response": report.original, "session_id": "demo",
                                   "turn_id": 0}, report)
    """
)


def test_writer_killed_mid_transaction_leaves_previous_state(
    store: ReportStore, tmp_path: Path
) -> None:
    store.save(make_input(turn=0), make_report())
    report_file = tmp_path / "report.json"
    report_file.write_text(make_report("human_review", confidence=0.1).model_dump_json())
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, store.where, str(report_file)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "inserted"
        # The writer holds the write lock with its row inserted: readers still see the old state.
        assert store.get("demo", 0).attempt == 1  # type: ignore[union-attr]
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -9
    reopened = open_store(store.where)
    got = reopened.get("demo", 0)
    assert got is not None and (got.attempt, got.action) == (1, "accept_with_flags")
    assert reopened.count() == 1
    assert reopened.integrity_check() == "ok"
    assert reopened.save(make_input(turn=0), make_report()).attempt == 2  # lock was released
    assert json.loads(json.dumps(reopened.get("demo", 0).report))["turn_id"] == 0  # type: ignore[union-attr]


def test_a_postgres_url_without_the_driver_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from guardrail.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'answer-guardrail\[postgres\]'"):
        open_store("postgresql://guardrail@127.0.0.1:1/none")


def test_a_postgres_url_is_shown_without_its_password() -> None:
    from guardrail.store.postgres import redact

    assert redact("postgresql://app:s3cret@db.internal:5433/reports") == (
        "postgresql://app:***@db.internal:5433/reports"
    )
    assert redact("postgresql://app@db/reports") == "postgresql://app@db/reports"
