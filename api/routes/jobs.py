"""Jobs: run a planning task on a scenario version, watch it, fetch its result and files, cancel it.

Options are validated up front by the task's pydantic ``options_model`` (422 naming the field);
the task itself runs in a worker process (see :mod:`backbone.api.jobs`).
"""

from __future__ import annotations

import json
import mimetypes
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse

from backbone.api.auth import Planner, StoreDep, Viewer
from backbone.api.contract import require_json_body
from backbone.api.input_policy import check_job_options
from backbone.api.job_limits import server_quotas
from backbone.api.job_outcome import SAFE_FILE_NAME, status_detail
from backbone.api.jobs import JobManager, check_job_limits
from backbone.api.result_store import ResultStore
from backbone.api.schemas import (
    FileEntry,
    ImportResult,
    JobCreate,
    JobKind,
    JobProgress,
    JobPublic,
    JobStatus,
    JobSummary,
    ProblemDetails,
)
from backbone.api.store import IMPORT_KIND, ConflictError, GoneError, etag_of
from backbone.errors import Problem, ValidationError

if TYPE_CHECKING:
    from backbone.solver.tasks import Task

router = APIRouter(prefix="/v1", tags=["jobs"])
ERRORS: dict[int | str, dict[str, Any]] = {404: {"model": ProblemDetails}, 409: {"model": ProblemDetails},
                                           422: {"model": ProblemDetails}}
SUBMIT_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS, 413: {"model": ProblemDetails, "description": "Options larger than BACKBONE_MAX_JOB_OPTIONS_BYTES"},
    403: {"model": ProblemDetails, "description": "Scope too weak, or the team is at its stored-bytes quota "
                                                  "(its own, or BACKBONE_MAX_STORED_BYTES_PER_TEAM)"},
    429: {"model": ProblemDetails, "description": "This token has too many queued jobs, or the team used its "
                                                  "CPU-seconds quota (its own, or BACKBONE_MAX_CPU_S_PER_TEAM) "
                                                  "(Retry-After)"},
    503: {"model": ProblemDetails, "description": "The server's queue is full (Retry-After)"}}


def _manager(request: Request) -> JobManager:
    return request.app.state.jobs  # type: ignore[no-any-return]


def job_public(job: Any) -> JobPublic:
    """The public view of a job row."""
    return JobPublic(id=job.id, scenario_id=job.scenario_id, scenario_version=job.scenario_version, kind=job.kind,
                     options=job.options or {}, status=job.status,
                     status_detail=status_detail(job.status, job.message),
                     progress=JobProgress(fraction=job.progress, message=job.message or ""), error=job.error,
                     files=job.files or [], created_at=job.created_at, started_at=job.started_at,
                     finished_at=job.finished_at, created_by=job.created_by,
                     created_by_token=job.created_by_token, team_id=job.team_id)


def job_summary(job: Any) -> JobSummary:
    """A job row for listings: everything but the options (``GET /v1/jobs/{id}`` has them)."""
    return JobSummary(id=job.id, scenario_id=job.scenario_id, scenario_version=job.scenario_version, kind=job.kind,
                      status=job.status, status_detail=status_detail(job.status, job.message),
                      progress=JobProgress(fraction=job.progress, message=job.message or ""),
                      error=job.error, files=job.files or [], created_at=job.created_at, started_at=job.started_at,
                      finished_at=job.finished_at, created_by=job.created_by,
                      created_by_token=job.created_by_token, team_id=job.team_id)


def validate_job_options(registry: Mapping[str, Task | str], kind: str, options: dict[str, Any]) -> None:
    """Check the kind and the options with the task's options model, nested options included,
    and refuse server paths, addresses and non-finite numbers (ValidationError -> 422)."""
    from backbone.solver.tasks import parse_options

    check_job_options(options)
    try:
        json.dumps(options, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError):
        raise ValidationError(Problem("options must be JSON with valid Unicode (no unpaired surrogates)",
                                      table="job", field="options")) from None
    parse_options(kind, options, registry)  # the task's own options model: the rules live there, once


