"""Min-MLU by flow deviation (Frank-Wolfe) on shortest paths, with a Lagrangian bound by mirror ascent.

Start from every demand on its lowest-latency path (loads ``L``). Each iteration prices the arcs by a
softmax of their utilisation, ``w_a ~ exp(c (util_a / mlu - 1)) / cap_a`` with ``c = ln(2L) / eps``,
routes every demand on its ``w``-shortest path (loads ``Y``, one Dijkstra per source) and moves to
``(1 - g) L + g Y`` with the ``g`` in [0, 1] that minimises the MLU (ternary search; the MLU is convex
along the segment). The routing after ``T`` steps is a convex combination of the ``T + 1``
shortest-path systems, iteration ``t`` with weight ``g_t prod_{s > t} (1 - g_s)``.

Every priced ``w`` also gives a Lagrangian lower bound ``sum_a w_a Y_a / sum_a w_a cap_a`` (``Y`` is
the ``w``-shortest routing, so ``w . Y = sum_d h_d SP_d(w)``; see :mod:`backbone.solver.te.colgen`).
Softmax prices bound poorly (they sit on the few hottest arcs, which traffic can avoid at no cost),
so once the softmax steps stall the prices move by mirror ascent on the Lagrangian dual instead
(``v_a = w_a cap_a`` on the simplex, ``v <- v exp(step util(Y) / max util(Y))``), which raises the
bound steadily; the primal keeps taking line-searched steps towards each new routing ``Y``. A few
flatter softmax prices of the final routing are tried as well; the best bound is kept.

The routing is kept as distinct (demand, path) columns with flows (paths matched by a 64-bit hash of
their arc set), a feasible routing of every demand: a convex combination of routings that each carry
all demand. Column generation starts its pool with them, so its first master is at least as good;
when a master cannot be solved in time these columns are the answer. (Above
:data:`~backbone.solver.te.colgen.MASTER_MAX_DEMANDS` demands :mod:`backbone.solver.te.srcflow` runs instead.)

Demands are routed without their SLO, so callers use this only when no demand has one.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from backbone.solver.te.bounds import shortest_path_loads
from backbone.solver.te.instance import TEInstance

logger = logging.getLogger(__name__)

SOFTMAX_EPS = 0.02
"""Softmax sharpness of the arc prices: ``c = ln(arcs) / eps``."""

STALL_STEPS = 3
"""After this many consecutive steps with ``g < STALL_STEP`` the prices switch from the softmax of the
utilisation to mirror ascent on the Lagrangian dual (the primal keeps taking line-searched steps
towards each new shortest-path routing)."""

STALL_STEP = 1e-4

SOFTMAX_STEPS = 60
"""Softmax-priced steps at most before mirror ascent takes over the prices (its bound needs the steps)."""

LINE_SEARCH_STEPS = 40
"""Ternary-search steps of the line search."""

ASCENT_STEP = 2.0
"""Mirror-ascent step ``ASCENT_STEP / sqrt(t + 1)`` on the utilisation (scaled to max 1)."""

NO_PROGRESS_STEPS = 300
"""Flow deviation stops after this many steps in which neither its MLU fell nor its bound rose by more than
:data:`GAP_TOL` (relative): it is a warm start, and the master LPs that follow close the gap far sooner (on a
3 x 3 grid it otherwise ran 8,500 steps, a quarter of column generation's budget, for nothing).
"""

GAP_TOL = 1e-4
"""Stop when ``(mlu - bound) / mlu`` is below this."""

FLAT_SOFTMAX = (0.5, 1.0, 2.0, 4.0)
"""Flatter softmax factors ``c`` tried for the bound at the end."""


@dataclass
class WarmStart:
    """Columns of the flow-deviation routing and its bound.

    ``col_demand`` (LP-demand row per column), ``arcs`` (flat, travel order), ``hops`` and ``flow``
    (Gbps) describe the routing; ``mlu`` is its utilisation recomputed from those columns.
    """

    col_demand: np.ndarray
    arcs: np.ndarray
    hops: np.ndarray
    flow: np.ndarray
    mlu: float
    lower_bound: float
    bound_prices: np.ndarray | None
    iterations: int
    seconds: float

    def arc_load(self, n_arcs: int) -> np.ndarray:
        """Load per arc of the columns."""
        return np.bincount(self.arcs, weights=np.repeat(self.flow, self.hops), minlength=n_arcs)


def _line_search(load: np.ndarray, new: np.ndarray, cap: np.ndarray) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(LINE_SEARCH_STEPS):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if float((((1 - a) * load + a * new) / cap).max()) < float((((1 - b) * load + b * new) / cap).max()):
            hi = b
        else:
            lo = a
    return (lo + hi) / 2


MAX_COLUMN_ARCS = 40_000_000
"""Stored path arcs at most; past it the routing stops moving and only the bound goes on. The result
tables, not these int32 arcs, set the limit: on the world backbone 1.4 M columns (120 M arcs) peaked at
10.2 GB and 2.9 M columns at 17.6 GB, almost all of it the path tables."""

PRUNE_SHARES = (1e-2, 1e-3, 1e-4, 1e-6)
"""Columns carrying less than this share of their demand are dropped from the answer (the rest scaled up so
every demand is carried in full, loads recomputed): the largest share that keeps the MLU within
:data:`PRUNE_SLACK` of the full routing is used."""

PRUNE_SLACK = 1e-3

EXTRACT_SECONDS_PER_COLUMN = 60e-6
"""Result-table time per column (path strings, tables), measured on the world backbone (1.75 M
columns of ~60 hops: 100 s). Flow deviation stops adding columns, and stops altogether, early enough
for the tables of what it has to be written within the deadline."""


def extract_seconds(n_columns: int) -> float:
    """Estimated seconds to turn ``n_columns`` columns into the result tables."""
    return EXTRACT_SECONDS_PER_COLUMN * n_columns


class _Columns:
    """Distinct (demand, path) columns with flows, matched by a 64-bit hash of the path's arc set."""

    def __init__(self, n_arcs: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.arc_code = rng.integers(1, 2**63 - 1, n_arcs, dtype=np.int64).astype(np.uint64)
        self.keys = np.zeros(0, np.uint64)  # sorted
        self.key_col = np.zeros(0, np.int64)  # column of each sorted key
        self.demand: list[np.ndarray] = []
        self.arcs: list[np.ndarray] = []
        self.hops: list[np.ndarray] = []
        self.flow = np.zeros(0)
        self.n_arcs_stored = 0

    def significant(self, h: np.ndarray, share: float = 1e-3) -> int:
        """Columns carrying at least ``share`` of their demand (what the result tables will hold)."""
        if not self.demand:
            return 0
        col_demand = np.concatenate(self.demand)
        return int(np.count_nonzero(self.flow >= share * h[col_demand]))

    def match(self, arcs: np.ndarray, hops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Column of each demand's path (``-1``: new) and the paths' keys."""
        n = len(hops)
        ptr = np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)
        code = self.arc_code[arcs]
        sums = np.zeros(n, np.uint64)
        has = hops > 0
        if has.any():
            sums[has] = np.add.reduceat(code, ptr[:-1][has])
        keys = sums ^ (np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
        pos = np.searchsorted(self.keys, keys)
        pos_ok = np.minimum(pos, max(len(self.keys) - 1, 0))
        found = (len(self.keys) > 0) & (self.keys[pos_ok] == keys) if len(self.keys) else np.zeros(n, bool)
        col = np.where(found, self.key_col[pos_ok] if len(self.keys) else -1, -1)
        return col, keys

    def add_new(self, new: np.ndarray, keys: np.ndarray, arcs: np.ndarray, hops: np.ndarray) -> np.ndarray:
        """Append the paths of demands ``new``; returns their columns."""
        from backbone.solver.paths.candidates import csr_ranges

        ptr = np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)
        start = len(self.flow)
        cols = np.arange(start, start + len(new))
        self.demand.append(new.astype(np.int64))
        self.arcs.append(arcs[csr_ranges(ptr[:-1][new], hops[new])].astype(np.int32))
        self.hops.append(hops[new].astype(np.int32))
        self.n_arcs_stored += int(hops[new].sum())
        self.flow = np.concatenate([self.flow, np.zeros(len(new))])
        all_keys = np.concatenate([self.keys, keys[new]])
        all_cols = np.concatenate([self.key_col, cols])
        order = np.argsort(all_keys, kind="stable")
        self.keys, self.key_col = all_keys[order], all_cols[order]
        return cols

    def route(self, arcs: np.ndarray, hops: np.ndarray, h: np.ndarray, g: float) -> None:
        """Move to ``(1 - g) x + g y``, ``y`` every demand on the given paths."""
        col, keys = self.match(arcs, hops)
        new = np.flatnonzero(col < 0)
        if len(new):
            col[new] = self.add_new(new, keys, arcs, hops)
        self.flow *= 1.0 - g
        self.flow[col] += g * h


class _ProgressWatch:
    """Whether flow deviation still moves: its MLU falling or its bound rising (see :data:`NO_PROGRESS_STEPS`)."""

    def __init__(self) -> None:
        self.low_mlu, self.high_bound, self.last = math.inf, 0.0, 0

    def stalled(self, mlu: float, bound: float, iteration: int) -> bool:
        """Record this step's MLU and bound; True once :data:`NO_PROGRESS_STEPS` steps moved neither."""
        if mlu < self.low_mlu * (1 - GAP_TOL) or bound > self.high_bound * (1 + GAP_TOL):
            self.low_mlu, self.high_bound, self.last = min(self.low_mlu, mlu), max(self.high_bound, bound), iteration
            return False
        return iteration - self.last >= NO_PROGRESS_STEPS


def flow_deviation(inst: TEInstance, lp_demands: np.ndarray, deadline: float,  # noqa: PLR0915  one flow-deviation loop; not split yet (issue #30 item 4)
                   max_iterations: int = 1_000_000, bound_after_primal: bool = True) -> WarmStart:
    """Run flow deviation on ``lp_demands`` until ``deadline`` (``time.perf_counter()``), a stall or
    ``max_iterations``; see the module docstring. With ``bound_after_primal=False`` it returns as soon as
    the routing stops moving (column cap or time), leaving the rest of the time to a stronger bound."""
    from backbone.solver.te.fallback import shortest_path_columns

    t0 = time.perf_counter()
    lp_demands = np.asarray(lp_demands, np.int64)
    cap = np.maximum(inst.arc_capacity_gbps, 1e-9)
    h = inst.demand_gbps[lp_demands]
    n_arcs = inst.n_arcs
    columns = _Columns(n_arcs)
    _, arcs, hops = shortest_path_columns(inst, lp_demands, inst.arc_latency_ms)
    columns.route(arcs, hops, h, 1.0)
    load = np.bincount(arcs, weights=np.repeat(h, hops), minlength=n_arcs)
    best, best_w = 0.0, None
    stalled = iterations = ascent = 0
    prices: np.ndarray | None = None  # mirror-ascent prices (times capacity: a point of the simplex)
    primal_open = True
    watch = _ProgressWatch()
    for _ in range(max_iterations):
        if time.perf_counter() + extract_seconds(columns.significant(h)) >= deadline:
            break
        util = load / cap
        mlu = float(util.max(initial=0.0))
        if mlu <= 0 or (mlu - best) <= GAP_TOL * mlu or watch.stalled(mlu, best, iterations):
            break
        if prices is None:
            z = np.exp(np.log(n_arcs) / SOFTMAX_EPS * (util / mlu - 1.0))
            w = z / z.sum() / cap
        else:
            w = prices / cap
        if primal_open:
            _, arcs, hops = shortest_path_columns(inst, lp_demands, w)
            new = np.bincount(arcs, weights=np.repeat(h, hops), minlength=n_arcs)
        else:
            _, new = shortest_path_loads(inst, lp_demands, w)
        bound = float(w @ new) / float(w @ cap)
        if bound > best:
            best, best_w = bound, w
        if prices is not None:  # mirror ascent on the Lagrangian dual: the supergradient is Y's utilisation
            sub = new / cap
            prices = prices * np.exp(ASCENT_STEP / np.sqrt(ascent + 1.0) * sub / max(float(sub.max()), 1e-300))
            prices /= prices.sum()
            ascent += 1
        if primal_open and columns.n_arcs_stored + int(hops.sum()) > MAX_COLUMN_ARCS:
            logger.info("flow deviation: column memory cap reached (%d arcs); the bound goes on", columns.n_arcs_stored)
            primal_open = False
        if primal_open and time.perf_counter() + extract_seconds(columns.significant(h) + len(hops)) >= deadline:
            primal_open = False  # the result tables of more columns would not be written within the time
        if not primal_open and not bound_after_primal:
            iterations += 1
            break
        if primal_open:
            g = _line_search(load, new, cap)
            if g > 0:
                columns.route(arcs, hops, h, g)
                load = (1 - g) * load + g * new
            stalled = stalled + 1 if g < STALL_STEP else 0
        iterations += 1
        if prices is None and (stalled >= STALL_STEPS or not primal_open or iterations >= SOFTMAX_STEPS):
            # the softmax steps stall: go on with mirror ascent on the best prices so far (new directions too)
            base = best_w if best_w is not None else 1.0 / cap
            prices = base * cap / float(base @ cap)
    util = load / cap
    mlu = float(util.max(initial=0.0))
    for c in FLAT_SOFTMAX:  # flatter prices of the final routing often bound better
        if time.perf_counter() + extract_seconds(columns.significant(h)) >= deadline or mlu <= 0:
            break
        w = np.exp(c * (util / mlu - 1.0)) / cap
        _, new = shortest_path_loads(inst, lp_demands, w)
        bound = float(w @ new) / float(w @ cap)
        if bound > best:
            best, best_w = bound, w
    col_demand = np.concatenate(columns.demand)
    all_hops = np.concatenate(columns.hops)
    all_arcs = np.concatenate(columns.arcs)
    flow = columns.flow
    first = np.arange(len(flow)) < len(h)  # the lowest-latency paths: zero demands keep theirs
    from backbone.solver.paths.candidates import csr_ranges

    ptr = np.concatenate([[0], np.cumsum(all_hops)]).astype(np.int64)
    full_mlu = float((load / cap).max(initial=0.0))
    out = None
    for share in PRUNE_SHARES:  # fewest columns whose routing stays within PRUNE_SLACK of the full one
        used = (flow > share * h[col_demand]) | ((h[col_demand] <= 0) & first)
        flow_used = flow[used]
        # the dropped trickles go back to each demand's columns in proportion: every demand is carried in full
        carried = np.bincount(col_demand[used], weights=flow_used, minlength=len(h))
        scale = np.where(carried > 0, h / np.maximum(carried, 1e-300), 0.0)
        flow_used = flow_used * scale[col_demand[used]]
        arcs_used = all_arcs[csr_ranges(ptr[:-1][used], all_hops[used].astype(np.int64))].astype(np.int64)
        out = WarmStart(col_demand[used], arcs_used, all_hops[used].astype(np.int64), flow_used, 0.0, best, best_w,
                        iterations, 0.0)
        out.mlu = float((out.arc_load(n_arcs) / cap).max(initial=0.0))
        if out.mlu <= full_mlu * (1 + PRUNE_SLACK):
            break
    assert out is not None
    out.seconds = time.perf_counter() - t0
    logger.info("flow deviation: %d iterations, MLU %.6g (%d columns), bound %.6g, %.1fs",
                out.iterations, out.mlu, len(out.flow), best, out.seconds)
    return out
