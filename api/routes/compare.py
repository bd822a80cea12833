"""Compare and present: the diff of two scenario versions, the diff of two plan (or roadmap) jobs, and the review
deck of a plan or roadmap job.

The routes stay thin: they check access through the store (team scoping, 404/409 as for any job or scenario) and
hand the work to the bounded document workers (:class:`~backbone.api.isolation.DocumentWorkers`, as maps are
drawn), which run :func:`backbone.compare.diff` and :func:`backbone.review.deck_bytes` on the stored documents or
on result folders the server computed. The JSON is :meth:`backbone.compare.DiffResult.to_dict`, the same document
as ``backbone diff --json``.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse

from backbone.api.auth import StoreDep, Viewer
from backbone.api.documents import diff_documents, diff_result_folders, render_review_deck
from backbone.api.isolation import DocumentWorkers
from backbone.api.result_store import ResultStore
from backbone.api.routes.scenarios import content_disposition
from backbone.api.schemas import ProblemDetails
from backbone.api.store import ConflictError, GoneError
from backbone.errors import Problem, ValidationError
from backbone.serialize import json_safe

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["compare"])

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ProblemDetails}, 409: {"model": ProblemDetails}, 413: {"model": ProblemDetails},
    422: {"model": ProblemDetails},
    503: {"model": ProblemDetails, "description": "Every document worker is busy (Retry-After)"}}
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
COMPARABLE_KINDS = ("plan", "roadmap")
"""Job kinds whose results diff and make a deck."""

Version = Annotated[int | None, Query(ge=1, le=2**31 - 1)]


def _workers(request: Request) -> DocumentWorkers:
    return request.app.state.documents  # type: ignore[no-any-return]


def _version(store: Any, sid: str, version: int | None, who: Any) -> Any:
    _sc, ver = store.get_scenario(sid, who)
    return ver if version is None else store.get_version(sid, version, who=who)


@router.get("/scenarios/{scenario_id}/diff", responses={**ERRORS, 200: {"content": {"application/json": {}}}},
            summary="What changed between two scenario versions (the JSON of backbone diff --json)")
def diff_scenario(scenario_id: uuid.UUID, request: Request, store: StoreDep, who: Viewer,
                  against: Annotated[uuid.UUID | None, Query(description="The scenario compared with (before); "
                                                                         "default: this one")] = None,
                  version: Version = None,
                  against_version: Annotated[int | None, Query(
                      ge=1, le=2**31 - 1, description="Its version (default: its head; this scenario's version "
                                                      "before `version` when against is this one)")] = None,
                  ) -> JSONResponse:
    """``before`` is ``against`` at ``against_version``, ``after`` this scenario at ``version`` (default: head)."""
    sid, other = str(scenario_id), str(against or scenario_id)
    after = _version(store, sid, version, who)
    if other == sid and against_version is None:
        if after.version <= 1:
            raise ValidationError(Problem("version 1 has no earlier version to compare with; give against_version",
                                          table="query", field="against_version"))
        against_version = after.version - 1
    before = _version(store, other, against_version, who)
    doc = _workers(request).run(diff_documents, before.content, after.content, f"{other} v{before.version}",
                                f"{sid} v{after.version}")
    return JSONResponse(json_safe(doc))


def _result_dir(held: contextlib.ExitStack, request: Request, store: Any, job_id: uuid.UUID, who: Any) -> Path:
    """The job's result folder on this machine while ``held`` lasts (the results folder's, or a copy of an object
    store's)."""
    job = store.get_job(str(job_id), who)
    if job.status != "succeeded":
        raise ConflictError(f"job {job.id} is {job.status}; only a succeeded job's result can be compared")
    if job.kind not in COMPARABLE_KINDS:
        raise ValidationError(Problem(f"job {job.id} is a {job.kind} job; only plan and roadmap jobs compare and "
                                      "make a deck", table="job", field="kind"))
    results: ResultStore = request.app.state.results
    path = held.enter_context(results.local_folder(job.id, request.app.state.settings.data_dir / "staging"))
    if not (path / f"{job.kind}.json").is_file():
        raise GoneError(f"job {job.id} has no result files")
    return Path(path)


@router.get("/jobs/{job_id}/diff", responses={**ERRORS, 200: {"content": {"application/json": {}}}},
            summary="What changed between two plan (or roadmap) jobs: KPIs, failures, changeover, structure")
def diff_jobs(job_id: uuid.UUID, request: Request, store: StoreDep, who: Viewer,
              against: Annotated[uuid.UUID, Query(description="The earlier plan or roadmap job (before)")],
              ) -> JSONResponse:
    """``before`` is the job ``against``, ``after`` this job; both succeeded plan or roadmap jobs the caller sees."""
    with contextlib.ExitStack() as held:
        after = _result_dir(held, request, store, job_id, who)
        before = _result_dir(held, request, store, against, who)
        doc = _workers(request).run(diff_result_folders, str(before), str(after), f"job {against}",
                                    f"job {job_id}")
    return JSONResponse(json_safe(doc))


@router.get("/jobs/{job_id}/deck", responses={**ERRORS, 200: {"content": {PPTX: {}},
                                                               "description": "The editable review deck (.pptx)"}},
            summary="The review deck (.pptx, native charts and tables) of a plan or roadmap job")
def get_deck(job_id: uuid.UUID, request: Request, store: StoreDep, who: Viewer,
             against: Annotated[uuid.UUID | None, Query(description="An earlier plan or roadmap job: adds the "
                                                                    "comparison slides")] = None) -> Response:
    with contextlib.ExitStack() as held:
        folder = _result_dir(held, request, store, job_id, who)
        baseline = _result_dir(held, request, store, against, who) if against is not None else None
        data = _workers(request).run(render_review_deck, str(folder), None if baseline is None else str(baseline),
                                     None if against is None else f"job {against}")
    return Response(data, media_type=PPTX,
                    headers={"Content-Disposition": content_disposition(f"review-{job_id}.pptx", "attachment")})
