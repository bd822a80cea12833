"""The roadmap through the REST API (job kind ``roadmap``) and the CLI: the same result as the planning service."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from backbone.api.cli.main import app
from backbone.io import network_to_dict, save_scenario
from tests.nets import lead_toy
from tests.solver.test_roadmap import QUIET


@pytest.mark.slow
def test_roadmap_job_end_to_end(client: TestClient, tokens: dict[str, str], tmp_path: Path) -> None:
    from backbone.solver.tasks import run_task

    tok = tokens["planner"]
    net = lead_toy()
    sid = client.post("/v1/scenarios", json=network_to_dict(net), headers=auth(tok)).json()["id"]
    options = {**QUIET, "maps": True, "verify": True}
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "roadmap", "options": options}, headers=auth(tok))
    assert r.status_code == 202, r.text
    jid = r.json()["id"]
    job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                   lambda j: j["status"] in FINAL, timeout_s=300)
    assert job["status"] == "succeeded", job
    api = client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).json()
    local = json.loads(json.dumps(run_task("roadmap", net, options, tmp_path / "local").document(), default=str))
    for key in ("status", "total_capex_usd", "gap", "builds", "ledger"):
        assert api[key] == local[key], key
    assert api["verification"]["ok"]
    assert [p["period"] for p in api["periods"]] == ["2027Q1", "2027Q2", "2027Q3"]
    names = {f["name"] for f in client.get(f"/v1/jobs/{jid}/files", headers=auth(tok)).json()}
    assert {"roadmap.json", "report.html", "timeline.png", "roadmap_builds.csv"} <= names
    assert any(n.startswith("periods/2027Q3/scenario/") for n in names), names
    html = client.get(f"/v1/jobs/{jid}/files/report.html", headers=auth(tok))
    assert html.status_code == 200 and "Timeline" in html.text


def test_roadmap_job_bad_option_is_422_naming_the_field(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(lead_toy()), headers=auth(tok)).json()["id"]
    for options, field in (({"start": "2027Q9"}, "start"), ({"budget_usd_per_period": -1}, "budget_usd_per_period"),
                           ({"design": {"ceilin": 0.5}}, "design.ceilin")):
        r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "roadmap", "options": options}, headers=auth(tok))
        assert r.status_code == 422, r.text
        assert any(field in e["field"] for e in r.json()["errors"]), r.json()


@pytest.mark.slow
def test_roadmap_cli_json_verify_and_budget_exit(tmp_path: Path) -> None:
    scen = tmp_path / "toy"
    save_scenario(lead_toy(), scen)
    plan = tmp_path / "roadmap.yaml"
    plan.write_text("periods: 3\ngrowth_per_year: {}\nmaps: false\nfailures: {workers: 1}\n", encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(app, ["roadmap", str(scen), "--plan", str(plan), "--out", str(tmp_path / "out"), "--json",
                            "--verify"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["verification"]["ok"] and doc["total_capex_usd"] == 7e6
    assert json.loads((tmp_path / "out" / "roadmap.json").read_text())["total_capex_usd"] == 7e6
    # the period's scenario is a scenario every command runs on
    f = runner.invoke(app, ["failures", str(tmp_path / "out" / "periods" / "2027Q3" / "scenario"), "--kind", "srlg",
                            "--json"])
    assert f.exit_code == 0, f.output
    r = runner.invoke(app, ["roadmap", str(scen), "--plan", str(plan), "--budget", "3e6", "--out",
                            str(tmp_path / "short")])
    assert r.exit_code == 3, r.output
    assert "budget short in 2027Q3" in r.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("periods: 3\ngrowth_per_yeer: {}\n", encoding="utf-8")
    r = runner.invoke(app, ["roadmap", str(scen), "--plan", str(bad), "--out", str(tmp_path / "bad")])
    assert r.exit_code == 2 and "growth_per_yeer" in r.output and "did you mean" in r.output
    assert not (tmp_path / "bad").exists()


@pytest.mark.slow
def test_roadmap_job_names_an_unplaced_training_job(client: TestClient, tokens: dict[str, str]) -> None:
    """The API's roadmap.json and files carry the jobs a period could not place, with the placement's reason."""
    from tests.solver.test_roadmap_jobs import no_power_toy

    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(no_power_toy()), headers=auth(tok)).json()["id"]
    options = {**QUIET, "start": "2027Q1", "gpu_lead_quarters": 0, "place": {"scenario_jobs": True},
               "power_steps": [{"site": "DC3", "from_period": "2027Q3", "power_max_mw": 10}]}
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "roadmap", "options": options}, headers=auth(tok))
    assert r.status_code == 202, r.text
    jid = r.json()["id"]
    job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                   lambda j: j["status"] in FINAL, timeout_s=300)
    assert job["status"] == "succeeded", job
    api = client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).json()
    assert [(j["period"], j["job"]) for j in api["jobs_unplaced"]] == [("2027Q2", "eu-job")]
    assert "site DC3 is at its power cap" in api["jobs_unplaced"][0]["reason"]
    assert api["periods"][2]["jobs_placed"] == [{"job": "eu-job", "sites": "DC3", "gpus": 1024.0}]
    names = {f["name"] for f in client.get(f"/v1/jobs/{jid}/files", headers=auth(tok)).json()}
    assert "roadmap_jobs.csv" in names
