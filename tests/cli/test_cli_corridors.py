"""``backbone te`` and ``backbone plan`` write ``corridors.csv`` (issue #29 item 4: backbone Tbps by class and by
corridor); ``te`` prints the corridor table and puts its rows in ``--json``; the plan report shows the table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from backbone.api.cli.main import app
from backbone.corridors import CORRIDOR_COLUMNS
from backbone.io import save_scenario
from backbone.model import Network
from tests.nets import two_oceans_network

DEMANDS = [{"id": "ckpt", "src": "ny", "dst": "lon", "demand_gbps": 100, "traffic_class": "checkpoint"},
           {"id": "sync", "src": "wdc", "dst": "par", "demand_gbps": 40, "traffic_class": "training-sync"},
           {"id": "data", "src": "lon", "dst": "ny", "demand_gbps": 30, "traffic_class": "dataset"}]


def run(*args: str) -> object:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def same_rows(rows: list[dict], csv: pd.DataFrame) -> None:
    """The summary's ``corridors`` rows are the CSV's (which the artifact writer rounds)."""
    pd.testing.assert_frame_equal(pd.DataFrame(rows)[list(CORRIDOR_COLUMNS)], csv, check_exact=False, rtol=1e-6,
                                  atol=1e-6, check_dtype=False)


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    return save_scenario(two_oceans_network(DEMANDS), tmp_path / "two-oceans")


def test_te_writes_corridors_csv_and_json(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run("te", str(scenario), "--k-paths", "1", "--method", "exact", "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    csv = pd.read_csv(out / "corridors.csv")
    assert tuple(csv.columns) == CORRIDOR_COLUMNS
    assert "corridors.csv" in json.loads((out / "te.json").read_text())["files"]
    same_rows(doc["corridors"], csv)
    ta = csv[(csv["view"] == "region") & (csv["corridor"] == "transatlantic")].set_index("traffic_class")
    assert ta.loc["checkpoint", "eastbound_gbps"] == pytest.approx(100)
    assert ta.loc["training-sync", "eastbound_gbps"] == pytest.approx(40)
    assert ta.loc["dataset", "westbound_gbps"] == pytest.approx(30)
    assert ta.loc["all", ["gbps", "capacity_gbps"]].tolist() == pytest.approx([170, 800])
    # the class flows add up to the link loads (te_links.csv), corridor by corridor
    links = pd.read_csv(out / "te_links.csv")
    region = csv[(csv["view"] == "region") & (csv["traffic_class"] == "all")]
    assert region["gbps"].sum() == pytest.approx((links["flow_ab_gbps"] + links["flow_ba_gbps"]).sum())


def test_te_prints_the_corridor_table(scenario: Path) -> None:
    r = run("te", str(scenario), "--k-paths", "1", "--method", "exact")
    assert r.exit_code == 0, r.output
    table = r.stdout[r.stdout.index("routed Tbps by corridor"):]
    row = next(line for line in table.splitlines() if "transatlantic" in line)
    for words in ("0.1", "0.0", "0.8", "17.5 %", "25.0 %", "checkpoint 0.1", "training-sync 0.0", "dataset 0.0"):
        assert words in row, (words, row)


@pytest.mark.slow
def test_plan_writes_corridors_csv_and_the_report_table(small_world: Network, tmp_path: Path) -> None:
    scen = save_scenario(small_world, tmp_path / "scen")
    out = tmp_path / "out"
    r = run("plan", str(scen), "--out", str(out), "--skip-upgrades", "--json")
    assert r.exit_code == 0, r.output
    csv = pd.read_csv(out / "corridors.csv")
    te = json.loads((out / "te.json").read_text())
    same_rows(te["corridors"], csv)
    assert "corridors.csv" in json.loads(r.stdout)["files"]
    report = (out / "report.html").read_text()
    section = report[report.index("<h2>Backbone Tbps by corridor and class</h2>"):]
    section = section[:section.index("</section>")]
    everything = csv[(csv["traffic_class"] == "all")]
    for r_ in everything.itertuples():
        assert f'<td class="t">{r_.corridor}</td>' in section
    ta = everything[everything["corridor"] == "transatlantic"].iloc[0]
    assert f"{ta['capacity_gbps'] / 1000:,.1f}" in section and f"{100 * ta['utilisation']:.1f}%" in section
