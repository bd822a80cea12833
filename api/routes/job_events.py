"""A job's progress as server-sent events: ``GET /v1/jobs/{id}/events`` (``text/event-stream``).

Authenticated and scoped like ``GET /v1/jobs/{id}`` (the same Bearer header, 404 for a job the caller does not
see); each ``job`` event carries the same :class:`~backbone.api.schemas.JobPublic` document, sent when the job's
status, progress or message changed. Bounded: the stream closes after the event that says the job ended, or after
:data:`EVENTS_MAX_S` (an ``end`` event says which), so no request holds a connection for ever; a client reconnects
or falls back to polling. Browsers' ``EventSource`` cannot send a header: the workspace reads the stream with
``fetch``.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from backbone.api.auth import StoreDep, Viewer
from backbone.api.routes.jobs import ERRORS, job_public
from backbone.api.store import GoneError, Principal, Store

router = APIRouter(prefix="/v1", tags=["jobs"])

EVENTS_MAX_S = 300.0
"""Longest a stream stays open (then an ``end`` event with ``reason: time cap``)."""
EVENTS_POLL_S = 0.5
"""How often the stream reads the job's row."""
EVENTS_KEEPALIVE_S = 15.0
"""A comment line after this long without an event (keeps proxies from closing an idle stream)."""
FINAL_STATUSES = frozenset({"succeeded", "failed", "cancelled"})


EVENT_SCHEMA: dict[str, Any] = {
    "type": "object", "description": "One server-sent event",
    "properties": {"event": {"type": "string", "enum": ["job", "end"]},
                   "data": {"type": "string", "description": "JSON: the JobPublic document (`job`), or `reason` "
                                                             "(finished, time cap, gone) with `status` or `max_s` (`end`)"},
                   "retry": {"type": "integer", "description": "Milliseconds a client waits before reconnecting"}}}
"""The OpenAPI schema of one event of the stream (its fields as an event-stream parser reads them)."""


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'), default=str)}\n\n".encode()


async def job_events(request: Request, store: Store, job_id: str, who: Principal,
                     max_s: float | None = None, poll_s: float = EVENTS_POLL_S) -> AsyncIterator[bytes]:
    """The events of one job: ``job`` (its public document) on every change, ``end`` (``reason``: ``finished``,
    ``time cap`` or ``gone``) last; ``max_s`` (default :data:`EVENTS_MAX_S`) caps the stream's length."""
    max_s = EVENTS_MAX_S if max_s is None else max_s
    started = quiet_since = time.monotonic()
    last: tuple[Any, ...] | None = None
    yield b"retry: 2000\n\n"
    while True:
        try:
            job = await run_in_threadpool(store.get_job, job_id, who)
        except GoneError:
            yield _event("end", {"reason": "gone"})
            return
        state = (job.status, job.progress, job.message)
        if state != last:
            last = state
            quiet_since = time.monotonic()
            yield _event("job", job_public(job).model_dump(mode="json"))
        if job.status in FINAL_STATUSES:
            yield _event("end", {"reason": "finished", "status": job.status})
            return
        if time.monotonic() - started >= max_s:
            yield _event("end", {"reason": "time cap", "max_s": max_s})
            return
        if time.monotonic() - quiet_since >= EVENTS_KEEPALIVE_S:
            quiet_since = time.monotonic()
            yield b": keep-alive\n\n"
        if await request.is_disconnected():
            return
        await asyncio.sleep(poll_s)


@router.get("/jobs/{job_id}/events",
            responses={**ERRORS, 200: {"content": {"text/event-stream": {"schema": EVENT_SCHEMA}},
                                       "description": "Server-sent events: `job` (the JobPublic document, on every "
                                                      "change of status, progress or message), then one `end` "
                                                      f"(`reason`: finished, time cap after {EVENTS_MAX_S:.0f} s, "
                                                      "or gone)"}},
            summary="A job's progress as server-sent events (closes when the job ends or after a time cap)")
async def get_job_events(job_id: uuid.UUID, request: Request, store: StoreDep, who: Viewer) -> StreamingResponse:
    """Scoped like ``GET /v1/jobs/{id}``: 404 before any event for a job the caller does not see."""
    await run_in_threadpool(store.get_job, str(job_id), who)
    return StreamingResponse(job_events(request, store, str(job_id), who), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
