"""The survivability checker's own edge LP: true all-path values where a k-path routing overstates unmet
traffic, excused states checked (a false excuse is flagged, a true one passes), SLO reachability."""

from __future__ import annotations

from typing import Any

import pytest

from backbone.model import Network
from backbone.solver.checks.edge_flow import EdgeFlowModel
from backbone.solver.checks.survivability import check_survivability
from backbone.validate import build_network
from tests import nets
from tests.solver.test_survive import ring_needing_a_chord, site_behind_one_link


def _rows(report: Any) -> dict[str, dict[str, Any]]:
    return {r["scenario"]: r for r in report.to_dict()["states"]}


def test_edge_lp_carries_over_every_path_where_two_paths_leave_traffic_unmet() -> None:
    """Fan, A-D cut: the three two-hop routes carry 30 of the 35 Gbps (unmet 5); the old 2-path routing said 15."""
    net = nets.fan_network(35.0)
    model = EdgeFlowModel(net)
    flow = model.solve(model.link_mask(["AD"]))
    assert flow.carried_gbps == pytest.approx(30.0) and flow.unmet_gbps == pytest.approx(5.0)
    assert flow.short_gbps == pytest.approx(5.0) and flow.cut_gbps == 0.0
    report = check_survivability(net, "link")
    rows = _rows(report)
    assert rows["link:AD"]["independent_unmet_gbps"] == pytest.approx(5.0)
    assert [v.id for v in report.violations] == ["link:AD"]
    assert report.violations[0].value == pytest.approx(5.0)
    assert all(rows[s]["independent_unmet_gbps"] == pytest.approx(0.0) for s in rows if s != "link:AD")


def test_a_state_every_path_carries_is_not_a_violation_on_two_paths() -> None:
    """Fan with 30 Gbps: A-D cut leaves exactly 30 Gbps over three routes, so every state survives; a routing
    over 2 paths per demand would call the cut 10 Gbps short."""
    report = check_survivability(nets.fan_network(30.0), "link")
    assert report.ok, str(report)
    assert _rows(report)["link:AD"]["independent_unmet_gbps"] == pytest.approx(0.0, abs=1e-6)


def test_a_true_excuse_passes_and_is_measured() -> None:
    """E hangs off A by one link and no candidate is left: cutting EA takes E off the network, 40 Gbps."""
    net = site_behind_one_link().drop_candidates(["e-b", "e-d"])
    reason = ("1 demand (40 Gbps) to or from E, which the failure takes off the network (every link and "
              "candidate route of the site is in it)")
    report = check_survivability(net, "link", [{"scenario": "link:EA", "reason": reason, "gbps": 40.0}])
    assert report.ok, str(report)
    row = _rows(report)["link:EA"]
    assert row["claimed"] == "excused" and row["claimed_unmet_gbps"] == 40.0
    assert row["independent_unmet_gbps"] == pytest.approx(40.0) and row["match"]


def test_an_excuse_a_candidate_disproves_is_flagged() -> None:
    """The same cut while candidate E-B exists: E is not off the network with every candidate built."""
    net = site_behind_one_link()
    reason = "1 demand (40 Gbps) to or from E, which the failure takes off the network"
    report = check_survivability(net, "link", [{"scenario": "link:EA", "reason": reason, "gbps": 40.0}])
    assert not report.ok
    assert {v.check for v in report.violations} == {"excuse_reason"}
    assert all(v.id == "link:EA" for v in report.violations)
    assert any("a design could carry 40.0 Gbps" in v.message for v in report.violations)


def test_an_excuse_for_more_than_the_state_loses_is_flagged() -> None:
    """The ring without its chord, nothing may grow: each cut is 50 Gbps short. Excusing 80 Gbps is wrong twice:
    the state loses 50, and every link at its maximum is short by 50, not 80."""
    net = ring_needing_a_chord().drop_candidates(["chord"])
    good = "50 Gbps more than every link at its max_capacity_gbps and every candidate at its max_modules can carry"
    bad = good.replace("50 Gbps", "80 Gbps")
    ok = check_survivability(net, "link", [{"scenario": s, "reason": good, "gbps": 50.0}
                                           for s in ("link:AB", "link:BC", "link:CD", "link:DA")])
    assert ok.ok, str(ok)
    wrong = check_survivability(net, "link", [{"scenario": "link:AB", "reason": bad, "gbps": 80.0}])
    checks = {(v.id, v.check) for v in wrong.violations}
    assert ("link:AB", "excused_gbps") in checks and ("link:AB", "excuse_reason") in checks
    assert {v.id for v in wrong.violations if v.check == "state_carried"} == {"link:BC", "link:CD", "link:DA"}


