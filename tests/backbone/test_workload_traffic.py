"""Demands of training jobs and datasets (issue #29): every flow against a hand computation."""

from __future__ import annotations

import pandas as pd
import pytest

from backbone.errors import NotFoundError, ValidationError
from backbone.model import table_records
from backbone.schema import TRAFFIC_CLASSES
from backbone.validate import build_network
from backbone.workload_traffic import (
    WORKLOAD_DEMAND_COLUMNS,
    checkpoint_bytes,
    job_placements,
    workload_demands,
)
from tests.nets import workload_network


def _gbps(demands: pd.DataFrame) -> dict[str, float]:
    return {str(k): round(float(v), 6) for k, v in demands["demand_gbps"].items()}


def test_pinned_jobs_give_sync_reads_checkpoints_and_growth_by_hand() -> None:
    d = workload_demands(workload_network())
    assert list(d.columns) == list(WORKLOAD_DEMAND_COLUMNS) and d.index.name == "id"
    assert _gbps(d) == {
        # 405e9 parameters x 2 bytes, ring over R = 2 sites: 2 x 810e9 x (1 - 1/2) = 810e9 bytes a step per site,
        # x 8 bits / 5 s = 1,296 Gbps each way
        "frontier/sync/ash>dfw": 1296.0, "frontier/sync/dfw>ash": 1296.0,
        # dfw runs 16,384 / 2 = 8,192 GPUs at 10 Gbps per 1,000 and holds no replica of web: 81.92 Gbps from ash
        # (ash is 1,872 km away, fra 8,275 km); ash holds a replica, so it reads locally
        "frontier/read/web/ash>dfw": 81.92,
        # 405e9 x 14 bytes = 5.67e12 bytes every 3,600 s = 12.6 Gbps to the nearest storage site in another region
        # (lon, 5,900 km, nearer than fra)
        "frontier/checkpoint/ash>lon": 12.6,
        # 8e9 x 14 = 1.12e11 bytes every 3,600 s = 0.248889 Gbps to the nearest other site of EMEA (fra)
        "tune/checkpoint/lon>fra": 0.248889,
        # 5 PB a year = 5e15 x 8 / 31,557,600 s = 1.267524 Gbps from the first home (ash) to the other (fra)
        "web/growth/ash>fra": 1.267524,
    }
    assert d.loc["frontier/sync/ash>dfw", "traffic_class"] == "training-sync"
    assert d.loc["frontier/read/web/ash>dfw", ["traffic_class", "job", "flow", "dataset"]].tolist() == [
        "dataset", "frontier", "dataset-read", "web"]
    assert d.loc["web/growth/ash>fra", ["traffic_class", "job", "flow"]].tolist() == ["replication", "", "dataset-growth"]
    assert set(d["traffic_class"]) <= set(TRAFFIC_CLASSES)
    assert d["slo_rtt_ms"].isna().all()


def test_placing_an_unplaced_job_adds_its_flows_and_unplacing_removes_them() -> None:
    d = workload_demands(workload_network(), {"later": ["fra", "lon"], "tune": []})
    got = _gbps(d)
    # DiLoCo, H = 500: 2 x 70e9 x 2 x (1 - 1/2) = 140e9 bytes every 500 x 2 s = 1.12 Gbps each way
    assert got["later/sync/fra>lon"] == 1.12 and got["later/sync/lon>fra"] == 1.12
    # 70e9 x 14 = 9.8e11 bytes / 3,600 s = 2.177778 Gbps from fra (its first site) to the nearest storage site of
    # another region: ash (6,566 km; bom is 6,570 km, dfw 8,275 km)
    assert got["later/checkpoint/fra>ash"] == 2.177778
    assert not any(k.startswith("tune/") for k in got)
    assert "frontier/sync/ash>dfw" in got  # not in the mapping: at its pinned sites


