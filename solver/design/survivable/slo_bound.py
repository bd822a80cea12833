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
pricing adds, appended as columns with the strong build rows they need, and solved from the last round's basis). A path ``p`` of commodity ``d`` (source ``o``) has reduced cost
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

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.core.deadline import Deadline, TimeLimitReached
from backbone.solver.core.problem import LinearProgram, Solution, Status, solve
from backbone.solver.core.sparse import selector
from backbone.solver.design.summary import DesignBound
from backbone.solver.design.survivable.bound import BoundState, SurviveBound, survive_lower_bound
from backbone.solver.design.survivable.model import Commodities, StateBlock, build_mip
from backbone.solver.design.upgrades.families import UNMET_PENALTY_USD_PER_GBPS

logger = logging.getLogger(__name__)

__all__ = ["ARC_FLOW_METHOD", "SLO_COVERS", "SLO_METHOD", "SloBound", "SloMaster", "best_lower_bound",
           "better_bound", "build_slo_master", "slo_lower_bound"]

SLO_METHOD = "path LP with SLOs, column generation"
"""``bound.method`` when this module's bound is the better one."""

ARC_FLOW_METHOD = "arc-flow LP, SLOs dropped"
"""``bound.method`` when :mod:`backbone.solver.design.survivable.bound`'s is the better one."""

SLO_COVERS = ("every design that builds any of the candidate routes and upgrades in whole modules, routes each "
              "demand over any path within its latency SLO, and carries the intact state and every failure state of "
              "the kind within the utilisation ceilings, leaving unmet only the excused traffic (relaxed: the LP over "
              "the intact state and the working set, modules and builds continuous)")
"""What the SLO path bound covers, in one sentence (``bound.covers`` when it wins)."""

MAX_ROUNDS = 12
"""Master / pricing rounds at most (the load-independent budget; each adds at most one path per commodity and
state). On the shipped scenario's survivable design (40 states, ~245,000 columns) a warm-started round takes about
2-3 s at load 3-4 on 2 cores, so the budget, not the clock, usually ends the rounds there."""

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

    def record(self) -> DesignBound:
        """The survivable design's ``bound`` record: ``bound_usd, status, states, seconds, note, covers, model,
        method, rounds, paths_added``."""
        return DesignBound(bound_usd=self.bound_usd, status=self.status, states=self.states,
                           seconds=round(self.seconds, 3), note=self.note, covers=SLO_COVERS, model=self.model,
                           method=SLO_METHOD, rounds=self.rounds, paths_added=self.paths_added)


def better_bound(arc_flow: DesignBound, slo: DesignBound) -> DesignBound:
    """The survivable design's ``bound``: the better (higher) of the two valid bounds' records, with ``method``
    naming the one that won and ``bounds`` holding both (``{method: record}``); the arc-flow bound wins ties and
    stands when neither has a value."""
    arc = DesignBound.model_validate({**arc_flow.given(), "method": ARC_FLOW_METHOD})
    path = DesignBound.model_validate({**slo.given(), "method": SLO_METHOD})
    win = path if path.bound_usd is not None and (arc.bound_usd is None or path.bound_usd > arc.bound_usd) else arc
    return DesignBound.model_validate({**win.given(), "bounds": {ARC_FLOW_METHOD: arc, SLO_METHOD: path}})


def best_lower_bound(base: Network, full: Network, blocks: Sequence[StateBlock], comm: Commodities,
                     states: Sequence[BoundState], time_limit_s: float, backend: str = "highs") -> DesignBound:
    """The survivable design's ``bound``: the better of its two valid lower bounds over the same states and excuse
    allowances ``A_s`` (``states[i].unmet_allowance_gbps`` for ``blocks[i]``), :func:`better_bound` of

    1. the path LP with the SLOs kept (:func:`slo_lower_bound`), first, in at most ``SLO_BOUND_SHARE`` of
       ``time_limit_s`` (its round budget usually ends it first), and
    2. the arc-flow LP with the SLOs dropped (:func:`~backbone.solver.design.survivable.bound.survive_lower_bound`)
       in the rest (at least ``MIN_SOLVE_S``); skipped when the path LP finished (``optimal``): over the same states,
       routable demand and allowances the arc-flow LP relaxes it (path flows per commodity sum to arc flows per
       source, with the same capacity, excused and strong build rows), so it cannot bound higher.

    ``time_limit_s`` 0 skips both (no bound)."""
    slo = slo_lower_bound(base, full, blocks, comm, [st.unmet_allowance_gbps for st in states],
                          SLO_BOUND_SHARE * time_limit_s, backend)
    if slo.status == "optimal":
        arc = SurviveBound(None, "skipped", 0, 0.0, "not solved: the path LP with the SLOs finished, and over the same "
                           "states the arc-flow LP relaxes it")
    else:
        arc = survive_lower_bound(base, full, states,
                                  max(MIN_SOLVE_S, time_limit_s - slo.seconds) if time_limit_s > 0 else 0.0, backend)
    return better_bound(arc.record(), slo.record())


