"""The FastAPI app behind ``guardrail serve``: the check API, stored reports, metrics, the page.

Models load once, in a warm-up check started by the lifespan (``/readyz`` is 503 until it has
finished); every check runs in a worker thread (at most ``max_concurrent_checks`` at a time), so
the event loop keeps answering. Bad input is a 422 naming the field; a POST body not sent as
JSON (``content-type`` missing or not ``application/json``, as ``curl -d @file`` sends) a 415;
a missing or wrong bearer token (when ``$GUARDRAIL_API_TOKEN`` is set) a 401. ``/docs``
(Swagger UI) and ``/redoc`` load their scripts and styles from this server (the
``fastapi-offline`` package ships them), so they work with no network. When the documentation
site has been built (``mkdocs build`` writes ``site/`` in the checkout; ``$GUARDRAIL_SITE_DIR``
or ``create_app(guide_dir=...)`` names another folder), it is served under ``/guide/``.

Example::

    app = create_app(GuardrailConfig.load(None), store=ReportStore("results.sqlite"))
    uvicorn.run(app, host="127.0.0.1", port=8000)
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles

from guardrail.config import GuardrailConfig
from guardrail.errors import GuardrailError, InputError, KnowledgeBaseError
from guardrail.inputs import GuardInput
from guardrail.report import Action, GuardReport, VerdictLabel
from guardrail.service.admission import Admission, AdmissionMiddleware
from guardrail.service.auth import require_token
from guardrail.service.limits import BodyLimitMiddleware, MetricsMiddleware
from guardrail.service.metrics import CONTENT_TYPE, Metrics
from guardrail.service.models import (
    BatchRequest,
    BatchResponse,
    CheckRequest,
    ErrorBody,
    Health,
    ReportList,
    ThresholdPoint,
    Thresholds,
)
from guardrail.service.settings import ServiceSettings
from guardrail.store.sqlite import ReportStore, StoredReport, StoreError, check_session_id

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
SITE_ENV = "GUARDRAIL_SITE_DIR"
#: Where ``mkdocs build`` writes the documentation site in a checkout (mkdocs.yml ``site_dir``).
CHECKOUT_SITE = Path(__file__).resolve().parents[2] / "site"
WARMUP_INPUT: dict[str, Any] = {
    "query": "When is the meeting?",
    "response": "The meeting is at 2pm on Monday.",
    "passages": [{"text": "The meeting with John is at 2pm on Monday in room 4B.", "score": 0.8}],
}
ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or wrong bearer token"},
    413: {"model": ErrorBody, "description": "request body too large"},
    422: {"model": ErrorBody, "description": "unusable input; `loc` names the field"},
}
JSON_ONLY = "send JSON with content-type application/json"
POST_ERRORS: dict[int | str, dict[str, Any]] = {
    415: {"model": ErrorBody, "description": f"the body is not JSON: {JSON_ONLY}"},
}


class FieldError(Exception):
    """Unusable input at ``loc`` (answered with 422)."""

    def __init__(self, loc: Sequence[str | int], msg: str, kind: str = "value_error") -> None:
        super().__init__(msg)
        self.loc = list(loc)
        self.msg = msg
        self.kind = kind


class ServiceState:
    """What the routes share: the guardrail, the store, settings, metrics and readiness."""

    def __init__(
        self,
        guard: Any,
        store: ReportStore | None,
        settings: ServiceSettings,
        knowledge_base: Any = None,
    ) -> None:
        self.guard = guard
        self.store = store
        self.settings = settings
        self.knowledge_base = knowledge_base
        self.metrics = Metrics()
        self.status = "loading"
        self.error: str | None = None
        self.limiter: anyio.CapacityLimiter | None = None
        self.admission = Admission(settings.max_concurrent_checks, settings.max_queue)

    @property
    def config(self) -> GuardrailConfig:
        config: GuardrailConfig = self.guard.config
        return config

    def validate(self, req: CheckRequest, loc: Sequence[str | int] = ("body",)) -> GuardInput:
        """Apply the limits (422 naming the field) and the server's knowledge base."""
        if not req.response.strip():
            raise FieldError([*loc, "response"], "the response is empty: there is nothing to check")
        if len(req.response) > self.config.max_response_chars:
            raise FieldError(
                [*loc, "response"],
                f"the response has {len(req.response)} characters, more than "
                f"max_response_chars={self.config.max_response_chars}",
            )
        if len(req.passages) > self.settings.max_passages:
            raise FieldError(
                [*loc, "passages"],
                f"{len(req.passages)} passages, more than max_passages="
                f"{self.settings.max_passages}",
            )
        evidence = sum(len(p.text) for p in req.passages)
        if evidence > self.config.max_evidence_chars:
            raise FieldError(
                [*loc, "passages"],
                f"the passages have {evidence} characters, more than max_evidence_chars="
                f"{self.config.max_evidence_chars}",
            )
        if req.session_id is not None:
            try:
                check_session_id(req.session_id)
            except InputError as exc:
                raise FieldError([*loc, "session_id"], str(exc)) from exc
        if req.turn_id is not None and req.turn_id < 0:
            raise FieldError([*loc, "turn_id"], "turn_id must be >= 0")
        data: GuardInput = req
        if req.knowledge_base is None and self.knowledge_base is not None:
            data = req.model_copy(update={"knowledge_base": self.knowledge_base})
        return data

    async def check(self, data: GuardInput, loc: Sequence[str | int] = ("body",)) -> dict[str, Any]:
        """Run one check in a worker thread, store it, count it; the report as JSON."""
        [report] = await self.check_many([data], [loc])
        return report

    async def check_many(
        self, inputs: list[GuardInput], locs: list[Sequence[str | int]]
    ) -> list[dict[str, Any]]:
        """Check inputs with ``Guardrail.batch`` in one worker thread, then store them in order."""
        limiter = self.limiter
        assert limiter is not None, "the app's lifespan has not started"
        batch_config: Any = {"max_concurrency": self.settings.max_concurrent_checks}

        def run() -> list[Any]:
            if len(inputs) == 1:  # invoke: errors raise as themselves
                return [self.guard.invoke(inputs[0])]
            return list(self.guard.batch(inputs, batch_config, return_exceptions=True))

        self.metrics.add_gauge("guardrail_checks_in_progress", len(inputs))
        start = time.perf_counter()
        try:
            results: list[Any] = await anyio.to_thread.run_sync(run, limiter=limiter)
        except GuardrailError as exc:
            results = [exc]
        finally:
            self.metrics.add_gauge("guardrail_checks_in_progress", -len(inputs))
        elapsed = (time.perf_counter() - start) / max(1, len(inputs))
        for result, loc in zip(results, locs, strict=False):
            if isinstance(result, KnowledgeBaseError):
                raise FieldError([*loc, "knowledge_base"], str(result)) from result
            if isinstance(result, InputError):
                raise FieldError(list(loc), str(result), "input_error") from result
            if isinstance(result, BaseException):
                raise result
        out = []
        for data, report in zip(inputs, results, strict=True):
            self.metrics.record_check(
                report.recommendation.action, report.verdict.label.value, elapsed
            )
            out.append(await self._store(data, report))
        return out

    async def _store(self, data: GuardInput, report: GuardReport) -> dict[str, Any]:
        """The report as stored; when the write fails, the report unstored (no ``Location``:
        the check's answer is not held back by the store)."""
        if self.store is None:
            return report.model_dump(mode="json")
        try:
            stored: StoredReport = await anyio.to_thread.run_sync(self.store.save, data, report)
        except StoreError:
            logger.exception("could not store the report")
            self.metrics.inc("guardrail_store_writes_total", outcome="error")
            return report.model_dump(mode="json")
        self.metrics.inc("guardrail_store_writes_total", outcome="ok")
        return stored.report

    async def warm_up(self) -> None:
        """Load the models with one check; ``status`` becomes ``ready`` or ``failed``."""
        try:
            if self.settings.warmup:
                await anyio.to_thread.run_sync(self.guard.invoke, WARMUP_INPUT)
            self.status = "ready"
            self.metrics.set_gauge("guardrail_ready", 1)
            logger.info("guardrail service ready")
        except Exception as exc:  # reported by /readyz, not swallowed
            self.status = "failed"
            self.error = f"{type(exc).__name__}: {exc}"
            logger.exception("warm-up check failed")


