"""A true lower bound on the cost of a survivable design: an arc-flow LP relaxation over every candidate and path.

The survivable design (:mod:`backbone.solver.design.survivable.iterate`) solves a MIP that is *restricted*: it opens only some
candidate routes and routes each demand over its ``k`` shortest admissible paths. Its optimum and dual bound are
the optimum (and bound) of that restricted model only; a design outside it (another candidate, another path) may
be cheaper. This module bounds the planning problem as the user states it: the cheapest module upgrades and
candidate routes (any of them, whole modules, fixed costs paid in full) such that the intact state fits under
``utilisation_ceiling`` and every failure state of the kind under ``failure_utilisation_ceiling``, routing over
any admissible path, leaving unmet only what is excused.

Relaxation (each step enlarges the feasible set or keeps it, so the optimum can only fall)::

    R1  states:    only the intact state and the working set's failure states S' ⊆ S are imposed
    R2  integers:  modules y_l in [0, Y_l] continuous, builds b_c in [0, 1]
    R3  SLOs:      latency SLOs are dropped; flows may use any path of the surviving network
    R4  routing:   demands are aggregated per source site o (one commodity per source, arc flows);
                   exact for SLO-free routing over all paths (any path flow decomposes into arc flows)
    R5  excuses:   in state s the demands with no admissible path even with every candidate built (or that
                   lose a failed site) are left out, and up to A_s Gbps of the rest may go unmet, where A_s
                   is at least what the design excuses as capacity no design can add

In a failure state the demands of the classes that pause are not offered (the problem as stated, as in the
design and its sweeps: :func:`backbone.failure_policy.carried_in_failure`); the intact state offers every class.

Utilisation ceilings ``t_s`` (``utilisation_ceiling`` intact, ``failure_utilisation_ceiling`` in failure
states) are kept exactly. Model, for states ``s``, sources ``o``, sites ``v``, arcs ``a`` of link ``l(a)``
(arc ``j`` is link ``j`` from ``site_a`` to ``site_b``, arc ``L + j`` the reverse; failed links' arcs carry no
flow)::

    modules:      0 <= y_l <= Y_l           (existing links: added modules; candidates: built modules)
    build:        y_c - Y_c b_c <= 0,  0 <= b_c <= 1               (candidates with a fixed cost)
    cost:         min sum_l module_cost_l y_l + sum_c fixed_c b_c
    conservation: sum_{a out of v} x_{s,o,a} - sum_{a into v} x_{s,o,a}
                    + [v = o] sum_w u_{s,o,w} - [v != o] u_{s,o,v} = h_{s,o,v}
                  (h_{s,o,o} = sum_w h_{s,o,w}, h_{s,o,v} = -demand o->v routable in s)
    capacity:     sum_o x_{s,o,a} - t_s m_l y_l <= t_s cap_l      (cap_l = 0 for a candidate)
    excused:      sum_{o,w} u_{s,o,w} <= A_s,  0 <= u_{s,o,w} <= h_{s,o,w}
    strong build: x_{s,o,a} - H_{s,o} b_c <= 0   (a of a fixed-cost candidate c, H_{s,o} = sum_w h_{s,o,w})

With ``y`` continuous a candidate's capacity ``m_c y_c <= m_c Y_c b_c`` costs it ``fixed_c y_c / Y_c`` at
least; the strong build rows hold for every integral design too (:func:`strong_build_rows`), so every integral
design maps to a feasible LP point of the same cost: the LP optimum is a lower bound. ``A_s`` is what the design
excuses in state ``s`` as capacity short (0 where nothing is) plus the survival tolerance; the intact state's is
the restricted MIP's least unmet with every opened module at its maximum (an allowance at least as large as the
stated problem's keeps the relaxation).
Its primal value is a bound only at optimality; a solve stopped by its time limit proves nothing, so the bound
is then the best LP that did finish (:func:`survive_lower_bound` solves LPs over subsets of the states: R1).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.core.problem import LinearProgram, solve
from backbone.solver.core.sparse import incidence, selector
from backbone.solver.design.summary import DesignBound
from backbone.solver.design.survivable.model import link_modules

logger = logging.getLogger(__name__)

__all__ = ["COVERS", "BoundState", "SurviveBound", "bound_states", "build_bound_lp", "survive_lower_bound"]

MIN_SOLVE_S = 1.0
"""Least time limit given to each LP."""


@dataclass(frozen=True)
class BoundState:
    """One state of the relaxation: failed link ids, its ceiling ``t_s``, which demands must be routed
    (``routable``: an admissible path exists with every candidate built, no failed site) and ``unmet_allowance_gbps``
    (``A_s``: Gbps of the routable demand the design may leave unmet, what it excuses as capacity short)."""

    scenario: str
    failed: tuple[str, ...]
    ceiling: float
    routable: np.ndarray
    unmet_allowance_gbps: float = 0.0


@dataclass
class SurviveBound:
    """The true lower bound and how it was proven.

    ``bound_usd`` is None when no LP finished; ``status`` is ``optimal`` (the LP over every given state
    finished), ``partial`` (only the intact state's LP finished within ``time_limit_s``), ``time_limit`` (none
    did) or ``skipped``; ``states`` counts the states of the LP that proved the bound.
    """

    bound_usd: float | None
    status: str
    states: int
    seconds: float
    note: str
    model: dict[str, int] = field(default_factory=dict)

    def record(self) -> DesignBound:
        """The design's ``bound`` record: ``bound_usd, status, states, seconds, note, covers, model``."""
        return DesignBound(bound_usd=self.bound_usd, status=self.status, states=self.states,
                           seconds=round(self.seconds, 3), note=self.note, covers=COVERS, model=self.model)


