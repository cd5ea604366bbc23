"""Backpressure: at most ``max_inflight`` checks run and ``max_queue`` wait; the rest get a 503.

:class:`AdmissionMiddleware` counts the check requests (``POST /v1/check`` and
``/v1/check/batch``) the server holds — running in a worker thread or waiting for one. A request
past ``max_inflight + max_queue`` is answered ``503`` with ``Retry-After`` at once, before its
body is read, so a flood costs neither memory nor a worker: what the server holds stays
bounded however many clients send. ``/readyz`` reports the counts and says ``saturated`` while
the queue is full, so a load balancer can send traffic elsewhere.

Example::

    gate = Admission(max_inflight=2, max_queue=8)
    app.add_middleware(AdmissionMiddleware, admission=gate, retry_after_s=1)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from guardrail.service.limits import ASGIApp, Receive, Scope, Send, send_json
from guardrail.service.metrics import Metrics

logger = logging.getLogger(__name__)

#: Routes whose requests run a check (the ones that are counted and refused when full).
CHECK_PATHS = frozenset({"/v1/check", "/v1/check/batch"})


@dataclass
class Admission:
    """The counter of check requests held: ``held`` of at most ``max_inflight + max_queue``.

    The event loop is the only caller, so no lock is needed (enter and leave never await).
    """

    max_inflight: int
    max_queue: int
    held: int = 0
    refused: int = 0

    @property
    def capacity(self) -> int:
        """Check requests held at most (running plus waiting)."""
        return self.max_inflight + self.max_queue

    def try_enter(self) -> bool:
        """Take a place, or ``False`` (and count a refusal) when every place is taken."""
        if self.held >= self.capacity:
            self.refused += 1
            return False
        self.held += 1
        return True

    def leave(self) -> None:
        """Give back a place taken by :meth:`try_enter`."""
        self.held = max(0, self.held - 1)

    @property
    def queued(self) -> int:
        """Requests held beyond the ones that can run at once."""
        return max(0, self.held - self.max_inflight)

    @property
    def saturated(self) -> bool:
        """Whether the next check request would be refused."""
        return self.held >= self.capacity


class AdmissionMiddleware:
    """Refuse a check request with 503 and ``Retry-After`` when :class:`Admission` is full."""

    def __init__(
        self,
        app: ASGIApp,
        admission: Admission,
        metrics: Metrics,
        retry_after_s: int = 1,
        max_body_bytes: int | None = None,
    ) -> None:
        self.app = app
        self.admission = admission
        self.metrics = metrics
        self.retry_after = str(retry_after_s).encode()
        self.max_body_bytes = max_body_bytes

    def _declared_too_large(self, scope: Scope) -> bool:
        """Whether the request says it is over ``max_body_bytes``: the body limit answers it
        413 from the header alone, saturated or not, without taking a place."""
        if self.max_body_bytes is None:
            return False
        return any(
            name == b"content-length" and value.isdigit() and int(value) > self.max_body_bytes
            for name, value in scope.get("headers") or []
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("path") not in CHECK_PATHS
            or self._declared_too_large(scope)
        ):
            await self.app(scope, receive, send)
            return
        gate = self.admission
        if not gate.try_enter():
            self.metrics.inc("guardrail_checks_refused_total", reason="saturated")
            await send_json(
                send,
                503,
                {
                    "detail": [
                        {
                            "loc": ["server"],
                            "msg": f"the server is saturated: {gate.max_inflight} checks running "
                            f"and {gate.max_queue} waiting (max_inflight, max_queue); retry later",
                            "type": "saturated",
                        }
                    ]
                },
                headers=[(b"retry-after", self.retry_after)],
            )
            return
        self.metrics.set_gauge("guardrail_checks_held", gate.held)
        try:
            await self.app(scope, receive, send)
        finally:
            gate.leave()
            self.metrics.set_gauge("guardrail_checks_held", gate.held)
