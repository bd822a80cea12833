"""Scenarios: create (canonical JSON or an uploaded file of any importable format), list, read,
replace, delete, versions, maps, and their training workloads.

Every change creates a new immutable version; ``GET`` returns an ``ETag`` and ``PUT``/``DELETE``
honour ``If-Match`` (409 when stale). A document that arrives here is self-contained: it never names a
file (:mod:`backbone.io.untrusted`), and it is parsed, and maps are drawn, in bounded worker processes
(:mod:`backbone.api.isolation`), never in the API process. ``GET`` streams a version's content from its
stored bytes, so a large scenario is never built in the API process either.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse

from backbone.api.auth import Planner, StoreDep, Viewer
from backbone.api.documents import ParsedScenario, parse_scenario, render_scenario_map, workloads_document
from backbone.api.isolation import DocumentWorkers
from backbone.api.job_limits import MAP_KIND, server_quotas
from backbone.api.result_store import ResultStore
from backbone.api.routes.jobs import job_public
from backbone.api.schemas import (
    JobPublic,
    MapFormat,
    ProblemDetails,
    ScenarioDocument,
    ScenarioPublic,
    ScenarioValidation,
    ScenarioVersionPublic,
    ScenarioWithContent,
    WorkloadsPublic,
)
from backbone.api.settings import Settings
from backbone.api.store import ConflictError, GoneError, Store, etag_of
from backbone.errors import Problem, ValidationError

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1/scenarios", tags=["scenarios"])

MEDIA_TYPES = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf", "html": "text/html",
               "geojson": "application/geo+json", "kml": "application/vnd.google-earth.kml+xml"}
_NUMBER = r"\s*-?[0-9]{1,3}(\.[0-9]{1,6})?\s*"
_NAMES = "|".join("".join(f"[{c}{c.upper()}]" for c in name) for name in ("world", "na", "emea", "apac", "latam", "africa"))
REGION_PATTERN = rf"^(\s*({_NAMES})\s*|{_NUMBER},{_NUMBER},{_NUMBER},{_NUMBER})$"
"""A named region or a lon/lat box (the box's ranges are checked when the map is drawn)."""

SCENARIO_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": ScenarioDocument.model_json_schema(ref_template="#/components/schemas/{model}")},
            "multipart/form-data": {"schema": {
                "type": "object", "required": ["file"],
                "properties": {"file": {"type": "string", "format": "binary",
                                        "description": "Scenario file: .json (canonical or node-link), .yaml "
                                                       "(canonical; no anchors or aliases), SNDlib .txt, .graphml, "
                                                       "or .zip of a scenario folder. A document never names a "
                                                       "file: a manifest's `tables` is refused (422)."}}}},
        },
    }
}
ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ProblemDetails}, 409: {"model": ProblemDetails}, 413: {"model": ProblemDetails},
    422: {"model": ProblemDetails}, 503: {"model": ProblemDetails}}
ScenarioId = Annotated[uuid.UUID, "scenario id"]
AsyncQuery = Annotated[bool, Query(alias="async", description="Run the import as a job: 202 with the job (as "
                                                             "`Prefer: respond-async`).")]
ASYNC_RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": JobPublic, "description": "With `Prefer: respond-async` or `?async=true`: the `import` job"},
    429: {"model": ProblemDetails}, 403: {"model": ProblemDetails}}


def _settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


def _public(sc: Any, ver: Any) -> ScenarioPublic:
    return ScenarioPublic(id=sc.id, name=ver.name, version=ver.version, etag=etag_of(ver), sites=ver.sites,
                          links=ver.links, demands=ver.demands, size_bytes=ver.size_bytes,
                          source_format=ver.source_format, created_at=sc.created_at, updated_at=sc.updated_at,
                          created_by=sc.created_by, version_created_by=ver.created_by,
                          created_by_token=sc.created_by_token, version_created_by_token=ver.created_by_token,
                          team_id=sc.team_id, read_only=bool(sc.read_only))


