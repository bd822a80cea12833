"""The roadmap's wall clock (issue #32): one time budget for the periods and the global bound."""

from __future__ import annotations

import math
import time

import pytest

from backbone.solver.roadmap.clock import MIN_DESIGN_FACTOR, MIN_PLACE_S, PLACE_SHARE, RoadmapClock


def test_each_period_gets_an_even_share_of_what_the_bound_leaves() -> None:
    now = time.perf_counter()
    clock = RoadmapClock(limit_s=500.0, bound_s=100.0, periods=8, start=now)
    assert clock.period_share_s(0) == pytest.approx(50.0, abs=0.5)  # (500 - 100) / 8
    assert clock.period_share_s(6) == pytest.approx(200.0, abs=1.0)  # two periods left share the rest
    assert clock.place_limit_s(0, 30.0) == pytest.approx(PLACE_SHARE * 50.0, abs=0.5)
    assert clock.place_limit_s(0, 5.0) == MIN_PLACE_S  # never above its own limit, never under the least
    # the design gets what the period's share leaves after the placement, within [MIN_DESIGN_FACTOR, most]
    placed = RoadmapClock(limit_s=500.0, bound_s=100.0, periods=8, start=now - 20.0)  # 20 s of placement so far
    assert placed.design_factor(0, now - 20.0, 15.0, 4.0) == pytest.approx((50.0 - 20.0) / 15.0, abs=0.1)
    slow = RoadmapClock(limit_s=500.0, bound_s=100.0, periods=8, start=now - 49.0)
    assert slow.design_factor(0, now - 49.0, 15.0, 4.0) == MIN_DESIGN_FACTOR
    assert clock.design_factor(7, now, 15.0, 4.0) == 4.0  # the last period has all 400 s: capped at its own most
    # the bound gets every second left, at least its own
    assert clock.bound_limit_s() == pytest.approx(500.0, abs=1.0)
    late = RoadmapClock(limit_s=100.0, bound_s=60.0, periods=2, start=now - 1000.0)
    assert late.period_share_s(1) == 0.0 and late.bound_limit_s() == 60.0


def test_no_total_limit_keeps_each_stage_s_own_limits() -> None:
    clock = RoadmapClock(limit_s=0.0, bound_s=120.0, periods=8)
    assert not clock.on and math.isinf(clock.left_s())
    assert clock.place_limit_s(0, 30.0) == 30.0
    assert clock.design_factor(0, time.perf_counter(), 15.0, 4.0) == 4.0
    assert clock.bound_limit_s() == 120.0


@pytest.mark.slow
def test_a_roadmap_reports_its_time_budget_and_keeps_it_off_when_asked() -> None:
    from backbone.solver.roadmap.rolling import plan_roadmap
    from tests.nets import lead_toy

    quiet = {"periods": 3, "growth_per_year": {}, "maps": False, "failures": {"workers": 1}}
    s = plan_roadmap(lead_toy(), {**quiet, "time_limit_s": 300}).summary()
    tb = s["time_budget"]
    assert tb["time_limit_s"] == 300 and len(tb["period_seconds"]) == 3 and tb["bound_s"] is not None
    assert s["seconds"] < 300
    assert all(15.0 <= p["design"]["budget_s"] <= 60.0 for p in s["periods"])  # 1-4 x design.time_limit_s
    off = plan_roadmap(lead_toy(), {**quiet, "time_limit_s": 0}).summary()
    assert off["time_budget"]["time_limit_s"] is None
    assert [b["id"] for b in off["builds"]] == [b["id"] for b in s["builds"]] == ["C1"]


@pytest.mark.slow
def test_roadmap_upgrade_lead_defaults_to_the_scenario_parameter() -> None:
    """One default for a link upgrade's lead time: the scenario's ``upgrade_lead_quarters``, as the plan's changeover
    list uses; an explicit option still wins."""
    from dataclasses import replace

    from backbone.solver.roadmap.rolling import plan_roadmap
    from tests.nets import lead_toy

    net = lead_toy()
    net = replace(net, meta={**net.meta, "parameters": {**(net.meta.get("parameters") or {}), "upgrade_lead_quarters": 2}})
    quiet = {"periods": 2, "growth_per_year": {}, "maps": False, "failures": {"workers": 1}, "time_limit_s": 0}
    assert plan_roadmap(net, quiet).options.upgrade_lead_quarters == 2
    assert plan_roadmap(net, {**quiet, "upgrade_lead_quarters": 0}).options.upgrade_lead_quarters == 0
