"""Exact TE at scale: path-based column generation for ``min-mlu`` and ``max-throughput``.

The *full path LP* routes each demand over every admissible loopless path (latency within its
SLO), not only ``k`` candidates. Column generation solves it without listing those paths:

1. a *restricted master* LP over a pool of paths (columns): the lowest-latency admissible path of
   every demand, and the ``k`` admissible candidates of SLO-bound demands;
2. *pricing*: with demand-row duals ``pi_d`` and capacity-row duals ``y_a <= 0`` of the master,
   arc lengths ``w_a = -y_a >= 0``, a path ``p`` of demand ``d`` has reduced cost
   ``rc_p = sum_{a in p} w_a - pi_d``. One Dijkstra per source (scipy, directed, lowest ``w`` over
   parallel arcs) finds every demand's ``w``-shortest path ``SP_d(w)``; paths with
   ``rc_p < 0`` (and latency within the SLO) join the pool. An SLO-bound demand whose ``SP_d(w)`` is too
   slow gets a Lagrangian latency penalty first, then the exact latency-limited search
   (:mod:`backbone.solver.te.rcsp`, a resource-constrained shortest path), so pricing is exact for every
   demand and "no column prices out" proves the master optimal over every admissible path;
3. repeat until no column prices out, the gap closes or the time limit is reached. The master is built
   once and grown: each iteration appends the new columns to it (``LinearProgram.add_columns``; every arc
   has its capacity row from the start) and simplex masters start from the last basis.

Memory grows with the active paths, not with ``k x demands``.

Lower bounds: :mod:`backbone.solver.te.bounds` (the Lagrangian bound from the master's duals, the
multiplicative-weights refinement and the single-site cut bound), reported as ``lower_bound`` with
``gap = (mlu - lower_bound) / mlu``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from backbone.errors import InfeasibleError, SolverError
from backbone.schema import TRAFFIC_CLASSES
from backbone.solver.core.deadline import Deadline, TimeLimitReached
from backbone.solver.core.problem import INF, LinearProgram, Solution, Status, solve
from backbone.solver.core.sparse import selector
from backbone.solver.te.bounds import LAMBDA_GRID, DualPricer, refine_mlu_bound, site_cut_bound
from backbone.solver.te.colpool import ColumnPool, seed_pool, splits_frame, used_columns
from backbone.solver.te.formulations import (
    admissible_paths,
    block_values,
    capacity_rows,
    demand_rows,
    te_variables,
)
from backbone.solver.te.instance import REASON_SLO, TEInstance
from backbone.solver.te.objectives import (
    HELD_PENALTY,
    REL_TOL,
    TIMED_OUT_MARGIN_S,
    Stage,
    hold_rows,
    stage_program,
)
from backbone.solver.te.rcsp import load_pricing_kernel
from backbone.solver.te.sections import (
    ColgenFigures,
    FlowDeviationFigures,
    ReducedBoundFigures,
    ScalableFigures,
)

if TYPE_CHECKING:
    from backbone.solver.te.result import DemandPathStats
    from backbone.solver.te.warmstart import WarmStart

logger = logging.getLogger(__name__)

MAX_ITERATIONS = 100
"""Master solves per stage at most."""

RC_TOL = 1e-7
"""A column joins the pool when its reduced cost is below ``-RC_TOL * max(pi_d, tiny)``."""

GAP_TOL = 1e-4
"""Min-MLU stops when ``(mlu - lower_bound) / mlu`` is below this (0.01 %)."""

MASTER_MAX_DEMANDS = 2_500
"""Min-MLU without SLOs: above this many demands the answer is the source-aggregated Frank-Wolfe routing and
its duality bound (:mod:`backbone.solver.te.srcflow`), not restricted masters. Measured on TopoHub's world
backbone (120 s each, Dec 3): masters reach the optimum at 870 demands (33 s) and 2,450 (95 s), but stop at an
18.9 % gap at 4,830 and 45 % at 9,900 (300 s), and at 39,800 they were killed by an 8 GB cap; the source-flow
engine proves 0.09 % at 2,450 (55 s) and 9,900 (43 s). On dense synthetic backbones both solve 9,900 demands
in under a second."""

WARM_SHARE = 0.25
"""Share of the time budget flow deviation may take before the masters (it stops earlier on a stall)."""

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
    extra: ScalableFigures | None = None
    """The method's own section of the record (column generation's, the source-flow engine's, POP's, the
    fallback's)."""
    timed_out: bool = False
    """The time limit stopped the run (the answer is the best feasible one found, with its bound)."""
    path_stats: DemandPathStats | None = None
    """Per-demand path figures over every path when ``splits`` lists only some of them."""
    flows: Any = None
    """Per-source flows (:class:`~backbone.solver.te.srcflow.SourceFlows`) kept to warm-start failed states."""
    columns: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    """The answer's columns carrying flow: ``(instance demand per column, arcs flat, hops per column)``, to seed
    another objective's column generation on the same instance (``run_colgen(columns=...)``)."""


