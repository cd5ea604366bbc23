"""The HTTP service: ``guardrail serve`` (FastAPI + uvicorn, the ``service`` extra).

``create_app(config, store=..., settings=...)`` builds the app; the API, metrics, limits and
auth live in the modules beside this one, the page in ``static/``. Importing this package loads
nothing: FastAPI is imported on first use of ``create_app``, with an install hint if missing.
"""

from __future__ import annotations

from typing import Any

from guardrail.errors import MissingDependencyError

__all__ = ["ServiceSettings", "create_app", "load_service_config"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        try:
            from guardrail.service.app import create_app
        except ModuleNotFoundError as exc:
            if exc.name in ("fastapi", "starlette", "anyio"):
                raise MissingDependencyError(exc.name, "service") from exc
            raise
        return create_app
    if name in ("ServiceSettings", "load_service_config"):
        from guardrail.service import settings

        return getattr(settings, name)
    raise AttributeError(f"module 'guardrail.service' has no attribute {name!r}")
