"""Min-MLU at world scale: Frank-Wolfe on source-aggregated arc flows, with the Frank-Wolfe duality bound.

One commodity per *source* site, never per demand: the state is ``X`` (sources x arcs, Gbps), the flow
of each source's traffic on each arc, and ``Y = sum_s X_s`` the arc loads. Memory is
``sources x arcs`` floats (1,246 x 10,378 x 8 B = 103 MB on TopoHub's world backbone with 1.55 M
demands), whatever the number of demands or paths.

The objective is the MLU smoothed by a log-sum-exp of the utilisation ``u_a = Y_a / cap_a``::

    Phi_beta(Y) = (1 / beta) log sum_a exp(beta u_a),   MLU <= Phi_beta <= MLU + ln(A) / beta.

One iteration:

1. prices ``w_a = dPhi/dY_a = p_a / cap_a`` with ``p = softmax(beta u)`` (so ``sum_a w_a cap_a = 1``);
2. one Dijkstra from every source at once (scipy, C) under ``w``, then each source's demand pushed up
   its shortest-path tree (numba, :func:`~backbone.solver.te.srcflow_kernels.tree_push`): the
   all-or-nothing loads ``Z_s`` and ``Z = sum_s Z_s``;
3. the step ``g`` in [0, 1] that minimises ``Phi_beta((1 - g) Y + g Z)`` (bisection on its derivative;
   it is convex along the segment), then ``X <- (1 - g) X + g Z_s``;
4. block steps: the sources dealt at random into blocks of :data:`BLOCK_SOURCES`, each block in turn
   moved the same way towards its own trees under the prices of the loads so far (block-coordinate
   Frank-Wolfe: far smaller moves with fresher prices, which is what the tail of the convergence needs).

The smoothing error ``ln(A) / beta`` is at most ``SMOOTHING x (MLU - bound)``, at least
``MIN_SMOOTHING x MLU``, and halves whenever the Frank-Wolfe gap of the smoothed objective,
``w . (Y - Z)``, falls below it (the iterates are then near the smoothed optimum, whose prices bound
short of the MLU).

**Bound.** For any prices ``w >= 0`` (weak LP duality; the Lagrangian of the path LP)::

    MLU* >= sum_d h_d SP_d(w) / sum_a w_a cap_a,

and step 2 already computes every ``SP_d(w)``: with ``sum_a w_a cap_a = 1`` the bound is ``w . Z``. At
the Frank-Wolfe iterate ``w . Y - w . Z`` is the Frank-Wolfe duality gap and ``w . Y <= MLU``, so the
bound closes on the MLU as the iterates converge. The best bound over all iterations is kept.

**Paths** are produced once, at the end, by decomposing each source's flow ``X_s`` into paths
(:func:`~backbone.solver.te.srcflow_kernels.decompose_source_flows`, cycles cancelled: they only add
load), as int32 arc arrays in CSR form; the arc loads the result reports are recomputed from those paths.

**Warm start** (failure sweeps). ``warm`` is a solution of the same demands on a network with more capacity
(the intact network; :func:`fail_links` zeroes the failed links' arcs). Every source whose demand is unchanged
and whose flow avoids the arcs without capacity keeps its flow; the others (their flow crossed a failed arc,
or a failure cut some of their destinations off) are zeroed and re-pushed on shortest paths under the prices
of the kept loads. The warm solution's bound prices are priced on this network first (one
Dijkstra from every source: weak duality holds for any prices, so the bound is this network's own and stays
valid whatever the start); when that bound already meets the gap target against the warm routing's MLU no
iteration runs, else the iterations start from that routing (smoothing schedule as a cold start), and
restart cold after :data:`WARM_ITERATIONS` if the target is still not met.

Demands are routed without their SLO, so callers use this only when no demand has one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from backbone.solver.te.instance import TEInstance
from backbone.solver.te.sections import SourceFlowFigures, SourceFlowRun

logger = logging.getLogger(__name__)

SMOOTHING = 1.0
"""Smoothing error ``ln(A) / beta`` at most this share of the current gap ``MLU - bound``. Measured on the
world backbone (300 cities, 60 s): 0.25 ended at gap 2.6-3.2 %, 0.5 at 0.21 %, 1.0 at 0.09 % (after 23
steps): sharper prices make Frank-Wolfe's steps tiny long before they help the bound."""

