"""What each team used, and the per-team quotas on it: CPU seconds of its jobs in a sliding window and the
bytes of its stored results (docs/api.md "Quotas").

A job records its CPU seconds as it ends (``jobs.cpu_s``: its process and the processes it waited for) and the
size of its stored result (``jobs.result_bytes``). A team at or over a quota gets its next submission refused:
429 with ``Retry-After`` for CPU seconds (the window moves on), 403 for stored bytes (it has to delete results,
or wait for retention to purge them). Quotas are checked on submit, in the transaction that queues the job;
a job already queued or running is never stopped by them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backbone.api.models import Job, utcnow
from backbone.api.store.base import as_utc, same_team


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

    def __init__(self, message: str, quota: str, status: int, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.quota, self.http_status, self.retry_after_s = quota, status, retry_after_s
        self.title = "Too Many Requests" if status == 429 else "Forbidden"

    @property
    def headers(self) -> dict[str, str]:
        """``Retry-After`` for a CPU-seconds quota (none for stored bytes)."""
        return {} if self.retry_after_s is None else {"Retry-After": str(self.retry_after_s)}

    def problem_errors(self) -> list[dict[str, str]]:
        """The one problem: the quota, by its environment variable."""
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


def check_quotas(s: Session, team_id: str | None, quotas: JobQuotas) -> None:
    """Refuse a new job of ``team_id`` at or over a quota.

    Raises
    ------
    QuotaExceededError
        Naming the quota, the use and the limit.
    """
    if not quotas.any:
        return
    used = team_usage(s, team_id, quotas.window_s)
    who = "this team" if team_id is not None else "the team-less tenant"
    if quotas.stored_bytes and used.stored_bytes >= quotas.stored_bytes:
        raise QuotaExceededError(f"{who} stores {used.stored_bytes} bytes of job results in {used.stored_results} "
                                 f"jobs, at or over its quota of {quotas.stored_bytes} "
                                 "(BACKBONE_MAX_STORED_BYTES_PER_TEAM); delete some results' scenarios or wait for "
                                 "retention", "BACKBONE_MAX_STORED_BYTES_PER_TEAM", 403)
    if quotas.cpu_s and used.cpu_s >= quotas.cpu_s:
        leaves = used.window_oldest_at + timedelta(seconds=quotas.window_s) if used.window_oldest_at else utcnow()
        retry = max(1, int((leaves - utcnow()).total_seconds() + 0.999))
        raise QuotaExceededError(f"{who} used {used.cpu_s:.1f} CPU seconds in the last {quotas.window_s / 3600:g} h, "
                                 f"at or over its quota of {quotas.cpu_s:g} (BACKBONE_MAX_CPU_S_PER_TEAM)",
                                 "BACKBONE_MAX_CPU_S_PER_TEAM", 429, retry)
