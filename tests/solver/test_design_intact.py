"""The default ``backbone design`` (``survive`` none): its true lower bound against the brute-force optimum.

On small networks every design (whole modules on every link and candidate route, a candidate's fixed cost when it
has any) is enumerated and checked by a path LP over **every** latency-admissible simple path (paths listed by a
depth-first search here, latency within ``slo_rtt_ms / 2``, capacity ``ceiling x capacity`` per direction; scipy's
``linprog``), written apart from the code under test (no column generation, no latency-limited search). The
cheapest design that carries every demand is the true optimum; the reported bound must not exceed it and the
reported cost must not be below it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.optimize import linprog
from typer.testing import CliRunner

from backbone.model import Network
from backbone.solver.checks.records import IntactDesignCheckRecord
from backbone.solver.design.intact import design_intact
from backbone.solver.design.survivable.iterate import design_survivable
from backbone.solver.design.survivable.options import SurviveOptions
from backbone.validate import build_network
from tests import nets

CEILING = 0.8
TOL = 1e-6


def _link(i: str, a: str, b: str, cap: float, max_cap: float, cost: float, latency_ms: float = 1.0) -> dict[str, Any]:
    return {"id": i, "site_a": a, "site_b": b, "capacity_gbps": cap, "max_capacity_gbps": max_cap,
            "module_gbps": 100, "module_cost_usd": cost, "length_km": 100, "latency_ms": latency_ms}


def _candidate(i: str, a: str, b: str, fixed: float, cost: float, most: int, latency_ms: float = 1.0) -> dict[str, Any]:
    return {"id": i, "name": i, "site_a": a, "site_b": b, "kind": "terrestrial", "link_kind": "terrestrial",
            "length_km": 100, "latency_ms": latency_ms, "module_gbps": 100, "module_cost_usd": cost,
            "fixed_cost_usd": fixed, "max_modules": most, "lead_time_quarters": 2}


def _ring(demand_gbps: float, da_latency_ms: float, slo_rtt_ms: float | None, max_cap: float,
          chord: tuple[float, float] | None) -> Network:
    """The 4-ring A-B-C-D of 100 Gbps links (1 ms each, D-A ``da_latency_ms``; room to ``max_cap``, 50 USD a
    module), ``demand_gbps`` A->C, and optionally the chord A-C (1 ms) as a candidate ``(fixed, module cost)``."""
    sites = [nets.site("A", 0, 0), nets.site("B", 1, 1), nets.site("C", 2, 0), nets.site("D", 1, -1)]
    links = [_link("AB", "A", "B", 100, max_cap, 50), _link("BC", "B", "C", 100, max_cap, 50),
             _link("CD", "C", "D", 100, max_cap, 50), _link("DA", "D", "A", 100, max_cap, 50, da_latency_ms)]
    demand: dict[str, Any] = {"id": "a-c", "src": "A", "dst": "C", "demand_gbps": demand_gbps, "traffic_class": "bulk"}
    if slo_rtt_ms is not None:
        demand["slo_rtt_ms"] = slo_rtt_ms
    tables: dict[str, Any] = {"sites": sites, "links": links, "demands": [demand]}
    if chord is not None:
        tables["candidates"] = [_candidate("chord", "A", "C", chord[0], chord[1], 2)]
    return build_network(tables, name="ring")


def _random_net(seed: int) -> Network:
    """Five sites, a ring plus two chords of random latency, 100 Gbps links with room for one 100 Gbps module at a
    random price, one candidate route, three demands with SLOs that rule out the slowest paths."""
    rng = np.random.default_rng(seed)
    ids = ["A", "B", "C", "D", "E"]
    sites = [nets.site(s, float(i), float((i * 7) % 5)) for i, s in enumerate(ids)]
    pairs = [("A", "B"), ("B", "C"), ("C", "D"), ("D", "E"), ("E", "A"), ("A", "C"), ("B", "D")]
    links = [_link(f"{a}{b}", a, b, 100, 200, float(rng.integers(20, 80)), float(rng.integers(1, 4)))
             for a, b in pairs]
    cand = _candidate("new", "B", "E", float(rng.integers(20, 200)), float(rng.integers(5, 40)), 1,
                      float(rng.integers(1, 3)))
    demands = []
    for k, (s, t) in enumerate([("A", "D"), ("B", "E"), ("C", "E")]):
        demands.append({"id": f"d{k}", "src": s, "dst": t, "demand_gbps": float(rng.integers(60, 160)),
                        "traffic_class": "bulk", "slo_rtt_ms": 2.0 * float(rng.integers(4, 8))})
    return build_network({"sites": sites, "links": links, "demands": demands, "candidates": [cand]}, name=f"r{seed}")


def _simple_paths(n_sites: int, ends: list[tuple[int, int]], src: int, dst: int) -> list[list[tuple[int, int]]]:
    """Every simple path ``src -> dst`` as ``[(link, direction)]`` (direction 0: site_a -> site_b)."""
    out: list[list[tuple[int, int]]] = []

    def walk(v: int, seen: set[int], path: list[tuple[int, int]]) -> None:
        if v == dst:
            out.append(list(path))
            return
        for k, (a, b) in enumerate(ends):
            for u, w, direction in ((a, b, 0), (b, a, 1)):
                if u == v and w not in seen:
                    walk(w, seen | {w}, [*path, (k, direction)])

    walk(src, {src}, [])
    return out


def _carries(net: Network, built: np.ndarray, cap_gbps: np.ndarray, ceiling: float) -> bool:
    """Whether every demand fits over its admissible paths on the links with ``built`` true (path LP)."""
    links, cands = net.links, net.candidates
    pos = {s: i for i, s in enumerate(net.sites.index)}
    ends = [(pos[a], pos[b]) for a, b in zip(links["site_a"], links["site_b"], strict=True)]
    ends += [(pos[a], pos[b]) for a, b in zip(cands["site_a"], cands["site_b"], strict=True)]
    latency = np.r_[links["latency_ms"].to_numpy(float), cands["latency_ms"].to_numpy(float)]
    keep = np.flatnonzero(built)
    sub = [ends[k] for k in keep]
    columns: list[tuple[int, list[tuple[int, int]]]] = []
    for d, row in enumerate(net.demands.itertuples()):
        limit = row.slo_rtt_ms / 2 if np.isfinite(row.slo_rtt_ms) else np.inf
        for path in _simple_paths(len(pos), sub, pos[row.src], pos[row.dst]):
            real = [(int(keep[k]), direction) for k, direction in path]
            if sum(latency[k] for k, _ in real) <= limit + 1e-9:
                columns.append((d, real))
    n_dem, n_arc = len(net.demands), 2 * len(ends)
    if any(all(d != c for c, _ in columns) for d in range(n_dem)):
        return False
    a_eq = np.zeros((n_dem, len(columns)))
    a_ub = np.zeros((n_arc, len(columns)))
    for j, (d, path) in enumerate(columns):
        a_eq[d, j] = 1
        for k, direction in path:
            a_ub[k + direction * len(ends), j] = 1
    b_ub = ceiling * np.r_[cap_gbps, cap_gbps]
    res = linprog(np.zeros(len(columns)), A_ub=a_ub, b_ub=b_ub + TOL, A_eq=a_eq,
                  b_eq=net.demands["demand_gbps"].to_numpy(float), method="highs")
    return bool(res.status == 0)


def brute_force_optimum(net: Network, ceiling: float = CEILING) -> float:
    """The cheapest design (whole modules on every link and candidate, fixed cost when a candidate has any) whose
    intact network carries every demand over its admissible paths within ``ceiling``."""
    links, cands = net.links, net.candidates
    base_cap = np.r_[links["capacity_gbps"].to_numpy(float), np.zeros(len(cands))]
    mod = np.r_[links["module_gbps"].to_numpy(float), cands["module_gbps"].to_numpy(float)]
    unit = np.r_[links["module_cost_usd"].to_numpy(float), cands["module_cost_usd"].to_numpy(float)]
    fixed = np.r_[np.zeros(len(links)), cands["fixed_cost_usd"].to_numpy(float)]
    most = np.r_[np.floor((links["max_capacity_gbps"].to_numpy(float) - links["capacity_gbps"].to_numpy(float))
                          / links["module_gbps"].to_numpy(float) + 1e-9), cands["max_modules"].to_numpy(float)]
    is_cand = np.r_[np.zeros(len(links), bool), np.ones(len(cands), bool)]
    best = np.inf
    for y in itertools.product(*[range(int(m) + 1) for m in most]):
        ya = np.array(y, float)
        cost = float(unit @ ya + fixed[ya > 0].sum())
        if cost < best and _carries(net, ~is_cand | (ya > 0), base_cap + mod * ya, ceiling):
            best = cost
    return best


def _design(net: Network, **kw: Any) -> Any:
    return design_intact(net, SurviveOptions(survive="none", utilisation_ceiling=CEILING, **kw))


def _assert_brackets(res: Any, optimum: float) -> None:
    assert res.lower_bound_usd is not None
    assert res.lower_bound_usd <= optimum + TOL <= res.cost_usd + 2 * TOL
    assert res.gap == pytest.approx((res.cost_usd - res.lower_bound_usd) / res.cost_usd if res.cost_usd else 0.0)


def test_slo_makes_the_bound_positive() -> None:
    """A->C 150 Gbps with a 4 ms one-way SLO: A-B-C (2 ms) and the chord (1 ms) are admissible, A-D-C (6 ms) is not.
    The ring carries 160 Gbps within 80 % without the SLO, so a relaxation that drops SLOs proves only 0; over the
    admissible paths A-B-C needs a module on A-B and on B-C (100 USD), cheaper than the chord (1,010)."""
    net = _ring(150, 5, 8, 200, (1000, 10))
    optimum = brute_force_optimum(net)
    assert optimum == pytest.approx(100.0)
    assert brute_force_optimum(_ring(150, 5, None, 200, (1000, 10))) == 0.0  # without the SLO nothing is needed
    res = _design(net)
    _assert_brackets(res, optimum)
    assert res.lower_bound_usd > 0
    assert res.cost_usd == pytest.approx(optimum) and res.lower_bound_usd == pytest.approx(optimum)
    assert res.status == "optimal" and res.gap == pytest.approx(0.0, abs=1e-9)
    assert sorted(res.upgrades["link"]) == ["AB", "BC"]
    assert res.bound.integer_bound_usd == pytest.approx(optimum) and res.bound.lp_bound_usd > 0


def test_paths_beyond_the_k_shortest_are_priced_in_and_avoid_a_route() -> None:
    """300 Gbps A->C, no SLO: both sides of the ring at 200 Gbps carry it (four modules, 200 USD). With one path per
    demand the restricted design routes over one side of the ring (or the chord) and leaves 140 Gbps unmet,
    whichever routes it opens; the intact design prices the other side in and builds no route."""
    net = _ring(300, 1, None, 200, (1000, 10))
    optimum = brute_force_optimum(net)
    assert optimum == pytest.approx(200.0)
    restricted = design_survivable(net, SurviveOptions(survive="none", k_paths=1))
    tried = restricted.iterations[-1].designs_tried
    assert tried and all(t.unmet_gbps == pytest.approx(140.0) for t in tried)
    res = _design(net, k_paths=1)
    _assert_brackets(res, optimum)
    assert res.cost_usd == pytest.approx(optimum) and res.status == "optimal"
    assert "new route" not in set(res.upgrades["action"]) and res.bound.paths_added > 0


def test_a_route_is_the_optimum_when_the_ring_is_full() -> None:
    """The ring cannot grow (no room above 100 Gbps): 150 Gbps A->C within a 4 ms SLO needs the chord."""
    net = _ring(150, 5, 8, 100, (1000, 10))
    optimum = brute_force_optimum(net)
    assert optimum == pytest.approx(1010.0)
    res = _design(net)
    _assert_brackets(res, optimum)
    assert res.cost_usd == pytest.approx(optimum) and list(res.upgrades["action"]) == ["new route"]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_bound_below_brute_force_optimum_below_cost_on_random_networks(seed: int) -> None:
    net = _random_net(seed)
    optimum = brute_force_optimum(net)
    res = _design(net)
    if not np.isfinite(optimum):  # no design carries it: the design leaves demand unmet, the bound says so
        unmet = res.iterations[0].unmet_gbps
        assert unmet is not None and unmet > 0
        return
    _assert_brackets(res, optimum)
    if res.bound.cut_status == "optimal":  # a cut-MIP design carried the demand: it is optimal
        assert res.cost_usd == pytest.approx(optimum) and res.lower_bound_usd == pytest.approx(optimum)


def test_bound_time_limit_zero_skips_the_bound() -> None:
    res = _design(_ring(150, 5, 8, 200, (1000, 10)), bound_time_limit_s=0)
    assert res.lower_bound_usd is None and res.gap is None and res.status == "feasible"
    assert res.bound.status == "skipped" and res.bound.cut_status == "skipped"


def test_cli_default_design_reports_the_bound(tmp_path: Path) -> None:
    from backbone.api.cli.main import app
    from backbone.io import save_scenario

    save_scenario(_ring(150, 5, 8, 200, (1000, 10)), tmp_path / "ring")
    r = CliRunner().invoke(app, ["design", str(tmp_path / "ring"), "--json"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["mode"] == "survivable" and s["failure_kind"] == "none" and s["status"] == "optimal"
    assert s["cost_usd"] == pytest.approx(100.0) and s["lower_bound_usd"] == pytest.approx(100.0)
    assert s["restricted_optimum"]["restriction"].startswith("designs that route over the")
    human = CliRunner().invoke(app, ["design", str(tmp_path / "ring")])
    assert human.exit_code == 0 and "lower bound 100 USD, gap 0.0 %" in " ".join(human.stdout.split())


def test_verify_checks_cost_and_a_routing_within_the_ceiling(tmp_path: Path) -> None:
    from backbone.solver.checks.design import check_intact_design
    from backbone.solver.tasks import run_task
    from backbone.solver.te import solve_te
    from backbone.solver.te.options import TEOptions

    net = _ring(150, 5, 8, 200, (1000, 10))
    res = run_task("design", net, {"verify": True, "time_limit_s": 30})
    v = res.summary.verification
    assert isinstance(v, IntactDesignCheckRecord)  # the check's record with its witness routing's utilisation
    assert v.ok and "cost" in v.checked and "ceiling" in v.checked and v.witness_mlu <= CEILING + 1e-9
    after = res.design.network_after
    routing = solve_te(after, TEOptions(objective="min-mlu", method="colgen"))
    wrong_cost = check_intact_design(net, after, 90.0, 90.0, CEILING, routing)
    assert not wrong_cost.ok and "recomputed 100.00 USD" in wrong_cost.messages[0]
    undesigned = solve_te(net, TEOptions(objective="min-mlu", method="colgen"))  # today's ring: A-B-C over 80 %
    too_full = check_intact_design(net, net, 0.0, 0.0, CEILING, undesigned)
    assert not too_full.ok and {v.check for v in too_full.violations} == {"ceiling"}


def _explicit_path_lp(net: Network, states: list[tuple[tuple[str, ...], float]]) -> float:
    """The LP relaxation (modules and builds continuous) over every admissible path listed explicitly, each state
    ``(failed link ids, ceiling)`` carrying every demand: the optimum column generation must reach."""
    links, cands = net.links, net.candidates
    ids = [*map(str, links.index), *map(str, cands.index)]
    pos = {s: i for i, s in enumerate(net.sites.index)}
    ends = [(pos[a], pos[b]) for a, b in zip(links["site_a"], links["site_b"], strict=True)]
    ends += [(pos[a], pos[b]) for a, b in zip(cands["site_a"], cands["site_b"], strict=True)]
    latency = np.r_[links["latency_ms"].to_numpy(float), cands["latency_ms"].to_numpy(float)]
    cap = np.r_[links["capacity_gbps"].to_numpy(float), np.zeros(len(cands))]
    mod = np.r_[links["module_gbps"].to_numpy(float), cands["module_gbps"].to_numpy(float)]
    unit = np.r_[links["module_cost_usd"].to_numpy(float), cands["module_cost_usd"].to_numpy(float)]
    most = np.r_[np.floor((links["max_capacity_gbps"].to_numpy(float) - links["capacity_gbps"].to_numpy(float))
                          / links["module_gbps"].to_numpy(float) + 1e-9), cands["max_modules"].to_numpy(float)]
    fixed = cands["fixed_cost_usd"].to_numpy(float)
    L, C = len(ids), len(cands)
    cols: list[tuple[int, int, list[tuple[int, int]]]] = []  # (state, demand, path)
    for s, (failed, _) in enumerate(states):
        alive = [k for k in range(L) if ids[k] not in failed]
        for d, row in enumerate(net.demands.itertuples()):
            limit = row.slo_rtt_ms / 2 if np.isfinite(row.slo_rtt_ms) else np.inf
            for path in _simple_paths(len(pos), [ends[k] for k in alive], pos[row.src], pos[row.dst]):
                real = [(alive[k], direction) for k, direction in path]
                if sum(latency[k] for k, _ in real) <= limit + 1e-9:
                    cols.append((s, d, real))
    n = L + C + len(cols)  # y, b, f
    a_eq = np.zeros((len(states) * len(net.demands), n))
    a_ub = np.zeros((len(states) * 2 * L + C, n))
    b_ub = np.zeros(len(states) * 2 * L + C)
    for j, (s, d, path) in enumerate(cols):
        a_eq[s * len(net.demands) + d, L + C + j] = 1
        for k, direction in path:
            a_ub[s * 2 * L + direction * L + k, L + C + j] = 1
    for s, (_, ceiling) in enumerate(states):
        for direction in (0, 1):
            rows = s * 2 * L + direction * L + np.arange(L)
            a_ub[rows, np.arange(L)] = -ceiling * mod
            b_ub[rows] = ceiling * cap
    for c in range(C):  # y_c - Y_c b_c <= 0
        a_ub[len(states) * 2 * L + c, len(links) + c] = 1
        a_ub[len(states) * 2 * L + c, L + c] = -most[len(links) + c]
    bounds = [(0, m) for m in most] + [(0, 1)] * C + [(0, None)] * len(cols)
    res = linprog(np.r_[unit, fixed, np.zeros(len(cols))], A_ub=a_ub, b_ub=b_ub, A_eq=a_eq,
                  b_eq=np.tile(net.demands["demand_gbps"].to_numpy(float), len(states)), bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_column_generation_reaches_the_lp_over_every_listed_path(seed: int) -> None:
    """From one path per demand, column generation with latency-limited pricing reaches the LP over every
    admissible path, here listed explicitly, in the intact state and with a link failed (ceiling 1.0)."""
    from backbone.solver.design.colgen import path_lp_bound
    from backbone.solver.design.survivable.model import Commodities, full_network, state_block

    net = _random_net(seed)
    full = full_network(net)
    comm = Commodities.of_network(full)
    blocks = [state_block(net, full, "intact", (), 1, CEILING, comm),
              state_block(net, full, "link:CD", ("CD",), 1, 1.0, comm)]
    lp = path_lp_bound(net, full, blocks, comm, 60.0)
    assert lp.status == "optimal" and lp.prices is not None and lp.prices.unmet_gbps <= 1e-6 and lp.paths_added > 0
    explicit = _explicit_path_lp(net, [((), CEILING), (("CD",), 1.0)])
    assert explicit > 0 and lp.lp_usd == pytest.approx(explicit, rel=1e-6, abs=1e-6)


@pytest.mark.slow
def test_shipped_scenario_default_design_is_proven_within_one_percent() -> None:
    """The shipped scenario: min-MLU over every admissible path is above the 80 % ceiling today, so the bound must
    be positive; the default design closes its gap (measured: optimal, 2.72 M USD, one new route)."""
    from backbone.io import load_scenario

    res = _design(load_scenario())
    assert res.lower_bound_usd is not None and 0 < res.lower_bound_usd <= res.cost_usd * (1 + 1e-7)
    assert res.gap is not None and res.gap <= 0.01
    assert res.bound.lp_bound_usd is not None and res.bound.lp_bound_usd <= res.lower_bound_usd
