"""Authentication, scopes, token management, the audit log and metrics."""

from __future__ import annotations

import uuid

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient

from backbone.api.store import hash_token
from backbone.io import network_to_dict
from backbone.model import Network

PROBLEM = "application/problem+json"


@pytest.mark.slow
def test_health_needs_no_token(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json()["status"] == "ok"


@pytest.mark.slow
def test_every_other_endpoint_needs_a_token(client: TestClient) -> None:
    # every operation is tried with a wrong token: more than the failed-login rate limit allows in a minute,
    # which is tested on its own (test_api_bounds.py); here the answer must be 401 for each
    client.app.state.auth_limiter.per_minute = 10_000  # type: ignore[attr-defined]
    spec = client.get("/openapi.json").json()
    fake = str(uuid.uuid4())
    for path, ops in spec["paths"].items():
        if path in ("/healthz", "/v1/auth/config"):  # how to sign in is asked before signing in
            continue
        url = path.replace("{scenario_id}", fake).replace("{job_id}", fake).replace("{token_id}", fake) \
                  .replace("{name}", "x.csv")
        for method in ops:
            for headers in ({}, {"Authorization": "Bearer bbk_not-a-real-token"}, {"Authorization": "Basic YTpi"}):
                r = client.request(method.upper(), url, headers=headers)
                assert r.status_code == 401, (method, path, headers, r.status_code)
                assert r.headers["content-type"].startswith(PROBLEM)
                assert r.headers.get("www-authenticate") == "Bearer"


def test_viewer_reads_but_cannot_mutate(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    doc = network_to_dict(triangle)
    viewer, planner = tokens["viewer"], tokens["planner"]
    r = client.post("/v1/scenarios", json=doc, headers=auth(viewer))
    assert r.status_code == 403 and "planner" in r.json()["detail"]
    sid = client.post("/v1/scenarios", json=doc, headers=auth(planner)).json()["id"]
    assert client.get(f"/v1/scenarios/{sid}", headers=auth(viewer)).status_code == 200
    assert client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(viewer)).status_code == 403
    assert client.delete(f"/v1/scenarios/{sid}", headers=auth(viewer)).status_code == 403
    assert client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "sleepy"}, headers=auth(viewer)).status_code == 403
    assert client.delete(f"/v1/jobs/{uuid.uuid4()}", headers=auth(viewer)).status_code == 403
    # admin-only
    for tok in (viewer, planner):
        assert client.get("/v1/audit", headers=auth(tok)).status_code == 403
        assert client.get("/v1/tokens", headers=auth(tok)).status_code == 403
        assert client.post("/v1/tokens", json={"scope": "admin"}, headers=auth(tok)).status_code == 403
    # nothing changed: one version, no jobs
    assert len(client.get(f"/v1/scenarios/{sid}/versions", headers=auth(viewer)).json()) == 1
    assert client.get("/v1/jobs", headers=auth(viewer)).json() == []


def test_tokens_are_hashed_and_revocable(client: TestClient, tokens: dict[str, str]) -> None:
    admin = tokens["admin"]
    r = client.post("/v1/tokens", json={"scope": "viewer", "name": "dashboards"}, headers=auth(admin))
    assert r.status_code == 201
    made = r.json()
    plain = made["token"]
    assert plain.startswith("bbk_") and len(plain) >= 40
    assert client.get("/v1/scenarios", headers=auth(plain)).status_code == 200
    listed = client.get("/v1/tokens", headers=auth(admin)).json()
    assert "token" not in listed[0] and "token_hash" not in listed[0]
    assert {t["name"] for t in listed} >= {"dashboards", "test-admin"}
    # the database holds only the sha256
    store = client.app.state.store  # type: ignore[attr-defined]
    rows = {t.id: t for t in store.list_tokens()}
    assert rows[made["id"]].token_hash == hash_token(plain)
    assert plain not in {t.token_hash for t in rows.values()}
    assert client.delete(f"/v1/tokens/{made['id']}", headers=auth(admin)).json()["revoked_at"]
    assert client.get("/v1/scenarios", headers=auth(plain)).status_code == 401
    assert client.delete(f"/v1/tokens/{uuid.uuid4()}", headers=auth(admin)).status_code == 404
    assert client.post("/v1/tokens", json={"scope": "root"}, headers=auth(admin)).status_code == 422


def test_audit_log_records_who_changed_what(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    planner, admin = tokens["planner"], tokens["admin"]
    doc = network_to_dict(triangle)
    sid = client.post("/v1/scenarios", json=doc, headers=auth(planner)).json()["id"]
    client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(planner))
    client.delete(f"/v1/scenarios/{sid}", headers=auth(planner))
    entries = client.get("/v1/audit", headers=auth(admin)).json()
    mine = [(e["action"], e["token_name"], e["detail"].get("version")) for e in entries if e["target_id"] == sid]
    assert mine == [("scenario.delete", "test-planner", 2), ("scenario.update", "test-planner", 2),
                    ("scenario.create", "test-planner", 1)]
    assert all(e["at"] for e in entries)
    only = client.get("/v1/audit?action=scenario.create", headers=auth(admin)).json()
    assert [e["action"] for e in only] == ["scenario.create"]


def test_metrics(client: TestClient, tokens: dict[str, str]) -> None:
    assert client.get("/metrics").status_code == 401
    for _ in range(3):
        client.get("/v1/scenarios", headers=auth(tokens["viewer"]))
    text = client.get("/metrics", headers=auth(tokens["viewer"])).text
    assert 'backbone_http_requests_total{method="GET",route="/v1/scenarios",status="200"} 3' in text
    assert 'backbone_http_request_duration_seconds_count{method="GET",route="/v1/scenarios"} 3' in text
    assert 'backbone_jobs{status="queued"} 0' in text
    assert "# TYPE backbone_http_request_duration_seconds histogram" in text
