"""Failure sweeps of API jobs on the server's Dask cluster (``BACKBONE_DASK_SCHEDULER``): a failures job runs on a
``LocalCluster`` of two worker processes started here on loopback, says where it ran, and its figures equal the
same job's on the job's own processes; an unreachable scheduler or one without workers fails the job with a 503
naming the scheduler, within the configured timeout; a job asking for ``engine: local`` stays local."""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient

from backbone.api.app import create_app
from backbone.api.input_policy import server_job_options
from backbone.api.settings import Settings
from backbone.io import network_to_dict
from backbone.model import Network
from tests.nets import random_te_net

VOLATILE = {"seconds"}
"""Per-scenario fields that differ between runs (wall-clock time)."""


@contextmanager
def _api(root: Path, migrated: Path, **settings: Any) -> Iterator[tuple[TestClient, str]]:
    """An app on its own SQLite copy of the migrated database, with ``settings``; yields the client and a planner
    token."""
    root.mkdir(parents=True)
    shutil.copyfile(migrated, root / "api.db")
    s = Settings(data_dir=root / "data", database_url=f"sqlite:///{root / 'api.db'}", workers=1, **settings)
    with TestClient(create_app(s, task_registry=REGISTRY), raise_server_exceptions=False) as client:
        yield client, client.app.state.store.create_token("planner", "dask-test")[1]  # type: ignore[attr-defined]


def _run_job(client: TestClient, tok: str, net: Network, kind: str, options: dict[str, Any],
             timeout_s: float = 240) -> dict[str, Any]:
    r = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(tok))
    assert r.status_code == 201, r.text
    r = client.post(f"/v1/scenarios/{r.json()['id']}/jobs", json={"kind": kind, "options": options},
                    headers=auth(tok))
    assert r.status_code == 202, r.text
    return wait_for(lambda jid=r.json()["id"]: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                    lambda j: j["status"] in FINAL, timeout_s=timeout_s)


