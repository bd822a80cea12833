"""Job workers: the main jobs run through the API with their default options (a worker may start a
process pool), a job's processes are capped by the server, and every process of a job dies with the
server when it is killed -9."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from apitest_helpers import FINAL, LiveServer, auth, descendants, still_running, wait_for
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient

from backbone.api.app import create_app
from backbone.api.settings import Settings
from backbone.io import load_scenario, network_to_dict
from backbone.model import Network
from tests.nets import small_world_network
from tests.plans import check_plan_dir

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")


@pytest.fixture
def big_client(tmp_path: Path) -> Iterator[TestClient]:
    """An app that accepts the shipped scenario, two jobs at once, two processes per job."""
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=2,
                        job_processes=2)
    with TestClient(create_app(settings, task_registry=REGISTRY), raise_server_exceptions=False) as c:
        yield c


def _run_defaults(client: TestClient, net: Network, kinds: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Upload ``net``, submit each kind with ``{}`` options, wait; the final job records by kind."""
    tok = client.app.state.store.create_token("planner", "defaults")[1]  # type: ignore[attr-defined]
    r = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(tok))
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    ids = {}
    for kind in kinds:
        r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": kind, "options": {}}, headers=auth(tok))
        assert r.status_code == 202, r.text
        ids[kind] = r.json()["id"]
    return {kind: wait_for(lambda jid=jid: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                           lambda j: j["status"] in FINAL, timeout_s=600, interval_s=0.5)
            for kind, jid in ids.items()}


def _assert_succeeded(client: TestClient, jobs: dict[str, dict[str, Any]], net: Network) -> None:
    tok = client.app.state.store.create_token("viewer", "check")[1]  # type: ignore[attr-defined]
    for kind, job in jobs.items():
        assert job["status"] == "succeeded", (kind, job["error"])
        result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()
        assert result["kind"] == kind
        if kind == "failures":  # the default sweep: one scenario per SRLG, run on a process pool
            assert result["scenarios_run"] == len(net.srlgs) + len(net.links_in_no_srlg())  # each its own group
        if kind == "plan":
            assert result["failure_scenarios"] == len(net.srlgs) + len(net.links_in_no_srlg())


@pytest.mark.slow
def test_default_failures_and_plan_on_a_small_scenario(big_client: TestClient, small_world: Network) -> None:
    """`failures` and `plan` with `{}` options (engine local: a process pool inside the worker) succeed."""
    net = small_world
    _assert_succeeded(big_client, _run_defaults(big_client, net, ("failures", "plan")), net)


@pytest.mark.slow
def test_default_failures_and_plan_on_the_shipped_scenario(big_client: TestClient, shipped: Network,
                                                            tmp_path: Path) -> None:
    """The main job on the shipped scenario with every default, through the API (the worker runs the same
    ``run_task`` as the CLI and Python): its files, downloaded (the planned backbone's folder file by file), agree
    with its JSON, and its survivable design
    converges -- every single-SRLG failure carried after the plan, or excused with a reason."""
    net = shipped
    jobs = _run_defaults(big_client, net, ("failures", "plan"))
    _assert_succeeded(big_client, jobs, net)
    tok = big_client.app.state.store.create_token("viewer", "files")[1]  # type: ignore[attr-defined]
    jid = jobs["plan"]["id"]
    s = big_client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).json()
    out = tmp_path / "plan"
    for f in big_client.get(f"/v1/jobs/{jid}/files", headers=auth(tok)).json():
        r = big_client.get(f["url"], headers=auth(tok))
        assert r.status_code == 200, (f["name"], r.text[:200])
        (out / f["name"]).parent.mkdir(parents=True, exist_ok=True)
        (out / f["name"]).write_bytes(r.content)
    check_plan_dir(out, s)  # the planned backbone, ``scenario_after/``, downloaded file by file, loads
    assert s["scenario"] == net.name and s["mlu"] > 0
    sv = s["survivability"]
    assert sv["violated"] == [], sv["violated"]
    assert sv["survived"] + len(sv["not_survivable"]) == sv["states"]
    assert all(x["reason"] for x in sv["not_survivable"])
    assert s["routes_built"] > 0
    # the restricted optimum is solved to its gap; the true bound (an LP over every candidate and path) is below
    # the cost, and the gap is measured against it
    assert s["upgrade_restricted_optimum"]["gap"] is not None and s["upgrade_restricted_optimum"]["gap"] <= 0.01
    lb = s["upgrade_lower_bound_usd"]
    assert lb is None or (0 <= lb <= s["upgrade_cost_usd"]
                          and s["upgrade_gap"] == pytest.approx((s["upgrade_cost_usd"] - lb) / s["upgrade_cost_usd"]))
    assert sv["survived"] > s["failure_scenarios"] - s["failures_with_unmet_demand"]


