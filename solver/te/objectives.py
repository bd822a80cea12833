"""TE objectives, each a short sequence of LP stages through the one solver seam.

Every objective works on either formulation family (:mod:`backbone.solver.te.formulations`) because both
share the variable layout ``flow`` / ``path_flow`` / ``unmet`` / ``mlu``; an objective only sets
costs, bounds and a few extra rows.

* ``min-mlu`` -- one LP: ``min u`` with every routable demand fully carried (``s = 0``); ``u``
  is not capped, so a result with ``mlu > 1`` says by how much the demand overloads the
  network (``overloaded`` in the summary). Demand without an admissible path is unmet with its
  reason; nothing else can be. Optional latency tie-break: a second LP that minimises
  traffic-weighted latency with ``u <= u* (1 + 1e-6)``.
* ``max-throughput`` -- lexicographic by class, in priority order training > inference > checkpoint >
  training-sync > dataset > replication > bulk (:data:`backbone.schema.TRAFFIC_CLASSES`): stage ``c`` minimises the unmet demand of class ``c`` with every arc under
  ``ceiling * cap`` and the classes before it held at their optimum (``sum_{d in c'} s_d <=
  opt_c' + tol``). Stages are exact where a weighted sum would need weights ~1e3 apart per class
  (1e9 overall), which wrecks LP numerics. Classes after ``c`` carry nothing in stage ``c`` (they cost
  nothing there, so its optimum is unchanged and its LP smaller); with ``lp_method="auto"`` the stages run
  dual simplex, each from the basis of the one before.
* ``max-min-fair`` -- water-filling (B4/SWAN): raise a common satisfied fraction ``t`` for all
  unfrozen demands (``s_d + t h_d <= h_d``), then freeze the demands that cannot grow further
  at ``t*``, repeat. A demand whose fairness row has a non-zero dual is blocking (it cannot be
  raised without lowering ``t``) -- the dual test of Nace & Pioro's MMF tutorial (2008); when a
  backend gives no duals each unfrozen demand is tested by its own LP. Every stage is an LP.
* ``min-latency`` -- stage 1 minimises unmet demand under ``load <= ceiling * cap`` (default
  ceiling 0.8); stage 2 minimises traffic-weighted latency ``sum lat * flow`` with unmet held
  at its optimum.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.errors import InfeasibleError, SolverError
from backbone.schema import TRAFFIC_CLASSES
from backbone.solver.core.deadline import TimeLimitReached
from backbone.solver.core.problem import INF, Block, LinearProgram, Solution, Status, solve
from backbone.solver.core.sparse import selector
from backbone.solver.te.formulations import Formulation, block_values
from backbone.solver.te.instance import TEInstance

logger = logging.getLogger(__name__)

OBJECTIVES = ("min-mlu", "max-throughput", "max-min-fair", "min-latency")
"""LP objectives (``ecmp`` is a routing simulation, see :mod:`backbone.solver.te.ecmp`)."""

REL_TOL = 1e-9
"""Relative slack when a stage's optimum is held as a constraint in the next stage."""

HELD_PENALTY = 1e3
"""Cost per Gbps of unmet demand of an already-optimised class in later stages."""

THROUGHPUT_LP_METHOD = "simplex"
"""``lp_method="auto"`` for the stages of max-throughput (see :func:`run_objective`)."""

_STATUS_RANK = {Status.OPTIMAL: 0, Status.FEASIBLE: 1}


@dataclass
class Stage:
    """One LP solved for an objective."""

    name: str
    status: str
    objective: float
    solve_seconds: float
    build_seconds: float
    rows: int
    cols: int
    nonzeros: int
    note: str = ""  # what the backend had to do to get this answer (e.g. IPM failed, re-solved with simplex)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Outcome:
    """The final solution of an objective and how it was reached."""

    solution: Solution
    status: Status
    objective_value: float
    stages: list[Stage] = field(default_factory=list)
    fraction: np.ndarray | None = None  # max-min-fair: frozen fraction per lp demand
    timed_out: bool = False  # the time limit cut a stage short or skipped one
    skipped: list[str] = field(default_factory=list)  # stages not solved, their optimum known (0 unmet)

    @property
    def solve_seconds(self) -> float:
        return sum(s.solve_seconds for s in self.stages)

    @property
    def build_seconds(self) -> float:
        return sum(s.build_seconds for s in self.stages)


