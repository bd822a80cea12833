"""The job queue's leases in the store, on SQLite and PostgreSQL: claim with a lease, heartbeat, cancel seen by
the holder, reclaim of lost workers' jobs (retried once when idempotent, else "worker lost"), hand-back, and the
per-token cap holding under concurrent claims from several store connections (as several workers make)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from backbone.api.models import Job, utcnow
from backbone.api.store import MAX_ATTEMPTS, WORKER_LOST, Principal, Store

WHO = Principal("t1", "tester", "planner")
OTHER = Principal("t2", "other", "planner")
COUNTS = {"sites": 1, "links": 0, "demands": 0}
DOC = {"name": "one", "sites": [{"id": "A", "lon": 0.0, "lat": 0.0, "region": "NA"}]}


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store(db_url)
    s.upgrade()
    yield s
    s.dispose()


def _expire(store: Store, job_id: str) -> None:
    """Pretend the holder stopped heartbeating a minute ago."""
    with store.session() as s:
        s.execute(update(Job).where(Job.id == job_id).values(lease_expires_at=utcnow() - timedelta(seconds=60)))


def test_claim_with_a_lease_heartbeat_and_cancel(store: Store) -> None:
    sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", WHO)
    job = store.create_job(sc.id, 1, "te", {}, WHO)
    claimed = store.claim_next_job(worker_id="w1", lease_s=30)
    assert claimed is not None and claimed.id == job.id
    assert (claimed.status, claimed.worker_id, claimed.attempts) == ("running", "w1", 1)
    assert claimed.lease_expires_at is not None and claimed.heartbeat_at is not None
    first_expiry = claimed.lease_expires_at
    state = store.heartbeat(job.id, "w1", 60)
    assert state.held and not state.cancel_requested
    assert store.get_job(job.id).lease_expires_at > first_expiry  # type: ignore[operator]
    assert not store.heartbeat(job.id, "w2", 60).held  # another worker holds nothing
    assert store.held_jobs("w1") == [job.id] and store.held_jobs("w2") == []
    assert store.renew_leases("w1", 120) == [job.id]
    assert store.get_job(job.id).lease_expires_at > first_expiry + timedelta(seconds=60)  # type: ignore[operator]
    store.cancel_job(job.id, WHO)  # through any server: the status and the flag
    assert store.held_jobs("w1") == [] and store.renew_leases("w1", 60) == []
    state = store.heartbeat(job.id, "w1", 60)
    assert not state.held and state.cancel_requested
    assert not store.finish_job(job.id, "succeeded", "late", worker_id="w1")
    assert store.get_job(job.id).status == "cancelled"


def test_lost_worker_jobs_are_retried_once_then_fail(store: Store) -> None:
    sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", WHO)
    job = store.create_job(sc.id, 1, "te", {}, WHO)
    assert store.claim_next_job(worker_id="w1", lease_s=30) is not None
    assert store.reclaim_expired_jobs({"te"}).requeued == []  # the lease still holds
    _expire(store, job.id)
    report = store.reclaim_expired_jobs({"te"})
    assert (report.requeued, report.failed) == ([job.id], [])
    back = store.get_job(job.id)
    assert (back.status, back.worker_id, back.attempts) == ("queued", None, 1)
    assert WORKER_LOST in back.message
    again = store.claim_next_job(worker_id="w2", lease_s=30)
    assert again is not None and again.id == job.id and again.attempts == MAX_ATTEMPTS
    assert not store.finish_job(job.id, "succeeded", "stale", worker_id="w1")  # the first worker lost it
    _expire(store, job.id)
    report = store.reclaim_expired_jobs({"te"})
    assert (report.requeued, report.failed) == ([], [job.id])
    lost = store.get_job(job.id)
    assert lost.status == "failed" and lost.message == WORKER_LOST
    assert lost.error is not None and lost.error["title"] == "Worker lost"


def test_a_kind_that_is_not_idempotent_fails_at_once(store: Store) -> None:
    sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", WHO)
    job = store.create_job(sc.id, 1, "upload", {}, WHO)
    assert store.claim_next_job(worker_id="w1", lease_s=30) is not None
    _expire(store, job.id)
    assert store.reclaim_expired_jobs({"te"}).failed == [job.id]
    assert store.get_job(job.id).message == WORKER_LOST


def test_hand_back_and_server_restart(store: Store) -> None:
    sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", WHO)
    held = store.create_job(sc.id, 1, "te", {}, WHO)
    inline = store.create_job(sc.id, 1, "te", {}, WHO)
    assert store.claim_next_job(worker_id="w1", lease_s=30).id == held.id  # type: ignore[union-attr]
    assert store.claim_next_job().id == inline.id  # type: ignore[union-attr]
    # a restarting server fails only the jobs it ran itself; the worker's job stays with its lease
    assert store.fail_interrupted_jobs("server restarted") == [inline.id]
    assert store.get_job(held.id).status == "running"
    assert not store.release_job(held.id, "w2", "not mine")
    assert store.release_job(held.id, "w1", "handed back")
    back = store.get_job(held.id)
    assert (back.status, back.worker_id, back.attempts, back.message) == ("queued", None, 0, "handed back")


def test_concurrent_claims_keep_the_per_token_cap_and_fair_share(db_url: str, store: Store) -> None:
    """Four workers (each its own connection pool) claim at once: the per-token cap holds, and the other
    token's job is claimed before the first token's third."""
    sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", WHO)
    mine = [store.create_job(sc.id, 1, "te", {}, WHO) for _ in range(6)]
    theirs = store.create_job(sc.id, 1, "te", {}, OTHER)
    stores = [Store(db_url) for _ in range(4)]
    claimed: list[str] = []
    lock = threading.Lock()

    def claim(worker: int) -> None:
        for _ in range(3):
            job = stores[worker].claim_next_job(2, worker_id=f"w{worker}", lease_s=30)
            if job is not None:
                with lock:
                    claimed.append(job.id)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in stores:
        s.dispose()
    assert len(claimed) == len(set(claimed)) == 3, claimed
    assert theirs.id in claimed
    assert set(claimed) - {theirs.id} == {mine[0].id, mine[1].id}  # the oldest two, and no more (cap 2)


def test_rows_of_the_previous_release_are_read_and_claimed(store: Store) -> None:
    """Rolling upgrade: a server of the previous release (schema 0004) inserts jobs without the lease columns;
    the new code reads and claims them (attempts 0, no cancel flag), and the migration goes down and up again."""
    from sqlalchemy import text

    from backbone.api.store import downgrade_database, upgrade_database

    sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", WHO)
    with store.session() as s:  # the previous release's INSERT names only its own columns
        s.execute(text("INSERT INTO jobs (id, scenario_id, scenario_version, kind, options, status, progress, "
                       "message, created_at, created_by, owner_id) VALUES ('old-1', :sid, 1, 'te', '{}', 'queued', "
                       "0, 'queued', :now, 'tester', 't1')"), {"sid": sc.id, "now": utcnow()})
    old = store.get_job("old-1")
    assert (old.attempts, old.cancel_requested, old.worker_id) == (0, False, None)
    claimed = store.claim_next_job(worker_id="w1", lease_s=30)
    assert claimed is not None and claimed.id == "old-1" and claimed.attempts == 1
    downgrade_database(store.engine, "0004_token_family")
    upgrade_database(store.engine)
    assert store.get_job("old-1").attempts == 0  # the column came back with its default


def test_bad_queue_settings_and_storage_are_one_line_errors(tmp_path: Path, db_url: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from backbone.api.cli.main import app

    monkeypatch.setenv("BACKBONE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BACKBONE_DATABASE_URL", db_url)
    runner = CliRunner()
    monkeypatch.setenv("BACKBONE_JOB_EXECUTION", "sideways")
    out = runner.invoke(app, ["serve"])
    assert out.exit_code == 2 and "BACKBONE_JOB_EXECUTION" in out.output and "Traceback" not in out.output
    monkeypatch.delenv("BACKBONE_JOB_EXECUTION")
    out = runner.invoke(app, ["worker", "--lease-s", "5", "--heartbeat-s", "10"])
    assert out.exit_code == 2 and "BACKBONE_JOB_HEARTBEAT_S" in out.output, out.output
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = runner.invoke(app, ["worker", "--results-dir", str(blocker / "results")])
    assert out.exit_code == 6 and "results directory" in out.output, out.output
