"""The source-aggregated min-MLU engine (:mod:`backbone.solver.te.srcflow`): its bound never exceeds the
full path LP optimum, it converges to that optimum, and its answer passes the independent checker, also
when the paths table is capped."""

from __future__ import annotations

import time

import numpy as np
import pytest

from backbone.model import Network
from backbone.solver.checks.te import check_te
from backbone.solver.te import TEOptions, solve_te
from backbone.solver.te.instance import build_instance
from backbone.solver.te.srcflow import decompose, source_flow_mlu
from tests.nets import ALL_PATHS_K, make_network, pendant_chain_net, random_connected, random_te_net


def _net(seed: int) -> Network:
    """Random networks with parallel links, and ones with chains, pendant sites and a transit leaf."""
    return random_te_net(seed, n=8, m=14) if seed % 2 else pendant_chain_net(seed)


def _gravity_net(seed: int, n: int = 40, m: int = 80) -> Network:
    """A random connected network of ``n`` sites and ``m`` links (80-120 Gbps) with all-pairs gravity demand:
    many sources, like the world backbone."""
    rng = np.random.default_rng(seed)
    sites, edges = random_connected(rng, n, m)
    links = [{"id": f"l{j}", "site_a": f"s{a}", "site_b": f"s{b}", "capacity_gbps": float(rng.integers(80, 120)),
              "latency_ms": float(rng.integers(1, 6))} for j, (a, b) in enumerate(edges)]
    mass = rng.uniform(1, 10, n)
    demands = [{"id": f"d{i}-{j}", "src": f"s{i}", "dst": f"s{j}", "traffic_class": "bulk",
                "demand_gbps": float(mass[i] * mass[j] / 10)} for i in range(n) for j in range(n) if i != j]
    return make_network(sites, links, demands, name=f"gravity-{seed}")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
def test_bound_is_valid_and_the_flows_carry_every_demand(seed: int) -> None:
    net = _net(seed)
    optimum = solve_te(net, TEOptions(objective="min-mlu", k_paths=ALL_PATHS_K, method="exact")).summary.objective_value
    inst = build_instance(net)
    dem = np.flatnonzero(inst.routable)
    sf = source_flow_mlu(inst, dem, time.perf_counter() + 30.0, max_iterations=300)
    assert 0 < sf.lower_bound <= optimum * (1 + 1e-9)
    assert optimum <= sf.mlu * (1 + 1e-9)
    # the flows carry every demand: per source, outflow - inflow at the source is its total traffic
    load = sf.arc_load
    assert sf.mlu == pytest.approx(float((load / inst.arc_capacity_gbps).max()))
    out = np.zeros((len(sf.sources), inst.n_sites))
    for i in range(len(sf.sources)):
        np.add.at(out[i], inst.arc_tail, sf.flow[i])
        np.add.at(out[i], inst.arc_head, -sf.flow[i])
    sent = out[np.arange(len(sf.sources)), sf.sources]
    np.testing.assert_allclose(sent, np.add.reduceat(sf.pair_gbps, sf.pair_ptr[:-1]), rtol=1e-9)
    # paths: every pair's traffic, loads never above the flows' (cycles cancelled)
    ps = decompose(inst, sf)
    np.testing.assert_allclose(np.bincount(ps.pair, weights=ps.gbps), sf.pair_gbps, rtol=1e-12)
    assert (ps.arc_load(inst.n_arcs) <= load + 1e-9 * max(1.0, load.max())).all()


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "within"), [(0, 0.01), (1, 0.01), (2, 0.05), (3, 0.05)])
def test_converges_to_the_edge_lp_optimum(seed: int, within: float) -> None:
    """Against the exact source-aggregated edge LP (every path): within 1 % in 300 iterations where the
    optimum has few tight links; where it splits traffic finely over many (seeds 2 and 3), Frank-Wolfe's
    slow tail leaves 1.7-2.4 % after 300 iterations, asserted at 5 %."""
    net = _gravity_net(seed)
    optimum = solve_te(net, TEOptions(objective="min-mlu", formulation="edge", method="exact")).summary.objective_value
    inst = build_instance(net)
    sf = source_flow_mlu(inst, np.flatnonzero(inst.routable), time.perf_counter() + 60.0, max_iterations=300)
    assert sf.lower_bound <= optimum * (1 + 1e-9)
    assert optimum <= sf.mlu * (1 + 1e-9)
    assert sf.mlu <= optimum * (1 + within)
    assert (sf.mlu - sf.lower_bound) / sf.mlu <= 2 * within


