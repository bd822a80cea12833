"""Server settings, read from ``BACKBONE_*`` environment variables (pydantic-settings).

* ``BACKBONE_DATA_DIR`` -- where the server keeps its files (default ``~/.local/share/backbone``,
  or ``$XDG_DATA_HOME/backbone``): the SQLite database (unless ``BACKBONE_DATABASE_URL`` is set),
  job result folders, upload scratch space.
* ``BACKBONE_DATABASE_URL`` -- a SQLAlchemy URL; default ``sqlite:///<data dir>/backbone.db``. PostgreSQL:
  ``postgresql+psycopg://user:password@host:5432/dbname``.
* Limits: ``BACKBONE_MAX_BODY_BYTES``, ``BACKBONE_MAX_SITES``, ``BACKBONE_MAX_LINKS``,
  ``BACKBONE_MAX_DEMANDS``; job execution: ``BACKBONE_WORKERS``, ``BACKBONE_JOB_TIMEOUT_S``,
  ``BACKBONE_JOB_PROCESSES``, ``BACKBONE_WORKER_MEMORY_MB``, ``BACKBONE_WORKER_CPU_S``; caps on job options,
  queues, fairness, failed-login rate, connection timeouts and retention (every field below; docs/api.md).
* ``BACKBONE_OIDC_ISSUER``, ``_AUDIENCE``, ``_JWKS_URL`` / ``_JWKS_FILE``, ``_SCOPE_CLAIM``, ``_TEAM_CLAIM``
  -- optional OIDC/JWT bearer tokens (see :mod:`backbone.api.oidc`); ``_CLIENT_ID``, ``_AUTHORIZATION_ENDPOINT``,
  ``_TOKEN_ENDPOINT``, ``_SCOPES``, ``_TOKEN_USE`` -- single sign-on in the workspace
  (see :mod:`backbone.api.oidc_login`).
* ``BACKBONE_JOB_EXECUTION`` -- ``inline`` (default: the server runs jobs in its own worker processes) or
  ``queue`` (the server only enqueues; ``backbone worker`` processes claim jobs from the database with a lease
  of ``BACKBONE_JOB_LEASE_S`` seconds, renewed every ``BACKBONE_JOB_HEARTBEAT_S``). docs/deploy.md.
* ``BACKBONE_RESULT_STORE`` -- empty (results in ``<data dir>/results``) or ``s3://bucket/prefix``: results in an
  S3-compatible object store (:mod:`backbone.api.result_store`; docs/deploy.md).
* ``BACKBONE_DASK_SCHEDULER`` -- a Dask scheduler (``tcp://host:8786``) the failure sweeps of API jobs run on
  (``failures`` jobs, and the sweeps of ``plan`` and ``roadmap`` jobs) unless a job asks for ``engine: local`` or
  ``serial``; ``BACKBONE_DASK_TIMEOUT_S`` bounds the wait for it (never job options; see
  :func:`backbone.api.input_policy.server_job_options`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/backbone`` or ``~/.local/share/backbone``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "backbone"


class Settings(BaseSettings):
    """Everything the API server and the ``serve``/``token``/``db`` commands need to know."""

    model_config = SettingsConfigDict(env_prefix="BACKBONE_", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir, description="Folder for the database and result files.")
    database_url: str = Field(default="", description="SQLAlchemy URL; empty = SQLite file in the data dir.")
    max_body_bytes: int = Field(default=64 * 1024 * 1024, ge=1024, description="Largest request body accepted (413 above).")
    max_sites: int = Field(default=20_000, ge=1, description="Largest scenario accepted, in sites (422 above).")
    max_links: int = Field(default=200_000, ge=1,
                           description="Largest scenario accepted, in links and in candidates each (422 above).")
    max_demands: int = Field(default=1_000_000, ge=1,
                             description="Largest scenario accepted, in demands, and in datasets and training jobs each "
                                         "(422 above).")
    max_document_bytes: int = Field(default=128 * 1024 * 1024, ge=1024,
                                    description="Largest scenario stored, as canonical JSON bytes (413 above): "
                                                "bounds what a small upload may expand to.")
    document_workers: int = Field(default=2, ge=1, le=64,
                                  description="Uploads parsed and maps drawn at the same time (one bounded process "
                                              "each, under the job memory and CPU limits).")
    document_timeout_s: float = Field(default=120.0, gt=0, description="Wall-clock limit of parsing one upload or "
                                                                       "drawing one map (413 past it).")
    document_queue_s: float = Field(default=30.0, gt=0, description="Seconds a request waits for a free document "
                                                                    "worker before 503 with Retry-After.")
    workers: int = Field(default=2, ge=1, le=64, description="Jobs that run at the same time (one process each).")
    job_timeout_s: float = Field(default=3600.0, gt=0, description="Wall-clock limit of one job; it is killed after.")
    job_execution: Literal["inline", "queue"] = Field(
        default="inline", description="inline: the server runs jobs in its own worker processes (one machine). "
                                      "queue: the server only enqueues; `backbone worker` processes anywhere claim "
                                      "jobs from the database (docs/deploy.md).")
    job_lease_s: float = Field(default=30.0, ge=1, le=3600,
                               description="Seconds a `backbone worker` holds a job without a heartbeat; after it any "
                                           "worker or server reclaims the job (retried once, or failed \"worker "
                                           "lost\").")
    job_heartbeat_s: float = Field(default=5.0, gt=0, le=600,
                                   description="Seconds between a worker's heartbeats (lease renewals and checks for "
                                               "cancels); below the lease.")
    dask_scheduler: str = Field(default="", max_length=500,
                                description="Dask scheduler address (tcp://host:8786) the failure sweeps of API jobs "
                                            "run on: `failures` jobs and the sweeps of `plan` and `roadmap` jobs, "
                                            "unless a job asks for engine 'local' or 'serial'. Empty: sweeps run on "
                                            "the job's own processes (engine 'dask': a local cluster per job). "
                                            "Server configuration only: the API refuses a `scheduler` job option.")
    dask_timeout_s: float = Field(default=10.0, gt=0, le=300,
                                  description="Seconds a job waits to connect to the Dask scheduler and for it to "
                                              "have a worker; past them the job fails naming the scheduler.")
    oidc_issuer: str = Field(default="", max_length=500, description="Accept JWTs of this issuer (`iss`); "
                             "empty: API tokens only.")
    oidc_audience: str = Field(default="", max_length=500, description="Required JWT audience (`aud`).")
    oidc_jwks_url: str = Field(default="", max_length=2000, description="The issuer's JWKS URL (fetched, cached).")
    oidc_jwks_file: str = Field(default="", max_length=2000, description="Or a local JWKS file.")
    oidc_scope_claim: str = Field(default="backbone_scope", description="JWT claim holding viewer/planner/admin.")
    oidc_team_claim: str = Field(default="backbone_team", description="JWT claim holding the team name.")
    oidc_client_id: str = Field(default="", max_length=500,
                                description="The workspace's OIDC client id (a public client, no secret): with it "
                                            "the sign-in page offers single sign-on (Authorization Code with PKCE); "
                                            "empty: API tokens only in the browser.")
    oidc_authorization_endpoint: str = Field(default="", max_length=2000,
                                             description="The issuer's authorization endpoint; empty: read from its "
                                                         "discovery document (<issuer>/.well-known/"
                                                         "openid-configuration, fetched and cached).")
    oidc_token_endpoint: str = Field(default="", max_length=2000,
                                     description="The issuer's token endpoint (with the authorization endpoint, for "
                                                 "a server that cannot reach the issuer); empty: from discovery.")
    oidc_scopes: str = Field(default="openid profile email", max_length=500,
                             description="Scopes the workspace asks for, separated by spaces (`openid` is needed).")
    oidc_token_use: Literal["access_token", "id_token"] = Field(
        default="access_token", description="Which token of the token endpoint's answer the workspace sends to "
                                            "the API: the access token (issued for an API; the issuer must give it "
                                            "the audience BACKBONE_OIDC_AUDIENCE) or the ID token (its audience is "
                                            "the client id, so BACKBONE_OIDC_AUDIENCE must equal "
                                            "BACKBONE_OIDC_CLIENT_ID).")
    job_processes: int = Field(default_factory=lambda: max(1, min(4, os.cpu_count() or 1)), ge=1, le=256,
                               description="Processes one job may use (a failure sweep's pool, the path search); "
                                           "a job's own `workers` option is capped to it.")
    worker_memory_mb: int = Field(default=8192, ge=0, description="Address-space limit (RLIMIT_AS) of each job process "
                                                                  "in MiB; 0 = no limit.")
    worker_cpu_s: int = Field(default=7200, ge=0, description="CPU-time limit (RLIMIT_CPU) of each job process in "
                                                             "seconds; 0 = no limit.")
    worker_nice: int = Field(default=10, ge=0, le=19, description="Niceness added to job processes, so the API "
                                                                 "answers quickly while jobs compute.")
    max_time_limit_s: float = Field(default=900.0, gt=0, description="Largest `time_limit_s` a job option may ask for "
                                                                     "(422 above).")
    max_scenarios: int = Field(default=5000, ge=1, description="Largest `max_scenarios` a job option may ask for "
                                                               "(422 above).")
    max_job_options_bytes: int = Field(default=64 * 1024, ge=256, description="Largest job options, as JSON bytes "
                                                                              "(413 above).")
    max_queued_jobs: int = Field(default=1000, ge=1, description="Queued jobs on the server; more get 503 with "
                                                                 "Retry-After.")
    max_queued_jobs_per_token: int = Field(default=100, ge=1, description="Queued jobs of one token; more get 429 "
                                                                          "with Retry-After.")
    max_cpu_s_per_team: float = Field(default=0.0, ge=0, description="CPU seconds a team's jobs may use in "
                                      "`cpu_quota_window_h`; at or over it, submissions get 429 with Retry-After. "
                                      "0 = no quota.")
    cpu_quota_window_h: float = Field(default=24.0, gt=0, le=24 * 366, description="Sliding window of "
                                      "`max_cpu_s_per_team`, in hours (jobs count by when they finished).")
    max_stored_bytes_per_team: int = Field(default=0, ge=0, description="Bytes of job results a team may store; "
                                           "at or over it, submissions get 403. 0 = no quota.")
    max_running_jobs_per_token: int = Field(default=0, ge=0, description="Jobs of one token running at once; 0 = no "
                                                                         "cap beyond the fair share.")
    token_max_lifetime_days: float = Field(default=365.0, gt=0, le=3650, description="No API token lives longer "
                                           "than this from its first issue: rotation keeps the first issue time, "
                                           "and new tokens asking for more get this.")
    auth_failures_per_minute: int = Field(default=20, ge=1, description="Failed authentications one client address "
                                                                        "may make per minute before 429.")
    header_timeout_s: float = Field(default=10.0, gt=0, description="A connection must send a request's headers "
                                                                    "within this many seconds, or it is closed.")
    max_header_bytes: int = Field(default=64 * 1024, ge=1024, description="Largest request line and header block "
                                                                         "in bytes (431 above).")
    gzip_min_bytes: int = Field(default=1024, ge=1, description="JSON answers at least this large are sent "
                                                                "gzip-compressed to clients that accept it "
                                                                "(docs/api.md \"Compression\").")
    body_timeout_s: float = Field(default=30.0, gt=0, description="A request's body must arrive within this many "
                                                                  "seconds of its headers, plus a second per "
                                                                  "`body_min_bytes_per_s` bytes received (408 after).")
    body_min_bytes_per_s: int = Field(default=16 * 1024, ge=1, description="Each this many bytes of a request body "
                                                                           "received extend its deadline by a second.")
    deleted_retention_days: float = Field(default=7.0, ge=0, description="Days a deleted scenario's versions (and "
                                                                         "its finished jobs) are kept; 0 = forever.")
    job_retention_days: float = Field(default=30.0, ge=0, description="Days a finished job and its result files are "
                                                                      "kept; 0 = forever.")
    audit_retention_days: float = Field(default=365.0, ge=0, description="Days audit entries are kept; 0 = forever.")
    max_versions_per_scenario: int = Field(default=100, ge=1, description="Versions kept per scenario; older ones "
                                                                          "no job refers to are freed.")
    maintenance_interval_s: float = Field(default=300.0, gt=0, description="Seconds between retention sweeps.")
    result_store: str = Field(default="", max_length=1000,
                              description="Where finished jobs' results live: empty = the folder <data dir>/results "
                                          "(a worker's --results-dir) on storage every server and worker mounts; "
                                          "s3://bucket/prefix = an S3-compatible object store (the s3 extra; "
                                          "credentials and endpoint from the AWS_* variables). docs/deploy.md.")
    run_migrations: bool = Field(default=True, description="Run `alembic upgrade head` when the app starts.")

    @field_validator("result_store")
    @classmethod
    def _result_store_url(cls, value: str) -> str:
        from backbone.api.result_store import parse_result_store

        parse_result_store(value)  # ValueError: one sentence, reported naming BACKBONE_RESULT_STORE
        return value.strip()

    @field_validator("oidc_authorization_endpoint", "oidc_token_endpoint")
    @classmethod
    def _endpoint_url(cls, value: str) -> str:
        from backbone.api.oidc_login import endpoint_url

        return endpoint_url(value.strip()) if value.strip() else ""

    @model_validator(mode="after")
    def _oidc_client_complete(self) -> Settings:
        from backbone.api.oidc_login import check_client_settings

        check_client_settings(self)  # ValueError: one sentence naming the BACKBONE_OIDC_* variables
        return self

    @model_validator(mode="after")
    def _heartbeat_within_lease(self) -> Settings:
        if self.job_heartbeat_s >= self.job_lease_s:
            raise ValueError(f"BACKBONE_JOB_HEARTBEAT_S ({self.job_heartbeat_s:g}) must be below BACKBONE_JOB_LEASE_S "
                             f"({self.job_lease_s:g}), or every lease expires between two heartbeats")
        return self

    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file in the data dir."""
        return self.database_url or f"sqlite:///{(self.data_dir / 'backbone.db').resolve()}"

    def ensure_dirs(self) -> None:
        """Create the data dir and its sub-folders."""
        for sub in ("results", "staging", "uploads"):
            (self.data_dir / sub).mkdir(parents=True, exist_ok=True)