def _version_public(ver: Any) -> ScenarioVersionPublic:
    return ScenarioVersionPublic(version=ver.version, name=ver.name, etag=etag_of(ver), sites=ver.sites,
                                 links=ver.links, demands=ver.demands, size_bytes=ver.size_bytes,
                                 source_format=ver.source_format, created_at=ver.created_at,
                                 created_by=ver.created_by, created_by_token=ver.created_by_token)


# ---------------------------------------------------------------------- input
def _workers(request: Request) -> DocumentWorkers:
    return request.app.state.documents  # type: ignore[no-any-return]


async def read_upload(request: Request) -> tuple[bytes, str | None]:
    """The scenario's bytes as they arrived: a canonical JSON body (file name None), or multipart field ``file``
    (with its file name). Raises ValidationError (422) or 415. The body size is bounded by the request guards
    (``BACKBONE_MAX_BODY_BYTES``)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "multipart/form-data":
        form = await request.form(max_files=1, max_fields=20)
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise ValidationError(Problem("multipart upload needs a file in field 'file'", field="file"))
        data = await upload.read()
        name = upload.filename or "upload"
        await form.close()
        return data, name
    if ctype in ("application/json", "") or ctype.endswith("+json"):
        return await request.body(), None
    raise HTTPException(415, f"unsupported content type {ctype!r}: send application/json or multipart/form-data")


async def read_scenario_input(request: Request) -> ParsedScenario:
    """Parse and validate a scenario from the request: canonical JSON, or multipart field ``file``.

    The parsing runs in a bounded worker process (:mod:`backbone.api.isolation`); the document is
    self-contained (:mod:`backbone.io.untrusted`). Returns the encoded document, its counts and source
    format. Raises ValidationError (422), DocumentLimitError (413) or WorkersBusyError (503).
    """
    data, name = await read_upload(request)
    return await run_in_threadpool(_workers(request).run, parse_scenario, data, name, _settings(request))


def wants_async(request: Request, async_query: bool) -> bool:
    """``Prefer: respond-async`` (RFC 7240) or ``?async=true``: run the import as a job."""
    preferences = {p.split(";")[0].split("=")[0].strip().lower() for p in request.headers.get("prefer", "").split(",")}
    return async_query or "respond-async" in preferences


async def queue_import(request: Request, store: Store, who: Any, scenario_id: str | None = None,
                       expected_version: int | None = None) -> JSONResponse:
    """Store the upload with an ``import`` job and answer 202 with the job (``Location``: the job); a worker
    parses it with the synchronous path's parser and caps (:mod:`backbone.api.imports`). Queue limits and the
    team's quotas apply as to any job."""
    data, name = await read_upload(request)
    if not data.strip():  # nothing to import: refused now (422), as the synchronous path's parser refuses it
        raise ValidationError(Problem("the upload is empty: send the scenario as the request body or as "
                                      "multipart field 'file'", file=name or "", field="file" if name else "body"))
    if name is None and not data.lstrip().startswith(b"{"):  # a JSON body must be the scenario's object
        raise ValidationError(Problem("the request body must be a JSON object: the scenario document",
                                      field="body"))
    settings = _settings(request)
    job = await run_in_threadpool(store.create_import_job, data, name, who, scenario_id, expected_version,
                                  settings.max_queued_jobs, settings.max_queued_jobs_per_token,
                                  server_quotas(settings))
    request.app.state.jobs.notify()
    return JSONResponse(job_public(job).model_dump(mode="json"), status_code=202,
                        headers={"Location": f"/v1/jobs/{job.id}", "Preference-Applied": "respond-async"})


def _expected_version(if_match: str | None, store: Store, sid: str, who: Any = None) -> int | None:
    """The head version when ``If-Match`` matches it; ConflictError when stale; None without If-Match."""
    if if_match is None:
        return None
    _sc, head = store.get_scenario(sid, who)
    tags = [t.strip().removeprefix("W/") for t in if_match.split(",")]
    if "*" in tags or etag_of(head) in tags:
        return head.version
    raise ConflictError(f"If-Match {if_match} is stale: scenario {sid} is now at {etag_of(head)}")


