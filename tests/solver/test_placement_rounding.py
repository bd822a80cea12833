"""Rounding the placement's LP relaxation into a plan (the MIP's start): the training dive, hand-computed.

Two datacenters, no metros, opex zero (power price 0), ``block_gpus=1``: an added GPU costs its capex. One job of
1,500 GPUs runs at one site. ``a`` has 1,000 GPUs installed and adds GPUs at 10,000 USD; ``b`` has 1,400 installed
and adds them at 100,000 USD. Whole, the job costs 500 x 10,000 = 5 M USD at ``a`` and 100 x 100,000 = 10 M USD at
``b``. The relaxation splits it for free: any share ``x_a`` in [1/15, 2/3] fits the installed GPUs (1,500 x_a <=
1,000 and 1,500 (1 - x_a) <= 1,400), so which share is the larger depends on the vertex the LP stops at; the dive
tries both options and keeps ``a`` whatever the vertex.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from backbone.model import Network
from backbone.solver.checks.placement import check_placement
from backbone.solver.core.problem import Status, solve
from backbone.solver.placement import PlaceOptions, solve_placement
from backbone.solver.placement.formulation import build_placement
from backbone.solver.placement.inputs import build_inputs
from backbone.solver.placement.rounding import dive_training, round_relaxation
from tests.nets import build_network, world_site

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def dc(i: str, lon: float, installed: int, capex: float, **kw: Any) -> dict[str, Any]:
    return world_site(i, lon, 39.0, "NA", "US", "datacenter", gpus_installed=installed, gpus_max=4096,
                      power_max_mw=100.0, power_available_mw=100.0, capex_per_gpu_usd=capex, capex_per_mw_usd=0.0,
                      power_price_usd_per_mwh=0.0, carbon_kg_per_mwh=0.0, **kw)


def two_site_net() -> Network:
    sites = [dc("a", -77.49, 1000, 10_000.0), dc("b", -96.8, 1400, 100_000.0)]
    links = [{"id": "a-b", "site_a": "a", "site_b": "b", "capacity_gbps": 400}]
    jobs = [{"id": "job", "gpus": 1500, "parameters": 8e9, "step_time_s": 1.0, "checkpoint_replicas": "none"}]
    return build_network({"sites": sites, "links": links, "training_jobs": jobs}, name="rounding")


OPTIONS = {"block_gpus": 1, "residency": [], "scenario_jobs": True}


def test_the_dive_fixes_a_split_job_to_its_cheapest_whole_option() -> None:
    net = two_site_net()
    opts = PlaceOptions(**OPTIONS)
    inp = build_inputs(net, opts)
    model = build_placement(inp)
    relaxed = solve(model.lp.relaxed(), time_limit_s=30)
    assert relaxed.status == Status.OPTIMAL
    assert relaxed.objective == pytest.approx(0.0, abs=1e-3)  # the split job fits the installed GPUs
    share = relaxed.values("train")
    assert share.max() < 1.0 - 1e-6  # fractional: the case the dive is for
    train, fixed = dive_training(inp, relaxed, opts, time.perf_counter() + 30)
    labels = share.index.get_level_values("sites")
    assert dict(zip(labels, train, strict=True)) == {"a": 1.0, "b": 0.0}
    assert fixed.objective == pytest.approx(500 * 10_000.0)
    plan = round_relaxation(inp, relaxed, opts)
    assert plan is not None
    rounded_model, sol = plan
    assert sol.objective == pytest.approx(500 * 10_000.0)
    assert np.round(sol.values("blocks").to_numpy()).tolist() == [500.0, 0.0]


def test_the_placement_starts_from_the_rounded_plan_and_proves_it_optimal() -> None:
    net = two_site_net()
    opts = PlaceOptions(**OPTIONS)
    result = solve_placement(net, opts)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(500 * 10_000.0)
    assert result.gap is not None and result.gap <= opts.mip_gap
    assert result.lp_bound == pytest.approx(0.0, abs=1e-3)
    assert result.tables["training"]["site"].tolist() == ["a"]
    report = check_placement(net, opts, result.tables, expect_full=result.fully_served)
    assert report.ok, report.violations


def test_a_dive_past_its_deadline_takes_the_largest_share() -> None:
    net = two_site_net()
    opts = PlaceOptions(**OPTIONS)
    inp = build_inputs(net, opts)
    relaxed = solve(build_placement(inp).lp.relaxed(), time_limit_s=30)
    share = relaxed.values("train").to_numpy()
    train, _ = dive_training(inp, relaxed, opts, time.perf_counter() - 1.0)  # no time left: no trial
    assert train.tolist() == (share == share.max()).astype(float).tolist()
