"""Solving a design instance: LP bound, rounding heuristic and improvement, MIP with a start."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.errors import InfeasibleError, SolverError
from backbone.solver.core.problem import Status, solve
from backbone.solver.core.sparse import selector
from backbone.solver.design.formulation import build_design_lp, link_loads, program_flows
from backbone.solver.design.heuristics import (
    EvaluatedDesign,
    design_cost,
    evaluate_design,
    improve_design,
    round_up_design,
)
from backbone.solver.design.instance import DesignInstance

logger = logging.getLogger("backbone.solver.design")

ProgressFn = Callable[[float, str], None]

LP_TIME_SHARE = 0.3
"""Share of the time limit the LP relaxation may use."""
IMPROVE_TIME_SHARE = 0.2
"""Share of the time limit the remove-modules improvement pass may use."""


def _no_progress(fraction: float, message: str) -> None:
    """Ignore progress."""


# ---------------------------------------------------------------------- results
@dataclass
class DesignSolution:
    """A design and how good it is.

    Attributes
    ----------
    status
        ``optimal`` (gap within tolerance), ``feasible`` (a design, not proven optimal) or
        ``time_limit`` (no design found in time).
    cost
        Objective of the design (NaN when none).
    lower_bound
        Best proven lower bound: max(MIP dual bound, LP relaxation with cuts).
    counts
        Modules installed, per module row of the instance.
    flows
        ``(states, sources, arcs)`` flow of the design (None when no design).
    """

    status: str
    cost: float
    lower_bound: float
    counts: np.ndarray | None
    flows: np.ndarray | None
    sources: np.ndarray
    lp_bound: float = float("nan")
    heuristic_cost: float = float("nan")
    mip_status: str = ""
    backend: str = "highs"
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the solver had to do (e.g. an objective it re-solved)

    @property
    def gap(self) -> float | None:
        """Relative gap ``(cost - bound) / cost`` (None without a design or bound)."""
        if self.counts is None or not math.isfinite(self.cost) or not math.isfinite(self.lower_bound):
            return None
        return max(0.0, self.cost - self.lower_bound) / max(abs(self.cost), 1e-9)

    def installed(self, inst: DesignInstance) -> pd.Series:
        """Total capacity per link (pre-installed + modules)."""
        pre = inst.links["preinstalled"].astype(float)
        if self.counts is None:
            return pre
        cap = inst.modules["capacity"].to_numpy(float) * self.counts
        added = np.bincount(inst.modules["link"].to_numpy(int), weights=cap, minlength=inst.n_links)
        return pre + added



def solve_design(inst: DesignInstance, time_limit_s: float = 60.0, backend: str = "highs", mip_gap: float = 1e-4,
                 cuts: bool = True, heuristic: bool = True, progress: ProgressFn | None = None) -> DesignSolution:
    """Solve a design instance: LP bound, rounding heuristic + improvement, MIP with start.

    Parameters
    ----------
    time_limit_s
        Seconds for the whole solve (LP, heuristic and MIP share it).
    backend
        A MIP-capable backend (``backbone.solver.backends.available_backends(mip=True)``).
    cuts, heuristic
        Use the cut-set family / the rounding heuristic and MIP start.

    Raises
    ------
    InfeasibleError
        When no design can carry the demand (disconnected pairs in some state, or module limits).
    SolverError
        When the backend fails.
    """
    progress = progress or _no_progress
    t0 = time.perf_counter()
    deadline = t0 + time_limit_s
    if len(inst.demands) == 0 or float(inst.demands["volume"].sum()) <= 0:
        zero = np.zeros(len(inst.modules))
        return DesignSolution("optimal", design_cost(inst, zero), design_cost(inst, zero), zero, None,
                              np.zeros(0, int), backend=backend)
    _check_connected(inst)
    progress(0.02, "building the design program")
    prog = build_design_lp(inst, cuts=cuts)
    stats = prog.lp.stats()
    logger.info("design %s: %s", inst.name, stats)
    progress(0.05, f"LP relaxation ({stats['rows']:,} rows, {stats['cols']:,} columns)")
    lp_sol = solve(prog.lp.relaxed(), backend=backend, time_limit_s=max(LP_TIME_SHARE * time_limit_s, 0.5))
    if lp_sol.status == Status.INFEASIBLE:
        raise InfeasibleError(f"design {inst.name}: no capacity installation can carry the demand",
                              ["the capacity that can be installed (pre-installed-only links, module limits, explicit "
                               "options) cannot carry the demand in some network state"])
    if lp_sol.status in (Status.ERROR, Status.UNBOUNDED):
        raise SolverError(f"design LP relaxation failed: {lp_sol.message}")
    lp_bound = lp_sol.objective if lp_sol.status == Status.OPTIMAL else -math.inf
    best: EvaluatedDesign | None = None
    if lp_sol.status == Status.OPTIMAL and inst.capacity_model == "L":
        counts = lp_sol.values("modules").to_numpy()
        best = EvaluatedDesign(counts, lp_sol.objective, lp_sol.x, program_flows(prog, inst, lp_sol))  # type: ignore[arg-type]
    elif heuristic and lp_sol.x is not None:
        progress(0.3, "rounding the LP design up to modules")
        need = link_loads(inst, program_flows(prog, inst, lp_sol)).max(axis=0) - inst.links["preinstalled"].to_numpy(float)
        rounded = round_up_design(inst, need)
        best = evaluate_design(inst, rounded, deadline - time.perf_counter(), backend)
        if best is not None:
            progress(0.4, f"improving the rounded design (cost {best.cost:,.0f})")
            improve_deadline = min(deadline, time.perf_counter() + IMPROVE_TIME_SHARE * time_limit_s)
            best = improve_design(inst, best, improve_deadline, backend)
    heuristic_cost = best.cost if best is not None else math.nan
    mip_status, mip_bound = "", -math.inf
    notes: list[str] = []
    remaining = deadline - time.perf_counter()
    if inst.capacity_model != "L" and remaining > 0.2:
        progress(0.5, f"branch and cut ({remaining:.0f} s left, start {heuristic_cost:,.0f})")
        mip = solve(prog.lp, backend=backend, time_limit_s=remaining, mip_gap=mip_gap,
                    start=best.x if best is not None else None)  # a MIP start where the backend takes one
        mip_status = mip.status.value
        if mip.fallback:
            notes.append(f"branch and cut: {mip.fallback}")
        if mip.status == Status.INFEASIBLE:
            raise InfeasibleError(f"design {inst.name}: no integer design can carry the demand")
        if mip.status == Status.ERROR:
            raise SolverError(f"design MIP failed: {mip.message}")
        if mip.bound is not None and math.isfinite(mip.bound):
            mip_bound = mip.bound
        if mip.status.has_solution and mip.x is not None and (best is None or mip.objective < best.cost - 1e-9):
            counts = np.round(mip.values("modules").to_numpy(), 9)
            best = EvaluatedDesign(counts, mip.objective, mip.x, program_flows(prog, inst, mip))
    elif inst.capacity_model == "L":
        mip_status = lp_sol.status.value
    bound = max(lp_bound, mip_bound)
    progress(1.0, "design done")
    if best is None:
        return DesignSolution("time_limit", math.nan, bound, None, None, prog.sources, lp_bound, heuristic_cost,
                              mip_status, backend, time.perf_counter() - t0, stats, notes)
    gap = max(0.0, best.cost - bound) / max(abs(best.cost), 1e-9)
    status = "optimal" if gap <= max(mip_gap, 1e-6) + 1e-9 else "feasible"
    return DesignSolution(status, best.cost, min(bound, best.cost), np.where(np.abs(best.counts) < 1e-9, 0.0,
                          best.counts), best.flows, prog.sources, lp_bound, heuristic_cost, mip_status, backend,
                          time.perf_counter() - t0, stats, notes)


def _check_connected(inst: DesignInstance) -> None:
    """Every demand's endpoints must be connected by links that can have capacity, in every state."""
    from scipy.sparse.csgraph import connected_components

    n = len(inst.nodes)
    a, b = inst.links["a"].to_numpy(int), inst.links["b"].to_numpy(int)
    can = inst.links["preinstalled"].to_numpy(float) > 0
    can[np.unique(inst.modules["link"].to_numpy(int))] = True
    s, t = inst.demands["s"].to_numpy(int), inst.demands["t"].to_numpy(int)
    pos = inst.demands["volume"].to_numpy(float) > 0
    reasons: list[str] = []
    for name, failed in zip(inst.state_names, inst.states, strict=True):
        ok = can.copy()
        ok[list(failed)] = False
        g = selector(a[ok], n, n, cols=b[ok])
        directed = inst.link_model == "D"
        _, label = connected_components(g, directed=directed, connection="strong" if directed else "weak")
        cut = pos & (label[s] != label[t])
        if directed and cut.any():
            cut = pos & ~_reachable(g, s, t)
        for d in inst.demands.index[cut][:5]:
            reasons.append(f"state {name}: demand {d} has no path")
    if reasons:
        raise InfeasibleError(f"design {inst.name}: some demands cannot be connected", reasons[:20])


def _reachable(g: sp.csr_matrix, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    from scipy.sparse.csgraph import breadth_first_order

    out = np.zeros(len(s), bool)
    for src in np.unique(s):
        seen = breadth_first_order(g, int(src), directed=True, return_predecessors=False)
        mask = s == src
        out[mask] = np.isin(t[mask], seen)
    return out