SLO_BOUND_SHARE = 0.75
"""Share of ``bound_time_limit_s`` the SLO path bound may use at most; the arc-flow bound gets the rest (over the same
states the arc-flow LP is a relaxation of the path LP, so it can win only where the path LP is stopped early)."""


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
    master = SloMaster.build(base, full, pool, comm, np.asarray(allowance_gbps, float))
    routable = _routable(comm, pool)
    best: float | None = None
    rounds = added = 0
    status, note = "round_limit", (f"{max_rounds} rounds made before pricing proved the LP optimal: the bound is the "
                                   "Lagrangian bound of the best round's duals")
    while rounds < max_rounds:
        if deadline.remaining() <= 0:
            status, note = "time_limit", _clock_note(time_limit_s, rounds)
            break
        sol = master.solve(backend, max(MIN_SOLVE_S, deadline.remaining()))
        if sol.status != Status.OPTIMAL or sol.row_duals is None:
            logger.info("SLO path bound: master %s after %.1f s", sol.status.value, sol.solve_seconds)
            status, note = "time_limit", _clock_note(time_limit_s, rounds)
            break
        rounds += 1
        try:
            found, least_rc = master.price(pool, sol, deadline)
        except TimeLimitReached:
            status, note = "time_limit", _clock_note(time_limit_s, rounds)
            break
        lagrangian = float(sol.objective) + float((np.where(routable, comm.gbps, 0.0) * np.minimum(least_rc, 0.0)).sum())
        best = lagrangian if best is None else max(best, lagrangian)
        if found == 0 and float(sol.values("over").sum()) > OVER_TOL_GBPS:  # the LP itself has no solution
            return SloBound(None, "infeasible", len(pool), rounds, added, time.perf_counter() - t0,
                            "no design carries every state leaving at most its excused Gbps unmet", master.lp.stats())
        if found == 0:
            return SloBound(float(sol.objective), "optimal", len(pool), rounds, added, time.perf_counter() - t0, "",
                            master.lp.stats())
        added += found
        logger.info("SLO path bound round %d: master %.6g (%.1f s%s), %d paths added, Lagrangian bound %.6g", rounds,
                    sol.objective, sol.solve_seconds, ", warm" if sol.warm_started else "", found, lagrangian)
    if best is None:
        note = f"no master LP finished within bound_time_limit_s {time_limit_s:g}"
    return SloBound(None if best is None else max(0.0, best), status, len(pool), rounds, added,
                    time.perf_counter() - t0, note, master.lp.stats())


def _clock_note(time_limit_s: float, rounds: int) -> str:
    return (f"stopped by the clock ({time_limit_s:g} s) after {rounds} rounds, before pricing proved the LP optimal: "
            "the bound is the Lagrangian bound of the best round's duals")


def _routable(comm: Commodities, pool: Sequence[StateBlock]) -> np.ndarray:
    """States x commodities: whether the state offers the commodity (a failure state does not offer the classes that
    pause: :func:`backbone.failure_policy.carried_in_failure`) and it has an admissible path there."""
    return np.stack([comm.has_path(b.has_path) & b.offered_demands()[comm.first] for b in pool])


