"""Where the evaluation data lives, how its files are read and how a set splits into dev / test.

The one home of these rules for :mod:`guardrail.evaluation.datasets` and the benchmark
scripts of the repository (the decisions, verifier and hallucination benchmarks of the
Benchmarks page). Nothing is downloaded.

A set splits into ``dev`` (used only to choose thresholds and rules) and ``test`` (reported)
in one of two ways:

- by the dataset's own files or field (WiCE ``dev.jsonl`` / ``test.jsonl``, SummEdits'
  ``evaluation`` split, FRANK's ``valid`` split): read as they are;
- otherwise by a hash of a key that keeps related items together (a question, an article, a
  dialogue): :class:`HashSplit`. ``dev`` when the first 8 hex digits of the key's digest, as a
  fraction of 2³², fall below ``dev_share``. It is deterministic across runs and machines
  (not Python's salted ``hash``). The benchmarks each keep the split their published figures
  were measured on: :data:`DECISIONS_SPLIT` (SHA-256, 40 % dev) and :data:`VERIFIER_SPLIT`
  (SHA-1, 30 % dev).

Example::

    root = data_root()                                   # --data-dir, env, ../shared/data
    rows = read_rows(root / "halueval" / HALUEVAL_QA_ONE_TURN)
    dev = [r for r in rows if DECISIONS_SPLIT.of(r["question"]) == "dev"]
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardrail.evaluation.examples import read_json_or_jsonl

#: Environment variable naming the folder that holds the datasets (one sub-folder each).
DATA_DIR_ENV = "GUARDRAIL_DATA_DIR"

#: HaluEval QA one-turn generation file, inside the ``halueval`` folder (JSON Lines).
HALUEVAL_QA_ONE_TURN = Path("generation") / "qa" / "qa_one-turn_data.json"

#: WiCE claim-level files inside the ``wice`` folder, one per split (``dev`` / ``test``).
WICE_CLAIM_DIR = Path("data") / "entailment_retrieval" / "claim"


def data_root(override: str | Path | None = None) -> Path:
    """The datasets' folder: ``override`` (``--data-dir``), else ``$GUARDRAIL_DATA_DIR``,
    else ``shared/data`` beside the source checkout."""
    chosen = override or os.environ.get(DATA_DIR_ENV)
    if chosen:
        return Path(chosen)
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (gzip-compressed when it ends in ``.gz``) or of a
    JSON list (``InputError`` naming the file for a missing or malformed one)."""
    if path.suffix != ".gz":
        yield from read_json_or_jsonl(path)
        return
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def wice_claims(wice_dir: Path, split: str) -> Iterator[dict[str, Any]]:
    """The WiCE claim rows of ``split`` (``dev`` / ``test``: the dataset's own files)."""
    yield from read_rows(wice_dir / WICE_CLAIM_DIR / f"{split}.jsonl")


@dataclass(frozen=True)
class HashSplit:
    """A dev / test split by a hash of each item's key (see the module docstring).

    Args:
        dev_share: the share of keys that go to ``dev`` (0 to 1).
        digest: the :mod:`hashlib` algorithm (``sha256``, ``sha1``).
    """

    dev_share: float
    digest: str = "sha256"

    def of(self, key: str) -> str:
        """``dev`` or ``test`` for ``key``."""
        value = hashlib.new(self.digest, key.encode("utf-8")).hexdigest()[:8]
        return "dev" if int(value, 16) / 0x1_0000_0000 < self.dev_share else "test"

    def is_dev(self, key: str) -> bool:
        """Whether ``key`` falls in ``dev``."""
        return self.of(key) == "dev"

    def parts(self, keyed: list[tuple[str, Any]]) -> tuple[list[Any], list[Any]]:
        """``(dev items, test items)`` of ``(key, item)`` pairs, each in the given order."""
        dev = [item for key, item in keyed if self.is_dev(key)]
        test = [item for key, item in keyed if not self.is_dev(key)]
        return dev, test


#: The decisions benchmark's split: 40 % dev by SHA-256.
DECISIONS_SPLIT = HashSplit(dev_share=0.4, digest="sha256")

#: The verifier benchmark's split: 30 % dev by SHA-1.
VERIFIER_SPLIT = HashSplit(dev_share=0.3, digest="sha1")