def is_json(content_type: str | None) -> bool:
    """Whether a ``content-type`` header names JSON (``application/json``, ``…+json``)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def require_json(request: Request) -> None:
    """A POST body must be sent as JSON: else a one-line 415 (before any body validation).

    No body at all stays the 422 naming the missing body (there is no content to label)."""
    content_type = request.headers.get("content-type")
    if not is_json(content_type) and await request.body():
        got = f"got {content_type}" if content_type else "no content-type was sent"
        raise FieldError(["header", "content-type"], f"{JSON_ONLY} ({got})", "unsupported_media")


def _store_or_404(state: ServiceState) -> ReportStore:
    if state.store is None:
        raise FieldError(["store"], "this server keeps no reports (start it with --store FILE)")
    return state.store


def _location(report: dict[str, Any]) -> dict[str, str]:
    session, turn = report.get("session_id"), report.get("turn_id")
    if session is None or turn is None:
        return {}
    return {"Location": f"/v1/reports/{session}/{turn}"}


def guide_site(guide_dir: str | Path | None = None) -> Path | None:
    """The built documentation site to serve under ``/guide/``: ``guide_dir``, else
    ``$GUARDRAIL_SITE_DIR``, else the checkout's ``site/`` — when it holds an ``index.html``."""
    folder = Path(guide_dir or os.environ.get(SITE_ENV) or CHECKOUT_SITE)
    return folder if (folder / "index.html").is_file() else None


