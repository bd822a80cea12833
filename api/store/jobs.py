"""The job repository: the queue of planning jobs with per-token and server-wide limits, the fair-share
claim of the next job, progress, completion and cancellation."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select, text, update
from sqlalchemy.orm import Session, defer

from backbone.api.models import Job, utcnow
from backbone.api.store.audit import record_audit
from backbone.api.store.base import (
    AUDIT_OPTIONS_BYTES,
    FINAL_STATES,
    JOB_STATES,
    SYSTEM,
    ConflictError,
    Database,
    GoneError,
    Principal,
    QueueFullError,
    as_utc,
    clean_text,
    new_id,
    same_team,
)
from backbone.api.store.imports import drop_job_inputs
from backbone.api.store.usage import JobQuotas, TeamUsage, check_quotas, team_usage

CLAIM_LOCK_KEY = 0x6261636B626F6E65  # "backbone"
"""PostgreSQL advisory-lock key that serialises the fair-share decision of concurrent claims (see
:meth:`JobRepository.claim_next_job`)."""

MAX_ATTEMPTS = 2
"""Claims of one job: a job whose worker was lost is retried once (when its kind is idempotent)."""

WORKER_LOST = "worker lost"
"""The reason of a job whose worker stopped renewing its lease and that is not retried."""


@dataclass(frozen=True)
class LeaseState:
    """What a worker's heartbeat learns about one job it runs."""

    held: bool
    """The worker still holds the job (it is running under this worker's lease)."""
    cancel_requested: bool
    """Someone cancelled the job: stop its process tree."""


@dataclass(frozen=True)
class ReclaimReport:
    """Jobs whose lease expired: put back in the queue, or failed with :data:`WORKER_LOST`."""

    requeued: list[str]
    failed: list[str]
    workers: list[str] = field(default_factory=list)
    """The workers whose jobs these were (each once, sorted)."""


def _serialise_claims(s: Session) -> None:
    """Make this transaction the only claim deciding at this moment.

    PostgreSQL: a transaction-scoped advisory lock (released at commit). SQLite: a write that matches no row takes
    the database's write lock now rather than at the claim's UPDATE, so the counts read next are still true when
    the claim is written (SQLite has one writer at a time anyway).
    """
    if s.get_bind().dialect.name == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CLAIM_LOCK_KEY})
    else:
        s.execute(update(Job).where(Job.id.is_(None)).values(status=Job.status))


