"""The one dev / test rule of the evaluation data (guardrail.evaluation.sources): it reproduces
the hash rules the benchmarks' published figures were measured on, item for item."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from guardrail.evaluation.sources import (
    DECISIONS_SPLIT,
    VERIFIER_SPLIT,
    HashSplit,
    data_root,
    read_rows,
)

KEYS = [f"key {n} ünïcode {n * 7}" for n in range(500)]


def test_decisions_rule_is_sha256_of_40_percent() -> None:
    for key in KEYS:
        bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) / 0x1_0000_0000
        assert DECISIONS_SPLIT.of(key) == ("dev" if bucket < 0.4 else "test")


def test_verifier_rule_is_sha1_of_30_percent() -> None:
    for key in KEYS:
        dev = int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 16**8 < 0.3
        assert VERIFIER_SPLIT.is_dev(key) is dev


def test_parts_keep_order_and_every_item() -> None:
    rule = HashSplit(0.5)
    keyed = [(k, n) for n, k in enumerate(KEYS)]
    dev, test = rule.parts(keyed)
    assert sorted(dev + test) == list(range(len(KEYS)))
    assert dev == sorted(dev) and test == sorted(test)
    assert 0 < len(dev) < len(KEYS)


def test_read_rows_reads_jsonl_gzip_and_json_lists(tmp_path: Path) -> None:
    import gzip

    rows = [{"a": 1}, {"a": 2}]
    (tmp_path / "x.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    (tmp_path / "x.json").write_text(json.dumps(rows))
    with gzip.open(tmp_path / "x.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps(r) for r in rows))
    for name in ("x.jsonl", "x.json", "x.jsonl.gz"):
        assert list(read_rows(tmp_path / name)) == rows


def test_data_root_follows_override_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARDRAIL_DATA_DIR", "/elsewhere")
    assert data_root("/given") == Path("/given")
    assert data_root() == Path("/elsewhere")


#: Digest of the item ids per set and split on the shared data when the one rule was
#: introduced: the splits the published figures were measured on, item for item.
DECISIONS_SPLITS = {
    "qags": ("7ddd9ac4c5450cf9", "da5a09cd2adadd26"),
    "factcheck_gpt": ("cbb64d904620c755", "1f565b27506beea3"),
    "wice": ("8588dd675504c774", "450ec67f67f25f4b"),
    "halueval": ("e4b73bd886cd53ef", "f0dbab1b555c61f2"),
    "lfqa": ("5831c2b891139c49", "69469aacd74da266"),
}
#: The same for the verifier benchmark's hash-split sets (its items have no ids: a digest of
#: each item's content stands in).
VERIFIER_SPLITS = {
    "halueval_qa": ("c9e45f4357c753db", "d56703dfe59b6201"),
    "factcheck_gpt": ("9561b2637533c3d5", "875cfe7d198cbb3a"),
    "qags": ("8fed8efc1a8ba413", "3c577faa5a6b50c0"),
    "xsumfaith": ("f991637942613ce0", "1044957ef38fda30"),
    "dialfact": ("11e08290ead07693", "971f2cecabeaf3c0"),
    "faithdial": ("73a149f924338aaa", "2b7cfba4bd78d52e"),
}


def _digest(keys: list[str]) -> str:
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16]


def _item_key(item: object) -> str:
    return hashlib.sha1(json.dumps(item, sort_keys=True, default=str).encode()).hexdigest()[:16]


@pytest.mark.skipif(not data_root().is_dir(), reason="shared data not present")
def test_decisions_splits_on_the_shared_data_are_unchanged() -> None:
    from benchmarks.decisions_data import load

    root = data_root()
    for name, expected in DECISIONS_SPLITS.items():
        found = tuple(_digest([i.item_id for i in load(name, root, s)]) for s in ("dev", "test"))
        assert found == expected, name


@pytest.mark.skipif(not data_root().is_dir(), reason="shared data not present")
def test_verifier_splits_on_the_shared_data_are_unchanged() -> None:
    from benchmarks import verifier_data

    for name, expected in VERIFIER_SPLITS.items():
        dev, test = verifier_data.LOADERS[name]()
        found = tuple(_digest([_item_key(i) for i in part]) for part in (dev, test))
        assert found == expected, name