def test_streaming_diloco_with_compression_divides_by_fragments_and_bits() -> None:
    tables = {t: table_records(df) for t, df in workload_network().tables().items()}
    for rec in tables["training_jobs"]:
        if rec["id"] == "frontier":
            rec.update(sync_method="streaming-diloco", inner_steps=100, fragments=4, compression_bits=4)
    d = workload_demands(build_network(tables))
    # 2 x (810e9 / 4 fragments) x (1 - 1/2) x (4 bits / 16 bits) = 50.625e9 bytes per fragment window of
    # H / P = 25 steps x 5 s = 125 s: 50.625e9 x 8 / 125 = 3.24 Gbps
    assert d.loc["frontier/sync/ash>dfw", "demand_gbps"] == pytest.approx(3.24)


def test_no_replica_policy_no_checkpoint_and_a_local_replica_no_read() -> None:
    tables = {t: table_records(df) for t, df in workload_network().tables().items()}
    for rec in tables["training_jobs"]:
        rec["checkpoint_replicas"] = "none"
    net = build_network(tables)
    d = workload_demands(net, {"frontier": ["ash"], "later": []})
    assert d.empty is False and set(d["flow"]) == {"dataset-growth"}


def test_a_given_checkpoint_size_wins_over_the_derived_one() -> None:
    jobs = workload_network().training_jobs.copy()
    jobs.loc["tune", "checkpoint_size_tb"] = 2.0
    got = checkpoint_bytes(jobs)
    assert got["tune"] == 2e12 and got["frontier"] == pytest.approx(405e9 * 14)


def test_job_placements_split_gpus_and_refuse_bad_sites() -> None:
    net = workload_network()
    p = job_placements(net)
    assert p[p["job"] == "frontier"][["site", "position", "sites", "gpus"]].values.tolist() == [
        ["ash", 0, 2, 8192.0], ["dfw", 1, 2, 8192.0]]
    with pytest.raises(NotFoundError, match="atlantis"):
        job_placements(net, {"later": ["atlantis"]})
    with pytest.raises(NotFoundError, match="nobody"):
        job_placements(net, {"nobody": ["ash"]})
    with pytest.raises(ValidationError, match="max_sites is 1"):
        job_placements(net, {"tune": ["lon", "fra"]})
    with pytest.raises(ValidationError, match="twice"):
        job_placements(net, {"later": ["lon", "lon"]})


def test_a_scenario_without_workloads_has_no_workload_demands(triangle) -> None:  # type: ignore[no-untyped-def]
    d = workload_demands(triangle)
    assert d.empty and list(d.columns) == list(WORKLOAD_DEMAND_COLUMNS)


def test_workload_demands_join_the_demands_table_and_validate() -> None:
    net = workload_network()
    extra = workload_demands(net).reset_index()
    tables = {t: table_records(df) for t, df in net.tables().items()}
    tables["demands"] = tables["demands"] + extra.to_dict("records")
    joined = build_network(tables)
    assert len(joined.demands) == len(extra)
    assert joined.demands.groupby("traffic_class")["demand_gbps"].sum().to_dict() == pytest.approx(
        {"checkpoint": 12.6 + 0.248889, "training-sync": 2592.0, "dataset": 81.92, "replication": 1.267524},
        rel=1e-6)
    assert joined.scale_demand(2.0, "training-sync").demands["demand_gbps"].sum() == pytest.approx(
        extra["demand_gbps"].sum() + 2592.0)


def test_a_checkpoint_never_goes_to_the_jobs_own_site() -> None:
    tables = {t: table_records(df) for t, df in workload_network().tables().items()}
    for rec in tables["training_jobs"]:
        if rec["id"] == "frontier":
            rec["checkpoint_replicas"] = "same-region"
    d = workload_demands(build_network(tables))
    # NA has storage only at ash and dfw, both the job's own sites: nowhere to copy within the region
    assert not ((d["job"] == "frontier") & (d["flow"] == "checkpoint")).any()
    d = workload_demands(build_network(tables), {"frontier": ["ash"]})
    assert d.loc["frontier/checkpoint/ash>dfw", "demand_gbps"] == pytest.approx(12.6)
