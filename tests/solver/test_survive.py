"""Survivable design on networks whose optimal design is known by hand; the independent checker;
``te``, ``failures`` and ``plan`` agree on a failure's impact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backbone.io import load_scenario, save_scenario
from backbone.model import Network
from backbone.solver.checks.survivability import check_survivability
from backbone.solver.design.survivable.iterate import SurviveOptions, design_survivable
from backbone.solver.failures import FailureOptions, enumerate_scenarios, sweep
from backbone.validate import build_network
from tests import nets
from tests.conftest import SharedRun

SERIAL = FailureOptions(engine="serial")
LINK = SurviveOptions(survive="link")


def _link(i: str, a: str, b: str, cap: float, max_cap: float | None = None) -> dict[str, Any]:
    return {"id": i, "site_a": a, "site_b": b, "capacity_gbps": cap, "max_capacity_gbps": max_cap or cap,
            "module_gbps": 100, "module_cost_usd": 50, "length_km": 100, "latency_ms": 1}


def ring_needing_a_chord() -> Network:
    """A 4-ring A-B-C-D at 100 Gbps per link, no upgrade room; 150 Gbps A->C.

    Intact: 75 Gbps each way round (75 % <= 80 %). Any ring link cut leaves one side: 150 %.
    The only fix is the chord A-C (fixed 1,000 USD + 10 USD per 100 Gbps module, up to 2): with one
    module, a cut leaves 100 + 100 >= 150 Gbps. Optimal: build the chord with 1 module, 1,010 USD.
    """
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 1), nets.site("C", 2, 0), nets.site("D", 1, -1)]
    links = [_link("AB", "A", "B", 100), _link("BC", "B", "C", 100), _link("CD", "C", "D", 100),
             _link("DA", "D", "A", 100)]
    demands = [{"id": "a-c", "src": "A", "dst": "C", "demand_gbps": 150, "traffic_class": "bulk"}]
    candidates = [{"id": "chord", "name": "chord", "site_a": "A", "site_b": "C", "kind": "terrestrial",
                   "link_kind": "terrestrial", "length_km": 100, "latency_ms": 1, "module_gbps": 100,
                   "module_cost_usd": 10, "fixed_cost_usd": 1000, "max_modules": 2, "lead_time_quarters": 3}]
    return build_network({"sites": sites, "links": links, "demands": demands, "candidates": candidates},
                         name="ring")


def site_behind_one_link() -> Network:
    """E hangs off A by one link; 40 Gbps E->C. Losing the link cuts E off; only the candidate
    backhaul E-B (fixed 500 USD + 5 per module) reconnects it. A pricier candidate E-D (fixed 900)
    would too: the optimum builds E-B with one module (505 USD)."""
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 1), nets.site("C", 2, 0), nets.site("D", 1, -1), nets.site("E", -1, 0)]
    links = [_link("AB", "A", "B", 100), _link("BC", "B", "C", 100), _link("CD", "C", "D", 100),
             _link("DA", "D", "A", 100), _link("EA", "E", "A", 100)]
    demands = [{"id": "e-c", "src": "E", "dst": "C", "demand_gbps": 40, "traffic_class": "inference"}]

    def cand(i: str, b: str, fixed: float, cost: float) -> dict[str, Any]:
        return {"id": i, "name": i, "site_a": "E", "site_b": b, "kind": "backhaul", "link_kind": "terrestrial",
                "length_km": 150, "latency_ms": 1.5, "module_gbps": 100, "module_cost_usd": cost,
                "fixed_cost_usd": fixed, "max_modules": 4, "lead_time_quarters": 2}

    return build_network({"sites": sites, "links": links, "demands": demands,
                          "candidates": [cand("e-b", "B", 500, 5), cand("e-d", "D", 900, 5)]}, name="spur")


@pytest.mark.slow
def test_ring_builds_one_chord() -> None:
    net = ring_needing_a_chord()
    before = sweep(net, SERIAL.model_copy(update={"kind": "link"}))
    assert sum(r.impact.survived for r in before.scenarios) == 0  # every cut overloads the other side
    cut = next(r.impact for r in before.scenarios if r.scenario == "link:AB")
    assert cut.mlu == pytest.approx(1.5) and cut.unmet_gbps == pytest.approx(50.0)
    res = design_survivable(net, LINK, sweep_options=SERIAL)
    assert res.converged and res.status == "feasible"  # the true bound (an LP) pays a fraction of the chord
    assert res.cost_usd == pytest.approx(1010.0)
    assert res.restricted_optimum.bound_usd == pytest.approx(1010.0) and res.restricted_optimum.status == "optimal"
    assert res.lower_bound_usd is not None and res.lower_bound_usd <= 1010.0
    up = res.upgrades.set_index("link")
    assert list(up.index) == ["chord"] and up.loc["chord", "modules"] == 1
    assert up.loc["chord", "action"] == "new route" and up.loc["chord", "lead_time_quarters"] == 3
    assert set(up.loc["chord", "protects"]) >= {"link:AB", "link:BC", "link:CD", "link:DA"}
    sv = res.survivability()
    # the chord itself becomes a link that can fail: 5 states, all carried
    assert sv.states == 5 and sv.survived == 5 and not sv.not_survivable and not sv.violated
    assert res.summary()["states_examined"] == 5 and len(res.iterations) >= 1
    assert check_survivability(res.network_after, "link").ok


def test_cut_off_site_gets_the_cheapest_new_route() -> None:
    net = site_behind_one_link()
    res = design_survivable(net, LINK, sweep_options=SERIAL)
    assert res.converged
    assert list(res.upgrades["link"]) == ["e-b"] and res.cost_usd == pytest.approx(505.0)
    assert res.survivability().survived == res.survivability().states == 6
    after = res.network_after
    assert "e-b" in after.links.index and "e-b" not in after.candidates.index


def test_without_candidates_the_cut_is_excused_with_a_reason() -> None:
    net = site_behind_one_link()
    res = design_survivable(net, SurviveOptions(survive="link", candidates=False), sweep_options=SERIAL)
    ns = {r.scenario: r.reason for r in res.not_survivable}
    assert set(ns) == {"link:EA"} and "to or from E, which the failure takes off the network" in ns["link:EA"]
    assert res.upgrades.empty and res.converged and not res.violated
    report = check_survivability(res.network_after, "link", excused=ns)
    assert report.ok
    # the checker is not a rubber stamp: without the excuse the cut state is a violation
    strict = check_survivability(res.network_after, "link")
    assert not strict.ok and strict.violations[0].id == "link:EA"


def test_capacity_no_design_can_add_is_excused_by_its_measured_shortfall() -> None:
    """The ring without its chord: every cut leaves 100 Gbps for the 150 Gbps A->C and no link may grow, so each
    cut is short by 50 Gbps whatever is built. The quick sweep leaves those overloaded states unmeasured; the
    design measures them and excuses exactly the shortfall the MIP proves, instead of calling them violated."""
    net = ring_needing_a_chord()
    res = design_survivable(net, SurviveOptions(survive="link", candidates=False), sweep_options=SERIAL)
    assert res.converged and not res.violated and res.upgrades.empty
    ns = {r.scenario: r for r in res.not_survivable}
    assert set(ns) == {"link:AB", "link:BC", "link:CD", "link:DA"}
    for r in ns.values():
        assert r.gbps == pytest.approx(50.0, abs=0.1) and "more than every link at its max_capacity_gbps" in r.reason
    measured = {r.scenario: r.impact for r in res.records_after}
    assert all(measured[s].unmet_gbps == pytest.approx(50.0, abs=0.1) for s in ns)  # a number, not NaN
    # a state short by more than what is excused stays violated: the excuse is the shortfall, not a pass
    assert check_survivability(res.network_after, "link", excused={s: r.reason for s, r in ns.items()}).ok


@pytest.mark.slow
def test_warm_start_states_join_the_first_mip_and_change_nothing_it_proves() -> None:
    net = ring_needing_a_chord()
    cold = design_survivable(net, LINK, sweep_options=SERIAL)
    warm = design_survivable(net, LINK, sweep_options=SERIAL, initial_states=["link:CD", "link:nowhere"])
    assert warm.iterations[0].working_states >= 1 and "link:CD" in warm.working_set
    assert "link:nowhere" not in warm.working_set  # ids not of the failure kind are ignored
    assert warm.converged and warm.cost_usd == pytest.approx(cold.cost_usd) == pytest.approx(1010.0)
    assert warm.restricted_optimum.bound_usd == pytest.approx(1010.0, rel=1e-3)
    assert warm.lower_bound_usd == pytest.approx(cold.lower_bound_usd)  # the same working states


@pytest.mark.slow
def test_checker_reads_the_scenario_folder(tmp_path: Path) -> None:
    net = ring_needing_a_chord()
    assert not check_survivability(save_scenario(net, tmp_path / "before"), "link").ok
    res = design_survivable(net, LINK, sweep_options=SERIAL)
    folder = save_scenario(res.network_after, tmp_path / "after")
    assert check_survivability(folder, "link").ok
    assert load_scenario(str(folder)).links.loc["chord", "capacity_gbps"] == pytest.approx(100.0)


@pytest.mark.slow
def test_te_failures_and_plan_agree_on_a_failure(small_world: Network, tmp_path: Path) -> None:
    """One failure, three front doors: the same unmet traffic, the same utilisation, the same baseline."""
    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.solver.tasks import run_task

    net = small_world
    plan = run_task("plan", net, {"demand_growth": 3.0, "failures": {"engine": "serial"},
                                  "design": {"time_limit_s": 20}}, tmp_path / "plan")
    fails = json.loads((tmp_path / "plan" / "failures.json").read_text())
    worst = fails["worst"][0]
    assert worst["impact_gbps"] > 0  # a failure that hurts
    sc = {s.id: s for s in enumerate_scenarios(net, "srlg")}[worst["scenario"]]
    te = json.loads((tmp_path / "plan" / "te.json").read_text())
    assert te["impact"]["mlu"] == pytest.approx(plan.summary.mlu)  # same baseline as te
    assert fails["baseline"]["mlu"] == pytest.approx(te["impact"]["mlu"])
    assert fails["baseline"]["unmet_gbps"] == pytest.approx(te["impact"]["unmet_gbps"])
    # the same failure through `backbone failures --kind list` and `backbone te` on the failed scenario
    routed_before = _routed_network(net.scale_demand(3.0), tmp_path / "plan")
    failed = sc.apply(routed_before)
    scen = save_scenario(failed, tmp_path / "failed")
    r = CliRunner().invoke(app, ["te", str(scen), "--json"])
    assert r.exit_code == 0, r.output
    te_failed = json.loads(r.stdout)["impact"]
    assert te_failed["unmet_gbps"] == pytest.approx(worst["unmet_gbps_total"], abs=1e-3)
    assert te_failed["mlu"] == pytest.approx(worst["mlu"], abs=1e-6)
    listed = sweep(routed_before, SERIAL.model_copy(update={"kind": "list", "scenarios": [
        {"id": worst["scenario"], "links": list(sc.links)}]}))  # an SRLG, or a link in none as its own group
    rec = listed.scenarios[0].impact
    for key in ("impact_gbps", "unmet_gbps", "slo_violation_gbps", "lost_gbps", "mlu"):
        assert getattr(rec, key) == pytest.approx(worst[key], abs=1e-6), key
    row = next(x for x in plan.summary.before_after if x.scenario == worst["scenario"])
    assert row.impact_gbps_before == pytest.approx(worst["impact_gbps"])


def _routed_network(net: Network, out: Path) -> Network:
    """The network the plan's route and failures stages ran on: the placement's GPUs and traffic added."""
    import pandas as pd

    from backbone.solver.placement import PlaceOptions
    from backbone.solver.plan.pipeline import network_after_placement, placement_demands

    place = json.loads((out / "place.json").read_text())
    flows = pd.DataFrame(place.get("flows") or [])
    if flows.empty:
        flows = pd.read_csv(out / "place_flows.csv")
    classes = PlaceOptions.model_validate(place["options"]).classes
    sites = pd.DataFrame(place["sites"])
    sites = sites.set_index("site" if "site" in sites.columns else "id")
    return network_after_placement(net, sites, placement_demands(flows, {c.name: c.slo_rtt_ms for c in classes}))


@pytest.mark.slow
def test_planning_service_default_options_run_the_cli_plan(small_world: Network, small_world_default_plan: SharedRun,
                                                           tmp_path: Path) -> None:
    """The API's plan job calls ``run_task("plan", net, options)``; with ``{}`` it runs the same plan as the CLI.

    (The API worker is exercised in tests/api; its job worker cannot start the failure sweep's process
    pool yet -- the "daemonic processes" bug fixed on another branch -- so this test calls the in-process
    planning service the worker calls.)
    """
    from typer.testing import CliRunner

    from backbone.api.cli.main import app

    net = small_world
    api = small_world_default_plan.summary  # run_task("plan", net, {}, out), shared with test_plan.py
    scen = save_scenario(net, tmp_path / "scen")
    r = CliRunner().invoke(app, ["plan", str(scen), "--out", str(tmp_path / "cli"), "--json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    for key in ("headline", "survivability", "upgrade_cost_usd", "links_upgraded", "routes_built", "mlu",
                "mlu_after", "failures_with_unmet_demand", "failures_with_unmet_demand_after", "gpus_added"):
        assert cli[key] == api[key], key
    assert (small_world_default_plan.out / "scenario_after").exists() and (tmp_path / "cli" / "scenario_after").exists()
    assert api["survivability"]["failure_kind"] == "srlg"
    after = load_scenario(str(small_world_default_plan.out / "scenario_after"))
    assert api["survivability"]["states"] == len(enumerate_scenarios(after, "srlg"))  # SRLGs + links in none


@pytest.mark.slow
def test_skip_upgrades_says_nothing_was_designed(small_world: Network, tmp_path: Path) -> None:
    from backbone.solver.tasks import run_task

    s = run_task("plan", small_world, {"skip_upgrades": True, "failures": {"engine": "serial"}},
                 tmp_path / "out").document()
    assert s["headline"].startswith("Nothing was designed (--skip-upgrades)")
    assert s["links_upgraded"] == 0 and s["routes_built"] == 0
    assert s["survivability"]["survived"] == s["failure_scenarios"] - s["failures_with_unmet_demand"]
    report = (tmp_path / "out" / "report.html").read_text()
    assert "Nothing was designed" in report


def test_survive_options_speak_the_one_vocabulary() -> None:
    """One name per option (an older spelling is refused); a plan's design section becomes the same options; bad
    values refused."""
    import pydantic

    from backbone.solver.tasks.plan_options import PlanUpgradeOptions

    for old in ("failure_kind", "ceiling", "failure_ceiling", "paths", "k", "time_limit", "use_candidates"):
        with pytest.raises(pydantic.ValidationError):
            SurviveOptions.model_validate({old: 1})
    plan = PlanUpgradeOptions(utilisation_ceiling=0.7, max_iterations=3, candidates=False)
    assert plan.survive_options("site", 6) == SurviveOptions(survive="site", utilisation_ceiling=0.7, k_paths=6,
                                                             max_iterations=3, candidates=False,
                                                             failure_utilisation_ceiling=0.95)  # the plan's default
    assert plan.survive_options("link", 4, time_limit_s=240).time_limit_s == 240
    for bad in ({"survive": "rack"}, {"utilisation_ceiling": 1.5}, {"max_iterations": 0}):
        with pytest.raises(pydantic.ValidationError):
            SurviveOptions.model_validate(bad)


@pytest.mark.slow
def test_one_design_survives_srlgs_and_single_links_alike() -> None:
    """``survive="srlg,link"``: the union of the single-SRLG states (here one corridor holding A-B and B-C) and the
    single-link states, in one design, checked independently on the union; an SRLG design alone sweeps only the
    corridor and the links in no SRLG (each its own group), not A-B or B-C alone."""
    base = ring_needing_a_chord()
    net = build_network({"sites": base.sites.reset_index().to_dict("records"),
                         "links": base.links.reset_index().to_dict("records"),
                         "demands": base.demands.reset_index().to_dict("records"),
                         "candidates": [{**r, "srlgs": ""} for r in base.candidates.reset_index().to_dict("records")],
                         "srlgs": [{"id": "north", "kind": "corridor", "links": "AB;BC"}]}, name="ring-srlg")
    states = enumerate_scenarios(net, "srlg,link")
    assert [s.id for s in states] == ["srlg:north", "link:CD", "link:DA", "link:AB", "link:BC"]
    res = design_survivable(net, SurviveOptions(survive="srlg,link"), sweep_options=SERIAL)
    sv = res.survivability()
    assert res.converged and sv.failure_kind == "srlg,link"
    # the chord is built and becomes a link in no SRLG: swept as its own group once, not twice
    assert sv.states == 6 and sv.survived == 6 and not sv.violated
    assert {r.scenario for r in res.records_after} == {"srlg:north", "link:chord", "link:AB", "link:BC",
                                                       "link:CD", "link:DA"}
    assert check_survivability(res.network_after, "srlg,link").ok
    only_srlg = design_survivable(net, SurviveOptions(survive="srlg"), sweep_options=SERIAL)
    swept = {r.scenario for r in only_srlg.records_after}
    assert swept >= {"srlg:north", "link:CD", "link:DA"} and not swept & {"link:AB", "link:BC"}
