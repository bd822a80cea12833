"""Real planning tasks through the API (TestClient): TE on the triangle, placement, maps.

Results are checked against known optima and recomputed independently from the result files.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd
import pytest
from apitest_helpers import FINAL, auth, wait_for
from apitest_nets import BLOCK_GPUS, PLACEMENT_GPUS, placement_doc
from fastapi.testclient import TestClient

from backbone.io import network_to_dict
from backbone.model import Network


def _run(client: TestClient, tok: str, sid: str, kind: str, options: dict[str, Any]) -> dict[str, Any]:
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": kind, "options": options}, headers=auth(tok))
    assert r.status_code == 202, r.text
    jid = r.json()["id"]
    job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                   lambda j: j["status"] in FINAL, timeout_s=120)
    assert job["status"] == "succeeded", job
    return job


@pytest.mark.slow
def test_te_on_triangle(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
    job = _run(client, tok, sid, "te", {"objective": "min-mlu", "time_limit_s": 30})
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()
    assert result["mlu"] == pytest.approx(0.75, abs=1e-6)
    assert result["carried_gbps"] == pytest.approx(15.0)
    assert {"te_links.csv", "te_paths.csv", "te.json", "corridors.csv"} <= set(job["files"])
    # the corridor table, served as a file and in the result: the triangle is one region, 15 Gbps over 2 + 1 hops
    corridors = pd.read_csv(io.StringIO(client.get(f"/v1/jobs/{job['id']}/files/corridors.csv",
                                                   headers=auth(tok)).text))
    row = corridors[(corridors["view"] == "region") & (corridors["traffic_class"] == "all")].iloc[0]
    assert row["corridor"] == "intra-NA" and row["gbps"] == pytest.approx(2 * 7.5 + 7.5)
    assert result["corridors"][0]["corridor"] == "intra-NA"
    # independent residual check from the path flows the API serves
    paths = pd.read_csv(io.StringIO(client.get(f"/v1/jobs/{job['id']}/files/te_paths.csv", headers=auth(tok)).text))
    assert paths.groupby("demand")["gbps"].sum().to_dict() == pytest.approx({"d1": 15.0})
    load = {lk: 0.0 for lk in ("AB", "BC", "AC")}
    for links, gbps in zip(paths["path_links"], paths["gbps"], strict=True):
        for lk in str(links).split(";"):
            load[lk] += gbps
    assert max(v / 10.0 for v in load.values()) == pytest.approx(0.75, abs=1e-6)
    # the TE map: geojson carries the result's utilisation
    r = client.get(f"/v1/scenarios/{sid}/map?format=geojson&job={job['id']}", headers=auth(tok))
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/geo+json")
    feats = json.loads(r.content)["features"]
    util = [f["properties"].get("utilisation") for f in feats if f["properties"].get("utilisation") is not None]
    assert util and max(util) == pytest.approx(0.75, abs=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["colgen", "pop"])
def test_te_scalable_methods_in_a_worker(client: TestClient, tokens: dict[str, str], triangle: Network,
                                         method: str) -> None:
    """Column generation and POP run inside the API's worker process (POP serially when daemonic)."""
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tok)).json()["id"]
    job = _run(client, tok, sid, "te", {"objective": "min-mlu", "method": method, "pop_parts": 2,
                                        "time_limit_s": 60, "verify": True})
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()
    assert result["method"] == method and result["verification"]["ok"] is True
    assert result["lower_bound"] <= result["mlu"] + 1e-9
    if method == "colgen":
        assert result["mlu"] == pytest.approx(0.75, abs=1e-6)
    bad = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "te", "options": {"method": "ncflow"}},
                      headers=auth(tok))
    assert bad.status_code == 422


