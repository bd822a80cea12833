"""Request and response bodies of the REST API, split by role (``...Create``, ``...Public``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]
Scope = Literal["viewer", "planner", "admin"]
TASK_KINDS = ("te", "place", "failures", "design", "plan")
MAP_FORMATS = ("png", "svg", "pdf", "html", "geojson", "kml")
MapFormat = Literal["png", "svg", "pdf", "html", "geojson", "kml"]


class ProblemItem(BaseModel):
    """One problem in the input (the same fields as :class:`backbone.errors.Problem`)."""

    file: str = ""
    table: str = ""
    record: str = ""
    field: str = ""
    message: str


class ProblemDetails(BaseModel):
    """RFC 9457 problem details (``application/problem+json``) plus ``errors``."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str = ""
    instance: str | None = None
    errors: list[ProblemItem] = Field(default_factory=list)


class ScenarioDocument(BaseModel):
    """The canonical JSON form of a scenario (``backbone.io.network_to_dict``): tables as lists of records.

    Columns per table are those of ``backbone/schema.py``; see ``backbone info`` and docs/scenario-format.
    ``candidates`` (optional) lists buildable routes: ``site_a``, ``site_b``, ``kind`` (spectrum, fibre_pair,
    terrestrial, backhaul, cable), ``link_kind``, ``module_gbps``, ``module_cost_usd``, ``fixed_cost_usd``,
    ``max_modules``, ``lead_time_quarters``, ``available_from``, ``srlgs`` (list of SRLG ids), ...; their ids must
    not be link ids, their endpoints and SRLGs must exist.
    """

    model_config = ConfigDict(extra="allow", json_schema_extra={"example": {
        "name": "triangle",
        "sites": [{"id": "A", "name": "A", "lon": 0, "lat": 0, "region": "NA"},
                  {"id": "B", "name": "B", "lon": 1, "lat": 1, "region": "NA"}],
        "links": [{"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 100}],
        "demands": [{"id": "d1", "src": "A", "dst": "B", "demand_gbps": 40}]}})

    name: str | None = None
    format_version: int | None = None
    meta: dict[str, Any] | None = None
    sites: list[dict[str, Any]]
    links: list[dict[str, Any]] | None = None
    srlgs: list[dict[str, Any]] | None = None
    metros: list[dict[str, Any]] | None = None
    demands: list[dict[str, Any]] | None = None
    candidates: list[dict[str, Any]] | None = None


class _VersionFields(BaseModel):
    """What every scenario version reports about itself."""

    name: str
    version: int
    etag: str
    sites: int
    links: int
    demands: int
    size_bytes: int
    source_format: str
    created_at: datetime
    created_by: str


class ScenarioPublic(_VersionFields):
    """A scenario version's metadata (the content is at ``GET /v1/scenarios/{id}/content``)."""

    id: str
    updated_at: datetime
    version_created_by: str


class ScenarioVersionPublic(_VersionFields):
    """One immutable version."""


class ScenarioWithContent(ScenarioPublic):
    """A scenario version with its canonical JSON content."""

    content: dict[str, Any]


class JobCreate(BaseModel):
    """Run a planning task on a scenario version (default: the head)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {"kind": "te", "options": {}}})

    kind: str = Field(description="Task kind: te, place, failures, design or plan.",
                      json_schema_extra={"examples": list(TASK_KINDS)}, max_length=64)
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="Task options, named like the CLI flags (e.g. time_limit).")
    version: int | None = Field(None, ge=1, le=2**31 - 1,
                                description="Scenario version to run on (default: the newest).")


class JobProgress(BaseModel):
    fraction: float = Field(ge=0, le=1)
    message: str


class JobPublic(BaseModel):
    """A job and where it stands."""

    id: str
    scenario_id: str
    scenario_version: int
    kind: str
    options: dict[str, Any]
    status: JobStatus
    progress: JobProgress
    error: ProblemDetails | None = None
    files: list[str] = Field(default_factory=list)
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    created_by: str


class FileEntry(BaseModel):
    name: str
    size_bytes: int
    url: str


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scope: Scope
    name: str = Field("", max_length=200)


class TokenPublic(BaseModel):
    id: str
    name: str
    scope: Scope
    created_at: datetime
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


class TokenCreated(TokenPublic):
    token: str = Field(description="The token itself; shown once, only its hash is stored.")


class AuditPublic(BaseModel):
    id: int
    at: datetime
    token_id: str
    token_name: str
    action: str
    target_type: str
    target_id: str
    detail: dict[str, Any] | None = None


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    database: str
    jobs_running: int