def create_app(
    config: GuardrailConfig | None = None,
    *,
    store: ReportStore | None = None,
    settings: ServiceSettings | None = None,
    guard: Any = None,
    knowledge_base: Any = None,
    guide_dir: str | Path | None = None,
) -> FastAPI:
    """The service app. ``guard`` defaults to ``Guardrail(config)``; ``store`` to none; the
    documentation site is served under ``/guide/`` when built (see :func:`guide_site`)."""
    from fastapi_offline import FastAPIOffline  # Swagger UI / ReDoc assets without a CDN

    if guard is None:
        from guardrail.pipeline import Guardrail

        guard = Guardrail(config)
    state = ServiceState(guard, store, settings or ServiceSettings.from_env(), knowledge_base)
    app: FastAPI = FastAPIOffline(
        title="guardrail",
        summary="Check an LLM's answer before a user sees it.",
        version=_version(),
        lifespan=_lifespan(state),
        static_url="/docs-static",
    )
    app.state.guardrail = state
    auth = [Depends(require_token(state.settings.api_token))]
    api = APIRouter(prefix="/v1", dependencies=auth, responses=ERRORS)
    _add_error_handlers(app)
    _add_check_routes(api, state)
    _add_report_routes(api, state)
    _add_threshold_route(api, state)
    app.include_router(api)
    _add_probe_routes(app, state, auth)
    _add_pages(app, guide_dir)
    _add_middleware(app, state)
    return app


def _lifespan(state: ServiceState) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The app's lifespan: make the check limiter, then warm the models up in the background."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.limiter = anyio.CapacityLimiter(state.settings.max_concurrent_checks)
        task = asyncio.create_task(state.warm_up())
        try:
            yield
        finally:
            task.cancel()

    return lifespan


