"""A server in queue mode (``BACKBONE_JOB_EXECUTION=queue``) with ``backbone worker`` processes, on SQLite and on
PostgreSQL: a te job runs on a worker to success, a cancel through the server stops the worker's job process
within seconds, and a worker killed with SIGKILL mid-job leaves no process behind while a second worker reclaims
the job after its lease and runs it to success.

The server is the app under TestClient; the workers are real processes (``python -m backbone.api worker``, or
:func:`backbone.api.worker.run_worker` with the test-only task kinds).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient

from backbone.api.settings import Settings
from backbone.io import network_to_dict
from backbone.model import Network

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for process trees")

LEASE_S, HEARTBEAT_S = 3.0, 0.5
TESTS_API = Path(__file__).resolve().parent
RUN_WITH_TEST_TASKS = ("import logging, sys; sys.path.insert(0, sys.argv[1]); "
                       "logging.basicConfig(level=logging.INFO); "
                       "from apitest_tasks import REGISTRY; from backbone.api.settings import Settings; "
                       "from backbone.api.worker import run_worker; "
                       "run_worker(Settings(), registry=REGISTRY, drain_s=5)")


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    """The server's settings: queue mode (this server starts no job), a short lease."""
    return Settings(data_dir=tmp_path / "data", database_url=db_url, workers=1, job_execution="queue",
                    job_lease_s=LEASE_S, job_heartbeat_s=HEARTBEAT_S)


class Workers:
    """``backbone worker`` processes on the server's database and results folder; all killed at the end."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, test_tasks: bool = False) -> subprocess.Popen[bytes]:
        env = dict(os.environ, BACKBONE_DATA_DIR=str(self.settings.data_dir),
                   BACKBONE_DATABASE_URL=self.settings.resolved_database_url(), BACKBONE_WORKERS="1",
                   BACKBONE_JOB_LEASE_S=str(LEASE_S), BACKBONE_JOB_HEARTBEAT_S=str(HEARTBEAT_S))
        args = (["-c", RUN_WITH_TEST_TASKS, str(TESTS_API)] if test_tasks else
                ["-m", "backbone.api", "worker", "--concurrency", "1", "--drain-s", "5"])
        log = open(self.settings.data_dir / f"worker-{len(self.procs)}.log", "ab")  # noqa: SIM115 - the child's
        proc = subprocess.Popen([sys.executable, *args], env=env, stdout=log, stderr=log)
        log.close()
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.settings.data_dir.glob("worker-*.log")))

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


@pytest.fixture
def workers(client: TestClient, settings: Settings) -> Iterator[Workers]:
    group = Workers(settings)
    yield group
    group.stop_all()


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (zombies count as gone)."""
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.add(pid)
    return living


def job_processes(worker_pid: int) -> set[int]:
    """The job processes under a worker: each leads its own process group."""
    out = set()
    for pid in descendants(worker_pid):
        try:
            if os.getpgid(pid) == pid:
                out.add(pid)
        except ProcessLookupError:
            continue
    return out


def _scenario(client: TestClient, token: str, net: Network) -> str:
    r = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(token))
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _submit(client: TestClient, token: str, sid: str, kind: str, options: dict[str, Any]) -> str:
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": kind, "options": options}, headers=auth(token))
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


def _job(client: TestClient, token: str, job_id: str) -> dict[str, Any]:
    r = client.get(f"/v1/jobs/{job_id}", headers=auth(token))
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


