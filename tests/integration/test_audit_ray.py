"""The Ray engine on a real local Ray runtime (2 CPUs) gives the local engine's results.

One Ray session for the module (start-up costs 10–20 s): 200 answers from the synthetic
generator of ``benchmarks/latency.py`` (shortened) and the example log, each through both
engines.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.latency import make_case
from guardrail.audit.results import RESULT_COLUMNS
from guardrail.audit.runner import AuditOptions, run_audit

ray = pytest.importorskip("ray", reason="the Ray engine needs the 'ray' extra")
pq = pytest.importorskip("pyarrow.parquet", reason="audit needs the 'audit' extra")

pytestmark = pytest.mark.integration

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "audit_sample.jsonl"


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False)  # fmt: skip
    yield
    ray.shutdown()


def results(out: Path) -> list[dict[str, Any]]:
    table = pq.read_table(out / "results.parquet", columns=list(RESULT_COLUMNS))
    return table.to_pylist()


def audit(src: Path, out: Path, engine: str) -> dict[str, Any]:
    return run_audit(AuditOptions(input=src, out=out, engine=engine, workers=2, chunk_size=16,
                                  progress=False))  # type: ignore[arg-type]  # fmt: skip


def test_two_hundred_answers_equal_verdicts(ray_session: None, tmp_path: Path) -> None:
    rng = random.Random(0)
    src = tmp_path / "synthetic.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for i in range(200):
            case = make_case(rng)  # kept light: two passages, the first two sentences
            case["passages"] = case["passages"][:2]
            case["response"] = " ".join(case["response"].split(". ")[:2])
            fh.write(json.dumps({**case, "session_id": f"s{i // 5}", "turn_id": i % 5}) + "\n")
    local = audit(src, tmp_path / "local", "local")
    on_ray = audit(src, tmp_path / "ray", "ray")
    a, b = results(tmp_path / "local"), results(tmp_path / "ray")
    assert len(a) == len(b) == 200
    assert [r["key"] for r in a] == [r["key"] for r in b]
    for x, y in zip(a, b, strict=True):
        assert (x["verdict"], x["action"], x["status"]) == (y["verdict"], y["action"], y["status"])
        assert x["confidence"] == pytest.approx(y["confidence"], abs=1e-6)
    assert local["verdicts"] == on_ray["verdicts"] and local["actions"] == on_ray["actions"]
    assert len(set(local["verdicts"])) >= 2  # the synthetic set has good and altered answers


def test_sample_log_equal_on_both_engines(ray_session: None, tmp_path: Path) -> None:
    local = audit(SAMPLE, tmp_path / "local", "local")
    on_ray = audit(SAMPLE, tmp_path / "ray", "ray")
    assert results(tmp_path / "local") == results(tmp_path / "ray")
    for summary in (local, on_ray):
        summary.pop("run")
    assert local == on_ray
    errors = [(tmp_path / e / "errors.jsonl").read_text() for e in ("local", "ray")]
    assert errors[0] == errors[1] and errors[0].count("\n") == local["rows"]["errors"] > 0