# ---------------------------------------------------------------------- routes
@router.post("", status_code=201, response_model=ScenarioPublic, openapi_extra=SCENARIO_BODY,
             responses={**ERRORS, **ASYNC_RESPONSES}, summary="Create a scenario (canonical JSON or a file upload)")
async def create_scenario(request: Request, response: Response, store: StoreDep, who: Planner,
                          async_query: AsyncQuery = False) -> Any:
    """Validate and store a new scenario at version 1; answers its id, version and ETag.

    With ``Prefer: respond-async`` or ``?async=true`` the upload is stored and parsed by a job: 202 with the
    ``import`` job; when it succeeds its ``scenario_id`` and ``scenario_version`` name the new scenario, and when
    the upload is refused it fails with the same problems this call would answer with 422."""
    if wants_async(request, async_query):
        return await queue_import(request, store, who)
    parsed = await read_scenario_input(request)
    sc, ver = await run_in_threadpool(store.create_scenario, parsed.document, parsed.counts, parsed.source_format,
                                      who)
    response.headers["ETag"] = etag_of(ver)
    response.headers["Location"] = f"/v1/scenarios/{sc.id}"
    return _public(sc, ver)


@router.get("", response_model=list[ScenarioPublic], summary="List scenarios")
def list_scenarios(store: StoreDep, who: Viewer, limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                   offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0) -> list[ScenarioPublic]:
    """The scenarios of the caller's team and the read-only (shared) ones; every scenario for admins."""
    return [_public(sc, ver) for sc, ver in store.list_scenarios(limit, offset, who)]


@router.get("/{scenario_id}", response_model=ScenarioWithContent, responses={**ERRORS, 304: {}},
            summary="Read a scenario (head or ?version=N) with its canonical JSON content")
def get_scenario(scenario_id: ScenarioId, store: StoreDep, who: Viewer,
                 version: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
                 if_none_match: Annotated[str | None, Header()] = None) -> Response:
    sid = str(scenario_id)
    sc, ver = store.get_scenario(sid, who)
    if version is not None:
        ver = store.get_version(sid, version, who=who)
    etag = etag_of(ver)
    if if_none_match and etag in [t.strip().removeprefix("W/") for t in if_none_match.split(",")]:
        return Response(status_code=304, headers={"ETag": etag})
    public = json.dumps(_public(sc, ver).model_dump(mode="json"), separators=(",", ":"))
    return StreamingResponse(_stream_with_content(public, ver.content), media_type="application/json",
                             headers={"ETag": etag})


def _stream_with_content(public: str, content: bytes, chunk_bytes: int = 1 << 20) -> Iterator[bytes]:
    """``{...public fields..., "content": <the stored canonical JSON>}`` decompressed chunk by chunk."""
    import zlib

    yield public[:-1].encode("utf-8") + b',"content":'
    inflater = zlib.decompressobj()
    pending = content
    while pending:
        part = inflater.decompress(pending, chunk_bytes)  # at most chunk_bytes out per step
        pending = inflater.unconsumed_tail
        if part:
            yield part
    yield inflater.flush() + b"}"


@router.put("/{scenario_id}", response_model=ScenarioPublic, openapi_extra=SCENARIO_BODY,
            responses={**ERRORS, **ASYNC_RESPONSES},
            summary="Replace a scenario's content (a new version); If-Match guards against lost updates")
async def replace_scenario(scenario_id: ScenarioId, request: Request, response: Response, store: StoreDep,
                           who: Planner, if_match: Annotated[str | None, Header()] = None,
                           async_query: AsyncQuery = False) -> Any:
    """A new version; with ``Prefer: respond-async`` or ``?async=true`` an ``import`` job adds it (202), and
    If-Match is checked when the job writes the version (a stale one fails the job with 409)."""
    sid = str(scenario_id)
    await run_in_threadpool(store.check_writable, sid, who)  # 404/409 before reading a large body
    if wants_async(request, async_query):
        expected = await run_in_threadpool(_expected_version, if_match, store, sid, who)
        return await queue_import(request, store, who, sid, expected)
    parsed = await read_scenario_input(request)
    expected = await run_in_threadpool(_expected_version, if_match, store, sid, who)
    sc, ver = await run_in_threadpool(store.update_scenario, sid, parsed.document, parsed.counts,
                                      parsed.source_format, who, expected)
    response.headers["ETag"] = etag_of(ver)
    return _public(sc, ver)


