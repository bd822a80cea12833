"""Per-team quotas on CPU seconds (in a sliding window) and stored result bytes: jobs record what they used, a
team at or over a quota gets its submission refused (429 with Retry-After / 403, naming the quota), other teams
are not, and ``GET /v1/usage`` shows the use beside the quotas."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import auth, wait_for
from apitest_tasks import REGISTRY
from fastapi.testclient import TestClient
from sqlalchemy import update

from backbone.api.app import create_app
from backbone.api.jobs import process_cpu_s, tree_bytes
from backbone.api.models import Job, utcnow
from backbone.api.settings import Settings
from backbone.api.store import JobQuotas, Principal, QuotaExceededError, Store
from backbone.io import network_to_dict
from backbone.model import Network

COUNTS = {"sites": 1, "links": 0, "demands": 0}
DOC = {"name": "one", "sites": [{"id": "A", "lon": 0.0, "lat": 0.0, "region": "NA"}]}


def _finished(store: Store, sid: str, who: Principal, cpu_s: float, result_bytes: int | None = None,
              age_s: float = 0.0) -> str:
    job = store.create_job(sid, 1, "te", {}, who)
    assert store.claim_next_job() is not None
    store.finish_job(job.id, "succeeded", "done")
    store.record_usage(job.id, cpu_s=cpu_s, result_bytes=result_bytes)
    if age_s:
        with store.session() as s:
            s.execute(update(Job).where(Job.id == job.id).values(finished_at=utcnow() - timedelta(seconds=age_s)))
    return job.id


def test_quotas_count_the_window_and_the_team(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'q.db'}")
    store.upgrade()
    try:
        blue, red = store.create_team("blue"), store.create_team("red")
        alice, bob = Principal("a", "alice", "planner", blue.id), Principal("b", "bob", "planner", red.id)
        sc, _ = store.create_scenario(DOC, COUNTS, "canonical-json", alice)
        _finished(store, sc.id, alice, 50.0, result_bytes=700, age_s=7200)  # CPU outside a 1 h window
        _finished(store, sc.id, alice, 30.0, result_bytes=300, age_s=600)
        used = store.team_usage(blue.id, 3600)
        assert (used.cpu_s, used.stored_bytes, used.stored_results) == (30.0, 1000, 2)
        assert store.team_usage(blue.id, 3 * 3600).cpu_s == 80.0
        assert store.team_usage(red.id, 3600).cpu_s == 0.0

        store.create_job(sc.id, 1, "te", {}, alice, quotas=JobQuotas(cpu_s=31, window_s=3600))  # under: queued
        with pytest.raises(QuotaExceededError) as cpu:
            store.create_job(sc.id, 1, "te", {}, alice, quotas=JobQuotas(cpu_s=30, window_s=3600))
        assert cpu.value.http_status == 429 and cpu.value.quota == "BACKBONE_MAX_CPU_S_PER_TEAM"
        assert 2900 <= int(cpu.value.headers["Retry-After"]) <= 3001  # when the 10-minute-old job leaves
        with pytest.raises(QuotaExceededError) as stored:
            store.create_job(sc.id, 1, "te", {}, alice, quotas=JobQuotas(stored_bytes=1000))
        assert stored.value.http_status == 403 and stored.value.headers == {}
        assert "1000 bytes of job results in 2 jobs" in str(stored.value)
        # another team is not held back by blue's use
        store.create_job(sc.id, 1, "te", {}, bob, quotas=JobQuotas(cpu_s=1, window_s=3600, stored_bytes=1))
    finally:
        store.dispose()


def test_process_cpu_and_tree_bytes_measure(tmp_path: Path) -> None:
    before = process_cpu_s()
    sum(i * i for i in range(300_000))
    assert process_cpu_s() > before > 0
    (tmp_path / "r" / "sub").mkdir(parents=True)
    (tmp_path / "r" / "a.csv").write_bytes(b"x" * 10)
    (tmp_path / "r" / "sub" / "b.json").write_bytes(b"y" * 5)
    assert tree_bytes(tmp_path / "r") == 15


def _submit(client: TestClient, tok: str, sid: str) -> Any:
    return client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy", "options": {"steps": 1, "step_s": 0.0}},
                       headers=auth(tok))


def test_a_team_over_its_quotas_is_refused_on_submit(tmp_path: Path, triangle: Network) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1,
                        max_cpu_s_per_team=1e-6, cpu_quota_window_h=1.0)
    with TestClient(create_app(settings, task_registry=REGISTRY), raise_server_exceptions=False) as client:
        store: Store = client.app.state.store  # type: ignore[attr-defined]
        team = store.create_team("blue")
        tok = store.create_token("planner", "p", team="blue")[1]
        admin = store.create_token("admin", "root")[1]
        r = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok))
        assert r.status_code == 201, r.text
        sid = r.json()["id"]
        first = _submit(client, tok, sid)
        assert first.status_code == 202, first.text
        wait_for(lambda: client.get(f"/v1/jobs/{first.json()['id']}", headers=auth(tok)).json(),
                 lambda j: j["status"] == "succeeded")
        usage = client.get("/v1/usage", headers=auth(tok)).json()
        assert usage["team_id"] == team.id and usage["cpu_s"] > 0 and usage["cpu_window_h"] == 1.0
        assert usage["stored_bytes"] > 0 and usage["stored_results"] == 1 and usage["max_stored_bytes"] is None
        again = _submit(client, tok, sid)
        assert again.status_code == 429 and int(again.headers["Retry-After"]) >= 1
        doc = again.json()
        assert again.headers["content-type"].startswith("application/problem+json")
        assert doc["errors"][0]["field"] == "BACKBONE_MAX_CPU_S_PER_TEAM" and "CPU seconds" in doc["detail"]
        # admins read any team's usage; others only their own
        assert client.get("/v1/usage", params={"team": "blue"}, headers=auth(admin)).json()["stored_results"] == 1
        assert client.get("/v1/usage", params={"team": "other"}, headers=auth(tok)).status_code == 403


def test_stored_bytes_quota_answers_403(tmp_path: Path, triangle: Network) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'api.db'}", workers=1,
                        max_stored_bytes_per_team=1)
    with TestClient(create_app(settings, task_registry=REGISTRY), raise_server_exceptions=False) as client:
        store: Store = client.app.state.store  # type: ignore[attr-defined]
        tok = store.create_token("planner", "p")[1]
        sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
        first = _submit(client, tok, sid)
        wait_for(lambda: client.get(f"/v1/jobs/{first.json()['id']}", headers=auth(tok)).json(),
                 lambda j: j["status"] == "succeeded")
        refused = _submit(client, tok, sid)
        assert refused.status_code == 403, refused.text
        assert refused.json()["errors"][0]["field"] == "BACKBONE_MAX_STORED_BYTES_PER_TEAM"
        assert "Retry-After" not in refused.headers
