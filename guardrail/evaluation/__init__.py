"""Measure the guardrail on labelled data: datasets, conditions, cached runs, metrics, tuning,
analysis and calibration. The CLI front end is ``guardrail eval | tune | analyze | calibrate``.

Example::

    from guardrail.evaluation import load_dataset, CachingVerifier, evaluate, get_condition
    examples = load_dataset("halueval-qa", "../shared/data/halueval", limit=100)

``tune``, ``analyze`` and ``calibrate`` are modules of the same names. Names are imported on first use (nothing heavy at ``import guardrail.evaluation``).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "EvalExample": "guardrail.evaluation.examples",
    "load_dataset": "guardrail.evaluation.datasets",
    "DATASET_NAMES": "guardrail.evaluation.datasets",
    "CachingVerifier": "guardrail.evaluation.cache",
    "Condition": "guardrail.evaluation.conditions",
    "CONDITIONS": "guardrail.evaluation.conditions",
    "get_condition": "guardrail.evaluation.conditions",
    "condition_config": "guardrail.evaluation.conditions",
    "evaluate": "guardrail.evaluation.runner",
    "run_condition": "guardrail.evaluation.runner",
    "BinaryMetrics": "guardrail.evaluation.metrics",
    "binary_metrics": "guardrail.evaluation.metrics",
    "mcnemar": "guardrail.evaluation.metrics",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'guardrail.evaluation' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
