"""Exact TE at scale: path-based column generation, and the Lagrangian bound every method reports.

The *full path LP* routes each demand over every admissible loopless path (latency within its
SLO), not only ``k`` candidates. Column generation solves it without listing those paths:

1. a *restricted master* LP over a pool of paths (columns): the lowest-latency admissible path of
   every demand, and the ``k`` admissible candidates of SLO-bound demands;
2. *pricing*: with demand-row duals ``pi_d`` and capacity-row duals ``y_a <= 0`` of the master,
   arc lengths ``w_a = -y_a >= 0``, a path ``p`` of demand ``d`` has reduced cost
   ``rc_p = sum_{a in p} w_a - pi_d``. One Dijkstra per source (scipy, directed, lowest ``w`` over
   parallel arcs) finds every demand's ``w``-shortest path ``SP_d(w)``; paths with
   ``rc_p < 0`` (and latency within the SLO) join the pool;
3. repeat until no column prices out, the gap closes or the time limit is reached.

Memory grows with the active paths, not with ``k x demands``.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from backbone.solver.deadline import Deadline, TimeLimitReached
from backbone.solver.problem import INF, Solution, Status, solve
from backbone.solver.te.formulations import (
    SPLIT_COLUMNS,
    ModelSpec,
    RowSpec,
    VarSpec,
    admissible_paths,
    block_values,
    capacity_rows,
    demand_rows,
    path_strings,
)
from backbone.solver.te.instance import REASON_SLO, TEInstance
from backbone.solver.te.objectives import HELD_PENALTY, REL_TOL, TIMED_OUT_MARGIN_S, Stage, backend_options

from backbone.errors import InfeasibleError, SolverError

if TYPE_CHECKING:
    from backbone.solver.te.warmstart import WarmStart
from backbone.schema import TRAFFIC_CLASSES

logger = logging.getLogger(__name__)

MAX_ITERATIONS = 100
"""Master solves per stage at most."""

RC_TOL = 1e-7
"""A column joins the pool when its reduced cost is below ``-RC_TOL * max(pi_d, tiny)``."""

GAP_TOL = 1e-4
"""Min-MLU stops when ``(mlu - lower_bound) / mlu`` is below this (0.01 %)."""

LAMBDA_GRID = np.array([0.03, 0.1, 0.3, 1.0, 3.0, 10.0])
"""Latency multipliers (relative to mean price / mean latency) of the SLO-constrained bound."""

MASTER_MAX_DEMANDS = 50_000
"""Min-MLU without SLOs: above this many demands the restricted master is not solved and the
flow-deviation routing with its mirror-ascent bound (:mod:`backbone.solver.te.warmstart`) is the
answer. Measured on the world backbone: the first master of the 300-city subset (89,700 demands, the
flow-deviation columns) had not finished after 3 minutes, while flow deviation reaches a better
routing than 12 masters did in 4 minutes."""

WARM_SHARE = 0.25
"""Share of the time budget flow deviation may take before the masters (it stops earlier on a stall)."""

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
        from backbone.solver.path_kernels import predecessor_paths
        from scipy.sparse.csgraph import dijkstra

        inst, n = self.inst, self.n
        w = np.maximum(np.asarray(w, float), 0.0)
        order = np.lexsort((np.arange(len(w)), w, self.key))  # per (tail, head): lowest w, then lowest arc
        first = np.ones(len(order), bool)
        first[1:] = self.key[order][1:] != self.key[order][:-1]
        best = order[first]
        best_key = self.key[best]
        # a tiny floor keeps zero-length arcs as edges; subtracted back (per hop) below
        eps = 1e-12
        graph = sp.csr_matrix((w[best] + eps, (inst.arc_tail[best], inst.arc_head[best])), shape=(n, n))
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
    from backbone.solver.path_kernels import subtree_sums
    from scipy.sparse.csgraph import dijkstra

    n = inst.n_sites
    key = inst.arc_tail * n + inst.arc_head
    order = np.lexsort((np.arange(len(w)), w, key))
    first = np.ones(len(order), bool)
    first[1:] = key[order][1:] != key[order][:-1]
    best = order[first]
    best_key = key[best]
    graph = sp.csr_matrix((w[best] + 1e-12, (inst.arc_tail[best], inst.arc_head[best])), shape=(n, n))
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


# ---------------------------------------------------------------------- the column pool
@dataclass
class ColumnPool:
    """Paths in the master: per column its LP-demand row and arcs (flat, int32)."""

    n_arcs: int
    demand: list[np.ndarray] = field(default_factory=list)
    arcs: list[np.ndarray] = field(default_factory=list)
    hops: list[np.ndarray] = field(default_factory=list)
    seen: set[bytes] = field(default_factory=set)

    def add(self, demand: np.ndarray, arcs_flat: np.ndarray, hops: np.ndarray) -> int:
        """Add columns not already in the pool; returns how many were added."""
        ptr = np.concatenate([[0], np.cumsum(hops)])
        keep = []
        for j, d in enumerate(demand.tolist()):
            key = np.int64(d).tobytes() + arcs_flat[ptr[j]:ptr[j + 1]].astype(np.int32).tobytes()
            if key not in self.seen:
                self.seen.add(key)
                keep.append(j)
        if not keep:
            return 0
        idx = np.asarray(keep)
        lens = hops[idx]
        starts = ptr[:-1][idx]
        flat = np.concatenate([arcs_flat[s:s + m] for s, m in zip(starts.tolist(), lens.tolist(), strict=True)])
        self.demand.append(demand[idx].astype(np.int64))
        self.arcs.append(flat.astype(np.int32))
        self.hops.append(lens.astype(np.int32))
        return len(idx)

    @property
    def n(self) -> int:
        return int(sum(len(d) for d in self.demand))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        demand = np.concatenate(self.demand) if self.demand else np.zeros(0, np.int64)
        arcs = np.concatenate(self.arcs) if self.arcs else np.zeros(0, np.int32)
        hops = np.concatenate(self.hops) if self.hops else np.zeros(0, np.int32)
        return demand, arcs, hops

    def arc_map(self) -> sp.csr_matrix:
        """``2L x n_columns`` arc-load map (``P^T``)."""
        _, arcs, hops = self.arrays()
        ptr = np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)
        m = sp.csc_matrix((np.ones(len(arcs)), arcs, ptr), shape=(self.n_arcs, len(hops)))
        return m.tocsr()


# ---------------------------------------------------------------------- result of a scalable method
@dataclass
class ScaleOutcome:
    """What :func:`run_colgen` (and POP) hand back to :func:`backbone.solver.te.solve_te`."""

    status: Status
    objective_value: float
    arc_load: np.ndarray
    carried: np.ndarray
    reason: np.ndarray
    splits: pd.DataFrame
    stages: list[Stage]
    lower_bound: float | None
    paths_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)
    timed_out: bool = False
    """The time limit stopped the run (the answer is the best feasible one found, with its bound)."""


def splits_frame(inst: TEInstance, col_demand: np.ndarray, arcs: np.ndarray, hops: np.ndarray, f: np.ndarray,
                 tol: float) -> pd.DataFrame:
    """Path-split rows (:data:`SPLIT_COLUMNS`) of the columns carrying more than ``tol`` Gbps.

    Column ``i`` routes ``f[i]`` of instance demand ``col_demand[i]`` over arcs
    ``arcs[ptr[i]:ptr[i + 1]]`` (``ptr = cumsum(hops)``, travel order).
    """
    from backbone.solver.paths import PathSet

    used = np.flatnonzero(f > tol)
    if len(used) == 0:
        return pd.DataFrame({c: [] for c in SPLIT_COLUMNS})
    ptr = np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)
    lens = hops[used].astype(np.int64)
    from backbone.solver.paths import csr_ranges

    arc_seq = arcs[csr_ranges(ptr[:-1][used], lens)].astype(np.int64)
    arc_ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    first = arc_seq[arc_ptr[:-1]]
    site_seq = np.insert(inst.arc_head[arc_seq], arc_ptr[:-1], inst.arc_tail[first])
    site_ptr = arc_ptr + np.arange(len(used) + 1)
    n_links = inst.n_links
    link_of = arc_seq % n_links
    lat = np.add.reduceat(inst.arc_latency_ms[arc_seq], arc_ptr[:-1]) if len(arc_seq) else np.zeros(0)
    n = len(used)
    inc = sp.csr_matrix((np.ones(len(arc_seq)), arc_seq, arc_ptr), shape=(n, 2 * n_links))
    link_inc = sp.csr_matrix((np.ones(len(arc_seq)), link_of, arc_ptr), shape=(n, n_links))
    pairs = pd.DataFrame({"src": inst.site_ids[inst.src[col_demand[used]]].astype(str),
                          "dst": inst.site_ids[inst.dst[col_demand[used]]].astype(str)})
    ps = PathSet(inst.link_ids, inst.site_ids, pairs, np.arange(n), lat, np.zeros(n), lens, inc, link_inc,
                 site_seq, site_ptr, arc_seq, arc_ptr)
    sites, links = path_strings(ps, np.arange(n), inst)
    return pd.DataFrame({"demand_pos": col_demand[used], "path_sites": sites, "path_links": links,
                         "hops": lens, "latency_ms": lat, "gbps": f[used]})


def _initial_pool(inst: TEInstance, cand: np.ndarray, k: int, deadline: Deadline | None = None
                  ) -> tuple[ColumnPool, np.ndarray, np.ndarray, float]:
    """Lowest-latency admissible path per demand (``k`` for SLO demands); LP demands and reasons."""
    reason = inst.reason.copy()
    slo = cand[inst.has_slo[cand]]
    free = cand[~inst.has_slo[cand]]
    parts = [admissible_paths(inst, free, 1, False, deadline), admissible_paths(inst, slo, k, False, deadline)]
    has = np.zeros(inst.n_demands, bool)
    for dp in parts:
        has[dp.var_demand] = True
    reason[cand[~has[cand]]] = REASON_SLO
    lp_demands = cand[has[cand]]
    pos = np.full(inst.n_demands, -1)
    pos[lp_demands] = np.arange(len(lp_demands))
    pool = ColumnPool(inst.n_arcs)
    for dp in parts:
        if len(dp.var_demand) == 0:
            continue
        ps = dp.paths
        lens = ps.path_hops[dp.var_path].astype(np.int64)
        from backbone.solver.paths import csr_ranges

        flat = ps._arc_seq[csr_ranges(ps._arc_ptr[:-1][dp.var_path], lens)]
        pool.add(pos[dp.var_demand], flat, lens)
    return pool, lp_demands, reason, sum(dp.seconds for dp in parts)


def run_colgen(inst: TEInstance, objective: str, k: int = 4, backend: str = "highs", time_limit: float = 120.0,
               ceiling: float | None = None, lp_method: str = "auto",
               progress: Callable[[float, str], None] | None = None, deadline: float | None = None
               ) -> ScaleOutcome:
    """Column generation for ``min-mlu`` or ``max-throughput`` over every admissible path.

    Parameters
    ----------
    inst
        The instance.
    objective
        ``min-mlu`` or ``max-throughput`` (lexicographic by class: one column generation per stage).
    k
        Candidate paths that SLO-bound demands start with.
    time_limit, deadline
        Seconds for the whole run (path search included), or an absolute ``time.perf_counter()``
        deadline; when it stops the run, the best master solution so far is returned with its bound.

    Raises
    ------
    SolverError
        No feasible master solution within the time limit, or a backend failure.
    """
    progress = progress or (lambda f, m: None)
    deadline = deadline if deadline is not None else time.perf_counter() + time_limit
    final_deadline = deadline
    # keep a share of the time for the bound refinement after the masters
    deadline -= min(60.0, 0.1 * max(0.0, deadline - time.perf_counter())) if objective == "min-mlu" else 0.0
    if objective not in ("min-mlu", "max-throughput"):
        raise ValueError(f"column generation supports min-mlu and max-throughput, not {objective!r}")
    cand = np.flatnonzero(inst.routable)
    warm_start = objective == "min-mlu" and not inst.has_slo[cand].any() and len(cand) > 0
    if warm_start:  # every routable demand has an admissible path; flow deviation seeds the pool
        pool, lp_demands, reason, paths_seconds = ColumnPool(inst.n_arcs), cand, inst.reason.copy(), 0.0
    else:
        pool, lp_demands, reason, paths_seconds = _initial_pool(inst, cand, k, Deadline(deadline))
    n_lp = len(lp_demands)
    h = inst.demand_gbps[lp_demands]
    limit = inst.slo_one_way_ms[lp_demands]
    has_slo = bool(np.isfinite(limit).any())
    pricer = DualPricer(inst)
    stages: list[Stage] = []
    worst = Status.OPTIMAL
    tol = 1e-7 * max(1.0, float(inst.demand_gbps.max(initial=0.0)))
    iterations = 0
    timed_out = False
    best_lb: float | None = site_cut_bound(inst, lp_demands) if objective == "min-mlu" else None
    # interior-point duals are central: far better prices (and bounds) than simplex's extreme duals,
    # which make column generation tail off on degenerate TE masters
    master_method = "ipm" if lp_method == "auto" else lp_method
    last_w: np.ndarray | None = None

    def master(name: str, costs: dict[str, Any], bounds: dict[str, Any], extra: list[RowSpec]) -> Solution:
        t0 = time.perf_counter()
        col_demand, _, _ = pool.arrays()
        spec = ModelSpec()
        spec.variables["flow"] = VarSpec(pd.RangeIndex(pool.n, name="column"), 0.0, INF)
        spec.variables["unmet"] = VarSpec(pd.Index(inst.demand_ids[lp_demands], name="demand"), 0.0, h)
        spec.variables["mlu"] = VarSpec(pd.Index(["mlu"]), 0.0, INF)
        spec.rows.append(demand_rows(col_demand, n_lp, np.arange(n_lp), h, "flow"))
        spec.rows.append(capacity_rows(inst, {"flow": pool.arc_map()}))
        lp = spec.to_lp(name, costs, bounds, extra)
        st = lp.stats()
        t1 = time.perf_counter()
        left = deadline - t1
        if left <= 0.05:
            raise _OutOfTime
        sol = solve(lp, backend=backend, time_limit=left, **backend_options(backend, master_method, st["cols"]))
        stages.append(Stage(name, sol.status.value, float(sol.objective), sol.solve_seconds, t1 - t0, st["rows"],
                            st["cols"], st["nonzeros"]))
        return sol

    def price(w: np.ndarray, pi: np.ndarray, rc: np.ndarray) -> int:
        """Add the columns with negative reduced cost; returns how many were added."""
        neg = rc < -RC_TOL * np.maximum(np.abs(pi), 1e-12)
        if not neg.any():
            return 0
        found_d: list[np.ndarray] = []
        found_a: list[np.ndarray] = []
        _, arcs, wanted = pricer.shortest(w, lp_demands, neg)
        lat = np.array([float(inst.arc_latency_ms[a].sum()) for a in arcs])
        ok = lat <= limit[wanted] + 1e-9
        found_d.append(wanted[ok])
        found_a += [a for a, good in zip(arcs, ok, strict=True) if good]
        over = wanted[~ok]  # SLO demands whose w-shortest path is too slow: penalise latency (heuristic)
        if len(over) and (w > 0).any():
            ratio = float(w[w > 0].mean()) / float(inst.arc_latency_ms[inst.arc_latency_ms > 0].mean())
            for lam in ratio * LAMBDA_GRID:
                if len(over) == 0:
                    break
                _, arcs2, pos = pricer.shortest(w + lam * inst.arc_latency_ms, lp_demands[over],
                                                np.ones(len(over), bool))
                w2 = np.array([float(w[a].sum()) for a in arcs2])
                lat2 = np.array([float(inst.arc_latency_ms[a].sum()) for a in arcs2])
                d2 = over[pos]
                good = (lat2 <= limit[d2] + 1e-9) & (w2 - pi[d2] < -RC_TOL * np.maximum(np.abs(pi[d2]), 1e-12))
                found_d.append(d2[good])
                found_a += [a for a, g in zip(arcs2, good, strict=True) if g]
                over = over[~np.isin(over, d2[good])]
        demand = np.concatenate(found_d)
        if len(demand) == 0:
            return 0
        hops = np.array([len(a) for a in found_a], np.int64)
        return pool.add(demand, np.concatenate(found_a), hops)

    def generate(name: str, costs: dict[str, Any], bounds: dict[str, Any], extra: list[RowSpec],
                 track_bound: bool) -> tuple[Solution, bool]:
        """Master / pricing loop of one stage; returns the last master solution and whether it is
        proven optimal over every admissible path (gap closed, or no column prices out and no SLO
        demand makes pricing a heuristic)."""
        nonlocal iterations, best_lb, last_w, timed_out
        best: Solution | None = None
        for it in range(MAX_ITERATIONS):
            try:
                sol = master(f"{name}-{it + 1}", costs, bounds, extra)
            except _OutOfTime:
                timed_out = True
                break
            iterations += 1
            if sol.status == Status.TIME_LIMIT or (sol.status != Status.OPTIMAL
                                                    and deadline - time.perf_counter() < TIMED_OUT_MARGIN_S):
                timed_out = True
            if not sol.status.has_solution:
                if best is not None and sol.status == Status.TIME_LIMIT:
                    break
                if sol.status == Status.INFEASIBLE:
                    raise InfeasibleError(f"TE stage {name!r} is infeasible", [sol.message])
                raise SolverError(f"TE stage {name!r}: {sol.status.value} {sol.message}")
            best = sol
            if sol.status != Status.OPTIMAL or sol.row_duals is None:
                break
            pi = sol.duals("demand").to_numpy()
            y = sol.duals("capacity")
            w = np.zeros(inst.n_arcs)
            w[y.index.to_numpy(np.int64)] = np.maximum(-y.to_numpy(), 0.0)
            last_w = w
            length, _, _ = pricer.shortest(w, lp_demands)
            rc = length - pi
            if track_bound:
                scale = float(w @ inst.arc_capacity_gbps)
                bounded = pricer.slo_bounded(w, lp_demands, length) if has_slo else length
                lb = float(h @ np.where(np.isfinite(bounded), bounded, 0.0)) / scale if scale > 0 else 0.0
                best_lb = lb if best_lb is None else max(best_lb, lb)
                value = float(sol.objective)
                if value <= 0 or (value - best_lb) <= GAP_TOL * value:
                    return sol, True
            added = price(w, pi, rc)
            logger.info("colgen %s iteration %d: objective %.6g, %d columns added (%d in pool)", name, it + 1,
                        sol.objective, added, pool.n)
            progress(min(0.85, 0.2 + 0.02 * iterations), f"colgen {name}: iteration {it + 1}, {pool.n:,} paths")
            if added == 0:
                return sol, not has_slo
        if best is None:
            raise TimeLimitReached(f"TE stage {name!r}: time limit reached with no feasible master solution")
        return best, False

    warm: WarmStart | None = None
    extra: dict[str, Any] = {}
    if warm_start:
        from backbone.solver.te.warmstart import flow_deviation

        masters = n_lp <= MASTER_MAX_DEMANDS
        now = time.perf_counter()
        progress(0.1, "colgen: flow deviation (first routing and bound)")
        warm = flow_deviation(inst, lp_demands, now + (WARM_SHARE if masters else 1.0) * max(0.0, deadline - now))
        best_lb = max(best_lb or 0.0, warm.lower_bound)
        last_w = warm.bound_prices
        extra["flow_deviation"] = {"iterations": warm.iterations, "mlu": warm.mlu, "lower_bound": warm.lower_bound,
                                   "seconds": warm.seconds, "columns": len(warm.flow)}
        if not masters:
            extra["masters_skipped"] = (f"{n_lp:,} demands: more than {MASTER_MAX_DEMANDS:,}, the restricted "
                                        "master is not solved; the flow-deviation routing is the answer")
        closed = warm.mlu <= 0 or warm.mlu - best_lb <= GAP_TOL * warm.mlu
        if masters and not closed:
            pool.add(warm.col_demand, warm.arcs.astype(np.int64), warm.hops.astype(np.int64))
        paths_seconds = warm.seconds
    if objective == "min-mlu":
        sol = None
        proven = False
        if warm is None or (n_lp <= MASTER_MAX_DEMANDS and warm.mlu - (best_lb or 0.0) > GAP_TOL * warm.mlu):
            try:
                sol, proven = generate("min-mlu", {"mlu": 1.0}, {"unmet": (0.0, 0.0)}, [], True)
            except TimeLimitReached:
                if warm is None:
                    raise
                timed_out = True
        if warm is not None and (sol is None or float(sol.values("mlu").iloc[0]) > warm.mlu):
            sol = None  # the flow-deviation routing is the better answer
            value = warm.mlu
            proven = value <= 0 or value - (best_lb or 0.0) <= GAP_TOL * value
            timed_out = timed_out or time.perf_counter() >= deadline - TIMED_OUT_MARGIN_S
        else:
            assert sol is not None
            value = float(sol.objective)
        if not proven:
            worst = Status.FEASIBLE
            if best_lb is None or value - best_lb > GAP_TOL * value:
                progress(0.9, "colgen: refining the lower bound")
                refined, _ = refine_mlu_bound(inst, lp_demands, last_w, deadline=final_deadline)
                best_lb = refined if best_lb is None else max(best_lb, refined)
        if sol is None and warm is not None:
            carried = np.zeros(inst.n_demands)
            carried[lp_demands] = h
            splits = splits_frame(inst, lp_demands[warm.col_demand], warm.arcs, warm.hops, warm.flow, 0.0)
            return ScaleOutcome(worst, value, warm.arc_load(inst.n_arcs), carried, reason, splits, stages, best_lb,
                                paths_seconds, {"iterations": iterations, "columns": len(warm.flow), **extra},
                                timed_out)
        assert sol is not None
        value = float(sol.values("mlu").iloc[0])
    else:
        cap = {"mlu": (0.0, 1.0 if ceiling is None else float(ceiling))}
        ranks = inst.class_rank[lp_demands]
        present = [r for r in range(len(TRAFFIC_CLASSES)) if np.any((ranks == r) & (h > 0))]
        rows: list[RowSpec] = []
        sol = None
        for r in present:
            cls = TRAFFIC_CLASSES[r]
            cost = np.where(ranks == r, 1.0, np.where(ranks < r, HELD_PENALTY * (1 + r - ranks), 0.0))
            try:
                st, proven = generate(f"max-throughput-{cls}", {"unmet": cost}, cap, rows, False)
            except TimeLimitReached:
                if sol is None:
                    raise
                worst, timed_out = Status.FEASIBLE, True  # the earlier classes' routing stands
                break
            if not proven:
                worst = Status.FEASIBLE
            sol = st
            members = np.flatnonzero(ranks == r)
            hold = float(st.objective) + REL_TOL * max(1.0, abs(float(h[members].sum())))
            m = sp.csr_matrix((np.ones(len(members)), (np.zeros(len(members), int), members)), shape=(1, n_lp))
            rows = [*rows, RowSpec(f"hold-{cls}", {"unmet": m}, -INF, hold, pd.Index([f"hold-{cls}"]))]
        if sol is None:
            sol, _ = generate("max-throughput", {}, cap, [], False)
        value = float(h.sum() - block_values(sol, "unmet", n_lp).sum()) if n_lp else 0.0
    assert sol is not None
    col_demand, arcs, hops = pool.arrays()
    f = sol.values("flow").to_numpy()
    f = np.where(f > tol, f, 0.0)
    n_cols = len(f)  # the pool only grows: the solution's columns are its first ones
    col_demand, hops = col_demand[:n_cols], hops[:n_cols]
    arcs = arcs[:int(hops.sum())]
    arc_load = pool.arc_map()[:, :n_cols] @ f
    carried = np.zeros(inst.n_demands)
    carried[lp_demands] = h - block_values(sol, "unmet", n_lp)
    splits = splits_frame(inst, lp_demands[col_demand], arcs, hops, f, tol)
    return ScaleOutcome(worst if sol.status == Status.OPTIMAL else Status.FEASIBLE, value, arc_load, carried,
                        reason, splits, stages, best_lb, paths_seconds,
                        {"iterations": iterations, "columns": pool.n, **extra}, timed_out)


class _OutOfTime(Exception):
    """The deadline passed before a master could be solved."""