COVERS = ("every design that builds any of the candidate routes and upgrades in whole modules, routes over any "
          "admissible path, and carries the intact state and every failure state of the kind within the "
          "utilisation ceilings, leaving unmet only the excused traffic (relaxed: the LP over the intact state and "
          "the working set, modules continuous, latency SLOs dropped)")
"""What the true bound covers, in one sentence (``bound.covers``)."""


def _commodity_demand(net: Network, state: BoundState, sources: pd.Index) -> np.ndarray:
    """``h[o, v]`` (sources x sites): routable demand of the state from source ``o`` to site ``v`` (diagonal 0)."""
    d = net.demands
    site_pos = pd.Series(np.arange(len(net.sites)), index=net.sites.index)
    src = site_pos.loc[d["src"]].to_numpy()
    dst = site_pos.loc[d["dst"]].to_numpy()
    gbps = np.where(state.routable & (src != dst), d["demand_gbps"].to_numpy(float), 0.0)
    o = sources.get_indexer(net.sites.index[src])
    return sp.coo_matrix((gbps, (o, dst)), shape=(len(sources), len(net.sites))).toarray()


def build_bound_lp(base: Network, full: Network, states: Sequence[BoundState]) -> LinearProgram:
    """The relaxation's LP (module doc) over ``states`` on ``full`` (``base`` with every candidate built;
    ``base.links`` first, the candidates after)."""
    links = full.links
    L = len(links)
    n_old = len(base.links)
    is_cand, cap, mod, cost, y_max = link_modules(links, n_old)
    fixed = base.candidates["fixed_cost_usd"].reindex(links.index[is_cand]).fillna(0.0).to_numpy(float) \
        if is_cand.any() else np.zeros(0)
    ends = full.link_endpoints()
    tail = np.concatenate([ends[0], ends[1]])
    head = np.concatenate([ends[1], ends[0]])
    N = len(full.sites)
    sources = full.sites.index[np.unique(full.sites.index.get_indexer(full.demands["src"]))]
    n_src = len(sources)
    src_site = full.sites.index.get_indexer(sources)
    node_arc = incidence(N, tail, head).tocsr()

    lp = LinearProgram(f"survive-bound-{base.name}")
    lp.add_variables("modules", links.index, cost=cost, lower=0.0, upper=y_max)
    with_fixed = np.flatnonzero(fixed > 0)
    cpos = np.flatnonzero(is_cand)[with_fixed]
    lp.add_variables("build", links.index[cpos], cost=fixed[with_fixed], lower=0.0, upper=1.0)
    # per state: the surviving arcs, the commodity demand and its unmet variables (one pair per positive h)
    alive_of: list[np.ndarray] = []
    h_of: list[np.ndarray] = []
    pairs_of: list[tuple[np.ndarray, np.ndarray]] = []
    for st in states:
        up = ~links.index.isin(st.failed)
        alive_of.append(np.flatnonzero(np.concatenate([up, up])))
        h = _commodity_demand(full, st, sources)
        h_of.append(h)
        rows, cols = np.nonzero(h > 0)
        pairs_of.append((rows, cols))
    n_flow = np.array([n_src * len(a) for a in alive_of])
    n_pair = np.array([len(p[0]) for p in pairs_of])
    lp.add_variables("flow", int(n_flow.sum()))
    u_upper = np.concatenate([h[p] for h, p in zip(h_of, pairs_of, strict=True)]) if len(states) else np.zeros(0)
    lp.add_variables("unmet", len(u_upper), lower=0.0, upper=u_upper)
    conservation_rows(lp, node_arc, alive_of, h_of, pairs_of, src_site)
    capacity_rows(lp, alive_of, n_src, np.array([s.ceiling for s in states]), mod, cap, L)
    excused_rows(lp, n_pair, np.array([s.unmet_allowance_gbps for s in states]))
    strong_build_rows(lp, alive_of, h_of, cpos, L)
    if len(cpos):
        n = len(cpos)
        lp.add_constraints("build", {"modules": selector(np.arange(n), n, L, cols=cpos),
                                     "build": sp.csr_matrix(sp.diags(-y_max[cpos]))},
                           upper=0.0, index=links.index[cpos])
    return lp