TIMED_OUT_MARGIN_S = 0.5
"""A stage that ends without an optimum this close to the deadline was stopped by the time limit."""


def stage_program(lp: LinearProgram, name: str, costs: dict[str, Any], bounds: dict[str, Any],
                  defaults: dict[str, tuple[Any, Any]]) -> LinearProgram:
    """Set one stage's objective on ``lp``: ``costs`` (blocks not named cost zero) and ``bounds`` (blocks not
    named get ``defaults``). Returns the program to solve: ``lp`` itself, or, when a block is fixed at zero
    (``(0.0, 0.0)`` scalars, e.g. ``unmet`` in min-MLU), ``lp`` without that block and its coefficients
    (:func:`~backbone.solver.te.formulations.block_values` reads it back as zeros)."""
    lp.name = name
    lp.set_objective(costs)
    for b in lp.variables:
        lo, up = bounds.get(b, defaults[b])
        lp.set_bounds(b, lo, up)
    dropped = {b for b, (lo, up) in bounds.items()
               if np.isscalar(lo) and np.isscalar(up) and lo == 0 and up == 0 and b in lp.variables}
    return lp.without_variables(dropped, name) if dropped else lp


class _Runner:
    """Solves the stages of one objective on a copy of the formulation's program, within one overall time
    budget, and records them.

    A stage sets the program's costs (blocks not named cost zero) and bounds (blocks not named are back to
    the formulation's bounds); its extra rows are added to the program by the objective. A block fixed at
    zero (``(0.0, 0.0)`` scalars, e.g. ``unmet`` in min-MLU) is left out of the stage's program altogether,
    with its coefficients; :func:`block_values` reads it back as zeros.
    """

    def __init__(self, form: Formulation, backend: str, time_limit_s: float,
                 progress: Callable[[float, str], None], lp_method: str = "auto") -> None:
        self.form, self.backend, self.progress = form, backend, progress
        self.lp_method = lp_method
        self.lp = form.lp.copy()
        self.defaults = {b: self.lp.bounds(b) for b in self.lp.variables}
        self.deadline = time.perf_counter() + time_limit_s
        self.stages: list[Stage] = []
        self.worst = Status.OPTIMAL
        self.timed_out = False
        self.skipped: list[str] = []  # stages not solved: their optimum known without an LP

    def add_variables(self, name: str, index: pd.Index, lower: float, upper: float) -> None:
        """A variable block of the objective's own (its bounds become the block's default)."""
        self.lp.add_variables(name, index, lower=lower, upper=upper)
        self.defaults[name] = self.lp.bounds(name)

    def program(self, name: str, costs: dict[str, Any], bounds: dict[str, Any]) -> LinearProgram:
        """The stage's program (:func:`stage_program` on the shared program)."""
        return stage_program(self.lp, name, costs, bounds, self.defaults)

    def remaining(self) -> float:
        return self.deadline - time.perf_counter()

    def solve(self, name: str, costs: dict[str, Any], bounds: dict[str, Any] | None = None,
              required: bool = True, lp_method: str | None = None, warm: Solution | None = None) -> Solution | None:
        if self.remaining() <= 0.05:
            if required:
                raise TimeLimitReached(f"time limit reached before TE stage {name!r} could run")
            self.worst = Status.FEASIBLE
            self.timed_out = True
            return None
        t0 = time.perf_counter()
        lp = self.program(name, costs, bounds or {})
        st = lp.stats()
        t1 = time.perf_counter()
        left = self.remaining()  # building the program counts: the LP gets what is left
        if left <= 0.05:
            if required:
                raise TimeLimitReached(f"time limit reached while building TE stage {name!r}")
            self.worst = Status.FEASIBLE
            self.timed_out = True
            return None
        sol = solve(lp, backend=self.backend, time_limit_s=left, lp_method=lp_method or self.lp_method,
                    warm_start=warm)
        self.stages.append(Stage(name, sol.status.value, float(sol.objective), sol.solve_seconds, t1 - t0,
                                 st["rows"], st["cols"], st["nonzeros"], note=sol.fallback))
        if sol.status != Status.OPTIMAL and self.remaining() < TIMED_OUT_MARGIN_S:
            self.timed_out = True  # the backend ran to the end of its budget
        if sol.fallback:
            logger.info("TE stage %s: %s", name, sol.fallback)
        logger.info("TE stage %s: %s obj=%.6g in %.2fs", name, sol.status.value, sol.objective, sol.solve_seconds)
        if not sol.status.has_solution:
            if not required:
                self.worst = Status.FEASIBLE
                return None
            if sol.status == Status.INFEASIBLE:
                raise InfeasibleError(f"TE stage {name!r} is infeasible", [sol.message])
            if sol.status == Status.TIME_LIMIT:
                raise TimeLimitReached(f"TE stage {name!r}: time limit reached with no feasible solution")
            raise SolverError(f"TE stage {name!r} failed: {sol.status.value} {sol.message}")
        if _STATUS_RANK[sol.status] > _STATUS_RANK[self.worst]:
            self.worst = sol.status
        return sol


