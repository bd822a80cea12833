"""``backbone workloads`` and the facade's ``workloads(net)`` (issue #29): the same figures, --json on stdout only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backbone.api.cli.main import app
from backbone.io import save_scenario
from backbone.solver.facade import workloads
from tests.nets import triangle_network, workload_network


def run(*args: str) -> object:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    return save_scenario(workload_network(), tmp_path / "wl")


def test_workloads_json_is_the_facade_dict_and_only_json(scenario: Path) -> None:
    result = run("workloads", str(scenario), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc == json.loads(json.dumps(workloads(workload_network()).to_dict()))
    assert doc["jobs_placed"] == 2 and doc["jobs_not_placed"] == 1
    assert doc["gbps_by_class"] == pytest.approx({"checkpoint": 12.6 + 0.248889, "training-sync": 2592.0,
                                                  "dataset": 81.92, "replication": 1.267524}, rel=1e-6)
    frontier = next(j for j in doc["jobs"] if j["id"] == "frontier")
    assert frontier["sites"] == ["ash", "dfw"] and frontier["checkpoint_tb"] == pytest.approx(5.67)
    assert frontier["backbone_gbps"] == pytest.approx(2592.0 + 81.92 + 12.6)
    web = next(d for d in doc["datasets"] if d["id"] == "web")
    assert web["stored_pb"] == 80.0 and web["read_by"] == ["frontier"] and web["residency"] == []
    assert len(doc["demands"]) == 6 and doc["storage_pb"] == 380.0


def test_workloads_tables_name_jobs_datasets_and_classes(scenario: Path) -> None:
    result = run("workloads", str(scenario))
    assert result.exit_code == 0, result.output
    for words in ("frontier", "16,384", "data-parallel", "ash+dfw", "not placed (up to 2)", "eu-health",
                  "DE, FR, GB", "training-sync", "2,592.0", "(dataset growth)"):
        assert words in result.stdout, words
    assert "1 job not placed" in result.stderr


def test_at_places_a_job_and_adds_its_flows(scenario: Path) -> None:
    result = run("workloads", str(scenario), "--at", "later=fra,lon", "--at", "tune=", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    later = next(j for j in doc["jobs"] if j["id"] == "later")
    assert later["placed"] and later["backbone_gbps"] == pytest.approx(2 * 1.12 + 2.177778, rel=1e-6)
    assert doc["jobs_placed"] == 2  # frontier and later; tune unplaced


@pytest.mark.parametrize(("at", "words"), [("later=atlantis", "unknown site id(s): atlantis"),
                                           ("nobody=ash", "unknown training job id(s): nobody"),
                                           ("later", "expected JOB=SITE[,SITE]"),
                                           ("tune=lon,fra", "max_sites is 1")])
def test_bad_at_exits_2_naming_it(scenario: Path, at: str, words: str) -> None:
    result = run("workloads", str(scenario), "--at", at, "--json")
    assert result.exit_code == 2
    assert result.stdout == "" and words in result.stderr and "Traceback" not in result.stderr


def test_a_scenario_without_workloads_lists_nothing_and_exits_0(tmp_path: Path) -> None:
    path = save_scenario(triangle_network(), tmp_path / "tri")
    result = run("workloads", str(path), "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["jobs"] == [] and doc["total_gbps"] == 0.0 and doc["demands"] == []


def test_an_invalid_workload_table_exits_2_naming_file_record_and_field(scenario: Path) -> None:
    jobs = scenario / "training_jobs.csv"
    jobs.write_text(jobs.read_text().replace("ash;dfw", "ash;nowhere"))
    result = run("workloads", str(scenario))
    assert result.exit_code == 2
    assert "training_jobs.csv" in result.stderr and "frontier" in result.stderr and "unknown site 'nowhere'" in (
        result.stderr)
