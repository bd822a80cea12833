"""A second true lower bound on the survivable design that keeps the latency SLOs: a path LP by column generation.

:mod:`backbone.solver.design.survivable.bound` bounds the survivable design by an arc-flow LP that drops the latency
SLOs (its R3), so a cheap long detour that no SLO allows still counts there. This module bounds the same planning
problem with the SLOs kept: the LP relaxation over the intact state and the working set's failure states, routing
each commodity ``d`` (demands with one source, destination and SLO) in state ``s`` over **every** loopless path
``P_s(d)`` of the surviving network (every candidate built) whose one-way latency is within its SLO (TE's
admissibility rule). Model, for states ``s``, commodities ``d`` with routable demand ``h_d`` (an admissible path
exists in ``s``; the others are left out, as in the arc-flow LP), paths ``p``, arcs ``a`` of link ``l(a)``::

    cost:         min sum_l module_cost_l y_l + sum_c fixed_c b_c
    demand:       sum_{p in P_s(d)} f_{s,p} + u_{s,d} = h_d                       (dual pi_{s,d})
    capacity:     sum_p A_s[p,a] f_{s,p} - t_s m_l(a) y_l(a) <= t_s cap_l(a)       (dual -w_{s,a} <= 0)
    excused:      sum_d u_{s,d} <= A_s,  0 <= u_{s,d} <= h_d
    strong build: sum_{d from o} sum_{p in P_s(d), a in p} f_{s,p} - H_{s,o} b_c <= 0
                  (a an arc of a fixed-cost candidate c, o a source site, H_{s,o} = sum_{d from o} h_d;
                   dual -sigma_{s,o,a} <= 0)
    build:        y_c - Y_c b_c <= 0,  0 <= y_l <= Y_l,  0 <= b_c <= 1              (modules and builds continuous)

``A_s`` is exactly the arc-flow LP's (:func:`backbone.solver.design.survivable.bound.bound_states`: what the
design excuses as capacity short in the state plus the survival tolerance); the strong build rows are the arc-flow
LP's per source (:func:`~backbone.solver.design.survivable.bound.strong_build_rows`), written over paths. Every
integral design that carries each state within its ceilings leaving at most ``A_s`` of the routable demand unmet,
over paths within the SLOs, is a point of this LP at its own cost, so the LP optimum bounds its cost from below.

Column generation: a restricted master over a pool of paths (the design's ``k`` paths per state to start, then what
pricing adds). A path ``p`` of commodity ``d`` (source ``o``) has reduced cost
``rc_p = sum_{a in p} (w_{s,a} + sigma_{s,o,a}) - pi_{s,d}`` (``sigma`` 0 for the strong rows of no pooled path,
left out of the master: there they read ``-H_{s,o} b_c <= 0``, implied by ``b_c >= 0``, so the master's duals
extended by 0 are optimal for the master with them); pricing
(:func:`backbone.solver.design.colgen.price_state`, the exact latency-limited shortest path) finds the least one per
commodity, grouped by source where ``sigma`` differs. So that a pool too small to carry a state still gives a
solvable master, the master's excused rows read ``sum_d u_{s,d} - v_s <= A_s`` with ``v_s >= 0`` at the penalty
``M`` per Gbps (:data:`~backbone.solver.design.upgrades.families.UNMET_PENALTY_USD_PER_GBPS`): that LP relaxes the
one above (each of its points is one with ``v = 0``, at the same cost), so its bounds bound it too, and a converged
master with ``v > 0`` proves the LP above has no solution (status ``infeasible``, no bound). When no path prices out, the master is the LP over every
admissible path and its optimum is the bound. Stopped earlier (the round budget ``max_rounds`` or the clock), the
bound is the best **Lagrangian bound** of the masters' duals (Lübbecke and Desrosiers 2005)::

    LB = z_master + sum_{s,d} h_d min(0, min_{p in P_s(d)} rc_p)

valid for any master optimum: relax every row with the master's duals; the modules, builds and unmet columns sit at
their best bounds for those duals (their part is ``z_master``, LP duality), and each commodity's path flows, which
sum to at most ``h_d`` in every feasible point, add at most ``h_d`` times its least reduced cost. The primal value of
a master that is not proven optimal is never reported.

What depends on time: the rounds run in a fixed budget (``max_rounds``, at most one path per commodity and state
each), so on an unloaded machine the bound is the same from run to run; only when the clock ``time_limit_s`` ends the
rounds first (a slow machine) is the bound the Lagrangian bound of an earlier round, lower but still valid.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.core.deadline import Deadline, TimeLimitReached
from backbone.solver.core.problem import LinearProgram, Solution, Status, solve
from backbone.solver.core.sparse import selector
from backbone.solver.design.survivable.bound import BoundState, survive_lower_bound
from backbone.solver.design.survivable.model import Commodities, StateBlock, build_mip
from backbone.solver.design.upgrades.families import UNMET_PENALTY_USD_PER_GBPS

logger = logging.getLogger(__name__)

__all__ = ["ARC_FLOW_METHOD", "SLO_COVERS", "SLO_METHOD", "SloBound", "best_lower_bound", "better_bound",
           "build_slo_master", "slo_lower_bound"]

SLO_METHOD = "path LP with SLOs, column generation"
"""``bound.method`` when this module's bound is the better one."""

