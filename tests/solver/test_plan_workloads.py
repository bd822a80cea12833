"""The plan carries training workloads (issue #29 item 4): placed with inference, their flows routed as demands of
their own classes, re-checked by the independent placement checker."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from backbone import plan
from backbone.model import Network
from backbone.solver.plan.workloads import network_with_replicas, workload_plan_demands


def with_a_job(net: Network) -> Network:
    """The small world plus a 4 PB corpus homed in Ashburn and an 8,192-GPU job that may split over two NA sites
    with DiLoCo, checkpointing to another region."""
    datasets = pd.DataFrame({"name": ["corpus"], "size_pb": [4.0], "home_sites": [("ashburn",)], "residency": [()],
                             "read_gbps_per_1000_gpus": [20.0], "growth_pb_per_year": [2.0], "source": [""]},
                            index=pd.Index(["corpus"], name="id"))
    base = net.training_jobs
    row = {c: base[c].dtype.type(0) if base[c].dtype.kind in "if" else "" for c in base.columns}
    row.update(gpus=8192, parameters=70e9, bytes_per_parameter=2.0, step_time_s=2.0, sync_method="diloco",
               inner_steps=500, fragments=1, compression_bits=float("nan"), datasets=("corpus",),
               checkpoint_size_tb=float("nan"), checkpoint_interval_s=3600.0, checkpoint_replicas="other-region",
               regions=("NA",), max_sites=2, sites=(), start="", end="")
    jobs = pd.DataFrame([row], index=pd.Index(["llm"], name="id"))[base.columns]
    return net.copy_with(datasets=datasets, training_jobs=jobs)


def test_workload_demands_from_a_placement_and_its_replicas(small_world: Network) -> None:
    net = with_a_job(small_world)
    flows = pd.DataFrame({"job": ["llm", "llm", "llm"], "dataset": ["", "", "corpus"],
                          "traffic_class": ["training-sync", "training-sync", "dataset"],
                          "src": ["ashburn", "dallas", "ashburn"], "dst": ["dallas", "ashburn", "dallas"],
                          "gbps": [1.5, 1.5, 80.0], "links": ["", "", ""]})
    replicas = pd.DataFrame({"dataset": ["corpus"], "site": ["tokyo-dc"]})
    d = workload_plan_demands(net, {"workload_flows": flows, "replicas": replicas})
    assert d.loc["work:dataset:ashburn>dallas", "demand_gbps"] == pytest.approx(80.0)
    assert d.loc["work:training-sync:dallas>ashburn", "demand_gbps"] == pytest.approx(1.5)
    # 2 PB a year from the first home to the new replica: 2e15 x 8 / (365.25 x 86,400) / 1e9 = 0.507 Gbps
    growth = d[d["traffic_class"] == "replication"]
    assert growth[["src", "dst"]].to_dict("records") == [{"src": "ashburn", "dst": "tokyo-dc"}]
    assert growth["demand_gbps"].iloc[0] == pytest.approx(2e15 * 8 / (365.25 * 86_400) / 1e9, rel=1e-6)
    assert network_with_replicas(net, replicas).datasets.at["corpus", "home_sites"] == ("ashburn", "tokyo-dc")


@pytest.mark.slow
def test_the_plan_places_and_routes_a_training_job(small_world: Network, tmp_path: Path) -> None:
    net = with_a_job(small_world)
    res = plan(net, out_dir=tmp_path, verify=True, place={"scenario_jobs": True, "time_limit_s": 30},
               design={"time_limit_s": 20})
    s = res.summary
    assert s.verification is not None and s.verification.place is True
    placed = pd.read_csv(tmp_path / "place_training.csv")
    assert set(placed["job"]) == {"llm"} and placed["gpus"].sum() == pytest.approx(8192)
    flows = pd.read_csv(tmp_path / "place_workload_flows.csv")
    assert "checkpoint" in set(flows["traffic_class"])
    te = pd.read_csv(tmp_path / "te_demands.csv")
    routed = te[te["demand"].astype(str).str.startswith("work:")]
    assert set(routed["traffic_class"]) >= {"checkpoint"}
    assert routed["demand_gbps"].sum() == pytest.approx(
        flows.loc[flows["traffic_class"] != "replication", "gbps"].sum(), rel=1e-6)
    html = (tmp_path / "report.html").read_text()
    assert "AI workloads: training jobs and their data" in html and "llm" in html
    # backbone Gbps by corridor and class: the workload classes on the region corridors add up to their paths' flows
    corridors = pd.read_csv(tmp_path / "corridors.csv")
    paths = pd.read_csv(tmp_path / "te_paths.csv").merge(te[["demand", "traffic_class"]], on="demand")
    region = corridors[corridors["view"] == "region"].groupby("traffic_class")["gbps"].sum()
    by_hops = (paths["gbps"] * paths["hops"]).groupby(paths["traffic_class"]).sum()
    assert region["checkpoint"] == pytest.approx(by_hops["checkpoint"], rel=1e-6) and region["checkpoint"] > 0
    checkpoint_corridors = set(corridors.loc[corridors["traffic_class"] == "checkpoint", "corridor"])
    assert checkpoint_corridors - {"intra-NA"}  # checkpoints go to another region
    section = html[html.index("Backbone Tbps by corridor and class"):]
    assert "checkpoint Tbps E / W" in section[:section.index("</section>")]
    # the data-gravity map is drawn and embedded in the workloads section, before the section's job table
    assert (tmp_path / "map_gravity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    section = html[html.index("AI workloads: training jobs and their data"):]
    section = section[:section.index("</section>")]
    assert 'alt="Data-gravity map" src="data:image/png;base64,' in section
    assert "map_gravity.png" in html[html.index("<h3>Files</h3>"):]  # recorded by the artifact writer
    # map.html and map.geojson carry the same flows (the placement's, routed)
    geo = json.loads((tmp_path / "map.geojson").read_text())
    drawn = sorted((f["properties"]["traffic_class"], f["properties"]["src"], f["properties"]["dst"])
                   for f in geo["features"] if f["properties"].get("feature_type") == "workload_flow")
    assert drawn == sorted(zip(flows["traffic_class"], flows["src"], flows["dst"], strict=True))
    assert '"flows":[{"src"' in (tmp_path / "map.html").read_text()


def test_jobs_in_period_keeps_the_jobs_running_then(small_world: Network) -> None:
    from backbone.quarters import quarter_number
    from backbone.solver.plan.workloads import jobs_in_period

    net = with_a_job(small_world)
    late = net.copy_with(training_jobs=net.training_jobs.assign(start=["2027Q3"], end=["2028Q2"]))
    q = quarter_number  # the model's one reading of a quarter
    assert list(jobs_in_period(late, q("2027Q2"), q("2027Q2")).training_jobs.index) == []
    assert list(jobs_in_period(late, q("2027Q3"), q("2027Q3")).training_jobs.index) == ["llm"]
    assert list(jobs_in_period(late, q("2028Q1"), q("2028Q4")).training_jobs.index) == ["llm"]
    assert list(jobs_in_period(late, q("2028Q3"), q("2028Q3")).training_jobs.index) == []
    assert list(jobs_in_period(net, q("2030Q1"), q("2030Q1")).training_jobs.index) == ["llm"]  # open-ended


def test_the_roadmap_starts_a_job_in_its_quarter() -> None:
    from backbone.solver.roadmap.rolling import plan_roadmap
    from tests.solver.test_roadmap import QUIET, gpu_toy

    net = gpu_toy()
    jobs = pd.DataFrame([{"gpus": 2048, "start": "2027Q3", "end": "2027Q3", "parameters": 8e9, "step_time_s": 1.0,
                          "checkpoint_replicas": "none"}], index=pd.Index(["job"], name="id"))
    from backbone.validate import build_network

    tables = {k: v.reset_index() for k, v in net.tables().items() if len(v)}
    tables["training_jobs"] = jobs.reset_index()
    net = build_network(tables, name="gpu-toy-job")
    r = plan_roadmap(net, {**QUIET, "start": "2027Q1", "place": {"scenario_jobs": True}})
    gpus = r.builds[r.builds["action"] == "gpus"].groupby("online")["gpus"].sum().to_dict()
    before = plan_roadmap(gpu_toy(), {**QUIET, "start": "2027Q1"})
    base = before.builds[before.builds["action"] == "gpus"].groupby("online")["gpus"].sum().to_dict()
    # the job's 2,048 GPUs come online for 2027Q3, its quarter (two 1,024-GPU blocks beside inference's; GPUs take
    # two quarters from order, so 2027Q3 is the first quarter that can have new ones)
    assert sum(gpus.values()) == pytest.approx(sum(base.values()) + 2048)
    assert gpus.get("2027Q3", 0.0) == pytest.approx(base.get("2027Q3", 0.0) + 2048)


def test_the_gravity_map_draws_the_plans_workload_flows_not_the_scenarios(small_world: Network) -> None:
    from backbone.maps import map_values
    from backbone.solver.plan.report_data import gravity_map

    net = with_a_job(small_world)
    extra = pd.DataFrame({"src": ["ashburn", "ashburn"], "dst": ["london", "tokyo"], "demand_gbps": [2.5, 0.5],
                          "traffic_class": ["checkpoint", "replication"], "slo_rtt_ms": [float("nan")] * 2},
                         index=pd.Index(["work:checkpoint:ashburn>london", "work:replication:ashburn>tokyo"],
                                        name="id"))
    routed = net.copy_with(demands=pd.concat([net.demands, extra]),
                           datasets=net.datasets.assign(home_sites=[("ashburn", "tokyo")]))
    gravity = gravity_map(routed, [{"job": "llm", "site": "ashburn", "gpus": 8192.0}],
                          [{"dataset": "corpus", "site": "tokyo"}])
    assert gravity is not None
    doc = gravity.document()
    # the scenario's own replication demand (rep-lon-nyc) is not a workload flow of the plan
    assert [(f["src"], f["dst"], f["traffic_class"], f["gbps"]) for f in doc["workload_flows"]] == [
        ("ashburn", "london", "checkpoint", 2.5), ("ashburn", "tokyo", "replication", 0.5)]
    assert doc["dataset_homes"] == [{"dataset": "corpus", "site": "ashburn", "new": False},
                                    {"dataset": "corpus", "site": "tokyo", "new": True}]
    assert len(map_values(routed, {"map": doc}).workload_flows) == 2
    assert gravity_map(routed, [], []) is None  # no job placed: no data-gravity map
