"""The candidates table through the REST API: accepted, validated (422 naming file, record and field),
returned canonical (derived length/latency), drawn on maps; the CLI's info/convert/export count and keep them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from apitest_helpers import auth
from fastapi.testclient import TestClient

PROBLEM = "application/problem+json"


def doc_with_candidates() -> dict[str, Any]:
    return {
        "name": "cands",
        "sites": [{"id": "NY", "lon": -74.0, "lat": 40.7, "region": "NA"},
                  {"id": "WDC", "lon": -77.0, "lat": 38.9, "region": "NA"},
                  {"id": "LON", "lon": -0.1, "lat": 51.5, "region": "EMEA"},
                  {"id": "PAR", "lon": 2.35, "lat": 48.86, "region": "EMEA"}],
        "links": [{"id": "ny-wdc", "site_a": "NY", "site_b": "WDC", "capacity_gbps": 1000},
                  {"id": "lon-par", "site_a": "LON", "site_b": "PAR", "capacity_gbps": 1000},
                  {"id": "tat-1", "site_a": "NY", "site_b": "LON", "kind": "submarine", "cable_system": "TAT",
                   "capacity_gbps": 400, "waypoints": "-50 45; -20 50"}],
        "srlgs": [{"id": "atlantic", "kind": "corridor", "links": ["tat-1"]}],
        "demands": [{"id": "d1", "src": "WDC", "dst": "PAR", "demand_gbps": 100}],
        "candidates": [
            {"id": "c-south", "name": "Southern cable", "site_a": "WDC", "site_b": "PAR", "kind": "cable",
             "link_kind": "submarine", "cable_system": "Nova", "waypoints": "-60 38; -10 46", "module_gbps": 20000,
             "module_cost_usd": 3e7, "fixed_cost_usd": 1.5e8, "max_modules": 2, "lead_time_quarters": 8,
             "available_from": "2027Q3", "srlgs": ["atlantic"], "source": "estimate"},
            {"id": "c-tat-waves", "site_a": "NY", "site_b": "LON", "kind": "spectrum", "link_kind": "submarine",
             "cable_system": "TAT", "waypoints": "-50 45; -20 50", "module_gbps": 1600, "module_cost_usd": 2e6,
             "max_modules": 8, "lead_time_quarters": 1, "srlgs": ["atlantic"]},
        ],
    }


def test_candidates_round_trip_through_the_api(client: TestClient, tokens: dict[str, str]) -> None:
    r = client.post("/v1/scenarios", json=doc_with_candidates(), headers=auth(tokens["planner"]))
    assert r.status_code == 201, r.text
    made = r.json()
    body = client.get(f"/v1/scenarios/{made['id']}", headers=auth(tokens["viewer"])).json()
    cands = {c["id"]: c for c in body["content"]["candidates"]}
    assert set(cands) == {"c-south", "c-tat-waves"}
    assert cands["c-south"]["srlgs"] == ["atlantic"] and cands["c-south"]["available_from"] == "2027Q3"
    assert cands["c-south"]["max_modules"] == 2 and cands["c-south"]["fixed_cost_usd"] == 1.5e8
    assert cands["c-south"]["length_km"] > 5000 and cands["c-south"]["latency_ms"] > 25  # derived like links
    links = {lk["id"]: lk for lk in body["content"]["links"]}
    assert cands["c-tat-waves"]["latency_ms"] == links["tat-1"]["latency_ms"]  # same route, same latency function
    again = client.post("/v1/scenarios", json=body["content"], headers=auth(tokens["planner"])).json()
    assert again["etag"].split("-")[1] == made["etag"].split("-")[1]  # the returned content is canonical


def test_bad_candidates_are_422_naming_record_and_field(client: TestClient, tokens: dict[str, str]) -> None:
    doc = doc_with_candidates()
    doc["candidates"][0]["srlgs"] = ["atlantic", "pacific"]
    doc["candidates"][1]["id"] = "tat-1"
    doc["candidates"][1]["max_modules"] = 0
    r = client.post("/v1/scenarios", json=doc, headers=auth(tokens["planner"]))
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    got = {(e["file"], e["table"], e["record"], e["field"]) for e in r.json()["errors"]}
    assert got == {("request body", "candidates", "c-south", "srlgs"), ("request body", "candidates", "tat-1", "id"),
                   ("request body", "candidates", "tat-1", "max_modules")}
    assert len(client.get("/v1/scenarios", headers=auth(tokens["viewer"])).json()) == 0


@pytest.mark.slow
def test_scenario_map_draws_candidates(client: TestClient, tokens: dict[str, str]) -> None:
    made = client.post("/v1/scenarios", json=doc_with_candidates(), headers=auth(tokens["planner"])).json()
    r = client.get(f"/v1/scenarios/{made['id']}/map", params={"format": "geojson"}, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.text
    kinds = [f["properties"]["feature_type"] for f in r.json()["features"]]
    assert kinds.count("candidate") == 2
    r = client.get(f"/v1/scenarios/{made['id']}/map", params={"format": "geojson", "candidates": "false"},
                   headers=auth(tokens["viewer"]))
    assert [f for f in r.json()["features"] if f["properties"]["feature_type"] == "candidate"] == []


def test_openapi_documents_the_candidates_table(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    body = spec["paths"]["/v1/scenarios"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "candidates" in body["properties"]
    assert "candidates" in body["description"]
    params = {p["name"] for p in spec["paths"]["/v1/scenarios/{scenario_id}/map"]["get"]["parameters"]}
    assert "candidates" in params


@pytest.mark.slow
def test_cli_info_convert_and_export_keep_candidates(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import load_scenario, network_from_dict

    src = tmp_path / "cands.json"
    src.write_text(json.dumps(doc_with_candidates()))
    runner = CliRunner()
    info = runner.invoke(app, ["info", str(src), "--json"])
    assert info.exit_code == 0, info.output
    assert json.loads(info.stdout)["candidates"] == 2
    assert json.loads(info.stdout)["candidates_by_kind"] == {"cable": 1, "spectrum": 1}
    for out in (tmp_path / "folder", tmp_path / "doc.json"):
        r = runner.invoke(app, ["convert", str(src), "--out", str(out), "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["candidates"] == 2
        assert load_scenario(out).equals(network_from_dict(doc_with_candidates()))
    assert (tmp_path / "folder" / "candidates.csv").exists()
    r = runner.invoke(app, ["export", str(tmp_path / "folder"), "--out", str(tmp_path / "x.geojson"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["candidates"] == 2
    features = json.loads((tmp_path / "x.geojson").read_text())["features"]
    assert sum(f["properties"]["feature_type"] == "candidate" for f in features) == 2
    v = runner.invoke(app, ["validate", str(tmp_path / "folder"), "--json"])
    assert v.exit_code == 0 and json.loads(v.stdout)["candidates"] == 2