def test_an_excused_state_that_is_carried_is_flagged() -> None:
    """An excuse is never skipped: the ring with its chord carries link:AB, so excusing it is a mismatch."""
    net = ring_needing_a_chord().with_candidates_built({"chord": 1})
    report = check_survivability(net, "link", {"link:AB": "1 demand (150 Gbps) cut apart even with every "
                                                          "candidate built (sites A, C)"})
    assert [(v.id, v.check) for v in report.violations] == [("link:AB", "excuse_reason")]


def _slo_net() -> Network:
    """A-B direct (1 ms) and A-C-B (2 x 20 ms); 10 Gbps A->B with a 10 ms RTT SLO."""
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 0), nets.site("C", 0.5, 1)]
    links = [nets.te_link("AB", "A", "B", 100, 1), nets.te_link("AC", "A", "C", 100, 20),
             nets.te_link("CB", "C", "B", 100, 20)]
    demands = [{"id": "a-b", "src": "A", "dst": "B", "demand_gbps": 10, "traffic_class": "inference",
                "slo_rtt_ms": 10}]
    return build_network({"sites": sites, "links": links, "demands": demands}, name="slo")


def test_a_demand_no_path_of_which_meets_its_slo_is_not_carried() -> None:
    net = _slo_net()
    model = EdgeFlowModel(net)
    flow = model.solve(model.link_mask(["AB"]))
    assert flow.slo_gbps == pytest.approx(10.0) and flow.cut_gbps == 0.0 and flow.carried_gbps == 0.0
    report = check_survivability(net, "link")
    assert [v.id for v in report.violations] == ["link:AB"]
    assert "10.0 outside their SLO" in report.violations[0].message


def test_a_failed_site_loses_its_demand_without_counting_it_unmet() -> None:
    net = nets.fan_network(35.0)
    model = EdgeFlowModel(net)
    flow = model.solve(site_down=model.site_mask(["D"]))
    assert flow.lost_gbps == pytest.approx(35.0) and flow.unmet_gbps == 0.0 and flow.demand_gbps == 0.0
    assert check_survivability(net, "site").ok


@pytest.mark.slow
def test_plan_verify_reports_claimed_and_independent_unmet_per_state(small_world: Network, tmp_path: Any) -> None:
    """``backbone plan --verify``: every state re-measured (excused ones too), per state in ``plan.json``."""
    import json

    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import save_scenario

    scen = save_scenario(small_world, tmp_path / "scen")
    plan_file = tmp_path / "study.yaml"
    plan_file.write_text("place:\n  time_limit_s: 30\nfailures:\n  engine: serial\ndesign:\n  time_limit_s: 20\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["plan", str(scen), "--out", str(out), "--plan", str(plan_file), "--verify"])
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text())
    check = plan["survivability_check"]
    rows = {row["scenario"]: row for row in check["states"]}
    from backbone.io import load_scenario
    from backbone.solver.failures import enumerate_scenarios

    # every SRLG and every link in none (its own group) of the planned backbone
    after = load_scenario(str(out / "scenario_after"))
    assert set(rows) == {s.id for s in enumerate_scenarios(after, "srlg")} >= {f"srlg:{s}" for s in small_world.srlgs.index}
    excused = {x["scenario"]: x["gbps"] for x in plan["survivability"]["not_survivable"]}
    for sid, row in rows.items():
        assert row["match"] and row["claimed"] == ("excused" if sid in excused else "survives")
        assert row["independent_unmet_gbps"] == pytest.approx(excused.get(sid, 0.0), rel=1e-3, abs=0.01)
    assert f"survivability check (independent edge LP): {len(rows)} states re-measured" in r.stderr
