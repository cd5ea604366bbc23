"""The stage contract and the state that flows through the pipeline.

A stage reads a :class:`PipelineState` and returns the fields it fills in, as a dict; the
pipeline merges them into a *new* state. Stages keep no per-call state on ``self``: what they
hold is configuration and the shared, lazily loaded :class:`Resources`, so one instance is safe
under ``batch`` / ``abatch`` and threads.

To add a stage: subclass :class:`Stage`, set ``name``, implement :meth:`Stage.run` and, if the
stage does not always apply, :meth:`Stage.skip_reason`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from guardrail.config import GuardrailConfig
from guardrail.inputs import GuardInput
from guardrail.report import (
    Claim,
    CoherenceResult,
    Correction,
    ExtractedClaim,
    FactualValidationResult,
    HallucinationFlag,
    NewEntity,
    StageRecord,
    Verdict,
)

T = TypeVar("T")


class PipelineState(BaseModel):
    """The input and everything the stages have produced so far."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    input: GuardInput
    language: str | None = None
    coherence: CoherenceResult | None = None
    claims: list[Claim] | None = None
    extracted_claims: list[ExtractedClaim] | None = None
    factual: FactualValidationResult | None = None
    flags: list[HallucinationFlag] | None = None
    verdict: Verdict | None = None
    corrections: list[Correction] = Field(default_factory=list)
    corrected: str | None = None
    annotated: str | None = None
    new_entities: list[NewEntity] = Field(default_factory=list)
    stages: list[StageRecord] = Field(default_factory=list)


class Resources:
    """Models and handles shared by the stages of one :class:`~guardrail.Guardrail`.

    Each resource is built at first use, once, under a lock; later calls return the same object.
    """

    def __init__(self, config: GuardrailConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}

    def get(self, key: str, factory: Callable[[], T]) -> T:
        """Return the resource ``key``, building it with ``factory`` the first time."""
        if key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        with self._lock:
            if key not in self._cache:
                self._cache[key] = factory()
            return self._cache[key]  # type: ignore[no-any-return]

    def set(self, key: str, value: Any) -> None:
        """Inject a resource (e.g. a verifier built elsewhere)."""
        with self._lock:
            self._cache[key] = value

    def embedder(self) -> Any:
        """The embedding model of the config, behind a per-guardrail cache of text vectors."""
        from guardrail.embedding_cache import CachingEmbedder
        from guardrail.models import load_embedder

        size = self.config.models.embedding_cache_size
        return self.get(
            "embedder",
            lambda: (
                CachingEmbedder(load_embedder(self.config.models.embedding), size)
                if size > 0
                else load_embedder(self.config.models.embedding)
            ),
        )

    def verifier(self) -> Any:
        """The NLI verifier of the config (bundled offline model by default)."""
        from guardrail.verifiers import load_verifier

        return self.get("verifier", lambda: load_verifier(self.config.models.verifier))


class Stage(ABC):
    """One step of the pipeline. Subclasses set ``name`` and implement ``run``."""

    name: ClassVar[str]
    checks_answer: ClassVar[bool] = True
    """Whether this stage is a check; under fail-closed a failed check blocks ``accept``."""

    def __init__(self, config: GuardrailConfig, resources: Resources) -> None:
        self.config = config
        self.resources = resources

    def skip_reason(self, state: PipelineState) -> str | None:
        """Why this stage does not apply to ``state`` (``None`` = run it)."""
        return None

    @abstractmethod
    def run(self, state: PipelineState) -> dict[str, Any]:
        """Compute this stage's results; return the ``PipelineState`` fields to set."""