def build_slo_master(base: Network, full: Network, pool: Sequence[StateBlock], comm: Commodities,
                     allowance_gbps: np.ndarray) -> LinearProgram:
    """The restricted master over the pool (module doc): the design's program
    (:func:`backbone.solver.design.survivable.model.build_mip`, modules and builds continuous) with unmet routable
    demand free up to ``A_s`` per state (the excused rows, ``v_s`` beyond it at the penalty ``M``); the strong build
    rows are :class:`SloMaster`'s."""
    lp, _ = build_mip(base, full, list(pool), comm, integer=False)
    S, D = len(pool), len(comm.gbps)
    routable = _routable(comm, pool).ravel()
    lp.set_cost("unmet", 0.0)
    lp.add_variables("over", S, cost=UNMET_PENALTY_USD_PER_GBPS)
    rows = np.repeat(np.arange(S), D)[routable]
    lp.add_constraints("excused", {"unmet": selector(rows, S, S * D, cols=np.flatnonzero(routable)),
                                   "over": -sp.identity(S, format="csr")},
                       upper=np.asarray(allowance_gbps, float))
    return lp


@dataclass
class SloMaster:
    """The restricted master, grown round by round (new paths appended as columns, new strong build rows as a new
    block) and solved from the last round's basis.

    A strong build row is keyed ``(s n_sites + o) 2L + a`` (state ``s``, source site ``o``, arc ``a``);
    ``strong`` lists each block of them with its keys in row order."""

    lp: LinearProgram
    full: Network
    comm: Commodities
    src_of: np.ndarray  # source site of each commodity
    build_of_link: np.ndarray  # column of each link in the build block (-1: no fixed cost)
    total: np.ndarray  # H_{s,o}: states x sites
    strong: list[tuple[str, np.ndarray]] = field(default_factory=list)
    last: Solution | None = None

    @classmethod
    def build(cls, base: Network, full: Network, pool: Sequence[StateBlock], comm: Commodities,
              allowance_gbps: np.ndarray) -> SloMaster:
        """The first master over the pool's paths, with the strong build rows they need."""
        lp = build_slo_master(base, full, pool, comm, allowance_gbps)
        L = len(full.links)
        build_ids = lp.variables["build"].index if "build" in lp.variables else pd.Index([])
        build_of_link = np.full(L, -1)
        build_of_link[full.links.index.get_indexer(build_ids)] = np.arange(len(build_ids))
        src_of = full.sites.index.get_indexer(full.demands["src"].to_numpy()[comm.first])
        routable = _routable(comm, pool)
        total = np.stack([np.bincount(src_of, weights=np.where(r, comm.gbps, 0.0), minlength=len(full.sites))
                          for r in routable])
        master = cls(lp, full, comm, src_of, build_of_link, total)
        state = np.repeat(np.arange(len(pool)), [len(b.var_demand) for b in pool])
        inc = sp.vstack([b.incidence for b in pool], format="csr")
        master.add_strong_rows(state, np.concatenate([b.var_demand for b in pool]), inc, 0)
        return master

    def entries(self, state: np.ndarray, var_comm: np.ndarray, inc: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """Per (column, fixed-cost candidate arc) entry of the columns ``inc`` (of ``state``, ``var_comm``): its
        strong row key and column."""
        coo = inc.tocoo()
        L = len(self.full.links)
        on = self.build_of_link[coo.col % L] >= 0
        col, arc = coo.row[on], coo.col[on]
        n_sites = len(self.full.sites)
        return (state[col] * n_sites + self.src_of[var_comm[col]]) * 2 * L + arc, col

    def add_strong_rows(self, state: np.ndarray, var_comm: np.ndarray, inc: sp.csr_matrix, first: int) -> None:
        """A block of the strong build family for the keys of the columns ``first ..`` (``inc``) that no earlier
        block has::

            sum_{d from o} sum_{p in P_s(d), a in p} f_{s,p} - H_{s,o} b_c <= 0     (H_{s,o} = sum_{d from o} h_d)

        (valid for every integral design: ``b_c = 0`` leaves the
        arc no capacity, and the paths of ``o``'s commodities carry at most ``H_{s,o}`` together)."""
        key, col = self.entries(state, var_comm, inc)
        if self.strong:
            known = np.concatenate([k for _, k in self.strong])
            fresh = ~np.isin(key, known)
            key, col = key[fresh], col[fresh]
        if not len(key):
            return
        uniq, row = np.unique(key, return_inverse=True)
        L, n_sites = len(self.full.links), len(self.full.sites)
        s, o, arc = uniq // (2 * L * n_sites), (uniq // (2 * L)) % n_sites, uniq % (2 * L)
        n, name = len(uniq), f"strong_build_{len(self.strong)}"
        self.lp.add_constraints(name, {
            "flow": selector(row.ravel(), n, self.lp.variables["flow"].size, cols=first + col),
            "build": selector(np.arange(n), n, self.lp.variables["build"].size, cols=self.build_of_link[arc % L],
                              values=-self.total[s, o])}, upper=0.0)
        self.strong.append((name, uniq))

    def add_paths(self, state: np.ndarray, var_comm: np.ndarray, inc: sp.csr_matrix) -> None:
        """Append path columns (``state``, commodity ``var_comm``, arc incidence ``inc``): demand, capacity and the
        existing strong rows' coefficients, then a block for the strong rows they need anew."""
        n, first = len(state), self.lp.variables["flow"].size
        S, D, L = self.total.shape[0], len(self.comm.gbps), len(self.full.links)
        coo = inc.tocoo()
        rows: dict[str, sp.spmatrix] = {
            "demand": selector(state * D + var_comm, S * D, n),
            "capacity": sp.csr_matrix((coo.data, (state[coo.row] * 2 * L + coo.col, coo.row)), shape=(S * 2 * L, n))}
        key, col = self.entries(state, var_comm, inc)
        for name, keys in self.strong:
            pos = np.clip(np.searchsorted(keys, key), 0, len(keys) - 1)
            hit = keys[pos] == key
            rows[name] = selector(pos[hit], len(keys), n, cols=col[hit])
        self.lp.add_columns("flow", n, coefficients=rows)
        self.add_strong_rows(state, var_comm, inc, first)

    def solve(self, backend: str, time_limit_s: float) -> Solution:
        """Solve the master, from the last round's basis where the backend can."""
        self.last = solve(self.lp, backend=backend, time_limit_s=time_limit_s, warm_start=self.last)
        return self.last

    def price(self, pool: Sequence[StateBlock], sol: Solution, deadline: Deadline) -> tuple[int, np.ndarray]:
        """One pricing round over every state (module doc): appends the paths found and returns how many, and the
        least reduced cost per state and commodity (a lower bound on it; 0 where the commodity is not routable)."""
        from backbone.solver.design.colgen import price_state

        S, D, L = len(pool), len(self.comm.gbps), len(self.full.links)
        pi = sol.duals("demand").to_numpy().reshape(S, D)
        w = np.maximum(-sol.duals("capacity").to_numpy().reshape(S, 2 * L), 0.0)
        key = np.concatenate([k for _, k in self.strong]) if self.strong else np.zeros(0, np.int64)
        sigma = np.concatenate([np.maximum(-sol.duals(name).to_numpy(), 0.0) for name, _ in self.strong]) \
            if self.strong else np.zeros(0)
        n_sites = len(self.full.sites)
        key, sigma = key[sigma > 0], sigma[sigma > 0]
        k_state, k_src, k_arc = key // (2 * L * n_sites), (key // (2 * L)) % n_sites, key % (2 * L)
        least_rc = np.zeros((S, D))
        new_state, new_comm, new_inc = [], [], []
        for s, block in enumerate(pool):  # per state, one pricing per group of sources with the same arc prices
            mine = k_state == s
            groups = [(np.isin(self.src_of, k_src[mine], invert=True), w[s])]
            for o in np.unique(k_src[mine]):
                at = mine & (k_src == o)
                groups.append((self.src_of == o, w[s] + np.bincount(k_arc[at], weights=sigma[at], minlength=2 * L)))
            for in_group, prices in groups:
                vd, inc, rc = price_state(self.full, block, self.comm, prices, np.where(in_group, pi[s], 0.0),
                                          deadline)
                least_rc[s, in_group] = rc[in_group]
                new_state.append(np.full(len(vd), s))
                new_comm.append(vd)
                new_inc.append(inc)
        found = int(sum(len(v) for v in new_comm))
        if found:
            self.add_paths(np.concatenate(new_state), np.concatenate(new_comm), sp.vstack(new_inc, format="csr"))
        return found, least_rc
