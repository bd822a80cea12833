"""Traffic engineering: hand-computed optima, SLOs, unmet reasons, path vs edge bound.

Every result is also run through the independent checker (``solve`` below).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from backbone.model import Network
from backbone.solver.checks.te import check_te
from backbone.solver.te import TEOptions, TEResult, solve_te
from tests import nets
from tests.nets import grid, make_network

OBJECTIVES = ("min-mlu", "max-throughput", "max-min-fair", "min-latency")


def solve(net: Network, objective: str, formulation: str = "path", **kw: Any) -> TEResult:
    """Solve and insist the independent checker finds nothing wrong."""
    r = solve_te(net, TEOptions(objective=objective, formulation=formulation, **kw))
    report = check_te(net, r)
    assert report.ok, str(report)
    return r


@pytest.fixture
def diamond() -> Network:
    """S-A-T is fast (2 ms), S-B-T slow (10 ms); 10 Gbps everywhere; S->T 12 Gbps."""
    sites = [nets.site("S", 0, 0), nets.site("A", 1, 1), nets.site("B", 1, -1), nets.site("T", 2, 0)]
    links = [nets.te_link("SA", "S", "A", 10, 1), nets.te_link("AT", "A", "T", 10, 1),
             nets.te_link("SB", "S", "B", 10, 5), nets.te_link("BT", "B", "T", 10, 5)]
    return make_network(sites, links, [{"id": "st", "src": "S", "dst": "T", "demand_gbps": 12}], name="diamond")


@pytest.fixture
def line() -> Network:
    """A-B (10 Gbps) - C (20 Gbps); demands A->C, A->B, B->C of 20 Gbps each (classic max-min example)."""
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 0), nets.site("C", 2, 0)]
    links = [nets.te_link("AB", "A", "B", 10, 1), nets.te_link("BC", "B", "C", 20, 1)]
    demands = [{"id": "long", "src": "A", "dst": "C", "demand_gbps": 20},
               {"id": "ab", "src": "A", "dst": "B", "demand_gbps": 20},
               {"id": "bc", "src": "B", "dst": "C", "demand_gbps": 20}]
    return make_network(sites, links, demands, name="line")


# ---------------------------------------------------------------------- hand-computed optima
@pytest.mark.parametrize("formulation", ["path", "edge"])
def test_triangle_min_mlu_is_three_quarters(triangle: Network, formulation: str) -> None:
    r = solve(triangle, "min-mlu", formulation)
    assert r.summary.status == "optimal"
    assert r.summary.mlu == pytest.approx(0.75, abs=1e-7)
    assert r.summary.objective_value == pytest.approx(0.75, abs=1e-7)
    assert r.demands.loc["d1", "carried_gbps"] == pytest.approx(15)
    # independent residual: recompute the busiest link from the link table
    assert (np.maximum(r.links.flow_ab_gbps, r.links.flow_ba_gbps) / r.links.capacity_gbps).max() == \
        pytest.approx(0.75, abs=1e-7)


@pytest.mark.parametrize("formulation", ["path", "edge"])
@pytest.mark.parametrize(("demand", "ceiling", "latency", "unmet"), [
    (12, 0.8, (8 * 2 + 4 * 10) / 12, 0.0),   # 8 on the fast path (ceiling), 4 on the slow one
    (12, 1.0, (10 * 2 + 2 * 10) / 12, 0.0),  # 10 fast, 2 slow
    (20, 0.8, (8 * 2 + 8 * 10) / 16, 4.0),   # only 16 fits under 80 %: 4 unmet for capacity
])
def test_diamond_min_latency_under_ceiling(diamond: Network, formulation: str, demand: float, ceiling: float,
                                           latency: float, unmet: float) -> None:
    net = diamond.scale_demand(demand / 12)
    r = solve(net, "min-latency", formulation, utilisation_ceiling=ceiling)
    assert r.summary.objective_value == pytest.approx(latency, rel=1e-6)
    assert r.summary.weighted_latency_ms == pytest.approx(latency, rel=1e-6)
    assert r.summary.unmet_gbps == pytest.approx(unmet, abs=1e-6)
    assert r.links["utilisation"].max() <= ceiling + 1e-7
    if unmet:
        assert r.demands.loc["st", "reason"] == "capacity"


@pytest.mark.parametrize("formulation", ["path", "edge"])
def test_max_throughput_serves_classes_in_priority_order(formulation: str) -> None:
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 0), nets.site("C", 2, 0)]
    links = [nets.te_link("AB", "A", "B", 10, 1), nets.te_link("BC", "B", "C", 4, 1)]
    demands = [{"id": "bulk", "src": "A", "dst": "B", "demand_gbps": 6, "traffic_class": "bulk"},
               {"id": "repl", "src": "A", "dst": "C", "demand_gbps": 3, "traffic_class": "replication"},
               {"id": "inf", "src": "A", "dst": "B", "demand_gbps": 4, "traffic_class": "inference"},
               {"id": "train", "src": "A", "dst": "C", "demand_gbps": 3, "traffic_class": "training"}]
    net = make_network(sites, links, demands)
    r = solve(net, "max-throughput", formulation)
    carried = r.demands["carried_gbps"]
    # AB has 10: training 3 + inference 4 first; BC has 4: training 3, then replication 1; bulk gets AB's rest
    assert carried["train"] == pytest.approx(3) and carried["inf"] == pytest.approx(4)
    assert carried["repl"] == pytest.approx(1) and carried["bulk"] == pytest.approx(2)
    assert r.summary.objective_value == pytest.approx(10)
    by = r.summary.by_class
    assert by["replication"].unmet_gbps == pytest.approx(2) and by["bulk"].unmet_gbps == pytest.approx(4)
    assert by["training"].unmet_gbps == pytest.approx(0) and by["inference"].unmet_gbps == pytest.approx(0)
    assert set(r.demands.loc[["repl", "bulk"], "reason"]) == {"capacity"}
    assert [s.name for s in r.summary.stages] == ["max-throughput-training", "max-throughput-inference",
                                                        "max-throughput-replication", "max-throughput-bulk"]


@pytest.mark.parametrize("formulation", ["path", "edge"])
def test_max_min_fair_water_filling(line: Network, formulation: str) -> None:
    r = solve(line, "max-min-fair", formulation)
    # AB (10) is shared by long and ab: 5 each (a quarter); bc then takes BC's remaining 15
    carried = r.demands["carried_gbps"]
    assert carried["long"] == pytest.approx(5, abs=1e-6)
    assert carried["ab"] == pytest.approx(5, abs=1e-6)
    assert carried["bc"] == pytest.approx(15, abs=1e-6)
    assert r.summary.objective_value == pytest.approx(0.25, abs=1e-7)
    assert r.demands["fair_fraction"].to_numpy() == pytest.approx([0.25, 0.25, 0.75], abs=1e-7)


def test_max_min_fair_gives_everyone_everything_when_it_fits(triangle: Network) -> None:
    r = solve(triangle.scale_demand(0.5), "max-min-fair")
    assert r.summary.objective_value == pytest.approx(1.0)
    assert r.summary.unmet_gbps == pytest.approx(0.0)


# ---------------------------------------------------------------------- bounds and consistency
@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2, 4])
def test_path_min_mlu_never_below_edge_optimum(k: int) -> None:
    net = grid()
    edge = solve(net, "min-mlu", "edge")
    path = solve(net, "min-mlu", "path", k_paths=k, method="exact")
    assert path.summary.mlu >= edge.summary.mlu - 1e-7
    if k == 1:
        assert path.summary.mlu > edge.summary.mlu + 1e-3  # single shortest paths do worse here
        # the default (auto) follows that path LP's wide gap with column generation: the edge optimum
        auto = solve(net, "min-mlu", "path", k_paths=k)
        assert auto.summary.method == "colgen"
        assert auto.summary.mlu == pytest.approx(edge.summary.mlu, rel=1e-4)


def test_path_throughput_never_above_edge_optimum() -> None:
    net = grid().scale_demand(3.0)
    edge = solve(net, "max-throughput", "edge")
    path = solve(net, "max-throughput", "path", k_paths=2)
    assert path.summary.carried_gbps <= edge.summary.carried_gbps + 1e-6
    assert edge.summary.unmet_gbps > 0  # scarcity: the case is not trivial


@pytest.mark.slow
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_every_objective_on_grid_passes_checker(objective: str) -> None:
    net = grid().scale_demand(2.0)
    for formulation in ("path", "edge"):
        r = solve(net, objective, formulation, latency_tiebreak=True)
        assert r.summary.status == "optimal"
        assert r.summary.carried_gbps + r.summary.unmet_gbps == pytest.approx(r.summary.demand_gbps)


def test_latency_tiebreak_keeps_mlu_and_lowers_latency() -> None:
    net = grid()
    plain = solve(net, "min-mlu", "path", k_paths=4, method="exact")  # the tie-break runs on the path LP
    tb = solve(net, "min-mlu", "path", k_paths=4, latency_tiebreak=True)
    assert tb.summary.mlu == pytest.approx(plain.summary.mlu, rel=1e-5)
    assert tb.summary.weighted_latency_ms <= plain.summary.weighted_latency_ms + 1e-9


# ---------------------------------------------------------------------- SLOs and unmet reasons
@pytest.mark.parametrize("formulation", ["path", "edge"])
def test_slo_is_hard_constraint(triangle: Network, formulation: str) -> None:
    # RTT 3 ms: the direct A-C link (RTT 2) is admissible, A-B-C (RTT 4) is not -> all 15 on AC
    demands = triangle.demands.copy()
    demands["slo_rtt_ms"] = 3.0
    r = solve(triangle.copy_with(demands=demands), "min-mlu", formulation)
    assert r.summary.mlu == pytest.approx(1.5)
    assert (r.paths["rtt_ms"] <= 3.0).all()
    assert r.links.loc["AB", "flow_ab_gbps"] == pytest.approx(0)


@pytest.mark.parametrize("formulation", ["path", "edge"])
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_demand_with_no_path_within_slo_is_unmet(triangle: Network, formulation: str, objective: str) -> None:
    demands = triangle.demands.copy()
    demands["slo_rtt_ms"] = 1.5  # even the direct link has RTT 2 ms
    r = solve(triangle.copy_with(demands=demands), objective, formulation)
    assert r.demands.loc["d1", "reason"] == "no_path_within_slo"
    assert r.demands.loc["d1", "unmet_gbps"] == pytest.approx(15)
    assert r.summary.unmet_by_reason["no_path_within_slo"].gbps == pytest.approx(15)


@pytest.mark.parametrize("formulation", ["path", "edge"])
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_disconnected_pair_is_reported_not_raised(triangle: Network, formulation: str, objective: str) -> None:
    net = triangle.add_site("Z", lon=9, lat=9, region="NA")
    demands = triangle.demands.copy()
    demands.loc["dz"] = demands.loc["d1"]
    demands.loc["dz", "dst"] = "Z"
    r = solve(net.copy_with(demands=demands), objective, formulation)
    assert r.summary.status == "optimal"
    assert r.demands.loc["dz", "reason"] == "disconnected"
    assert r.demands.loc["dz", "unmet_gbps"] == pytest.approx(15)
    if objective == "min-mlu":
        assert r.summary.mlu == pytest.approx(0.75)


def test_only_disconnected_demand_still_gives_a_result(triangle: Network) -> None:
    net = triangle.add_site("Z", lon=9, lat=9, region="NA")
    demands = triangle.demands.copy()
    demands["dst"] = "Z"
    for objective in OBJECTIVES:
        r = solve(net.copy_with(demands=demands), objective)
        assert r.summary.carried_gbps == 0 and r.summary.mlu == 0


def test_min_mlu_reports_overload_above_one(triangle: Network) -> None:
    r = solve(triangle.scale_demand(3), "min-mlu")  # 45 Gbps over 20 Gbps of cut
    assert r.summary.mlu == pytest.approx(2.25)
    assert r.summary.overloaded is True
    assert r.summary.unmet_gbps == 0


def test_submarine_cut_fixture(submarine_cut: Network) -> None:
    for formulation in ("path", "edge"):
        r = solve(submarine_cut, "min-mlu", formulation)
        assert r.summary.unmet_gbps == pytest.approx(0)
        # 600 Gbps across two 400 Gbps cables: at best 0.75
        assert r.summary.mlu == pytest.approx(0.75, rel=1e-6)
    cut = submarine_cut.fail_srlgs(["atlantic"])
    r = solve(cut, "max-throughput")
    assert set(r.demands["reason"]) == {"disconnected"}


def test_run_te_task_writes_tables_and_bound(tmp_path: Any, triangle: Network) -> None:
    from backbone.solver.tasks import run_task

    res = run_task("te", triangle, {"objective": "min-mlu", "bound": True, "verify": True}, tmp_path)
    s = res.to_dict()
    assert s["verification"]["ok"]
    assert s["gap_to_edge_bound"] == pytest.approx(0.0, abs=1e-7)
    for name in ("te_links", "te_demands", "te_paths"):
        assert (tmp_path / f"{name}.csv").exists() and (tmp_path / f"{name}.parquet").exists()
    assert (tmp_path / "te.json").exists()
    assert s["map"]["link_values"]["utilisation"]["AC"] == pytest.approx(0.75)


def test_bad_option_is_a_validation_error(triangle: Network) -> None:
    from backbone.errors import ValidationError
    from backbone.solver.tasks import run_task

    with pytest.raises(ValidationError) as exc:
        run_task("te", triangle, {"objective": "fastest", "pathz": 3})
    fields = {p.field for p in exc.value.problems}
    assert {"objective", "pathz"} <= fields
