"""The survivable design's second true lower bound, the path LP with the latency SLOs kept
(:mod:`backbone.solver.design.survivable.slo_bound`), against formulations written here apart from the code under
test.

* Brute force: on small networks with SLOs and 2-4 failure states every integral design (whole modules on every
  link and candidate, a candidate's fixed cost when it has any) is enumerated, and each state is checked by a scipy
  LP over every path within each demand's SLO (enumerated by a depth-first search here); the cheapest design that
  carries every state is the true optimum, and the bound must not exceed it.
* The LP itself: on random networks the bound's value equals an explicit scipy LP over every enumerated admissible
  path, with the model's rows written out afresh (capacity, excused allowance ``A_s``, strong build per source).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy.optimize import linprog

from backbone.model import Network
from backbone.solver.design.summary import DesignBound
from backbone.solver.design.survivable.bound import BoundState, survive_lower_bound
from backbone.solver.design.survivable.iterate import SurviveOptions, design_survivable
from backbone.solver.design.survivable.model import Commodities, full_network, state_block
from backbone.solver.design.survivable.slo_bound import (
    ARC_FLOW_METHOD,
    SLO_METHOD,
    better_bound,
    slo_lower_bound,
)
from backbone.solver.failures import FailureOptions
from backbone.validate import build_network
from tests import nets

SERIAL = FailureOptions(engine="serial")
TOL = 1e-6


@dataclass(frozen=True)
class State:
    """A state as the test states it: failed link ids, utilisation ceiling, Gbps that may go unmet (``A_s``)."""

    failed: tuple[str, ...]
    ceiling: float
    allowance_gbps: float = 0.0


def _link(i: str, a: str, b: str, latency_ms: float, module_cost_usd: float, max_cap: float = 300.0) -> dict[str, Any]:
    return {"id": i, "site_a": a, "site_b": b, "capacity_gbps": 100, "max_capacity_gbps": max_cap, "module_gbps": 100,
            "module_cost_usd": module_cost_usd, "length_km": 100, "latency_ms": latency_ms}


def _candidate(i: str, a: str, b: str, latency_ms: float, fixed: float, cost: float, most: int) -> dict[str, Any]:
    return {"id": i, "name": i, "site_a": a, "site_b": b, "kind": "terrestrial", "link_kind": "terrestrial",
            "length_km": 100, "latency_ms": latency_ms, "module_gbps": 100, "module_cost_usd": cost,
            "fixed_cost_usd": fixed, "max_modules": most, "lead_time_quarters": 2}


def _demand(i: str, a: str, b: str, gbps: float, slo_rtt_ms: float | None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": i, "src": a, "dst": b, "demand_gbps": gbps, "traffic_class": "bulk"}
    if slo_rtt_ms is not None:
        out["slo_rtt_ms"] = slo_rtt_ms
    return out


def detour_network() -> Network:
    """A->C, 150 Gbps, within 10 ms RTT (5 ms one way): the direct link AC (2 ms, 100 per module) and the candidate
    AC2 (2.5 ms, fixed 50, 10 per module) are within the SLO; the detour A-B-C (16 ms, 1 per module) is cheap and
    too slow. Optimum: AC2 with two modules (carries A->C when AC fails) and one module on AC (when AC2 fails): 170."""
    sites = [nets.site(s, i, 0) for i, s in enumerate("ABC")]
    links = [_link("AC", "A", "C", 2.0, 100.0), _link("AB", "A", "B", 8.0, 1.0, 400.0),
             _link("BC", "B", "C", 8.0, 1.0, 400.0)]
    return build_network({"sites": sites, "links": links, "demands": [_demand("a-c", "A", "C", 150, 10.0)],
                          "candidates": [_candidate("AC2", "A", "C", 2.5, 50.0, 10.0, 3)]}, name="detour")


DETOUR_STATES = [State((), 0.8), State(("AC",), 1.0), State(("AC2",), 1.0), State(("AB",), 1.0)]


def random_network(seed: int) -> Network:
    """Six sites on a ring with two chords, two candidate routes, three demands (SLO: none, or 1.0-1.6 times the
    lowest latency over the network with every candidate), random latencies and costs; every module 100 Gbps."""
    rng = np.random.default_rng(seed)
    names = [f"S{i}" for i in range(6)]
    sites = [nets.site(s, float(i), float(i % 2)) for i, s in enumerate(names)]
    pairs = [(i, (i + 1) % 6) for i in range(6)] + [(0, 3), (1, 4)]
    links = [_link(f"L{k}", names[a], names[b], float(rng.uniform(1, 5)), float(rng.integers(1, 20)), 200.0)
             for k, (a, b) in enumerate(pairs)]
    cands = [_candidate(f"C{k}", names[a], names[b], float(rng.uniform(1, 4)), float(rng.integers(20, 60)),
                        float(rng.integers(5, 30)), 2) for k, (a, b) in enumerate([(0, 2), (2, 5)])]
    tables: dict[str, Any] = {"sites": sites, "links": links, "candidates": cands, "demands": []}
    base = build_network(tables, name=f"random-{seed}")
    full = full_network(base)
    demands = []
    for k in range(3):
        a, b = rng.choice(6, size=2, replace=False)
        lowest = min(sum(_latency(full)[j % len(full.links)] for j in p)
                     for p in admissible(full, (), names[a], names[b], np.inf))
        slo = None if rng.random() < 0.3 else float(2 * lowest * rng.uniform(1.0, 1.6) + 1e-3)
        demands.append(_demand(f"d{k}", names[a], names[b], float(rng.integers(30, 120)), slo))
    return build_network({**tables, "demands": demands}, name=f"random-{seed}")


def random_states(net: Network, seed: int) -> list[State]:
    """The intact state and three single-link failures (existing or candidate), some with an allowance."""
    rng = np.random.default_rng(1000 + seed)
    ids = [*map(str, net.links.index), *map(str, net.candidates.index)]
    failed = rng.choice(len(ids), size=3, replace=False)
    return [State((), 0.8, float(rng.choice([0.0, 20.0])))] + [
        State((ids[i],), 1.0, float(rng.choice([0.0, 30.0]))) for i in failed]


# ------------------------------------------------------------------------------------------------ the test's own model
def _latency(full: Network) -> np.ndarray:
    return full.links["latency_ms"].to_numpy(float)


def admissible(full: Network, failed: tuple[str, ...], src: str, dst: str, limit_ms: float) -> list[list[int]]:
    """Every loopless path ``src -> dst`` of ``full`` without the ``failed`` links whose latency is within
    ``limit_ms``, as arc lists (arc ``j`` is link ``j`` from ``site_a`` to ``site_b``, ``L + j`` the reverse); a
    depth-first search."""
    L = len(full.links)
    a = [str(x) for x in full.links["site_a"]]
    b = [str(x) for x in full.links["site_b"]]
    lat = _latency(full)
    up = [str(i) not in failed for i in full.links.index]
    out_arcs: dict[str, list[tuple[int, str]]] = {}
    for j in range(L):
        if up[j]:
            out_arcs.setdefault(a[j], []).append((j, b[j]))
            out_arcs.setdefault(b[j], []).append((L + j, a[j]))
    found: list[list[int]] = []

    def walk(at: str, seen: set[str], arcs: list[int], total: float) -> None:
        if at == dst:
            found.append(list(arcs))
            return
        for arc, nxt in out_arcs.get(at, []):
            t = total + lat[arc % L]
            if nxt not in seen and t <= limit_ms + 1e-9:
                walk(nxt, seen | {nxt}, [*arcs, arc], t)

    walk(src, {src}, [], 0.0)
    return found


def _paths_of(full: Network, state: State) -> list[list[list[int]]]:
    """Per demand of ``full``: its admissible paths in the state."""
    d = full.demands
    return [admissible(full, state.failed, str(r.src), str(r.dst),
                       float(r.slo_rtt_ms) / 2 if np.isfinite(r.slo_rtt_ms) else np.inf) for r in d.itertuples()]


def _link_data(net: Network, full: Network) -> dict[str, np.ndarray]:
    """Per link of ``full`` (existing first, then candidates): installed capacity, module Gbps and cost, most
    modules, fixed cost."""
    n_old, cands = len(net.links), net.candidates
    is_cand = np.arange(len(full.links)) >= n_old
    cap = np.where(is_cand, 0.0, full.links["capacity_gbps"].to_numpy(float))
    mod = full.links["module_gbps"].to_numpy(float)
    most = np.where(is_cand, cands["max_modules"].reindex(full.links.index).to_numpy(float),
                    np.floor((full.links["max_capacity_gbps"].to_numpy(float) - cap) / mod + 1e-9))
    fixed = np.where(is_cand, cands["fixed_cost_usd"].reindex(full.links.index).fillna(0.0).to_numpy(float), 0.0)
    return {"cap": cap, "mod": mod, "cost": full.links["module_cost_usd"].to_numpy(float), "most": most,
            "fixed": fixed, "is_cand": is_cand}


def _state_carries(paths: list[list[list[int]]], gbps: np.ndarray, cap_gbps: np.ndarray, state: State) -> bool:
    """Whether the state fits: path flows over every admissible path, each demand with a path carried but at most
    ``A_s`` Gbps in all, arc loads within ``ceiling * capacity`` (a failed link has no paths over it)."""
    L = len(cap_gbps)
    cols = [(d, p) for d, ps in enumerate(paths) for p in ps]
    routable = [d for d, ps in enumerate(paths) if ps and gbps[d] > 0]
    n_f, n_u = len(cols), len(routable)
    a_eq = np.zeros((n_u, n_f + n_u))
    for k, (d, _) in enumerate(cols):
        if d in routable:
            a_eq[routable.index(d), k] = 1.0
    a_eq[np.arange(n_u), n_f + np.arange(n_u)] = 1.0
    a_ub = np.zeros((2 * L + 1, n_f + n_u))
    for k, (_, p) in enumerate(cols):
        a_ub[p, k] += 1.0
    a_ub[2 * L, n_f:] = 1.0
    b_ub = np.r_[state.ceiling * np.tile(cap_gbps, 2) + TOL, state.allowance_gbps + TOL]
    res = linprog(np.zeros(n_f + n_u), A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=gbps[routable],
                  bounds=[(0, None)] * n_f + [(0, gbps[d]) for d in routable], method="highs")
    return bool(res.status == 0)


def brute_force_optimum(net: Network, states: list[State]) -> float:
    """The cheapest integral design that carries every state (every path within the SLOs)."""
    full = full_network(net)
    data = _link_data(net, full)
    gbps = full.demands["demand_gbps"].to_numpy(float)
    paths = [_paths_of(full, st) for st in states]
    designs = np.array(list(itertools.product(*[range(int(m) + 1) for m in data["most"]])), float)
    costs = designs @ data["cost"] + (designs > 0) @ data["fixed"]
    for i in np.argsort(costs, kind="stable"):  # cheapest first: the first that carries every state is optimal
        cap = data["cap"] + data["mod"] * designs[i]
        if all(_state_carries(p, gbps, cap, st) for p, st in zip(paths, states, strict=True)):
            return float(costs[i])
    return float("inf")


def explicit_lp(net: Network, states: list[State]) -> float:
    """The LP relaxation written out over every enumerated admissible path, per demand (no commodities): modules
    ``y`` and builds ``b`` continuous, ``y_c <= Y_c b_c``, demand rows with unmet ``u``, ``sum_d u_{s,d} <= A_s``,
    capacity, and the strong build row of every state, source site and fixed-cost candidate arc."""
    full = full_network(net)
    data = _link_data(net, full)
    L = len(full.links)
    d = full.demands
    gbps = d["demand_gbps"].to_numpy(float)
    src = [str(x) for x in d["src"]]
    builds = np.flatnonzero(data["is_cand"] & (data["fixed"] > 0))
    cols: list[tuple[int, int, list[int]]] = []  # (state, demand, path)
    unmet: list[tuple[int, int]] = []
    for s, st in enumerate(states):
        for k, ps in enumerate(_paths_of(full, st)):
            if ps and gbps[k] > 0:
                cols += [(s, k, p) for p in ps]
                unmet.append((s, k))
    n_y, n_b, n_f, n_u = L, len(builds), len(cols), len(unmet)
    f0, u0 = n_y + n_b, n_y + n_b + n_f
    n = u0 + n_u
    c = np.r_[data["cost"], data["fixed"][builds], np.zeros(n_f + n_u)]
    eq, b_eq = [], []
    for i, (s, k) in enumerate(unmet):
        row = np.zeros(n)
        row[[f0 + j for j, col in enumerate(cols) if col[:2] == (s, k)]] = 1.0
        row[u0 + i] = 1.0
        eq.append(row)
        b_eq.append(gbps[k])
    ub, b_ub = [], []
    for s, st in enumerate(states):
        for arc in range(2 * L):
            row = np.zeros(n)
            row[[f0 + j for j, col in enumerate(cols) if col[0] == s and arc in col[2]]] = 1.0
            row[arc % L] = -st.ceiling * data["mod"][arc % L]
            ub.append(row)
            b_ub.append(st.ceiling * data["cap"][arc % L])
        row = np.zeros(n)
        row[[u0 + i for i, (s2, _) in enumerate(unmet) if s2 == s]] = 1.0
        ub.append(row)
        b_ub.append(st.allowance_gbps)
        for o in sorted(set(src)):
            total = sum(gbps[k] for s2, k in unmet if s2 == s and src[k] == o)
            for bi, link in enumerate(builds):
                for arc in (link, link + L):
                    row = np.zeros(n)
                    row[[f0 + j for j, col in enumerate(cols) if col[0] == s and src[col[1]] == o
                         and arc in col[2]]] = 1.0
                    row[n_y + bi] = -total
                    ub.append(row)
                    b_ub.append(0.0)
    for bi, link in enumerate(builds):
        row = np.zeros(n)
        row[link], row[n_y + bi] = 1.0, -data["most"][link]
        ub.append(row)
        b_ub.append(0.0)
    bounds = ([(0, m) for m in data["most"]] + [(0, 1)] * n_b + [(0, None)] * n_f
              + [(0, gbps[k]) for _, k in unmet])
    res = linprog(c, A_ub=np.array(ub), b_ub=np.array(b_ub), A_eq=np.array(eq) if eq else None,
                  b_eq=np.array(b_eq) if b_eq else None, bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


# ------------------------------------------------------------------------------------------------ the code under test
def _blocks(net: Network, states: list[State], k_paths: int) -> tuple[Network, list[Any], Commodities]:
    full = full_network(net)
    comm = Commodities.of_network(full)
    blocks = [state_block(full, full, f"s{i}", st.failed, k_paths, st.ceiling, comm) for i, st in enumerate(states)]
    return full, blocks, comm


def slo_bound_of(net: Network, states: list[State], k_paths: int = 1, max_rounds: int = 40) -> Any:
    full, blocks, comm = _blocks(net, states, k_paths)
    return slo_lower_bound(net, full, blocks, comm, [st.allowance_gbps for st in states], 60.0,
                           max_rounds=max_rounds)


def arc_flow_bound_of(net: Network, states: list[State]) -> Any:
    full, blocks, _ = _blocks(net, states, 4)
    return survive_lower_bound(net, full, [BoundState(f"s{i}", st.failed, st.ceiling, b.has_path, st.allowance_gbps)
                                           for i, (st, b) in enumerate(zip(states, blocks, strict=True))], 60.0)


# ------------------------------------------------------------------------------------------------ tests
def test_an_slo_that_forbids_the_cheap_detour_lifts_the_bound_above_the_arc_flow_bound() -> None:
    net = detour_network()
    optimum = brute_force_optimum(net, DETOUR_STATES)
    assert optimum == pytest.approx(170.0)
    slo = slo_bound_of(net, DETOUR_STATES)
    arc = arc_flow_bound_of(net, DETOUR_STATES)
    assert slo.status == "optimal" and arc.status == "optimal"
    assert slo.bound_usd <= optimum + TOL
    assert slo.bound_usd > arc.bound_usd + 50.0  # the arc-flow LP routes over the 1-USD detour
    assert slo.bound_usd == pytest.approx(explicit_lp(net, DETOUR_STATES), rel=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 4, 5])
def test_bound_below_the_brute_force_optimum_on_small_networks_with_slos(seed: int) -> None:
    net = random_network(seed)
    states = random_states(net, seed)
    optimum = brute_force_optimum(net, states)
    bound = slo_bound_of(net, states)
    assert bound.status == "optimal" and bound.bound_usd is not None
    if np.isfinite(optimum):
        assert bound.bound_usd <= optimum + TOL
    arc = arc_flow_bound_of(net, states)
    assert arc.bound_usd is not None and (not np.isfinite(optimum) or arc.bound_usd <= optimum + TOL)


@pytest.mark.parametrize("seed", [4, 6, 8, 9, 10])
def test_column_generation_reaches_the_lp_over_every_enumerated_path(seed: int) -> None:
    """From one path per commodity and state, pricing adds paths until no admissible path prices out: the value is
    the explicit LP's. Stopped after one round, the Lagrangian bound stays below it."""
    net = random_network(seed)
    states = random_states(net, seed)
    expected = explicit_lp(net, states)
    bound = slo_bound_of(net, states, k_paths=1)
    assert bound.status == "optimal"
    assert bound.bound_usd == pytest.approx(expected, rel=1e-6, abs=1e-6)
    early = slo_bound_of(net, states, k_paths=1, max_rounds=1)
    assert early.status in ("round_limit", "optimal") and early.rounds == 1
    assert early.bound_usd is not None and early.bound_usd <= expected + 1e-6 * max(1.0, expected)


