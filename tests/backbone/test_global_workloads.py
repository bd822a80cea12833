"""The shipped scenario's training workloads (issue #29): derived figures, residency, and the traffic they create."""

from __future__ import annotations

import pytest

from backbone.datasets import global_workloads as gw
from backbone.model import Network
from backbone.workload_traffic import workload_demands
from backbone.workloads import gradient_sync_gbps


def test_the_derivations_reproduce_the_papers_figures() -> None:
    # Llama 3 405B: 6 x 405e9 x 16e6 / (16,384 x 400e12) = 5.93 s a step
    assert gw.step_time_s(405e9) == pytest.approx(5.9326, abs=1e-4)
    # Young: sqrt(2 x (5.67e12 / 2e12 s) x (54 x 86,400 / 419 s)) = 251 s
    assert gw.checkpoint_interval_s(405e9, 16_384) == 251.0
    # Chinchilla on 98,304 GPUs x 400 TFLOP/s x 90 days x 0.9: sqrt(C / 120) = 1.514e12 parameters
    assert gw.compute_optimal_parameters(98_304) == 1.514e12
    # 976.6 tokens per GPU per 5.93 s x 4 bytes x 8 bits x 1,000 GPUs = 5.27 Mbps
    assert gw.read_gbps_per_1000_gpus() == pytest.approx(0.005267, abs=1e-6)
    # 240 PB / 24,576 GPUs; 0.014 USD/GB x 117/81 x 20/17
    assert pytest.approx(9.765625) == gw.STORAGE_PB_PER_GPU * 1000
    assert pytest.approx(23_790.85, abs=0.01) == gw.STORAGE_USD_PER_PB


def test_the_shipped_workloads_cover_frontier_fine_tuning_and_residency(shipped: Network) -> None:
    jobs, ds = shipped.training_jobs, shipped.datasets
    frontier = jobs[jobs["gpus"] >= 16_384]
    assert len(frontier) >= 3 and frontier["gpus"].max() <= 100_000
    assert (jobs["gpus"] < 16_384).sum() >= 8
    assert set(jobs["sync_method"]) == {"data-parallel", "diloco", "streaming-diloco"}
    residencies = {";".join(r) for r in ds["residency"]}
    assert {"IN", "AE;SA"} <= residencies and any("DE" in r and "FR" in r for r in ds["residency"])
    assert (ds["source"] != "").all() and (jobs["source"] != "").all()
    running = jobs[jobs["sites"].map(len) > 0]
    assert set(running.index) == {"frontier-405b", "ft-70b-a", "ft-70b-eu", "ft-8b-in"}
    dcs = shipped.sites[shipped.sites["kind"] == "datacenter"]
    assert (dcs["storage_pb"] > 0).sum() >= 30 and (shipped.sites.loc[dcs.index.difference(
        dcs.index[dcs["gpus_installed"] == 0]), "storage_cost_usd_per_pb"] == 23_800).all()
    assert shipped.sites.at["ashburn", "storage_pb"] == 878.9


def test_the_shipped_running_jobs_traffic(shipped: Network) -> None:
    d = workload_demands(shipped)
    # the running 405B job copies a 5.67 TB checkpoint every 251 s to another region: 180.7 Gbps
    ckpt = d[(d["job"] == "frontier-405b") & (d["flow"] == "checkpoint")]
    assert len(ckpt) == 1 and ckpt["demand_gbps"].iloc[0] == pytest.approx(5.67e12 * 8 / 251 / 1e9)
    assert shipped.sites.at[ckpt["dst"].iloc[0], "region"] != "NA"
    # the 100k-GPU job over four campuses: DiLoCo sends 3.3 Gbps per ring edge, data-parallel would send 1.6 Tbps
    placed = workload_demands(shipped, {"frontier-100k": ["ashburn", "dallas", "council-bluffs", "columbus"]})
    sync = placed[(placed["job"] == "frontier-100k") & (placed["flow"] == "gradient-sync")]
    assert len(sync) == 4 and sync["demand_gbps"].iloc[0] == pytest.approx(3.2768, abs=1e-4)
    job = shipped.training_jobs.loc["frontier-100k"]
    assert float(gradient_sync_gbps(job["parameters"], 2, job["step_time_s"], 4)) == pytest.approx(1638.4, abs=0.1)