@router.get("/job-kinds", response_model=list[JobKind], summary="Every job kind with its options' JSON schema")
def list_job_kinds(request: Request, _who: Viewer) -> list[JobKind]:
    """Each runnable kind and the JSON schema of its options model: the same pydantic model that generates the
    CLI's flags and validates ``POST /v1/scenarios/{id}/jobs`` (so a client can build a form with the defaults)."""
    from backbone.solver.tasks.base import Task, load_task

    kinds = []
    for kind, task in _manager(request).registry().items():
        model = (task if isinstance(task, Task) else load_task(kind, task)).options_model
        schema = model.model_json_schema()
        kinds.append(JobKind(kind=kind, description=str(schema.get("description", "")), options_schema=schema))
    return kinds


@router.post("/scenarios/{scenario_id}/jobs", status_code=202, response_model=JobPublic, responses=SUBMIT_ERRORS,
             dependencies=[Depends(require_json_body)],
             summary="Run a planning task (te, place, failures, design, plan) on a scenario version")
async def create_job(scenario_id: uuid.UUID, body: JobCreate, request: Request, response: Response,
                     store: StoreDep, who: Planner) -> JobPublic:
    """Queue the job and answer 202 at once; poll ``GET /v1/jobs/{id}``."""
    sid = str(scenario_id)
    _sc, head = await run_in_threadpool(store.get_scenario, sid, who)
    version = head.version
    if body.version is not None:
        version = (await run_in_threadpool(store.get_version, sid, body.version, False, who)).version
    manager = _manager(request)
    settings = request.app.state.settings
    check_job_limits(body.options, settings)
    await run_in_threadpool(validate_job_options, manager.registry(), body.kind, body.options)
    job = await run_in_threadpool(store.create_job, sid, version, body.kind, body.options, who,
                                  settings.max_queued_jobs, settings.max_queued_jobs_per_token,
                                  quotas=server_quotas(settings))
    manager.notify()
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    return job_public(job)


@router.get("/scenarios/{scenario_id}/jobs", response_model=list[JobSummary], responses=ERRORS,
            summary="Jobs of one scenario, newest first (summaries without options)")
