"""A queue worker's health and metrics (``backbone worker --health-port``), the lease figures the store reads for
them, the server's ``backbone_job_workers_busy`` in queue mode, and the removal of a lost worker's staging folder.

The fast tests call the store, the probes and the health server directly (loopback, any free port); the slow one
starts ``python -m backbone.api worker --health-port`` and scrapes it while it runs a te job the server queued.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient
from sqlalchemy import update

from backbone.api.models import Job, utcnow
from backbone.api.settings import Settings
from backbone.api.store import Principal, Store
from backbone.api.worker import QueueWorker, reclaim, staging_dir_of
from backbone.api.worker_health import HealthPortError, HealthServer, WorkerMetrics, liveness, readiness
from backbone.io import network_to_dict
from backbone.model import Network

WHO = Principal("t1", "tester", "planner")
COUNTS = {"sites": 1, "links": 0, "demands": 0}
DOC = {"name": "one", "sites": [{"id": "A", "lon": 0.0, "lat": 0.0, "region": "NA"}]}


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store(db_url)
    s.upgrade()
    yield s
    s.dispose()


def _backdate(store: Store, job_id: str, seconds: float, expired: bool) -> None:
    """Pretend the holder last renewed ``seconds`` ago (and that its lease has run out, with ``expired``)."""
    then = utcnow() - timedelta(seconds=seconds)
    expiry = then if expired else utcnow() + timedelta(seconds=60)
    with store.session() as s:
        s.execute(update(Job).where(Job.id == job_id).values(heartbeat_at=then, lease_expires_at=expiry))


def _claim(store: Store, worker: str) -> str:
    sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", WHO)
    store.create_job(sc.id, 1, "te", {}, WHO)
    job = store.claim_next_job(worker_id=worker, lease_s=30)
    assert job is not None
    return str(job.id)


def test_oldest_lease_age_and_the_workers_holding_leases(store: Store) -> None:
    assert store.oldest_lease_age_s() == 0.0
    a, b = _claim(store, "w1"), _claim(store, "w2")
    assert store.oldest_lease_age_s() < 5.0
    _backdate(store, a, 40.0, expired=False)
    _backdate(store, b, 10.0, expired=False)
    assert store.oldest_lease_age_s() == pytest.approx(40.0, abs=5.0)  # the least recently renewed one
    assert store.workers_holding_leases({"w1", "w2", "w3"}) == {"w1", "w2"}
    assert store.workers_holding_leases(set()) == set()
    store.finish_job(a, "succeeded", "done", worker_id="w1")
    assert store.oldest_lease_age_s() == pytest.approx(10.0, abs=5.0)
    assert store.workers_holding_leases({"w1", "w2"}) == {"w2"}


def test_reclaim_removes_only_the_staging_folders_of_workers_whose_leases_all_expired(store: Store,
                                                                                       tmp_path: Path) -> None:
    results = tmp_path / "results"
    lost, half, alive = "host:1:aaaa", "host:2:bbbb", "host:3:cccc"
    gone = _claim(store, lost)
    half_gone, half_kept = _claim(store, half), _claim(store, half)
    _claim(store, alive)
    for worker in (lost, half, alive):
        (staging_dir_of(results, worker) / "some-job").mkdir(parents=True)
    _backdate(store, gone, 60.0, expired=True)
    _backdate(store, half_gone, 60.0, expired=True)  # its other job's lease still holds: the worker may be alive
    report_before = store.reclaim_expired_jobs(set())
    assert report_before.workers == sorted([lost, half]) and set(report_before.failed) == {gone, half_gone}
    # a second worker or server reclaiming finds the rows already changed; the folders go with the reclaim itself
    _backdate(store, half_kept, 60.0, expired=True)
    removed = reclaim(store, frozenset(), results)
    assert removed == [staging_dir_of(results, half)]
    assert not staging_dir_of(results, half).exists()
    assert staging_dir_of(results, alive).is_dir()  # its lease holds
    assert staging_dir_of(results, lost).is_dir()  # reclaimed earlier without a results folder: left as it was
    assert store.get_job(half_kept).status == "failed"


def test_reclaim_keeps_the_folder_of_a_worker_that_still_holds_a_lease(store: Store, tmp_path: Path) -> None:
    results = tmp_path / "results"
    first, second = _claim(store, "w1"), _claim(store, "w1")
    staging_dir_of(results, "w1").mkdir(parents=True)
    _backdate(store, first, 60.0, expired=True)
    assert reclaim(store, frozenset({"te"}), results) == []
    assert staging_dir_of(results, "w1").is_dir()
    assert store.get_job(first).status == "queued" and store.get_job(second).status == "running"
    assert reclaim(store, frozenset({"te"}), None) == []  # nothing expired, no folder named


def test_a_queue_worker_counts_the_jobs_it_finishes_by_kind_and_status(store: Store, tmp_path: Path) -> None:
    worker = QueueWorker(store, Settings(data_dir=tmp_path / "data", job_lease_s=30), tmp_path / "results",
                         worker_id="w1")
    assert not worker.heartbeat_alive() and worker.heartbeat_age_s() is None and not worker.draining()
    sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", WHO)
    first, second = (store.create_job(sc.id, 1, kind, {}, WHO) for kind in ("te", "failures"))
    assert worker._claim().id == first.id and worker._claim().id == second.id
    assert worker._finish(first.id, "failed", "boom")
    store.cancel_job(second.id, WHO)
    assert not worker._finish(second.id, "succeeded", "late")  # cancelled meanwhile: not this worker's outcome
    text = worker.metrics.render(store, worker)
    assert _metric(text, 'backbone_worker_jobs_total{kind="te",status="failed"}') == 1
    assert 'kind="failures"' not in text
    assert _metric(text, 'backbone_queue_jobs{status="cancelled"}') == 1


class FakeQueue:
    def __init__(self, up: bool = True) -> None:
        self.up = up

    def count_jobs_by_status(self) -> dict[str, int]:
        if not self.up:
            raise ConnectionError("connection refused")
        return {"queued": 3, "running": 2, "succeeded": 7, "failed": 1, "cancelled": 0}

    def oldest_lease_age_s(self) -> float:
        if not self.up:
            raise ConnectionError("connection refused")
        return 4.5


class FakeWorker:
    def __init__(self, results_dir: Path, age_s: float | None = 0.5, alive: bool = True,
                 draining: bool = False) -> None:
        self._results_dir, self.age_s, self.alive, self.is_draining = results_dir, age_s, alive, draining

    @property
    def results_dir(self) -> Path:
        return self._results_dir

    def running_count(self) -> int:
        return 1

    def heartbeat_age_s(self) -> float | None:
        return self.age_s

    def heartbeat_alive(self) -> bool:
        return self.alive

    def draining(self) -> bool:
        return self.is_draining


def test_liveness_follows_the_heartbeat_thread(tmp_path: Path) -> None:
    assert liveness(FakeWorker(tmp_path), lease_s=30).ok
    stale = liveness(FakeWorker(tmp_path, age_s=45.0), lease_s=30)
    assert not stale.ok and "45.0 s ago" in stale.problems[0]
    assert not liveness(FakeWorker(tmp_path, age_s=None), lease_s=30).ok
    dead = liveness(FakeWorker(tmp_path, alive=False), lease_s=30)
    assert dead.document() == {"status": "fail", "problems": ["the heartbeat thread is not running"]}


def test_readiness_needs_the_database_the_results_folder_and_no_drain(tmp_path: Path) -> None:
    assert readiness(FakeQueue(), FakeWorker(tmp_path)).ok
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    probe = readiness(FakeQueue(up=False), FakeWorker(not_a_folder, draining=True))
    assert not probe.ok and len(probe.problems) == 3
    assert probe.problems[0].startswith("draining")
    assert "database cannot be reached (connection refused)" in probe.problems[1]
    assert str(not_a_folder) in probe.problems[2]


def _metric(text: str, name: str) -> float:
    """The value of the sample line starting ``name `` (name with its labels)."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"no sample {name} in\n{text}")


