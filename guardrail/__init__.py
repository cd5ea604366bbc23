"""guardrail: check an LLM answer before a user sees it.

``from guardrail import Guardrail, GuardInput, GuardReport``. Names are imported on first use,
so ``import guardrail`` loads no model and no heavy library. The root holds what a guide uses to
check an answer, read its report, configure the checks and write a stage or a verifier; the faces
(``chains``, ``guardrail.service``, ``guardrail.integrations.*``, ``guardrail.tracing``,
``guardrail.observability``, ``guardrail.store``) are listed in the reference's index page.

The library logs to the ``guardrail`` logger tree and configures no handler: a
:class:`logging.NullHandler` on ``guardrail`` keeps it quiet (no "last resort" output on
stderr) until the application configures logging.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from guardrail._version import __version__ as __version__

logging.getLogger(__name__).addHandler(logging.NullHandler())

_EXPORTS: dict[str, str] = {
    "Guardrail": "guardrail.pipeline",
    "default_stages": "guardrail.pipeline",
    "Backends": "guardrail.stages.base",
    "Stage": "guardrail.stages.base",
    "StageUpdate": "guardrail.stages.base",
    "PipelineState": "guardrail.stages.base",
    "Verifier": "guardrail.verifiers.base",
    "NLIPrediction": "guardrail.verifiers.base",
    "GuardrailConfig": "guardrail.config",
    "FailurePolicy": "guardrail.config",
    "GuardInput": "guardrail.inputs",
    "Passage": "guardrail.inputs",
    "DialogueState": "guardrail.inputs",
    "DialogueTurn": "guardrail.inputs",
    "EntityInfo": "guardrail.inputs",
    "GuardReport": "guardrail.report",
    "Action": "guardrail.report",
    "VerdictLabel": "guardrail.report",
    "HallucinationType": "guardrail.report",
    "Claim": "guardrail.report",
    "ClaimStatus": "guardrail.report",
    "ClaimOutcome": "guardrail.report",
    "Problem": "guardrail.report",
    "ProblemKind": "guardrail.report",
    "Decision": "guardrail.report",
    "Verdict": "guardrail.report",
    "HallucinationFlag": "guardrail.report",
    "Correction": "guardrail.report",
    "CoherenceIssue": "guardrail.report",
    "CoherenceIssueType": "guardrail.report",
    "Span": "guardrail.report",
    "Accept": "guardrail.report",
    "AcceptWithFlags": "guardrail.report",
    "CorrectAndDeliver": "guardrail.report",
    "Regenerate": "guardrail.report",
    "HumanReview": "guardrail.report",
    "GuardrailError": "guardrail.errors",
    "InputError": "guardrail.errors",
    "ConfigError": "guardrail.errors",
    "MissingDependencyError": "guardrail.errors",
    "ModelLoadError": "guardrail.errors",
    "VerifierError": "guardrail.errors",
    "KnowledgeBaseError": "guardrail.errors",
    "GuardrailRejected": "guardrail.errors",
}

__all__ = [
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

if TYPE_CHECKING:
    from guardrail.config import FailurePolicy, GuardrailConfig
    from guardrail.errors import (
        ConfigError,
        GuardrailError,
        GuardrailRejected,
        InputError,
        KnowledgeBaseError,
        MissingDependencyError,
        ModelLoadError,
        VerifierError,
    )
    from guardrail.inputs import DialogueState, DialogueTurn, EntityInfo, GuardInput, Passage
    from guardrail.pipeline import Guardrail, default_stages
    from guardrail.report import (
        Accept,
        AcceptWithFlags,
        Action,
        Claim,
        ClaimOutcome,
        ClaimStatus,
        CoherenceIssue,
        CoherenceIssueType,
        CorrectAndDeliver,
        Correction,
        Decision,
        GuardReport,
        HallucinationFlag,
        HallucinationType,
        HumanReview,
        Problem,
        ProblemKind,
        Regenerate,
        Span,
        Verdict,
        VerdictLabel,
    )
    from guardrail.stages.base import Backends, PipelineState, Stage, StageUpdate
    from guardrail.verifiers.base import NLIPrediction, Verifier


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is not None:
        return getattr(importlib.import_module(module), name)
    errors = importlib.import_module("guardrail.errors")
    if name in errors.MOVED:  # a name that moved to a face: a DeprecationWarning, for a release
        return errors.moved(name, stacklevel=2)
    raise AttributeError(f"module 'guardrail' has no attribute {name!r}")
