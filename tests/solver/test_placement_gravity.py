"""Placement with data gravity (issue #29): hand-built cases where the dataset, the synchronisation method or a
residency rule decides where a training job runs, each re-checked by the independent placement checker.

Costs: ``capex_per_gpu_usd`` is set per site and opex is zero (power price 0), so an added GPU costs its capex;
every site starts empty with ``gpus_max`` room, ``block_gpus=1``, no metros (no inference demand).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from backbone.model import Network
from backbone.solver.checks.placement import check_placement
from backbone.solver.placement import PlaceOptions, solve_placement
from backbone.workloads import gradient_sync_gbps
from tests.nets import build_network, world_site

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def dc(i: str, lon: float, lat: float, region: str, country: str, capex: float, gpus_max: int = 4096,
       **kw: Any) -> dict[str, Any]:
    """A datacenter with room for ``gpus_max`` GPUs at ``capex`` USD each and no opex."""
    return world_site(i, lon, lat, region, country, "datacenter", gpus_max=gpus_max, power_max_mw=100.0,
                      power_available_mw=100.0, capex_per_gpu_usd=capex, capex_per_mw_usd=0.0,
                      power_price_usd_per_mwh=0.0, carbon_kg_per_mwh=0.0, **kw)


def solve(net: Network, **options: Any):
    """Solve with ``block_gpus=1``, no residency rules on inference, the scenario's jobs; assert the checker."""
    opts = PlaceOptions(**{"block_gpus": 1, "residency": [], "scenario_jobs": True, **options})
    result = solve_placement(net, opts)
    report = check_placement(net, opts, result.tables, expect_full=result.fully_served)
    assert report.ok, report.violations
    return result


def placed(result) -> dict[str, str]:
    t = result.tables["training"]
    return {str(j): "+".join(sorted(g["site"])) for j, g in t.groupby("job")}


def gravity_net(storage_pb_at_cheap: float = 0.0) -> Network:
    """``home`` (60k USD/GPU) holds the 10 PB ``corpus``; ``cheap`` (30k USD/GPU) is 100 Gbps away. The job's
    1,000 GPUs read 500 Gbps, five times the link."""
    sites = [dc("home", -77.49, 39.04, "NA", "US", 60_000.0, storage_pb=50, storage_cost_usd_per_pb=1e6),
             dc("cheap", -96.8, 32.78, "NA", "US", 30_000.0, storage_pb=storage_pb_at_cheap,
                storage_cost_usd_per_pb=1e6)]
    links = [{"id": "home-cheap", "site_a": "home", "site_b": "cheap", "capacity_gbps": 100}]
    datasets = [{"id": "corpus", "size_pb": 10, "home_sites": "home", "read_gbps_per_1000_gpus": 500}]
    jobs = [{"id": "job", "gpus": 1000, "parameters": 8e9, "step_time_s": 1.0, "datasets": "corpus",
             "checkpoint_replicas": "none"}]
    return build_network({"sites": sites, "links": links, "datasets": datasets, "training_jobs": jobs},
                         name="gravity")


def test_a_thin_backbone_pulls_the_job_to_its_dataset() -> None:
    # No storage at the cheap site: reading 500 Gbps over a 100 Gbps link is impossible, so the job pays
    # 60,000 USD/GPU at its data: 60 M USD.
    r = solve(gravity_net())
    assert placed(r) == {"job": "home"}
    assert r.totals["cost_usd"] == pytest.approx(1000 * 60_000.0)
    assert r.tables["workload_flows"].empty
    # why: the chosen site costs 60,000 USD per GPU where the cheapest allowed site with room costs 30,000
    row = r.tables["training"].iloc[0]
    assert (row["usd_per_gpu"], row["cheapest_allowed_site"], row["cheapest_usd_per_gpu"]) == (
        pytest.approx(60_000.0), "cheap", pytest.approx(30_000.0))
    assert row["why"] == "its data pulled it: read locally here, over the backbone (or from a new replica) at cheap"
    # Without the dataset the cheap site wins: 30 M USD.
    net = gravity_net()
    free = solve(net.copy_with(training_jobs=net.training_jobs.assign(datasets=[()])))
    assert placed(free) == {"job": "cheap"}
    assert free.totals["cost_usd"] == pytest.approx(1000 * 30_000.0)
    assert free.tables["training"]["why"].tolist() == ["the cheapest allowed site with room"]