def _initial_pool(inst: TEInstance, cand: np.ndarray, k: int, deadline: Deadline | None = None
                  ) -> tuple[ColumnPool, np.ndarray, np.ndarray, float]:
    """Lowest-latency admissible path per demand (``k`` for SLO demands); LP demands and reasons."""
    from backbone.solver.paths.candidates import csr_ranges

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
        flat = ps._arc_seq[csr_ranges(ps._arc_ptr[:-1][dp.var_path], lens)]
        pool.add(pos[dp.var_demand], flat, lens)
    return pool, lp_demands, reason, sum(dp.seconds for dp in parts)


def run_colgen(inst: TEInstance, objective: str, k_paths: int = 4, backend: str = "highs",
               time_limit_s: float = 120.0, utilisation_ceiling: float | None = None, lp_method: str = "auto",
               progress: Callable[[float, str], None] | None = None, deadline: float | None = None, *,
               columns: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
               ) -> ScaleOutcome:
    """Column generation for ``min-mlu`` or ``max-throughput`` over every admissible path.

    Parameters
    ----------
    inst
        The instance.
    objective
        ``min-mlu`` or ``max-throughput`` (lexicographic by class: one column generation per stage).
    k_paths
        Candidate paths that SLO-bound demands start with.
    time_limit_s, deadline
        Seconds for the whole run (path search included), or an absolute ``time.perf_counter()``
        deadline; when it stops the run, the best master solution so far is returned with its bound.
    utilisation_ceiling
        Max-throughput's utilisation ceiling (default 1.0).
    columns
        Max-throughput: columns to start the pool with besides the candidates (an earlier answer's
        :attr:`ScaleOutcome.columns` on this instance, e.g. the min-MLU routing's): fewer pricing rounds, the same
        optimum.

    Raises
    ------
    TimeLimitReached
        No feasible master solution within the time limit.
    SolverError
        A backend failure.
    """
    ceiling = utilisation_ceiling
    progress = progress or (lambda f, m: None)
    deadline = deadline if deadline is not None else time.perf_counter() + time_limit_s
    final_deadline = deadline
    # keep a share of the time for the bound refinement after the masters
    deadline -= min(60.0, 0.1 * max(0.0, deadline - time.perf_counter())) if objective == "min-mlu" else 0.0
    if objective not in ("min-mlu", "max-throughput"):
        raise ValueError(f"column generation supports min-mlu and max-throughput, not {objective!r}")
    cand = np.flatnonzero(inst.routable)
    warm_start = objective == "min-mlu" and not inst.has_slo[cand].any() and len(cand) > 0
    if warm_start and len(cand) > MASTER_MAX_DEMANDS:  # world scale: one commodity per source, no master
        from backbone.solver.te.srcflow import run_source_flows

        return run_source_flows(inst, cand, final_deadline, progress)
    if warm_start:  # every routable demand has an admissible path; flow deviation seeds the pool
        pool, lp_demands, reason, paths_seconds = ColumnPool(inst.n_arcs), cand, inst.reason.copy(), 0.0
    else:
        pool, lp_demands, reason, paths_seconds = _initial_pool(inst, cand, k_paths, Deadline(deadline))
        if columns is not None and not warm_start:
            seed_pool(pool, lp_demands, inst.n_demands, columns)
    load_pricing_kernel(Deadline(deadline))
    # interior-point duals are central: far better prices (and bounds) than simplex's extreme duals,
    # which make column generation tail off on degenerate TE masters
    cg = _ColumnGeneration(inst, pool, lp_demands, backend, "ipm" if lp_method == "auto" else lp_method, deadline,
                           progress)
    flow_dev: FlowDeviationFigures | None = None
    if objective == "min-mlu":
        cg.best_lb = site_cut_bound(inst, lp_demands)
        warm = _flow_deviation(cg) if warm_start else None
        if warm is not None:
            paths_seconds = warm.seconds
            flow_dev = FlowDeviationFigures(iterations=warm.iterations, mlu=warm.mlu, lower_bound=warm.lower_bound,
                                            seconds=warm.seconds, columns=len(warm.flow))
        found, worst, value = _solve_min_mlu(cg, final_deadline, warm)
        if found is None:  # the flow-deviation routing is the answer
            assert warm is not None
            carried = np.zeros(inst.n_demands)
            carried[lp_demands] = cg.h
            splits = splits_frame(inst, lp_demands[warm.col_demand], warm.arcs, warm.hops, warm.flow, 0.0)
            used = warm.flow > 0
            return ScaleOutcome(worst, value, warm.arc_load(inst.n_arcs), carried, reason, splits, cg.stages,
                                cg.best_lb, paths_seconds,
                                cg.figures(len(warm.flow), flow_dev), cg.timed_out,
                                columns=used_columns(lp_demands[warm.col_demand], warm.arcs, warm.hops, used))
        sol = found
    else:
        sol, worst, value = _solve_max_throughput(cg, ceiling)
    tol = 1e-7 * max(1.0, float(inst.demand_gbps.max(initial=0.0)))
    col_demand, arcs, hops = pool.arrays()
    f = sol.values("flow").to_numpy()
    f = np.where(f > tol, f, 0.0)
    n_cols = len(f)  # the pool only grows: the solution's columns are its first ones
    col_demand, hops = col_demand[:n_cols], hops[:n_cols]
    arcs = arcs[:int(hops.sum())]
    arc_load = pool.arc_map()[:, :n_cols] @ f
    carried = np.zeros(inst.n_demands)
    carried[lp_demands] = cg.h - block_values(sol, "unmet", cg.n_lp)
    splits = splits_frame(inst, lp_demands[col_demand], arcs, hops, f, tol)
    return ScaleOutcome(worst if sol.status == Status.OPTIMAL else Status.FEASIBLE, value, arc_load, carried,
                        reason, splits, cg.stages, cg.best_lb, paths_seconds,
                        cg.figures(pool.n, flow_dev), cg.timed_out,
                        columns=used_columns(lp_demands[col_demand], arcs, hops, f > 0))


