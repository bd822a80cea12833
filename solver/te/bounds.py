"""Lower bounds on the min-MLU of a TE instance, and the dual pricer they share with column generation.

Lower bound (min-MLU). For any ``w >= 0`` scaled so that ``sum_a w_a cap_a = 1``, Lagrangian
relaxation of the capacity rows gives ``L(w) = sum_d h_d SP_d(w) <= MLU*`` (weak duality: the
``u`` term vanishes and each demand takes its ``w``-shortest route). ``SP_d`` ignores the SLO
limit, which can only lower it, so the bound stays valid for SLO-bound demands (whose pricing is
therefore a heuristic: a ``w``-shortest path over the SLO adds no column). The bound is computed
from the master's duals (column generation, the exact path LP) or from any sub-problem's duals
(POP); SLO-bound demands get a Lagrangian relaxation of their latency limit as well
(:meth:`DualPricer.slo_bounded`). Far from convergence the duals can price every demand at zero,
so the best of these and the single-site cut bound (:func:`site_cut_bound`) is reported as
``lower_bound``, with ``gap = (mlu - lower_bound) / mlu``.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from backbone.solver.core.problem import Solution
from backbone.solver.core.sparse import selector
from backbone.solver.te.instance import TEInstance

logger = logging.getLogger(__name__)

LAMBDA_GRID = np.array([0.03, 0.1, 0.3, 1.0, 3.0, 10.0])
"""Latency multipliers (relative to mean price / mean latency) of the SLO-constrained bound."""

SOURCE_CHUNK = 256
"""Dijkstra sources per batch in pricing (bounds the dense ``chunk x sites`` arrays)."""


# ---------------------------------------------------------------------- pricing
class DualPricer:
    """Shortest paths of demands under arc lengths ``w`` (directed; lowest ``w`` over parallel arcs)."""

    def __init__(self, inst: TEInstance) -> None:
        self.inst = inst
        self.n = inst.n_sites
        self.key = inst.arc_tail * self.n + inst.arc_head

    def slo_bounded(self, w: np.ndarray, demands: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Lower bounds on the SLO-constrained ``w``-shortest path of each demand, at least ``length``.

        For any ``lam >= 0``, ``min_{p: lat(p) <= L} w(p) >= min_p w(p) + lam (lat(p) - L)`` (Lagrangian
        relaxation of the latency limit ``L``): one Dijkstra round on ``w + lam lat`` per ``lam`` of a
        small grid around the ratio of mean price to mean latency; the best bound is kept.
        """
        inst = self.inst
        limit = inst.slo_one_way_ms[demands]
        slo = np.flatnonzero(np.isfinite(limit))
        out = length.copy()
        w = np.maximum(np.asarray(w, float), 0.0)
        lat = inst.arc_latency_ms
        if len(slo) == 0 or not (w > 0).any() or not (lat > 0).any():
            return out
        ratio = float(w[w > 0].mean()) / float(lat[lat > 0].mean())
        for lam in ratio * LAMBDA_GRID:
            d, _, _ = self.shortest(w + lam * lat, demands[slo])
            out[slo] = np.maximum(out[slo], d - lam * limit[slo])
        return out

    def shortest(self, w: np.ndarray, demands: np.ndarray, want_paths: np.ndarray | None = None
                 ) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        """``SP_d(w)`` for each demand, and the arcs of the shortest paths of ``demands[want_paths]``.

        Returns ``(length (len(demands),), [arcs per wanted path], wanted positions)``.
        """
        from scipy.sparse.csgraph import dijkstra

        from backbone.solver.paths.array_kernels import predecessor_paths

        inst, n = self.inst, self.n
        w = np.maximum(np.asarray(w, float), 0.0)
        order = np.lexsort((np.arange(len(w)), w, self.key))  # per (tail, head): lowest w, then lowest arc
        first = np.ones(len(order), bool)
        first[1:] = self.key[order][1:] != self.key[order][:-1]
        best = order[first]
        best_key = self.key[best]
        # a tiny floor keeps zero-length arcs as edges; subtracted back (per hop) below
        eps = 1e-12
        graph = selector(inst.arc_tail[best], n, n, cols=inst.arc_head[best], values=w[best] + eps)
        demands = np.asarray(demands, np.int64)
        src, dst = inst.src[demands], inst.dst[demands]
        sources, src_row = np.unique(src, return_inverse=True)
        length = np.full(len(demands), np.inf)
        want = np.zeros(len(demands), bool) if want_paths is None else np.asarray(want_paths, bool)
        wanted = np.flatnonzero(want)
        arcs_out: list[np.ndarray] = [np.zeros(0, np.int64)] * len(wanted)
        by_row = np.argsort(src_row, kind="stable")
        row_ptr = np.searchsorted(src_row[by_row], np.arange(len(sources) + 1))
        slot = np.full(len(demands), -1)
        slot[wanted] = np.arange(len(wanted))
        for c0 in range(0, len(sources), SOURCE_CHUNK):
            c1 = min(c0 + SOURCE_CHUNK, len(sources))
            dist, pred = dijkstra(graph, directed=True, indices=sources[c0:c1], return_predecessors=True)
            dist, pred = np.atleast_2d(dist), np.atleast_2d(pred)
            members = by_row[row_ptr[c0]:row_ptr[c1]]
            rows = src_row[members] - c0
            length[members] = dist[rows, dst[members]]
            sel = members[want[members]]
            if len(sel) == 0:
                continue
            sites, ptr = predecessor_paths(pred, (src_row[sel] - c0).astype(np.int64), src[sel], dst[sel])
            hops = np.diff(ptr) - 1
            tail_pos = np.delete(np.arange(len(sites)), ptr[1:] - 1)
            keys = sites[tail_pos] * n + sites[tail_pos + 1]
            arcs = best[np.searchsorted(best_key, keys)]
            arc_ptr = np.concatenate([[0], np.cumsum(hops)])
            for j, d in enumerate(sel.tolist()):
                arcs_out[slot[d]] = arcs[arc_ptr[j]:arc_ptr[j + 1]]
        finite = np.isfinite(length)
        length[finite] = np.maximum(length[finite] - eps * n, 0.0)  # at most n hops carry the floor
        return length, arcs_out, wanted