SIFT_TOL = 1e-6
"""Reduced cost below ``-SIFT_TOL`` brings a left-out path column into a sifted stage (HiGHS' dual feasibility
tolerance is 1e-7)."""


class Sifting:
    """Sifting over the path columns of a stage (Bixby et al., 1992): solve over a working set of columns, price
    every column left out by the duals (``d_j = c_j - a_j^T y``), add those with ``d_j < 0`` and solve again from
    the last basis, until none is left: then the optimum is the stage's optimum over every column.

    The working set starts with the previous stage's flow-carrying columns (the first stage: the min-MLU routing's,
    ``routed``, when it was solved on the same program) and each demand's first (lowest-latency) candidate (on the
    200-site synthetic backbone the routing's columns in every stage's start made the replication stage 2.7x
    slower: only the first has them); on the 100-site synthetic backbone 73 of 26,506 left-out columns priced in
    after the first round.
    """

    def __init__(self, lp: LinearProgram, routed: np.ndarray | None = None) -> None:
        cols = lp.variables["flow"].slice
        rows = lp.constraints["demand"].slice
        owner = lp.A[rows][:, cols].tocsc()
        self.demand = owner.indices[owner.indptr[:-1]] if owner.nnz else np.zeros(0, np.int64)
        first = np.zeros(cols.stop - cols.start, bool)
        first[np.unique(self.demand, return_index=True)[1]] = True
        self.first = first
        self.routed = routed if routed is not None and len(routed) == len(first) else None

    def start(self, previous: Solution | None) -> np.ndarray:
        """The first working set: ``previous``'s flow-carrying columns (none: the routing's) and every demand's first
        candidate."""
        active = self.first.copy()
        if previous is not None:
            active |= previous.values("flow").to_numpy() > 0
        elif self.routed is not None:
            active |= self.routed > 0
        return active

    @staticmethod
    def priced(sol: Solution) -> np.ndarray | None:
        """Per path column, whether its reduced cost at ``sol``'s duals is negative (None without duals)."""
        if sol.lp is None or sol.row_duals is None or not np.all(np.isfinite(sol.row_duals)):
            return None
        lp = sol.lp
        d = lp.c - lp.A.T @ sol.row_duals
        return np.asarray(d[lp.variables["flow"].slice] < -SIFT_TOL)


SIFT_ROUND_METHOD = {"simplex": "primal-simplex"}
"""The LP method of sifting's later rounds, by the stage's: the last round's basis stays primal feasible when columns
are priced in (they start at zero), so primal simplex goes on from it where dual simplex first repairs dual
feasibility (the 200-site synthetic backbone's later rounds: 6.6 against 8.4 CPU s)."""


