"""Maps drawn as jobs (issue #31): ``GET /v1/scenarios/{id}/map`` with ``Prefer: respond-async`` or
``?async=true`` answers 202 with a ``map`` job whose one file, ``map.<format>``, is the map the synchronous call
draws (of the scenario, or of a succeeded job's result, read from the result store by whoever runs the job).
SQLite and (slow lane) PostgreSQL."""

from __future__ import annotations

import json

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient
from test_api_import_jobs import ASYNC, finished

from backbone.io import network_to_dict
from backbone.model import Network


def _drawn(client: TestClient, tok: str, sid: str, params: dict[str, str]) -> tuple[dict[str, object], bytes]:
    r = client.get(f"/v1/scenarios/{sid}/map", params=params, headers=auth(tok, **ASYNC))
    assert r.status_code == 202, r.text
    assert r.json()["kind"] == "map" and r.headers["Location"] == f"/v1/jobs/{r.json()['id']}"
    job = finished(client, tok, r.json()["id"])
    assert job["status"] == "succeeded", job
    name = f"map.{params['format']}"
    assert job["files"] == [name]
    got = client.get(f"/v1/jobs/{job['id']}/files/{name}", headers=auth(tok))
    assert got.status_code == 200, got.text
    return job, got.content


def test_a_map_job_draws_what_the_synchronous_call_draws(client: TestClient, tokens: dict[str, str],
                                                         triangle: Network) -> None:
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
    params = {"format": "geojson", "color_by": "kind"}
    job, drawn = _drawn(client, tok, sid, params)
    assert job["scenario_version"] == 1 and job["options"]["color_by"] == "kind"
    sync = client.get(f"/v1/scenarios/{sid}/map", params=params, headers=auth(tok))
    assert json.loads(drawn) == json.loads(sync.content)
    _job, png = _drawn(client, tok, sid, {"format": "png", "size": "320x180"})
    assert png.startswith(b"\x89PNG")
    # the synchronous checks hold before anything is queued; a viewer draws, but runs no job
    assert client.get(f"/v1/scenarios/{sid}/map", params={"size": "9999x9999"},
                      headers=auth(tok, **ASYNC)).status_code == 422
    assert client.get(f"/v1/scenarios/{sid}/map", params={"async": "true"},
                      headers=auth(tokens["viewer"])).status_code == 403
    assert client.get(f"/v1/scenarios/{sid}/map", params={"format": "geojson"},
                      headers=auth(tokens["viewer"])).status_code == 200


@pytest.mark.slow
def test_a_map_job_draws_a_jobs_result(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {"objective": "min-mlu"}},
                    headers=auth(tok))
    te = finished(client, tok, r.json()["id"], timeout_s=600)  # a solve: minutes on a loaded machine
    assert te["status"] == "succeeded", te
    params = {"format": "geojson", "job": te["id"]}
    _job, drawn = _drawn(client, tok, sid, params)
    sync = client.get(f"/v1/scenarios/{sid}/map", params=params, headers=auth(tok))
    assert json.loads(drawn) == json.loads(sync.content)
    util = [f["properties"]["utilisation"] for f in json.loads(drawn)["features"]
            if f["properties"].get("utilisation") is not None]
    assert util and max(util) == pytest.approx(0.75, abs=1e-3)
