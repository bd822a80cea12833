"""``backbone design`` end to end through the CLI (SNDlib mode and upgrade mode)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backbone.api.cli.main import app
from backbone.io.sndlib import parse_solution

DATA = Path(__file__).resolve().parent.parent / "data" / "sndlib"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_design_sndlib_json_and_solution_file(runner: CliRunner, tmp_path: Path) -> None:
    sol = tmp_path / "out.sol"
    r = runner.invoke(app, ["design", str(DATA / "survivable.txt"), "--model", "U-U-M-N-C-A-N-U", "--time-limit-s", "30",
                            "--json", "--verify", "--solution-out", str(sol)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["status"] == "optimal" and doc["cost"] == pytest.approx(3.0)
    assert doc["lower_bound"] == pytest.approx(3.0) and doc["gap"] == pytest.approx(0.0)
    assert doc["verification"]["ok"]
    links = {link["id"]: link for link in doc["links"]}
    assert links["AB"]["modules"] == [{"capacity": 10.0, "count": 1.0}] and links["AB"]["capacity"] == 10.0
    assert parse_solution(sol).capacities() == pytest.approx({"AB": 10.0, "AC": 10.0, "CB": 10.0})


def test_design_default_model_on_sndlib_file(runner: CliRunner) -> None:
    r = runner.invoke(app, ["design", str(DATA / "triangle.txt"), "--time-limit-s", "30", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["model"] == "U-U-M-N-C-A-N-N" and doc["cost"] == pytest.approx(15.0)


def test_design_upgrade_mode_on_sndlib_network(runner: CliRunner) -> None:
    r = runner.invoke(app, ["design", str(DATA / "triangle.txt"), "--survive", "link", "--utilisation-ceiling", "1.0",
                            "--time-limit-s", "30", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["mode"] == "upgrade" and doc["survivability"] == "link"
    assert doc["status"] == "optimal" and doc["cost_usd"] >= 0
    assert set(doc["map"]["link_values"]["added_gbps"]) == {"AB", "BC", "AC"}


def test_design_bad_model_code_exits_2(runner: CliRunner) -> None:
    r = runner.invoke(app, ["design", str(DATA / "triangle.txt"), "--model", "U-Q-M-N-C-A-N-N", "--json"])
    assert r.exit_code == 2
    assert r.stdout == ""


def test_design_infeasible_exits_3(runner: CliRunner, tmp_path: Path) -> None:
    # directed links run A->B, B->C, A->C only: a demand C -> B has no path
    f = tmp_path / "reverse.txt"
    f.write_text((DATA / "triangle.txt").read_text().replace("D_BC ( B C )", "D_BC ( C B )"))
    r = runner.invoke(app, ["design", str(f), "--model", "D-D-M-N-C-A-N-N", "--json"])
    assert r.exit_code == 3
    assert r.stdout == ""
    ok = runner.invoke(app, ["design", str(f), "--model", "D-B-M-N-C-A-N-N", "--json", "--time-limit-s", "30"])
    assert ok.exit_code == 0, ok.output


def test_design_human_output(runner: CliRunner) -> None:
    r = runner.invoke(app, ["design", str(DATA / "explicit.txt"), "--model", "U-U-E-N-C-A-N-N", "--time-limit-s", "30"])
    assert r.exit_code == 0, r.output
    assert "cost 17.00" in r.stdout and "AB" in r.stdout


def test_design_model_file_is_read_by_the_cli(runner: CliRunner, tmp_path: Path) -> None:
    from backbone.io.sndlib import parse_model_code

    model = tmp_path / "U-U-M-N-C-A-N-U.txt"
    model.write_text(parse_model_code("U-U-M-N-C-A-N-U").to_text())
    r = runner.invoke(app, ["design", str(DATA / "survivable.txt"), "--model-file", str(model), "--time-limit-s", "30",
                            "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["model"] == "U-U-M-N-C-A-N-U" and doc["cost"] == pytest.approx(3.0)
