"""Request and response bodies of the REST API, split by role (``...Create``, ``...Public``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from backbone.api.store import EffectiveQuotas

JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]
Scope = Literal["viewer", "planner", "admin"]
TASK_KINDS = ("te", "place", "failures", "design", "plan", "roadmap")
MAP_FORMATS = ("png", "svg", "pdf", "html", "geojson", "kml")
MapFormat = Literal["png", "svg", "pdf", "html", "geojson", "kml"]
QuotaSource = Literal["team", "server"]
"""Where an effective quota comes from (:data:`backbone.api.store.usage.QuotaSource`)."""


def _utc(value: datetime) -> datetime:
    """Timestamps always carry their UTC offset (SQLite hands back naive UTC datetimes)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


UtcDatetime = Annotated[datetime, AfterValidator(_utc)]
"""A timestamp serialised with its UTC offset (``2026-12-02T18:00:00Z``)."""


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
    not be link ids, their endpoints and SRLGs must exist. ``datasets`` (optional) lists training data: ``size_pb``,
    ``home_sites`` (site ids), ``residency`` (regions or ISO country codes), ``read_gbps_per_1000_gpus``,
    ``growth_pb_per_year``; ``training_jobs`` (optional) lists training jobs: ``gpus``, ``start``, ``end``,
    ``parameters``, ``step_time_s``, ``sync_method``, ``datasets`` (dataset ids), ``checkpoint_replicas``, ``regions``,
    ``max_sites``, ``sites`` (pinned site ids), ...; sites carry ``storage_pb`` and ``storage_cost_usd_per_pb``.
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
    datasets: list[dict[str, Any]] | None = None
    training_jobs: list[dict[str, Any]] | None = None


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
    created_at: UtcDatetime
    created_by: str = Field(description="Name of the token that made it (names are not unique).")
    created_by_token: str | None = Field(None, description="Id of the token that made it (unique).")


class ScenarioPublic(_VersionFields):
    """A scenario version's metadata (the content is at ``GET /v1/scenarios/{id}/content``)."""

    id: str
    updated_at: UtcDatetime
    version_created_by: str
    version_created_by_token: str | None = None
    team_id: str | None = Field(None, description="The team that owns it (null: the team-less default tenant).")
    read_only: bool = Field(False, description="Nobody may replace or delete it (the shipped scenario); all may read.")


class ScenarioVersionPublic(_VersionFields):
    """One immutable version."""


class ScenarioValidation(BaseModel):
    """A candidate scenario document that passed validation (``POST v1/scenarios/{id}/validate``): the counts a
    new version of it would record. Nothing was stored; a document that fails is a 422 problem instead."""

    valid: bool = Field(description="Always true: an invalid document is answered with a 422 problem document")
    sites: int
    links: int
    demands: int
    source_format: str


class ScenarioWithContent(ScenarioPublic):
    """A scenario version with its canonical JSON content."""

    content: dict[str, Any]


class WorkloadsPublic(BaseModel):
    """A scenario version's training jobs and datasets and the backbone traffic they create: what
    ``backbone workloads --json`` prints (``backbone.workload_summary.WorkloadSummary.to_dict``). Jobs run at their
    pinned ``sites``; a job without sites is not placed and creates no traffic."""

    scenario: str
    jobs: list[dict[str, Any]] = Field(description="One record per training job: gpus, sync_method, sites, placed, "
                                                   "datasets, start, end, checkpoint_tb, backbone_gbps, ...")
    datasets: list[dict[str, Any]] = Field(description="One record per dataset: size_pb, home_sites, residency, "
                                                       "stored_pb, read_by, ...")
    jobs_placed: int
    jobs_not_placed: int
    gpus: int
    gpus_placed: int
    stored_pb: float
    storage_pb: float
    total_gbps: float
    gbps_by_class: dict[str, float]
    gbps_by_job: list[dict[str, Any]]
    demands: list[dict[str, Any]] = Field(description="One demand per workload flow: src, dst, demand_gbps, "
                                                      "traffic_class, job, flow, dataset")


