"""Fairness and bounds of the job queue: tokens take turns, queue depth limits (429/503 with
Retry-After), server caps on time limits and scenario counts (422 naming the field), a size limit on
job options (413), and listings that do not return options."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient

from backbone.api.app import create_app
from backbone.api.settings import Settings
from backbone.io import network_to_dict
from backbone.model import Network


def _app(tmp_path: Path, **overrides: Any) -> TestClient:
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}",
                        **{"workers": 1, **overrides})
    return TestClient(create_app(settings, task_registry=REGISTRY), raise_server_exceptions=False)


@pytest.fixture
def one_worker(tmp_path: Path) -> Iterator[TestClient]:
    with _app(tmp_path, max_queued_jobs_per_token=3, max_queued_jobs=5) as c:
        yield c


def _token(client: TestClient, name: str, scope: str = "planner") -> str:
    return client.app.state.store.create_token(scope, name)[1]  # type: ignore[attr-defined, no-any-return]


def _scenario(client: TestClient, tok: str, net: Network) -> str:
    r = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(tok))
    assert r.status_code == 201, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


def _submit(client: TestClient, tok: str, sid: str, options: dict[str, Any], kind: str = "sleepy") -> Any:
    return client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": kind, "options": options}, headers=auth(tok))


def _job(client: TestClient, tok: str, jid: str) -> dict[str, Any]:
    return client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json()  # type: ignore[no-any-return]


@pytest.mark.slow
def test_tokens_take_turns(tmp_path: Path, triangle: Network) -> None:
    """One worker; token A queues five 1.5 s jobs, then B one tiny job: B's runs right after A's first,
    not after all of A's (strict FIFO would make it wait for all five)."""
    with _app(tmp_path) as client:
        a, b = _token(client, "a"), _token(client, "b")
        sid = _scenario(client, a, triangle)
        a_jobs = [_submit(client, a, sid, {"steps": 15, "step_s": 0.1}).json()["id"] for _ in range(5)]
        b_job = _submit(client, b, sid, {"steps": 1, "step_s": 0}).json()["id"]
        done = {jid: wait_for(lambda jid=jid: _job(client, a, jid), lambda j: j["status"] in FINAL, timeout_s=120)
                for jid in [*a_jobs, b_job]}
        assert all(j["status"] == "succeeded" for j in done.values())
        started = {jid: datetime.fromisoformat(j["started_at"]) for jid, j in done.items()}
        order = sorted(started, key=started.__getitem__)
        assert order.index(b_job) <= 2, [("B" if j == b_job else f"A{a_jobs.index(j) + 1}") for j in order]
        assert started[b_job] < started[a_jobs[2]]


@pytest.mark.slow
def test_teams_take_turns(tmp_path: Path, triangle: Network) -> None:
    """One worker; two tokens of team X queue three jobs each, then a token of team Y one tiny job. Shares are
    per team first: Y's job starts second (per-token turns alone would run X's second token first)."""
    with _app(tmp_path) as client:
        store = client.app.state.store  # type: ignore[attr-defined]
        store.create_team("x")
        store.create_team("y")
        x1, x2 = store.create_token("planner", "x1", team="x")[1], store.create_token("planner", "x2", team="x")[1]
        y = store.create_token("planner", "y", team="y")[1]
        sx1, sx2, sy = _scenario(client, x1, triangle), _scenario(client, x2, triangle), _scenario(client, y, triangle)
        x_jobs = []
        for _ in range(3):
            x_jobs.append((x1, _submit(client, x1, sx1, {"steps": 10, "step_s": 0.1}).json()["id"]))
            x_jobs.append((x2, _submit(client, x2, sx2, {"steps": 10, "step_s": 0.1}).json()["id"]))
        y_job = _submit(client, y, sy, {"steps": 1, "step_s": 0}).json()["id"]
        done = {jid: wait_for(lambda tok=tok, jid=jid: _job(client, tok, jid), lambda j: j["status"] in FINAL,
                              timeout_s=120) for tok, jid in [*x_jobs, (y, y_job)]}
        assert all(j["status"] == "succeeded" for j in done.values())
        order = sorted(done, key=lambda jid: datetime.fromisoformat(done[jid]["started_at"]))
        assert order.index(y_job) <= 1, order