def _flow_deviation(cg: _ColumnGeneration) -> WarmStart:
    """Min-MLU without SLOs, up to :data:`MASTER_MAX_DEMANDS` demands: flow deviation gives the first routing
    and a bound (:mod:`backbone.solver.te.warmstart`); its columns seed the pool of the masters."""
    from backbone.solver.te.warmstart import flow_deviation

    now = time.perf_counter()
    cg.progress(0.1, "colgen: flow deviation (first routing and bound)")
    warm = flow_deviation(cg.inst, cg.lp_demands, now + WARM_SHARE * max(0.0, cg.deadline - now))
    cg.best_lb = max(cg.best_lb or 0.0, warm.lower_bound)
    cg.last_w = warm.bound_prices
    closed = warm.mlu <= 0 or warm.mlu - cg.best_lb <= GAP_TOL * warm.mlu
    if not closed:
        cg.pool.add(warm.col_demand, warm.arcs.astype(np.int64), warm.hops.astype(np.int64))
    return warm


def _solve_min_mlu(cg: _ColumnGeneration, final_deadline: float, warm: WarmStart | None
                   ) -> tuple[Solution | None, Status, float]:
    """One column generation for the min-MLU (skipped when the flow-deviation routing ``warm`` closes the
    gap or the instance is above :data:`MASTER_MAX_DEMANDS`); when the answer is not proven optimal, the
    lower bound is refined by multiplicative weights until ``final_deadline``.

    Returns (solution, status, MLU); the solution is ``None`` when ``warm``'s routing is the answer.
    """
    worst = Status.OPTIMAL
    sol: Solution | None = None
    proven = False
    lb = cg.best_lb or 0.0
    if warm is None or (cg.n_lp <= MASTER_MAX_DEMANDS and warm.mlu - lb > GAP_TOL * warm.mlu):
        try:
            sol, proven = cg.generate("min-mlu", {"mlu": 1.0}, {"unmet": (0.0, 0.0)}, True)
        except TimeLimitReached:
            if warm is None:
                raise
            cg.timed_out = True
    if warm is not None and (sol is None or float(sol.values("mlu").iloc[0]) > warm.mlu):
        sol = None  # the flow-deviation routing is the better answer
        value = warm.mlu
        proven = value <= 0 or value - (cg.best_lb or 0.0) <= GAP_TOL * value
        cg.timed_out = cg.timed_out or time.perf_counter() >= cg.deadline - TIMED_OUT_MARGIN_S
    else:
        assert sol is not None
        value = float(sol.objective)
    if not proven:
        worst = Status.FEASIBLE
        if cg.best_lb is None or value - cg.best_lb > GAP_TOL * value:
            cg.progress(0.9, "colgen: refining the lower bound")
            if cg.has_slo:
                refined, _ = refine_mlu_bound(cg.inst, cg.lp_demands, cg.last_w, deadline=final_deadline)
            else:  # the exact reductions make the Lagrangian ascent far cheaper and faster
                from backbone.solver.te.reduce import reduced_mlu_bound
                from backbone.solver.te.warmstart import extract_seconds

                # the result tables of the flow-deviation columns are written after the bound (1.5x: the
                # estimate was 30 % short on the loaded shared machine)
                tables = 1.5 * extract_seconds(len(warm.flow)) if sol is None and warm is not None else 0.0
                left = final_deadline - tables
                refined, cg.reduced_bound = reduced_mlu_bound(cg.inst, cg.lp_demands, value, left)
            cg.best_lb = refined if cg.best_lb is None else max(cg.best_lb, refined)
    return sol, worst, (value if sol is None else float(sol.values("mlu").iloc[0]))


