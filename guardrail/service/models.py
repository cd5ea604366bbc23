"""Request and response bodies of the HTTP API (the OpenAPI schema is built from these).

Request bodies are strict, as :class:`~guardrail.inputs.GuardInput` is in Python: an unknown key
anywhere (``pasages``, a passage's ``txt``) is a 422 whose ``loc`` ends in the key and whose
``msg`` names the nearest valid one (``unknown input key 'pasages' (did you mean 'passages'?)``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from guardrail.config import AdaptiveThreshold, HandlingThresholds
from guardrail.inputs import GuardInput, StrictModel
from guardrail.report import GuardReport
from guardrail.store.sqlite import ReportSummary


class CheckRequest(GuardInput):
    """One answer to check: the :class:`~guardrail.inputs.GuardInput` fields.

    Over HTTP the knowledge base can only be given inline (entities as JSON); a server-side
    knowledge base is configured with ``guardrail serve --kb FILE``.
    """

    model_config = ConfigDict(extra="forbid")

    knowledge_base: dict[str, Any] | list[dict[str, Any]] | None = None  # type: ignore[assignment]
    """Inline entities (``{"entities": [...]}`` or a list); ``None`` = the server's, if any."""

    @field_validator("knowledge_base", mode="before")
    @classmethod
    def _no_server_paths(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError(
                "a knowledge-base path is not accepted over HTTP: send the entities inline "
                "or start the server with --kb FILE"
            )
        return value


class BatchRequest(StrictModel):
    """Several answers checked in one request (at most ``service.max_batch``)."""

    model_config = ConfigDict(extra="forbid")

    items: list[CheckRequest]


class BatchResponse(BaseModel):
    """The reports, in the order of ``items``."""

    reports: list[GuardReport]


class ReportList(BaseModel):
    """One page of stored checks, newest first."""

    total: int
    limit: int
    offset: int
    next_offset: int | None
    items: list[ReportSummary]


class ThresholdPoint(BaseModel):
    rs: float
    """Retrieval score."""
    t: float
    """T(rs)."""


class Thresholds(BaseModel):
    """The decision thresholds this server uses, and T(rs) sampled for drawing."""

    adaptive: AdaptiveThreshold
    """Cw-CONLI parameters: T(rs) = t_low - (t_low - t_high) * sigmoid(steepness * (rs - midpoint))."""
    bands: HandlingThresholds
    """Recommendation bands (lower bounds of accept, flag, correct, regenerate)."""
    policy: str
    curve: list[ThresholdPoint]
    at: ThresholdPoint | None = None
    """T at the ``rs`` query parameter, when one was given."""


class Health(BaseModel):
    status: Literal["ok", "ready", "loading", "failed", "saturated"]
    error: str | None = None
    store: str | None = None
    """Where the report store is (a file, or a PostgreSQL URL without its password)."""
    checks_held: int | None = None
    """Check requests running or waiting now (``/readyz``)."""
    max_held: int | None = None
    """Check requests held at most (``max_concurrent_checks + max_queue``); more are a 503."""


class ErrorItem(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ErrorBody(BaseModel):
    """The body of a 4xx answer (the same shape as FastAPI's validation errors)."""

    detail: list[ErrorItem] | str = Field(description="what is wrong, and where")