SMOOTHING_DECAY = 0.5
"""When a full step's Frank-Wolfe gap on the smoothed objective is below the smoothing error, the iterates
are near the smoothed optimum (whose prices bound short of the MLU): the smoothing error shrinks by this
factor."""

MIN_SMOOTHING = 2e-4
"""Smoothing error at least this share of the MLU (keeps the line search well conditioned)."""

GAP_TOL = 1e-3
"""Stop when ``(MLU - bound) / MLU`` is below this (0.1 %)."""

BLOCK_SOURCES = 2
"""Sources per block step. After each full step the sources are dealt at random into blocks of this size,
and each block moves towards its own shortest-path trees under prices refreshed after every block, with its
own line search (block-coordinate Frank-Wolfe). Measured on the world backbone (300 cities, 60 s): blocks
of about 19 sources ended at gap 5.2 %, blocks of 2 at 2.6-3.2 %."""

WARM_ITERATIONS = 12
"""A warm-started run not at its gap target after this many iterations restarts cold (keeping its bound).
Measured on the world backbone (100 cities, 11 sampled link failures): 10 of 11 warm runs met a 1 % target in
5-15 iterations; one took 208 iterations (51.6 s against 5.9 s cold)."""

LINE_SEARCH_STEPS = 40
"""Bisection steps of the line search."""

EXP_CUTOFF = -60.0
"""Softmax terms ``exp(x - max)`` with ``x - max`` below this are taken as 0 (each is under 1e-26 of the
largest; computing them would produce denormal floats, which are very slow)."""

PRICE_FLOOR = 1e-12
"""Added to every price (relative to the largest) so zero-price arcs stay edges for Dijkstra; its effect on
the bound is subtracted (``floor x nodes x total demand``)."""


@dataclass
class SourceFlows:
    """The routing and bound of :func:`source_flow_mlu`.

    Pairs are the distinct (source, destination) sites of the demands, grouped by source row:
    ``pair_ptr[i]:pair_ptr[i + 1]`` belong to ``sources[i]``, with destination site ``pair_dst`` and
    traffic ``pair_gbps``; ``pair_of_demand[j]`` is the pair of the ``j``-th routed demand.
    ``flow`` is the per-source arc flow (sources x instance arcs).
    """

    sources: np.ndarray
    flow: np.ndarray
    pair_ptr: np.ndarray
    pair_dst: np.ndarray
    pair_gbps: np.ndarray
    pair_of_demand: np.ndarray
    mlu: float
    lower_bound: float
    iterations: int
    seconds: float
    bound_prices: np.ndarray
    """Prices (per instance arc, ``sum_a w_a cap_a = 1``) of the best bound."""

    @property
    def arc_load(self) -> np.ndarray:
        """Arc loads ``sum_s X_s`` (Gbps per instance arc)."""
        return np.asarray(self.flow.sum(axis=0))


@dataclass
class PathSplits:
    """A path decomposition: path ``p`` carries ``gbps[p]`` of pair ``pair[p]`` over arcs
    ``arcs[arc_ptr[p]:arc_ptr[p + 1]]`` (instance arcs, travel order)."""

    pair: np.ndarray
    gbps: np.ndarray
    arc_ptr: np.ndarray
    arcs: np.ndarray

    @property
    def hops(self) -> np.ndarray:
        return np.diff(self.arc_ptr)

    def arc_load(self, n_arcs: int) -> np.ndarray:
        """Gbps per arc recomputed from the paths."""
        return np.bincount(self.arcs, weights=np.repeat(self.gbps, self.hops), minlength=n_arcs)