ARC_FLOW_METHOD = "arc-flow LP, SLOs dropped"
"""``bound.method`` when :mod:`backbone.solver.design.survivable.bound`'s is the better one."""

SLO_COVERS = ("every design that builds any of the candidate routes and upgrades in whole modules, routes each "
              "demand over any path within its latency SLO, and carries the intact state and every failure state of "
              "the kind within the utilisation ceilings, leaving unmet only the excused traffic (relaxed: the LP over "
              "the intact state and the working set, modules and builds continuous)")
"""What the SLO path bound covers, in one sentence (``bound.covers`` when it wins)."""

MAX_ROUNDS = 40
"""Master / pricing rounds at most (the load-independent budget; each adds at most one path per commodity and
state)."""

MIN_SOLVE_S = 1.0
"""Least time limit given to a master LP."""

OVER_TOL_GBPS = 1e-6
"""Unmet Gbps beyond the allowances above which a converged master proves the LP has no solution."""


@dataclass
class SloBound:
    """The path LP bound with the SLOs kept, and how far column generation got.

    Attributes
    ----------
    bound_usd
        The master's optimum when ``status`` is ``optimal`` (no admissible path prices out), else the best
        Lagrangian bound of the rounds made (None when no master finished).
    status
        ``optimal``, ``round_limit`` (``max_rounds`` made, the bound Lagrangian), ``time_limit`` (the clock ended
        it, the bound Lagrangian), ``infeasible`` (no design carries the states within their allowances; no
        bound) or ``skipped``.
    states, rounds, paths_added, seconds, note, model
        States of the LP, master / pricing rounds, paths pricing added, wall time, what stopped it, the last
        master's size.
    """

    bound_usd: float | None
    status: str
    states: int
    rounds: int
    paths_added: int
    seconds: float
    note: str
    model: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, the keys of the survivable design's ``bound``: ``{bound_usd, status, states, seconds, note,
        covers, model, method, rounds, paths_added}``."""
        return {"bound_usd": self.bound_usd, "status": self.status, "states": self.states,
                "seconds": round(self.seconds, 3), "note": self.note, "covers": SLO_COVERS, "model": self.model,
                "method": SLO_METHOD, "rounds": self.rounds, "paths_added": self.paths_added}


def better_bound(arc_flow: dict[str, Any], slo: dict[str, Any]) -> dict[str, Any]:
    """The survivable design's ``bound``: the better (higher) of the two valid bounds' records, with ``method``
    naming the one that won and ``bounds`` holding both (``{method: record}``); the arc-flow bound wins ties and
    stands when neither has a value."""
    arc = {**arc_flow, "method": ARC_FLOW_METHOD}
    path = {**slo, "method": SLO_METHOD}
    win = path if path.get("bound_usd") is not None and (
        arc.get("bound_usd") is None or float(path["bound_usd"]) > float(arc["bound_usd"])) else arc
    return {**win, "bounds": {ARC_FLOW_METHOD: arc, SLO_METHOD: path}}


def best_lower_bound(base: Network, full: Network, blocks: Sequence[StateBlock], comm: Commodities,
                     states: Sequence[BoundState], time_limit_s: float, backend: str = "highs") -> dict[str, Any]:
    """The survivable design's ``bound``: the better of its two valid lower bounds over the same states and excuse
    allowances ``A_s`` (``states[i].unmet_allowance_gbps`` for ``blocks[i]``), :func:`better_bound` of

    1. the path LP with the SLOs kept (:func:`slo_lower_bound`), first, in at most ``SLO_BOUND_SHARE`` of
       ``time_limit_s`` (its round budget usually ends it first), and
    2. the arc-flow LP with the SLOs dropped (:func:`~backbone.solver.design.survivable.bound.survive_lower_bound`)
       in the rest (at least ``MIN_SOLVE_S``).

    ``time_limit_s`` 0 skips both (no bound)."""
    slo = slo_lower_bound(base, full, blocks, comm, [st.unmet_allowance_gbps for st in states],
                          SLO_BOUND_SHARE * time_limit_s, backend)
    arc = survive_lower_bound(base, full, states,
                              max(MIN_SOLVE_S, time_limit_s - slo.seconds) if time_limit_s > 0 else 0.0, backend)
    return better_bound(arc.to_dict(), slo.to_dict())


SLO_BOUND_SHARE = 0.5
"""Share of ``bound_time_limit_s`` the SLO path bound may use at most; the arc-flow bound gets the rest."""


def slo_lower_bound(base: Network, full: Network, blocks: Sequence[StateBlock], comm: Commodities,
                    allowance_gbps: Sequence[float], time_limit_s: float, backend: str = "highs",
                    max_rounds: int = MAX_ROUNDS) -> SloBound:
    """The path LP with the SLOs kept (module doc) over the states of ``blocks``, by column generation.

    Parameters
    ----------
    base
        The network the design changes (its ``candidates`` may be built).
    full
        ``base`` with every candidate built (:func:`backbone.solver.design.survivable.model.full_network`).
    blocks
        One :class:`StateBlock` per state on ``full`` (intact first): failed links, ceiling, which demands have an
        admissible path, and the paths the master starts from.
    comm
        The demands grouped into commodities.
    allowance_gbps
        ``A_s`` per state: routable Gbps the design may leave unmet (what it excuses as capacity short).
    time_limit_s
        Seconds for every master and pricing round together (0: skipped, no bound).
    backend
        LP backend.
    max_rounds
        Master / pricing rounds at most.

    Returns
    -------
    SloBound

    Example
    -------
    >>> b = slo_lower_bound(net, full, [state_block(full, full, "intact", (), 4, 0.8)], comm, [0.0], 30.0)  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    pool = list(blocks)
    if time_limit_s <= 0 or not pool:
        return SloBound(None, "skipped", len(pool), 0, 0, 0.0, "bound_time_limit_s is 0: no lower bound computed")
    deadline = Deadline(t0 + time_limit_s)
    allowance = np.asarray(allowance_gbps, float)
    best: float | None = None
    rounds = added = 0
    model: dict[str, int] = {}
    status, note = "round_limit", (f"{max_rounds} rounds made before pricing proved the LP optimal: the bound is the "
                                   "Lagrangian bound of the best round's duals")
    while rounds < max_rounds:
        if deadline.remaining() <= 0:
            status, note = "time_limit", _clock_note(time_limit_s, rounds)
            break
        lp, strong = build_slo_master(base, full, pool, comm, allowance)
        model = lp.stats()
        sol = solve(lp, backend=backend, time_limit_s=max(MIN_SOLVE_S, deadline.remaining()))
        if sol.status != Status.OPTIMAL or sol.row_duals is None:
            logger.info("SLO path bound: master %s after %.1f s", sol.status.value, sol.solve_seconds)
            status, note = "time_limit", _clock_note(time_limit_s, rounds)
            break
        rounds += 1
        try:
            pool, found, least_rc = _price(full, pool, comm, sol, strong, deadline)
        except TimeLimitReached:
            status, note = "time_limit", _clock_note(time_limit_s, rounds)
            break
        routable = np.stack([comm.has_path(b.has_path) for b in pool])
        lagrangian = float(sol.objective) + float((np.where(routable, comm.gbps, 0.0) * np.minimum(least_rc, 0.0)).sum())
        best = lagrangian if best is None else max(best, lagrangian)
        if found == 0 and float(sol.values("over").sum()) > OVER_TOL_GBPS:  # the LP itself has no solution
            return SloBound(None, "infeasible", len(pool), rounds, added, time.perf_counter() - t0,
                            "no design carries every state leaving at most its excused Gbps unmet", model)
        if found == 0:
            return SloBound(float(sol.objective), "optimal", len(pool), rounds, added, time.perf_counter() - t0, "",
                            model)
        added += found
        logger.info("SLO path bound round %d: master %.6g, %d paths added, Lagrangian bound %.6g", rounds,
                    sol.objective, found, lagrangian)
    if best is None:
        note = f"no master LP finished within bound_time_limit_s {time_limit_s:g}"
    return SloBound(None if best is None else max(0.0, best), status, len(pool), rounds, added,
                    time.perf_counter() - t0, note, model)