def _add_error_handlers(app: FastAPI) -> None:
    """Errors as JSON: a field error 404/415/422, bad input 422, a failed check 503."""

    @app.exception_handler(FieldError)
    async def field_error(request: Request, exc: FieldError) -> JSONResponse:
        status = (
            404
            if exc.loc == ["store"] or exc.kind == "not_found"
            else 415
            if exc.kind == "unsupported_media"
            else 422
        )
        return JSONResponse(
            {"detail": [{"loc": exc.loc, "msg": exc.msg, "type": exc.kind}]}, status_code=status
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        detail = [
            {
                "loc": list(e.get("loc", ())),
                "msg": str(e.get("msg", "")),
                "type": str(e.get("type")),
            }
            for e in exc.errors()
        ]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(GuardrailError)
    async def guardrail_error(request: Request, exc: GuardrailError) -> JSONResponse:
        logger.error("check failed: %s", exc)
        return JSONResponse({"detail": f"{type(exc).__name__}: {exc}"}, status_code=503)


def _add_check_routes(api: APIRouter, state: ServiceState) -> None:
    """``POST /v1/check`` and ``POST /v1/check/batch``."""
    json_only = [Depends(require_json)]

    @api.post(
        "/check",
        response_model=GuardReport,
        summary="Check one answer",
        dependencies=json_only,
        responses=POST_ERRORS,
    )
    async def check(req: CheckRequest) -> Response:
        report = await state.check(state.validate(req))
        return JSONResponse(report, headers=_location(report))

    @api.post(
        "/check/batch",
        response_model=BatchResponse,
        summary="Check several answers",
        dependencies=json_only,
        responses=POST_ERRORS,
    )
    async def check_batch(req: BatchRequest) -> Response:
        if len(req.items) > state.settings.max_batch:
            raise FieldError(
                ["body", "items"],
                f"{len(req.items)} items, more than max_batch={state.settings.max_batch}",
            )
        locs: list[Sequence[str | int]] = [("body", "items", i) for i in range(len(req.items))]
        inputs = [state.validate(item, loc) for item, loc in zip(req.items, locs, strict=True)]
        reports = await state.check_many(inputs, locs) if inputs else []
        return JSONResponse({"reports": reports})


def _add_report_routes(api: APIRouter, state: ServiceState) -> None:
    """``GET /v1/reports/{session_id}/{turn_id}`` and ``GET /v1/reports`` (the stored checks)."""

    @api.get("/reports/{session_id}/{turn_id}", response_model=StoredReport)
    async def get_report(session_id: str, turn_id: int, attempt: int | None = None) -> Response:
        store = _store_or_404(state)
        try:
            check_session_id(session_id)
        except InputError as exc:
            raise FieldError(["path", "session_id"], str(exc)) from exc
        if turn_id < 0:
            raise FieldError(["path", "turn_id"], "turn_id must be >= 0")
        found = await anyio.to_thread.run_sync(store.get, session_id, turn_id, attempt)
        if found is None:
            raise FieldError(
                ["path", "turn_id"], f"nothing stored for {session_id}/{turn_id}", "not_found"
            )
        return JSONResponse(found.model_dump(mode="json"))

    @api.get("/reports", response_model=ReportList, summary="Stored checks, newest first")
    async def list_reports(
        session_id: str | None = None,
        action: Action | None = None,
        verdict: VerdictLabel | None = None,
        since: datetime | None = None,
        limit: int = Query(50, ge=1, le=500),
        offset: int = Query(0, ge=0),
    ) -> Response:
        store = _store_or_404(state)

        def search() -> Any:
            return store.search(
                session_id=session_id,
                action=action.value if action else None,
                verdict=verdict.value if verdict else None,
                since=since,
                limit=limit,
                offset=offset,
            )

        page = await anyio.to_thread.run_sync(search)
        body = ReportList(
            total=page.total,
            limit=page.limit,
            offset=page.offset,
            next_offset=page.next_offset,
            items=page.items,
        )
        return JSONResponse(body.model_dump(mode="json"))


def _add_threshold_route(api: APIRouter, state: ServiceState) -> None:
    """``GET /v1/thresholds``: the adaptive cut-off curve and the bands in use."""

    @api.get("/thresholds", response_model=Thresholds, summary="T(rs) and the bands in use")
    async def thresholds(rs: float | None = Query(None, ge=-1.0, le=1.0)) -> Thresholds:
        adaptive = state.config.hallucination.threshold
        curve = [
            ThresholdPoint(rs=x / 100, t=round(adaptive.threshold(x / 100), 5)) for x in range(101)
        ]
        at = ThresholdPoint(rs=rs, t=adaptive.threshold(rs)) if rs is not None else None
        return Thresholds(
            adaptive=adaptive,
            bands=state.config.thresholds,
            policy=state.config.hallucination.policy,
            curve=curve,
            at=at,
        )


def _add_probe_routes(app: FastAPI, state: ServiceState, auth: list[Any]) -> None:
    """``/metrics`` (behind the token), ``/healthz`` and ``/readyz``."""

    @app.get("/metrics", dependencies=auth, response_class=PlainTextResponse)
    async def metrics() -> Response:
        return Response(state.metrics.render(), media_type=CONTENT_TYPE)

    @app.get("/healthz", response_model=Health)
    async def healthz() -> Health:
        return Health(status="ok")

    @app.get("/readyz", response_model=Health, responses={503: {"model": Health}})
    async def readyz() -> Response:
        gate = state.admission
        status = "saturated" if state.status == "ready" and gate.saturated else state.status
        body = Health(
            status=status,  # type: ignore[arg-type]
            error=state.error,
            store=state.store.where if state.store else None,
            checks_held=gate.held,
            max_held=gate.capacity,
        )
        return JSONResponse(body.model_dump(), status_code=200 if status == "ready" else 503)


def _add_pages(app: FastAPI, guide_dir: str | Path | None) -> None:
    """The check page at ``/``, its files under ``/static`` and the built guide under ``/guide``."""

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    guide = guide_site(guide_dir)
    if guide is not None:
        app.mount("/guide", StaticFiles(directory=guide, html=True), name="guide")


def _add_middleware(app: FastAPI, state: ServiceState) -> None:
    """Body size limit, admission (503 with ``retry-after`` when the server is saturated) and
    request metrics; the one added last runs first."""
    app.add_middleware(BodyLimitMiddleware, max_bytes=state.settings.max_body_bytes)
    app.add_middleware(
        AdmissionMiddleware,
        admission=state.admission,
        metrics=state.metrics,
        retry_after_s=state.settings.retry_after_s,
        max_body_bytes=state.settings.max_body_bytes,
    )
    app.add_middleware(MetricsMiddleware, metrics=state.metrics)


def _version() -> str:
    from guardrail import __version__

    return __version__