@pytest.mark.slow
def test_a_worker_runs_a_te_job_the_server_queued(client: TestClient, tokens: dict[str, str], workers: Workers,
                                                  triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    job_id = _submit(client, tok, sid, "te", {})
    time.sleep(1.0)
    assert _job(client, tok, job_id)["status"] == "queued"  # the server itself runs nothing in queue mode
    workers.start()
    job = wait_for(lambda: _job(client, tok, job_id), lambda j: j["status"] in FINAL, timeout_s=90, interval_s=0.2)
    assert job["status"] == "succeeded", (job, workers.logs())
    result = client.get(f"/v1/jobs/{job_id}/result", headers=auth(tok))
    assert result.status_code == 200, result.text
    assert result.json()["mlu"] == pytest.approx(0.75, abs=1e-6)  # the triangle's min-MLU optimum
    assert "te.json" in {f["name"] for f in client.get(f"/v1/jobs/{job_id}/files", headers=auth(tok)).json()}
    row = client.app.state.store.get_job(job_id)  # type: ignore[attr-defined]
    assert row.worker_id and row.attempts == 1


@pytest.mark.slow
def test_a_cancel_through_the_server_stops_the_workers_job(client: TestClient, tokens: dict[str, str],
                                                           workers: Workers, triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    job_id = _submit(client, tok, sid, "sleepy", {"steps": 600, "step_s": 0.1})
    worker = workers.start(test_tasks=True)
    wait_for(lambda: _job(client, tok, job_id), lambda j: j["status"] == "running" and j["progress"]["fraction"] > 0,
             timeout_s=60, interval_s=0.1)
    running = job_processes(worker.pid)
    assert running, workers.logs()
    started = time.monotonic()
    r = client.delete(f"/v1/jobs/{job_id}", headers=auth(tok))
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    while alive(running) and time.monotonic() - started < 10:
        time.sleep(0.05)
    stopped_after_s = time.monotonic() - started
    assert not alive(running), workers.logs()
    assert stopped_after_s < 5.0, stopped_after_s
    assert _job(client, tok, job_id)["status"] == "cancelled"
    assert not (client.app.state.settings.data_dir / "results" / job_id).exists()  # type: ignore[attr-defined]
    assert worker.poll() is None  # the worker lives on and takes the next job
    nxt = _submit(client, tok, sid, "sleepy", {"steps": 2, "step_s": 0.05})
    assert wait_for(lambda: _job(client, tok, nxt), lambda j: j["status"] in FINAL, timeout_s=30)["status"] \
        == "succeeded"


@pytest.mark.slow
def test_a_killed_workers_job_is_reclaimed_and_runs_again(client: TestClient, tokens: dict[str, str],
                                                          workers: Workers, triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    job_id = _submit(client, tok, sid, "sleepy", {"steps": 30, "step_s": 0.1})
    first = workers.start(test_tasks=True)
    wait_for(lambda: _job(client, tok, job_id), lambda j: j["status"] == "running" and j["progress"]["fraction"] > 0,
             timeout_s=60, interval_s=0.1)
    tree = descendants(first.pid)
    assert job_processes(first.pid), workers.logs()
    first.kill()  # SIGKILL: no clean-up at all
    first.wait(10)
    deadline = time.monotonic() + 10
    while alive(tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(tree), f"orphaned processes {alive(tree)}"
    assert _job(client, tok, job_id)["status"] == "running"  # until its lease runs out
    workers.start(test_tasks=True)
    job = wait_for(lambda: _job(client, tok, job_id), lambda j: j["status"] in FINAL, timeout_s=60, interval_s=0.1)
    assert job["status"] == "succeeded", (job, workers.logs())
    row = client.app.state.store.get_job(job_id)  # type: ignore[attr-defined]
    assert row.attempts == 2
    assert client.get(f"/v1/jobs/{job_id}/files", headers=auth(tok)).status_code == 200


@pytest.mark.slow
def test_sigterm_drains_the_worker_and_hands_back_what_is_left(client: TestClient, tokens: dict[str, str],
                                                               workers: Workers, triangle: Network) -> None:
    """SIGTERM: the worker claims nothing more, gives its running job ``drain_s`` (5 s here) to finish, then stops
    it and hands it back to the queue (not counted as an attempt), and exits cleanly with no process left."""
    from backbone.api.worker import HANDED_BACK

    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    job_id = _submit(client, tok, sid, "sleepy", {"steps": 600, "step_s": 0.1})
    worker = workers.start(test_tasks=True)
    wait_for(lambda: _job(client, tok, job_id), lambda j: j["status"] == "running" and j["progress"]["fraction"] > 0,
             timeout_s=60, interval_s=0.1)
    tree = descendants(worker.pid)
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(30) == 0, workers.logs()
    deadline = time.monotonic() + 10
    while alive(tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(tree), f"orphaned processes {alive(tree)}"
    job = _job(client, tok, job_id)
    assert job["status"] == "queued" and job["progress"]["message"] == HANDED_BACK, job
    row = client.app.state.store.get_job(job_id)  # type: ignore[attr-defined]
    assert row.attempts == 0 and row.worker_id is None
    client.delete(f"/v1/jobs/{job_id}", headers=auth(tok))
