"""Knowledge-base loaders reject bad entities: an unknown key (``"atributes"``)
or an entity without attributes is a ``KnowledgeBaseError`` naming the file, the entity and the
key (with the nearest valid one) — in the JSON, CSV and YAML loaders and the SQLite import —
instead of an entity imported with no attributes, which checks nothing.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from guardrail.cli import main
from guardrail.errors import KnowledgeBaseError
from guardrail.knowledge import (
    Entity,
    SQLiteKnowledgeBase,
    entities_from_data,
    load_csv,
    load_entities,
    load_json,
    load_yaml,
    open_knowledge_base,
)

ROOT = Path(__file__).resolve().parents[2]

MISSPELLED: dict[str, Any] = {
    "entities": [
        {
            "id": "E42",
            "name": "John Smith",
            "aliases": ["John"],
            "atributes": {"email": "john.smith@company.com"},
        }
    ]
}


def test_json_loader_names_the_file_the_entity_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "people.json"
    path.write_text(json.dumps(MISSPELLED), encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as info:
        load_json(path)
    message = str(info.value)
    assert str(path) in message and "entity #1 ('John Smith')" in message
    assert "unknown key 'atributes' (did you mean 'attributes'?)" in message
    # an attribute object's keys too, and an entity left with no attributes at all
    bad_attr = {"entities": [{"name": "Ann Lee", "attributes": {"email": {"vaule": "a@x.com"}}}]}
    path.write_text(json.dumps(bad_attr), encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match=r"attribute 'email': unknown key 'vaule' \(did"):
        load_json(path)
    path.write_text(json.dumps({"entities": [{"name": "Ann Lee", "aliases": ["Ann"]}]}), "utf-8")
    with pytest.raises(KnowledgeBaseError, match=r"entity #1 \('Ann Lee'\) has no attributes"):
        load_json(path)
    with pytest.raises(KnowledgeBaseError, match=r"top-level key 'entites' \(did you mean"):
        entities_from_data({"entites": []}, "inline")


def test_csv_loader_rejects_unknown_columns_and_empty_values(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text(
        "entity,atribute,value\nJohn Smith,email,john.smith@company.com\n", encoding="utf-8"
    )
    with pytest.raises(KnowledgeBaseError) as info:
        load_csv(path)
    message = str(info.value)
    assert str(path) in message
    assert "unknown CSV column 'atribute' (did you mean 'attribute'?)" in message
    path.write_text("entity,attribute,value\nJohn Smith,email,\n", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match=r"2: entity 'John Smith', attribute 'email' has"):
        load_csv(path)
    path.write_text("entity,attribute,value\nJohn Smith,email,john@x.com,extra\n", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match=r"more values than the header has columns"):
        load_csv(path)


def test_yaml_loader_names_the_file_the_entity_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "people.yaml"
    path.write_text(
        "entities:\n"
        "  - name: Sarah Lee\n"
        "    aliases: [Sarah]\n"
        "    atributes:\n"
        "      department: Finance\n",
        encoding="utf-8",
    )
    with pytest.raises(KnowledgeBaseError) as info:
        load_yaml(path)
    message = str(info.value)
    assert str(path) in message and "'Sarah Lee'" in message
    assert "unknown key 'atributes' (did you mean 'attributes'?)" in message
    path.write_text("entities:\n  - name: Sarah Lee\n    attributes: {}\n", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match=r"'Sarah Lee'\) has no attributes"):
        load_entities(path)


def test_sqlite_import_rejects_the_entity_and_imports_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "kb.sqlite"
    source = tmp_path / "people.json"
    source.write_text(json.dumps(MISSPELLED), encoding="utf-8")
    # the failure this guards against: `kb import` said "imported 1 entities" and `kb show`
    # listed nothing
    assert main(["kb", "import", str(source), "--db", str(db)]) == 2
    captured = capsys.readouterr()
    assert "imported" not in captured.out and "Traceback" not in captured.err
    assert str(source) in captured.err and "'John Smith'" in captured.err
    assert "unknown key 'atributes' (did you mean 'attributes'?)" in captured.err
    assert f"nothing was imported into {db}" in captured.err
    kb = SQLiteKnowledgeBase(db, create=True)
    good = Entity(id="E1", name="Ann Lee", attributes={"email": "ann@x.com"})
    bare = Entity(id="E2", name="Bob Ray", aliases=["Bob"])
    with pytest.raises(KnowledgeBaseError, match=r"\('E2', 'Bob Ray'\).*no attributes"):
        kb.import_entities([good, bare])
    assert kb.count() == 0  # one transaction: the good entity was not imported either
    with pytest.raises(ValueError, match="did you mean 'attributes'"):  # the model itself
        Entity.model_validate({"id": "E3", "name": "Cid", "atributes": {"email": "c@x.com"}})
    # importing from another SQLite file: a column this schema does not know is named
    other = tmp_path / "other.sqlite"
    SQLiteKnowledgeBase(other, create=True).import_entities([good])
    conn = sqlite3.connect(other)
    conn.execute("ALTER TABLE attributes ADD COLUMN confidance REAL")
    conn.commit()
    conn.close()
    assert main(["kb", "import", str(other), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "table 'attributes': unknown column 'confidance' (did you mean 'confidence'?)" in err
    assert kb.count() == 0


@pytest.mark.parametrize(
    "path", [ROOT / "examples/data/john_smith_kb.json", ROOT / "chains/data/kb/office.json"]
)
def test_the_shipped_knowledge_bases_still_load(path: Path, tmp_path: Path) -> None:
    entities = load_entities(path)
    assert entities and all(e.attributes for e in entities)
    kb = SQLiteKnowledgeBase(tmp_path / "kb.sqlite", create=True)
    assert kb.import_entities(entities) == len(entities)
    assert len(open_knowledge_base(kb.path).entities()) == len(entities)
    assert main(["kb", "import", str(path), "--db", str(tmp_path / "cli.sqlite")]) == 0