def sifted_solve(run: _Runner, sift: Sifting | None, name: str, costs: dict[str, Any], bounds: dict[str, Any],
                 method: str, warm: Solution | None) -> Solution | None:
    """One stage solved by :class:`Sifting` (each round a recorded stage, from the last round's basis; the later
    rounds by :data:`SIFT_ROUND_METHOD`); a plain solve when ``sift`` is None. A round that ends without an optimum
    (time limit) is the stage's answer: feasible over every column, as the working set is a subset of them."""
    if sift is None:
        return run.solve(name, costs, bounds, lp_method=method, warm=warm)
    active = sift.start(warm)
    lower, upper = run.defaults["flow"]
    label, round_method = name, method
    for round_no in range(2, 1_000_000):
        st = run.solve(label, costs, {**bounds, "flow": (lower, np.where(active, upper, 0.0))},
                       lp_method=round_method, warm=warm)
        priced = None if st is None or st.status != Status.OPTIMAL else Sifting.priced(st)
        if priced is None or not (priced & ~active).any():
            if st is not None and st.status == Status.OPTIMAL and priced is None:  # no duals: over every column
                return run.solve(f"{name} (every column)", costs, bounds, lp_method=method, warm=st)
            return st
        active |= priced
        warm, label = st, f"{name} (sifting round {round_no})"
        round_method = SIFT_ROUND_METHOD.get(method, method)
    raise AssertionError("unreachable")


def _latency_costs(form: Formulation) -> dict[str, Any]:
    """Latency costs, plus a penalty on unmet demand so a stage that holds unmet at its
    optimum (within :data:`REL_TOL`) does not spend that tolerance to shave latency."""
    top = max((float(c.max(initial=0.0)) for c in form.latency_cost.values()), default=0.0)
    return {**form.latency_cost, "unmet": 1e3 * (top + 1.0)}


def hold_rows(lp: LinearProgram, name: str, members: np.ndarray, upper: float) -> Block:
    """Hold family (one row): ``sum_{d in members} s_d <= upper``, an earlier stage's optimum held."""
    m = selector(np.zeros(len(members), int), 1, lp.variables["unmet"].size, cols=members)
    return lp.add_constraints(name, {"unmet": m}, lower=-INF, upper=upper, index=pd.Index([name]))


def _hold(opt: float, scale: float) -> float:
    return opt + REL_TOL * max(1.0, abs(scale))


