"""The FastAPI application: ``create_app(settings)`` builds it; nothing heavy happens at import.

Front door only: routes validate input, talk to the store and hand work to the job manager,
which runs :func:`backbone.solver.tasks.run_task` in worker processes. Every error is an RFC 9457
problem document (``application/problem+json``) with an ``errors`` list.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backbone.api.compression import JsonCompression
from backbone.api.contract import SafeJSONResponse, allowed_methods, finish_openapi
from backbone.api.docs_pages import install_docs_pages
from backbone.api.guards import BodyDeadline, HeaderSizeLimit, SecurityHeaders
from backbone.api.isolation import DocumentLimitError, DocumentWorkers, WorkersBusyError
from backbone.api.jobs import JobManager, OptionsTooLargeError, error_document
from backbone.api.limits import FailedAuthLimiter
from backbone.api.oidc import OidcVerifier
from backbone.api.oidc_login import OidcLogin
from backbone.api.problems import PROBLEM_JSON, problem_response  # noqa: F401 - re-exported
from backbone.api.resource_errors import STORAGE_RETRY_AFTER_S, storage_document, storage_failure
from backbone.api.result_store import open_result_store
from backbone.api.settings import Settings
from backbone.api.store import ConflictError, GoneError, QueueFullError, QuotaExceededError, Store
from backbone.api.worker import QueueDispatcher

if TYPE_CHECKING:
    from backbone.solver.tasks import Task

logger = logging.getLogger(__name__)

def _titles(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


class BodySizeLimit:
    """Answer 413 to request bodies larger than ``limit`` bytes (declared or streamed)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await problem_response(413, "Content Too Large",
                                   f"request body of {int(declared)} bytes exceeds the limit of {self.limit}")(
                scope, receive, send)
            return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return msg

        async def tracking_send(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await problem_response(413, "Content Too Large",
                                       f"request body exceeds the limit of {self.limit} bytes")(scope, receive, send)


class _TooLarge(Exception):
    pass


HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods counted under their own name; any other method is counted as ``other``."""


class Metrics:
    """Prometheus metrics (``prometheus_client``, one registry per app) with bounded labels.

    Labels take values from fixed sets only: the method (:data:`HTTP_METHODS` or ``other``), the
    route template (or ``unmatched``) and the status code, so no request can add series at will.
    """

    BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("backbone_http_requests", "HTTP requests by method, route template and status.",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram("backbone_http_request_duration_seconds", "HTTP request latency.",
                                 ["method", "route"], buckets=self.BUCKETS, registry=self.registry)
        self.jobs = Gauge("backbone_jobs", "Jobs in the store by status.", ["status"], registry=self.registry)
        self.workers_busy = Gauge("backbone_job_workers_busy", "Job processes running now: this server's own "
                                  "(BACKBONE_JOB_EXECUTION=inline), or every queue worker's (queue: the database's "
                                  "running jobs).", registry=self.registry)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one request (``route`` is a template of the app, or ``unmatched``)."""
        method = method if method in HTTP_METHODS else "other"
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)

    def render(self, jobs_by_status: Mapping[str, int], workers_busy: int) -> str:
        """The Prometheus text exposition, with the job gauges set to the given values."""
        from prometheus_client import generate_latest

        for status, n in jobs_by_status.items():
            self.jobs.labels(status).set(n)
        self.workers_busy.set(workers_busy)
        return generate_latest(self.registry).decode("utf-8")


class MetricsMiddleware:
    """Time every HTTP request and count it under its route template."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = [500]

        async def capture(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                status[0] = int(msg["status"])
            await send(msg)

        try:
            await self.app(scope, receive, capture)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None)
            template = template if isinstance(template, str) else "unmatched"  # app route templates only
            self.metrics.observe(scope["method"], template, status[0], time.perf_counter() - t0)


def install_error_handlers(app: FastAPI) -> None:
    """Every 4xx/5xx as problem details, FastAPI's own validation errors and 404s included."""
    from backbone.errors import BackboneError

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        unreadable = body_number_problem(exc)
        if unreadable is not None:
            return problem_response(422, "Invalid request", f"body: {unreadable['message']}", errors=[unreadable],
                                    instance=request.url.path)
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"no route {request.url.path}"
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # every method of the path, not only those of the first route matched
            headers["Allow"] = allowed_methods(request)
        return problem_response(exc.status_code, _titles(exc.status_code), detail, headers=headers,
                                instance=request.url.path)

    @app.exception_handler(RequestValidationError)
    async def request_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = []
        for e in exc.errors():
            loc = [str(p) for p in e.get("loc", ())]
            where = loc[0] if loc else ""
            errors.append({"file": "", "table": where, "record": "", "field": ".".join(loc[1:]) or where,
                           "message": str(e.get("msg", "invalid"))})
        detail = "; ".join(f"{e['table']}.{e['field']}: {e['message']}" for e in errors)
        return problem_response(422, "Invalid request", detail, errors=errors, instance=request.url.path)

    async def problem(request: Request, exc: Exception) -> JSONResponse:
        """Every error class that declares its ``http_status`` (and ``title``): one handler, no status table."""
        doc = error_document(exc)
        return problem_response(doc["status"], doc["title"], doc["detail"], doc["errors"],
                                headers=getattr(exc, "headers", None), instance=request.url.path)

    for error_class in (BackboneError, GoneError, ConflictError, OptionsTooLargeError, QueueFullError,
                        QuotaExceededError, DocumentLimitError, WorkersBusyError):
        app.add_exception_handler(error_class, problem)

    async def storage_or_internal(request: Request, exc: Exception) -> JSONResponse:
        """A storage failure (disk full, quota, read-only, I/O error) is a 503 with ``Retry-After``: the
        request's transaction rolled back and no file was half-written, so the client may simply retry.
        Anything else is a 500 without details (the server log has them)."""
        reason = storage_failure(exc)
        if reason is not None:
            logger.error("storage failure on %s %s: %s: %s", request.method, request.url.path, type(exc).__name__,
                         reason)
            doc = storage_document(reason)
            return problem_response(503, doc["title"], doc["detail"], headers={"Retry-After": str(STORAGE_RETRY_AFTER_S)},
                                    instance=request.url.path)
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem_response(500, "Internal Server Error", f"{type(exc).__name__}", instance=request.url.path)

    from sqlalchemy.exc import DBAPIError

    for storage_class in (OSError, DBAPIError):  # handled here: not re-raised into the server's log as a crash
        app.add_exception_handler(storage_class, storage_or_internal)
    app.add_exception_handler(Exception, storage_or_internal)


