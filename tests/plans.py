"""Checks of a plan's output folder, shared by the plan's tests from Python, the CLI and the API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from backbone.io import load_scenario

PLAN_FILES = ("report.html", "plan.json", "place.json", "te.json", "failures.json", "design.json",
              "map_world.png", "map_pacific.png", "map.svg", "map.html", "map.geojson",
              "place_sites.csv", "te_links.csv", "te_demands.csv", "failures_scenarios.csv", "failures_links.csv",
              "design_upgrades.csv", "corridors.csv")


def check_plan_dir(out: Path, summary: dict) -> None:
    """Every file of a plan's output folder exists and agrees with its JSON; the report is self-contained; the
    planned backbone, ``scenario_after/``, is a scenario any command runs on."""
    for name in PLAN_FILES:
        assert (out / name).exists() and (out / name).stat().st_size > 0, name
    plan = json.loads((out / "plan.json").read_text())
    assert plan["status"] == summary["status"]
    assert set(plan["files"]) >= set(PLAN_FILES) - {"plan.json"}
    for name in plan["files"]:
        assert (out / name).exists(), name
    place = json.loads((out / "place.json").read_text())
    te = json.loads((out / "te.json").read_text())
    failures = json.loads((out / "failures.json").read_text())
    design = json.loads((out / "design.json").read_text())
    # the JSON and the CSV tables agree
    sites = pd.read_csv(out / "place_sites.csv")
    assert sites["gpus_added"].sum() == pytest.approx(plan["gpus_added"])
    assert plan["gpus_added"] == pytest.approx(sum(place["gpus_added_by_site"].values()))
    links = pd.read_csv(out / "te_links.csv")
    assert links["utilisation"].max() == pytest.approx(plan["mlu"]) == pytest.approx(te["mlu"])
    scen = pd.read_csv(out / "failures_scenarios.csv")
    assert len(scen) == plan["failure_scenarios"] == failures["scenarios_run"]
    assert (~scen["survived"]).sum() == plan["failures_with_unmet_demand"]
    up = pd.read_csv(out / "design_upgrades.csv")
    assert len(up) == plan["links_upgraded"] + plan["routes_built"]
    if design.get("cost_usd") is not None:
        assert up["cost_usd"].sum() == pytest.approx(design["cost_usd"], rel=1e-6, abs=1e-6)
    # the report shows the figures and is self-contained
    report = (out / "report.html").read_text()
    assert "Where the GPUs go" in report and "What breaks" in report and "What to buy" in report
    assert plan["headline"] and plan["headline"] in report.replace("&#x27;", "'")
    sv = plan["survivability"]
    assert set(sv) >= {"failure_kind", "states", "survived", "not_survivable"}
    after = load_scenario(str(out / "scenario_after"))
    from backbone.solver.failures import enumerate_scenarios

    # the states of the planned backbone: a new route in no SRLG is swept as its own group
    assert sv["states"] == len(enumerate_scenarios(after, sv["failure_kind"])) >= plan["failure_scenarios"]
    assert len(after.links) >= plan["routes_built"]
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", report)
    assert "data:image/png;base64," in report
    assert plan["software_version"] in report and plan["scenario_fingerprint"] in report