def test_a_new_replica_lets_the_job_go_where_gpus_are_cheap() -> None:
    # 20 PB free at the cheap site: a 10 PB replica (10 M USD) plus 30 M USD of GPUs beats 60 M USD at home.
    r = solve(gravity_net(storage_pb_at_cheap=20))
    assert placed(r) == {"job": "cheap"}
    assert r.tables["replicas"][["dataset", "site"]].to_dict("records") == [{"dataset": "corpus", "site": "cheap"}]
    assert r.totals["cost_usd"] == pytest.approx(1000 * 30_000.0 + 10 * 1e6)
    assert r.totals["storage_capex_usd"] == pytest.approx(10e6)
    # 5 PB free is too little for the replica: back home.
    assert placed(solve(gravity_net(storage_pb_at_cheap=5))) == {"job": "home"}


def split_net(method: str) -> Network:
    """``a`` and ``b`` (30k USD/GPU) have 1,000 GPUs of room each, 400 Gbps apart; ``c`` (50k) has room for the
    whole 2,000-GPU job. A 70e9-parameter BF16 model at 1 s per step: data-parallel sync between two sites is
    2 x 140e9 B x (1 - 1/2) x 8 / 1 s = 1,120 Gbps each way; DiLoCo with H = 100 is 11.2 Gbps."""
    sites = [dc("a", -77.49, 39.04, "NA", "US", 30_000.0, gpus_max=1000),
             dc("b", -96.8, 32.78, "NA", "US", 30_000.0, gpus_max=1000),
             dc("c", -87.63, 41.88, "NA", "US", 50_000.0, gpus_max=2000)]
    links = [{"id": "a-b", "site_a": "a", "site_b": "b", "capacity_gbps": 400},
             {"id": "a-c", "site_a": "a", "site_b": "c", "capacity_gbps": 400}]
    jobs = [{"id": "big", "gpus": 2000, "parameters": 70e9, "bytes_per_parameter": 2, "step_time_s": 1.0,
             "sync_method": method, "inner_steps": 100 if method == "diloco" else 1, "max_sites": 2,
             "checkpoint_replicas": "none"}]
    return build_network({"sites": sites, "links": links, "training_jobs": jobs}, name="split")


def test_a_job_splits_over_two_sites_only_with_diloco() -> None:
    assert float(gradient_sync_gbps(70e9, 2, 1.0, 2)) == pytest.approx(1120.0)
    assert float(gradient_sync_gbps(70e9, 2, 1.0, 2, method="diloco", inner_steps=100)) == pytest.approx(11.2)
    dp = solve(split_net("data-parallel"))
    assert placed(dp) == {"big": "c"}
    assert dp.totals["cost_usd"] == pytest.approx(2000 * 50_000.0)
    # c is the only site with room for the whole job, so the cheapest allowed one
    assert dp.tables["training"]["why"].tolist() == ["the cheapest allowed site with room"]
    dl = solve(split_net("diloco"))
    assert placed(dl) == {"big": "a+b"}
    assert dl.totals["cost_usd"] == pytest.approx(2000 * 30_000.0)
    assert set(dl.tables["training"]["why"]) == {"the cheapest allowed site with room"}  # 30k against c's 50k
    flows = dl.tables["workload_flows"]
    assert sorted(zip(flows["traffic_class"], flows["src"], flows["dst"], strict=True)) == [
        ("training-sync", "a", "b"), ("training-sync", "b", "a")]
    assert flows["gbps"].tolist() == pytest.approx([11.2, 11.2])
    assert dl.tables["links"].at["a-b", "workload_gbps"] == pytest.approx(11.2)