def test_worker_metrics_count_jobs_and_read_the_queue_at_scrape_time(tmp_path: Path) -> None:
    metrics = WorkerMetrics()
    metrics.job_finished("te", "succeeded")
    metrics.job_finished("te", "succeeded")
    metrics.job_finished("sweep", "failed")
    with pytest.raises(ValueError, match="handed"):
        metrics.job_finished("te", "handed back")
    text = metrics.render(FakeQueue(), FakeWorker(tmp_path))
    assert _metric(text, 'backbone_worker_jobs_total{kind="te",status="succeeded"}') == 2
    assert _metric(text, 'backbone_worker_jobs_total{kind="sweep",status="failed"}') == 1
    assert _metric(text, "backbone_worker_jobs_in_flight") == 1
    assert _metric(text, 'backbone_queue_jobs{status="queued"}') == 3
    assert _metric(text, "backbone_queue_oldest_lease_age_seconds") == 4.5
    assert _metric(text, "backbone_queue_database_up") == 1
    down = metrics.render(FakeQueue(up=False), FakeWorker(tmp_path))
    assert _metric(down, "backbone_queue_database_up") == 0
    assert _metric(down, 'backbone_worker_jobs_total{kind="te",status="succeeded"}') == 2


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 - loopback only
            return int(r.status), r.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode("utf-8")


