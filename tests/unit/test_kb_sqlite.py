"""Knowledge bases: loaders, lookups, the one-transaction import, concurrent readers, CLI."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from guardrail.cli import main
from guardrail.errors import KnowledgeBaseError
from guardrail.knowledge import (
    AttributeValue,
    Entity,
    InMemoryKnowledgeBase,
    KnowledgeBase,
    SQLiteKnowledgeBase,
    load_csv,
    load_entities,
    open_knowledge_base,
)

KB_JSON = {
    "entities": [
        {
            "id": "E42",
            "name": "John Smith",
            "aliases": ["John"],
            "type": "person",
            "attributes": {
                "email": {"value": "john.smith@company.com", "confidence": 1.0, "source": "HR"},
                "join_date": {"value": 2020, "confidence": 0.95, "source": "HR record"},
                "Department": "Engineering",
            },
        },
        {
            "id": "E43",
            "name": "Sarah Lee",
            "aliases": ["Sarah"],
            "attributes": {"email": "s@x.com"},
        },
        {"id": "E44", "name": "John Doe", "aliases": ["John"], "attributes": {"team": "Ops"}},
    ]
}


@pytest.fixture()
def json_file(tmp_path: Path) -> Path:
    path = tmp_path / "kb.json"
    path.write_text(json.dumps(KB_JSON), encoding="utf-8")
    return path


@pytest.fixture()
def sqlite_kb(tmp_path: Path, json_file: Path) -> SQLiteKnowledgeBase:
    kb = SQLiteKnowledgeBase(tmp_path / "kb.sqlite", create=True)
    kb.import_entities(load_entities(json_file))
    return kb


def test_json_loader_bare_values_and_keys(json_file: Path) -> None:
    entities = load_entities(json_file)
    john = entities[0]
    assert john.attributes["department"] == AttributeValue(value="Engineering", confidence=1.0)
    assert john.attributes["join_date"].value == "2020"
    assert john.attributes["join_date"].confidence == 0.95


def test_csv_and_yaml_loaders(tmp_path: Path) -> None:
    csv_path = tmp_path / "kb.csv"
    csv_path.write_text(
        "entity_id,entity,type,aliases,attribute,value,confidence,source\n"
        "E42,John Smith,person,John;J. Smith,email,john.smith@company.com,1.0,HR\n"
        "E42,John Smith,person,,join date,2020,0.95,HR record\n",
        encoding="utf-8",
    )
    [john] = load_csv(csv_path)
    assert john.aliases == ["John", "J. Smith"]
    assert john.attributes["join_date"].confidence == 0.95
    yaml_path = tmp_path / "kb.yaml"
    yaml_path.write_text(
        "entities:\n  - name: Sarah Lee\n    attributes:\n      department: Finance\n",
        encoding="utf-8",
    )
    [sarah] = load_entities(yaml_path)
    assert sarah.id == "sarah-lee" and sarah.attributes["department"].value == "Finance"


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_find_entity_order(backend: str, json_file: Path, sqlite_kb: SQLiteKnowledgeBase) -> None:
    kb: KnowledgeBase = sqlite_kb if backend == "sqlite" else open_knowledge_base(json_file)
    assert kb.find_entity("John Smith").id == "E42"  # type: ignore[union-attr]
    assert kb.find_entity("john smith").id == "E42"  # type: ignore[union-attr]
    assert kb.find_entity("John Smith's").id == "E42"  # type: ignore[union-attr]
    assert kb.find_entity("sarah").id == "E43"  # type: ignore[union-attr]  alias, any case
    assert kb.find_entity("Jon Smith").id == "E42"  # type: ignore[union-attr]  fuzzy
    assert kb.find_entity("Sara Lee").id == "E43"  # type: ignore[union-attr]
    assert kb.find_entity("John") is None  # an alias two entities share: ambiguous
    assert kb.find_entity("Peter Parker") is None
    assert kb.find_entity("Jon Smith", fuzzy=False) is None


def test_attribute_and_render_facts(sqlite_kb: SQLiteKnowledgeBase) -> None:
    john = sqlite_kb.get("E42")
    assert john is not None
    assert sqlite_kb.attribute(john, "Join Date") == AttributeValue(
        value="2020", confidence=0.95, source="HR record"
    )
    assert sqlite_kb.attribute("E42", "salary") is None
    facts = sqlite_kb.render_facts(["John Smith"])
    assert "John Smith's email is john.smith@company.com." in facts
    assert "John Smith's join date is 2020." in facts
    assert len(sqlite_kb.render_facts(None)) == 5


def test_sqlite_schema_wal_and_indexes(sqlite_kb: SQLiteKnowledgeBase) -> None:
    conn = sqlite3.connect(sqlite_kb.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        indexes = {r[1] for r in conn.execute("SELECT * FROM sqlite_master WHERE type='index'")}
        assert {"idx_entities_name_norm", "idx_aliases_alias_norm"} <= indexes
    finally:
        conn.close()


def test_import_is_one_transaction(sqlite_kb: SQLiteKnowledgeBase) -> None:
    before = [e.model_dump() for e in sqlite_kb.entities()]
    good = Entity(id="E50", name="Ann Lee", attributes={"email": "ann@x.com"})
    # a row the database rejects (confidence outside [0, 1]), in the middle of the batch
    bad = Entity.model_construct(
        id="E51",
        name="Bad Row",
        type=None,
        aliases=[],
        attributes={
            "email": AttributeValue.model_construct(value="b@x.com", confidence=5.0, source=None)
        },
    )
    later = Entity(id="E42", name="John Smith", attributes={"email": "changed@x.com"})
    with pytest.raises(KnowledgeBaseError, match="nothing was imported"):
        sqlite_kb.import_entities([good, bad, later])
    assert [e.model_dump() for e in sqlite_kb.entities()] == before
    assert sqlite_kb.get("E50") is None


def test_cli_import_with_bad_csv_row_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "kb.sqlite"
    good = tmp_path / "good.csv"
    good.write_text(
        "entity,attribute,value\nJohn Smith,email,john.smith@company.com\n", encoding="utf-8"
    )
    assert main(["kb", "import", str(good), "--db", str(db)]) == 0
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "entity,attribute,value,confidence\n"
        "Ann Lee,email,ann@x.com,1.0\n"
        "Bob Ray,email,bob@x.com,very high\n"
        "Cid Moe,email,cid@x.com,0.9\n",
        encoding="utf-8",
    )
    assert main(["kb", "import", str(bad), "--db", str(db)]) == 2
    assert "bad.csv:3" in capsys.readouterr().err
    kb = SQLiteKnowledgeBase(db)
    assert kb.count() == 1 and kb.find_entity("Ann Lee", fuzzy=False) is None


def test_cli_show(sqlite_kb: SQLiteKnowledgeBase, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "show", "sarah", "--db", str(sqlite_kb.path)]) == 0
    out = capsys.readouterr().out
    assert "Sarah Lee" in out and "s@x.com" in out
    assert main(["kb", "show", "Nobody Here", "--db", str(sqlite_kb.path)]) == 2


def test_concurrent_readers_and_a_writer(sqlite_kb: SQLiteKnowledgeBase) -> None:
    errors: list[BaseException] = []
    results: list[str] = []
    lock = threading.Lock()

    def read() -> None:
        try:
            for _ in range(40):
                entity = sqlite_kb.find_entity("Sarah")
                assert entity is not None
                with lock:
                    results.append(entity.attributes["email"].value)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    def write() -> None:
        try:
            for i in range(10):
                writer = Entity(id=f"W{i}", name=f"Writer {i}", attributes={"role": "writer"})
                sqlite_kb.import_entities([writer])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(6)] + [threading.Thread(target=write)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == ["s@x.com"] * 240
    assert sqlite_kb.count() == 13


def test_open_knowledge_base_detection(
    tmp_path: Path, json_file: Path, sqlite_kb: SQLiteKnowledgeBase
) -> None:
    assert isinstance(open_knowledge_base(sqlite_kb.path), SQLiteKnowledgeBase)
    assert isinstance(open_knowledge_base(json_file), InMemoryKnowledgeBase)
    renamed = tmp_path / "kb.data"  # no telling extension: sniffed by content
    renamed.write_bytes(sqlite_kb.path.read_bytes())
    assert isinstance(open_knowledge_base(renamed), SQLiteKnowledgeBase)
    assert open_knowledge_base(sqlite_kb) is sqlite_kb
    assert isinstance(open_knowledge_base(KB_JSON), InMemoryKnowledgeBase)
    with pytest.raises(KnowledgeBaseError, match="not found"):
        open_knowledge_base(tmp_path / "missing.json")
    with pytest.raises(KnowledgeBaseError):
        open_knowledge_base(42)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="not valid JSON"):
        open_knowledge_base(broken)


def test_invalid_entities_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="entity #1"):
        open_knowledge_base({"entities": [{"id": "E1", "name": " "}]})
    with pytest.raises(KnowledgeBaseError, match="duplicate entity id"):
        InMemoryKnowledgeBase([Entity(id="E1", name="A"), Entity(id="E1", name="B")])
    with pytest.raises(KnowledgeBaseError, match="not found"):
        SQLiteKnowledgeBase(tmp_path / "none.sqlite")
