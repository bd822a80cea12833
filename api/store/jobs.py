"""The job repository: the queue of planning jobs with per-token and server-wide limits, the fair-share
claim of the next job, progress, completion and cancellation."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import defer

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


class JobRepository:
    """Planning jobs, visible per team; each mutation is audited."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create_job(self, sid: str, version: int, kind: str, options: dict[str, Any], who: Principal,
                   max_queued: int | None = None, max_queued_per_owner: int | None = None,
                   retry_after_s: int = 30) -> Job:
        """Queue a job on one scenario version, owned by ``who``'s token.

        Raises
        ------
        QueueFullError
            When ``who`` already has ``max_queued_per_owner`` queued jobs (429), or the server has
            ``max_queued`` (503).
        """
        job = Job(id=new_id(), scenario_id=sid, scenario_version=version, kind=kind, options=options,
                  status="queued", progress=0.0, message="queued", created_at=utcnow(), created_by=who.name,
                  team_id=who.team_id, created_by_token=who.token_id, owner_id=who.token_id or who.name)
        raw = json.dumps(options, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        logged: dict[str, Any] = ({"options": options} if len(raw) <= AUDIT_OPTIONS_BYTES else
                                  {"options_bytes": len(raw), "options_sha256": hashlib.sha256(raw).hexdigest()})
        with self.db.session() as s:
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

    def claim_next_job(self, max_running_per_owner: int = 0) -> Job | None:
        """Atomically move the next queued job to ``running`` and return it (fair share).

        Shares are per team, then per token: the next job is the oldest queued job of the token whose
        team runs the fewest jobs and was served least recently, then which itself runs the fewest and was
        served least recently; last, the one waiting longest. So teams take turns, the tokens of a team take turns,
        and neither one team's nor one token's many jobs hold back another's. ``max_running_per_owner``
        (0 = none) caps the jobs one token runs at once.
        """
        with self.db.session() as s:
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
                for job in s.scalars(select(Job).where(Job.status == "queued", Job.owner_id == owner)
                                     .order_by(Job.created_at, Job.id).limit(5)):
                    res = s.execute(update(Job).where(Job.id == job.id, Job.status == "queued")
                                    .values(status="running", started_at=utcnow(), message="starting"))
                    if res.rowcount == 1:  # type: ignore[attr-defined]
                        s.flush()
                        s.refresh(job)
                        return job
        return None

    def set_progress(self, job_id: str, fraction: float, message: str) -> None:
        """Record a running job's progress (ignored once the job is final)."""
        with self.db.session() as s:
            s.execute(update(Job).where(Job.id == job_id, Job.status == "running")
                      .values(progress=max(0.0, min(1.0, float(fraction))), message=clean_text(message, 2000)))

    def finish_job(self, job_id: str, status: str, message: str, error: dict[str, Any] | None = None,
                   files: list[str] | None = None) -> bool:
        """Move a running job to a final state; False when it was already final (e.g. cancelled)."""
        assert status in FINAL_STATES
        with self.db.session() as s:
            values: dict[str, Any] = {"status": status, "message": clean_text(message, 2000), "error": error,
                                      "files": files, "finished_at": utcnow()}
            if status == "succeeded":
                values["progress"] = 1.0
            res = s.execute(update(Job).where(Job.id == job_id, Job.status.in_(("queued", "running")))
                            .values(**values))
            changed = res.rowcount == 1  # type: ignore[attr-defined]
            if changed:
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
                            .values(status="cancelled", message=f"cancelled by {who.name}", finished_at=utcnow()))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                raise ConflictError(f"job {job_id} finished meanwhile")
            record_audit(s, who, "job.cancel", "job", job_id, {"was": job.status})
        return self.get_job(job_id)

    def fail_interrupted_jobs(self, reason: str = "server restarted") -> list[str]:
        """Mark every ``running`` job failed (called at start-up: their workers died with the server)."""
        with self.db.session() as s:
            ids = list(s.scalars(select(Job.id).where(Job.status == "running")))
            if ids:
                s.execute(update(Job).where(Job.id.in_(ids), Job.status == "running").values(
                    status="failed", message=reason, finished_at=utcnow(),
                    error={"type": "about:blank", "title": "Job interrupted", "status": 500, "detail": reason,
                           "errors": []}))
                for jid in ids:
                    record_audit(s, SYSTEM, "job.failed", "job", jid, {"message": reason})
        return ids

