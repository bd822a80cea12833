"""Scenario imports as jobs (issue #31): ``POST /v1/scenarios`` and ``PUT /v1/scenarios/{id}`` with ``Prefer:
respond-async`` or ``?async=true`` store the upload and answer 202 with an ``import`` job; the job parses it with
the synchronous path's parser and caps and creates the scenario (or version), or fails with the same problems;
an import that is claimed again never writes twice; queue limits and quotas apply. SQLite and (slow lane)
PostgreSQL; a separate ``backbone worker`` process runs imports in ``test_api_import_queue.py``."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from backbone.api.documents import parse_scenario
from backbone.api.models import Job, JobInput, Scenario, utcnow
from backbone.api.settings import Settings
from backbone.api.store import IMPORT_KIND, JobQuotas, Principal, QuotaExceededError, Store
from backbone.io import network_to_dict
from backbone.model import Network

ASYNC = {"Prefer": "respond-async"}


def finished(client: TestClient, token: str, job_id: str, timeout_s: float = 120.0) -> dict[str, Any]:
    """The job once it is final."""
    return wait_for(lambda: client.get(f"/v1/jobs/{job_id}", headers=auth(token)).json(),
                    lambda j: j["status"] in FINAL, timeout_s=timeout_s)


def inputs_left(store: Store) -> int:
    with store.session() as s:
        return int(s.scalar(select(func.count()).select_from(JobInput)) or 0)


def test_an_async_upload_creates_the_scenario_in_a_job(client: TestClient, tokens: dict[str, str],
                                                       triangle: Network) -> None:
    tok = tokens["planner"]
    store: Store = client.app.state.store  # type: ignore[attr-defined]
    r = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok, **ASYNC))
    assert r.status_code == 202, r.text
    assert r.headers["Preference-Applied"] == "respond-async" and r.headers["Location"] == f"/v1/jobs/{r.json()['id']}"
    queued = r.json()
    assert queued["kind"] == IMPORT_KIND and queued["options"]["mode"] == "create"
    job = finished(client, tok, queued["id"])
    assert job["status"] == "succeeded", job
    sid = job["scenario_id"]
    assert job["scenario_version"] == 1 and f"imported scenario {sid} version 1" in job["progress"]["message"]
    got = client.get(f"/v1/scenarios/{sid}", headers=auth(tok)).json()
    assert (got["version"], got["sites"], got["links"], got["source_format"]) == (
        1, len(triangle.sites), len(triangle.links), "canonical-json")
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()
    assert (result["scenario_id"], result["version"], result["etag"]) == (sid, 1, got["etag"])
    assert [s["id"] for s in client.get("/v1/scenarios", headers=auth(tok)).json()] == [sid]
    assert inputs_left(store) == 0
    audit = client.get("/v1/audit", params={"action": "scenario.create"}, headers=auth(tokens["admin"])).json()
    assert [(a["target_id"], a["token_name"], a["detail"]["job"]) for a in audit] == [(sid, "test-planner", job["id"])]

    # a new version through ?async=true, a multipart upload with If-Match
    doc = network_to_dict(triangle)
    doc["name"] = "second"
    r = client.put(f"/v1/scenarios/{sid}", params={"async": "true"}, headers=auth(tok, **{"If-Match": got["etag"]}),
                   files={"file": ("v2.json", json.dumps(doc).encode())})
    assert r.status_code == 202, r.text
    v2 = finished(client, tok, r.json()["id"])
    assert v2["status"] == "succeeded" and v2["scenario_version"] == 2, v2
    head = client.get(f"/v1/scenarios/{sid}", headers=auth(tok)).json()
    assert (head["version"], head["name"]) == (2, "second")
    # a stale If-Match is refused at once (409); one that goes stale while the job waits: see the store test
    r = client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(tok, **ASYNC, **{"If-Match": got["etag"]}))
    assert r.status_code == 409, r.text
    assert inputs_left(store) == 0


def test_an_async_upload_that_is_refused_fails_with_the_same_problems(client: TestClient, tokens: dict[str, str],
                                                                      triangle: Network) -> None:
    tok = tokens["planner"]
    doc = network_to_dict(triangle)
    doc["links"][0]["site_a"] = "ZZ"
    files = {"file": ("mine.json", json.dumps(doc).encode())}
    sync = client.post("/v1/scenarios", files=files, headers=auth(tok))
    assert sync.status_code == 422
    r = client.post("/v1/scenarios", params={"async": "true"}, files=files, headers=auth(tok))
    assert r.status_code == 202, r.text
    job = finished(client, tok, r.json()["id"])
    assert job["status"] == "failed" and job["error"]["status"] == 422, job
    assert job["error"]["errors"] == sync.json()["errors"]
    assert any(e["field"] == "site_a" and e["file"] == "mine.json" for e in job["error"]["errors"])
    # a cap of the synchronous path (max_sites 50 in the test settings) holds as well
    sites = [{"id": f"s{i}", "lon": i * 0.5, "lat": 10.0, "region": "NA"} for i in range(60)]
    r = client.post("/v1/scenarios", json={"name": "big", "sites": sites}, headers=auth(tok, **ASYNC))
    big = finished(client, tok, r.json()["id"])
    assert big["status"] == "failed" and big["error"]["errors"][0]["table"] == "sites"
    assert "limit of 50" in big["error"]["errors"][0]["message"]
    assert client.get("/v1/scenarios", headers=auth(tok)).json() == []  # no placeholder shows
    long_name = "dir\\" + "n" * 300 + ".json"  # stored as its base name's last 200 characters
    r = client.post("/v1/scenarios", files={"file": (long_name, json.dumps(doc).encode())}, headers=auth(tok, **ASYNC))
    assert r.status_code == 202 and r.json()["options"]["filename"] == ("n" * 300 + ".json")[-200:], r.text
    assert finished(client, tok, r.json()["id"])["error"]["status"] == 422
    assert client.get(f"/v1/scenarios/{big['scenario_id']}", headers=auth(tok)).status_code == 404
    assert client.get(f"/v1/jobs/{big['id']}/result", headers=auth(tok)).status_code == 409
    assert inputs_left(client.app.state.store) == 0  # type: ignore[attr-defined]
    # the request itself is still checked at once: an empty body, body size, content type, the async flag's value
    for empty in ({"content": b""}, {"files": {"file": ("empty.json", b"  ")}}):
        r = client.post("/v1/scenarios", **empty, headers=auth(tok, **ASYNC))  # type: ignore[arg-type]
        assert r.status_code == 422 and "the upload is empty" in r.text, r.text
    assert inputs_left(client.app.state.store) == 0  # type: ignore[attr-defined]
    assert client.post("/v1/scenarios", content=b"a,b", headers=auth(tok, **ASYNC, **{"Content-Type": "text/csv"})
                       ).status_code == 415
    assert client.post("/v1/scenarios", json=network_to_dict(triangle), params={"async": "maybe"},
                       headers=auth(tok)).status_code == 422
    assert client.post("/v1/scenarios", json={"name": "x" * (300 * 1024)}, headers=auth(tok, **ASYNC)
                       ).status_code == 413
    assert client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tokens["viewer"], **ASYNC)
                       ).status_code == 403


def _claim(store: Store, worker: str) -> Job:
    job = store.claim_next_job(worker_id=worker, lease_s=30)
    assert job is not None
    return job


def test_an_import_claimed_again_writes_once(db_url: str, triangle: Network, tmp_path: Any) -> None:
    """A worker that lost its lease (the job was reclaimed and claimed by another) writes nothing; the one that
    holds the job writes the scenario once; writing again is refused."""
    store = Store(db_url)
    store.upgrade()
    try:
        who = Principal("tok", "alice", "planner", None)
        data = json.dumps(network_to_dict(triangle)).encode()
        queued = store.create_import_job(data, None, who)
        parsed = parse_scenario(store.import_input(queued.id).content, None, Settings(data_dir=tmp_path))
        assert _claim(store, "w1").id == queued.id
        with store.session() as s:  # w1 is lost: its lease runs out
            s.execute(update(Job).where(Job.id == queued.id).values(lease_expires_at=utcnow() - timedelta(seconds=1)))
        assert store.reclaim_expired_jobs(frozenset({IMPORT_KIND})).requeued == [queued.id]
        assert _claim(store, "w2").id == queued.id
        late = store.finish_import(queued.id, parsed.document, parsed.counts, parsed.source_format, "w1")
        assert not late.recorded and late.conflict is None
        done = store.finish_import(queued.id, parsed.document, parsed.counts, parsed.source_format, "w2")
        assert done.recorded and (done.scenario_id, done.version) == (queued.scenario_id, 1)
        again = store.finish_import(queued.id, parsed.document, parsed.counts, parsed.source_format, "w2")
        assert not again.recorded
        with store.session() as s:
            assert s.scalar(select(func.count()).select_from(Scenario)) == 1
        assert [v.version for v in store.list_versions(queued.scenario_id)] == [1]
        job = store.get_job(queued.id)
        assert (job.status, job.scenario_version, job.attempts) == ("succeeded", 1, 2)
        assert inputs_left(store) == 0
        # a cancelled import keeps nothing: no upload, no scenario
        other = store.create_import_job(data, "again.json", who)
        store.cancel_job(other.id, who)
        assert inputs_left(store) == 0
        assert not store.finish_import(other.id, parsed.document, parsed.counts, parsed.source_format).recorded
        assert len(store.list_scenarios()) == 1
        # a version whose If-Match goes stale while the job waits fails with 409 and writes nothing
        sid = queued.scenario_id
        stale = store.create_import_job(data, None, who, scenario_id=sid, expected_version=1)
        store.update_scenario(sid, parsed.document, parsed.counts, "canonical-json", who, None)
        assert _claim(store, "w3").id == stale.id
        conflict = store.finish_import(stale.id, parsed.document, parsed.counts, parsed.source_format, "w3")
        assert not conflict.recorded and "is at version 2, not 1 (If-Match is stale)" in str(conflict.conflict)
        assert [v.version for v in store.list_versions(sid)] == [1, 2]
    finally:
        store.dispose()


def test_quotas_and_queue_limits_hold_for_imports(db_url: str, triangle: Network) -> None:
    store = Store(db_url)
    store.upgrade()
    try:
        team = store.create_team("blue")
        who = Principal("tok", "alice", "planner", team.id)
        data = json.dumps(network_to_dict(triangle)).encode()
        store.create_import_job(data, None, who, max_queued_per_owner=1)
        with pytest.raises(Exception, match="already has 1 queued jobs"):
            store.create_import_job(data, None, who, max_queued_per_owner=1)
        job = _claim(store, "w")
        store.finish_job(job.id, "failed", "x")
        store.record_usage(job.id, cpu_s=10.0)
        with pytest.raises(QuotaExceededError):
            store.create_import_job(data, None, who, quotas=JobQuotas(cpu_s=5.0))
        assert inputs_left(store) == 0  # nothing stored for the refused ones
    finally:
        store.dispose()