def run_objective(form: Formulation, inst: TEInstance, objective: str, *, backend: str = "highs",
                  time_limit_s: float = 60.0, utilisation_ceiling: float | None = None, latency_tiebreak: bool = False,
                  progress: Callable[[float, str], None] | None = None, lp_method: str = "auto") -> Outcome:
    """Solve ``objective`` on a built formulation.

    Parameters
    ----------
    form
        From :func:`backbone.solver.te.formulations.build_formulation`.
    objective
        One of :data:`OBJECTIVES`.
    time_limit_s
        Seconds for all the objective's stages.
    utilisation_ceiling
        Utilisation ceiling for capacity rows (``load <= ceiling * cap``); default 1.0, 0.8 for
        ``min-latency``. Ignored by ``min-mlu``.
    latency_tiebreak
        After the objective, minimise traffic-weighted latency holding it at its optimum.
    lp_method
        ``auto`` | ``simplex`` | ``ipm``, the backend-neutral choice each adapter translates
        (see :func:`backbone.solver.core.problem.solve`).

    Raises
    ------
    SolverError
        Backend trouble or a time limit hit before any feasible solution.
    """
    ceiling = utilisation_ceiling
    progress = progress or (lambda f, m: None)
    run = _Runner(form, backend, time_limit_s, progress, lp_method)
    n_lp = len(form.lp_demands)
    h = inst.demand_gbps[form.lp_demands]
    if ceiling is None:
        ceiling = 0.8 if objective == "min-latency" else 1.0
    capped = {"mlu": (0.0, float(ceiling))}
    lat = _latency_costs(form)

    if objective == "min-mlu":
        sol = run.solve("min-mlu", {"mlu": 1.0}, {"unmet": (0.0, 0.0)})
        assert sol is not None
        u = float(sol.values("mlu").iloc[0])
        if latency_tiebreak:
            progress(0.7, "latency tie-break")
            tb = run.solve("latency-tiebreak", lat, {"unmet": (0.0, 0.0), "mlu": (0.0, u * (1 + REL_TOL) + 1e-9)},
                           required=False)
            sol = tb or sol
        return Outcome(sol, run.worst, u, run.stages, timed_out=run.timed_out)

    if objective == "max-throughput":
        ranks = inst.class_rank[form.lp_demands]
        present = [r for r in range(len(TRAFFIC_CLASSES)) if np.any((ranks == r) & (h > 0))]
        unmet_upper = run.defaults["unmet"][1]

        def later_unmet(r: int) -> tuple[np.ndarray, Any]:
            """Stage ``r``'s bounds on ``unmet``: later classes carry nothing (``s_d = h_d``). They cost nothing
            and no hold row names them, so dropping their flow changes no stage optimum; the stage's LP is
            only the classes up to ``r`` (presolve removes the rest), smaller the earlier the stage."""
            return np.where(ranks > r, h, 0.0), unmet_upper

        sol = None
        # dual simplex, each stage from the last one's basis: on the 100-site synthetic backbone the four stages
        # took 8.7 s by simplex against 36 s by interior point (whose duals help min-MLU, not these stages)
        method = THROUGHPUT_LP_METHOD if lp_method == "auto" else lp_method
        routed = routed_flow(run.lp, form, len(h))
        sift = Sifting(run.lp, routed) if form.kind == "path" and "flow" in run.lp.variables else None
        fit = fitting_classes(run.lp, form, ranks, h, float(ceiling), present[:-1])
        for i, r in enumerate(present):
            cls = TRAFFIC_CLASSES[r]
            members = np.flatnonzero(ranks == r)
            if r in fit:  # its optimum is 0 (unmet >= 0, and the routing carries it): held there, no LP
                run.skipped.append(f"max-throughput-{cls}")
                hold_rows(run.lp, f"hold-{cls}", members, _hold(0.0, h[members].sum()))
                continue
            progress(0.2 + 0.6 * i / max(1, len(present)), f"max-throughput: {cls}")
            # earlier classes are held by rows; the penalty keeps a stage from spending the hold's
            # tolerance on its own class (graded, so held classes do not trade among themselves either)
            cost = np.where(ranks == r, 1.0, np.where(ranks < r, HELD_PENALTY * (1 + r - ranks), 0.0))
            try:
                st = sifted_solve(run, sift, f"max-throughput-{cls}", {"unmet": cost},
                                  {**capped, "unmet": later_unmet(r)}, method, sol)
            except TimeLimitReached:
                if sol is None:
                    raise
                run.worst, run.timed_out = Status.FEASIBLE, True  # earlier classes' routing stands
                break
            assert st is not None
            sol = st
            # the class's own unmet, not the stage objective (which adds the held classes' penalties)
            own = float(block_values(st, "unmet", n_lp)[members].sum())
            hold_rows(run.lp, f"hold-{cls}", members, _hold(own, h[members].sum()))
        if sol is None:  # nothing to route
            sol = run.solve("max-throughput", {}, capped)
            assert sol is not None
        if latency_tiebreak:
            sol = run.solve("latency-tiebreak", lat, capped, required=False) or sol
        carried = float(h.sum() - block_values(sol, "unmet", n_lp).sum()) if n_lp else 0.0
        return Outcome(sol, run.worst, carried, run.stages, timed_out=run.timed_out, skipped=run.skipped)

    if objective == "min-latency":
        progress(0.3, "min-latency: carried demand")
        s1 = run.solve("min-latency-unmet", {"unmet": np.ones(n_lp)}, capped)
        assert s1 is not None
        hold_rows(run.lp, "hold-unmet", np.arange(n_lp), _hold(float(s1.objective), h.sum()))
        progress(0.6, "min-latency: latency")
        s2 = run.solve("min-latency", lat, capped, required=False)
        sol = s2 or s1
        value = _weighted_latency(form, sol, h)
        return Outcome(sol, run.worst, value, run.stages, timed_out=run.timed_out)

    if objective == "max-min-fair":
        return _max_min_fair(run, form, h, capped, lat, latency_tiebreak, progress)

    raise ValueError(f"unknown objective {objective!r}")


