"""The main job end to end: `backbone plan` on a small scenario and on the shipped one.

Every file is checked to exist and to agree with the JSON; the report is opened in headless
Chromium with the network disabled.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from backbone.io import save_scenario
from backbone.model import Network
from tests.conftest import make_network

PLAN_FILES = ("report.html", "plan.json", "place.json", "te.json", "failures.json", "design.json",
              "map_world.png", "map_pacific.png", "map.svg", "map.html", "map.geojson",
              "place_sites.csv", "te_links.csv", "te_demands.csv", "failures_scenarios.csv", "failures_links.csv",
              "design_upgrades.csv")


def _site(i: str, lon: float, lat: float, region: str, country: str, kind: str = "pop", **kw: object) -> dict:
    metro = i if i in ("new-york", "los-angeles", "london", "frankfurt", "tokyo", "singapore") else ""
    return {"id": i, "name": i.title(), "lon": lon, "lat": lat, "region": region, "country": country,
            "metro": metro, "kind": kind, **kw}


@pytest.fixture(scope="module")
def small_world() -> Network:
    """Eight sites on three continents, two transatlantic and two transpacific cables, metros
    with inference demand beyond the installed GPUs, and background traffic."""
    dc = {"kind": "datacenter", "gpus_max": 60000, "power_max_mw": 120.0}
    sites = [
        _site("ashburn", -77.49, 39.04, "NA", "US", gpus_installed=4096, power_available_mw=10, **dc),
        _site("new-york", -74.0, 40.71, "NA", "US"),
        _site("los-angeles", -118.24, 34.05, "NA", "US"),
        _site("london", -0.13, 51.51, "EMEA", "GB", gpus_installed=2048, power_available_mw=5, **dc),
        _site("frankfurt", 8.68, 50.11, "EMEA", "DE", gpus_installed=2048, power_available_mw=5, **dc),
        _site("tokyo", 139.69, 35.69, "APAC", "JP", gpus_installed=2048, power_available_mw=5, **dc),
        _site("singapore", 103.82, 1.35, "APAC", "SG", gpus_installed=1024, power_available_mw=3, **dc),
        _site("seattle", -122.33, 47.61, "NA", "US"),
    ]
    t = {"kind": "terrestrial", "capacity_gbps": 4000}
    links = [
        {"id": "ash-nyc", "site_a": "ashburn", "site_b": "new-york", **t},
        {"id": "ash-lax", "site_a": "ashburn", "site_b": "los-angeles", **t},
        {"id": "lax-sea", "site_a": "los-angeles", "site_b": "seattle", **t},
        {"id": "nyc-sea", "site_a": "new-york", "site_b": "seattle", **t},
        {"id": "lon-fra", "site_a": "london", "site_b": "frankfurt", **t},
        {"id": "tyo-sin-1", "site_a": "tokyo", "site_b": "singapore", "kind": "submarine", "cable_system": "APG",
         "capacity_gbps": 1200, "waypoints": "125 25; 112 10"},
        {"id": "nyc-lon-1", "site_a": "new-york", "site_b": "london", "kind": "submarine", "cable_system": "TAT-A",
         "capacity_gbps": 1200, "waypoints": "-50 44; -20 50"},
        {"id": "ash-fra-1", "site_a": "ashburn", "site_b": "frankfurt", "kind": "submarine", "cable_system": "TAT-B",
         "capacity_gbps": 800, "waypoints": "-60 38; -10 45; -2 47"},
        {"id": "lax-tyo-1", "site_a": "los-angeles", "site_b": "tokyo", "kind": "submarine", "cable_system": "PAC-A",
         "capacity_gbps": 1200, "waypoints": "-150 33; 170 34"},
        {"id": "sea-tyo-1", "site_a": "seattle", "site_b": "tokyo", "kind": "submarine", "cable_system": "PAC-B",
         "capacity_gbps": 800, "waypoints": "-160 48; 165 42"},
        {"id": "fra-sin-1", "site_a": "frankfurt", "site_b": "singapore", "kind": "submarine",
         "cable_system": "SMW", "capacity_gbps": 600, "waypoints": "10 40; 32 31; 38 20; 60 15; 80 5"},
    ]
    srlgs = [
        {"id": "tat-a", "name": "TAT-A", "kind": "cable_system", "links": "nyc-lon-1"},
        {"id": "tat-b", "name": "TAT-B", "kind": "cable_system", "links": "ash-fra-1"},
        {"id": "pac-a", "name": "PAC-A", "kind": "cable_system", "links": "lax-tyo-1"},
        {"id": "pac-b", "name": "PAC-B", "kind": "cable_system", "links": "sea-tyo-1"},
        {"id": "smw", "name": "SMW", "kind": "cable_system", "links": "fra-sin-1"},
        {"id": "apg", "name": "APG", "kind": "cable_system", "links": "tyo-sin-1"},
        {"id": "atlantic", "name": "North Atlantic", "kind": "corridor", "links": "nyc-lon-1;ash-fra-1"},
    ]
    metros = [
        {"id": m, "name": m.title(), "lon": lon, "lat": lat, "region": r, "country": c, "population_m": p,
         "inference_gpus": g, "interactive_share": 0.6}
        for m, lon, lat, r, c, p, g in [
            ("new-york", -74.0, 40.71, "NA", "US", 19.0, 9000.0), ("los-angeles", -118.24, 34.05, "NA", "US", 13.0, 6000.0),
            ("london", -0.13, 51.51, "EMEA", "GB", 9.0, 5000.0), ("frankfurt", 8.68, 50.11, "EMEA", "DE", 2.0, 3000.0),
            ("tokyo", 139.69, 35.69, "APAC", "JP", 37.0, 8000.0), ("singapore", 103.82, 1.35, "APAC", "SG", 6.0, 3000.0),
        ]]
    demands = [
        {"id": "trn-ash-fra", "src": "ashburn", "dst": "frankfurt", "demand_gbps": 300, "traffic_class": "training"},
        {"id": "rep-lon-nyc", "src": "london", "dst": "new-york", "demand_gbps": 400, "traffic_class": "replication"},
        {"id": "inf-tyo-lax", "src": "tokyo", "dst": "los-angeles", "demand_gbps": 300, "traffic_class": "inference",
         "slo_rtt_ms": 150},
        {"id": "bulk-sin-fra", "src": "singapore", "dst": "frankfurt", "demand_gbps": 200, "traffic_class": "bulk"},
    ]
    return make_network(sites, links, demands, srlgs, metros, name="small-world")


def _check_plan_dir(out: Path, summary: dict) -> None:
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
    assert (scen["unmet_gbps"] > 1e-6).sum() == plan["failures_with_unmet_demand"]
    up = pd.read_csv(out / "design_upgrades.csv")
    assert len(up) == plan["links_upgraded"]
    if design.get("cost_usd") is not None:
        assert up["cost_usd"].sum() == pytest.approx(design["cost_usd"], rel=1e-6, abs=1e-6)
    # the report shows the figures and is self-contained
    report = (out / "report.html").read_text()
    assert "Where the GPUs go" in report and "What breaks" in report and "What to buy" in report
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", report)
    assert "data:image/png;base64," in report
    assert plan["software_version"] in report and plan["scenario_fingerprint"] in report


def test_plan_small_scenario_end_to_end(small_world: Network, tmp_path: Path) -> None:
    from api.cli.main import app

    scen = save_scenario(small_world, tmp_path / "scen")
    plan_file = tmp_path / "study.yaml"
    plan_file.write_text("# study: 20% growth, every SRLG\ndemand_growth: 1.2\nplace:\n  time_limit_s: 30\n"
                         "failures:\n  engine: serial\ndesign:\n  ceiling: 0.9\n  time_limit_s: 20\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["plan", str(scen), "--out", str(out), "--plan", str(plan_file), "--json",
                                 "--verify"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["plan_file"] == str(plan_file)
    assert summary["gpus_added"] > 0  # demand (x 1.2) exceeds the installed GPUs
    assert summary["failure_scenarios"] == len(small_world.srlgs)
    assert summary["verification"]["place"] is True and summary["verification"]["route"] is True
    _check_plan_dir(out, summary)
    assert "demand_growth: 1.2" in (out / "report.html").read_text()


def test_plan_rejects_a_bad_plan_file(small_world: Network, tmp_path: Path) -> None:
    from api.cli.main import app

    scen = save_scenario(small_world, tmp_path / "scen")
    bad = tmp_path / "bad.yaml"
    bad.write_text("place:\n  objective: cheapest\nsurprise: 1\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["plan", str(scen), "--out", str(out), "--plan", str(bad)])
    assert r.exit_code == 2
    assert "surprise" in r.output and "Traceback" not in r.output
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.browser
def test_plan_report_opens_offline_in_chromium(small_world: Network, tmp_path: Path) -> None:
    from solver.planning import run_task
    from tests.backbone.test_maps_html import console_messages, run_chromium

    out = tmp_path / "out"
    run_task("plan", small_world, {"failures": {"engine": "serial"}, "design": {"time_limit_s": 20}}, out)
    dom = run_chromium(out / "report.html", tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    assert dom.stdout.count("<img") >= 4 and "Where the GPUs go" in dom.stdout
    shot = tmp_path / "report.png"
    run = run_chromium(out / "report.html", tmp_path, f"--screenshot={shot}")
    assert run.returncode == 0 and shot.stat().st_size > 10_000


@pytest.mark.slow
def test_plan_shipped_scenario(tmp_path: Path) -> None:
    from backbone.io import load_scenario
    from solver.planning import run_task

    net = load_scenario()
    out = tmp_path / "out"
    res = run_task("plan", net, {"failures": {"workers": 2}}, out)
    s = res.summary
    _check_plan_dir(out, s)
    assert s["failure_scenarios"] == len(net.srlgs)
    assert s["scenario"] == net.name and s["mlu"] > 0