def _solve_max_throughput(cg: _ColumnGeneration, ceiling: float | None) -> tuple[Solution, Status, float]:
    """Lexicographic max-throughput: one column generation per traffic class, most important first, each
    holding the unmet demand of the classes before it. Returns (solution, status, carried Gbps)."""
    worst = Status.OPTIMAL
    h, n_lp = cg.h, cg.n_lp
    cap = {"mlu": (0.0, 1.0 if ceiling is None else float(ceiling))}
    ranks = cg.inst.class_rank[cg.lp_demands]
    present = [r for r in range(len(TRAFFIC_CLASSES)) if np.any((ranks == r) & (h > 0))]
    sol = None
    for r in present:
        cls = TRAFFIC_CLASSES[r]
        cost = np.where(ranks == r, 1.0, np.where(ranks < r, HELD_PENALTY * (1 + r - ranks), 0.0))
        try:
            st, proven = cg.generate(f"max-throughput-{cls}", {"unmet": cost}, cap, False)
        except TimeLimitReached:
            if sol is None:
                raise
            worst, cg.timed_out = Status.FEASIBLE, True  # the earlier classes' routing stands
            break
        if not proven:
            worst = Status.FEASIBLE
        sol = st
        members = np.flatnonzero(ranks == r)
        own = float(block_values(st, "unmet", n_lp)[members].sum())  # not the objective: it adds held penalties
        hold = own + REL_TOL * max(1.0, abs(float(h[members].sum())))
        cg.holds.append((f"hold-{cls}", members, hold))
    if sol is None:
        sol, _ = cg.generate("max-throughput", {}, cap, False)
    value = float(h.sum() - block_values(sol, "unmet", n_lp).sum()) if n_lp else 0.0
    return sol, worst, value