def residency_net(residency: str) -> Network:
    """The cheap site is in the US (30k USD/GPU), the dear one in Germany (45k); the job reads a dataset homed in
    Frankfurt, whose residency may be Germany only."""
    sites = [dc("us", -77.49, 39.04, "NA", "US", 30_000.0),  # no storage: it reads remotely
             dc("de", 8.68, 50.11, "EMEA", "DE", 45_000.0, storage_pb=100)]
    links = [{"id": "us-de", "site_a": "us", "site_b": "de", "kind": "submarine", "capacity_gbps": 10_000}]
    datasets = [{"id": "records", "size_pb": 1, "home_sites": "de", "residency": residency,
                 "read_gbps_per_1000_gpus": 10}]
    jobs = [{"id": "tune", "gpus": 500, "parameters": 8e9, "step_time_s": 1.0, "datasets": "records",
             "checkpoint_replicas": "none"}]
    return build_network({"sites": sites, "links": links, "datasets": datasets, "training_jobs": jobs},
                         name="residency")


def test_a_residency_rule_forbids_the_cheap_site() -> None:
    free = solve(residency_net(""))
    assert placed(free) == {"tune": "us"}
    flows = free.tables["workload_flows"]
    assert flows[["traffic_class", "src", "dst"]].to_dict("records") == [
        {"traffic_class": "dataset", "src": "de", "dst": "us"}]
    assert flows["gbps"].tolist() == pytest.approx([5.0])  # 500 GPUs x 10 Gbps per 1,000
    ruled = solve(residency_net("DE"))
    assert placed(ruled) == {"tune": "de"}
    assert ruled.totals["cost_usd"] == pytest.approx(500 * 45_000.0)
    assert ruled.tables["training"]["why"].tolist() == [
        "the cheapest allowed site with room; its regions, pins or data residency rule out us (USD 30,000/GPU)"]


def test_the_checker_catches_a_flow_with_the_wrong_rate() -> None:
    r = solve(residency_net(""))
    opts = PlaceOptions(block_gpus=1, residency=[], scenario_jobs=True)
    tables = dict(r.tables)
    tables["workload_flows"] = r.tables["workload_flows"].assign(gbps=1.0)
    report = check_placement(residency_net(""), opts, tables, expect_full=True)
    assert not report.ok
    assert any("the formula gives 5.0000" in v.message for v in report.violations)


def test_the_checker_catches_residency_gpus_and_storage() -> None:
    opts = PlaceOptions(block_gpus=1, residency=[], scenario_jobs=True)
    # the job moved to the US site its data's residency (Germany) forbids
    net = residency_net("DE")
    r = solve(net)
    moved = dict(r.tables, training=r.tables["training"].assign(site="us"))
    report = check_placement(net, opts, moved, expect_full=True)
    assert any("training job tune: site us is not allowed" in v.message for v in report.violations)
    # its GPUs no longer add up to its 500
    short = dict(r.tables, training=r.tables["training"].assign(gpus=400.0))
    report = check_placement(net, opts, short, expect_full=True)
    assert not report.ok and any("training job tune" in v.message for v in report.violations)
    # a 10 PB replica at a site with 5 PB free
    net = gravity_net(storage_pb_at_cheap=20)
    r = solve(net)
    tight = net.copy_with(sites=net.sites.assign(storage_pb=[50.0, 5.0]))
    report = check_placement(tight, opts, r.tables, expect_full=True)
    assert any("site cheap: new replicas need 10.00 PB, 5.00 PB free" in v.message for v in report.violations)


def test_a_job_no_site_may_host_is_diagnosed() -> None:
    net = residency_net("DE")  # the job may run in NA only, its data in Germany only
    net = net.copy_with(training_jobs=net.training_jobs.assign(regions=[("NA",)]))
    r = solve_placement(net, PlaceOptions(block_gpus=1, residency=[], scenario_jobs=True))
    assert r.totals["training_unplaced"] == pytest.approx(1.0)
    assert any("training job tune: no allowed site" in x for x in r.infeasibility)


