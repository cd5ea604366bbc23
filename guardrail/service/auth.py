"""Optional bearer-token auth: ``Authorization: Bearer <GUARDRAIL_API_TOKEN>``.

Tokens are compared with :func:`hmac.compare_digest` (constant time). Without a configured
token every request passes; with one, a missing or wrong token is a 401 naming the scheme.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from fastapi import HTTPException, Request


def token_matches(given: str | None, expected: str) -> bool:
    """Whether ``given`` equals ``expected``, in time independent of where they differ."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def bearer_token(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer …`` header, or ``None``."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def require_token(expected: str | None) -> Callable[[Request], None]:
    """A FastAPI dependency that enforces ``expected`` (a no-op when it is ``None``)."""

    def check(request: Request) -> None:
        if expected is None:
            return
        if not token_matches(bearer_token(request), expected):
            raise HTTPException(
                status_code=401,
                detail="missing or invalid bearer token (set Authorization: Bearer <token>)",
                headers={"WWW-Authenticate": "Bearer"},
            )

    return check
