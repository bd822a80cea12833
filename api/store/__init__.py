"""The API's persistent store: tokens, versioned scenarios, jobs and the audit log (SQLAlchemy 2).

SQLite (the embedded default) and PostgreSQL are both supported; the schema is created and
upgraded by the Alembic migrations in ``api/migrations`` (:func:`upgrade_database`). Every
mutation writes its audit entry in the same transaction.

The store is a set of repositories over one :class:`Database`, one module each: tokens and teams
(:mod:`.tokens`), scenarios (:mod:`.scenarios`), jobs (:mod:`.jobs`), uploads run as jobs (:mod:`.imports`), teams' quotas and usage (:mod:`.usage`),
the audit log (:mod:`.audit`) and retention (:mod:`.retention`). :class:`Store` composes them and is what the API, the job runner and the
CLI hold: ``store.tokens.authenticate(...)`` and ``store.authenticate(...)`` are the same call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from backbone.api.store.audit import AuditRepository, record_audit
from backbone.api.store.base import (
    AUDIT_OPTIONS_BYTES,
    DEFAULT_TOKEN_DAYS,
    DEFAULT_TOKEN_MAX_DAYS,
    FINAL_STATES,
    JOB_STATES,
    SCOPES,
    SYSTEM,
    TOKEN_PREFIX,
    UNCONDITIONAL_RETRIES,
    ConflictError,
    Database,
    EncodedDocument,
    GoneError,
    Principal,
    QueueFullError,
    ReadOnlyError,
    SchemaBehindError,
    as_utc,
    check_schema_current,
    clean_text,
    decode_document,
    downgrade_database,
    encode_document,
    etag_of,
    hash_token,
    make_engine,
    migration_revisions,
    new_id,
    safe_text,
    schema_revision,
    upgrade_database,
)
from backbone.api.store.imports import IMPORT_KIND, ImportInput, ImportOutcome, ImportRepository
from backbone.api.store.jobs import MAX_ATTEMPTS, WORKER_LOST, JobRepository, LeaseState, ReclaimReport
from backbone.api.store.retention import PurgeReport, RetentionRepository
from backbone.api.store.scenarios import ScenarioRepository
from backbone.api.store.tokens import TeamRepository, TokenRepository
from backbone.api.store.usage import (
    EffectiveQuotas,
    JobQuotas,
    QuotaExceededError,
    QuotaRepository,
    QuotaSources,
    TeamQuotaSettings,
    TeamUsage,
)

__all__ = [
    "AUDIT_OPTIONS_BYTES",
    "DEFAULT_TOKEN_DAYS",
    "DEFAULT_TOKEN_MAX_DAYS",
    "FINAL_STATES",
    "IMPORT_KIND",
    "JOB_STATES",
    "MAX_ATTEMPTS",
    "SCOPES",
    "SYSTEM",
    "TOKEN_PREFIX",
    "UNCONDITIONAL_RETRIES",
    "WORKER_LOST",
    "AuditRepository",
    "ConflictError",
    "Database",
    "EffectiveQuotas",
    "EncodedDocument",
    "GoneError",
    "ImportInput",
    "ImportOutcome",
    "ImportRepository",
    "JobQuotas",
    "JobRepository",
    "LeaseState",
    "Principal",
    "PurgeReport",
    "QueueFullError",
    "QuotaExceededError",
    "QuotaRepository",
    "QuotaSources",
    "ReadOnlyError",
    "ReclaimReport",
    "RetentionRepository",
    "ScenarioRepository",
    "SchemaBehindError",
    "Store",
    "TeamQuotaSettings",
    "TeamRepository",
    "TeamUsage",
    "TokenRepository",
    "as_utc",
    "check_schema_current",
    "clean_text",
    "decode_document",
    "downgrade_database",
    "encode_document",
    "etag_of",
    "hash_token",
    "make_engine",
    "migration_revisions",
    "new_id",
    "record_audit",
    "safe_text",
    "schema_revision",
    "upgrade_database",
]


class Store:
    """Typed access to the API's tables: the repositories over one database, and their methods.

    Each repository method is also an attribute of the store (``store.create_job`` is
    ``store.jobs.create_job``), so callers hold one object.

    Parameters
    ----------
    url
        SQLAlchemy database URL.
    token_max_lifetime_days
        Hard maximum lifetime of a token and its rotations, from the first one's issue
        (``BACKBONE_TOKEN_MAX_LIFETIME_DAYS``).
    """

    def __init__(self, url: str, token_max_lifetime_days: float = DEFAULT_TOKEN_MAX_DAYS) -> None:
        self.db = Database(url)
        self.url = url
        self.engine = self.db.engine
        self.tokens = TokenRepository(self.db, token_max_lifetime_days)
        self.teams = TeamRepository(self.db)
        self.scenarios = ScenarioRepository(self.db)
        self.jobs = JobRepository(self.db)
        self.audit = AuditRepository(self.db)
        self.retention = RetentionRepository(self.db)
        self.quotas = QuotaRepository(self.db)
        self.imports = ImportRepository(self.db, self.jobs)

        self.create_token = self.tokens.create_token
        self.rotate_token = self.tokens.rotate_token
        self.revoke_token = self.tokens.revoke_token
        self.list_tokens = self.tokens.list_tokens
        self.token_expires_at = self.tokens.token_expires_at
        self.authenticate = self.tokens.authenticate
        self.cached_principal = self.tokens.cached_principal

        self.create_team = self.teams.create_team
        self.list_teams = self.teams.list_teams
        self.get_team = self.teams.get_team
        self.team_quotas = self.quotas.team_quotas
        self.set_team_quotas = self.quotas.set_team_quotas
        self.clear_team_quotas = self.quotas.clear_team_quotas
        self.effective_quotas = self.quotas.effective_quotas

        self.create_scenario = self.scenarios.create_scenario
        self.get_scenario = self.scenarios.get_scenario
        self.get_version = self.scenarios.get_version
        self.list_scenarios = self.scenarios.list_scenarios
        self.list_versions = self.scenarios.list_versions
        self.update_scenario = self.scenarios.update_scenario
        self.check_writable = self.scenarios.check_writable
        self.delete_scenario = self.scenarios.delete_scenario
        self.scenario_document = self.scenarios.scenario_document

        self.create_job = self.jobs.create_job
        self.create_import_job = self.imports.create_import_job
        self.import_input = self.imports.import_input
        self.finish_import = self.imports.finish_import
        self.get_job = self.jobs.get_job
        self.list_jobs = self.jobs.list_jobs
        self.count_jobs_by_status = self.jobs.count_jobs_by_status
        self.claim_next_job = self.jobs.claim_next_job
        self.set_progress = self.jobs.set_progress
        self.record_usage = self.jobs.record_usage
        self.team_usage = self.jobs.team_usage
        self.finish_job = self.jobs.finish_job
        self.cancel_job = self.jobs.cancel_job
        self.fail_interrupted_jobs = self.jobs.fail_interrupted_jobs
        self.heartbeat = self.jobs.heartbeat
        self.renew_leases = self.jobs.renew_leases
        self.held_jobs = self.jobs.held_jobs
        self.release_job = self.jobs.release_job
        self.reclaim_expired_jobs = self.jobs.reclaim_expired_jobs
        self.workers_holding_leases = self.jobs.workers_holding_leases
        self.oldest_lease_age_s = self.jobs.oldest_lease_age_s

        self.audit_auth_failure = self.audit.audit_auth_failure
        self.list_audit = self.audit.list_audit
        self.purge = self.retention.purge

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session in a transaction, committed on success."""
        with self.db.session() as s:
            yield s

    def upgrade(self) -> None:
        """Bring the schema to the newest migration."""
        upgrade_database(self.engine)

    def check_schema(self) -> None:
        """Raise :class:`SchemaBehindError` unless the schema is this release's (when migrations are off)."""
        check_schema_current(self.engine)

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
