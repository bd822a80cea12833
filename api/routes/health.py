"""``GET /healthz`` (no auth) and ``GET /metrics`` (Prometheus text; viewer scope)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from backbone.api.auth import StoreDep, Viewer
from backbone.api.schemas import Health

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, summary="Liveness and database check (no auth)")
def get_health(request: Request, store: StoreDep) -> Health:
    """``ok`` when the database answers."""
    from backbone import __version__

    store.count_jobs_by_status()
    return Health(status="ok", version=__version__, database=store.engine.dialect.name,
                  jobs_running=request.app.state.jobs.running_count())


@router.get("/metrics", response_class=PlainTextResponse, summary="Prometheus metrics (viewer scope)",
            responses={200: {"content": {"text/plain": {}}}})
def get_metrics(request: Request, store: StoreDep, _who: Viewer) -> PlainTextResponse:
    """Request counts by route and status, a latency histogram, jobs by status, busy workers."""
    text = request.app.state.metrics.render(store.count_jobs_by_status(), request.app.state.jobs.running_count())
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")