FIT_TOL_GBPS = 1e-7
"""Largest violation (Gbps) a routing may show and still count as carrying a class within the ceiling."""


def routed_flow(lp: LinearProgram, form: Formulation, n_demands: int) -> np.ndarray | None:
    """The path flows of the min-MLU routing solved on ``lp``'s program (``form.routed``), one per ``flow`` column of
    ``lp``; None without one (another formulation, no routing kept, or columns added to the program since)."""
    routed = form.routed
    if routed is None or form.kind != "path" or set(lp.variables) != {"flow", "unmet", "mlu"}:
        return None
    flow = np.asarray(routed.values("flow").to_numpy(), float)
    if lp.column_layout() != (("flow", len(flow)), ("unmet", n_demands), ("mlu", 1)):
        return None  # another program than the routing's (columns added since)
    return flow


def fitting_classes(lp: LinearProgram, form: Formulation, ranks: np.ndarray, h: np.ndarray, ceiling: float,
                    candidates: list[int]) -> set[int]:
    """The class ranks among ``candidates`` whose max-throughput stage need not run: every class up to and
    including it is carried in full by the min-MLU routing solved on the same program (``form.routed``) with the
    later classes' flow dropped, every arc's load within ``ceiling`` times its capacity. Their lexicographic
    optimum is then 0 unmet each (unmet is never negative), exactly what their stages would find. Only a prefix
    of classes can fit (a class fits only when the classes before it do as well). Empty without a routing on
    the path formulation."""
    flow = routed_flow(lp, form, len(h))
    if flow is None:
        return set()
    dem = lp.A[lp.constraints["demand"].slice][:, :len(flow)].tocsc()
    if dem.nnz != len(flow):
        return set()
    col_rank = ranks[dem.indices]  # each path column's demand row, hence its class
    fit: set[int] = set()
    for r in sorted(candidates):
        x = np.concatenate([np.where(col_rank <= r, flow, 0.0), np.where(ranks > r, h, 0.0), [ceiling]])
        if lp.max_violation(x) > FIT_TOL_GBPS * max(1.0, float(h.max(initial=0.0))):
            break
        fit.add(r)
    return fit


def _weighted_latency(form: Formulation, sol: Solution, h: np.ndarray) -> float:
    total = sum(float(np.dot(c, sol.values(b).to_numpy())) for b, c in form.latency_cost.items())
    carried = float(h.sum() - block_values(sol, "unmet", len(h)).sum()) if len(h) else 0.0
    return total / carried if carried > 1e-12 else 0.0