@pytest.mark.slow
def test_worker_processes_are_capped_by_the_server(tmp_path: Path) -> None:
    """A job asking for 64 sweep workers gets the server's `job_processes` (here 1: the serial engine),
    and runs at a lower CPU priority than the server."""
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1,
                        job_processes=1)
    with TestClient(create_app(settings, task_registry=REGISTRY)) as client:
        tok = client.app.state.store.create_token("planner", "p")[1]  # type: ignore[attr-defined]
        sid = client.post("/v1/scenarios", json=network_to_dict(small_world_network()), headers=auth(tok)).json()["id"]
        jid = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "processes", "options": {"workers": 64}},
                          headers=auth(tok)).json()["id"]
        job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                       lambda j: j["status"] in FINAL, timeout_s=120)
        assert job["status"] == "succeeded", job
        result = client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).json()
        assert result["workers"] == 1 and result["process_limit"] == 1
        assert result["nice"] >= os.nice(0) + settings.worker_nice  # jobs yield the CPU to request handling


@linux_only
@pytest.mark.slow
def test_every_job_process_dies_with_the_server(tmp_path: Path) -> None:
    """kill -9 of the server: the fork server, the resource tracker, the workers and their sweep pools
    are all gone within a few seconds (none keeps computing)."""
    server = LiveServer(tmp_path / "live", f"sqlite:///{tmp_path / 'live.db'}", workers=2)
    planner = server.token("planner")
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            sid = c.post("/v1/scenarios", json=network_to_dict(load_scenario()), headers=auth(planner)).json()["id"]
            # a long sweep on a two-process pool, and a second job beside it
            body = {"kind": "failures", "options": {"kind": "link", "workers": 2}}  # 256 states: long enough
            jobs = [c.post(f"/v1/scenarios/{sid}/jobs", json=body, headers=auth(planner)).json()["id"]
                    for _ in range(2)]
            # fork server + resource tracker + 2 workers + 2 pool processes each, all computing
            deadline = time.monotonic() + 300
            while len(below := descendants(server.proc.pid)) < 8 and time.monotonic() < deadline:
                time.sleep(0.5)
            assert len(below) >= 8, f"expected the job processes below the server, found {len(below)}"
            states = [c.get(f"/v1/jobs/{jid}", headers=auth(planner)).json()["status"] for jid in jobs]
            assert states == ["running", "running"]
        server.kill()
        t0 = time.monotonic()
        left = still_running(below)
        while left and time.monotonic() - t0 < 5:
            time.sleep(0.1)
            left = still_running(below)
        assert not left, f"processes still running {time.monotonic() - t0:.1f} s after kill -9: {sorted(left)}"
    finally:
        server.kill()


@pytest.mark.slow
def test_worker_memory_and_cpu_limits(tmp_path: Path) -> None:
    """RLIMIT_AS and RLIMIT_CPU from the settings bound a job; the job fails naming the limit."""
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=2,
                        worker_memory_mb=1024, worker_cpu_s=2)
    with TestClient(create_app(settings, task_registry=REGISTRY)) as client:
        tok = client.app.state.store.create_token("planner", "p")[1]  # type: ignore[attr-defined]
        sid = client.post("/v1/scenarios", json=network_to_dict(small_world_network()), headers=auth(tok)).json()["id"]

        def run(options: dict[str, Any]) -> dict[str, Any]:
            jid = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "hog", "options": options},
                              headers=auth(tok)).json()["id"]
            return wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                            lambda j: j["status"] in FINAL, timeout_s=120)

        ok = run({"memory_mb": 64})
        assert ok["status"] == "succeeded", ok
        mem = run({"memory_mb": 4096})
        assert mem["status"] == "failed" and mem["error"]["title"] == "Memory limit", mem
        assert "1024 MiB" in mem["error"]["detail"]
        cpu = run({"cpu_s": 30})
        assert cpu["status"] == "failed" and cpu["error"]["title"] == "CPU time limit", cpu
        assert "2 s" in cpu["error"]["detail"]