def conservation_rows(lp: LinearProgram, node_arc: sp.csr_matrix, alive_of: Sequence[np.ndarray],
                      h_of: Sequence[np.ndarray], pairs_of: Sequence[tuple[np.ndarray, np.ndarray]],
                      src_site: np.ndarray) -> None:
    """Flow conservation per state ``s``, source ``o`` and site ``v``::

        sum_{a out of v} x_{s,o,a} - sum_{a into v} x_{s,o,a} + [v = o] sum_w u_{s,o,w} - [v != o] u_{s,o,v}
            = h_{s,o,v}       (h_{s,o,o} = sum_w h_{s,o,w}; h_{s,o,v} = -demand(o -> v) otherwise)

    One block-diagonal matrix: per state ``I_O (x) B_s`` (``B_s`` the node-arc incidence of its surviving arcs)."""
    n_src = len(src_site)
    N = node_arc.shape[0]
    flow_blocks, unmet_blocks, rhs = [], [], []
    for alive, h, (o, w) in zip(alive_of, h_of, pairs_of, strict=True):
        flow_blocks.append(sp.kron(sp.identity(n_src, format="csr"), node_arc[:, alive], format="csr"))
        k = len(o)
        rows_src = o * N + src_site[o]
        rows_dst = o * N + w
        unmet_blocks.append(sp.csr_matrix((np.r_[np.ones(k), -np.ones(k)],
                                           (np.r_[rows_src, rows_dst], np.r_[np.arange(k), np.arange(k)])),
                                          shape=(n_src * N, k)))
        b = -h.copy()
        b[np.arange(n_src), src_site] += h.sum(axis=1)
        rhs.append(b.ravel())
    rhs_all = np.concatenate(rhs) if rhs else np.zeros(0)
    lp.add_constraints("conservation", {"flow": sp.block_diag(flow_blocks, format="csr"),
                                        "unmet": sp.block_diag(unmet_blocks, format="csr")},
                       lower=rhs_all, upper=rhs_all)


def capacity_rows(lp: LinearProgram, alive_of: Sequence[np.ndarray], n_sources: int, ceiling: np.ndarray,
                  module_gbps: np.ndarray, capacity_gbps: np.ndarray, n_links: int) -> None:
    """Capacity per state ``s`` and surviving arc ``a`` of link ``l(a)``::

        sum_o x_{s,o,a} - t_s m_l y_l <= t_s cap_l"""
    flow_blocks, mod_blocks, rhs = [], [], []
    for alive, t in zip(alive_of, ceiling, strict=True):
        A = len(alive)
        flow_blocks.append(sp.hstack([sp.identity(A, format="csr")] * n_sources, format="csr"))
        link = alive % n_links
        mod_blocks.append(selector(np.arange(A), A, n_links, cols=link, values=-t * module_gbps[link]))
        rhs.append(t * capacity_gbps[link])
    lp.add_constraints("capacity", {"flow": sp.block_diag(flow_blocks, format="csr"),
                                    "modules": sp.vstack(mod_blocks, format="csr")},
                       upper=np.concatenate(rhs))