def _clock_note(time_limit_s: float, rounds: int) -> str:
    return (f"stopped by the clock ({time_limit_s:g} s) after {rounds} rounds, before pricing proved the LP optimal: "
            "the bound is the Lagrangian bound of the best round's duals")


@dataclass(frozen=True)
class StrongRows:
    """The master's strong build rows, one per (state, source site, fixed-cost candidate arc) with a path in the
    pool: ``state``, ``source`` (site position), ``arc`` (``0 .. 2L-1``)."""

    state: np.ndarray
    source: np.ndarray
    arc: np.ndarray


def build_slo_master(base: Network, full: Network, pool: Sequence[StateBlock], comm: Commodities,
                     allowance_gbps: np.ndarray) -> tuple[LinearProgram, StrongRows]:
    """The restricted master over the pool (module doc): the design's program
    (:func:`backbone.solver.design.survivable.model.build_mip`, modules and builds continuous) with unmet routable
    demand free up to ``A_s`` per state (the excused rows) and the strong build rows of the pool's paths."""
    lp, _ = build_mip(base, full, list(pool), comm, integer=False)
    S, D = len(pool), len(comm.gbps)
    routable = np.concatenate([comm.has_path(b.has_path) for b in pool])
    lp.set_cost("unmet", 0.0)
    lp.add_variables("over", S, cost=UNMET_PENALTY_USD_PER_GBPS)
    rows = np.repeat(np.arange(S), D)[routable]
    lp.add_constraints("excused", {"unmet": selector(rows, S, S * D, cols=np.flatnonzero(routable)),
                                   "over": -sp.identity(S, format="csr")},
                       upper=np.asarray(allowance_gbps, float))
    return lp, slo_strong_rows(lp, full, pool, comm)


