"""Training data for the verifier: loading, label schemes, weighted sampling, length bucketing.

The training file is JSON lines (optionally gzipped) with ``premise``, ``hypothesis``, ``label``
(``entailment`` / ``neutral`` / ``contradiction``) and ``dataset`` fields. Sets that were released
two-way (entailment vs. not-entailment) have their "not entailed" mapped to ``neutral``; such
labels say nothing about contradiction, so they are trained with a two-way loss
(``p(entailment)`` against ``p(neutral) + p(contradiction)``) instead of a wrong 3-way target.
A row may say so itself with ``"two_way": true`` (generated "not entailed" pairs do).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from guardrail.errors import InputError

logger = logging.getLogger(__name__)

LABELS: tuple[str, str, str] = ("entailment", "neutral", "contradiction")
LABEL_TO_ID: dict[str, int] = {name: i for i, name in enumerate(LABELS)}

#: Sets released two-way whose "neutral" means "not entailed" (may hide contradictions).
TWO_WAY_DATASETS: frozenset[str] = frozenset(
    {
        "mnli_dev_binary",
        "rte",
        "qnli_dev",
        "mctest_nli",
        "fever_rte",
        "fever_docnli",
        "scifact_rte",
        "monli",
        "med",
        "help_partial",
        "hans_regenerated",
        "dnc",
        "begin",
        "qags",
    }
)

#: Sampling weight per dataset; unknown sets get 1.0. Templated or off-task sets are down-weighted.
DEFAULT_DATASET_WEIGHTS: dict[str, float] = {
    "hans_regenerated": 0.1,
    "imppres": 0.1,
    "dnc": 0.1,
    "joci": 0.1,
    "help_partial": 0.15,
    "med": 0.15,
    "monli": 0.15,
    "qnli_dev": 0.3,
    "mpe": 0.5,
    "sick": 0.7,
    "breaking_nli": 0.5,
    "mctest_nli": 0.6,
    "snli_dev_test_esnli": 2.0,
    "cad": 2.0,
    "taxinli": 2.0,
    "fever_rte": 1.2,
    "fever_docnli": 1.0,
    "vitaminc_test": 1.0,
    "anli_test": 0.0,
}


@dataclass(frozen=True)
class TrainPair:
    """One training pair; ``two_way`` marks a label that only separates entailed from not."""

    premise: str
    hypothesis: str
    label: int
    dataset: str
    two_way: bool


def read_pairs(path: str | Path) -> list[TrainPair]:
    """Read a JSONL(.gz) file of NLI pairs, skipping malformed lines with a warning."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"pairs file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    pairs: list[TrainPair] = []
    bad = 0
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                label = LABEL_TO_ID[str(row["label"]).lower()]
                premise, hypothesis = str(row["premise"]), str(row["hypothesis"])
            except (ValueError, KeyError):
                bad += 1
                continue
            if not premise.strip() or not hypothesis.strip():
                bad += 1
                continue
            dataset = str(row.get("dataset", "unknown"))
            marked = bool(row.get("two_way", dataset in TWO_WAY_DATASETS))
            two_way = marked and label != LABEL_TO_ID["contradiction"]
            pairs.append(TrainPair(premise, hypothesis, label, dataset, two_way))
    if bad:
        logger.warning("skipped %d malformed lines in %s", bad, path)
    return pairs


def pair_key(premise: str, hypothesis: str) -> tuple[str, str]:
    """Normalised (premise, hypothesis): case and whitespace do not make a pair new."""
    return (" ".join(premise.lower().split()), " ".join(hypothesis.lower().split()))


def drop_excluded(pairs: list[TrainPair], exclude: list[str] | tuple[str, ...]) -> list[TrainPair]:
    """Remove pairs that also occur (normalised) in any of the ``exclude`` files.

    Evaluation sets (SNLI test, ANLI) share text with some training sets; passing them here
    keeps a benchmark score from resting on pairs the model was trained on.
    """
    if not exclude:
        return pairs
    banned: set[tuple[str, str]] = set()
    for path in exclude:
        banned.update(pair_key(p.premise, p.hypothesis) for p in read_pairs(path))
    kept = [p for p in pairs if pair_key(p.premise, p.hypothesis) not in banned]
    logger.info(
        "excluded %d training pairs found in %d evaluation file(s)",
        len(pairs) - len(kept),
        len(exclude),
    )
    return kept


def split_dev(
    pairs: list[TrainPair], dev_fraction: float, seed: int
) -> tuple[list[TrainPair], list[TrainPair]]:
    """Split off a dev part by a stable hash of the premise (so a premise never straddles)."""
    train: list[TrainPair] = []
    dev: list[TrainPair] = []
    for pair in pairs:
        digest = hashlib.sha1(f"{seed}:{pair.premise}".encode()).digest()
        bucket = int.from_bytes(digest[:4], "big") / 2**32
        (dev if bucket < dev_fraction else train).append(pair)
    return train, dev


def sampling_order(
    pairs: list[TrainPair],
    num_samples: int,
    weights: Mapping[str, float],
    seed: int,
) -> np.ndarray:
    """Indices of ``num_samples`` draws, each dataset's share proportional to size × weight.

    Draws without replacement while a dataset lasts, then starts a new shuffled pass over it,
    so a heavily weighted small set repeats only as much as its weight asks.
    """
    rng = np.random.default_rng(seed)
    by_dataset: dict[str, list[int]] = {}
    for i, pair in enumerate(pairs):
        by_dataset.setdefault(pair.dataset, []).append(i)
    names = sorted(by_dataset)
    mass = np.array([len(by_dataset[n]) * float(weights.get(n, 1.0)) for n in names])
    if mass.sum() <= 0:
        raise ValueError("all dataset weights are zero")
    probs = mass / mass.sum()
    choice = rng.choice(len(names), size=num_samples, p=probs)
    cursors = {n: 0 for n in names}
    perms = {n: rng.permutation(by_dataset[n]) for n in names}
    order = np.empty(num_samples, dtype=np.int64)
    for k, d in enumerate(choice):
        name = names[int(d)]
        if cursors[name] >= len(perms[name]):
            perms[name] = rng.permutation(by_dataset[name])
            cursors[name] = 0
        order[k] = perms[name][cursors[name]]
        cursors[name] += 1
    return order


def bucketed_batches(
    order: np.ndarray, lengths: np.ndarray, batch_size: int, chunk_batches: int, seed: int
) -> list[np.ndarray]:
    """Group ``order`` into batches of similar length (sorted within chunks), batches shuffled.

    Sorting only inside chunks of ``chunk_batches`` batches keeps the data mix local in time,
    and padding to the longest item of a batch then wastes little.
    """
    rng = np.random.default_rng(seed + 1)
    chunk = batch_size * chunk_batches
    batches: list[np.ndarray] = []
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        local = [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
        rng.shuffle(local)  # type: ignore[arg-type]
        batches.extend(local)
    return batches


def iter_batches(batches: list[np.ndarray], start: int) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(step, batch)`` from ``start``, so a resumed run continues where it stopped."""
    for step in range(start, len(batches)):
        yield step, batches[step]