def list_scenario_jobs(scenario_id: uuid.UUID, store: StoreDep, who: Viewer,
                       limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[JobSummary]:
    store.get_scenario(str(scenario_id), who)
    return [job_summary(j) for j in store.list_jobs(str(scenario_id), limit=limit, with_options=False, who=who)]


@router.get("/jobs", response_model=list[JobSummary], summary="Jobs, newest first (summaries without options)")
def list_jobs(store: StoreDep, who: Viewer, status: JobStatus | None = None,
              limit: Annotated[int, Query(ge=1, le=1000)] = 100,
              offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0) -> list[JobSummary]:
    """The jobs of the caller's team (every job for admins)."""
    return [job_summary(j) for j in store.list_jobs(status=status, limit=limit, offset=offset, with_options=False, who=who)]


@router.get("/jobs/{job_id}", response_model=JobPublic, responses=ERRORS, summary="A job's status and progress")
def get_job(job_id: uuid.UUID, store: StoreDep, who: Viewer) -> JobPublic:
    return job_public(store.get_job(str(job_id), who))


def _finished(store: Any, job_id: uuid.UUID, who: Any) -> Any:
    job = store.get_job(str(job_id), who)
    if job.status != "succeeded":
        raise ConflictError(f"job {job.id} is {job.status}; results exist only for succeeded jobs")
    return job


def _results(request: Request) -> ResultStore:
    return request.app.state.results  # type: ignore[no-any-return]


def stored_file_response(results: ResultStore, job_id: str, name: str, media_type: str,
                         filename: str | None = None) -> Response:
    """One file of a job's stored result, streamed: from disk for the results folder (``FileResponse``: ranges,
    ETag), in bounded chunks for an object store. ``name`` is already on the job's allow-list; a file the store
    does not hold is 404 (:class:`GoneError`)."""
    path = results.local_file(job_id, name)
    if path is not None:
        return FileResponse(path, media_type=media_type, filename=filename)
    opened = results.open(job_id, name)
    if opened is None:
        raise GoneError(f"job {job_id} has no file {name!r}")
    headers = {"Content-Length": str(opened.size_bytes)}
    if filename is not None:
        headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return StreamingResponse(opened.chunks, media_type=media_type, headers=headers)


@router.get("/jobs/{job_id}/result", responses={**ERRORS, 200: {"content": {"application/json": {}}}},
            summary="The job's result JSON (what the CLI prints with --json)")
def get_result(job_id: uuid.UUID, store: StoreDep, request: Request, who: Viewer) -> Response:
    """A planning job's result file; an ``import`` job's scenario and the version it created."""
    job = _finished(store, job_id, who)
    if job.kind == IMPORT_KIND:
        ver = store.get_version(job.scenario_id, job.scenario_version, include_deleted=True, who=who)
        doc = ImportResult(scenario_id=job.scenario_id, version=ver.version, etag=etag_of(ver), name=ver.name,
                           sites=ver.sites, links=ver.links, demands=ver.demands, size_bytes=ver.size_bytes,
                           source_format=ver.source_format)
        return JSONResponse(doc.model_dump(mode="json"))
    try:
        # streamed from the store, never parsed here
        return stored_file_response(_results(request), job.id, f"{job.kind}.json", "application/json")
    except GoneError:
        raise GoneError(f"job {job.id} has no result file") from None


@router.get("/jobs/{job_id}/files", response_model=list[FileEntry], responses=ERRORS,
            summary="The result files (the same files the CLI writes)")
def list_files(job_id: uuid.UUID, store: StoreDep, request: Request, who: Viewer) -> list[FileEntry]:
    job = _finished(store, job_id, who)
    sizes = _results(request).sizes(job.id)  # one listing of the job's folder or prefix
    return [FileEntry(name=n, size_bytes=sizes[n], url=f"/v1/jobs/{job.id}/files/{n}")
            for n in job.files or [] if n in sizes]


RESULT_MEDIA_TYPES = ("text/csv", "application/json", "application/geo+json", "image/png", "image/svg+xml",
                      "text/html", "text/plain", "application/pdf", "application/vnd.google-earth.kml+xml",
                      "application/octet-stream")
"""Media types of result files (by suffix: .csv, .json, .geojson, .png, .svg, .html, .txt, .pdf, .kml; else
octet-stream)."""


@router.get("/jobs/{job_id}/files/{name:path}",
            responses={**ERRORS, 200: {"content": {t: {} for t in RESULT_MEDIA_TYPES},
                                       "description": "The file, typed by its suffix"}},
            summary="One result file")
def get_file(job_id: uuid.UUID, name: str, store: StoreDep, request: Request, who: Viewer) -> Response:
    """Only names the job listed are served (an allow-list; no path from the request reaches the disk)."""
    job = _finished(store, job_id, who)
    if name not in (job.files or []) or not SAFE_FILE_NAME.match(name):
        raise GoneError(f"job {job.id} has no file {name!r}")
    basename = name.rsplit("/", 1)[-1]
    media = mimetypes.guess_type(basename)[0] or "application/octet-stream"
    if basename.endswith(".geojson"):
        media = "application/geo+json"
    return stored_file_response(_results(request), job.id, name, media, filename=basename)


@router.delete("/jobs/{job_id}", response_model=JobPublic, responses=ERRORS,
               summary="Cancel a queued or running job (its worker process is terminated)")
def cancel_job(job_id: uuid.UUID, store: StoreDep, request: Request, who: Planner) -> JobPublic:
    job = store.cancel_job(str(job_id), who)
    _manager(request).cancel(job.id)
    return job_public(job)
