"""Jobs through the API: progress, results and files, cancellation (the worker process dies),
failures, bad kinds and options, and the file allow-list."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient

from backbone.api.app import create_app
from backbone.api.job_outcome import listed_files
from backbone.api.settings import Settings
from backbone.io import network_to_dict
from backbone.model import Network


def _scenario(client: TestClient, token: str, net: Network) -> str:
    r = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(token))
    assert r.status_code == 201, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


def _submit(client: TestClient, token: str, sid: str, kind: str, options: dict[str, Any] | None = None,
            status: int = 202) -> dict[str, Any]:
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": kind, "options": options or {}}, headers=auth(token))
    assert r.status_code == status, r.text
    return r.json()  # type: ignore[no-any-return]


def _job(client: TestClient, token: str, job_id: str) -> dict[str, Any]:
    r = client.get(f"/v1/jobs/{job_id}", headers=auth(token))
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


@pytest.mark.slow
def test_job_progress_result_and_files(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    job = _submit(client, tok, sid, "sleepy", {"steps": 20, "step_s": 0.1})
    assert job["status"] == "queued" and job["scenario_version"] == 1
    seen: list[float] = []

    def fetch() -> dict[str, Any]:
        j = _job(client, tokens["viewer"], job["id"])
        if j["status"] == "running":
            seen.append(j["progress"]["fraction"])
        return j

    done = wait_for(fetch, lambda j: j["status"] in FINAL, timeout_s=60)
    assert done["status"] == "succeeded", done
    assert done["progress"]["fraction"] == 1.0
    assert any(0 < f < 1 for f in seen), f"no intermediate progress seen: {seen}"
    assert seen == sorted(seen)
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tokens["viewer"])).json()
    assert result["kind"] == "sleepy" and result["sites"] == 3 and result["steps"] == 20
    files = client.get(f"/v1/jobs/{job['id']}/files", headers=auth(tokens["viewer"])).json()
    assert {f["name"] for f in files} == {"sites.csv", "sleepy.json"}
    csv = client.get(f"/v1/jobs/{job['id']}/files/sites.csv", headers=auth(tokens["viewer"]))
    assert csv.status_code == 200 and csv.text.split() == ["id", "A", "B", "C"]
    # results are in place, staging is empty
    data_dir = client.app.state.settings.data_dir  # type: ignore[attr-defined]
    assert (data_dir / "results" / job["id"] / "sites.csv").is_file()
    assert not list((data_dir / "staging").iterdir())
    # the job is in the audit log with its creator
    audit = client.get("/v1/audit", headers=auth(tokens["admin"])).json()
    actions = {(a["action"], a["target_id"]) for a in audit}
    assert ("job.create", job["id"]) in actions and ("job.succeeded", job["id"]) in actions
    assert any(a["action"] == "job.create" and a["token_name"] == "test-planner" for a in audit)


def test_file_names_are_an_allow_list(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    job = _submit(client, tok, sid, "sleepy", {"steps": 1, "step_s": 0})
    wait_for(lambda: _job(client, tok, job["id"]), lambda j: j["status"] in FINAL)
    data_dir = client.app.state.settings.data_dir  # type: ignore[attr-defined]
    (data_dir / "secret.txt").write_text("top secret")
    for name in ("../../secret.txt", "..%2F..%2Fsecret.txt", "%2e%2e/%2e%2e/secret.txt", "/etc/passwd",
                 "sites.csv/../../../secret.txt", "nothere.csv"):
        r = client.get(f"/v1/jobs/{job['id']}/files/{name}", headers=auth(tok))
        # clients may normalise ``..`` away (then another route answers 404/422); never the file
        assert r.status_code in (404, 422), (name, r.status_code)
        assert "top secret" not in r.text


def test_a_folder_a_task_wrote_is_listed_file_by_file(tmp_path: Path) -> None:
    """``scenario_after/`` becomes the files under it; a symlink, a name that is not safe and a missing folder
    are dropped."""
    (tmp_path / "scenario_after" / "meta").mkdir(parents=True)
    for name in ("scenario_after/sites.csv", "scenario_after/links.csv", "scenario_after/meta/x.json",
                 "scenario_after/.hidden", "plan.json"):
        (tmp_path / name).write_text("x")
    (tmp_path / "outside.txt").write_text("secret")
    (tmp_path / "scenario_after" / "link.csv").symlink_to(tmp_path / "outside.txt")
    (tmp_path / "linked").symlink_to(tmp_path / "scenario_after", target_is_directory=True)
    got = listed_files(["plan.json", "scenario_after/", "linked/", "gone/", "../x.csv", "/etc/passwd"], tmp_path)
    assert got == ["plan.json", "scenario_after/links.csv", "scenario_after/meta/x.json", "scenario_after/sites.csv"]


@pytest.mark.slow
def test_cancel_kills_the_worker(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    job = _submit(client, tok, sid, "sleepy", {"steps": 600, "step_s": 0.1})
    wait_for(lambda: _job(client, tok, job["id"]), lambda j: j["status"] == "running" and j["progress"]["fraction"] > 0)
    manager = client.app.state.jobs  # type: ignore[attr-defined]
    pid = manager._running[job["id"]].process.pid
    r = client.delete(f"/v1/jobs/{job['id']}", headers=auth(tok))
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    again = _job(client, tok, job["id"])
    assert again["status"] == "cancelled"
    assert client.delete(f"/v1/jobs/{job['id']}", headers=auth(tok)).status_code == 409
    assert client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).status_code == 409
    data_dir = client.app.state.settings.data_dir  # type: ignore[attr-defined]
    assert not (data_dir / "results" / job["id"]).exists()


def test_cancel_a_queued_job(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    # two workers busy, the third job waits in the queue
    busy = [_submit(client, tok, sid, "sleepy", {"steps": 600, "step_s": 0.1}) for _ in range(2)]
    queued = _submit(client, tok, sid, "sleepy", {"steps": 1, "step_s": 0})
    wait_for(lambda: _job(client, tok, busy[1]["id"]), lambda j: j["status"] == "running")
    assert _job(client, tok, queued["id"])["status"] == "queued"
    assert client.delete(f"/v1/jobs/{queued['id']}", headers=auth(tok)).json()["status"] == "cancelled"
    for b in busy:
        client.delete(f"/v1/jobs/{b['id']}", headers=auth(tok))
    listed = client.get("/v1/jobs?status=cancelled", headers=auth(tok)).json()
    assert {j["id"] for j in listed} == {queued["id"], *(b["id"] for b in busy)}


@pytest.mark.slow
def test_failures_are_reported(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    inf = _submit(client, tok, sid, "infeasible")
    crash = _submit(client, tok, sid, "crashing")
    j = wait_for(lambda: _job(client, tok, inf["id"]), lambda j: j["status"] in FINAL)
    assert j["status"] == "failed"
    assert j["error"]["status"] == 409 and j["error"]["title"] == "Infeasible"
    assert "15 Gbps" in j["error"]["errors"][0]["message"]
    c = wait_for(lambda: _job(client, tok, crash["id"]), lambda j: j["status"] in FINAL)
    assert c["status"] == "failed" and "exit code 7" in c["error"]["detail"]
    r = client.get(f"/v1/jobs/{inf['id']}/result", headers=auth(tok))
    assert r.status_code == 409 and r.headers["content-type"].startswith("application/problem+json")


def test_bad_job_requests(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "nonsense"}, headers=auth(tok))
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "kind"
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {"steps": -1}}, headers=auth(tok))
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "steps"
    assert r.json()["errors"][0]["table"] == "options"
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {"stepz": 1}}, headers=auth(tok))
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "stepz"
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "version": 7}, headers=auth(tok))
    assert r.status_code == 404
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "version": 2**64}, headers=auth(tok))
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "version"
    r = client.post(f"/v1/scenarios/{sid}/jobs", content=b'{"kind": "sleepy", "options": {"x": "\\udc00"}}',
                    headers=auth(tok, **{"Content-Type": "application/json"}))
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "options"
    r = client.post(f"/v1/scenarios/{uuid.uuid4()}/jobs", json={"kind": "sleepy"}, headers=auth(tok))
    assert r.status_code == 404
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"options": {}}, headers=auth(tok))
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "kind"
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []
    assert client.get(f"/v1/jobs/{uuid.uuid4()}", headers=auth(tok)).status_code == 404


@pytest.mark.slow
def test_job_runs_on_its_version(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    """A job refers to the version it ran on; a later PUT does not change its input."""
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    job = _submit(client, tok, sid, "sleepy", {"steps": 1, "step_s": 0})
    doc = network_to_dict(triangle)
    doc["sites"] = [*doc["sites"], {"id": "D", "name": "D", "lon": 3, "lat": 1, "region": "NA"}]
    assert client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(tok)).json()["version"] == 2
    j = wait_for(lambda: _job(client, tok, job["id"]), lambda j: j["status"] in FINAL)
    assert j["scenario_version"] == 1
    assert client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()["sites"] == 3
    j2 = _submit(client, tok, sid, "sleepy", {"steps": 1, "step_s": 0})
    assert j2["scenario_version"] == 2
    j1b = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "version": 1,
                                                          "options": {"steps": 1, "step_s": 0}}, headers=auth(tok))
    assert j1b.json()["scenario_version"] == 1
    for jid in (j2["id"], j1b.json()["id"]):
        wait_for(lambda jid=jid: _job(client, tok, jid), lambda j: j["status"] in FINAL)
    assert client.get(f"/v1/jobs/{j2['id']}/result", headers=auth(tok)).json()["sites"] == 4


def test_graceful_shutdown_fails_running_jobs(settings: Settings, triangle: Network) -> None:
    """Stopping the app kills running workers and marks their jobs failed with a reason; queued jobs stay queued."""
    app = create_app(settings, task_registry=REGISTRY)
    with TestClient(app) as client:
        store = client.app.state.store  # type: ignore[attr-defined]
        tok = store.create_token("planner", "p")[1]
        sid = _scenario(client, tok, triangle)
        running = [_submit(client, tok, sid, "sleepy", {"steps": 600, "step_s": 0.1}) for _ in range(2)]
        queued = _submit(client, tok, sid, "sleepy", {"steps": 1, "step_s": 0})
        for r in running:
            wait_for(lambda r=r: _job(client, tok, r["id"]), lambda j: j["status"] == "running")
        pids = [p.process.pid for p in client.app.state.jobs._running.values()]  # type: ignore[attr-defined]
    for r in running:
        job = store.get_job(r["id"])
        assert job.status == "failed" and job.message == "server stopped while the job was running"
    assert store.get_job(queued["id"]).status == "queued"
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    store.dispose()


@pytest.mark.slow
def test_a_worker_that_cannot_start_fails_its_job(client: TestClient, tokens: dict[str, str], triangle: Network,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A claimed job whose worker cannot be started (the fork server answers EOF on every try) is failed with the
    reason, never left 'running' (jobs and document workers start processes through one start_process)."""
    import multiprocessing.context as mpc

    def broken(self: Any) -> None:
        raise EOFError("unexpected EOF")

    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    monkeypatch.setattr(mpc.ForkServerProcess, "start", broken)
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {}}, headers=auth(tok))
    assert r.status_code == 202, r.text
    job = wait_for(lambda: client.get(f"/v1/jobs/{r.json()['id']}", headers=auth(tok)).json(),
                   lambda j: j["status"] in FINAL, timeout_s=60)
    assert job["status"] == "failed" and "did not start" in job["progress"]["message"], job