class JobRepository:
    """Planning jobs, visible per team; each mutation is audited."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create_job(self, sid: str, version: int, kind: str, options: dict[str, Any], who: Principal,
                   max_queued: int | None = None, max_queued_per_owner: int | None = None,
                   retry_after_s: int = 30, quotas: JobQuotas | None = None,
                   attach: Callable[[Session, Job], None] | None = None) -> Job:
        """Queue a job on one scenario version, owned by ``who``'s token (``attach`` adds rows that belong with
        it, in the same transaction, once the limits let it in: an import job's upload).

        Raises
        ------
        QueueFullError
            When ``who`` already has ``max_queued_per_owner`` queued jobs (429), or the server has
            ``max_queued`` (503).
        QuotaExceededError
            When ``who``'s team is at or over a quota of ``quotas`` (CPU seconds 429, stored bytes 403).
        """
        job = Job(id=new_id(), scenario_id=sid, scenario_version=version, kind=kind, options=options,
                  status="queued", progress=0.0, message="queued", created_at=utcnow(), created_by=who.name,
                  team_id=who.team_id, created_by_token=who.token_id, owner_id=who.token_id or who.name)
        raw = json.dumps(options, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        logged: dict[str, Any] = ({"options": options} if len(raw) <= AUDIT_OPTIONS_BYTES else
                                  {"options_bytes": len(raw), "options_sha256": hashlib.sha256(raw).hexdigest()})
        with self.db.session() as s:
            if quotas is not None:
                check_quotas(s, who.team_id, quotas)
            if max_queued_per_owner is not None:
                mine = s.scalar(select(func.count()).select_from(Job).where(Job.status == "queued",
                                                                            Job.owner_id == (who.token_id or who.name))) or 0
                if mine >= max_queued_per_owner:
                    raise QueueFullError(f"this token already has {mine} queued jobs (the limit is "
                                         f"{max_queued_per_owner}); wait for some to start", 429, retry_after_s)
            if max_queued is not None:
                queued = s.scalar(select(func.count()).select_from(Job).where(Job.status == "queued")) or 0
                if queued >= max_queued:
                    raise QueueFullError(f"the server has {queued} queued jobs (the limit is {max_queued})",
                                         503, retry_after_s)
            if attach is not None:
                attach(s, job)
            s.add(job)
            record_audit(s, who, "job.create", "job", job.id,
                         {"scenario": sid, "version": version, "kind": kind, **logged})
        return job

    def get_job(self, job_id: str, who: Principal | None = None) -> Job:
        """One job (of ``who``'s team; None: no check). Raises GoneError."""
        with self.db.session() as s:
            job = s.get(Job, job_id)
            if job is None or (who is not None and not who.sees(job.team_id)):
                raise GoneError(f"no job {job_id}")
            return job

    def list_jobs(self, scenario_id: str | None = None, status: str | None = None, limit: int = 100,
                  offset: int = 0, who: Principal | None = None, with_options: bool = True) -> list[Job]:
        """Jobs (of ``who``'s team), newest first, optionally of one scenario and/or in one state
        (``with_options=False`` leaves the options unread: listings return summaries)."""
        with self.db.session() as s:
            q = select(Job).order_by(Job.created_at.desc(), Job.id).limit(limit).offset(offset)
            if who is not None and not who.is_admin:
                q = q.where(same_team(Job.team_id, who.team_id))
            if not with_options:
                q = q.options(defer(Job.options, raiseload=True))
            if scenario_id:
                q = q.where(Job.scenario_id == scenario_id)
            if status:
                q = q.where(Job.status == status)
            return list(s.scalars(q))

    def count_jobs_by_status(self) -> dict[str, int]:
        """Number of jobs in each state (every state present, zero included)."""
        with self.db.session() as s:
            rows = s.execute(select(Job.status, func.count()).group_by(Job.status)).all()
        counts = dict.fromkeys(JOB_STATES, 0)
        counts.update({str(k): int(v) for k, v in rows})
        return counts

    def claim_next_job(self, max_running_per_owner: int = 0, worker_id: str | None = None,
                       lease_s: float = 0.0) -> Job | None:
        """Atomically move the next queued job to ``running`` and return it (fair share).

        Shares are per team, then per token: the next job is the oldest queued job of the token whose
        team runs the fewest jobs and was served least recently, then which itself runs the fewest and was
        served least recently; last, the one waiting longest. So teams take turns, the tokens of a team take turns,
        and neither one team's nor one token's many jobs hold back another's. ``max_running_per_owner``
        (0 = none) caps the jobs one token runs at once.

        Many servers and workers may claim from one database at once. The fair-share decision is serialised
        (:func:`_serialise_claims`: an advisory lock on PostgreSQL, the write lock on SQLite), so the counts above
        and the per-token cap hold across machines; the candidate rows are read ``FOR UPDATE SKIP LOCKED`` on
        PostgreSQL (a row another transaction is cancelling is skipped, not waited for) and moved to
        ``running`` by a conditional UPDATE (``WHERE status = 'queued'``), which is the claim on both engines.

        Parameters
        ----------
        max_running_per_owner
            Cap on one token's running jobs; 0 = none.
        worker_id
            The claiming worker (``backbone worker``); None for a server running the job inline (no lease).
        lease_s
            Seconds the claim holds without a heartbeat (with ``worker_id``); then any worker or server may
            reclaim the job (:meth:`reclaim_expired_jobs`).
        """
        with self.db.session() as s:
            _serialise_claims(s)
            running_by_team: dict[str, int] = {}
            running: dict[str, int] = {}
            for team, owner, n in s.execute(select(Job.team_id, Job.owner_id, func.count())
                                            .where(Job.status == "running").group_by(Job.team_id, Job.owner_id)):
                running_by_team[str(team or "")] = running_by_team.get(str(team or ""), 0) + int(n)
                running[str(owner)] = running.get(str(owner), 0) + int(n)
            heads = s.execute(select(Job.owner_id, func.min(Job.team_id), func.min(Job.created_at))
                              .where(Job.status == "queued").group_by(Job.owner_id)).all()
            served = {str(o): as_utc(t) for o, t in s.execute(
                select(Job.owner_id, func.max(Job.started_at))
                .where(Job.owner_id.in_([h[0] for h in heads]), Job.started_at.is_not(None))
                .group_by(Job.owner_id)).all() if t is not None} if heads else {}
            never = datetime.min.replace(tzinfo=UTC)
            team_served = {str(t or ""): as_utc(ts) for t, ts in s.execute(
                select(Job.team_id, func.max(Job.started_at)).where(Job.started_at.is_not(None))
                .group_by(Job.team_id)).all() if ts is not None} if heads else {}

            def turn(head: Any) -> tuple[int, datetime, int, datetime, datetime]:
                """The team with the fewest running jobs, then the team served least recently; within it the
                token with the fewest running, then the one served least recently, then the oldest waiting."""
                owner, team = str(head[0]), str(head[1] or "")
                return (running_by_team.get(team, 0), team_served.get(team, never), running.get(owner, 0),
                        served.get(owner, never), as_utc(head[2]))

            for owner, _team, _first in sorted(heads, key=turn):
                if max_running_per_owner and running.get(str(owner), 0) >= max_running_per_owner:
                    continue
                now = utcnow()
                lease: dict[str, Any] = {} if worker_id is None else {
                    "worker_id": worker_id, "heartbeat_at": now, "lease_expires_at": now + timedelta(seconds=lease_s)}
                for job in s.scalars(select(Job).where(Job.status == "queued", Job.owner_id == owner)
                                     .order_by(Job.created_at, Job.id).limit(5).with_for_update(skip_locked=True)):
                    res = s.execute(update(Job).where(Job.id == job.id, Job.status == "queued")
                                    .values(status="running", started_at=now, message="starting",
                                            attempts=Job.attempts + 1, **lease))
                    if res.rowcount == 1:  # type: ignore[attr-defined]
                        s.flush()
                        s.refresh(job)
                        return job
        return None

    def record_usage(self, job_id: str, cpu_s: float | None = None, result_bytes: int | None = None) -> None:
        """Record what a job used (the fields given): CPU seconds, bytes of its stored result."""
        values = {k: v for k, v in (("cpu_s", cpu_s), ("result_bytes", result_bytes)) if v is not None}
        if values:
            with self.db.session() as s:
                s.execute(update(Job).where(Job.id == job_id).values(**values))

    def team_usage(self, team_id: str | None, window_s: float = 86_400.0) -> TeamUsage:
        """``team_id``'s CPU seconds in the last ``window_s`` seconds and its stored bytes (None: team-less)."""
        with self.db.session() as s:
            return team_usage(s, team_id, window_s)

    def set_progress(self, job_id: str, fraction: float, message: str) -> None:
        """Record a running job's progress (ignored once the job is final)."""
        with self.db.session() as s:
            s.execute(update(Job).where(Job.id == job_id, Job.status == "running")
                      .values(progress=max(0.0, min(1.0, float(fraction))), message=clean_text(message, 2000)))

    def finish_job(self, job_id: str, status: str, message: str, error: dict[str, Any] | None = None,
                   files: list[str] | None = None, worker_id: str | None = None,
                   result_bytes: int | None = None) -> bool:
        """Move a running job to a final state; False when it was already final (e.g. cancelled), or when
        ``worker_id`` is given and no longer holds the job (its lease expired and another worker took it).
        ``result_bytes`` (its stored result's size) is recorded in the same update, so the stored-bytes quota
        counts a result from the moment its job reads succeeded."""
        assert status in FINAL_STATES
        with self.db.session() as s:
            values: dict[str, Any] = {"status": status, "message": clean_text(message, 2000), "error": error,
                                      "files": files, "finished_at": utcnow(), "lease_expires_at": None}
            if result_bytes is not None:
                values["result_bytes"] = result_bytes
            if status == "succeeded":
                values["progress"] = 1.0
            where = [Job.id == job_id, Job.status.in_(("queued", "running"))]
            if worker_id is not None:
                where.append(Job.worker_id == worker_id)
            res = s.execute(update(Job).where(*where).values(**values))
            changed = res.rowcount == 1  # type: ignore[attr-defined]
            if changed:
                drop_job_inputs(s, [job_id])
                record_audit(s, SYSTEM, f"job.{status}", "job", job_id, {"message": message[:500]})
            return changed

    def cancel_job(self, job_id: str, who: Principal) -> Job:
        """Mark a queued or running job cancelled. Raises GoneError, ConflictError (already final)."""
        with self.db.session() as s:
            job = s.get(Job, job_id)
            if job is None or not who.owns(job.team_id):
                raise GoneError(f"no job {job_id}")
            if job.status in FINAL_STATES:
                raise ConflictError(f"job {job_id} already {job.status}")
            res = s.execute(update(Job).where(Job.id == job_id, Job.status.in_(("queued", "running")))
                            .values(status="cancelled", message=f"cancelled by {who.name}", finished_at=utcnow(),
                                    cancel_requested=True, lease_expires_at=None))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                raise ConflictError(f"job {job_id} finished meanwhile")
            drop_job_inputs(s, [job_id])
            record_audit(s, who, "job.cancel", "job", job_id, {"was": job.status})
        return self.get_job(job_id)

    def fail_interrupted_jobs(self, reason: str = "server restarted") -> list[str]:
        """Mark every ``running`` job a server ran inline failed (called at start-up: their workers died with the
        server). Jobs held by a ``backbone worker`` (a ``worker_id``) are left to their lease."""
        with self.db.session() as s:
            ids = list(s.scalars(select(Job.id).where(Job.status == "running", Job.worker_id.is_(None))))
            if ids:
                s.execute(update(Job).where(Job.id.in_(ids), Job.status == "running").values(
                    status="failed", message=reason, finished_at=utcnow(),
                    error={"type": "about:blank", "title": "Job interrupted", "status": 500, "detail": reason,
                           "errors": []}))
                drop_job_inputs(s, ids)
                for jid in ids:
                    record_audit(s, SYSTEM, "job.failed", "job", jid, {"message": reason})
        return ids


    # ------------------------------------------------------------------ leases (backbone worker)
    def heartbeat(self, job_id: str, worker_id: str, lease_s: float) -> LeaseState:
        """Renew ``worker_id``'s lease on a running job and say whether to go on.

        Returns ``held=False`` when the job is no longer this worker's running job (cancelled, failed by a
        reclaim, taken by another worker): the worker must stop the job's processes and record nothing.
        """
        now = utcnow()
        with self.db.session() as s:
            res = s.execute(update(Job).where(Job.id == job_id, Job.worker_id == worker_id, Job.status == "running")
                            .values(heartbeat_at=now, lease_expires_at=now + timedelta(seconds=lease_s)))
            held = res.rowcount == 1  # type: ignore[attr-defined]
            cancel = bool(s.scalar(select(Job.cancel_requested).where(Job.id == job_id)))
        return LeaseState(held=held and not cancel, cancel_requested=cancel)

    def renew_leases(self, worker_id: str, lease_s: float) -> list[str]:
        """Renew every lease ``worker_id`` holds (jobs it claimed, starting or running) and return the ids of the
        jobs it still holds and may go on running: running under its lease, and not cancelled.

        A job the worker runs that is missing from the answer was cancelled (through any server), or reclaimed
        after its lease expired: the worker stops its processes and records nothing.
        """
        now = utcnow()
        with self.db.session() as s:
            s.execute(update(Job).where(Job.worker_id == worker_id, Job.status == "running")
                      .values(heartbeat_at=now, lease_expires_at=now + timedelta(seconds=lease_s)))
            return list(s.scalars(select(Job.id).where(Job.worker_id == worker_id, Job.status == "running",
                                                       Job.cancel_requested.is_(False))))

    def held_jobs(self, worker_id: str) -> list[str]:
        """The jobs ``worker_id`` holds and may go on running (as :meth:`renew_leases`, renewing nothing): a
        worker polls this between heartbeats to see cancels sooner."""
        with self.db.session() as s:
            return list(s.scalars(select(Job.id).where(Job.worker_id == worker_id, Job.status == "running",
                                                       Job.cancel_requested.is_(False))))

    def release_job(self, job_id: str, worker_id: str, reason: str) -> bool:
        """Hand a running job back to the queue (a draining worker that cannot finish it); the claim does not
        count as an attempt. False when ``worker_id`` no longer holds it."""
        with self.db.session() as s:
            res = s.execute(update(Job).where(Job.id == job_id, Job.worker_id == worker_id, Job.status == "running")
                            .values(status="queued", worker_id=None, lease_expires_at=None, heartbeat_at=None,
                                    started_at=None, progress=0.0, message=clean_text(reason, 2000),
                                    attempts=case((Job.attempts > 0, Job.attempts - 1), else_=0)))
            released = res.rowcount == 1  # type: ignore[attr-defined]
            if released:
                record_audit(s, SYSTEM, "job.released", "job", job_id, {"message": reason[:500], "worker": worker_id})
            return released

    def reclaim_expired_jobs(self, idempotent_kinds: frozenset[str] | set[str]) -> ReclaimReport:
        """Take back every running job whose lease expired (its worker was killed, or lost its machine).

        A job of an idempotent kind (every planning kind: a pure function of its inputs) claimed fewer than
        :data:`MAX_ATTEMPTS` times goes back to the queue and is claimed again; any other is failed with the
        reason :data:`WORKER_LOST`. Any worker or server may call this; the conditional UPDATE (``status =
        'running'`` and the lease still expired) makes each job change once.
        """
        now = utcnow()
        requeued: list[str] = []
        failed: list[str] = []
        with self.db.session() as s:
            expired = s.execute(select(Job.id, Job.kind, Job.attempts, Job.worker_id)
                                .where(Job.status == "running", Job.lease_expires_at.is_not(None),
                                       Job.lease_expires_at < now).with_for_update(skip_locked=True)).all()
            for job_id, kind, attempts, worker in expired:
                still = [Job.id == job_id, Job.status == "running", Job.lease_expires_at < now]
                if kind in idempotent_kinds and int(attempts or 0) < MAX_ATTEMPTS:
                    res = s.execute(update(Job).where(*still).values(
                        status="queued", worker_id=None, lease_expires_at=None, heartbeat_at=None, started_at=None,
                        progress=0.0, message=f"requeued: {WORKER_LOST} ({worker})"[:2000]))
                    if res.rowcount == 1:  # type: ignore[attr-defined]
                        requeued.append(job_id)
                        record_audit(s, SYSTEM, "job.requeued", "job", job_id, {"message": WORKER_LOST,
                                                                                 "worker": worker})
                    continue
                res = s.execute(update(Job).where(*still).values(
                    status="failed", message=WORKER_LOST, finished_at=now, lease_expires_at=None,
                    error={"type": "about:blank", "title": "Worker lost", "status": 500,
                           "detail": f"{WORKER_LOST}: worker {worker} stopped renewing its lease", "errors": []}))
                if res.rowcount == 1:  # type: ignore[attr-defined]
                    failed.append(job_id)
                    drop_job_inputs(s, [job_id])
                    record_audit(s, SYSTEM, "job.failed", "job", job_id, {"message": WORKER_LOST, "worker": worker})
        return ReclaimReport(requeued, failed, sorted({str(w) for *_, w in expired if w is not None}))

    def workers_holding_leases(self, worker_ids: list[str] | set[str]) -> set[str]:
        """Those of ``worker_ids`` that still hold a running job (a lease, expired or not, not yet reclaimed)."""
        if not worker_ids:
            return set()
        with self.db.session() as s:
            return {str(w) for w in s.scalars(select(Job.worker_id).distinct().where(
                Job.status == "running", Job.worker_id.in_(list(worker_ids))))}

    def oldest_lease_age_s(self) -> float:
        """Seconds since the least recently renewed lease of a running job was renewed (its last heartbeat);
        0.0 when no job is leased. Near ``job_lease_s``: a worker stopped renewing and its jobs will be reclaimed."""
        with self.db.session() as s:
            last = s.scalar(select(func.min(Job.heartbeat_at)).where(Job.status == "running",
                                                                      Job.worker_id.is_not(None)))
        return 0.0 if last is None else max(0.0, (utcnow() - as_utc(last)).total_seconds())