def mlu_lower_bound(inst: TEInstance, demands: np.ndarray, w: np.ndarray,
                    pricer: DualPricer | None = None) -> float:
    """Lagrangian lower bound ``sum_d h_d SP_d(w)`` on the min-MLU of ``demands`` (all paths).

    ``w >= 0`` are arc prices (e.g. minus the capacity duals of any min-MLU LP); they are scaled
    so that ``sum_a w_a cap_a = 1``. Returns 0 when ``w`` is all zero.
    """
    w = np.maximum(np.asarray(w, float), 0.0)
    scale = float(w @ inst.arc_capacity_gbps)
    if scale <= 0 or len(demands) == 0:
        return 0.0
    pricer = pricer or DualPricer(inst)
    length, _, _ = pricer.shortest(w / scale, demands)
    length = pricer.slo_bounded(w / scale, demands, length)
    return float(inst.demand_gbps[demands] @ np.where(np.isfinite(length), length, 0.0))


MWU_ITERATIONS = 40
"""Multiplicative-weights steps of :func:`refine_mlu_bound`."""


def shortest_path_loads(inst: TEInstance, demands: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Route every demand on its ``w``-shortest path: ``(SP_d(w) per demand, load per arc)``."""
    from scipy.sparse.csgraph import dijkstra

    from backbone.solver.paths.array_kernels import subtree_sums

    n = inst.n_sites
    key = inst.arc_tail * n + inst.arc_head
    order = np.lexsort((np.arange(len(w)), w, key))
    first = np.ones(len(order), bool)
    first[1:] = key[order][1:] != key[order][:-1]
    best = order[first]
    best_key = key[best]
    graph = selector(inst.arc_tail[best], n, n, cols=inst.arc_head[best], values=w[best] + 1e-12)
    src, dst, h = inst.src[demands], inst.dst[demands], inst.demand_gbps[demands]
    sources, row = np.unique(src, return_inverse=True)
    length = np.zeros(len(demands))
    load = np.zeros(inst.n_arcs)
    for c0 in range(0, len(sources), SOURCE_CHUNK):
        c1 = min(c0 + SOURCE_CHUNK, len(sources))
        dist, pred = dijkstra(graph, directed=True, indices=sources[c0:c1], return_predecessors=True)
        dist, pred = np.atleast_2d(dist), np.atleast_2d(pred)
        sel = np.flatnonzero((row >= c0) & (row < c1))
        length[sel] = dist[row[sel] - c0, dst[sel]]
        node_demand = np.zeros(dist.shape)
        np.add.at(node_demand, (row[sel] - c0, dst[sel]), h[sel])
        sub = subtree_sums(pred.astype(np.int64), dist, node_demand)
        r, v = np.nonzero((sub > 0) & (pred >= 0))
        arcs = best[np.searchsorted(best_key, pred[r, v].astype(np.int64) * n + v)]
        np.add.at(load, arcs, sub[r, v])
    return np.maximum(length - 1e-12 * n, 0.0), load


def refine_mlu_bound(inst: TEInstance, demands: np.ndarray, w0: np.ndarray | None = None,
                     iterations: int = MWU_ITERATIONS, deadline: float | None = None) -> tuple[float, np.ndarray]:
    """Improve the Lagrangian MLU bound by multiplicative weights (Garg-Koenemann style).

    Route every demand on its shortest path under prices ``w``; ``L(w) = sum_d h_d SP_d(w) / sum_a
    w_a cap_a`` is a valid bound; then raise the prices of the arcs that routing overloads,
    ``w_a <- w_a exp(eta util_a / max util)``, and repeat, keeping the best bound. Starts from
    ``w0`` (e.g. capacity duals) mixed with ``1 / cap``. The SLO is relaxed (the bound stays valid).

    Returns ``(best bound, its prices)``.
    """
    demands = np.asarray(demands, np.int64)
    cap = inst.arc_capacity_gbps
    if len(demands) == 0:
        return 0.0, np.zeros(inst.n_arcs)
    w = 1.0 / np.maximum(cap, 1e-9)
    w /= float(w @ cap)
    if w0 is not None and float(np.maximum(w0, 0) @ cap) > 0:
        w0 = np.maximum(w0, 0) / float(np.maximum(w0, 0) @ cap)
        w = 0.5 * w + 0.5 * w0
    h = inst.demand_gbps[demands]
    best, best_w = 0.0, w.copy()
    for it in range(iterations):
        if deadline is not None and time.perf_counter() > deadline:
            break
        length, load = shortest_path_loads(inst, demands, w)
        value = float(h @ length) / float(w @ cap)
        if value > best:
            best, best_w = value, w.copy()
        util = load / np.maximum(cap, 1e-9)
        top = float(util.max(initial=0.0))
        if top <= 0:
            break
        eta = 1.0 / np.sqrt(it + 1.0)
        w = w * np.exp(eta * util / top)
        w /= float(w @ cap)
    return best, best_w


POLYAK_PATIENCE = 5
"""Steps without a better bound before :func:`polyak_mlu_bound` halves its step factor."""

POLYAK_MIN_FACTOR = 1e-3
"""The step factor at which :func:`polyak_mlu_bound` stops (the schedule has converged)."""


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of ``v`` onto the probability simplex (sort-based, ``O(n log n)``)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, len(v) + 1)
    rho = int(np.flatnonzero(u - css / k > 0)[-1])
    return np.maximum(v - css[rho] / (rho + 1.0), 0.0)


def polyak_mlu_bound(inst: TEInstance, demands: np.ndarray, w0: np.ndarray, target: float,
                     deadline: float, max_iterations: int = 1_000_000,
                     step_factor: float = 1.0) -> tuple[float, np.ndarray, int]:
    """Raise the Lagrangian MLU bound by projected supergradient ascent with Polyak steps.

    In the coordinates ``v_a = w_a cap_a`` on the simplex the dual function
    ``g(v) = sum_d h_d SP_d(v / cap)`` is concave (a minimum of linear functions of ``v``) and every
    ``g(v) <= MLU*``; a supergradient at ``v`` is the utilisation ``Y_a / cap_a`` of the ``v``-shortest
    routing ``Y``. Each step moves ``v`` to the projection onto the simplex of
    ``v + theta (target - g(v)) / ||s||^2 s`` (``s`` the supergradient less its mean, ``target`` an upper
    estimate of ``MLU*`` such as the best routing's MLU), the Held-Karp schedule: ``theta`` starts at
    ``step_factor`` and halves after :data:`POLYAK_PATIENCE` steps without a better bound. The best
    ``g`` seen is kept: it is a valid bound at every step, whatever the schedule. Starts from ``w0``.

    Returns ``(best bound, its prices w (sum_a w_a cap_a = 1), steps taken)``.
    """
    demands = np.asarray(demands, np.int64)
    cap = np.maximum(inst.arc_capacity_gbps, 1e-9)
    h = inst.demand_gbps[demands]
    w0 = np.maximum(np.asarray(w0, float), 0.0)
    if len(demands) == 0 or float(w0 @ cap) <= 0:
        return 0.0, np.zeros(inst.n_arcs), 0
    v = w0 * cap / float(w0 @ cap)
    best, best_v = 0.0, v.copy()
    theta, stale, steps = step_factor, 0, 0
    while steps < max_iterations and time.perf_counter() < deadline and theta >= POLYAK_MIN_FACTOR:
        length, load = shortest_path_loads(inst, demands, v / cap)
        value = float(h @ np.where(np.isfinite(length), length, 0.0))
        steps += 1
        if value > best * (1 + 1e-9):
            best, best_v, stale = value, v.copy(), 0
        else:
            stale += 1
            if stale >= POLYAK_PATIENCE:
                theta, stale = theta / 2, 0
                v = best_v.copy()  # restart the halved schedule from the best point
                continue
        if steps % 10 == 0:
            logger.info("polyak bound: step %d, bound %.6g (best %.6g), theta %.3g", steps, value, best, theta)
        if value >= target:
            break
        s = load / cap
        s = s - s.mean()
        norm = float(s @ s)
        if norm <= 0:
            break
        v = project_simplex(v + theta * (max(target, value) - value) / norm * s)
    return best, best_v / cap, steps


def site_cut_bound(inst: TEInstance, demands: np.ndarray) -> float:
    """The MLU lower bound of single-site cuts: ``max_s max(out_s / cap_out_s, in_s / cap_in_s)``.

    All demand from site ``s`` leaves it over its outgoing arcs (and all demand to it arrives over
    its incoming arcs), whatever the routing, so some arc there runs at least that utilisation.
    Strong on real backbones, where a city often hangs off one or two links.
    """
    demands = np.asarray(demands, np.int64)
    if len(demands) == 0:
        return 0.0
    n = inst.n_sites
    h = inst.demand_gbps[demands]
    out_d = np.bincount(inst.src[demands], weights=h, minlength=n)
    in_d = np.bincount(inst.dst[demands], weights=h, minlength=n)
    out_c = np.bincount(inst.arc_tail, weights=inst.arc_capacity_gbps, minlength=n)
    in_c = np.bincount(inst.arc_head, weights=inst.arc_capacity_gbps, minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.concatenate([np.where(out_c > 0, out_d / out_c, 0.0), np.where(in_c > 0, in_d / in_c, 0.0)])
    return float(ratio.max(initial=0.0))


def lp_mlu_bound(inst: TEInstance, sol: Solution, demands: np.ndarray, pricer: DualPricer | None = None
                 ) -> float | None:
    """:func:`mlu_lower_bound` from the capacity duals of a solved min-MLU path LP (None without duals).

    ``demands`` are the LP's demands: routable ones with an admissible path (the lowest-latency
    candidates include one whenever any path meets the SLO, so every method routes the same set).
    """
    try:
        y = sol.duals("capacity")
    except (ValueError, KeyError):
        return None
    if not np.all(np.isfinite(y.to_numpy())):
        return None
    w = np.zeros(inst.n_arcs)
    w[y.index.to_numpy(np.int64)] = -y.to_numpy()
    demands = np.asarray(demands, np.int64)
    return max(mlu_lower_bound(inst, demands, w, pricer), site_cut_bound(inst, demands))
