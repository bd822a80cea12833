"""Compare and present: the diff of two scenario versions, the diff of two plan (or roadmap) jobs, and the review
deck of a plan or roadmap job.

The routes stay thin: they check access through the store (team scoping, 404/409 as for any job or scenario) and
call :func:`backbone.compare.diff` and :func:`backbone.review.deck_bytes` in a thread (rendering never blocks the
event loop); the JSON is :meth:`backbone.compare.DiffResult.to_dict`, the same document as ``backbone diff --json``.
"""

from __future__ import annotations

import logging
import threading
import uuid
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from backbone.api.auth import StoreDep, Viewer
from backbone.api.routes.scenarios import content_disposition
from backbone.api.schemas import ProblemDetails
from backbone.api.store import ConflictError, GoneError
from backbone.errors import Problem, ValidationError

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["compare"])

ERRORS: dict[int | str, dict[str, Any]] = {404: {"model": ProblemDetails}, 409: {"model": ProblemDetails},
                                           422: {"model": ProblemDetails}}
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
COMPARABLE_KINDS = ("plan", "roadmap")
"""Job kinds whose results diff and make a deck."""
_render_lock = threading.Lock()  # matplotlib (a map re-drawn for a deck) is not thread-safe

Version = Annotated[int | None, Query(ge=1, le=2**31 - 1)]


def _network(store: Any, sid: str, version: int | None, who: Any) -> Any:
    from backbone.api.store import decode_document
    from backbone.io import network_from_dict

    _sc, ver = store.get_scenario(sid, who)
    if version is not None:
        ver = store.get_version(sid, version, who=who)
    return network_from_dict(decode_document(ver.content), file="scenario"), ver.version


def _scenario_diff(store: Any, sid: str, version: int | None, against: str, against_version: int | None,
                   who: Any) -> dict[str, Any]:
    from backbone.compare import ComparedInput, diff

    after, v_after = _network(store, sid, version, who)
    if against == sid and against_version is None:
        if v_after <= 1:
            raise ValidationError(Problem("version 1 has no earlier version to compare with; give against_version",
                                          table="query", field="against_version"))
        against_version = v_after - 1
    before, v_before = _network(store, against, against_version, who)
    return diff(ComparedInput(f"{against} v{v_before}", "scenario", before),
                ComparedInput(f"{sid} v{v_after}", "scenario", after)).to_dict()


@router.get("/scenarios/{scenario_id}/diff", responses={**ERRORS, 200: {"content": {"application/json": {}}}},
            summary="What changed between two scenario versions (the JSON of backbone diff --json)")
async def diff_scenario(scenario_id: uuid.UUID, store: StoreDep, who: Viewer,
                        against: Annotated[uuid.UUID | None, Query(description="The scenario compared with (before); "
                                                                               "default: this one")] = None,
                        version: Version = None,
                        against_version: Annotated[int | None, Query(
                            ge=1, le=2**31 - 1, description="Its version (default: its head; this scenario's "
                                                            "version before `version` when against is this one)")]
                        = None) -> JSONResponse:
    """``before`` is ``against`` at ``against_version``, ``after`` this scenario at ``version`` (default: head)."""
    sid = str(scenario_id)
    doc = await run_in_threadpool(_scenario_diff, store, sid, version, str(against or sid), against_version, who)
    from backbone.serialize import json_safe

    return JSONResponse(json_safe(doc))


def _result_dir(request: Request, store: Any, job_id: uuid.UUID, who: Any) -> Path:
    job = store.get_job(str(job_id), who)
    if job.status != "succeeded":
        raise ConflictError(f"job {job.id} is {job.status}; only a succeeded job's result can be compared")
    if job.kind not in COMPARABLE_KINDS:
        raise ValidationError(Problem(f"job {job.id} is a {job.kind} job; only plan and roadmap jobs compare and "
                                      "make a deck", table="job", field="kind"))
    path = request.app.state.settings.data_dir / "results" / job.id
    if not (path / f"{job.kind}.json").is_file():
        raise GoneError(f"job {job.id} has no result files")
    return Path(path)


@router.get("/jobs/{job_id}/diff", responses={**ERRORS, 200: {"content": {"application/json": {}}}},
            summary="What changed between two plan (or roadmap) jobs: KPIs, failures, changeover, structure")
async def diff_jobs(job_id: uuid.UUID, request: Request, store: StoreDep, who: Viewer,
                    against: Annotated[uuid.UUID, Query(description="The earlier plan or roadmap job (before)")]
                    ) -> JSONResponse:
    """``before`` is the job ``against``, ``after`` this job; both succeeded plan or roadmap jobs the caller sees."""
    from backbone.compare import diff, load_input
    from backbone.serialize import json_safe

    after = await run_in_threadpool(_result_dir, request, store, job_id, who)
    before = await run_in_threadpool(_result_dir, request, store, against, who)

    def run() -> dict[str, Any]:
        return diff(load_input(before, label=f"job {against}"), load_input(after, label=f"job {job_id}")).to_dict()

    return JSONResponse(json_safe(await run_in_threadpool(run)))


@router.get("/jobs/{job_id}/deck", responses={**ERRORS, 200: {"content": {PPTX: {}},
                                                               "description": "The editable review deck (.pptx)"}},
            summary="The review deck (.pptx, native charts and tables) of a plan or roadmap job")
async def get_deck(job_id: uuid.UUID, request: Request, store: StoreDep, who: Viewer,
                   against: Annotated[uuid.UUID | None, Query(description="An earlier plan or roadmap job: adds the "
                                                                          "comparison slides")] = None) -> Response:
    from backbone.review import deck_bytes

    folder = await run_in_threadpool(_result_dir, request, store, job_id, who)
    baseline = await run_in_threadpool(_result_dir, request, store, against, who) if against is not None else None

    def render() -> bytes:
        with _render_lock:
            return deck_bytes(folder, baseline=baseline, baseline_label=f"job {against}")[0]

    data = await run_in_threadpool(render)
    return Response(data, media_type=PPTX,
                    headers={"Content-Disposition": content_disposition(f"review-{job_id}.pptx", "attachment")})