class _ColumnGeneration:
    """The state of one column generation: the column pool, the restricted masters solved so far (stages),
    iterations, the best lower bound and the last arc prices."""

    def __init__(self, inst: TEInstance, pool: ColumnPool, lp_demands: np.ndarray, backend: str,
                 master_method: str, deadline: float, progress: Callable[[float, str], None]) -> None:
        self.inst, self.pool, self.lp_demands = inst, pool, lp_demands
        self.backend, self.master_method, self.deadline, self.progress = backend, master_method, deadline, progress
        self.n_lp = len(lp_demands)
        self.h = inst.demand_gbps[lp_demands]
        self.limit = inst.slo_one_way_ms[lp_demands]
        self.has_slo = bool(np.isfinite(self.limit).any())
        self.pricer = DualPricer(inst)
        self.stages: list[Stage] = []
        self.iterations = 0
        self.best_lb: float | None = None
        self.last_w: np.ndarray | None = None
        self.reduced_bound: ReducedBoundFigures | None = None
        """Figures of the reduced-instance bound, when it ran (:func:`backbone.solver.te.reduce.reduced_mlu_bound`)."""
        self.timed_out = False
        """The time limit stopped a stage (its answer is the best master solution found)."""
        self.holds: list[tuple[str, np.ndarray, float]] = []
        """(name, lp demand positions, upper): the unmet demand of earlier stages held at their optimum."""
        self.lp: LinearProgram | None = None
        """The restricted master, built once and grown (:meth:`master`)."""
        self.fixed: set[str] = set()
        self.defaults: dict[str, tuple[Any, Any]] = {}
        self.last: Solution | None = None
        self.builds = 0
        """Times the master was built from scratch (once per run, unless a stage leaves out other blocks)."""
        self.warm_started = 0
        """Masters the backend started from the previous master's basis."""
        self.certified = np.zeros(self.n_lp)
        """Per LP demand, a proven lower bound on its least ``w`` over admissible paths at the last pricing."""
        self.exact_searches = 0
        """Latency-limited searches run (:meth:`exact_pricing`)."""
        self.exact_seconds = 0.0
        """Seconds spent in those searches."""

    def figures(self, columns: int, flow_deviation: FlowDeviationFigures | None = None) -> ColgenFigures:
        """The run's section of the record: ``iterations`` (masters solved), ``columns``, ``master_builds``,
        ``masters_warm_started``, ``latency_limited_searches`` and ``latency_limited_seconds``, with
        ``flow_deviation`` and ``reduced_bound`` only when the run has them (the document leaves them out else)."""
        figures = ColgenFigures(iterations=self.iterations, columns=columns, master_builds=self.builds,
                                masters_warm_started=self.warm_started, latency_limited_searches=self.exact_searches,
                                latency_limited_seconds=round(self.exact_seconds, 3))
        if flow_deviation is not None:
            figures = figures.updated(flow_deviation=flow_deviation)
        if self.reduced_bound is not None:
            figures = figures.updated(reduced_bound=self.reduced_bound)
        return figures

    def master(self, name: str, costs: dict[str, Any], bounds: dict[str, Any]) -> Solution:
        """Solve the restricted master over the pool's columns, with the holds of the stages before
        (raises :class:`_OutOfTime` past the deadline).

        The master is built once (:meth:`build_master`); later masters append the pool's new columns to it
        (:meth:`~backbone.solver.core.problem.LinearProgram.add_columns`), add the new holds' rows, set the stage's
        objective and bounds, and start from the last master's basis where the backend can (HiGHS simplex).
        """
        t0 = time.perf_counter()
        fixed = {b for b, (lo, up) in bounds.items()
                 if np.isscalar(lo) and np.isscalar(up) and lo == 0 and up == 0}  # left out (stage_program)
        if self.lp is None or fixed != self.fixed:
            self.lp, self.fixed, self.last = self.build_master(name), fixed, None
        else:
            self.extend_master()
        lp = self.lp
        for hold, members, upper in self.holds:
            if hold not in lp.constraints:
                hold_rows(lp, hold, members, upper)
        lp = stage_program(lp, name, {b: c for b, c in costs.items() if b in lp.variables}, bounds, self.defaults)
        self.lp = lp  # the stage's program (a block fixed at zero left out) is the one that grows
        st = lp.stats()
        t1 = time.perf_counter()
        left = self.deadline - t1
        if left <= 0.05:
            raise _OutOfTime
        sol = solve(lp, backend=self.backend, time_limit_s=left, lp_method=self.master_method, warm_start=self.last)
        self.last = sol
        self.warm_started += sol.warm_started
        self.stages.append(Stage(name, sol.status.value, float(sol.objective), sol.solve_seconds, t1 - t0, st["rows"],
                                 st["cols"], st["nonzeros"]))
        return sol

    def build_master(self, name: str) -> LinearProgram:
        """The restricted master over the pool's columns: path flows, ``unmet``, ``mlu``; demand rows and a
        capacity row for every arc (columns added later may use any)."""
        inst, pool = self.inst, self.pool
        col_demand, _, _ = pool.arrays()
        lp = LinearProgram(name)
        lp.add_variables("flow", pd.RangeIndex(pool.n, name="column"), lower=0.0, upper=INF)
        te_variables(lp, inst, self.lp_demands)
        demand_rows(lp, col_demand, np.arange(self.n_lp), self.h, "flow")
        capacity_rows(lp, inst, {"flow": pool.arc_map()}, every_arc=True)
        self.defaults = {"flow": (0.0, INF), **{b: lp.bounds(b) for b in ("unmet", "mlu")}}
        self.builds += 1
        return lp

    def extend_master(self) -> None:
        """Append the pool's columns that are not in the master yet (``f >= 0``, cost set by the stage)."""
        lp = self.lp
        assert lp is not None
        start = lp.variables["flow"].size
        if self.pool.n == start:
            return
        col_demand, _, _ = self.pool.arrays(start)
        rows = {"demand": selector(col_demand, self.n_lp, len(col_demand)),
                "capacity": self.pool.arc_map(start)[lp.constraints["capacity"].index.to_numpy(np.int64)]}
        lp.add_columns("flow", len(col_demand), lower=0.0, upper=INF, coefficients=rows)

    def price(self, w: np.ndarray, pi: np.ndarray, length: np.ndarray) -> int:
        """Add the columns with negative reduced cost ``rc_p = w(p) - pi_d`` over every admissible path; returns how
        many were added.

        A demand's ``w``-shortest path (``length``) is its column when it meets the demand's SLO. SLO-bound demands
        whose shortest path is too slow first try a Lagrangian penalty on latency (cheap, often enough), and the
        rest get the exact latency-limited search (:func:`~backbone.solver.te.rcsp.latency_limited_paths`) with
        cutoff ``pi_d``: none found proves ``rc_p >= 0`` for every path of ``d`` within its SLO. Pricing is thus
        exact, and ``self.certified`` holds per LP demand a proven lower bound on its least ``w`` over admissible
        paths (what :meth:`bound_closes_gap` sums).
        """
        inst, lp_demands, limit, pricer = self.inst, self.lp_demands, self.limit, self.pricer
        tol = RC_TOL * np.maximum(np.abs(pi), 1e-12)
        neg = length - pi < -tol
        self.certified = self.pricer.slo_bounded(w, lp_demands, length) if self.has_slo else length
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
                good = (lat2 <= limit[d2] + 1e-9) & (w2 - pi[d2] < -tol[d2])
                found_d.append(d2[good])
                found_a += [a for a, g in zip(arcs2, good, strict=True) if g]
                over = over[~np.isin(over, d2[good])]
        if len(over):
            exact = self.exact_pricing(w, pi - tol, over)
            found_d.append(exact[0])
            found_a += exact[1]
        demand = np.concatenate(found_d)
        if len(demand) == 0:
            return 0
        hops = np.array([len(a) for a in found_a], np.int64)
        return self.pool.add(demand, np.concatenate(found_a), hops)

    def exact_pricing(self, w: np.ndarray, cutoff: np.ndarray, over: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The latency-limited search for LP demands ``over`` (cutoff ``cutoff[d]``): the demands that price out and
        their paths; ``self.certified`` is raised to the cutoff for the others (none of their admissible paths
        costs less)."""
        from backbone.solver.te.rcsp import latency_limited_paths

        inst = self.inst
        d = self.lp_demands[over]
        t0 = time.perf_counter()
        out = latency_limited_paths(inst.arc_tail, inst.arc_head, w, inst.arc_latency_ms, inst.n_sites, inst.src[d],
                                    inst.dst[d], self.limit[over], cutoff[over], Deadline(self.deadline))
        self.exact_seconds += time.perf_counter() - t0
        self.exact_searches += len(over)
        hit = np.isfinite(out.length)
        miss = over[~hit]
        self.certified[miss] = np.maximum(self.certified[miss], cutoff[miss])
        return over[hit], [a for a, h in zip(out.arcs, hit, strict=True) if h]

    def generate(self, name: str, costs: dict[str, Any], bounds: dict[str, Any],
                 track_bound: bool) -> tuple[Solution, bool]:
        """Master / pricing loop of one stage; returns the last master solution and whether it is
        proven optimal over every admissible path (gap closed, or no column prices out: pricing is exact,
        latency-limited for SLO-bound demands)."""
        inst = self.inst
        best: Solution | None = None
        for it in range(MAX_ITERATIONS):
            try:
                sol = self.master(f"{name}-{it + 1}", costs, bounds)
            except _OutOfTime:
                self.timed_out = True
                break
            self.iterations += 1
            if sol.status == Status.TIME_LIMIT or (sol.status != Status.OPTIMAL
                                                    and self.deadline - time.perf_counter() < TIMED_OUT_MARGIN_S):
                self.timed_out = True
            if not sol.status.has_solution:
                if sol.status == Status.TIME_LIMIT and best is not None:
                    break
                if sol.status == Status.TIME_LIMIT:  # the first master: the caller falls back (lowest latency)
                    raise TimeLimitReached(f"TE stage {name!r}: time limit reached with no feasible master solution")
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
            self.last_w = w
            length, _, _ = self.pricer.shortest(w, self.lp_demands)
            try:
                added = self.price(w, pi, length)
            except TimeLimitReached:  # the latency-limited search ran out of time: this master stands
                self.timed_out = True
                break
            if track_bound and self.bound_closes_gap(sol, w, self.certified):
                return sol, True
            logger.info("colgen %s iteration %d: objective %.6g, %d columns added (%d in pool)", name, it + 1,
                        sol.objective, added, self.pool.n)
            self.progress(min(0.85, 0.2 + 0.02 * self.iterations),
                          f"colgen {name}: iteration {it + 1}, {self.pool.n:,} paths")
            if added == 0:  # exact pricing: no admissible path prices out, the master is optimal over every one
                return sol, True
        if best is None:
            raise TimeLimitReached(f"TE stage {name!r}: time limit reached with no feasible master solution")
        return best, False

    def bound_closes_gap(self, sol: Solution, w: np.ndarray, length: np.ndarray) -> bool:
        """Update the best Lagrangian bound from prices ``w`` and ``length``, per LP demand a proven lower bound on
        its least ``w`` over admissible paths (:attr:`certified`); whether the master's objective is now within
        :data:`GAP_TOL` of it."""
        scale = float(w @ self.inst.arc_capacity_gbps)
        lb = float(self.h @ np.where(np.isfinite(length), length, 0.0)) / scale if scale > 0 else 0.0
        self.best_lb = lb if self.best_lb is None else max(self.best_lb, lb)
        value = float(sol.objective)
        return value <= 0 or (value - self.best_lb) <= GAP_TOL * value


class _OutOfTime(Exception):
    """The deadline passed before a master could be solved."""