@pytest.mark.slow
def test_placement_flow(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=placement_doc(), headers=auth(tok)).json()["id"]
    job = _run(client, tok, sid, "place", {})
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()
    assignments = result["map"]["assignments"]
    assert sum(a["gpus"] for a in assignments) == pytest.approx(PLACEMENT_GPUS)
    added = result["map"]["site_values"]["gpus_added"]
    for site, gpus in added.items():
        assert gpus % BLOCK_GPUS == 0
        assert gpus >= sum(a["gpus"] for a in assignments if a["site"] == site) - 1e-6
    png = client.get(f"/v1/scenarios/{sid}/map?format=png&size=640x360&job={job['id']}", headers=auth(tok))
    assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_partial_placement_keeps_result_and_files(client: TestClient, tokens: dict[str, str]) -> None:
    """A metro no site can serve within its SLO: the job succeeds, says "partial", keeps every file."""
    tok = tokens["planner"]
    doc = placement_doc()
    doc["sites"].append({"id": "SYD", "name": "SYD", "lon": 151.2, "lat": -33.9, "region": "APAC",
                         "metro": "syd", "kind": "pop"})
    doc["links"].append({"id": "ny-syd", "site_a": "NY", "site_b": "SYD", "capacity_gbps": 1000})
    doc["metros"].append({"id": "syd", "name": "Sydney", "lon": 151.2, "lat": -33.9, "region": "APAC",
                          "country": "AU", "site": "SYD", "inference_gpus": 500, "interactive_share": 1.0})
    sid = client.post("/v1/scenarios", json=doc, headers=auth(tok)).json()["id"]
    job = _run(client, tok, sid, "place", {})
    assert job["progress"]["message"] == "partial: unserved metros: syd"
    assert "place.json" in job["files"] and "place_metros.csv" in job["files"]
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=auth(tok)).json()
    assert result["status"] == "partial"
    assert [u["metro"] for u in result["unserved_metros"]] == ["syd"]
    assert any("syd" in r for r in result["infeasibility"])
    assert sum(a["gpus"] for a in result["map"]["assignments"]) == pytest.approx(PLACEMENT_GPUS)


@pytest.mark.slow
def test_map_errors(client: TestClient, tokens: dict[str, str], triangle: Network) -> None:
    tok = tokens["viewer"]
    sid = client.post("/v1/scenarios", json=network_to_dict(triangle), headers=auth(tokens["planner"])).json()["id"]
    assert client.get(f"/v1/scenarios/{sid}/map?format=bmp", headers=auth(tok)).status_code == 422
    assert client.get(f"/v1/scenarios/{sid}/map?size=9999x9999", headers=auth(tok)).status_code == 422
    r = client.get(f"/v1/scenarios/{sid}/map?format=kml&color_by=nonsense", headers=auth(tok))
    assert r.status_code == 422 and r.json()["errors"]
    svg = client.get(f"/v1/scenarios/{sid}/map?format=svg&size=640x360", headers=auth(tok))
    assert svg.status_code == 200 and b"<svg" in svg.content[:2000]


@pytest.mark.slow
@pytest.mark.sqlite_only  # its time is the job's computing (pyproject's markers)
def test_failures_design_and_plan_jobs(client: TestClient, tokens: dict[str, str]) -> None:
    """The other planning kinds through the API: same summaries and files as the CLI writes."""
    from tests.nets import small_world_network

    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(small_world_network()), headers=auth(tok)).json()["id"]
    failures = _run(client, tok, sid, "failures", {"kind": "srlg"})  # the default engine: a pool in the worker
    res = client.get(f"/v1/jobs/{failures['id']}/result", headers=auth(tok)).json()
    assert res["scenarios_run"] == 12 and res["worst"][0]["scenario"] == "srlg:atlantic"  # 7 SRLGs, 5 links in none
    assert {"failures_scenarios.csv", "failures_links.csv", "failures.json"} <= set(failures["files"])

    design = _run(client, tok, sid, "design", {"survive": "link", "utilisation_ceiling": 0.8, "time_limit_s": 30})
    res = client.get(f"/v1/jobs/{design['id']}/result", headers=auth(tok)).json()
    assert res["status"] in ("optimal", "feasible") and res["cost_usd"] is not None

    plan = _run(client, tok, sid, "plan", {"design": {"time_limit_s": 20}})
    res = client.get(f"/v1/jobs/{plan['id']}/result", headers=auth(tok)).json()
    assert res["failure_scenarios"] == 12 and res["gpus_added"] > 0  # 7 SRLGs and 5 links in none
    assert {"report.html", "map_world.png", "map.html", "plan.json", "corridors.csv"} <= set(plan["files"])
    page = client.get(f"/v1/jobs/{plan['id']}/files/report.html", headers=auth(tok))
    assert page.status_code == 200 and "Where the GPUs go" in page.text
