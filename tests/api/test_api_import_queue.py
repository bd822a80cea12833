"""Scenario imports as jobs under a server in queue mode: a separate ``backbone worker`` process claims the
``import`` jobs the server queued, creates the scenario of a valid upload and fails an invalid one with the
synchronous path's problems; the server itself parses nothing. SQLite and (slow lane) PostgreSQL."""

from __future__ import annotations

import json

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient
from test_api_import_jobs import ASYNC, finished, inputs_left
from test_api_queue_worker import Workers, settings, workers  # noqa: F401 (fixtures: queue mode, worker processes)

from backbone.io import network_to_dict
from backbone.model import Network


@pytest.mark.slow
def test_a_worker_process_runs_the_imports_the_server_queued(client: TestClient, tokens: dict[str, str],
                                                             workers: Workers, triangle: Network) -> None:  # noqa: F811
    tok = tokens["planner"]
    good = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok, **ASYNC))
    doc = network_to_dict(triangle)
    doc["links"][0]["site_b"] = "NOWHERE"
    bad = client.post("/v1/scenarios", params={"async": "true"}, headers=auth(tok),
                      files={"file": ("broken.json", json.dumps(doc).encode())})
    assert good.status_code == bad.status_code == 202, (good.text, bad.text)
    assert client.get(f"/v1/jobs/{good.json()['id']}", headers=auth(tok)).json()["status"] == "queued"
    worker = workers.start()
    created = finished(client, tok, good.json()["id"])
    assert created["status"] == "succeeded", (created, workers.logs())
    held_by = client.app.state.store.get_job(created["id"]).worker_id  # type: ignore[attr-defined]
    assert held_by is not None and f":{worker.pid}:" in held_by  # the worker process ran it, not the server
    sid = created["scenario_id"]
    scenario = client.get(f"/v1/scenarios/{sid}", headers=auth(tok)).json()
    assert (scenario["version"], scenario["sites"]) == (1, len(triangle.sites))
    refused = finished(client, tok, bad.json()["id"])
    assert refused["status"] == "failed" and refused["error"]["status"] == 422, refused
    assert any(e["file"] == "broken.json" and e["field"] == "site_b" for e in refused["error"]["errors"])
    assert [s["id"] for s in client.get("/v1/scenarios", headers=auth(tok)).json()] == [sid]
    assert inputs_left(client.app.state.store) == 0  # type: ignore[attr-defined]
