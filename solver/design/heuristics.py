"""Design heuristics: round LP loads up to modules, route a fixed design, remove surplus modules."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from backbone.solver.core.problem import Status, solve
from backbone.solver.design.formulation import build_design_lp, program_flows
from backbone.solver.design.instance import FEAS_TOL, DesignInstance


def round_up_design(inst: DesignInstance, need: np.ndarray) -> np.ndarray:
    """Cheapest module counts covering ``need`` (capacity beyond pre-installed) on every link.

    Modular: the cheaper of (one module type, ``ceil(need / cap)`` times) and (the most
    cost-efficient module ``floor(need / cap)`` times plus one type for the rest). Explicit: the
    cheapest single option at least ``need`` (else the largest). Linear: exactly ``need`` of the
    most cost-efficient module. This is post-processing of a solution, one pass over links.
    """
    mods = inst.modules
    counts = np.zeros(len(mods))
    cap, cost = mods["capacity"].to_numpy(float), mods["cost"].to_numpy(float)
    upper = mods["max_count"].to_numpy(float)
    groups = mods.groupby("link").indices
    for link, rows in groups.items():
        rows = np.asarray(rows)
        nd = max(0.0, float(need[int(link)]))
        if nd <= FEAS_TOL * max(1.0, cap[rows].max()):
            continue
        if inst.capacity_model == "L":
            best = rows[np.argmin(cost[rows] / cap[rows])]
            counts[best] = nd / cap[best]
            continue
        if inst.capacity_model == "E":
            ok = rows[cap[rows] >= nd - FEAS_TOL]
            pick = ok[np.argmin(cost[ok])] if len(ok) else rows[np.argmax(cap[rows])]
            counts[pick] = 1.0
            continue
        single = np.ceil(nd / cap[rows] - 1e-9)
        single_cost = np.where(single <= upper[rows], single * cost[rows], np.inf)
        best_i = int(np.argmin(single_cost))
        option: dict[int, float] = {int(rows[best_i]): float(single[best_i])}
        best_cost = float(single_cost[best_i])
        eff = rows[np.argmin(cost[rows] / cap[rows])]
        n_big = min(math.floor(nd / cap[eff]), upper[eff])
        rest = nd - n_big * cap[eff]
        if rest > FEAS_TOL:
            rest_n = np.ceil(rest / cap[rows] - 1e-9)
            extra = np.where(rows == eff, n_big + rest_n <= upper[rows], rest_n <= upper[rows])
            rest_cost = np.where(extra, rest_n * cost[rows], np.inf)
            j = int(np.argmin(rest_cost))
            mixed = n_big * cost[eff] + rest_cost[j]
            if mixed < best_cost - 1e-9:
                option = {int(eff): float(n_big)}
                option[int(rows[j])] = option.get(int(rows[j]), 0.0) + float(rest_n[j])
        if math.isfinite(best_cost) or len(option) > 1:
            for r, n in option.items():
                counts[r] = n
        else:  # not coverable within max_count: install everything allowed
            counts[rows] = np.where(np.isfinite(upper[rows]), upper[rows], 0.0)
    return counts


def design_cost(inst: DesignInstance, counts: np.ndarray) -> float:
    """Objective of module counts ``counts``: module cost, the constant cost, and setup of newly used links."""
    cost = float(inst.modules["cost"].to_numpy(float) @ counts) + inst.constant_cost()
    if inst.fixed_charge:
        pre = inst.links["preinstalled"].to_numpy(float) > 0
        used = np.bincount(inst.modules["link"].to_numpy(int), weights=counts, minlength=inst.n_links) > 0
        cost += float(inst.links["setup_cost"].to_numpy(float)[used & ~pre].sum())
    return cost


@dataclass
class EvaluatedDesign:
    """A design routed at fixed counts: counts, objective, the program's solution vector and its flows."""

    counts: np.ndarray
    cost: float
    x: np.ndarray
    flows: np.ndarray


def evaluate_design(inst: DesignInstance, counts: np.ndarray, time_limit_s: float,
                    backend: str = "highs") -> EvaluatedDesign | None:
    """Route all states on a fixed design at minimum routing cost within ``time_limit_s`` seconds;
    None when it cannot carry the demand (or the LP does not finish in time)."""
    prog = build_design_lp(inst, cuts=False, fixed_counts=counts)
    sol = solve(prog.lp, backend=backend, time_limit_s=max(float(time_limit_s), 0.1))
    if sol.status != Status.OPTIMAL or sol.x is None:
        return None
    return EvaluatedDesign(counts, sol.objective, sol.x, program_flows(prog, inst, sol))


def improve_design(inst: DesignInstance, start: EvaluatedDesign, deadline: float, backend: str = "highs") -> EvaluatedDesign:
    """Remove surplus modules while the design stays feasible (first improvement, time-boxed).

    First drops modules the routing leaves unused (slack at least one module on every state),
    then tries removing (modular) or downsizing (explicit) the most expensive installed module
    per link with one fixed-design LP per trial until a full pass finds nothing or time runs out.
    """
    best = start
    cap, cost = inst.modules["capacity"].to_numpy(float), inst.modules["cost"].to_numpy(float)
    mod_link = inst.modules["link"].to_numpy(int)
    improved = True
    while improved and time.perf_counter() < deadline:
        improved = False
        order = np.argsort(-(cost * (best.counts > 0)))
        for m in order:
            if best.counts[m] <= 0 or time.perf_counter() >= deadline:
                continue
            trials = []
            if inst.capacity_model == "E":
                same = np.flatnonzero((mod_link == mod_link[m]) & (cap < cap[m]))
                trials = [_swap(best.counts, m, j) for j in same[np.argsort(-cap[same])][:2]]
                trials.append(_swap(best.counts, m, None))
            else:
                step = 1.0 if inst.capacity_model == "M" else best.counts[m]
                c = best.counts.copy()
                c[m] = max(0.0, c[m] - step)
                trials.append(c)
            for c in trials:
                if design_cost(inst, c) >= best.cost - 1e-9:
                    continue
                ev = evaluate_design(inst, c, deadline - time.perf_counter(), backend)
                if ev is not None and ev.cost < best.cost - 1e-9:
                    best, improved = ev, True
                    break
    return best


def _swap(counts: np.ndarray, m: int, j: int | None) -> np.ndarray:
    c = counts.copy()
    c[m] = 0.0
    if j is not None:
        c[j] = 1.0
    return c