def _result(client: TestClient, tok: str, job: dict[str, Any]) -> dict[str, Any]:
    assert job["status"] == "succeeded", job
    r = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok))
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _figures(res: dict[str, Any]) -> tuple[Any, ...]:
    """The sweep's figures without wall-clock times: every scenario record, the baseline, the counts."""
    scenarios = [{k: v for k, v in r.items() if k not in VOLATILE} for r in res["scenarios"]]
    baseline = {k: v for k, v in res["baseline"].items() if k not in VOLATILE}
    counts = {k: res[k] for k in ("scenarios_run", "survived", "not_survived", "overloaded", "worst_by_link")}
    return scenarios, baseline, counts


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def dask_cluster() -> Iterator[str]:
    """A Dask ``LocalCluster`` of two worker processes on loopback; yields the scheduler's address."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def test_server_scheduler_routes_sweeps_unless_a_job_asks_for_local() -> None:
    addr = "tcp://10.0.0.1:8786"
    on = {"engine": "dask", "scheduler": addr, "scheduler_timeout_s": 3.0}
    assert server_job_options("failures", {"kind": "link"}, addr, 3.0) == {"kind": "link", **on}
    assert server_job_options("failures", {"engine": "dask"}, addr, 3.0) == on
    for engine in ("local", "serial"):  # the job's own processes, as without a scheduler
        assert server_job_options("failures", {"engine": engine}, addr) == {"engine": engine}
    assert server_job_options("plan", {}, addr, 3.0) == {"failures": on}
    assert server_job_options("roadmap", {"failures": {"kind": "link"}}, addr, 3.0) == {"failures": {"kind": "link",
                                                                                                    **on}}
    assert server_job_options("plan", {"failures": {"engine": "serial"}}, addr) == {"failures": {"engine": "serial"}}
    assert server_job_options("te", {"k_paths": 3}, addr) == {"k_paths": 3}
    # without a scheduler nothing changes (engine dask: a local cluster per job, as before)
    assert server_job_options("failures", {"engine": "dask"}, "") == {"engine": "dask"}
    assert server_job_options("plan", {}, "") == {}


@pytest.mark.slow
def test_unreachable_scheduler_fails_the_job_with_a_reason(tmp_path: Path, migrated_sqlite: Path) -> None:
    addr = f"tcp://127.0.0.1:{_closed_port()}"
    with _api(tmp_path / "api", migrated_sqlite, dask_scheduler=addr, dask_timeout_s=1.0) as (client, tok):
        t0 = time.monotonic()
        job = _run_job(client, tok, random_te_net(3, n=6, m=9), "failures", {"kind": "link"}, timeout_s=60)
        assert time.monotonic() - t0 < 30  # the timeout bounds the wait: it never hangs
    assert job["status"] == "failed", job
    err = job["error"]
    assert err["status"] == 503
    assert addr in err["detail"] and "cannot reach the Dask scheduler" in err["detail"] and "1 s" in err["detail"]


@pytest.mark.slow
def test_scheduler_without_workers_fails_the_job(tmp_path: Path, migrated_sqlite: Path) -> None:
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None) as empty, \
            _api(tmp_path / "api", migrated_sqlite, dask_scheduler=empty.scheduler_address,
                 dask_timeout_s=1.0) as (client, tok):
        job = _run_job(client, tok, random_te_net(3, n=6, m=9), "failures", {"kind": "link"}, timeout_s=60)
    assert job["status"] == "failed" and job["error"]["status"] == 503, job
    assert "has no worker after 1 s" in job["error"]["detail"]


@pytest.mark.slow
def test_failures_job_runs_on_the_cluster_with_the_local_figures(tmp_path: Path, migrated_sqlite: Path,
                                                                 dask_cluster: str) -> None:
    net = random_te_net(3, n=8, m=14, tight=0.6)
    options = {"kind": "link", "k_paths": 3, "time_limit_s": 30}
    with _api(tmp_path / "local", migrated_sqlite) as (client, tok):
        local = _result(client, tok, _run_job(client, tok, net, "failures", options))
    with _api(tmp_path / "dask", migrated_sqlite, dask_scheduler=dask_cluster) as (client, tok):
        on_dask = _result(client, tok, _run_job(client, tok, net, "failures", options))
        asked_local = _result(client, tok, _run_job(client, tok, net, "failures", {**options, "engine": "serial"}))
    assert on_dask["ran_on"] == {"engine": "dask", "scheduler": dask_cluster, "workers": 2, "threads": 2}
    assert local["ran_on"]["engine"] in ("local", "serial") and local["ran_on"]["scheduler"] is None
    assert asked_local["ran_on"] == {"engine": "serial", "scheduler": None, "workers": 1, "threads": 1}
    assert on_dask["scenarios_run"] == len(net.links) > 10
    assert _figures(on_dask) == _figures(local) == _figures(asked_local)


@pytest.mark.slow
def test_plan_failures_stage_runs_on_the_cluster(tmp_path: Path, migrated_sqlite: Path, dask_cluster: str) -> None:
    """A plan job's failures stage (and the sweeps of its design) run on the cluster; ``failures.json`` says so."""
    from tests.nets import small_world_network

    with _api(tmp_path / "dask", migrated_sqlite, dask_scheduler=dask_cluster) as (client, tok):
        job = _run_job(client, tok, small_world_network(), "plan", {"design": {"time_limit_s": 20}}, timeout_s=400)
        assert job["status"] == "succeeded", job["error"]
        r = client.get(f"/v1/jobs/{job['id']}/files/failures.json", headers=auth(tok))
        assert r.status_code == 200, r.text
    assert r.json()["ran_on"] == {"engine": "dask", "scheduler": dask_cluster, "workers": 2, "threads": 2}
    assert r.json()["scenarios_run"] == 12  # 7 SRLGs and 5 links in none