def slo_strong_rows(lp: LinearProgram, full: Network, pool: Sequence[StateBlock],
                    comm: Commodities) -> StrongRows:
    """The strong build family over paths, per state ``s``, source ``o`` and arc ``a`` of a fixed-cost candidate
    ``c`` that a pooled path of a commodity from ``o`` uses::

        sum_{d from o} sum_{p in P_s(d), a in p} f_{s,p} - H_{s,o} b_c <= 0     (H_{s,o} = sum_{d from o} h_d)

    valid for every integral design: ``b_c = 0`` leaves the arc no capacity, and the paths of ``o``'s commodities
    carry at most ``H_{s,o}`` together."""
    L = len(full.links)
    build_ids = lp.variables["build"].index if "build" in lp.variables else pd.Index([])
    build_of_link = np.full(L, -1)
    build_of_link[full.links.index.get_indexer(build_ids)] = np.arange(len(build_ids))
    src_of = full.sites.index.get_indexer(full.demands["src"].to_numpy()[comm.first])
    keys, flow_cols, offset = [], [], 0
    for s, b in enumerate(pool):  # per state: (path, arc) entries on fixed-cost candidate arcs
        coo = b.incidence.tocoo()
        on = build_of_link[coo.col % L] >= 0
        keys.append(np.stack([np.full(int(on.sum()), s), src_of[b.var_demand[coo.row[on]]], coo.col[on]]))
        flow_cols.append(offset + coo.row[on])
        offset += b.incidence.shape[0]
    key = np.concatenate(keys, axis=1) if keys else np.zeros((3, 0), np.int64)
    if not key.shape[1]:
        return StrongRows(*np.zeros((3, 0), np.int64))
    uniq, row = np.unique(key, axis=1, return_inverse=True)
    routable = np.stack([comm.has_path(b.has_path) for b in pool])
    n_src = len(full.sites)
    total = np.stack([np.bincount(src_of, weights=np.where(r, comm.gbps, 0.0), minlength=n_src) for r in routable])
    n = uniq.shape[1]
    lp.add_constraints("strong_build", {
        "flow": selector(row.ravel(), n, lp.variables["flow"].size, cols=np.concatenate(flow_cols)),
        "build": selector(np.arange(n), n, len(build_ids), cols=build_of_link[uniq[2] % L],
                          values=-total[uniq[0], uniq[1]])}, upper=0.0)
    return StrongRows(uniq[0], uniq[1], uniq[2])