@router.post("/{scenario_id}/validate", response_model=ScenarioValidation, openapi_extra=SCENARIO_BODY,
             responses=ERRORS, summary="Validate a candidate new version of a scenario without storing it (dry run)")
async def validate_scenario(scenario_id: ScenarioId, request: Request, store: StoreDep,
                            who: Viewer) -> ScenarioValidation:
    """Parse and validate a candidate document exactly as ``PUT`` would, and store nothing.

    Answers 200 with the counts ``PUT`` would record, or the same 422 problem document (every problem with its
    table, record and field). Any role that can read the scenario may ask: nothing is written.
    """
    sid = str(scenario_id)
    await run_in_threadpool(store.get_scenario, sid, who)  # 404 before reading a large body
    parsed = await read_scenario_input(request)
    return ScenarioValidation(valid=True, source_format=parsed.source_format, **parsed.counts)


@router.delete("/{scenario_id}", status_code=204, responses=ERRORS, summary="Delete a scenario")
def delete_scenario(scenario_id: ScenarioId, store: StoreDep, who: Planner,
                    if_match: Annotated[str | None, Header()] = None) -> Response:
    """Marks it deleted; its versions stay so jobs that ran on them keep their inputs."""
    sid = str(scenario_id)
    expected = _expected_version(if_match, store, sid, who)
    store.delete_scenario(sid, who, expected)
    return Response(status_code=204)


@router.get("/{scenario_id}/versions", response_model=list[ScenarioVersionPublic], responses=ERRORS,
            summary="Every version of a scenario")
def list_versions(scenario_id: ScenarioId, store: StoreDep, who: Viewer) -> list[ScenarioVersionPublic]:
    return [_version_public(v) for v in store.list_versions(str(scenario_id), who)]


@router.get("/{scenario_id}/workloads", response_model=WorkloadsPublic, responses=ERRORS,
            summary="Training jobs, datasets and the backbone traffic they create (backbone workloads)")
def get_workloads(scenario_id: ScenarioId, store: StoreDep, request: Request, who: Viewer,
                  version: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None) -> Any:
    sid = str(scenario_id)
    _sc, ver = store.get_scenario(sid, who)
    if version is not None:
        ver = store.get_version(sid, version, who=who)
    return _workers(request).run(workloads_document, ver.content)


@router.get("/{scenario_id}/map", responses={**ERRORS, **ASYNC_RESPONSES, 503: {"model": ProblemDetails},
                                             200: {"content": {t: {} for t in MEDIA_TYPES.values()}}},
            summary="Draw the scenario (optionally with a job's result) as png/svg/pdf/html/geojson/kml")
def get_map(scenario_id: ScenarioId, store: StoreDep, request: Request, who: Viewer,
            format: Annotated[MapFormat, Query()] = "png",
            job: Annotated[uuid.UUID | None, Query(description="Draw this succeeded job's result")] = None,
            version: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
            color_by: Annotated[str, Query(max_length=64, description="utilisation, kind, impact or any "
                                                                      "link value of the result")] = "utilisation",
            region: Annotated[str | None, Query(max_length=80, pattern=REGION_PATTERN,
                                                description="world, na, emea, apac, latam, africa or "
                                                            "lon_min,lat_min,lon_max,lat_max")] = None,
            center_lon: Annotated[float, Query(ge=-180, le=180)] = 0.0,
            size: Annotated[str, Query(pattern=r"^[0-9]{2,4}x[0-9]{2,4}$")] = "1920x1080",
            candidates: Annotated[bool, Query(description="Draw the scenario's candidate routes (not built) dotted "
                                                          "grey")] = True,
            async_query: AsyncQuery = False) -> Response:
    """The map's bytes; with ``Prefer: respond-async`` or ``?async=true``, 202 with a ``map`` job whose one file
    (``GET /v1/jobs/{id}/files/map.<format>``) is the same map, drawn where jobs run."""
    with contextlib.ExitStack() as held:  # an object store's result is copied in for the drawing, then removed
        return _draw_map(held, scenario_id, store, request, who, format, job, version, color_by, region,
                         center_lon, size, candidates, wants_async(request, async_query))


