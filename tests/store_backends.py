"""The report store's backends for the store tests: a SQLite file, and PostgreSQL when a server
is at ``$GUARDRAIL_TEST_POSTGRES_URL`` (``.ci/run`` starts one with ``.ci/postgres.sh``).

Each PostgreSQL store gets a schema of its own (named in the URL's ``search_path``), so tests do
not see each other's rows. Without a server the PostgreSQL cases skip and say why.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from guardrail.store import ReportStore, open_store

POSTGRES_ENV = "GUARDRAIL_TEST_POSTGRES_URL"
BACKENDS = ["sqlite", "postgresql"]


def postgres_url() -> str:
    """The test server's URL, or skip (no URL set, no driver, or no server answering)."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(
            f"no PostgreSQL server for the store tests: set ${POSTGRES_ENV} "
            '(export GUARDRAIL_TEST_POSTGRES_URL="$(bash .ci/postgres.sh)" starts one)'
        )
    psycopg = pytest.importorskip("psycopg", reason="pip install 'answer-guardrail[postgres]'")
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.Error as exc:
        pytest.skip(f"the PostgreSQL server at ${POSTGRES_ENV} does not answer: {exc}")
    return url


def fresh_postgres_url() -> str:
    """A URL whose ``search_path`` is a new, empty schema on the test server."""
    import psycopg

    url = postgres_url()
    schema = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


def make_store(backend: str, tmp_path: Path) -> ReportStore:
    """An empty store of ``backend`` (``sqlite`` or ``postgresql``)."""
    if backend == "postgresql":
        return open_store(fresh_postgres_url())
    return ReportStore(tmp_path / "results.sqlite")
