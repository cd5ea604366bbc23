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
    "MissingDependencyError",
    "ModelLoadError",
    "NLIPrediction",
    "Passage",
    "PipelineState",
    "Problem",
    "ProblemKind",
    "Regenerate",
    "Span",
    "Stage",
    "StageUpdate",
    "Verdict",
    "VerdictLabel",
    "Verifier",
    "VerifierError",
    "default_stages",
]
"""What a guide uses: the checker, its input, the report types, the configuration, the errors,
and what a stage or a verifier of one's own is written with (``Stage``, ``PipelineState``,
``StageUpdate``, ``Verifier``, ``NLIPrediction``)."""


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