@pytest.mark.parametrize("seed", range(4))
def test_colgen_above_the_master_threshold_runs_source_flows(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Above MASTER_MAX_DEMANDS, ``--method colgen`` is the source-flow engine: feasible per the checker, its
    bound valid, its MLU within 1 % of the full path LP optimum."""
    import backbone.solver.te.colgen as colgen

    monkeypatch.setattr(colgen, "MASTER_MAX_DEMANDS", 1)
    net = _net(seed)
    optimum = solve_te(net, TEOptions(objective="min-mlu", k_paths=ALL_PATHS_K, method="exact")).summary.mlu
    r = solve_te(net, TEOptions(objective="min-mlu", k_paths=1, method="colgen", time_limit_s=20))
    s = r.summary
    assert s.method == "colgen" and s.colgen.engine == "source_flows"
    assert s.status in ("optimal", "feasible")
    assert check_te(net, r).ok
    assert s.lower_bound <= optimum * (1 + 1e-9)
    assert optimum <= s.mlu * (1 + 1e-9)
    assert s.mlu <= optimum * 1.01 and s.gap <= 0.01
    assert s.paths_complete is not False and s.paths_table.rows == s.paths_table.paths
    assert r.demands["latency_ms"].notna().all()


def test_capped_paths_table_says_so_and_still_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past PATH_TABLE_MAX_ROWS the paths table lists the largest demands only; the summary says so, the
    latencies still cover every demand and the checker accepts the result."""
    import backbone.solver.te.colgen as colgen
    import backbone.solver.te.srcflow as srcflow

    monkeypatch.setattr(colgen, "MASTER_MAX_DEMANDS", 1)
    monkeypatch.setattr(srcflow, "PATH_TABLE_MAX_ROWS", 20)
    net = _net(1)
    r = solve_te(net, TEOptions(objective="min-mlu", k_paths=1, method="colgen", time_limit_s=20))
    s = r.summary
    assert s.paths_complete is False
    assert 0 < len(r.paths) <= 20 and s.paths_table.rows == len(r.paths) < s.paths_table.paths
    assert any("paths table lists" in n for n in s.notes)
    listed = set(r.paths["demand"])
    biggest = net.demands["demand_gbps"].idxmax()
    assert biggest in listed
    assert r.demands["latency_ms"].notna().all() and (r.demands["paths_used"] > 0).all()
    assert s.weighted_latency_ms > 0
    assert check_te(net, r).ok


def test_time_limit_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny time limit still gives a feasible routing with a valid bound, within the limit."""
    import backbone.solver.te.colgen as colgen

    monkeypatch.setattr(colgen, "MASTER_MAX_DEMANDS", 1)
    net = _net(3)
    t0 = time.perf_counter()
    r = solve_te(net, TEOptions(objective="min-mlu", k_paths=1, method="colgen", time_limit_s=0.5))
    assert time.perf_counter() - t0 < 5.0
    assert check_te(net, r).ok
    assert r.summary.lower_bound is not None and r.summary.lower_bound <= r.summary.mlu


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2))
def test_warm_start_after_a_link_failure_matches_a_cold_solve(seed: int) -> None:
    """A failure's solve warm-started from the intact flows reaches the cold solve's MLU within the gap, its
    bound stays below the failed network's exact optimum, and its flows avoid the failed link."""
    from backbone.solver.te.srcflow import fail_links

    net = _gravity_net(seed, n=14, m=26)
    inst = build_instance(net)
    tol = 0.01
    intact = source_flow_mlu(inst, np.flatnonzero(inst.routable), time.perf_counter() + 30.0, gap_tol=tol)
    link = int(np.argmax(intact.arc_load[:inst.n_links] + intact.arc_load[inst.n_links:]))  # the busiest link
    failed = fail_links(inst, np.array([link]))
    dem = np.flatnonzero(failed.routable)
    cold = source_flow_mlu(failed, dem, time.perf_counter() + 30.0, gap_tol=tol)
    warm = source_flow_mlu(failed, dem, time.perf_counter() + 30.0, gap_tol=tol, warm=intact)
    failed_net = net.copy_with(links=net.links.drop(index=net.links.index[link]), demands=net.demands.iloc[dem])
    optimum = solve_te(failed_net, TEOptions(objective="min-mlu", k_paths=ALL_PATHS_K, method="exact")).summary.objective_value
    for sf in (cold, warm):
        assert sf.lower_bound <= optimum * (1 + 1e-9) <= sf.mlu * (1 + 1e-9)
        assert (sf.mlu - sf.lower_bound) <= tol * sf.mlu * (1 + 1e-9)
        assert np.abs(sf.flow[:, [link, link + inst.n_links]]).max() == 0.0
    assert warm.mlu == pytest.approx(cold.mlu, rel=tol)
    # every demand is carried: per source, the net outflow at the source is its traffic
    out = np.zeros((len(warm.sources), inst.n_sites))
    for i in range(len(warm.sources)):
        np.add.at(out[i], inst.arc_tail, warm.flow[i])
        np.add.at(out[i], inst.arc_head, -warm.flow[i])
    np.testing.assert_allclose(out[np.arange(len(warm.sources)), warm.sources],
                               np.add.reduceat(warm.pair_gbps, warm.pair_ptr[:-1]), rtol=1e-9)


def test_te_impact_is_unknown_when_the_source_flow_engine_routed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``backbone te`` at the source-flow engine's scale: an overloaded network's shortfall is not measured (no
    max-throughput LP there), so the impact's unmet traffic is unknown, never 0, and a note says so; as in the
    failure sweeps' ``srcflow`` method."""
    import math

    import backbone.solver.failures.impact as impact
    import backbone.solver.te.colgen as colgen
    from backbone.solver.tasks.te import TEOptions, run_te_task

    monkeypatch.setattr(colgen, "MASTER_MAX_DEMANDS", 1)
    net = _net(2).scale_demand(50.0)  # overloaded
    # below the world-scale threshold the shortfall is still measured, over every path
    small = run_te_task(net, TEOptions(method="colgen", time_limit_s=30), None, lambda f, m: None).te.summary
    assert small.colgen.engine == "source_flows" and small.impact.unmet_known is True
    assert small.impact.unmet_gbps > 0 and small.impact.solves == ["min-mlu", "max-throughput"]
    monkeypatch.setattr(impact, "AUTO_COLGEN_MIN_DEMANDS", 1)  # this network now counts as world scale
    out = run_te_task(net, TEOptions(method="colgen", time_limit_s=30), None, lambda f, m: None)
    s = out.te.summary
    assert s.colgen.engine == "source_flows" and s.mlu > 1
    imp = s.impact
    assert imp is not None and imp.overloaded and imp.unmet_known is False and math.isnan(imp.unmet_gbps)
    assert "source-flow engine" in imp.definition and imp.solves == ["min-mlu"]
    assert any(n.startswith("impact: the traffic that cannot be carried") for n in s.notes)
