"""Scenarios: create (canonical JSON or an uploaded file of any importable format), list, read,
replace, delete, versions, and maps.

Every change creates a new immutable version; ``GET`` returns an ``ETag`` and ``PUT``/``DELETE``
honour ``If-Match`` (409 when stale). Uploads are saved under ``<data dir>/uploads`` with a
random name and the upload's (allow-listed) suffix; the client's file name is never a path.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from backbone.api.auth import Planner, StoreDep, Viewer
from backbone.api.input_policy import MAX_DEPTH, check_scenario_document
from backbone.api.schemas import (
    MapFormat,
    ProblemDetails,
    ScenarioDocument,
    ScenarioPublic,
    ScenarioVersionPublic,
    ScenarioWithContent,
)
from backbone.api.settings import Settings
from backbone.api.store import ConflictError, GoneError, Store, etag_of
from backbone.errors import Problem, ValidationError

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1/scenarios", tags=["scenarios"])

UPLOAD_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".txt": "sndlib", ".graphml": "graphml"}
"""Upload file suffixes accepted (the format is detected from the suffix and content)."""
MEDIA_TYPES = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf", "html": "text/html",
               "geojson": "application/geo+json", "kml": "application/vnd.google-earth.kml+xml"}
_render_lock = threading.Lock()
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
                                        "description": "Scenario file: .json (canonical or node-link), .yaml, "
                                                       "SNDlib .txt or .graphml"}}}},
        },
    }
}
ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ProblemDetails}, 409: {"model": ProblemDetails}, 413: {"model": ProblemDetails},
    422: {"model": ProblemDetails}}
ScenarioId = Annotated[uuid.UUID, "scenario id"]


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
def _check_limits(net: Any, settings: Settings, file: str) -> None:
    problems = []
    for table, limit in (("sites", settings.max_sites), ("links", settings.max_links),
                         ("demands", settings.max_demands), ("candidates", settings.max_links)):
        n = len(getattr(net, table))
        if n > limit:
            problems.append(Problem(f"{n} {table} exceed this server's limit of {limit}", file=file, table=table))
    if problems:
        raise ValidationError(problems)


def _counts(net: Any) -> dict[str, int]:
    return {"sites": len(net.sites), "links": len(net.links), "demands": len(net.demands)}


def _from_json(body: bytes, settings: Settings) -> tuple[dict[str, Any], dict[str, int]]:
    from backbone.io import network_from_dict, network_to_dict

    try:
        doc = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(Problem(f"request body is not valid JSON: {exc}", file="request body")) from None
    except RecursionError:
        raise ValidationError(Problem(f"request body is nested too deeply (at most {MAX_DEPTH} levels in meta)",
                                      file="request body")) from None
    if isinstance(doc, dict):
        _check_shape(doc)
        check_scenario_document(doc, "request body")
    try:
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(Problem("request body has invalid Unicode (unpaired surrogate escapes)",
                                      file="request body")) from None
    net = network_from_dict(doc, file="request body")
    _check_limits(net, settings, "request body")
    return network_to_dict(net), _counts(net)


def _from_upload(data: bytes, filename: str, settings: Settings) -> tuple[dict[str, Any], dict[str, int], str]:
    from backbone.io import detect_format, load_scenario, network_to_dict

    shown = Path(filename.replace("\\", "/")).name[:200] or "upload"
    suffix = Path(shown).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise ValidationError(Problem(
            f"unsupported file type {suffix or '(none)'!r}; upload one of {', '.join(UPLOAD_SUFFIXES)}",
            file=shown, field="file"))
    tmp = settings.data_dir / "uploads" / f"{uuid.uuid4()}{suffix}"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp.write_bytes(data)
        try:
            fmt = detect_format(tmp)
            net = load_scenario(tmp)
        except ValidationError as exc:
            raise ValidationError([Problem(p.message, file=shown if p.file.startswith(str(tmp.parent)) or
                                           p.file == str(tmp) or not p.file else p.file,
                                           table=p.table, record=p.record, field=p.field)
                                   for p in exc.problems]) from None
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as exc:
            raise ValidationError(Problem(f"cannot read the upload: {type(exc).__name__}: {exc}",
                                          file=shown)) from None
        _check_limits(net, settings, shown)
        doc = _named_after_upload(network_to_dict(net), tmp, shown)
        check_scenario_document(doc, shown)
        return doc, _counts(net), fmt
    finally:
        tmp.unlink(missing_ok=True)


def _check_shape(doc: dict[str, Any]) -> None:
    """The body has the types the OpenAPI document states (:class:`ScenarioDocument`), or 422."""
    import pydantic

    try:
        ScenarioDocument.model_validate(doc, strict=True)
    except pydantic.ValidationError as exc:
        raise ValidationError([Problem(e["msg"], file="request body", table=str(e["loc"][0]) if e["loc"] else "",
                                       field=".".join(str(x) for x in e["loc"])) for e in exc.errors()]) from None


def _named_after_upload(doc: dict[str, Any], tmp: Path, shown: str) -> dict[str, Any]:
    """The uploaded scenario named after the upload (or its graph), never after the scratch file;
    any mention of the scratch file's path or name in ``meta`` becomes the upload's name."""
    if not doc.get("name") or doc["name"] == tmp.stem:
        doc["name"] = Path(shown).stem or "upload"
    scratch = {str(tmp): shown, tmp.name: shown, tmp.stem: Path(shown).stem}
    stack: list[Any] = [doc.get("meta")]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in list(items):
            if isinstance(v, str) and (v in scratch or str(tmp.parent) in v):
                node[k] = scratch.get(v, shown)
            elif isinstance(v, str) and tmp.stem in v:
                node[k] = v.replace(tmp.stem, Path(shown).stem)
            else:
                stack.append(v)
    return doc


async def read_scenario_input(request: Request) -> tuple[dict[str, Any], dict[str, int], str]:
    """Parse and validate a scenario from the request: canonical JSON, or multipart field ``file``.

    Returns the canonical document, counts and the source format. Raises ValidationError (422).
    """
    settings = _settings(request)
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "multipart/form-data":
        form = await request.form(max_files=1, max_fields=20)
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise ValidationError(Problem("multipart upload needs a file in field 'file'", field="file"))
        data = await upload.read()
        name = upload.filename or "upload"
        await form.close()
        return await run_in_threadpool(_from_upload, data, name, settings)
    if ctype in ("application/json", "") or ctype.endswith("+json"):
        body = await request.body()
        doc, counts = await run_in_threadpool(_from_json, body, settings)
        return doc, counts, "canonical-json"
    raise HTTPException(415, f"unsupported content type {ctype!r}: send application/json or multipart/form-data")


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
@router.post("", status_code=201, response_model=ScenarioPublic, openapi_extra=SCENARIO_BODY, responses=ERRORS,
             summary="Create a scenario (canonical JSON or a file upload)")
async def create_scenario(request: Request, response: Response, store: StoreDep, who: Planner) -> ScenarioPublic:
    """Validate and store a new scenario at version 1; answers its id, version and ETag."""
    doc, counts, fmt = await read_scenario_input(request)
    sc, ver = await run_in_threadpool(store.create_scenario, doc, counts, fmt, who)
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
    from backbone.api.store import decode_document

    body = ScenarioWithContent(**_public(sc, ver).model_dump(), content=decode_document(ver.content))
    return JSONResponse(body.model_dump(mode="json"), headers={"ETag": etag})


@router.put("/{scenario_id}", response_model=ScenarioPublic, openapi_extra=SCENARIO_BODY, responses=ERRORS,
            summary="Replace a scenario's content (a new version); If-Match guards against lost updates")
async def replace_scenario(scenario_id: ScenarioId, request: Request, response: Response, store: StoreDep,
                           who: Planner, if_match: Annotated[str | None, Header()] = None) -> ScenarioPublic:
    sid = str(scenario_id)
    await run_in_threadpool(store.check_writable, sid, who)  # 404/409 before reading a large body
    doc, counts, fmt = await read_scenario_input(request)
    expected = await run_in_threadpool(_expected_version, if_match, store, sid, who)
    sc, ver = await run_in_threadpool(store.update_scenario, sid, doc, counts, fmt, who, expected)
    response.headers["ETag"] = etag_of(ver)
    return _public(sc, ver)


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


@router.get("/{scenario_id}/map", responses={**ERRORS, 503: {"model": ProblemDetails},
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
                                                          "grey")] = True) -> Response:
    from backbone.api.store import decode_document
    from backbone.io import network_from_dict

    sid = str(scenario_id)
    result: dict[str, Any] | None = None
    if job is not None:
        j = store.get_job(str(job), who)
        if j.scenario_id != sid:
            raise GoneError(f"job {job} did not run on scenario {sid}")
        if j.status != "succeeded":
            raise ConflictError(f"job {job} is {j.status}; only a succeeded job's result can be drawn")
        ver = store.get_version(sid, j.scenario_version, include_deleted=True, who=who)
        result = _read_result(_settings(request), j)
    else:
        _sc, ver = store.get_scenario(sid, who)
        if version is not None:
            ver = store.get_version(sid, version, who=who)
    try:
        from backbone.maps import render_map_bytes
    except ImportError as exc:
        raise HTTPException(503, f"map rendering is not available on this server: {exc}") from None
    width, height = (int(v) for v in size.split("x"))
    if width * height > 3840 * 2160:
        raise ValidationError(Problem(f"map size {size} is over this server's limit of 3840x2160 pixels",
                                      table="query", field="size"))
    net = network_from_dict(decode_document(ver.content), file="scenario")
    with _render_lock:  # matplotlib is not thread-safe
        data = render_map_bytes(net, format, result=result, color_by=color_by, region=region,
                                center_lon=center_lon, size=size, candidates=candidates)
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


def _read_result(settings: Settings, job: Any) -> dict[str, Any]:
    path = settings.data_dir / "results" / job.id / f"{job.kind}.json"
    if not path.is_file():
        raise GoneError(f"job {job.id} has no result file")
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