def test_a_state_no_design_carries_gives_no_bound() -> None:
    """Random network 3: some state cannot be carried within its allowance by any design (the explicit LP has no
    solution); the bound says so instead of reporting the penalised master's value."""
    net = random_network(3)
    states = random_states(net, 3)
    with pytest.raises(AssertionError, match="infeasible"):
        explicit_lp(net, states)
    bound = slo_bound_of(net, states)
    assert bound.status == "infeasible" and bound.bound_usd is None


def test_the_design_reports_the_better_bound_and_names_it() -> None:
    """End to end on the detour network: the design's bound is the SLO path LP's (it beats the arc-flow LP), at
    most the brute-force optimum over every single-link failure, and ``bound`` holds both."""
    net = detour_network()
    res = design_survivable(net, SurviveOptions(survive="link"), sweep_options=SERIAL)
    states = [State((), 0.8)] + [State((str(x),), 1.0) for x in [*net.links.index, *net.candidates.index]]
    optimum = brute_force_optimum(net, states)
    assert optimum == pytest.approx(170.0)
    assert res.bound.method == SLO_METHOD and res.bound.status == "optimal"
    both = res.bound.bounds
    assert both is not None
    assert both[ARC_FLOW_METHOD].status == "skipped"  # the path LP finished: the arc-flow LP cannot bound higher
    assert res.lower_bound_usd == pytest.approx(both[SLO_METHOD].bound_usd)
    assert res.lower_bound_usd <= optimum + TOL <= res.cost_usd + 2 * TOL
    assert res.summary()["bound"]["method"] == SLO_METHOD