def strong_build_rows(lp: LinearProgram, alive_of: Sequence[np.ndarray], h_of: Sequence[np.ndarray],
                      built_links: np.ndarray, n_links: int) -> None:
    """Per state ``s``, source ``o`` with routable demand ``H_{s,o} = sum_w h_{s,o,w} > 0`` and surviving arc ``a``
    of a candidate ``c`` with a fixed cost::

        x_{s,o,a} - H_{s,o} b_c <= 0

    Valid for every integral design: with ``b_c = 0`` the arc carries nothing, and any feasible flow stays
    feasible with its cycles cancelled, which leaves each source's flow on an arc at most ``H_{s,o}``. It makes the
    LP pay the fixed cost in proportion to the largest share of a source's traffic on the route, not only to
    its capacity (the strong linking of fixed-charge network design)."""
    if not len(built_links):
        return
    b_of_link = np.full(n_links, -1)
    b_of_link[built_links] = np.arange(len(built_links))
    flow_rows, flow_cols, build_cols, coef = [], [], [], []
    offset, n_rows = 0, 0
    for alive, h in zip(alive_of, h_of, strict=True):
        A = len(alive)
        pos = np.flatnonzero(b_of_link[alive % n_links] >= 0)
        total = h.sum(axis=1)
        src = np.flatnonzero(total > 0)
        o = np.repeat(src, len(pos))
        p = np.tile(pos, len(src))
        k = len(o)
        flow_rows.append(n_rows + np.arange(k))
        flow_cols.append(offset + o * A + p)
        build_cols.append(b_of_link[alive[p] % n_links])
        coef.append(-total[o])
        offset += h.shape[0] * A
        n_rows += k
    rows = np.concatenate(flow_rows)
    if not n_rows:
        return
    lp.add_constraints("strong_build", {
        "flow": selector(rows, n_rows, offset, cols=np.concatenate(flow_cols)),
        "build": selector(rows, n_rows, len(built_links), cols=np.concatenate(build_cols), values=np.concatenate(coef))},
        upper=0.0)


def excused_rows(lp: LinearProgram, n_pairs: np.ndarray, allowance_gbps: np.ndarray) -> None:
    """Per state ``s``: ``sum_{o,w} u_{s,o,w} <= A_s`` (the unmet the design may excuse)."""
    S = len(n_pairs)
    rows = np.repeat(np.arange(S), n_pairs)
    lp.add_constraints("excused", {"unmet": selector(rows, S, int(n_pairs.sum()))}, upper=allowance_gbps)


