"""The survivable design's true lower bound against the brute-force optimum of the planning problem.

On tiny networks every design (module counts of every link and candidate route) is enumerated and each checked
for survivability by an exact LP per state (arc flows per demand, every path, the ceilings), written here apart
from the code under test; the cheapest survivable design is the true optimum."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from scipy.optimize import linprog

from backbone.model import Network
from backbone.solver.design.survivable.iterate import SurviveOptions, design_survivable
from backbone.solver.failures import FailureOptions
from backbone.validate import build_network
from tests import nets

SERIAL = FailureOptions(engine="serial")
TOL = 1e-6


def _link(i: str, a: str, b: str, cap: float, max_cap: float, cost: float) -> dict[str, Any]:
    return {"id": i, "site_a": a, "site_b": b, "capacity_gbps": cap, "max_capacity_gbps": max_cap,
            "module_gbps": 100, "module_cost_usd": cost, "length_km": 100, "latency_ms": 1}


def _ring(demand_gbps: float, max_cap: float, module_cost_usd: float,
          chord: tuple[float, float, int] | None) -> Network:
    """A 4-ring A-B-C-D of 100 Gbps links (room up to ``max_cap``), ``demand_gbps`` A->C, and optionally the chord
    A-C as a candidate ``(fixed_cost_usd, module_cost_usd, max_modules)``."""
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 1), nets.site("C", 2, 0), nets.site("D", 1, -1)]
    links = [_link(i, a, b, 100, max_cap, module_cost_usd)
             for i, a, b in (("AB", "A", "B"), ("BC", "B", "C"), ("CD", "C", "D"), ("DA", "D", "A"))]
    tables: dict[str, Any] = {"sites": sites, "links": links, "demands": [
        {"id": "a-c", "src": "A", "dst": "C", "demand_gbps": demand_gbps, "traffic_class": "bulk"}]}
    if chord is not None:
        fixed, cost, most = chord
        tables["candidates"] = [{"id": "chord", "name": "chord", "site_a": "A", "site_b": "C", "kind": "terrestrial",
                                 "link_kind": "terrestrial", "length_km": 100, "latency_ms": 1, "module_gbps": 100,
                                 "module_cost_usd": cost, "fixed_cost_usd": fixed, "max_modules": most,
                                 "lead_time_quarters": 2}]
    return build_network(tables, name="ring")


def _carries(sites: list[str], ends: list[tuple[str, str]], cap_gbps: np.ndarray, demands: list[tuple[str, str, float]],
             ceiling: float) -> bool:
    """Whether every demand fits: arc flows per demand (both directions of each link, capacity per direction
    ``ceiling * cap``), conservation at every site; an LP feasibility check."""
    pos = {s: i for i, s in enumerate(sites)}
    arcs = [(pos[a], pos[b], k) for k, (a, b) in enumerate(ends)] + [(pos[b], pos[a], k) for k, (a, b) in enumerate(ends)]
    n_arc, n_dem, n_site = len(arcs), len(demands), len(sites)
    a_eq = np.zeros((n_dem * n_site, n_dem * n_arc))
    b_eq = np.zeros(n_dem * n_site)
    for d, (s, t, gbps) in enumerate(demands):
        for j, (u, v, _) in enumerate(arcs):
            a_eq[d * n_site + u, d * n_arc + j] += 1
            a_eq[d * n_site + v, d * n_arc + j] -= 1
        b_eq[d * n_site + pos[s]] += gbps
        b_eq[d * n_site + pos[t]] -= gbps
    a_ub = np.zeros((n_arc, n_dem * n_arc))
    for d in range(n_dem):
        a_ub[np.arange(n_arc), d * n_arc + np.arange(n_arc)] = 1
    b_ub = ceiling * np.array([cap_gbps[k] for _, _, k in arcs])
    res = linprog(np.zeros(n_dem * n_arc), A_ub=a_ub, b_ub=b_ub + TOL, A_eq=a_eq, b_eq=b_eq, method="highs")
    return bool(res.status == 0)


def brute_force_optimum(net: Network, ceiling: float, failure_ceiling: float) -> float:
    """The cheapest design (whole modules on every link and candidate, fixed cost when a candidate has any) that
    carries the intact state within ``ceiling`` and every single-link failure within ``failure_ceiling``."""
    links, cands = net.links, net.candidates
    sites = [str(s) for s in net.sites.index]
    ends = [(str(a), str(b)) for a, b in zip(links["site_a"], links["site_b"], strict=True)]
    ends += [(str(a), str(b)) for a, b in zip(cands["site_a"], cands["site_b"], strict=True)]
    base_cap = np.r_[links["capacity_gbps"].to_numpy(float), np.zeros(len(cands))]
    mod = np.r_[links["module_gbps"].to_numpy(float), cands["module_gbps"].to_numpy(float)]
    unit = np.r_[links["module_cost_usd"].to_numpy(float), cands["module_cost_usd"].to_numpy(float)]
    fixed = np.r_[np.zeros(len(links)), cands["fixed_cost_usd"].to_numpy(float)]
    most = np.r_[np.floor((links["max_capacity_gbps"].to_numpy(float) - links["capacity_gbps"].to_numpy(float))
                          / links["module_gbps"].to_numpy(float) + 1e-9), cands["max_modules"].to_numpy(float)]
    demands = [(str(r.src), str(r.dst), float(r.demand_gbps)) for r in net.demands.itertuples()]
    best = np.inf
    for y in itertools.product(*[range(int(m) + 1) for m in most]):
        ya = np.array(y, float)
        cost = float(unit @ ya + fixed[ya > 0].sum())
        if cost >= best:
            continue
        cap = base_cap + mod * ya
        ok = _carries(sites, ends, cap, demands, ceiling) and all(
            _carries(sites, ends, np.where(np.arange(len(cap)) == k, 0.0, cap), demands, failure_ceiling)
            for k in range(len(cap)))
        if ok:
            best = cost
    return best


def _design(net: Network) -> Any:
    return design_survivable(net, SurviveOptions(survive="link"), sweep_options=SERIAL)


@pytest.mark.slow
def test_bound_below_brute_force_optimum_below_design_cost() -> None:
    net = _ring(150, 100, 50, (1000, 10, 2))
    res = _design(net)
    optimum = brute_force_optimum(net, 0.8, 1.0)
    assert optimum == pytest.approx(1010.0)  # the chord with one module
    assert res.bound.status == "optimal" and res.lower_bound_usd is not None
    assert res.lower_bound_usd <= optimum + TOL <= res.cost_usd + 2 * TOL
    assert res.gap == pytest.approx((res.cost_usd - res.lower_bound_usd) / res.cost_usd)
    summary = res.summary()
    assert summary["lower_bound_usd"] == res.lower_bound_usd and summary["bound"]["bound_usd"] == pytest.approx(
        res.lower_bound_usd)


def test_a_route_the_heuristic_did_not_open_is_cheaper_and_the_bound_stays_below_it() -> None:
    """Every demand has a path without the chord, so the design opens no candidate route and upgrades the ring
    (1,000 USD per module, four modules). Building the chord (100 + 10 per module) is far cheaper: the restricted
    optimum exceeds the true optimum, so reporting it as the bound would claim a bound above the optimum."""
    net = _ring(150, 200, 1000, (100, 10, 2))
    res = _design(net)
    optimum = brute_force_optimum(net, 0.8, 1.0)
    assert optimum == pytest.approx(110.0)
    restricted = res.restricted_optimum
    assert "0 candidate routes (of 1)" in restricted.restriction
    assert restricted.bound_usd > optimum + 1.0  # the restricted figure is no lower bound
    assert res.cost_usd == pytest.approx(restricted.cost_usd) and res.cost_usd > optimum
    assert res.lower_bound_usd is not None and res.lower_bound_usd <= optimum + TOL < restricted.bound_usd
    assert res.status != "optimal"  # the gap to the true bound is wide


@pytest.mark.slow
def test_bound_is_tight_when_the_lp_is_integral() -> None:
    """200 Gbps A->C over a ring of 100 Gbps links (room to 300): each cut needs the far side at 200 Gbps, so every
    link needs exactly one module in the LP too; no candidate."""
    net = _ring(200, 300, 50, None)
    res = _design(net)
    optimum = brute_force_optimum(net, 0.8, 1.0)
    assert optimum == pytest.approx(200.0)
    assert res.cost_usd == pytest.approx(optimum)
    assert res.lower_bound_usd == pytest.approx(optimum, rel=1e-6)
    assert res.gap == pytest.approx(0.0, abs=1e-6) and res.status == "optimal"


@pytest.mark.slow
def test_bound_time_limit_zero_skips_the_bound() -> None:
    net = _ring(150, 100, 50, (1000, 10, 2))
    res = design_survivable(net, SurviveOptions(survive="link", bound_time_limit_s=0), sweep_options=SERIAL)
    assert res.lower_bound_usd is None and res.gap is None and res.bound.status == "skipped"
    assert res.status == "feasible" and res.restricted_optimum.bound_usd == pytest.approx(1010.0)


def test_staged_lps_bound_no_higher_than_the_joint_lp(monkeypatch: pytest.MonkeyPatch) -> None:
    """The LPs over the intact state with one failure state each bound no higher than the joint LP; when the
    joint LP is solved after them (not first), the result is the joint optimum, status ``optimal``."""
    from backbone.solver.design.survivable import bound as survive_bound
    from backbone.solver.design.survivable.model import full_network

    net = _ring(150, 200, 1000, (100, 10, 2))
    full = full_network(net)
    all_routable = np.ones(len(net.demands), bool)
    states = [survive_bound.BoundState("intact", (), 0.8, all_routable)] + [
        survive_bound.BoundState(f"link:{x}", (x,), 1.0, all_routable) for x in ("AB", "BC", "CD", "DA", "chord")]
    joint = survive_bound.survive_lower_bound(net, full, states, 30.0)
    singles = [survive_bound.survive_lower_bound(net, full, [states[0], s], 30.0) for s in states[1:]]
    assert joint.status == "optimal" and joint.states == len(states) and joint.bound_usd is not None
    assert max(s.bound_usd or 0.0 for s in singles) <= joint.bound_usd + TOL
    assert joint.bound_usd <= brute_force_optimum(net, 0.8, 1.0) + TOL
    monkeypatch.setattr(survive_bound, "JOINT_FIRST_COLUMNS", 0)
    staged = survive_bound.survive_lower_bound(net, full, states, 30.0)
    assert staged.status == "optimal" and staged.bound_usd == pytest.approx(joint.bound_usd)
