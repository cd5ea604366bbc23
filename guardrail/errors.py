"""Every exception guardrail raises, in one tree.

::

    GuardrailError
    ├── InputError              bad or unusable input (empty response, wrong type, too long)
    ├── ConfigError             an invalid configuration value or file
    ├── MissingDependencyError  an optional package is not installed (says which extra to install)
    ├── ModelLoadError          a model could not be found or loaded
    ├── VerifierError           the verifier failed while scoring
    ├── KnowledgeBaseError      the knowledge base could not be read or written
    ├── StageError              a pipeline stage failed (carries the stage name)
    └── GuardrailRejected       raised by wrappers with ``on_fail="raise"`` or when a regenerate
                                loop runs out (carries the report and the attempts)

The ready chains add their own under ``ModelLoadError`` (:mod:`chains.errors`).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Sequence
from typing import Any

MOVED: dict[str, str] = {"LocalModelUnavailable": "chains.errors"}
"""Names that moved out of the core, by the module that holds them now: the old import path
works for one more release, with a ``DeprecationWarning`` (the core imports them only then)."""


class GuardrailError(Exception):
    """Base class of all guardrail errors."""


class InputError(GuardrailError, ValueError):
    """The input cannot be checked as given; the message says what to change."""


class ConfigError(GuardrailError, ValueError):
    """A configuration value or file is invalid."""


class MissingDependencyError(GuardrailError, ImportError):
    """An optional dependency is missing; the message gives the exact install command."""

    def __init__(
        self, package: str, extra: str | None = None, *, needed_for: str | None = None
    ) -> None:
        from guardrail._version import DISTRIBUTION

        self.package = package
        self.extra = extra
        self.needed_for = needed_for
        self.install = (
            f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {package}"
        )
        """The command that installs the package."""
        where = f"for {needed_for}" if needed_for else "here"
        super().__init__(f"the package {package!r} is required {where}; run: {self.install}")


class ModelLoadError(GuardrailError):
    """A model could not be found or loaded."""


class VerifierError(GuardrailError):
    """The verifier failed while scoring pairs."""


class KnowledgeBaseError(GuardrailError):
    """The knowledge base could not be read, parsed or written."""


class StageError(GuardrailError):
    """A pipeline stage failed."""

    def __init__(self, stage: str, reason: str) -> None:
        self.stage = stage
        self.reason = reason
        super().__init__(f"stage {stage!r} failed: {reason}")


class GuardrailRejected(GuardrailError):
    """An answer was rejected by the guardrail; ``report`` holds the full :class:`GuardReport`
    (of the last answer checked), ``attempts`` every answer tried when a regenerate loop ran
    out (``chains.results.Attempt`` records: answer, report, guidance; empty otherwise)."""

    def __init__(self, message: str, report: Any, attempts: Sequence[Any] = ()) -> None:
        self.report = report
        self.attempts: list[Any] = list(attempts)
        super().__init__(message)


def moved(name: str, stacklevel: int = 2) -> Any:
    """The object a moved name now names, with a ``DeprecationWarning`` saying where to import
    it from; ``AttributeError`` for any other name."""
    home = MOVED.get(name)
    if home is None:
        raise AttributeError(f"module 'guardrail.errors' has no attribute {name!r}")
    face = home.split(".")[0]
    warnings.warn(
        f"{name} has moved to {face}: import it with 'from {face} import {name}' "
        "(the old path goes in the next release)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
    return getattr(importlib.import_module(home), name)


def __getattr__(name: str) -> Any:
    return moved(name, stacklevel=2)