def _max_min_fair(run: _Runner, form: Formulation, h: np.ndarray, capped: dict[str, Any], lat: dict[str, Any],
                  latency_tiebreak: bool, progress: Callable[[float, str], None]) -> Outcome:
    """Water-filling: raise ``t``, freeze blocking demands, repeat (each stage one LP)."""
    n_lp = len(h)
    frozen = np.zeros(n_lp, bool)
    frac = np.zeros(n_lp)
    frozen[h <= 0] = True
    frac[h <= 0] = 1.0
    first_t: float | None = None
    sol: Solution | None = None
    run.add_variables("fair", pd.Index(["fair"]), 0.0, 1.0)
    iteration = 0
    while not frozen.all():
        iteration += 1
        free = np.flatnonzero(~frozen)
        progress(min(0.9, 0.1 + 0.8 * frozen.mean()), f"max-min-fair: stage {iteration}, {len(free)} demands free")
        if "fair" in run.lp.constraints:
            run.lp.remove_constraints("fair")  # the previous stage's free demands
        fair_rows(run.lp, free, h)
        unmet_ub = np.where(frozen, h * (1 - frac), h)
        bounds = {**capped, "unmet": (0.0, np.maximum(unmet_ub, 0.0)), "fair": (0.0, 1.0)}
        try:
            st = run.solve(f"max-min-fair-{iteration}", {"fair": -1.0}, bounds)
        except TimeLimitReached:
            if sol is None or first_t is None:
                raise
            run.worst, run.timed_out = Status.FEASIBLE, True  # the last stage's shares stand
            frac[free] = float(sol.values("fair").iloc[0])
            break
        assert st is not None
        sol = st
        t = float(st.values("fair").iloc[0])
        first_t = t if first_t is None else first_t
        if t >= 1 - 1e-9:
            frac[free], frozen[free] = 1.0, True
            break
        blocking = _blocking(run, st, free, frozen, frac, h, t, capped)
        if not blocking.any():  # numerical corner: freeze everything at t rather than loop
            logger.warning("max-min-fair: no blocking demand found at t=%.6g; freezing all", t)
            blocking[:] = True
        frac[free[blocking]] = t
        frozen[free[blocking]] = True
    if "fair" in run.lp.constraints:
        run.lp.remove_constraints("fair")  # the later stages hold the frozen fractions by bounds
    if sol is None:  # nothing to share
        sol = run.solve("max-min-fair", {}, {**capped, "fair": (0.0, 0.0)})
        assert sol is not None
        first_t = 1.0
    elif latency_tiebreak:
        bounds = {**capped, "unmet": (0.0, np.maximum(h * (1 - frac), 0.0) + 1e-9 * np.maximum(h, 1)),
                  "fair": (0.0, 0.0)}
        sol = run.solve("latency-tiebreak", lat, bounds, required=False) or sol
    return Outcome(sol, run.worst, float(first_t if first_t is not None else 1.0), run.stages, frac,
                   timed_out=run.timed_out)


def fair_rows(lp: LinearProgram, free: np.ndarray, h: np.ndarray) -> Block:
    """Fairness family: ``s_d + t h_d <= h_d`` for each unfrozen demand ``d``."""
    n = len(free)
    s_part = selector(np.arange(n), n, lp.variables["unmet"].size, cols=free)
    t_part = sp.csr_matrix(h[free].reshape(-1, 1))
    return lp.add_constraints("fair", {"unmet": s_part, "fair": t_part}, lower=-INF, upper=h[free],
                              index=pd.Index(free, name="lp_demand"))


def _blocking(run: _Runner, sol: Solution, free: np.ndarray, frozen: np.ndarray, frac: np.ndarray, h: np.ndarray,
              t: float, capped: dict[str, Any]) -> np.ndarray:
    """Which unfrozen demands cannot exceed fraction ``t`` (dual test, else one LP each)."""
    try:
        duals = sol.duals("fair").to_numpy()
    except ValueError:
        duals = None
    if duals is not None and np.all(np.isfinite(duals)):
        scale = max(1.0, float(np.abs(duals).max(initial=0.0)))
        blocking = np.abs(duals) > 1e-9 * scale
        if blocking.any():
            return blocking
    # per-demand test: can d be carried above t while every other free demand keeps t?
    n_lp = len(h)
    blocking = np.zeros(len(free), bool)  # the stage's fairness rows over ``free`` are still in the program
    unmet_ub = np.where(frozen, h * (1 - frac), h)
    bounds = {**capped, "unmet": (0.0, np.maximum(unmet_ub, 0.0)), "fair": (t, t)}
    for i, d in enumerate(free):
        cost = np.zeros(n_lp)
        cost[d] = 1.0
        st = run.solve(f"max-min-fair-test-{d}", {"unmet": cost}, bounds)
        assert st is not None
        carried = h[d] - float(st.values("unmet").iloc[d])
        blocking[i] = carried <= t * h[d] + REL_TOL * max(1.0, h[d])
    return blocking