class _Graph:
    """The arcs with capacity, one per (tail, head) pair (lowest price) for each Dijkstra."""

    def __init__(self, inst: TEInstance) -> None:
        self.n = inst.n_sites
        self.usable = np.flatnonzero(inst.arc_capacity_gbps > 0)
        self.tail = inst.arc_tail[self.usable]
        self.head = inst.arc_head[self.usable]
        self.cap = inst.arc_capacity_gbps[self.usable].astype(float)
        self.key = self.tail * self.n + self.head
        self.parallel = len(np.unique(self.key)) < len(self.key)
        order = np.argsort(self.key, kind="stable")
        self.first = order if not self.parallel else None

    def build(self, w: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
        """The Dijkstra graph under prices ``w`` (per usable arc) and its adjacency (``out_ptr``,
        ``out_head``, ``out_arc``: instance arc of each (tail, head) pair)."""
        if self.first is not None:
            best = self.first
        else:
            order = np.lexsort((w, self.key))
            keep = np.ones(len(order), bool)
            keep[1:] = self.key[order][1:] != self.key[order][:-1]
            best = order[keep]
        tails = self.tail[best]
        out_ptr = np.searchsorted(tails, np.arange(self.n + 1)).astype(np.int64)
        floor = PRICE_FLOOR * float(w.max(initial=0.0))
        graph = sp.csr_matrix((w[best] + floor, self.head[best].astype(np.int32), out_ptr), shape=(self.n, self.n))
        return graph, out_ptr, self.head[best].astype(np.int64), self.usable[best].astype(np.int64)


def _line_search(u: np.ndarray, z: np.ndarray, beta: float) -> float:
    """The ``g`` in [0, 1] minimising ``logsumexp(beta ((1 - g) u + g z))`` (bisection on the derivative)."""
    d = z - u

    def slope(g: float) -> float:
        e = beta * (u + g * d)
        e -= e.max()
        live = e > EXP_CUTOFF  # the rest weigh less than exp(EXP_CUTOFF) each (and would be slow denormals)
        # not a BLAS dot product: its threads spin and stall for milliseconds on a busy machine
        return float((np.exp(e[live]) * d[live]).sum())

    if slope(0.0) >= 0:
        return 0.0
    if slope(1.0) <= 0:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(LINE_SEARCH_STEPS):
        mid = 0.5 * (lo + hi)
        if slope(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class _Routing:
    """The Frank-Wolfe state: per-source arc flows ``flow`` (sources x instance arcs) and the loads ``load`` of
    the usable arcs, with the all-or-nothing routing and the moves of :func:`source_flow_mlu`."""

    def __init__(self, inst: TEInstance, sources: np.ndarray, demand: np.ndarray) -> None:
        self.graph = _Graph(inst)
        self.n_arcs = inst.n_arcs
        self.sources = sources
        self.demand = demand
        self.flow = np.zeros((len(sources), inst.n_arcs))
        self.load = np.zeros(len(self.graph.cap))

    def prices(self, beta: float) -> np.ndarray:
        """Gradient of the smoothed MLU at ``load``: ``softmax(beta u) / cap`` (negligible terms 0)."""
        cap = self.graph.cap
        e = beta * (self.load / cap)
        e -= e.max()
        p = np.zeros(len(e))
        live = e > EXP_CUTOFF
        p[live] = np.exp(e[live])
        return p / p.sum() / cap

    def all_or_nothing(self, rows: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Shortest-path trees of sources ``rows`` under ``w``: tree arcs, subtree demand, summed arc loads
        and ``sum_d h_d SP_d`` (with the price floor)."""
        from scipy.sparse.csgraph import dijkstra

        from backbone.solver.te.srcflow_kernels import tree_push

        graph, out_ptr, out_head, out_arc = self.graph.build(w)
        dist, pred = dijkstra(graph, directed=True, indices=self.sources[rows], return_predecessors=True)
        dist, pred = np.atleast_2d(dist), np.atleast_2d(pred)
        dem = self.demand[rows]
        tree_arc, subtree, z_full = tree_push(dist, pred, dem, out_ptr, out_head, out_arc, self.n_arcs)
        reached = np.isfinite(dist)
        return tree_arc, subtree, z_full, float((dem[reached] * dist[reached]).sum())

    def move(self, rows: np.ndarray, tree_arc: np.ndarray, subtree: np.ndarray, step: float,
             direction: np.ndarray) -> None:
        """``X_rows <- (1 - step) X_rows + step Z_rows`` and ``load += step * direction``."""
        if step <= 0:
            return
        block = self.flow[rows] * (1.0 - step)
        mask = tree_arc >= 0
        r, _v = np.nonzero(mask)
        block[r, tree_arc[mask]] += step * subtree[mask]
        self.flow[rows] = block
        self.load = self.load + step * direction

    def block_steps(self, beta: float, blocks: list[np.ndarray]) -> None:
        """Block-coordinate Frank-Wolfe: each block of sources in turn moves towards its own trees under the
        prices of the current loads, by its own line search."""
        usable, cap = self.graph.usable, self.graph.cap
        for block in blocks:
            rows = np.sort(block)
            tree_arc, subtree, z_full, _ = self.all_or_nothing(rows, self.prices(beta))
            direction = z_full[usable] - self.flow[rows].sum(axis=0)[usable]
            u = self.load / cap
            step = _line_search(u, u + direction / cap, beta)
            self.move(rows, tree_arc, subtree, step, direction)


def source_flow_mlu(inst: TEInstance, demands: np.ndarray, deadline: float, max_iterations: int | None = None,
                    gap_tol: float = GAP_TOL, block_sources: int = BLOCK_SOURCES, progress: Callable[[str], None] | None = None,
                    warm: SourceFlows | None = None) -> SourceFlows:
    """Min-MLU of ``demands`` (no SLOs) by Frank-Wolfe on source-aggregated flows (module docstring).

    Parameters
    ----------
    inst
        The instance.
    demands
        Positions of the routable demands to route (every one with a path).
    deadline
        Absolute ``time.perf_counter()`` instant: no iteration starts unless the last one's time still fits.
    max_iterations
        Iterations at most (``None``: until the gap closes to ``gap_tol`` or the deadline).
    gap_tol
        Stop when ``(MLU - bound) / MLU`` is at most this.
    block_sources
        Sources per block step (:data:`BLOCK_SOURCES`).
    progress
        Called with a one-line status after each iteration.
    warm
        A solution of these demands on the same sites and arcs with at least this capacity per arc (the
        intact network before :func:`fail_links`): the start (module docstring, *Warm start*).

    Returns
    -------
    SourceFlows
        The per-source flows (every demand fully routed), their MLU and the best proven lower bound.
    """
    t0 = time.perf_counter()
    demands = np.asarray(demands, np.int64)
    n = inst.n_sites
    src, dst, h = inst.src[demands], inst.dst[demands], inst.demand_gbps[demands]
    pair_key, pair_of_demand = np.unique(src * n + dst, return_inverse=True)
    pair_gbps = np.bincount(pair_of_demand, weights=h, minlength=len(pair_key))
    pair_src, pair_dst = pair_key // n, pair_key % n
    sources, pair_row = np.unique(pair_src, return_inverse=True)
    pair_ptr = np.searchsorted(pair_row, np.arange(len(sources) + 1)).astype(np.int64)
    demand = np.zeros((len(sources), n))
    demand[pair_row, pair_dst] = pair_gbps
    total_demand = float(pair_gbps.sum())

    r = _Routing(inst, sources, demand)
    g, cap, n_arcs = r.graph, r.graph.cap, inst.n_arcs
    log_arcs = float(np.log(max(len(cap), 2)))
    best_lb, best_w = 0.0, np.zeros(n_arcs)
    mlu = np.inf
    it = 0
    last_s = 0.0
    n_blocks = max(1, len(sources) // max(1, block_sources))
    spread = np.inf
    all_rows = np.arange(len(sources))
    rng = np.random.default_rng(0)
    if warm is not None:
        mlu, best_lb, best_w = _warm_begin(r, warm, n, total_demand)
    first = warm is None  # the next iteration routes from scratch (step 1, prices 1 / cap)
    while warm is None or mlu <= 0 or (mlu - best_lb) > gap_tol * mlu:
        if warm is not None and it == WARM_ITERATIONS:  # the failure moved the optimum far: start cold
            r.flow[:] = 0.0
            r.load = np.zeros(len(cap))
            first, spread = True, np.inf
        if max_iterations is not None and it >= max_iterations:
            break
        if it > 0 and time.perf_counter() + last_s > deadline:
            break
        t_it = time.perf_counter()
        if first:
            w = 1.0 / cap / len(cap)  # first routing: prices 1 / cap (fewest-hop-like, shuns thin links)
            beta = 0.0
        else:
            spread = max(min(spread, SMOOTHING * (mlu - best_lb)), MIN_SMOOTHING * mlu)
            beta = log_arcs / spread
            w = r.prices(beta)
        # a full Frank-Wolfe step: every source at once, under one price vector (this gives the bound)
        tree_arc, subtree, z_full, sp_total = r.all_or_nothing(all_rows, w)
        floor = PRICE_FLOOR * float(w.max(initial=0.0))
        w_cap = float((w * cap).sum())  # not BLAS (see _line_search)
        lb = max(0.0, sp_total - floor * n * total_demand) / w_cap
        if lb > best_lb:
            best_lb = lb
            best_w = np.zeros(n_arcs)
            best_w[g.usable] = w / w_cap
        fw_gap = float((w * (r.load - z_full[g.usable])).sum()) / w_cap if not first else np.inf
        if fw_gap < spread:
            spread *= SMOOTHING_DECAY  # near the smoothed optimum: sharpen
        z = z_full[g.usable]
        step = 1.0 if first else _line_search(r.load / cap, z / cap, beta)
        r.move(all_rows, tree_arc, subtree, step, z - r.load)
        del tree_arc, subtree
        if not first and n_blocks > 1:
            r.block_steps(beta, np.array_split(rng.permutation(len(sources)), n_blocks))
        mlu = float((r.load / cap).max(initial=0.0))
        it += 1
        first = False
        last_s = time.perf_counter() - t_it
        gap = (mlu - best_lb) / mlu if mlu > 0 else 0.0
        logger.debug("source flows: iteration %d, MLU %.6g, bound %.6g, gap %.3f%%, step %.3g, smoothing %.3g, "
                     "Frank-Wolfe gap %.3g, %.2fs", it, mlu, best_lb, 100 * gap, step, spread, fw_gap, last_s)
        if progress is not None:
            progress(f"iteration {it}: MLU {mlu:.5g}, bound {best_lb:.5g}, gap {100 * gap:.2f}%")
        if mlu <= 0 or gap <= gap_tol:
            break
    load_full = np.asarray(r.flow.sum(axis=0))
    mlu = float((load_full[g.usable] / cap).max(initial=0.0))
    seconds = time.perf_counter() - t0
    logger.info("source flows: %d sources, %d pairs, %d iterations in %.1fs: MLU %.6g, bound %.6g", len(sources),
                len(pair_key), it, seconds, mlu, best_lb)
    return SourceFlows(sources, r.flow, pair_ptr, pair_dst, pair_gbps, pair_of_demand, mlu, min(best_lb, mlu), it,
                       seconds, best_w)


def _warm_begin(r: _Routing, warm: SourceFlows, n: int, total_demand: float) -> tuple[float, float, np.ndarray]:
    """Start from ``warm`` (:func:`_warm_start`) and price its bound prices on this network (a bound of this
    network's own); returns the start's MLU, that bound and its prices (scaled, every arc)."""
    g, cap = r.graph, r.graph.cap
    kept_sources = _warm_start(r, warm)
    mlu = float((r.load / cap).max(initial=0.0))
    best_lb, best_w = 0.0, np.zeros(r.flow.shape[1])
    w = warm.bound_prices[g.usable]
    w_cap = float((w * cap).sum())
    if w_cap > 0:
        sp_total = r.all_or_nothing(np.arange(r.flow.shape[0]), w)[3]
        best_lb = max(0.0, sp_total - PRICE_FLOOR * float(w.max(initial=0.0)) * n * total_demand) / w_cap
        if best_lb > 0:
            best_w[g.usable] = w / w_cap
    logger.debug("source flows: warm start keeps %d of %d sources, MLU %.6g, bound %.6g", kept_sources,
                 r.flow.shape[0], mlu, best_lb)
    return mlu, best_lb, best_w


def _warm_start(r: _Routing, warm: SourceFlows) -> int:
    """Set ``r``'s flows from ``warm`` (module docstring, *Warm start*); returns the number of sources kept."""
    n = r.demand.shape[1]
    if warm.flow.shape[1] != r.n_arcs:
        raise ValueError(f"warm start has {warm.flow.shape[1]} arcs, the instance {r.n_arcs}")
    warm_demand = np.zeros((len(warm.sources), n))
    warm_row = np.repeat(np.arange(len(warm.sources)), np.diff(warm.pair_ptr))
    warm_demand[warm_row, warm.pair_dst] = warm.pair_gbps
    pos = np.minimum(np.searchsorted(warm.sources, r.sources), max(0, len(warm.sources) - 1))
    found = (warm.sources[pos] == r.sources) if len(warm.sources) else np.zeros(len(r.sources), bool)
    dead = np.ones(r.n_arcs, bool)
    dead[r.graph.usable] = False
    tol = 1e-9 * max(1.0, float(r.demand.max(initial=0.0)))
    keep = found.copy()
    keep[found] = (np.abs(warm_demand[pos[found]] - r.demand[found]).max(axis=1) <= tol) & (
        warm.flow[pos[found]][:, dead].max(axis=1, initial=0.0) <= tol)
    kept = np.flatnonzero(keep)
    r.flow[kept] = warm.flow[pos[kept]]
    r.flow[np.ix_(kept, np.flatnonzero(dead))] = 0.0
    r.load = r.flow[kept].sum(axis=0)[r.graph.usable] if len(kept) else np.zeros(len(r.graph.cap))
    redo = np.flatnonzero(~keep)
    if len(redo):
        cap = r.graph.cap
        mlu = float((r.load / cap).max(initial=0.0))
        spread = max(SMOOTHING * (warm.mlu - warm.lower_bound), MIN_SMOOTHING * max(mlu, warm.mlu))
        beta = float(np.log(max(len(cap), 2))) / spread
        tree_arc, subtree, z_full, _ = r.all_or_nothing(redo, r.prices(beta))
        r.move(redo, tree_arc, subtree, 1.0, z_full[r.graph.usable])
    return len(kept)


def fail_links(inst: TEInstance, links: np.ndarray) -> TEInstance:
    """``inst`` with the links at positions ``links`` failed: their arcs' capacity 0 and the demands their loss
    cuts off marked ``disconnected`` (arc and demand positions unchanged, so a solution of ``inst`` is a warm
    start for :func:`source_flow_mlu` on the result)."""
    from scipy.sparse.csgraph import connected_components

    from backbone.solver.te.instance import REASON_DISCONNECTED

    links = np.asarray(links, np.int64)
    cap = inst.arc_capacity_gbps.copy()
    cap[links] = 0.0
    cap[links + inst.n_links] = 0.0
    live = cap > 0
    n = inst.n_sites
    adj = sp.csr_matrix((np.ones(int(live.sum())), (inst.arc_tail[live], inst.arc_head[live])), shape=(n, n))
    _, comp = connected_components(adj, directed=False)
    reason = inst.reason.copy()
    reason[(reason == "") & (comp[inst.src] != comp[inst.dst])] = REASON_DISCONNECTED
    return replace(inst, arc_capacity_gbps=cap, reason=reason)


def decompose(inst: TEInstance, sf: SourceFlows) -> PathSplits:
    """Paths of ``sf``'s per-source flows (cycles cancelled), each pair's paths scaled to carry exactly its
    traffic. The flows are consumed (``sf.flow`` is left zeroed)."""
    from backbone.solver.te.srcflow_kernels import decompose_source_flows

    usable = inst.arc_capacity_gbps > 0
    arcs_in = np.flatnonzero(usable)
    order = arcs_in[np.argsort(inst.arc_head[arcs_in], kind="stable")]
    in_ptr = np.searchsorted(inst.arc_head[order], np.arange(inst.n_sites + 1)).astype(np.int64)
    tol = 1e-12 * max(1.0, float(sf.pair_gbps.max(initial=0.0)))
    pair, gbps, arc_ptr, arcs = decompose_source_flows(sf.flow, sf.sources.astype(np.int64), sf.pair_ptr,
                                                       sf.pair_dst.astype(np.int64), sf.pair_gbps,
                                                       inst.arc_tail.astype(np.int64), in_ptr, order.astype(np.int64),
                                                       inst.n_sites, tol)
    got = np.bincount(pair, weights=gbps, minlength=len(sf.pair_gbps))
    short = sf.pair_gbps - got
    worst = float(np.abs(short).max(initial=0.0) / max(1e-300, float(sf.pair_gbps.max(initial=0.0))))
    if worst > 1e-6:
        logger.warning("path decomposition: a pair's paths are %.3g of the largest pair off its traffic "
                       "(scaled to it)", worst)
    missing = np.flatnonzero(got <= 0)
    if len(missing):
        raise RuntimeError(f"path decomposition found no path for {len(missing)} pairs")
    gbps = gbps * (sf.pair_gbps / got)[pair]
    return PathSplits(pair, gbps, arc_ptr, arcs)


PATH_TABLE_MAX_ROWS = 400_000
"""Path-split rows at most in the result's ``paths`` table. Each row holds two strings of ~60 site and
link names on the world backbone (about 1.5 kB), and the independent checker explodes them per hop, so
past this the table lists the paths of the largest demands only (``paths_complete`` false, the summary
says how many); link loads, MLU, bound and every demand's latency still cover every path."""

RESULT_SECONDS_PER_PAIR = 30e-6
"""Time kept for the decomposition and the result tables per (source, destination) pair, on top of the
path table itself (:data:`~backbone.solver.te.warmstart.EXTRACT_SECONDS_PER_COLUMN` per row)."""


def result_seconds(n_pairs: int) -> float:
    """Seconds kept after the iterations for the path decomposition and the result tables."""
    from backbone.solver.te.warmstart import EXTRACT_SECONDS_PER_COLUMN

    return 2.0 + RESULT_SECONDS_PER_PAIR * n_pairs + 1.5 * EXTRACT_SECONDS_PER_COLUMN * min(
        PATH_TABLE_MAX_ROWS, 4 * n_pairs)


def run_source_flows(inst: TEInstance, demands: np.ndarray, deadline: float,
                     progress: Callable[[float, str], None] | None = None, warm: SourceFlows | None = None,
                     gap_tol: float = GAP_TOL, keep_flows: bool = False) -> Any:
    """Min-MLU of ``demands`` (routable, no SLOs) by :func:`source_flow_mlu`, as the
    :class:`~backbone.solver.te.colgen.ScaleOutcome` :func:`backbone.solver.te.solve_te` reports.

    The iterations stop early enough for the decomposition and the tables (:func:`result_seconds`) to fit
    ``deadline``. The result's arc loads are those of the decomposed paths; its ``paths`` table holds at most
    :data:`PATH_TABLE_MAX_ROWS` rows (the largest demands first), and ``extra`` says how much it lists.
    ``warm`` and ``gap_tol`` are :func:`source_flow_mlu`'s; with ``keep_flows`` the outcome's ``flows`` holds the
    per-source flows (a warm start for a failed state of this instance,
    :func:`~backbone.solver.te.srcflow_warm.warm_on`).
    """
    from backbone.solver.core.problem import Status
    from backbone.solver.te.colgen import GAP_TOL as PROVEN_GAP
    from backbone.solver.te.colgen import ScaleOutcome
    from backbone.solver.te.colpool import splits_frame
    from backbone.solver.te.result import DemandPathStats

    say = progress or (lambda f, m: None)
    demands = np.asarray(demands, np.int64)
    n_pairs = len(np.unique(inst.src[demands] * inst.n_sites + inst.dst[demands]))
    stop = deadline - result_seconds(n_pairs)
    start = time.perf_counter()
    span = max(1e-9, stop - start)
    say(0.1, "source flows: first routing")
    sf = source_flow_mlu(inst, demands, stop, gap_tol=gap_tol, warm=warm,
                         progress=lambda m: say(0.1 + 0.75 * min(1.0, (time.perf_counter() - start) / span),
                                                f"source flows: {m}"))
    # the iterations end at the gap target or when the next one would not fit the time left
    timed_out = sf.mlu > 0 and (sf.mlu - sf.lower_bound) / sf.mlu > gap_tol
    kept = replace(sf, flow=sf.flow.copy()) if keep_flows else None
    say(0.86, "source flows: path decomposition")
    t0 = time.perf_counter()
    flow_mlu = sf.mlu
    ps = decompose(inst, sf)
    sf.flow = np.zeros((0, 0))
    arc_load = ps.arc_load(inst.n_arcs)
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(inst.arc_capacity_gbps > 0, arc_load / inst.arc_capacity_gbps, 0.0)
    mlu = float(util.max(initial=0.0))
    # per-demand figures over every path
    lat = np.add.reduceat(inst.arc_latency_ms[ps.arcs], ps.arc_ptr[:-1]) if len(ps.arcs) else np.zeros(0)
    n_pair = len(sf.pair_gbps)
    pair_lat = np.bincount(ps.pair, weights=ps.gbps * lat, minlength=n_pair) / sf.pair_gbps
    pair_worst = np.full(n_pair, -np.inf)
    np.maximum.at(pair_worst, ps.pair, lat)
    pair_paths = np.bincount(ps.pair, minlength=n_pair)
    k = sf.pair_of_demand
    stats = DemandPathStats(demands, pair_lat[k], pair_worst[k], pair_paths[k], 0, int(pair_paths[k].sum()), 0, 0.0)
    # the paths table: every demand's paths, or those of the largest demands up to PATH_TABLE_MAX_ROWS rows
    h = inst.demand_gbps[demands]
    order = np.argsort(-h, kind="stable")
    rows_needed = np.cumsum(pair_paths[k][order])
    listed = order[:int(np.searchsorted(rows_needed, PATH_TABLE_MAX_ROWS, side="right"))]
    listed = np.sort(listed)
    pair_ptr = np.concatenate([[0], np.cumsum(pair_paths)]).astype(np.int64)
    from backbone.solver.paths.candidates import csr_ranges

    lk = k[listed]
    cols = csr_ranges(pair_ptr[lk], pair_paths[lk].astype(np.int64))
    col_demand = np.repeat(demands[listed], pair_paths[lk])
    share = np.repeat(h[listed] / sf.pair_gbps[lk], pair_paths[lk])
    hops = ps.hops[cols]
    arcs = ps.arcs[csr_ranges(ps.arc_ptr[:-1][cols], hops.astype(np.int64))]
    splits = splits_frame(inst, col_demand, arcs, hops, ps.gbps[cols] * share, 0.0)
    stats.table_rows = len(splits)
    stats.demands_listed = len(listed)
    stats.traffic_share = float(h[listed].sum() / h.sum()) if h.sum() > 0 else 1.0
    carried = np.zeros(inst.n_demands)
    carried[demands] = h
    from backbone.solver.te.bounds import site_cut_bound

    lb = max(sf.lower_bound, site_cut_bound(inst, demands))
    extra = SourceFlowFigures(
        engine="source_flows",
        masters_skipped=(f"{len(demands):,} demands: more than the restricted-master threshold; the "
                         "source-aggregated Frank-Wolfe routing is the answer"),
        source_flows=SourceFlowRun(sources=len(sf.sources), pairs=n_pair, iterations=sf.iterations,
                                   seconds=sf.seconds, flow_mlu=flow_mlu, lower_bound=lb, gap_tol=gap_tol,
                                   warm_start=warm is not None),
        columns=len(ps.pair),
        paths=len(ps.pair),
        paths_in_table=stats.table_rows,
        result_seconds=time.perf_counter() - t0,
    )
    proven = mlu <= 0 or (mlu - lb) <= PROVEN_GAP * mlu
    return ScaleOutcome(Status.OPTIMAL if proven else Status.FEASIBLE, mlu, arc_load, carried, inst.reason.copy(),
                        splits, [], lb, sf.seconds, extra, timed_out, stats, flows=kept)