@pytest.mark.slow
@linux_only
def test_cancel_kills_the_jobs_pool_processes(big_client: TestClient) -> None:
    """Cancelling a sweep terminates its worker's whole process group, pool processes included."""
    client = big_client
    tok = client.app.state.store.create_token("planner", "p")[1]  # type: ignore[attr-defined]
    sid = client.post("/v1/scenarios", json=network_to_dict(load_scenario()), headers=auth(tok)).json()["id"]
    jid = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "failures", "options": {"kind": "srlg"}},
                      headers=auth(tok)).json()["id"]
    manager = client.app.state.jobs  # type: ignore[attr-defined]
    wait_for(lambda: {"started": jid in manager._running}, lambda j: j["started"])
    worker = manager._running[jid].process.pid
    deadline = time.monotonic() + 120
    while len(pool := descendants(worker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(pool) >= 2, "the sweep did not start its pool"
    assert os.getpgid(worker) == worker and all(os.getpgid(p) == worker for p in pool)
    assert client.delete(f"/v1/jobs/{jid}", headers=auth(tok)).json()["status"] == "cancelled"
    t0 = time.monotonic()
    while still_running({worker, *pool}) and time.monotonic() - t0 < 5:
        time.sleep(0.1)
    assert not still_running({worker, *pool})


@pytest.mark.slow
@linux_only
def test_a_worker_kills_its_group_when_the_server_pipe_closes() -> None:
    """The lifeline alone (no parent death involved): when its write end closes, the worker kills its
    whole process group, its own children included."""
    import multiprocessing as mp

    from apitest_tasks import lifeline_child

    ctx = mp.get_context("spawn")
    read_end, write_end = ctx.Pipe(duplex=False)
    report = ctx.Queue()
    proc = ctx.Process(target=lifeline_child, args=(read_end, report))
    proc.start()
    try:
        pids = set(report.get(timeout=60))
        time.sleep(0.5)
        assert still_running(pids) == pids
        write_end.close()
        t0 = time.monotonic()
        while still_running(pids) and time.monotonic() - t0 < 5:
            time.sleep(0.1)
        assert not still_running(pids)
        proc.join(5)
        assert proc.exitcode == -9
    finally:
        if proc.is_alive():
            proc.kill()


@pytest.mark.slow
@pytest.mark.parametrize("then", ["thread", "import"])
def test_a_job_at_its_memory_limit_is_reported_as_the_memory_limit(tmp_path: Path, then: str) -> None:
    """At RLIMIT_AS a thread that cannot start or a library that cannot be mapped is the memory limit (with
    the limit in MiB), never "Internal error RuntimeError" or "Worker died"."""
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1,
                        worker_memory_mb=1536, worker_cpu_s=60)
    with TestClient(create_app(settings, task_registry=REGISTRY)) as client:
        tok = client.app.state.store.create_token("planner", "p")[1]  # type: ignore[attr-defined]
        sid = client.post("/v1/scenarios", json=network_to_dict(small_world_network()), headers=auth(tok)).json()["id"]
        jid = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "exhaust", "options": {"then": then}},
                          headers=auth(tok)).json()["id"]
        job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                       lambda j: j["status"] in FINAL, timeout_s=120)
    assert job["status"] == "failed", (job, client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).text)
    assert job["error"]["title"] == "Memory limit", job["error"]
    assert "1536 MiB" in job["error"]["detail"] and "BACKBONE_WORKER_MEMORY_MB" in job["error"]["detail"]
