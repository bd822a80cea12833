"""``GET /healthz`` (no auth) and ``GET /metrics`` (Prometheus text; viewer scope)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from backbone.api.auth import StoreDep, Viewer
from backbone.api.schemas import Health

router = APIRouter(tags=["health"])


def jobs_running(request: Request, counts: dict[str, int]) -> int:
    """Job processes computing now: this server's own when it runs jobs inline, every worker's (the database's
    ``running`` count, ``counts``) when ``BACKBONE_JOB_EXECUTION=queue`` (the server itself runs none)."""
    if request.app.state.settings.job_execution == "queue":
        return int(counts.get("running", 0))
    return int(request.app.state.jobs.running_count())


@router.get("/healthz", response_model=Health, summary="Liveness and database check (no auth)")
def get_health(request: Request, store: StoreDep) -> Health:
    """``ok`` when the database answers."""
    from backbone import __version__

    counts = store.count_jobs_by_status()
    return Health(status="ok", version=__version__, database=store.engine.dialect.name,
                  jobs_running=jobs_running(request, counts))


@router.get("/metrics", response_class=PlainTextResponse, summary="Prometheus metrics (viewer scope)",
            responses={200: {"content": {"text/plain": {}}}})
def get_metrics(request: Request, store: StoreDep, _who: Viewer) -> PlainTextResponse:
    """Request counts by route and status, a latency histogram, jobs by status, busy workers."""
    counts = store.count_jobs_by_status()
    text = request.app.state.metrics.render(counts, jobs_running(request, counts))
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")
