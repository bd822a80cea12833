"""ECMP / shortest-path routing simulation."""

from __future__ import annotations

from typing import Any

import pytest

from backbone.model import Network
from backbone.solver.checks.te import check_te
from backbone.solver.te import TEOptions, solve_te
from backbone.solver.te.ecmp import simulate_ecmp
from tests import nets
from tests.nets import grid, make_network


def square(lat_second: float = 1.0, **demand: Any) -> Network:
    """A-B-D and A-C-D (the second leg of the lower path has latency ``lat_second``); A->D 10 Gbps."""
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 1), nets.site("C", 1, -1), nets.site("D", 2, 0)]
    links = [nets.te_link("AB", "A", "B", 10, 1), nets.te_link("BD", "B", "D", 10, 1),
             nets.te_link("AC", "A", "C", 10, 1), nets.te_link("CD", "C", "D", 10, lat_second)]
    d = {"id": "ad", "src": "A", "dst": "D", "demand_gbps": 10, **demand}
    return make_network(sites, links, [d], name="square")


def test_equal_cost_paths_split_equally() -> None:
    net = square()
    r = simulate_ecmp(net)
    assert r.links["utilisation"].to_numpy() == pytest.approx([0.5] * 4)
    assert sorted(r.paths["gbps"]) == pytest.approx([5, 5])
    assert check_te(net, r).ok


@pytest.mark.parametrize(("tolerance", "n_paths"), [(0.05, 2), (0.0, 1)])
def test_latency_tolerance_decides_equal_cost(tolerance: float, n_paths: int) -> None:
    net = square(lat_second=1.02)
    r = simulate_ecmp(net, tolerance_ms=tolerance)
    assert len(r.paths) == n_paths
    assert r.summary.mlu == pytest.approx(0.5 if n_paths == 2 else 1.0)


def test_hop_metric_ignores_latency() -> None:
    net = square(lat_second=7.0)
    assert simulate_ecmp(net, metric="latency").summary.mlu == pytest.approx(1.0)
    r = simulate_ecmp(net, metric="hops")
    assert r.summary.mlu == pytest.approx(0.5)
    # expected latency: half at 2 ms, half at 8 ms; worst 8 ms
    assert r.demands.loc["ad", "latency_ms"] == pytest.approx(5.0)
    assert r.demands.loc["ad", "worst_latency_ms"] == pytest.approx(8.0)


def test_ecmp_reports_slo_misses_but_carries_traffic() -> None:
    net = square(lat_second=7.0, slo_rtt_ms=5.0)
    r = simulate_ecmp(net, metric="hops")
    assert r.summary.slo_violations == 1 and r.summary.slo_enforced is False
    assert r.demands.loc["ad", "carried_gbps"] == pytest.approx(10)
    assert check_te(net, r).ok


def test_ecmp_is_never_better_than_min_mlu() -> None:
    net = grid()
    ecmp = simulate_ecmp(net)
    te = solve_te(net, TEOptions(objective="min-mlu", formulation="edge"))
    assert ecmp.summary.mlu >= te.summary.mlu - 1e-9
    assert check_te(net, ecmp).ok
    # the propagated latency figures equal the path-table ones
    assert ecmp.summary.paths_complete
    assert ecmp.summary.carried_gbps == pytest.approx(net.demands["demand_gbps"].sum())


def test_ecmp_through_solve_te_and_disconnected(triangle: Network) -> None:
    net = triangle.add_site("Z", lon=9, lat=9, region="NA")
    demands = triangle.demands.copy()
    demands.loc["dz"] = demands.loc["d1"]
    demands.loc["dz", "dst"] = "Z"
    r = solve_te(net.copy_with(demands=demands), TEOptions(objective="ecmp"))
    assert r.demands.loc["dz", "reason"] == "disconnected"
    assert r.summary.mlu == pytest.approx(1.5)  # all 15 Gbps on the direct 1 ms link
    assert r.summary.overloaded is True
