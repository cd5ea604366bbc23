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


#: Items per split on the shared data when the one rule was introduced (the published splits).
SPLIT_SIZES = {
    "qags": (90, 145),
    "factcheck_gpt": (42, 50),
    "wice": (349, 358),
    "halueval": (208, 292),
    "lfqa": (126, 186),
}


@pytest.mark.skipif(not data_root().is_dir(), reason="shared data not present")
def test_benchmark_splits_on_the_shared_data_are_unchanged() -> None:
    from benchmarks.decisions_data import load
    from benchmarks.verifier_data import halueval, qags

    root = data_root()
    for name, (dev, test) in SPLIT_SIZES.items():
        assert (len(load(name, root, "dev")), len(load(name, root, "test"))) == (dev, test)
    assert [len(part) for part in halueval()] == [138, 362]
    assert [len(part) for part in qags()] == [131, 343]
