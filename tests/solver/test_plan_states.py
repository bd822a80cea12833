"""Failure-state selection (solver/plan/states.py) and the plan's upgrade stage as an algorithm
(solver/plan/pipeline.py: plan_upgrades), without the plan task around them."""

from __future__ import annotations

import pandas as pd
import pytest

from backbone.solver.core.progress import no_progress
from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.failures.options import FailureOptions
from backbone.solver.plan.pipeline import UPGRADE_COLUMNS, plan_upgrades
from backbone.solver.plan.stage_options import PlanUpgradeOptions
from backbone.solver.plan.states import (
    design_failure_kind,
    initial_design_states,
    placement_slo_failures,
    survivability_summary,
)
from tests.nets import make_network, site, triangle_network
from tests.records import scenario_record


def upgradable_triangle():
    """The triangle (15 Gbps A->C over three 10 Gbps links) whose links take 10 Gbps modules up to 40 Gbps."""
    links = [{"id": i, "site_a": a, "site_b": b, "capacity_gbps": 10, "length_km": 100, "latency_ms": 1,
              "module_gbps": 10, "module_cost_usd": 100, "max_capacity_gbps": 40}
             for i, a, b in (("AB", "A", "B"), ("BC", "B", "C"), ("AC", "A", "C"))]
    return make_network([site("A", 0, 0), site("B", 1, 1), site("C", 2, 0)], links,
                        [{"id": "d1", "src": "A", "dst": "C", "demand_gbps": 15}])


def test_design_failure_kind_follows_the_design_then_a_survivable_sweep_kind() -> None:
    assert design_failure_kind(None, "link") == "link"
    assert design_failure_kind(None, "site") == "site"
    assert design_failure_kind(None, "srlg-pairs") == "srlg"  # a design cannot survive pairs: the SRLGs
    assert design_failure_kind(None, "list") == "srlg"
    assert design_failure_kind("none", "link") == "none"
    assert design_failure_kind("site", "srlg") == "site"


def test_placement_slo_failures_only_for_kinds_the_placement_models() -> None:
    assert placement_slo_failures(None, None) == "srlg"
    assert placement_slo_failures(None, "link") == "link"
    assert placement_slo_failures("site", "link") == "none"
    assert placement_slo_failures(None, "srlg-pairs") == "none"


def test_the_design_starts_from_the_sweep_only_when_it_swept_the_same_states() -> None:
    records = [scenario_record("srlg:x", survived=False)]
    assert initial_design_states(records, "srlg", "srlg", derate=None) is records
    assert initial_design_states(records, "link", "srlg", derate=None) is None
    assert initial_design_states(records, "srlg", "srlg", derate={"x": 0.5}) is None


def test_survivability_counts_the_records_when_nothing_was_designed() -> None:
    records = [scenario_record("b", survived=False), scenario_record("a"), scenario_record("c", survived=False)]
    sv = survivability_summary("link", None, records)
    assert sv.model_dump() == {"failure_kind": "link", "states": 3, "survived": 1, "not_survivable": [], "violated": ["b", "c"]}
    own = {"failure_kind": "srlg", "states": 2, "survived": 2, "not_survivable": [], "violated": []}
    assert survivability_summary("srlg", Survivability.model_validate(own), records).model_dump() == own


def _sweep(net):
    from backbone.solver.failures import sweep

    opts = FailureOptions(kind="link", k_paths=3, time_limit_s=30)
    return opts, sweep(net, opts, no_progress).worst_first()


@pytest.mark.slow
def test_skipped_upgrades_keep_the_network_and_report_the_sweep() -> None:
    net = triangle_network()
    opts, records = _sweep(net)
    stage = plan_upgrades(net, records, opts, PlanUpgradeOptions(), "link", skip=True, progress=no_progress)
    assert stage.summary.status == "skipped" and stage.built is None and stage.network_after is net
    assert list(stage.upgrades.columns) == UPGRADE_COLUMNS and stage.table().empty
    assert stage.records_after is records and stage.kind == "link"
    assert stage.survivability.states == len(records) == 3
    assert stage.survivability.survived == sum(r.impact.survived for r in records)
    assert {r.scenario for r in stage.before_after} == {r.scenario for r in records}


@pytest.mark.slow
def test_designed_upgrades_survive_every_link_failure() -> None:
    """15 Gbps A->C over 10 Gbps links: losing AC leaves 10 Gbps over A-B-C, short; the design buys 10 Gbps
    modules so every single-link failure is carried, and the records after the plan say so."""
    net = upgradable_triangle()
    opts, records = _sweep(net)
    assert not all(r.impact.survived for r in records)
    design = PlanUpgradeOptions(utilisation_ceiling=1.0, candidates=False, time_limit_s=30)
    stage = plan_upgrades(net, records, opts, design, "link", skip=False, progress=no_progress)
    assert stage.summary.status in ("optimal", "feasible") and stage.built is stage.summary
    assert stage.survivability.violated == [] and stage.survivability.not_survivable == []
    assert stage.survivability.states == 3 and all(r.impact.survived for r in stage.records_after)
    assert stage.summary.cost_usd == pytest.approx(100 * float(stage.upgrades["modules"].sum()))
    added = stage.network_after.links["capacity_gbps"] - net.links["capacity_gbps"]
    assert float(added.sum()) == pytest.approx(float(pd.to_numeric(stage.upgrades["added_gbps"]).sum()))
    assert all(isinstance(p, str) for p in stage.table()["protects"])  # the CSV form joins the states
    before = {r.scenario: r for r in stage.before_after}
    assert any(not r.survived_before and r.survived_after for r in before.values())


def test_before_after_rows_put_unknown_impact_first() -> None:
    """NaN impact (shortfall not measured) sorts first, then the larger impact; NaN never breaks the sort."""
    from backbone.solver.plan.pipeline import failure_before_after

    nan = float("nan")
    before = [scenario_record(s, impact_gbps=i, unmet_gbps=i, mlu=m, survived=False)
              for s, i, m in (("a", 5.0, 1.1), ("b", nan, 2.0), ("c", 50.0, 1.3), ("d", 0.0, 0.5))]
    rows = failure_before_after(before, before)
    assert [r.scenario for r in rows] == ["b", "c", "a", "d"]


def test_a_design_that_targets_links_needs_no_extra_single_link_sweep() -> None:
    from backbone.solver.plan.states import covers_links, link_survivability

    assert covers_links("link") and covers_links("srlg,link")
    assert not covers_links("srlg") and not covers_links("site") and not covers_links("none")
    records = [scenario_record("link:a"), scenario_record("link:b", survived=False)]
    assert link_survivability(records).model_dump() == {"failure_kind": "link", "states": 2, "survived": 1,
                                           "not_carried": ["link:b"]}
