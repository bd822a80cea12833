"""Scenario imports as jobs: an upload stored with its ``import`` job, and the scenario (or version) it creates
written in the same transaction that marks the job succeeded, so an import runs at most once however often it is
claimed (docs/api.md "Imports as jobs").

A new scenario's id is fixed when the job is queued: a *placeholder* scenario row (head version 0, marked deleted,
so no listing, read or job sees it) holds it, and the job runs "on" that id. The import gives it version 1 and
clears the mark; a failed import leaves the placeholder deleted, and retention purges it with its job
(``BACKBONE_DELETED_RETENTION_DAYS``). A version upload runs on its scenario and adds the next version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from backbone.api.models import Job, JobInput, Scenario, utcnow
from backbone.api.store.audit import record_audit
from backbone.api.store.base import (
    SYSTEM,
    Database,
    EncodedDocument,
    GoneError,
    Principal,
    clean_text,
    new_id,
)
from backbone.api.store.scenarios import ScenarioRepository
from backbone.api.store.usage import JobQuotas

if TYPE_CHECKING:
    from backbone.api.store.jobs import JobRepository

IMPORT_KIND = "import"
"""The job kind of a scenario upload run as a job."""

ImportMode = Literal["create", "version"]


@dataclass(frozen=True)
class ImportInput:
    """What an import job parses: the uploaded bytes and their file name (None: a canonical JSON body)."""

    content: bytes
    filename: str | None


@dataclass(frozen=True)
class ImportOutcome:
    """What a finished import wrote: the scenario and its new version; or, when the scenario changed meanwhile
    (If-Match), was deleted or made read-only, why nothing was written (``conflict``)."""

    recorded: bool
    scenario_id: str
    version: int | None = None
    conflict: str | None = None


def drop_job_inputs(s: Session, job_ids: list[str]) -> None:
    """Delete the stored uploads of ``job_ids`` (their jobs ended) in session ``s``."""
    for i in range(0, len(job_ids), 500):
        s.execute(delete(JobInput).where(JobInput.job_id.in_(job_ids[i:i + 500])))


def _principal(job: Job) -> Principal:
    """The submitter of ``job``, as the scenario's creator (its token, name and team)."""
    return Principal(job.created_by_token or job.owner_id, job.created_by, "planner", job.team_id)


class ImportRepository:
    """Queue import jobs with their uploads, hand the uploads to the worker, and record what an import wrote."""

    def __init__(self, db: Database, jobs: JobRepository) -> None:
        self.db = db
        self.jobs = jobs

    def create_import_job(self, content: bytes, filename: str | None, who: Principal,
                          scenario_id: str | None = None, expected_version: int | None = None,
                          max_queued: int | None = None, max_queued_per_owner: int | None = None,
                          quotas: JobQuotas | None = None) -> Job:
        """Queue an import of ``content`` (limits and quotas as :meth:`JobRepository.create_job`): a new scenario
        (``scenario_id`` None), or the next version of ``scenario_id`` (``expected_version``: If-Match's).

        Raises
        ------
        GoneError, ReadOnlyError (a ConflictError)
            ``scenario_id`` is not the caller's to change.
        QueueFullError, QuotaExceededError
            As for any job.
        """
        if filename is not None:  # the base name, its last 200 characters (the suffix names the format)
            filename = filename.replace("\\", "/").rsplit("/", 1)[-1][-200:] or "upload"
        mode: ImportMode = "create" if scenario_id is None else "version"
        base = 1
        if scenario_id is not None:
            with self.db.session() as s:
                sc = s.get(Scenario, scenario_id)
                ScenarioRepository.check_scenario_writable(sc, scenario_id, who)
                assert sc is not None
                base = sc.head_version
        sid = scenario_id or new_id()
        options = {"mode": mode, "filename": filename, "size_bytes": len(content),
                   "expected_version": expected_version}

        def attach(s: Session, job: Job) -> None:
            now = utcnow()
            if mode == "create":
                s.add(Scenario(id=sid, name="import", head_version=0, created_at=now, updated_at=now,
                               created_by=who.name, team_id=who.team_id, read_only=False,
                               created_by_token=who.token_id, deleted_at=now))
                s.flush()
            s.add(JobInput(job_id=job.id, filename=filename, content=content, size_bytes=len(content),
                           created_at=now))

        return self.jobs.create_job(sid, base, IMPORT_KIND, options, who, max_queued, max_queued_per_owner,
                                    quotas=quotas, attach=attach)

    def import_input(self, job_id: str) -> ImportInput:
        """The upload of an import job. Raises GoneError when it is gone (the job ended)."""
        with self.db.session() as s:
            row = s.get(JobInput, job_id)
            if row is None:
                raise GoneError(f"import job {job_id} has no stored upload")
            return ImportInput(row.content, row.filename)

    def finish_import(self, job_id: str, document: EncodedDocument, counts: dict[str, int], source_format: str,
                      worker_id: str | None = None) -> ImportOutcome:
        """Write what import job ``job_id`` parsed and mark the job succeeded, in one transaction; nothing when the
        job is no longer running (cancelled, or reclaimed from this worker: ``worker_id``), so a retried import
        never writes twice. When the scenario cannot take the version (If-Match is stale, it was deleted or made
        read-only meanwhile), nothing is written and :attr:`ImportOutcome.conflict` says why; the caller fails
        the job."""
        with self.db.session() as s:
            where = [Job.id == job_id, Job.status == "running"]
            if worker_id is not None:
                where.append(Job.worker_id == worker_id)
            job = s.scalars(select(Job).where(*where).with_for_update()).one_or_none()
            if job is None:
                return ImportOutcome(False, "")
            sid, options, who, now = job.scenario_id, job.options or {}, _principal(job), utcnow()
            sc = s.scalars(select(Scenario).where(Scenario.id == sid).with_for_update()).one_or_none()
            conflict = _conflict(sc, sid, options)
            if conflict is not None:
                return ImportOutcome(False, sid, conflict=conflict)
            assert sc is not None
            version = sc.head_version + 1
            ScenarioRepository.add_version(s, sid, version, document, counts, source_format, who, now)
            s.execute(update(Scenario).where(Scenario.id == sid, Scenario.head_version == sc.head_version).values(
                head_version=version, updated_at=now, deleted_at=None, name=clean_text(document.name or sc.name)))
            message = f"imported scenario {sid} version {version}"
            s.execute(update(Job).where(Job.id == job_id).values(
                status="succeeded", progress=1.0, message=message, scenario_version=version, finished_at=now,
                lease_expires_at=None, files=[]))
            drop_job_inputs(s, [job_id])
            action = "scenario.create" if version == 1 else "scenario.update"
            record_audit(s, who, action, "scenario", sid, {"version": version, "format": source_format,
                                                           "job": job_id, **counts})
            record_audit(s, SYSTEM, "job.succeeded", "job", job_id, {"message": message})
            return ImportOutcome(True, sid, version)


def _conflict(sc: Scenario | None, sid: str, options: dict[str, Any]) -> str | None:
    """Why scenario ``sid`` cannot take the import's version now (None: it can)."""
    if options.get("mode") == "create":
        return None if sc is not None and sc.head_version == 0 else f"scenario {sid} was imported already"
    if sc is None or sc.deleted_at is not None:
        return f"scenario {sid} was deleted before the import finished"
    if sc.read_only:
        return f"scenario {sid} ({sc.name}) is read-only"
    expected = options.get("expected_version")
    if expected is not None and int(expected) != sc.head_version:
        return f"scenario {sid} is at version {sc.head_version}, not {expected} (If-Match is stale)"
    return None