def body_number_problem(exc: StarletteHTTPException) -> dict[str, str] | None:
    """The problem of a JSON body FastAPI could not decode for a reason JSON syntax does not explain (an
    integer longer than Python's integer-string limit raises ``ValueError``, not ``JSONDecodeError``), or
    None. Such a body is a 422 naming the problem, as the same number in YAML is."""
    cause = exc.__cause__
    if exc.status_code != 400 or not isinstance(cause, ValueError) or isinstance(cause, UnicodeError):
        return None
    if "integer string conversion" in str(cause):
        import sys

        message = f"a number in the body has more than {sys.get_int_max_str_digits()} digits"
    else:
        message = f"the body is not valid JSON ({type(cause).__name__})"
    return {"file": "request body", "table": "body", "record": "", "field": "", "message": message}


def create_app(settings: Settings | None = None, task_registry: Mapping[str, Task | str] | None = None) -> FastAPI:
    """Build the API application.

    Parameters
    ----------
    settings
        Storage, limits and workers (default: from ``BACKBONE_*`` environment variables).
    task_registry
        Extra task kinds (``kind -> Task`` or ``"module:function"``) for tests; shipped kinds come from
        :data:`backbone.solver.tasks.registry.TASKS`.
    """
    from backbone import __version__
    from backbone.api.routes import (
        admin,
        compare,
        health,
        identity,
        job_events,
        jobs,
        roadmap_maps,
        scenarios,
    )
    from backbone.api.web import install_workspace

    settings = settings or Settings()
    metrics = Metrics()
    results = open_result_store(settings.result_store, settings.data_dir / "results")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings.ensure_dirs()
        store = Store(settings.resolved_database_url(), token_max_lifetime_days=settings.token_max_lifetime_days)
        if settings.run_migrations:
            store.upgrade()
        else:
            store.check_schema()  # release N needs schema N (docs/deploy.md "Rolling upgrades")
        # queue mode: this server only enqueues; `backbone worker` processes run the jobs (docs/deploy.md)
        manager = (QueueDispatcher if settings.job_execution == "queue" else JobManager)(store, settings, task_registry,
                                                                                          results)
        manager.start()
        app.state.store, app.state.jobs = store, manager
        logger.info("backbone API ready (data dir %s, results in %s)", settings.data_dir, results.describe())
        try:
            yield
        finally:
            manager.stop()
            store.dispose()

    app = FastAPI(
        title="backbone planning API",
        version=__version__,
        summary="Scenarios, planning jobs (TE, placement, failures, design, plan) and maps of a global AI backbone.",
        description="All endpoints except `/healthz` and `/v1/auth/config` need `Authorization: Bearer <token>` "
                    "(create one with `backbone token create --scope planner`). Errors are RFC 9457 problem "
                    "details. See docs/api.md.",
        lifespan=lifespan,
        docs_url=None,  # /docs and /redoc are served from packaged assets (install_docs_pages), not from a CDN
        redoc_url=None,
        default_response_class=SafeJSONResponse,
        responses={401: {"model": _problem_model(), "description": "Missing or invalid token"},
                   422: {"model": _problem_model(), "description": "Invalid input"}},
    )
    app.state.settings = settings
    app.state.results = results  # BACKBONE_RESULT_STORE: the results folder or an object store
    app.state.metrics = metrics
    app.state.oidc = OidcVerifier(settings) if OidcVerifier.configured(settings) else None
    app.state.oidc_login = OidcLogin(settings)  # the workspace's single sign-on (GET v1/auth/config, its CSP)
    app.state.auth_limiter = FailedAuthLimiter(settings.auth_failures_per_minute)
    app.state.documents = DocumentWorkers(settings)
    install_error_handlers(app)
    finish_openapi(app)
    install_docs_pages(app)
    app.include_router(health.router)
    app.include_router(scenarios.router)
    app.include_router(jobs.router)
    app.include_router(job_events.router)
    app.include_router(compare.router)
    app.include_router(roadmap_maps.router)
    app.include_router(admin.router)
    app.include_router(identity.router)
    install_workspace(app)
    # innermost: compresses the app's own JSON answers (docs/api.md "Compression"), never the guards' problems
    app.add_middleware(JsonCompression, minimum_bytes=settings.gzip_min_bytes)
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes)
    app.add_middleware(HeaderSizeLimit, limit=settings.max_header_bytes)
    app.add_middleware(BodyDeadline, timeout_s=settings.body_timeout_s, min_bytes_per_s=settings.body_min_bytes_per_s,
                       drain_limit=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_middleware(SecurityHeaders)
    return app


def _problem_model() -> type:
    from backbone.api.schemas import ProblemDetails

    return ProblemDetails
