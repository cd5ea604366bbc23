"""Settings of the HTTP service, read from the ``service:`` section of the guardrail config file.

The rest of the file is the :class:`~guardrail.config.GuardrailConfig`, so one YAML file
configures both::

    profile: offline
    max_response_chars: 20000          # the guardrail's own limit (422 on /v1/check)
    service:
      max_body_bytes: 1000000
      max_passages: 50
      max_batch: 32
      max_concurrent_checks: 2          # --max-inflight
      max_queue: 32                     # --max-queue: more are a 503 with Retry-After

The bearer token is never read from a file: it comes from ``$GUARDRAIL_API_TOKEN``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guardrail.config import GuardrailConfig, read_config_file
from guardrail.errors import ConfigError

TOKEN_ENV = "GUARDRAIL_API_TOKEN"


class ServiceSettings(BaseModel):
    """Limits and switches of ``guardrail serve``."""

    model_config = ConfigDict(extra="forbid")

    max_body_bytes: int = Field(default=1_000_000, gt=0)
    """Larger request bodies are refused with 413 before they are parsed."""
    max_passages: int = Field(default=50, gt=0)
    """More passages in one check are a 422 on ``passages``."""
    max_batch: int = Field(default=32, gt=0)
    """More checks in one ``/v1/check/batch`` request are a 422 on ``items``."""
    max_concurrent_checks: int = Field(default=2, gt=0)
    """Checks running at once in the worker threads (``--max-inflight``); more wait their turn."""
    max_queue: int = Field(default=32, ge=0)
    """Check requests that may wait for a worker (``--max-queue``); past ``max_concurrent_checks
    + max_queue`` held, a check request is answered 503 with ``Retry-After`` at once."""
    retry_after_s: int = Field(default=1, ge=0)
    """Seconds a refused client is told to wait (the ``Retry-After`` header)."""
    warmup: bool = True
    """Run one check at start-up so the models are loaded before ``/readyz`` says ready."""
    api_token: str | None = Field(default=None, repr=False, exclude=True)
    """Bearer token every API request must carry (from ``$GUARDRAIL_API_TOKEN``)."""

    @classmethod
    def from_env(cls, **values: Any) -> ServiceSettings:
        """Settings with the token from ``$GUARDRAIL_API_TOKEN`` (empty = no auth)."""
        token = os.environ.get(TOKEN_ENV) or None
        return cls._validate({**values, "api_token": token})

    def with_values(self, **values: Any) -> ServiceSettings:
        """These settings with ``values`` changed (validated; the token kept)."""
        data = {**self.model_dump(), **values, "api_token": self.api_token}
        return self._validate(data)

    @classmethod
    def _validate(cls, data: dict[str, Any]) -> ServiceSettings:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"invalid service settings: {exc}") from exc


def load_service_config(
    source: str | Path | None,
) -> tuple[GuardrailConfig, ServiceSettings]:
    """Split a config file into the guardrail config and the ``service:`` settings."""
    if source is None:
        return GuardrailConfig.load(None), ServiceSettings.from_env()
    path = Path(source)
    data = read_config_file(path)
    service = data.pop("service", None) or {}
    if not isinstance(service, dict):
        raise ConfigError(f"{path}: 'service' must be a mapping")
    if "api_token" in service:
        raise ConfigError(f"{path}: set the API token in ${TOKEN_ENV}, not in the config file")
    return GuardrailConfig.load(data), ServiceSettings.from_env(**service)