def test_backbone_place_shows_the_jobs_and_their_traffic(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import save_scenario

    scen = save_scenario(residency_net(""), tmp_path / "scen")
    runner = CliRunner()
    r = runner.invoke(app, ["place", str(scen), "--block-gpus", "1", "--json",  # the scenario's jobs by default
                            "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert [(t["job"], t["site"]) for t in s["training"]] == [("tune", "us")]
    assert s["workload_gbps_by_class"] == {"dataset": pytest.approx(5.0)}
    flows = (tmp_path / "out" / "place_workload_flows.csv").read_text()
    assert "tune,records,dataset,de,us,5.0" in flows
    text = runner.invoke(app, ["place", str(scen), "--scenario-jobs", "--block-gpus", "1"])
    assert text.exit_code == 0, text.output
    assert "training jobs: sites and backbone traffic" in text.stdout
    assert "workload traffic: dataset 5.0 Gbps" in text.stdout
    off = runner.invoke(app, ["place", str(scen), "--no-scenario-jobs", "--block-gpus", "1", "--json"])
    assert off.exit_code == 0, off.output
    assert json.loads(off.stdout)["training"] == []  # inference only


def test_checkpoints_stay_within_their_datasets_residency() -> None:
    """A job reading German-resident data copies its checkpoints to the nearest other-region storage site that
    Germany's residency allows -- none here, so no checkpoint flow, rather than a copy to the US."""
    net = residency_net("DE")
    net = net.copy_with(training_jobs=net.training_jobs.assign(checkpoint_replicas=["other-region"]))
    r = solve(net)
    assert placed(r) == {"tune": "de"}
    assert "checkpoint" not in set(r.tables["workload_flows"]["traffic_class"])
    # not silent: the job's row says its policy is not met, and why (the US site has no storage)
    row = r.tables["training"].iloc[0]
    assert (row["checkpoint_policy_met"], row["checkpoint_policy_note"]) == (False, "no storage site in another region")
    # with storage in the US, the residency is what leaves no site
    stored = solve(net.copy_with(sites=net.sites.assign(storage_pb=100.0)))
    row = stored.tables["training"].iloc[0]
    assert (row["checkpoint_policy_met"], row["checkpoint_policy_note"]) == (
        False, "no storage site in another region within the residency of records")
    free = solve(residency_net("").copy_with(
        training_jobs=residency_net("").training_jobs.assign(checkpoint_replicas=["other-region"])))
    flows = free.tables["workload_flows"]
    assert flows.loc[flows["traffic_class"] == "checkpoint", ["src", "dst"]].to_dict("records") == [
        {"src": "us", "dst": "de"}]
    assert free.tables["training"]["checkpoint_policy_met"].tolist() == [True]
    assert free.tables["training"]["checkpoint_policy_note"].tolist() == [""]
    # the checker holds the flag to what it finds, both ways
    opts = PlaceOptions(block_gpus=1, residency=[], scenario_jobs=True)
    free_net = residency_net("").copy_with(
        training_jobs=residency_net("").training_jobs.assign(checkpoint_replicas=["other-region"]))
    for case, result in ((net, r), (free_net, free)):
        tables = {**result.tables, "training": result.tables["training"].assign(
            checkpoint_policy_met=lambda t: ~t["checkpoint_policy_met"])}
        report = check_placement(case, opts, tables, expect_full=True)
        assert any("checkpoint_policy_met is" in v.message for v in report.violations)


def test_backbone_place_names_a_job_whose_checkpoint_policy_is_not_met(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import save_scenario

    net = residency_net("DE")
    scen = save_scenario(net.copy_with(training_jobs=net.training_jobs.assign(checkpoint_replicas=["same-region"])),
                         tmp_path / "scen")
    r = CliRunner().invoke(app, ["place", str(scen), "--block-gpus", "1", "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert "checkpoint policy not met: tune: no storage site in the same region" in " ".join(r.stdout.split())
    row = json.loads((tmp_path / "out" / "place.json").read_text())["training"][0]
    assert (row["checkpoint_policy_met"], row["checkpoint_policy_note"]) == (
        False, "no storage site in the same region")
    assert "checkpoint_policy_met" in (tmp_path / "out" / "place_training.csv").read_text().splitlines()[0]


def policy_net(store_region: str) -> Network:
    """``cheap`` (30k USD/GPU, Johannesburg) and ``dear`` (45k, Ashburn) may both host the job; the only other
    storage site, ``store`` (no GPUs), is in ``store_region``. The job asks for a same-region checkpoint copy."""
    store_at = {"NA": (-96.8, 32.78, "US"), "AFRICA": (3.38, 6.52, "NG")}[store_region]
    sites = [dc("cheap", 28.05, -26.2, "AFRICA", "ZA", 30_000.0, storage_pb=10),
             dc("dear", -77.49, 39.04, "NA", "US", 45_000.0, storage_pb=10),
             dc("store", store_at[0], store_at[1], store_region, store_at[2], 90_000.0, gpus_max=0, storage_pb=10)]
    links = [{"id": "dear-cheap", "site_a": "dear", "site_b": "cheap", "kind": "submarine", "capacity_gbps": 10_000},
             {"id": "dear-store", "site_a": "dear", "site_b": "store", "capacity_gbps": 10_000},
             {"id": "cheap-store", "site_a": "cheap", "site_b": "store", "capacity_gbps": 10_000}]
    jobs = [{"id": "tune", "gpus": 500, "parameters": 8e9, "step_time_s": 1.0, "checkpoint_replicas": "same-region"}]
    return build_network({"sites": sites, "links": links, "training_jobs": jobs}, name="policy")


def test_the_checkpoint_policy_is_a_hard_rule_where_some_site_meets_it() -> None:
    # The cheap site's region has no other storage site: placing the job there would drop its checkpoint copy, so
    # it goes to the dear site, whose region has one (45k x 500), and copies to it.
    r = solve(policy_net("NA"))
    assert placed(r) == {"tune": "dear"}
    assert r.totals["cost_usd"] == pytest.approx(500 * 45_000.0)
    row = r.tables["training"].iloc[0]
    assert (row["checkpoint_site"], row["checkpoint_policy_met"]) == ("store", True)
    # With the storage site in Africa the cheap site meets the policy too, and wins.
    r = solve(policy_net("AFRICA"))
    assert placed(r) == {"tune": "cheap"}
    assert r.tables["training"].iloc[0]["checkpoint_site"] == "store"


def test_why_names_the_room_that_ran_out_and_the_split_no_site_could_hold() -> None:
    # the cheap site has room for 1,000 GPUs; a 1,000-GPU job already pinned there fills it, so the second job
    # pays the dear site's price: the room ran out at the cheap site
    net = gravity_net()
    jobs = net.training_jobs.assign(datasets=[()])
    sites = net.sites.assign(gpus_max=[4096, 1000])
    two = pd.concat([jobs.assign(sites=[("cheap",)]), jobs.rename(index={"job": "second"})])
    r = solve(net.copy_with(sites=sites, training_jobs=two))
    assert placed(r) == {"job": "cheap", "second": "home"}
    why = r.tables["training"].set_index("job")["why"]
    assert why["second"] == "room or power ran out at cheap, the cheapest allowed site (all its blocks are built)"
    # a 2,000-GPU job no single a or b can hold, split over both: why says so
    dl = solve(split_net("diloco").copy_with(sites=split_net("diloco").sites.assign(gpus_max=[1000, 1000, 1000])))
    assert placed(dl) == {"big": "a+b"}
    assert set(dl.tables["training"]["why"]) == {"no allowed site has room for all 2,000 GPUs: split over 2"}
