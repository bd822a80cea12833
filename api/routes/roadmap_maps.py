"""A roadmap job's periods on a map: ``GET /v1/jobs/{id}/periods/{period}/map``.

A roadmap writes each period's backbone as a canonical scenario folder among its result files
(``periods/<period>/scenario/``: the links and routes built by then, the GPUs installed). This route draws that
folder like a scenario version's map (``GET /v1/scenarios/{id}/map``): access through the store (the job's team;
404 for anyone else, 409 for a job that has not succeeded), the drawing in a bounded document worker, the folder
named by the server from the job's own file list, never by the request.
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi import Path as PathParam

from backbone.api.auth import StoreDep, Viewer
from backbone.api.documents import render_period_map
from backbone.api.isolation import DocumentWorkers
from backbone.api.result_store import ResultStore
from backbone.api.routes.scenarios import MEDIA_TYPES, content_disposition
from backbone.api.schemas import MapFormat, ProblemDetails
from backbone.api.store import ConflictError, GoneError
from backbone.errors import Problem, ValidationError

router = APIRouter(prefix="/v1", tags=["jobs"])
ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ProblemDetails}, 409: {"model": ProblemDetails}, 413: {"model": ProblemDetails},
    422: {"model": ProblemDetails},
    503: {"model": ProblemDetails, "description": "Every document worker is busy (Retry-After)"}}
PERIOD_PATTERN = r"^[0-9]{4}(Q[1-4])?$"
"""A roadmap period's label: a quarter (``2027Q3``) or a year (``2027``)."""


def period_folder(held: contextlib.ExitStack, request: Request, job: Any, period: str) -> Path:
    """The period's scenario folder on this machine while ``held`` lasts.

    Raises
    ------
    GoneError
        The job is not a roadmap job (404: it has no periods).
    ConflictError
        The job has not succeeded (409).
    GoneError
        The roadmap has no such period (404, naming the periods it has).
    """
    if job.kind != "roadmap":
        raise GoneError(f"job {job.id} is a {job.kind} job; only a roadmap job has periods")
    if job.status != "succeeded":
        raise ConflictError(f"job {job.id} is {job.status}; only a succeeded roadmap's periods can be drawn")
    manifest = f"periods/{period}/scenario/scenario.yaml"
    if manifest not in (job.files or []):
        known = sorted({n.split("/")[1] for n in job.files or [] if n.startswith("periods/") and n.count("/") >= 2})
        raise GoneError(f"roadmap job {job.id} has no period {period!r} (its periods: {', '.join(known) or 'none'})")
    results: ResultStore = request.app.state.results
    folder = held.enter_context(results.local_folder(job.id, request.app.state.settings.data_dir / "staging"))
    path = Path(folder) / "periods" / period / "scenario"
    if not (path / "scenario.yaml").is_file():
        raise GoneError(f"roadmap job {job.id} has no files for period {period!r}")
    return path


@router.get("/jobs/{job_id}/periods/{period}/map",
            responses={**ERRORS, 200: {"content": {t: {} for t in MEDIA_TYPES.values()}}},
            summary="Draw a roadmap job's period (what is built by then) as png/svg/pdf/html/geojson/kml")
def get_period_map(job_id: uuid.UUID, request: Request, store: StoreDep, who: Viewer,
                   period: Annotated[str, PathParam(pattern=PERIOD_PATTERN, max_length=8,
                                                    description="A period of the roadmap: 2027Q3 or 2027")],
                   format: Annotated[MapFormat, Query()] = "geojson",
                   center_lon: Annotated[float, Query(ge=-180, le=180)] = 0.0,
                   size: Annotated[str, Query(pattern=r"^[0-9]{2,4}x[0-9]{2,4}$")] = "1920x1080",
                   candidates: Annotated[bool, Query(description="Draw the candidate routes not built by this "
                                                                 "period")] = True) -> Response:
    """The period's backbone as the roadmap wrote it (``periods/<period>/scenario/``): its links with the
    capacity they have in that period (a new route is a link with its candidate's id, along the candidate's
    route), the candidate routes not yet built, and the sites with the GPUs installed by then."""
    job = store.get_job(str(job_id), who)
    width, height = (int(v) for v in size.split("x"))
    if width * height > 3840 * 2160:
        raise ValidationError(Problem(f"map size {size} is over this server's limit of 3840x2160 pixels",
                                      table="query", field="size"))
    workers: DocumentWorkers = request.app.state.documents
    with contextlib.ExitStack() as held:
        folder = period_folder(held, request, job, period)
        data = workers.run(render_period_map, str(folder), format,
                           {"center_lon": center_lon, "size": size, "candidates": candidates})
    return Response(data, media_type=MEDIA_TYPES[format],
                    headers={"Content-Disposition": content_disposition(f"roadmap-{job.id}-{period}.{format}")})
