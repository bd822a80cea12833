"""The workload tables (issue #29): datasets, training jobs and site storage: round trips, validation, old files."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from backbone.errors import ValidationError
from backbone.io import load_scenario, network_from_dict, network_to_dict, save_scenario
from backbone.model import table_records
from backbone.validate import build_network
from backbone.validate_workloads import site_satisfies
from tests.nets import triangle_network, workload_network


def test_folder_round_trip_keeps_datasets_jobs_and_storage(tmp_path: Path) -> None:
    net = workload_network()
    save_scenario(net, tmp_path / "wl")
    files = sorted(p.name for p in (tmp_path / "wl").iterdir())
    assert "datasets.csv" in files and "training_jobs.csv" in files
    back = load_scenario(tmp_path / "wl")
    assert back.equals(net)
    assert back.training_jobs.at["frontier", "sites"] == ("ash", "dfw")
    assert back.datasets.at["eu-health", "residency"] == ("DE", "FR", "GB")
    assert math.isnan(back.training_jobs.at["tune", "checkpoint_size_tb"])
    assert back.sites.at["ash", "storage_pb"] == 200.0
    assert back.sites.at["ash", "storage_cost_usd_per_pb"] == 2e6


def test_json_round_trip_keeps_the_workload_tables() -> None:
    net = workload_network()
    back = network_from_dict(network_to_dict(net))
    assert back.equals(net)


def test_empty_workload_tables_are_not_written_and_old_folders_load(tmp_path: Path) -> None:
    net = triangle_network()
    save_scenario(net, tmp_path / "tri")
    names = {p.name for p in (tmp_path / "tri").iterdir()}
    assert "datasets.csv" not in names and "training_jobs.csv" not in names
    back = load_scenario(tmp_path / "tri")
    assert len(back.datasets) == 0 and len(back.training_jobs) == 0
    assert back.equals(net)


def test_an_old_sites_file_without_storage_columns_loads_with_zero_storage(tmp_path: Path) -> None:
    net = triangle_network()
    save_scenario(net, tmp_path / "tri")
    sites = (tmp_path / "tri" / "sites.csv").read_text().splitlines()
    header = sites[0].split(",")
    keep = [i for i, h in enumerate(header) if h not in ("storage_pb", "storage_cost_usd_per_pb")]
    assert len(keep) == len(header) - 2
    (tmp_path / "tri" / "sites.csv").write_text(
        "\n".join(",".join(line.split(",")[i] for i in keep) for line in sites) + "\n")
    back = load_scenario(tmp_path / "tri")
    assert (back.sites["storage_pb"] == 0).all() and (back.sites["storage_cost_usd_per_pb"] == 0).all()


def _tables(**changes: Any) -> dict[str, list[dict[str, Any]]]:
    """The workload network's records with some records of ``datasets`` / ``training_jobs`` updated by id."""
    tables = {t: table_records(df) for t, df in workload_network().tables().items()}
    for table, updates in changes.items():
        for rec in tables[table]:
            rec.update(updates.get(rec["id"], {}))
    return tables


def _problems(**changes: Any) -> list[tuple[str, str, str, str]]:
    with pytest.raises(ValidationError) as info:
        build_network(_tables(**changes), files={"datasets": "datasets.csv", "training_jobs": "training_jobs.csv"})
    return [(p.file, p.table, p.record, p.field) for p in info.value.problems]


def _messages(**changes: Any) -> str:
    with pytest.raises(ValidationError) as info:
        build_network(_tables(**changes))
    return str(info.value)


