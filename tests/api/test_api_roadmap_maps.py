"""``GET /v1/jobs/{id}/periods/{period}/map``: a roadmap job's period drawn from the scenario folder the roadmap
wrote (``periods/<period>/scenario/``), scoped to the job's team, with clear problems for a missing period, a bad
label, a job of another kind and a job that has not succeeded."""

from __future__ import annotations

import json
from pathlib import Path

from apitest_helpers import auth
from fastapi.testclient import TestClient

from backbone.api.store import Principal, Store
from backbone.io import network_to_dict, save_scenario
from backbone.validate import build_network

BASE = {
    "sites": [{"id": "A", "name": "New York", "lon": -74.0, "lat": 40.7, "region": "NA", "gpus_max": 4096},
              {"id": "B", "name": "Boston", "lon": -71.1, "lat": 42.4, "region": "NA"}],
    "links": [{"id": "L1", "site_a": "A", "site_b": "B", "capacity_gbps": 100}],
    "candidates": [{"id": "C1", "site_a": "A", "site_b": "B", "kind": "terrestrial", "link_kind": "terrestrial",
                    "waypoints": "-73 41.8", "module_gbps": 100, "module_cost_usd": 2e6, "max_modules": 2,
                    "lead_time_quarters": 2}],
}
"""The scenario the roadmap ran on: one link, candidate route C1 along a waypoint, no GPUs."""


def _period(c1_built: bool, gpus: int) -> dict[str, object]:
    """A period's backbone as a roadmap writes it: C1 a link with its candidate's id and route once built, the GPUs
    installed by then."""
    doc = json.loads(json.dumps(BASE))
    doc["sites"][0]["gpus_installed"] = gpus
    if c1_built:
        doc["candidates"] = []
        doc["links"].append({"id": "C1", "site_a": "A", "site_b": "B", "kind": "terrestrial", "waypoints": "-73 41.8",
                             "capacity_gbps": 100})
    return doc


def _roadmap_job(client: TestClient, token: str, tmp_path: Path, kind: str = "roadmap",
                 status: str = "succeeded") -> str:
    """A finished job of the planner's team whose stored result holds two periods' scenario folders (what the
    roadmap task writes; the roadmap itself is tested in test_api_roadmap.py and tests/solver)."""
    store: Store = client.app.state.store  # type: ignore[attr-defined]
    created = client.post("/v1/scenarios", json=network_to_dict(build_network(BASE, name="toy")), headers=auth(token))
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    who = store.authenticate(token)
    assert isinstance(who, Principal)
    job = store.create_job(sid, 1, kind, {}, who)
    assert store.claim_next_job() is not None
    staging = tmp_path / f"result-{job.id}"
    files = []
    for period, built, gpus in (("2027Q1", False, 0), ("2027Q2", True, 1024)):
        folder = save_scenario(build_network(_period(built, gpus), name="toy"), staging / "periods" / period / "scenario")
        files += [f"periods/{period}/scenario/{f.name}" for f in sorted(folder.iterdir())]
    client.app.state.results.store(job.id, staging)  # type: ignore[attr-defined]
    store.finish_job(job.id, status, "done", files=files)
    return job.id


def test_period_map_draws_what_is_built_by_then(client: TestClient, tokens: dict[str, str], tmp_path: Path) -> None:
    token = tokens["planner"]
    jid = _roadmap_job(client, token, tmp_path)
    before = client.get(f"/v1/jobs/{jid}/periods/2027Q1/map", headers=auth(token))
    assert before.status_code == 200, before.text
    assert before.headers["content-type"].startswith("application/geo+json")
    after = client.get(f"/v1/jobs/{jid}/periods/2027Q2/map?format=geojson", headers=auth(tokens["viewer"]))
    assert after.status_code == 200, after.text

    def by_type(response: object) -> dict[str, dict[str, dict[str, object]]]:
        out: dict[str, dict[str, dict[str, object]]] = {}
        for f in response.json()["features"]:  # type: ignore[attr-defined]
            out.setdefault(f["properties"]["feature_type"], {})[f["properties"]["id"]] = f
        return out

    q1, q2 = by_type(before), by_type(after)
    assert set(q1["link"]) == {"L1"} and set(q1["candidate"]) == {"C1"}
    assert q1["site"]["A"]["properties"]["gpus_installed"] == 0
    # in 2027Q2 the route is a link with the candidate's id, along the candidate's waypoint; A has its GPUs
    assert set(q2["link"]) == {"L1", "C1"} and "candidate" not in q2
    assert q2["site"]["A"]["properties"]["gpus_installed"] == 1024
    route = q2["link"]["C1"]["geometry"]["coordinates"]
    assert any(abs(lon + 73) < 0.5 and abs(lat - 41.8) < 0.5 for lon, lat in route), route
    assert "roadmap-" in after.headers["content-disposition"]


def test_period_map_problems(client: TestClient, tokens: dict[str, str], tmp_path: Path) -> None:
    token = tokens["planner"]
    jid = _roadmap_job(client, token, tmp_path)
    missing = client.get(f"/v1/jobs/{jid}/periods/2031Q4/map", headers=auth(token))
    assert missing.status_code == 404 and "2027Q1, 2027Q2" in missing.json()["detail"], missing.text
    bad = client.get(f"/v1/jobs/{jid}/periods/..%2Fsecret/map", headers=auth(token))
    assert bad.status_code in (404, 422), bad.text
    label = client.get(f"/v1/jobs/{jid}/periods/2027Q9/map", headers=auth(token))
    assert label.status_code == 422 and label.headers["content-type"].startswith("application/problem+json")
    assert client.get(f"/v1/jobs/{jid}/periods/2027Q1/map", headers={}).status_code == 401
    te = _roadmap_job(client, token, tmp_path, kind="te")
    wrong = client.get(f"/v1/jobs/{te}/periods/2027Q1/map", headers=auth(token))
    assert wrong.status_code == 404 and "only a roadmap job has periods" in wrong.text
    failed = _roadmap_job(client, token, tmp_path, status="failed")
    assert client.get(f"/v1/jobs/{failed}/periods/2027Q1/map", headers=auth(token)).status_code == 409


def test_period_map_is_scoped_to_the_team_and_in_openapi(client: TestClient, tokens: dict[str, str],
                                                         tmp_path: Path) -> None:
    store: Store = client.app.state.store  # type: ignore[attr-defined]
    team = store.create_team("red")
    other = store.create_token("admin", "red-admin", team=team.id)[1]
    red_planner = store.create_token("planner", "red-planner", team=team.id)[1]
    jid = _roadmap_job(client, red_planner, tmp_path)
    assert client.get(f"/v1/jobs/{jid}/periods/2027Q1/map", headers=auth(red_planner)).status_code == 200
    assert client.get(f"/v1/jobs/{jid}/periods/2027Q1/map", headers=auth(tokens["planner"])).status_code == 404
    assert other  # an admin reaches every team
    assert client.get(f"/v1/jobs/{jid}/periods/2027Q1/map", headers=auth(other)).status_code == 200
    spec = client.get("/openapi.json").json()
    op = spec["paths"]["/v1/jobs/{job_id}/periods/{period}/map"]["get"]
    params = {p["name"]: p for p in op["parameters"]}
    assert params["period"]["schema"]["pattern"] == r"^[0-9]{4}(Q[1-4])?$"
    assert set(params["format"]["schema"]["enum"]) >= {"geojson", "png", "svg"}
    assert {"404", "409", "422"} <= set(op["responses"])