def _bound(bound_usd: float | None, status: str) -> DesignBound:
    return DesignBound(bound_usd=bound_usd, status=status, states=1, seconds=0.0, note="", covers="", model={})


def test_better_bound_keeps_the_higher_valid_bound() -> None:
    arc = _bound(10.0, "partial")
    assert better_bound(arc, _bound(12.0, "optimal")).method == SLO_METHOD
    assert better_bound(arc, _bound(9.0, "optimal")).method == ARC_FLOW_METHOD
    assert better_bound(arc, _bound(None, "time_limit")).bound_usd == 10.0
    none = better_bound(_bound(None, "time_limit"), _bound(None, "skipped"))
    assert none.bound_usd is None and none.method == ARC_FLOW_METHOD
    assert none.bounds is not None and set(none.bounds) == {ARC_FLOW_METHOD, SLO_METHOD}
    # the document: the winner's keys, then both records (the arc-flow one without the path LP's rounds)
    doc = better_bound(arc, _bound(12.0, "optimal")).document()
    assert list(doc) == ["bound_usd", "status", "states", "seconds", "note", "covers", "model", "method", "bounds"]
    assert list(doc["bounds"][ARC_FLOW_METHOD])[-1] == "method"


def test_the_cli_names_the_bound_that_won(tmp_path: Any) -> None:
    """``backbone design --survive link`` on the detour network: the JSON's bound is the SLO path LP's, and the
    human line names it beside the arc-flow bound."""
    import json

    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import save_scenario
    from backbone.solver.plan.report_data import bound_text

    folder = save_scenario(detour_network(), tmp_path / "detour")
    r = CliRunner().invoke(app, ["design", str(folder), "--survive", "link", "--time-limit-s", "30", "--json"])
    assert r.exit_code == 0, r.output
    design = json.loads(r.stdout)
    assert design["bound"]["method"] == SLO_METHOD
    assert design["lower_bound_usd"] == pytest.approx(design["bound"]["bounds"][SLO_METHOD]["bound_usd"])
    assert design["lower_bound_usd"] <= 170.0 + TOL
    text = bound_text(design)
    assert SLO_METHOD in text and f"the other bound: {ARC_FLOW_METHOD}" in text and "skipped" in text
