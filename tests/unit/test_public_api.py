"""The public surface: ``__all__`` is pinned, every module imports cleanly and loads no model."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import guardrail

EXPECTED_ALL = [
    "Accept",
    "AcceptWithFlags",
    "Action",
    "Backends",
    "Claim",
    "ClaimOutcome",
    "ClaimStatus",
    "CoherenceIssue",
    "CoherenceIssueType",
    "ConfigError",
    "CorrectAndDeliver",
    "Correction",
    "Decision",
    "DialogueState",
    "DialogueTurn",
    "EntityInfo",
    "FailurePolicy",
    "GuardInput",
    "GuardReport",
    "Guardrail",
    "GuardrailConfig",
    "GuardrailError",
    "GuardrailRejected",
    "HallucinationFlag",
    "HallucinationType",
    "HumanReview",
    "InputError",
    "KnowledgeBaseError",
    "LocalModelUnavailable",
    "MissingDependencyError",
    "ModelLoadError",
    "Passage",
    "Problem",
    "ProblemKind",
    "Regenerate",
    "Span",
    "Stage",
    "Verdict",
    "VerdictLabel",
    "VerifierError",
    "default_stages",
]
"""The report types users handle are exported; the pipeline's internals (``PipelineState``,
``StageUpdate``) live in :mod:`guardrail.stages`, for stage authors."""


def test_all_is_pinned() -> None:
    assert guardrail.__all__ == EXPECTED_ALL
    for name in EXPECTED_ALL:
        assert getattr(guardrail, name) is not None


def test_every_module_imports() -> None:
    for info in pkgutil.walk_packages(guardrail.__path__, "guardrail."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)


def test_import_does_no_heavy_work() -> None:
    code = (
        "import sys, guardrail, guardrail.pipeline, guardrail.config, guardrail.report;"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'spacy', 'onnxruntime') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
