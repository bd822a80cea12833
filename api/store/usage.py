"""What each team used, and the per-team quotas on it: CPU seconds of its jobs in a sliding window and the
bytes of its stored results (docs/api.md "Quotas").

A job records its CPU seconds as it ends (``jobs.cpu_s``: its process and the processes it waited for) and the
size of its stored result (``jobs.result_bytes``). A team at or over a quota gets its next submission refused:
429 with ``Retry-After`` for CPU seconds (the window moves on), 403 for stored bytes (it has to delete results,
or wait for retention to purge them). Quotas are checked on submit, in the transaction that queues the job;
a job already queued or running is never stopped by them.

Each quota is the team's own setting when an admin set one (:class:`TeamQuotaSettings`, columns of ``teams``;
0 lifts the quota for that team), else the server's (``BACKBONE_MAX_CPU_S_PER_TEAM``,
``BACKBONE_CPU_QUOTA_WINDOW_H``, ``BACKBONE_MAX_STORED_BYTES_PER_TEAM``): :func:`effective_quotas`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backbone.api.models import Job, Team, utcnow
from backbone.api.store.audit import record_audit
from backbone.api.store.base import SYSTEM, Database, Principal, as_utc, same_team
from backbone.api.store.tokens import team_id_of

QuotaSource = Literal["team", "server"]
"""Where an effective quota comes from: the team's own setting, or the server's."""

SERVER_VARIABLES = {"max_cpu_s": "BACKBONE_MAX_CPU_S_PER_TEAM", "cpu_window_h": "BACKBONE_CPU_QUOTA_WINDOW_H",
                    "max_stored_bytes": "BACKBONE_MAX_STORED_BYTES_PER_TEAM"}
"""The server setting each team quota falls back to."""


@dataclass(frozen=True)
class JobQuotas:
    """Per-team quotas (0 = none): CPU seconds of finished jobs within the last ``window_s`` seconds, and bytes
    of stored results."""

    cpu_s: float = 0.0
    window_s: float = 86_400.0
    stored_bytes: int = 0

    @property
    def any(self) -> bool:
        """Whether any quota is set."""
        return bool(self.cpu_s or self.stored_bytes)


@dataclass(frozen=True)
class TeamQuotaSettings:
    """A team's own quotas, as an admin set them: None = the server's setting; 0 (CPU seconds, stored bytes) =
    no quota for this team."""

    max_cpu_s: float | None = None
    cpu_window_h: float | None = None
    max_stored_bytes: int | None = None

    @property
    def any(self) -> bool:
        """Whether the team sets any quota of its own."""
        return any(v is not None for v in asdict(self).values())


@dataclass(frozen=True)
class QuotaSources:
    """Where each effective quota comes from."""

    max_cpu_s: QuotaSource = "server"
    cpu_window_h: QuotaSource = "server"
    max_stored_bytes: QuotaSource = "server"


@dataclass(frozen=True)
class EffectiveQuotas:
    """The quotas that hold for one team (its own settings over the server's), and where each came from."""

    team_id: str | None
    quotas: JobQuotas
    sources: QuotaSources
    team_settings: TeamQuotaSettings


def effective_quotas(s: Session, team_id: str | None, server: JobQuotas) -> EffectiveQuotas:
    """``team_id``'s quotas, read in session ``s``: each of the team's own settings that is set, else the server's
    (``server``). The team-less tenant (None) and a team the database does not know (a JWT's) get the server's."""
    row = s.get(Team, team_id) if team_id is not None else None
    own = TeamQuotaSettings() if row is None else TeamQuotaSettings(row.max_cpu_s, row.cpu_window_h,
                                                                     row.max_stored_bytes)
    quotas = JobQuotas(cpu_s=server.cpu_s if own.max_cpu_s is None else own.max_cpu_s,
                       window_s=server.window_s if own.cpu_window_h is None else own.cpu_window_h * 3600.0,
                       stored_bytes=server.stored_bytes if own.max_stored_bytes is None else own.max_stored_bytes)
    sources = QuotaSources(*("server" if v is None else "team" for v in
                             (own.max_cpu_s, own.cpu_window_h, own.max_stored_bytes)))
    return EffectiveQuotas(team_id, quotas, sources, own)


class QuotaRepository:
    """Teams' own quotas: set, read and cleared by admins, each change audited with the values before and after."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def team_quotas(self, team: str, server: JobQuotas) -> EffectiveQuotas:
        """A team's (id or name) effective quotas over the server's ``server``. Raises GoneError."""
        with self.db.session() as s:
            return effective_quotas(s, team_id_of(s, team), server)

    def effective_quotas(self, team_id: str | None, server: JobQuotas) -> EffectiveQuotas:
        """As :func:`effective_quotas`, in a session of its own."""
        with self.db.session() as s:
            return effective_quotas(s, team_id, server)

    def set_team_quotas(self, team: str, quotas: TeamQuotaSettings, server: JobQuotas,
                        who: Principal = SYSTEM) -> EffectiveQuotas:
        """Replace a team's (id or name) own quotas by ``quotas`` (None fields: the server's setting); audited as
        ``team.quotas.set`` (``team.quotas.clear`` when nothing is left set). Raises GoneError."""
        with self.db.session() as s:
            team_id = team_id_of(s, team)
            row = s.get(Team, team_id)
            assert row is not None
            before = TeamQuotaSettings(row.max_cpu_s, row.cpu_window_h, row.max_stored_bytes)
            row.max_cpu_s, row.cpu_window_h, row.max_stored_bytes = (quotas.max_cpu_s, quotas.cpu_window_h,
                                                                     quotas.max_stored_bytes)
            record_audit(s, who, "team.quotas.set" if quotas.any else "team.quotas.clear", "team", team_id,
                         {"name": row.name, "before": asdict(before), "after": asdict(quotas)})
            s.flush()
            return effective_quotas(s, team_id, server)

    def clear_team_quotas(self, team: str, server: JobQuotas, who: Principal = SYSTEM) -> EffectiveQuotas:
        """Clear a team's own quotas: the server's settings hold for it again. Raises GoneError."""
        return self.set_team_quotas(team, TeamQuotaSettings(), server, who)


@dataclass(frozen=True)
class TeamUsage:
    """One team's use: CPU seconds of its jobs finished in the window, the bytes of its stored results and of
    how many jobs, and when the oldest job counted in the window leaves it (None: no CPU counted)."""

    team_id: str | None
    cpu_s: float
    window_s: float
    stored_bytes: int
    stored_results: int
    window_oldest_at: datetime | None


class QuotaExceededError(Exception):
    """A team at or over a quota submits a job: 429 with ``Retry-After`` for CPU seconds, 403 for stored bytes.

    The problem document names the quota (its setting's environment variable) in ``errors[].field``.
    """

    http_status = 429
    """The class's status; each error carries its own (429 or 403) as ``http_status``."""

    def __init__(self, message: str, quota: str, status: int, retry_after_s: int | None = None,
                 source: QuotaSource = "server") -> None:
        super().__init__(message)
        self.quota, self.http_status, self.retry_after_s = quota, status, retry_after_s
        self.source = source
        self.title = "Too Many Requests" if status == 429 else "Forbidden"

    @property
    def headers(self) -> dict[str, str]:
        """``Retry-After`` for a CPU-seconds quota (none for stored bytes)."""
        return {} if self.retry_after_s is None else {"Retry-After": str(self.retry_after_s)}

    def problem_errors(self) -> list[dict[str, str]]:
        """The one problem: the quota, by its environment variable (the server's), or as the team's field
        (``file: team``, ``table: quotas``) when the team has its own."""
        if self.source == "team":
            return [{"file": "team", "table": "quotas", "record": "", "field": self.quota, "message": str(self)}]
        return [{"file": "settings", "table": "quota", "record": "", "field": self.quota, "message": str(self)}]


def team_usage(s: Session, team_id: str | None, window_s: float) -> TeamUsage:
    """``team_id``'s use (None: the team-less tenant), read in session ``s``."""
    since = utcnow() - timedelta(seconds=window_s)
    team = same_team(Job.team_id, team_id)
    cpu, oldest = s.execute(select(func.coalesce(func.sum(Job.cpu_s), 0.0), func.min(Job.finished_at))
                            .where(team, Job.cpu_s.is_not(None), Job.finished_at >= since)).one()
    stored, results = s.execute(select(func.coalesce(func.sum(Job.result_bytes), 0), func.count())
                                .where(team, Job.result_bytes.is_not(None))).one()
    return TeamUsage(team_id, float(cpu or 0.0), float(window_s), int(stored or 0), int(results),
                     None if oldest is None else as_utc(oldest))


def check_quotas(s: Session, team_id: str | None, server: JobQuotas) -> EffectiveQuotas:
    """Refuse a new job of ``team_id`` at or over a quota: the team's own, else the server's (``server``).

    Raises
    ------
    QuotaExceededError
        Naming the quota (its variable, or the team's field), the use and the limit.
    """
    effective = effective_quotas(s, team_id, server)
    quotas, sources = effective.quotas, effective.sources
    if not quotas.any:
        return effective
    used = team_usage(s, team_id, quotas.window_s)
    who = "this team" if team_id is not None else "the team-less tenant"
    if quotas.stored_bytes and used.stored_bytes >= quotas.stored_bytes:
        name = _quota_name("max_stored_bytes", sources.max_stored_bytes)
        raise QuotaExceededError(f"{who} stores {used.stored_bytes} bytes of job results in {used.stored_results} "
                                 f"jobs, at or over its quota of {quotas.stored_bytes} ({_quota_label(name)}); "
                                 "delete some results' scenarios or wait for retention", name, 403,
                                 source=sources.max_stored_bytes)
    if quotas.cpu_s and used.cpu_s >= quotas.cpu_s:
        leaves = used.window_oldest_at + timedelta(seconds=quotas.window_s) if used.window_oldest_at else utcnow()
        retry = max(1, int((leaves - utcnow()).total_seconds() + 0.999))
        name = _quota_name("max_cpu_s", sources.max_cpu_s)
        raise QuotaExceededError(f"{who} used {used.cpu_s:.1f} CPU seconds in the last {quotas.window_s / 3600:g} h, "
                                 f"at or over its quota of {quotas.cpu_s:g} ({_quota_label(name)})",
                                 name, 429, retry, source=sources.max_cpu_s)
    return effective


def _quota_name(field: str, source: QuotaSource) -> str:
    """The quota's name in a refusal: the server's variable, or the team's field."""
    return field if source == "team" else SERVER_VARIABLES[field]


def _quota_label(name: str) -> str:
    return name if name.startswith("BACKBONE_") else f"the team's own {name}"