class JobCreate(BaseModel):
    """Run a planning task on a scenario version (default: the head)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {"kind": "te", "options": {}}})

    kind: str = Field(description="Task kind: te, place, failures, design, plan, roadmap or calibrate.",
                      json_schema_extra={"examples": list(TASK_KINDS), "enum": list(TASK_KINDS)}, max_length=64)
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="Task options, named like the CLI flags (e.g. time_limit).")
    version: int | None = Field(None, ge=1, le=2**31 - 1,
                                description="Scenario version to run on (default: the newest).")


class JobProgress(BaseModel):
    fraction: float = Field(ge=0, le=1)
    message: str


class JobSummary(BaseModel):
    """A job and where it stands, as listings show it (no options)."""

    id: str
    scenario_id: str
    scenario_version: int
    kind: str
    status: JobStatus
    status_detail: str = Field("", description="The status line: the status, and for a succeeded job what qualifies "
                                                "its answer, e.g. 'succeeded (time limit: answer not proven)'.")
    progress: JobProgress
    error: ProblemDetails | None = None
    files: list[str] = Field(default_factory=list)
    created_at: UtcDatetime
    started_at: UtcDatetime | None = None
    finished_at: UtcDatetime | None = None
    created_by: str
    created_by_token: str | None = None
    team_id: str | None = Field(None, description="The team that owns it (the submitter's).")


class JobPublic(JobSummary):
    """A job and where it stands, with the options it was submitted with."""

    options: dict[str, Any]


class ImportResult(BaseModel):
    """What a succeeded ``import`` job created (``GET /v1/jobs/{id}/result``): the scenario and its new version."""

    scenario_id: str
    version: int
    etag: str
    name: str
    sites: int
    links: int
    demands: int
    size_bytes: int
    source_format: str


class JobKind(BaseModel):
    """A job kind and the JSON schema of its options (the pydantic options model the CLI's flags come from)."""

    kind: str = Field(description="The job kind, as ``POST /v1/scenarios/{id}/jobs`` takes it.")
    description: str = Field("", description="What the options model says the kind's options are.")
    options_schema: dict[str, Any] = Field(description="JSON schema (draft 2020-12) of the options: every "
                                                       "property with its default, bounds and description.")


class FileEntry(BaseModel):
    name: str
    size_bytes: int
    url: str


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scope: Scope = Field(description="The token's role in its team (admin: every team).")
    name: str = Field("", max_length=200)
    team: str | None = Field(None, max_length=200, description="Team id or name the token acts for (null: no team).")
    expires_in_days: int = Field(90, ge=1, le=3650, description="Lifetime in days.")


class TokenPublic(BaseModel):
    id: str
    name: str
    scope: Scope
    created_at: UtcDatetime
    revoked_at: UtcDatetime | None = None
    last_used_at: UtcDatetime | None = None
    team_id: str | None = None
    expires_at: UtcDatetime | None = None
    rotated_from: str | None = Field(None, description="The token this one replaced (POST .../rotate).")
    family_issued_at: UtcDatetime | None = Field(None, description="When the first token of its rotation chain was "
                                                                   "issued; no rotation lives past it plus "
                                                                   "BACKBONE_TOKEN_MAX_LIFETIME_DAYS.")


class TeamCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, pattern=r"\S")


class TeamPublic(BaseModel):
    id: str
    name: str
    created_at: UtcDatetime


class TokenCreated(TokenPublic):
    token: str = Field(description="The token itself; shown once, only its hash is stored.")


class AuditPublic(BaseModel):
    id: int
    at: UtcDatetime
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


class WhoAmI(BaseModel):
    """Who the bearer token is: its id and name, its role (scope) and its team."""

    token_id: str = Field(description="The API token's id (`system` never appears here), or the JWT's subject.")
    name: str = Field(description="The token's name, or the JWT's subject.")
    scope: Scope = Field(description="The role: viewer reads, planner also writes and runs jobs, admin also "
                                     "manages tokens and teams and reaches every team.")
    team_id: str | None = Field(None, description="The team the token acts for; null: the team-less default "
                                                  "tenant.")
    team_name: str | None = Field(None, description="That team's name; null without a team.")
    can_write: bool = Field(description="Whether the role may create and change scenarios and run jobs "
                                        "(planner or admin).")
    can_admin: bool = Field(description="Whether the role may manage tokens and teams and read the audit log.")


class OidcClientPublic(BaseModel):
    """What a browser needs to sign in with the server's identity provider (Authorization Code with PKCE)."""

    issuer: str = Field(description="The issuer (`iss` of its tokens).")
    client_id: str = Field(description="The workspace's public client id at the issuer (no secret).")
    authorization_endpoint: str = Field(description="Where the browser is sent to sign in.")
    token_endpoint: str = Field(description="Where the browser trades the code (and its PKCE verifier) for tokens.")
    scopes: list[str] = Field(description="The scopes to ask for (`openid` among them).")
    token_use: Literal["access_token", "id_token"] = Field(
        description="Which token of the token endpoint's answer to send to this API as `Authorization: Bearer`: "
                    "the one whose audience is the API's.")


