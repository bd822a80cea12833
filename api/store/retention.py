"""Retention: what the store frees once the retention settings no longer keep it (finished jobs, deleted
scenarios, surplus versions, old audit entries)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import delete, exists, func, select

from backbone.api.models import AuditEntry, Job, Scenario, ScenarioVersion, utcnow
from backbone.api.store.audit import record_audit
from backbone.api.store.base import FINAL_STATES, SYSTEM, Database
from backbone.api.store.imports import drop_job_inputs


@dataclass
class PurgeReport:
    """What one :meth:`Store.purge` freed."""

    job_ids: list[str] = field(default_factory=list)
    scenarios: int = 0
    versions: int = 0
    audit_entries: int = 0

    def any(self) -> bool:
        """Whether anything was freed."""
        return bool(self.job_ids or self.scenarios or self.versions or self.audit_entries)

    def counts(self) -> dict[str, int]:
        """Counts per kind, for the audit log and the CLI."""
        return {"jobs": len(self.job_ids), "scenarios": self.scenarios, "versions": self.versions,
                "audit_entries": self.audit_entries}


class RetentionRepository:
    """Purges what the retention settings no longer keep, across jobs, scenarios and the audit log."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def purge(self, deleted_retention_s: float = 0, job_retention_s: float = 0, audit_retention_s: float = 0,
              max_versions_per_scenario: int = 0) -> PurgeReport:
        """Free what the retention settings no longer keep (0 = keep forever / no cap).

        * jobs finished more than ``job_retention_s`` ago;
        * scenarios deleted more than ``deleted_retention_s`` ago: their finished jobs, then their
          versions and the scenario itself (kept while a job of theirs is still queued or running);
        * versions older than the newest ``max_versions_per_scenario`` that no job refers to;
        * audit entries older than ``audit_retention_s``.

        The caller deletes the result folders of :attr:`PurgeReport.job_ids`. One ``store.purge``
        audit entry records the counts.
        """
        now = utcnow()
        report = PurgeReport()
        with self.db.session() as s:
            final = Job.status.in_(tuple(FINAL_STATES))
            doomed_jobs: set[str] = set()
            if job_retention_s:
                cutoff = now - timedelta(seconds=job_retention_s)
                doomed_jobs |= set(s.scalars(select(Job.id).where(final, Job.finished_at < cutoff)))
            gone: list[str] = []
            if deleted_retention_s:
                cutoff = now - timedelta(seconds=deleted_retention_s)
                gone = list(s.scalars(select(Scenario.id).where(Scenario.deleted_at.is_not(None),
                                                                Scenario.deleted_at < cutoff)))
                if gone:
                    doomed_jobs |= set(s.scalars(select(Job.id).where(final, Job.scenario_id.in_(gone))))
            if doomed_jobs:
                ids = sorted(doomed_jobs)
                drop_job_inputs(s, ids)  # an import's upload, were one left
                for i in range(0, len(ids), 500):
                    s.execute(delete(Job).where(Job.id.in_(ids[i:i + 500])))
                report.job_ids = ids
            for sid in gone:
                if s.scalar(select(func.count()).select_from(Job).where(Job.scenario_id == sid)):
                    continue  # a job of it is still queued or running
                report.versions += s.execute(delete(ScenarioVersion).where(
                    ScenarioVersion.scenario_id == sid)).rowcount  # type: ignore[attr-defined]
                s.execute(delete(Scenario).where(Scenario.id == sid))
                report.scenarios += 1
            if max_versions_per_scenario:
                used = exists().where(Job.scenario_id == ScenarioVersion.scenario_id,
                                      Job.scenario_version == ScenarioVersion.version)
                heads = select(Scenario.id, Scenario.head_version).where(
                    Scenario.head_version > max_versions_per_scenario)
                for sid, head in s.execute(heads).all():
                    report.versions += s.execute(delete(ScenarioVersion).where(
                        ScenarioVersion.scenario_id == sid,
                        ScenarioVersion.version <= head - max_versions_per_scenario,
                        ~used)).rowcount  # type: ignore[attr-defined]
            if audit_retention_s:
                cutoff = now - timedelta(seconds=audit_retention_s)
                report.audit_entries = s.execute(delete(AuditEntry).where(
                    AuditEntry.at < cutoff)).rowcount  # type: ignore[attr-defined]
            if report.any():
                record_audit(s, SYSTEM, "store.purge", "store", "retention", report.counts())
        return report