@pytest.mark.parametrize(("changes", "where", "words"), [
    ({"datasets": {"web": {"home_sites": ["ash", "nowhere"]}}},
     ("datasets.csv", "datasets", "web", "home_sites"), "unknown site 'nowhere'"),
    ({"datasets": {"web": {"home_sites": []}}},
     ("datasets.csv", "datasets", "web", "home_sites"), "missing required value"),
    ({"datasets": {"eu-health": {"residency": ["DE", "XX"]}}},
     ("datasets.csv", "datasets", "eu-health", "residency"), "unknown code 'XX'"),
    ({"datasets": {"eu-health": {"residency": ["FR"]}}},
     ("datasets.csv", "datasets", "eu-health", "home_sites"), "outside the dataset's residency FR"),
    ({"datasets": {"web": {"size_pb": 0}}}, ("datasets.csv", "datasets", "web", "size_pb"), "must be > 0"),
    ({"training_jobs": {"frontier": {"datasets": ["web", "books"]}}},
     ("training_jobs.csv", "training_jobs", "frontier", "datasets"), "unknown dataset 'books'"),
    ({"training_jobs": {"tune": {"sites": ["lon", "atlantis"], "max_sites": 2}}},
     ("training_jobs.csv", "training_jobs", "tune", "sites"), "unknown site 'atlantis'"),
    ({"training_jobs": {"frontier": {"max_sites": 1}}},
     ("training_jobs.csv", "training_jobs", "frontier", "sites"), "2 sites pinned but max_sites is 1"),
    ({"training_jobs": {"later": {"start": "2027-07"}}},
     ("training_jobs.csv", "training_jobs", "later", "start"), "expected a quarter like '2027Q3'"),
    ({"training_jobs": {"later": {"end": "2027Q5"}}},
     ("training_jobs.csv", "training_jobs", "later", "end"), "expected a quarter like '2027Q3'"),
    ({"training_jobs": {"later": {"start": "2028Q3"}}},
     ("training_jobs.csv", "training_jobs", "later", "end"), "ends (2028Q2) before it starts (2028Q3)"),
    ({"training_jobs": {"frontier": {"regions": ["NA", "EU"]}}},
     ("training_jobs.csv", "training_jobs", "frontier", "regions"), "unknown code 'EU'"),
    ({"training_jobs": {"frontier": {"regions": ["EMEA"]}}},
     ("training_jobs.csv", "training_jobs", "frontier", "sites"), "site 'ash' is in NA, outside the job's regions"),
    ({"training_jobs": {"tune": {"sites": ["ash"]}}},
     ("training_jobs.csv", "training_jobs", "tune", "sites"), "outside the residency DE;FR;GB of dataset 'eu-health'"),
    ({"training_jobs": {"tune": {"sync_method": "zero-bubble"}}},
     ("training_jobs.csv", "training_jobs", "tune", "sync_method"), "is not one of data-parallel"),
    ({"training_jobs": {"tune": {"checkpoint_replicas": "everywhere"}}},
     ("training_jobs.csv", "training_jobs", "tune", "checkpoint_replicas"), "is not one of none"),
    ({"training_jobs": {"tune": {"gpus": 0}}}, ("training_jobs.csv", "training_jobs", "tune", "gpus"), "must be > 0"),
    ({"training_jobs": {"tune": {"inner_steps": 0}}},
     ("training_jobs.csv", "training_jobs", "tune", "inner_steps"), "must be >= 1"),
    ({"training_jobs": {"tune": {"max_sites": 1.5}}},
     ("training_jobs.csv", "training_jobs", "tune", "max_sites"), "expected a whole number"),
])
def test_each_workload_problem_names_file_record_and_field(changes: dict[str, Any], where: tuple[str, ...],
                                                           words: str) -> None:
    assert where in _problems(**changes)
    assert words in _messages(**changes)


def test_sites_gain_storage_with_bounds() -> None:
    tables = _tables()
    tables["sites"][0]["storage_pb"] = -1
    with pytest.raises(ValidationError) as info:
        build_network(tables)
    assert [(p.table, p.record, p.field) for p in info.value.problems] == [("sites", "ash", "storage_pb")]


def test_residency_is_satisfied_by_region_or_country() -> None:
    assert site_satisfies("EMEA", "DE", ("DE", "FR"))
    assert site_satisfies("EMEA", "AE", ("EMEA",))
    assert not site_satisfies("EMEA", "AE", ("IN",))
    assert site_satisfies("APAC", "IN", ())


def test_failing_a_site_drops_its_replicas_and_pins_and_the_result_still_validates() -> None:
    net = workload_network().fail_sites(["dfw", "fra"])
    assert net.datasets.at["web", "home_sites"] == ("ash",)
    assert net.datasets.at["eu-health", "home_sites"] == ("lon",)
    assert net.training_jobs.at["frontier", "sites"] == ("ash",)
    rebuilt = build_network({t: table_records(df) for t, df in net.tables().items()})
    assert rebuilt.datasets.equals(net.datasets) and rebuilt.training_jobs.equals(net.training_jobs)
    gone = workload_network().fail_sites(["fra", "lon"])
    assert "eu-health" not in gone.datasets.index
    assert gone.training_jobs.at["tune", "datasets"] == () and gone.training_jobs.at["tune", "sites"] == ()


def test_the_diff_knows_the_workload_tables() -> None:
    from backbone.compare.structure import network_changes

    before = workload_network()
    tables = _tables(training_jobs={"tune": {"gpus": 1024}})
    tables["datasets"].append({"id": "books", "size_pb": 0.5, "home_sites": "ash", "read_gbps_per_1000_gpus": 1})
    after = build_network(tables, name=before.name)
    changes = network_changes(before, after)
    rows = {(r.table, r.id, r.change, r.field): (r.before, r.after) for r in changes.itertuples()}
    assert rows[("training_jobs", "tune", "changed", "gpus")] == (512, 1024)
    added = [k for k in rows if k[:3] == ("datasets", "books", "added")]
    assert added and added[0][3] == "size_pb"


def test_allowed_sites_tables_follow_the_validation_rules() -> None:
    from backbone.validate_workloads import dataset_allowed_sites, job_allowed_sites

    net = workload_network()
    ds = dataset_allowed_sites(net)
    for d, row in ds.iterrows():
        for s, ok in row.items():
            place = (net.sites.at[s, "region"], net.sites.at[s, "country"])
            assert ok == site_satisfies(*place, net.datasets.at[d, "residency"]), (d, s)
    jobs = job_allowed_sites(net)
    assert jobs.loc["frontier"][jobs.loc["frontier"]].index.tolist() == ["ash", "dfw"]  # regions NA
    assert jobs.loc["tune"][jobs.loc["tune"]].index.tolist() == ["lon", "fra"]  # eu-health: DE;FR;GB
    assert jobs.loc["later"].all()  # no regions, no datasets
    for job, row in jobs.iterrows():  # a pinned job sits where it may
        assert all(row[s] for s in net.training_jobs.at[job, "sites"])