class AuthConfigPublic(BaseModel):
    """How to sign in: always with an API token; with single sign-on when the server is configured for it."""

    oidc: OidcClientPublic | None = Field(default=None, description="Single sign-on, or null: API tokens only.")
    oidc_problem: str | None = Field(default=None, description="Why single sign-on is configured but unavailable "
                                                               "now (the issuer's discovery document cannot be "
                                                               "had); null otherwise.")
class QuotaSourcesPublic(BaseModel):
    """Where each effective quota comes from: ``team`` (the team's own setting, set by an admin) or ``server``
    (the server's setting)."""

    max_cpu_s: QuotaSource
    cpu_window_h: QuotaSource
    max_stored_bytes: QuotaSource


class TeamUsagePublic(BaseModel):
    """A team's use against its quotas (``GET /v1/usage``)."""

    team_id: str | None = Field(description="The team; null: the team-less default tenant.")
    cpu_s: float = Field(description="CPU seconds of the team's jobs that finished in the window (the job's "
                                     "processes and those they waited for).")
    cpu_window_h: float = Field(description="The window of `cpu_s`, in hours (the team's own, else "
                                            "BACKBONE_CPU_QUOTA_WINDOW_H).")
    max_cpu_s: float | None = Field(description="The CPU-seconds quota (the team's own, else "
                                                "BACKBONE_MAX_CPU_S_PER_TEAM); null: none. At or over it, "
                                                "submissions get 429 with Retry-After.")
    stored_bytes: int = Field(description="Bytes of the team's stored job results.")
    stored_results: int = Field(description="Jobs whose stored result counts in `stored_bytes`.")
    max_stored_bytes: int | None = Field(description="The stored-bytes quota (the team's own, else "
                                                     "BACKBONE_MAX_STORED_BYTES_PER_TEAM); null: none. At or over "
                                                     "it, submissions get 403.")
    quota_sources: QuotaSourcesPublic = Field(description="Where each of the three quotas above comes from.")


class TeamQuotasUpdate(BaseModel):
    """A team's own quotas (``PUT /v1/teams/{team}/quotas``, ``backbone team quota set``). The document replaces
    the team's settings: a field left out or null falls back to the server's setting; 0 lifts that quota for
    this team."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"example": {
        "max_cpu_s": 36000, "cpu_window_h": 24, "max_stored_bytes": 10 * 1024**3}})  # strict: `false` is no 0

    max_cpu_s: float | None = Field(None, ge=0, le=1e12, allow_inf_nan=False,
                                    description="CPU seconds the team's jobs may use in the window; 0: no quota; "
                                                "null: BACKBONE_MAX_CPU_S_PER_TEAM.")
    cpu_window_h: float | None = Field(None, gt=0, le=24 * 366, allow_inf_nan=False,
                                       description="The window of `max_cpu_s`, in hours; null: "
                                                   "BACKBONE_CPU_QUOTA_WINDOW_H.")
    max_stored_bytes: int | None = Field(None, ge=0, le=2**62,
                                         description="Bytes of job results the team may store; 0: no quota; null: "
                                                     "BACKBONE_MAX_STORED_BYTES_PER_TEAM.")


class TeamQuotasPublic(BaseModel):
    """A team's quotas: its own settings (null: unset) and what holds for it, with where each comes from."""

    team_id: str
    team_name: str
    settings: TeamQuotasUpdate = Field(description="The team's own settings; null fields fall back to the "
                                                   "server's.")
    max_cpu_s: float | None = Field(description="The CPU-seconds quota that holds for the team; null: none.")
    cpu_window_h: float = Field(description="Its window, in hours.")
    max_stored_bytes: int | None = Field(description="The stored-bytes quota that holds for the team; null: none.")
    quota_sources: QuotaSourcesPublic

    @classmethod
    def of(cls, effective: EffectiveQuotas, team_name: str) -> TeamQuotasPublic:
        """The public form of a team's effective quotas (the admin API's and ``backbone team quota show``'s)."""
        from dataclasses import asdict

        q = effective.quotas
        return cls(team_id=str(effective.team_id), team_name=team_name,
                   settings=TeamQuotasUpdate(**asdict(effective.team_settings)), max_cpu_s=q.cpu_s or None,
                   cpu_window_h=q.window_s / 3600.0, max_stored_bytes=q.stored_bytes or None,
                   quota_sources=QuotaSourcesPublic(**asdict(effective.sources)))