def test_queue_depth_limits(one_worker: TestClient, triangle: Network) -> None:
    client = one_worker
    a, b = _token(client, "a"), _token(client, "b")
    sid = _scenario(client, a, triangle)
    long = _submit(client, a, sid, {"steps": 600, "step_s": 0.1}).json()["id"]
    wait_for(lambda: _job(client, a, long), lambda j: j["status"] == "running")
    for _ in range(3):
        assert _submit(client, a, sid, {"steps": 1, "step_s": 0}).status_code == 202
    r = _submit(client, a, sid, {"steps": 1, "step_s": 0})
    assert r.status_code == 429, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert int(r.headers["retry-after"]) > 0 and "3 queued jobs" in r.json()["detail"]
    # another token may still queue, up to the server's limit of 5 queued jobs
    for _ in range(2):
        assert _submit(client, b, sid, {"steps": 1, "step_s": 0}).status_code == 202
    r = _submit(client, b, sid, {"steps": 1, "step_s": 0})
    assert r.status_code == 503 and int(r.headers["retry-after"]) > 0, r.text
    client.delete(f"/v1/jobs/{long}", headers=auth(a))


@pytest.mark.slow
def test_time_limits_and_scenario_counts_are_capped(client: TestClient, tokens: dict[str, str],
                                                    triangle: Network) -> None:
    """A `srlg-pairs` sweep asking for a million scenarios and a million seconds is refused naming both."""
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    r = _submit(client, tok, sid, {"kind": "srlg-pairs", "max_scenarios": 1_000_000, "time_limit_s": 1_000_000},
                kind="failures")
    assert r.status_code == 422, r.text
    fields = {e["field"] for e in r.json()["errors"]}
    assert fields == {"max_scenarios", "time_limit_s"}
    assert "BACKBONE_MAX_TIME_LIMIT_S" in r.text and "BACKBONE_MAX_SCENARIOS" in r.text
    r = _submit(client, tok, sid, {"te": {"time_limit_s": 86_400}}, kind="plan")  # nested stage options too
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "te.time_limit_s", r.text
    assert client.get("/v1/jobs", headers=auth(tok)).json() == []
    # at the caps, jobs are accepted
    settings = client.app.state.settings  # type: ignore[attr-defined]
    ok = _submit(client, tok, sid, {"kind": "srlg", "max_scenarios": settings.max_scenarios,
                                    "time_limit_s": settings.max_time_limit_s, "engine": "serial"}, kind="failures")
    assert ok.status_code == 202, ok.text
    j = wait_for(lambda: _job(client, tok, ok.json()["id"]), lambda j: j["status"] in FINAL, timeout_s=120)
    assert j["status"] == "succeeded", j


@pytest.mark.slow
def test_large_options_are_refused_and_listings_omit_options(client: TestClient, tokens: dict[str, str],
                                                             triangle: Network) -> None:
    tok = tokens["planner"]
    sid = _scenario(client, tok, triangle)
    limit = client.app.state.settings.max_job_options_bytes  # type: ignore[attr-defined]
    r = _submit(client, tok, sid, {"steps": 1, "pad": "x" * (limit + 1)})
    assert r.status_code == 413, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["errors"][0]["field"] == "options"
    ids = [_submit(client, tok, sid, {"steps": 1, "step_s": 0}).json()["id"] for _ in range(5)]
    listed = client.get("/v1/jobs?limit=5", headers=auth(tok))
    assert listed.status_code == 200 and len(listed.json()) == 5
    assert all("options" not in j for j in listed.json())
    assert all("options" not in j for j in client.get(f"/v1/scenarios/{sid}/jobs", headers=auth(tok)).json())
    assert _job(client, tok, ids[0])["options"] == {"steps": 1, "step_s": 0}
    for jid in ids:
        wait_for(lambda jid=jid: _job(client, tok, jid), lambda j: j["status"] in FINAL)
    # options over 4 KiB are stored once: the audit entry has their digest and size
    records = [{"id": f"s{i}", "links": "AB"} for i in range(300)]
    big = _submit(client, tok, sid, {"kind": "list", "scenarios": records, "engine": "serial"}, kind="failures")
    assert big.status_code == 202, big.text
    audit = client.get("/v1/audit", params={"action": "job.create"}, headers=auth(tokens["admin"])).json()
    entry = next(a for a in audit if a["target_id"] == big.json()["id"])
    assert "options" not in entry["detail"] and entry["detail"]["options_bytes"] > 4096
    assert len(entry["detail"]["options_sha256"]) == 64
    wait_for(lambda: _job(client, tok, big.json()["id"]), lambda j: j["status"] in FINAL)
