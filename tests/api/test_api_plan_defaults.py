"""The API's plan job with default options ``{}`` runs the same plan as the planning service (issue #11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient

from backbone.io import load_scenario, network_to_dict
from backbone.model import Network
from tests.conftest import SharedRun


@pytest.mark.slow
@pytest.mark.sqlite_only  # its time is the job's computing (pyproject's markers)
def test_plan_job_with_default_options(client: TestClient, tokens: dict[str, str], small_world: Network,
                                       small_world_default_plan: SharedRun, tmp_path: Path) -> None:
    tok = tokens["planner"]
    net = small_world
    sid = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(tok)).json()["id"]
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "plan", "options": {}}, headers=auth(tok))
    assert r.status_code == 202, r.text
    jid = r.json()["id"]
    job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                   lambda j: j["status"] in FINAL, timeout_s=300)
    assert job["status"] == "succeeded", job
    api = client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).json()
    # the planning service's run_task("plan", net, {}, out), run once per session (shared with tests/solver)
    local = json.loads(json.dumps(small_world_default_plan.summary, default=str))
    for key in ("headline", "survivability", "upgrade_cost_usd", "links_upgraded", "routes_built",
                "failures_with_unmet_demand", "failures_with_unmet_demand_after"):
        assert api[key] == local[key], key
    # every SRLG, every link in none (its own group), and new routes in none after the plan
    assert api["survivability"]["states"] >= len(net.srlgs) + len(net.links_in_no_srlg())
    assert api["scenario_after"] == "scenario_after"
    # the planned backbone is served file by file, and loads as the scenario the plan says it built
    listing = client.get(f"/v1/jobs/{jid}/files", headers=auth(tok)).json()
    after_files = [f for f in listing if f["name"].startswith("scenario_after/")]
    assert {"scenario_after/sites.csv", "scenario_after/links.csv"} <= {f["name"] for f in after_files}
    assert "scenario_after/" not in job["files"] and {f["name"] for f in after_files} <= set(job["files"])
    for f in after_files:
        got = client.get(f["url"], headers=auth(tok))
        assert got.status_code == 200 and len(got.content) == f["size_bytes"], f
        (tmp_path / f["name"]).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f["name"]).write_bytes(got.content)
    after = load_scenario(str(tmp_path / "scenario_after"))
    assert len(after.links) == len(net.links) + api["routes_built"]