def _price(full: Network, pool: Sequence[StateBlock], comm: Commodities, sol: Solution, strong: StrongRows,
           deadline: Deadline) -> tuple[list[StateBlock], int, np.ndarray]:
    """One pricing round over every state (module doc): the grown pool, the paths added and the least reduced cost
    per state and commodity (a lower bound on it; 0 where the commodity is not routable)."""
    from backbone.solver.design.colgen import price_state

    S, D, L = len(pool), len(comm.gbps), len(full.links)
    pi = sol.duals("demand").to_numpy().reshape(S, D)
    w = np.maximum(-sol.duals("capacity").to_numpy().reshape(S, 2 * L), 0.0)
    sigma = np.maximum(-sol.duals("strong_build").to_numpy(), 0.0) if len(strong.arc) else np.zeros(0)
    src_of = full.sites.index.get_indexer(full.demands["src"].to_numpy()[comm.first])
    least_rc = np.zeros((S, D))
    grown: list[StateBlock] = []
    found = 0
    for s, block in enumerate(pool):  # per state, one pricing per group of sources with the same arc prices
        priced = sigma > 0
        mine = priced & (strong.state == s)
        groups = [(np.isin(src_of, strong.source[mine], invert=True), w[s])]
        for o in np.unique(strong.source[mine]):
            extra = np.bincount(strong.arc[mine & (strong.source == o)],
                                weights=sigma[mine & (strong.source == o)], minlength=2 * L)
            groups.append((src_of == o, w[s] + extra))
        var_demand, incidence = [block.var_demand], [block.incidence]
        for in_group, prices in groups:
            vd, inc, rc = price_state(full, block, comm, prices, np.where(in_group, pi[s], 0.0), deadline)
            least_rc[s, in_group] = rc[in_group]
            var_demand.append(vd)
            incidence.append(inc)
            found += len(vd)
        grown.append(StateBlock(block.scenario, block.failed, np.concatenate(var_demand),
                                sp.vstack(incidence, format="csr"), block.has_path, block.ceiling))
    return grown, found, least_rc
