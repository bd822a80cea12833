"""``POST /v1/scenarios/{id}/validate``: the dry run the workspace's editor calls as the planner types. It answers
what ``PUT`` would (the same 422 problem, naming table, record and field) and stores nothing."""

from __future__ import annotations

from apitest_helpers import auth
from fastapi.testclient import TestClient

from backbone.io import network_to_dict
from backbone.model import Network


def test_validate_answers_counts_and_stores_nothing(client: TestClient, tokens: dict[str, str],
                                                     triangle: Network) -> None:
    doc = network_to_dict(triangle)
    created = client.post("/v1/scenarios", json=doc, headers=auth(tokens["planner"]))
    sid, etag = created.json()["id"], created.headers["etag"]
    ceiling = doc["links"][0]["max_capacity_gbps"]  # stored explicitly (derived: 4 x the capacity)
    doc["links"][0]["capacity_gbps"] = ceiling + 1.0  # above the link's ceiling: refused, naming the capacity
    over = client.post(f"/v1/scenarios/{sid}/validate", json=doc, headers=auth(tokens["planner"]))
    assert over.status_code == 422, over.text
    assert [(e["record"], e["field"]) for e in over.json()["errors"]] == [(doc["links"][0]["id"], "capacity_gbps")]
    assert f"above the link's max_capacity_gbps {ceiling:g} Gbps" in over.json()["errors"][0]["message"]
    doc["links"][0]["capacity_gbps"] = 1234.0
    doc["links"][0]["max_capacity_gbps"] = 4000.0  # the ceiling raised with it: valid
    r = client.post(f"/v1/scenarios/{sid}/validate", json=doc, headers=auth(tokens["planner"]))
    assert r.status_code == 200, r.text
    assert r.json() == {"valid": True, "sites": len(triangle.sites), "links": len(triangle.links),
                        "demands": len(triangle.demands), "source_format": "canonical-json"}
    versions = client.get(f"/v1/scenarios/{sid}/versions", headers=auth(tokens["planner"])).json()
    assert [v["version"] for v in versions] == [1] and versions[0]["etag"] == etag
    head = client.get(f"/v1/scenarios/{sid}", headers=auth(tokens["planner"])).json()
    assert head["content"]["links"][0]["capacity_gbps"] != 1234.0


def test_validate_gives_the_same_problem_as_put(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    doc = network_to_dict(triangle)
    sid = client.post("/v1/scenarios", json=doc, headers=auth(tokens["planner"])).json()["id"]
    link = doc["links"][1]
    link["capacity_gbps"] = -5
    dry = client.post(f"/v1/scenarios/{sid}/validate", json=doc, headers=auth(tokens["viewer"]))
    put = client.put(f"/v1/scenarios/{sid}", json=doc, headers=auth(tokens["planner"]))
    assert dry.status_code == put.status_code == 422
    assert dry.headers["content-type"].startswith("application/problem+json")
    assert dry.json()["errors"] == put.json()["errors"]
    assert any(e["table"] == "links" and e["record"] == link["id"] and e["field"] == "capacity_gbps"
               for e in dry.json()["errors"]), dry.json()


def test_validate_needs_a_visible_scenario_and_a_token(client: TestClient, tokens: dict[str, str],
                                                       triangle: Network) -> None:
    doc = network_to_dict(triangle)
    missing = "00000000-0000-4000-8000-000000000000"
    assert client.post(f"/v1/scenarios/{missing}/validate", json=doc, headers=auth(tokens["planner"])).status_code == 404
    sid = client.post("/v1/scenarios", json=doc, headers=auth(tokens["planner"])).json()["id"]
    assert client.post(f"/v1/scenarios/{sid}/validate", json=doc).status_code == 401
    op = client.get("/openapi.json").json()["paths"]["/v1/scenarios/{scenario_id}/validate"]["post"]
    assert op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/ScenarioValidation")
    assert "422" in op["responses"] and "multipart/form-data" in op["requestBody"]["content"]


def test_a_versions_content_validates_as_it_was_read(client: TestClient, tokens: dict[str, str]) -> None:
    """The editor sends back what GET gave it, changed: unchanged, that content is a valid candidate."""
    doc = {"name": "round trip",
           "sites": [{"id": "nyc", "lon": -74.0, "lat": 40.7, "region": "NA", "kind": "datacenter", "gpus_installed": 4000},
                     {"id": "lon", "lon": -0.1, "lat": 51.5, "region": "EMEA"}],
           "links": [{"id": "nyc-lon", "site_a": "nyc", "site_b": "lon", "capacity_gbps": 1600, "kind": "submarine"}],
           "demands": [{"id": "d1", "src": "nyc", "dst": "lon", "demand_gbps": 300}]}
    sid = client.post("/v1/scenarios", json=doc, headers=auth(tokens["planner"])).json()["id"]
    content = client.get(f"/v1/scenarios/{sid}", headers=auth(tokens["planner"])).json()["content"]
    r = client.post(f"/v1/scenarios/{sid}/validate", json=content, headers=auth(tokens["planner"]))
    assert r.status_code == 200, r.text