def test_the_health_server_answers_on_loopback(tmp_path: Path) -> None:
    worker = FakeWorker(tmp_path)
    server = HealthServer(FakeQueue(), worker, WorkerMetrics(), lease_s=30.0)
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        assert _get(base + "/livez") == (200, json.dumps({"status": "ok", "problems": []}))
        assert _get(base + "/readyz")[0] == 200
        worker.is_draining = True
        code, body = _get(base + "/readyz")
        assert code == 503 and "draining" in json.loads(body)["problems"][0]
        code, body = _get(base + "/metrics")
        assert code == 200 and _metric(body, 'backbone_queue_jobs{status="running"}') == 2
        assert _get(base + "/nope")[0] == 404
        with pytest.raises(HealthPortError, match=f"127.0.0.1:{server.port}"):
            HealthServer(FakeQueue(), worker, WorkerMetrics(), 30.0, port=server.port)  # in use
    finally:
        server.stop()


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    """A server in queue mode (it starts no job itself), with a short lease."""
    return Settings(data_dir=tmp_path / "data", database_url=db_url, workers=1, job_execution="queue",
                    job_lease_s=3.0, job_heartbeat_s=0.5)


def test_a_queue_servers_busy_gauge_reads_the_databases_running_jobs(client: TestClient,
                                                                     tokens: dict[str, str]) -> None:
    store: Store = client.app.state.store  # type: ignore[attr-defined]
    _claim(store, "elsewhere:1:abcd")  # a job a worker on another machine runs
    text = client.get("/metrics", headers=auth(tokens["viewer"])).text
    assert _metric(text, "backbone_job_workers_busy") == 1
    assert client.get("/healthz").json()["jobs_running"] == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_a_worker_process_serves_livez_readyz_and_metrics(client: TestClient, tokens: dict[str, str],
                                                          settings: Settings, triangle: Network) -> None:
    port = _free_port()
    env = dict(os.environ, BACKBONE_DATA_DIR=str(settings.data_dir),
               BACKBONE_DATABASE_URL=settings.resolved_database_url(), BACKBONE_JOB_LEASE_S="3",
               BACKBONE_JOB_HEARTBEAT_S="0.5")
    log_path = settings.data_dir / "worker.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "backbone.api", "worker", "--concurrency", "1", "--drain-s",
                                 "5", "--health-port", str(port)], env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        def probe(path: str) -> dict[str, object]:
            try:
                code, body = _get(base + path)
            except OSError:
                return {"code": 0, "body": ""}
            return {"code": code, "body": body}

        assert wait_for(lambda: probe("/livez"), lambda r: r["code"] == 200, timeout_s=60, interval_s=0.2)
        assert probe("/readyz")["code"] == 200, log_path.read_text()
        tok = tokens["planner"]
        sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
        job_id = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {}},
                             headers=auth(tok)).json()["id"]
        job = wait_for(lambda: client.get(f"/v1/jobs/{job_id}", headers=auth(tok)).json(),
                       lambda j: j["status"] in FINAL, timeout_s=90, interval_s=0.2)
        assert job["status"] == "succeeded", log_path.read_text()
        # the job's row says succeeded as soon as its outcome is stored; its process exits a moment later, and the
        # in-flight gauge (jobs with a live process) falls to 0 then
        text = str(wait_for(lambda: probe("/metrics"),
                            lambda r: 'status="succeeded"' in str(r["body"])
                            and _metric(str(r["body"]), "backbone_worker_jobs_in_flight") == 0,
                            timeout_s=30, interval_s=0.2)["body"])
        assert _metric(text, 'backbone_worker_jobs_total{kind="te",status="succeeded"}') == 1
        assert _metric(text, 'backbone_queue_jobs{status="succeeded"}') == 1
        assert _metric(text, "backbone_worker_jobs_in_flight") == 0
        assert _metric(text, "backbone_queue_oldest_lease_age_seconds") == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    with pytest.raises(OSError):
        urllib.request.urlopen(base + "/livez", timeout=2)  # noqa: S310 - the port closed with the worker
