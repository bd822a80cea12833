"""Scenarios with the workload tables (issue #29) through the API: uploads keep datasets, training jobs and site
storage; bad references are 422 naming table, record and field; the tables count against the demand cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from apitest_helpers import auth
from fastapi.testclient import TestClient

from backbone.api.documents import check_caps
from backbone.api.settings import Settings
from backbone.errors import ValidationError
from backbone.io import network_from_dict, network_to_dict
from tests.nets import workload_network


def test_json_upload_keeps_the_workload_tables(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    r = client.post("/v1/scenarios", json=network_to_dict(workload_network()), headers=auth(tok))
    assert r.status_code == 201, r.text
    content = client.get(f"/v1/scenarios/{r.json()['id']}", headers=auth(tok)).json()["content"]
    jobs = {j["id"]: j for j in content["training_jobs"]}
    assert jobs["frontier"]["sites"] == ["ash", "dfw"] and jobs["later"]["start"] == "2027Q3"
    assert {d["id"]: d["residency"] for d in content["datasets"]} == {"web": [], "eu-health": ["DE", "FR", "GB"]}
    assert {s["id"]: s["storage_pb"] for s in content["sites"]}["ash"] == 200
    assert network_from_dict(content).equals(workload_network())


def test_yaml_file_upload_keeps_the_workload_tables(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    payload = yaml.safe_dump(network_to_dict(workload_network())).encode()
    r = client.post("/v1/scenarios", files={"file": ("wl.yaml", payload)}, headers=auth(tok))
    assert r.status_code == 201, r.text
    content = client.get(f"/v1/scenarios/{r.json()['id']}", headers=auth(tok)).json()["content"]
    assert len(content["training_jobs"]) == 3 and len(content["datasets"]) == 2


@pytest.mark.parametrize(("table", "record", "field", "value", "words"), [
    ("training_jobs", "tune", "datasets", ["nope"], "unknown dataset 'nope'"),
    ("training_jobs", "frontier", "max_sites", 1, "2 sites pinned but max_sites is 1"),
    ("datasets", "eu-health", "residency", ["DE", "QQ"], "unknown code 'QQ'"),
    ("training_jobs", "later", "end", "2026Q1", "ends (2026Q1) before it starts (2027Q3)"),
])
def test_a_bad_workload_record_is_422_naming_it(client: TestClient, tokens: dict[str, str], table: str, record: str,
                                               field: str, value: object, words: str) -> None:
    doc = json.loads(json.dumps(network_to_dict(workload_network())))
    next(r for r in doc[table] if r["id"] == record)[field] = value
    r = client.post("/v1/scenarios", json=doc, headers=auth(tokens["planner"]))
    assert r.status_code == 422, r.text
    errors = r.json()["errors"]
    assert any(e["table"] == table and e["record"] == record and words in e["message"] for e in errors), errors


def test_a_workload_table_that_is_not_a_list_is_422(client: TestClient, tokens: dict[str, str]) -> None:
    doc = network_to_dict(workload_network())
    doc["training_jobs"] = {"frontier": {}}
    r = client.post("/v1/scenarios", json=doc, headers=auth(tokens["planner"]))
    assert r.status_code == 422 and r.json()["errors"][0]["table"] == "training_jobs"


def test_datasets_and_training_jobs_count_against_the_demand_cap(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, max_demands=2)
    with pytest.raises(ValidationError) as info:
        check_caps(workload_network(), settings, "wl.json")
    problems = [(p.table, p.message) for p in info.value.problems]
    assert problems == [("training_jobs", "3 training_jobs exceed this server's limit of 2 (BACKBONE_MAX_DEMANDS)")]
    check_caps(workload_network(), Settings(data_dir=tmp_path, max_demands=3), "wl.json")


@pytest.mark.slow
def test_a_place_job_places_the_scenarios_training_with_data_gravity(client: TestClient,
                                                                     tokens: dict[str, str]) -> None:
    """The API's place job places the scenario's training jobs by default (``scenario_jobs``): the job goes where
    its dataset's residency allows, and the result carries the training table (with ``checkpoint_policy_met``), the
    workload flows' Gbps by class and the flows file."""
    from apitest_helpers import FINAL, wait_for

    from tests.solver.test_placement_gravity import residency_net

    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(residency_net("")), headers=auth(tok)).json()["id"]
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "place", "options": {
        "block_gpus": 1, "verify": True}}, headers=auth(tok))
    assert r.status_code == 202, r.text
    jid = r.json()["id"]
    job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                   lambda j: j["status"] in FINAL, timeout_s=120)
    assert job["status"] == "succeeded", job
    assert "place_workload_flows.csv" in job["files"] and "place_replicas.csv" in job["files"]
    result = client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).json()
    assert [(t["job"], t["site"], t["checkpoint_policy_met"]) for t in result["training"]] == [("tune", "us", True)]
    assert result["workload_gbps_by_class"] == {"dataset": pytest.approx(5.0)}
    assert result["verification"]["ok"] is True
    bad = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "place", "options": {
        "training": [{"id": "x", "gpus": 8, "sites": ["us", "de", "us"]}]}}, headers=auth(tok))
    assert bad.status_code == 422


def test_get_workloads_is_the_cli_document(client: TestClient, tokens: dict[str, str]) -> None:
    from backbone.workload_summary import summarise_workloads

    made = client.post("/v1/scenarios", json=network_to_dict(workload_network()), headers=auth(tokens["planner"]))
    sid = made.json()["id"]
    r = client.get(f"/v1/scenarios/{sid}/workloads", headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.text
    assert r.json() == json.loads(json.dumps(summarise_workloads(workload_network()).to_dict()))
    assert r.json()["gbps_by_class"]["training-sync"] == 2592.0
    assert client.get(f"/v1/scenarios/{sid}/workloads?version=9", headers=auth(tokens["viewer"])).status_code == 404
    assert client.get(f"/v1/scenarios/{sid}/workloads").status_code == 401