def survive_lower_bound(base: Network, full: Network, states: Sequence[BoundState], time_limit_s: float,
                        backend: str = "highs") -> SurviveBound:
    """The relaxation's optimum (module doc) within ``time_limit_s``, in stages; every LP that finishes over a
    subset of the states is a valid bound (R1), and the best is kept:

    1. the intact state ``states[0]`` alone;
    2. the LP over every state (``joint``), first when it is small (at most ``JOINT_FIRST_COLUMNS`` columns);
    3. the intact state with each failure state alone (``max_s LP(intact, s)``), in the given order, started
       within ``SINGLES_SHARE`` of the time; then the intact state with the 2, 4, 8, ... failure states whose own
       LPs bound highest, while they finish; then the joint LP with what is left, when it was not tried first.

    Parameters
    ----------
    base
        The network the design changes (its ``candidates`` may be built).
    full
        ``base`` with every candidate built (:func:`backbone.solver.design.survivable.model.full_network`).
    states
        The intact state first, then the failure states imposed.
    time_limit_s
        Seconds for every LP together (0: skipped, no bound).
    backend
        LP backend.

    Returns
    -------
    SurviveBound
        ``status`` ``optimal`` when the joint LP finished, ``partial`` when only smaller ones did (``note`` says
        which), ``time_limit`` when none did.
    """
    t0 = time.perf_counter()
    if time_limit_s <= 0 or not len(states):
        return SurviveBound(None, "skipped", 0, 0.0, "bound_time_limit_s is 0: no lower bound computed")
    run = _BoundRun(base, full, backend, t0 + time_limit_s)
    run.try_lp([states[0]])
    failures = list(states[1:])
    joint_first = bool(failures) and len(states) * 2 * len(full.links) * len(full.demands["src"].unique()) \
        <= JOINT_FIRST_COLUMNS
    joint_done = joint_first and run.try_lp(list(states)) is not None
    single: dict[int, float] = {}
    group = 1
    if failures and not joint_done:
        for i, st in enumerate(failures):  # each alone, in at most SINGLES_SHARE of the time
            if time.perf_counter() - t0 > SINGLES_SHARE * time_limit_s:
                break
            value = run.try_lp([states[0], st])
            if value is not None:
                single[i] = value
        ranked = sorted(range(len(failures)), key=lambda i: -single.get(i, -1.0))
        size = 2
        while size < len(failures) and run.time_left() >= MIN_SOLVE_S:  # the states binding most, together
            if run.try_lp([states[0], *[failures[i] for i in ranked[:size]]]) is None:
                break
            group, size = size, 2 * size
        if not joint_first and run.time_left() >= MIN_SOLVE_S:
            joint_done = run.try_lp(list(states)) is not None
    if run.best is None:
        status, note = "time_limit", f"no LP finished within bound_time_limit_s {time_limit_s:g}"
    elif joint_done or not failures:
        status, note = "optimal", ""
    else:
        status = "partial"
        note = (f"the LP over all {len(states)} states did not finish within bound_time_limit_s {time_limit_s:g}; "
                f"the bound is the best of the intact state's LP, the LPs over the intact state with one failure "
                f"state each ({len(single)} of {len(failures)} finished)"
                + (f" and the LP over the intact state with the {group} failure states whose own LPs bound highest"
                   if group > 1 else "") + f" (best: {run.best_states} states)")
    return SurviveBound(run.best, status, run.best_states, time.perf_counter() - t0, note, run.model)


SINGLES_SHARE = 0.5
"""Share of ``bound_time_limit_s`` after which no more one-failure-state LPs start (the rest goes to LPs over
several states)."""

JOINT_FIRST_COLUMNS = 300_000
"""The joint LP (every state) is tried before the one-failure-state LPs when it has at most this many flow
columns (states x arcs x sources)."""


@dataclass
class _BoundRun:
    """The LPs of :func:`survive_lower_bound` so far: the best bound and the size of the LP that proved it."""

    base: Network
    full: Network
    backend: str
    deadline: float
    best: float | None = None
    best_states: int = 0
    model: dict[str, int] = field(default_factory=dict)

    def time_left(self) -> float:
        return self.deadline - time.perf_counter()

    def try_lp(self, subset: list[BoundState]) -> float | None:
        """Solve the LP over ``subset`` in the time left: its optimum (a bound), or None when it did not finish."""
        left = self.time_left()
        if left < MIN_SOLVE_S and self.best is not None:
            return None
        lp = build_bound_lp(self.base, self.full, subset)
        sol = solve(lp, backend=self.backend, time_limit_s=max(MIN_SOLVE_S, left))
        if sol.status.value != "optimal" or sol.bound is None:
            logger.info("survivable bound: LP over %d states %s after %.1f s", len(subset), sol.status.value,
                        sol.solve_seconds)
            return None
        if self.best is None or float(sol.bound) >= self.best:
            self.best, self.best_states, self.model = float(sol.bound), len(subset), lp.stats()
        return float(sol.bound)


def bound_states(blocks: Mapping[str, Any], states: Sequence[str], failed_of: Mapping[str, Sequence[str]],
                 ceiling_of: Mapping[str, float], allowance_gbps: Mapping[str, float]) -> list[BoundState]:
    """The relaxation's states from the design's: ``blocks[sid].has_path`` (per demand: an admissible path with
    every candidate built, :class:`backbone.solver.design.survivable.model.StateBlock` on the full network) and is
    offered in the state (a failure state leaves out the classes that pause) marks what must be routed, ``allowance_gbps[sid]`` what may go unmet (``A_s``, 0 when absent)."""
    return [BoundState(sid, tuple(failed_of[sid]), float(ceiling_of[sid]),
                       np.asarray(blocks[sid].has_path, bool) & blocks[sid].offered_demands(),
                       float(allowance_gbps.get(sid, 0.0))) for sid in states]