def _draw_map(held: contextlib.ExitStack, scenario_id: ScenarioId, store: Any, request: Request, who: Any,
              format: str, job: uuid.UUID | None, version: int | None, color_by: str, region: str | None,
              center_lon: float, size: str, candidates: bool, run_async: bool = False) -> Response:
    sid = str(scenario_id)
    result_file: str | None = None
    if job is not None:
        j = store.get_job(str(job), who)
        if j.scenario_id != sid:
            raise GoneError(f"job {job} did not run on scenario {sid}")
        if j.status != "succeeded":
            raise ConflictError(f"job {job} is {j.status}; only a succeeded job's result can be drawn")
        ver = store.get_version(sid, j.scenario_version, include_deleted=True, who=who)
        if not run_async:
            result_file = str(_result_file(held, request, j))
    else:
        _sc, ver = store.get_scenario(sid, who)
        if version is not None:
            ver = store.get_version(sid, version, who=who)
    width, height = (int(v) for v in size.split("x"))
    if width * height > 3840 * 2160:
        raise ValidationError(Problem(f"map size {size} is over this server's limit of 3840x2160 pixels",
                                      table="query", field="size"))
    options = {"color_by": color_by, "region": region, "center_lon": center_lon, "size": size,
               "candidates": candidates}
    if run_async:
        if not who.allows("planner"):  # a map job is a job: a viewer draws maps synchronously
            raise HTTPException(403, "running a map as a job needs the planner scope; draw it without "
                                     "Prefer: respond-async")
        settings = _settings(request)
        queued = store.create_job(sid, ver.version, MAP_KIND, {"format": format, "job": str(job) if job else None,
                                                               **options}, who, settings.max_queued_jobs,
                                  settings.max_queued_jobs_per_token, quotas=server_quotas(settings))
        request.app.state.jobs.notify()
        return JSONResponse(job_public(queued).model_dump(mode="json"), status_code=202,
                            headers={"Location": f"/v1/jobs/{queued.id}", "Preference-Applied": "respond-async"})
    data = _workers(request).run(render_scenario_map, ver.content, result_file, format, options)
    name = f"{ver.name or 'scenario'}-v{ver.version}.{format}"
    return Response(data, media_type=MEDIA_TYPES[format], headers={"Content-Disposition": content_disposition(name)})


def content_disposition(filename: str, disposition: str = "inline") -> str:
    """A ``Content-Disposition`` header value for any file name (RFC 6266 with RFC 5987 encoding).

    ``filename=`` carries an ASCII fallback (other characters, quotes, backslashes and controls
    become ``_``); ``filename*=UTF-8''...`` the name itself, percent-encoded.

    Example
    -------
    >>> content_disposition("東京-v1.png")
    'inline; filename="__-v1.png"; filename*=UTF-8\'\'%E6%9D%B1%E4%BA%AC-v1.png'
    """
    import unicodedata
    from urllib.parse import quote

    name = "".join(ch for ch in filename if unicodedata.category(ch)[0] != "C") or "download"
    fallback = "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\' else "_" for ch in name)
    value = f'{disposition}; filename="{fallback}"'
    if fallback != name:
        value += f"; filename*=UTF-8''{quote(name, safe='')}"
    return value


def _result_file(held: contextlib.ExitStack, request: Request, job: Any) -> Path:
    """The job's result JSON on this machine while ``held`` lasts (the results folder's file, or a copy of an
    object store's)."""
    results: ResultStore = request.app.state.results
    folder = held.enter_context(results.local_folder(job.id, _settings(request).data_dir / "staging"))
    path = folder / f"{job.kind}.json"
    if not path.is_file():
        raise GoneError(f"job {job.id} has no result file")
    return path
