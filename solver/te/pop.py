"""Fast near-optimal TE: POP (Narayanan et al., SOSP 2021), a random demand split.

The routable demands are dealt at random into ``parts`` sub-problems; each sub-problem sees every
link with ``1/parts`` of its capacity and is solved as the ordinary path LP (``k`` candidate paths)
on its own, in parallel worker processes (serially inside a daemonic worker, which may not fork).
Summing the sub-problems' flows gives a feasible routing of all demands: arc ``a`` carries at most
``sum_i u_i cap_a / parts <= max_i u_i cap_a``. The reported MLU is recomputed from the summed loads.

Granular demand (many demands, none a large share of a link) loses little; the proven lower bound
(:func:`backbone.solver.te.bounds.mlu_lower_bound` on each sub-problem's capacity duals, the best
kept) shows how little.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing as mp
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from backbone.solver.core.deadline import Deadline, TimeLimitReached
from backbone.solver.core.problem import Status
from backbone.solver.te.bounds import DualPricer, mlu_lower_bound, refine_mlu_bound, site_cut_bound
from backbone.solver.te.colgen import ScaleOutcome
from backbone.solver.te.formulations import SPLIT_COLUMNS, block_values, build_formulation
from backbone.solver.te.instance import TEInstance
from backbone.solver.te.objectives import Stage, run_objective
from backbone.solver.te.sections import POPFigures

logger = logging.getLogger(__name__)

DEFAULT_PARTS = 4
"""Sub-problems when not given."""

_JOBS: list[tuple[Any, ...]] = []
"""Sub-problem arguments, set before forking the pool (workers read them by index)."""


def _solve_part(i: int) -> dict[str, Any]:
    sub, objective, k, backend, time_limit, ceiling, lp_method, deadline = _JOBS[i]
    form = build_formulation(sub, "path", k_paths=k, deadline=deadline)
    time_limit = min(time_limit, deadline.remaining() if deadline is not None else time_limit)
    if time_limit <= 0.05:
        raise TimeLimitReached("time limit reached before a POP sub-problem could be solved")
    out = run_objective(form, sub, objective, backend=backend, time_limit_s=time_limit, utilisation_ceiling=ceiling,
                        lp_method=lp_method)
    sol = out.solution
    arc_load, splits = form.extract(sol)
    unmet = block_values(sol, "unmet", len(form.lp_demands))
    w = None
    if objective == "min-mlu":
        try:
            y = sol.duals("capacity")
            w = np.zeros(sub.n_arcs)
            w[y.index.to_numpy(np.int64)] = -y.to_numpy()
        except (ValueError, KeyError):
            w = None
    return {"arc_load": arc_load, "lp_demands": form.lp_demands, "unmet": unmet, "reason": form.reason,
            "splits": splits, "stages": out.stages, "status": out.status, "w": w,
            "paths_seconds": form.paths_seconds, "timed_out": out.timed_out}


def run_pop(inst: TEInstance, objective: str, k_paths: int = 4, parts: int = DEFAULT_PARTS, backend: str = "highs",
            time_limit_s: float = 120.0, utilisation_ceiling: float | None = None, lp_method: str = "auto",
            seed: int = 0, workers: int | None = None, progress: Callable[[float, str], None] | None = None,
            deadline: float | None = None) -> ScaleOutcome:
    """POP: ``parts`` random demand sub-problems with ``1/parts`` of every capacity, solved in parallel.

    Parameters
    ----------
    objective
        ``min-mlu`` or ``max-throughput``.
    parts
        Number of sub-problems (1 solves the whole path LP).
    seed
        Seed of the random split (results are reproducible).
    workers
        Processes (default: ``min(parts, cpu count)``; 1 inside a daemonic process).
    k_paths
        Candidate paths per demand in each sub-problem.
    time_limit_s
        Seconds for each sub-problem (they run side by side).
    utilisation_ceiling
        Max-throughput's utilisation ceiling (default 1.0).
    deadline
        Absolute ``time.perf_counter()`` deadline over the whole run (path search included; default
        ``now + time_limit_s``). Sub-problems stopped by it raise
        :class:`~backbone.solver.core.deadline.TimeLimitReached` if they have no feasible solution.

    Raises
    ------
    SolverError
        A sub-problem fails or finds no feasible solution within the time limit.
    """
    progress = progress or (lambda f, m: None)
    if objective not in ("min-mlu", "max-throughput"):
        raise ValueError(f"POP supports min-mlu and max-throughput, not {objective!r}")
    parts = max(1, int(parts))
    cand = np.flatnonzero(inst.routable)
    rng = np.random.default_rng(seed)
    part_of = np.full(inst.n_demands, -1)
    part_of[cand[rng.permutation(len(cand))]] = np.arange(len(cand)) % parts
    subs = [dataclasses.replace(inst, arc_capacity_gbps=inst.arc_capacity_gbps / parts,
                                demand_gbps=np.where(part_of == i, inst.demand_gbps, 0.0)) for i in range(parts)]
    global _JOBS
    deadline = time.perf_counter() + time_limit_s if deadline is None else deadline
    left = max(0.1, deadline - time.perf_counter())
    reserve = min(60.0, 0.1 * left) if objective == "min-mlu" else 0.0  # for the bound refinement
    part_limit = max(0.1, left - reserve)
    part_deadline = Deadline(deadline - reserve)
    _JOBS = [(s, objective, k_paths, backend, part_limit, utilisation_ceiling, lp_method, part_deadline) for s in subs]
    if workers is None:
        workers = min(parts, os.cpu_count() or 1)
    if mp.current_process().daemon or "fork" not in mp.get_all_start_methods():
        workers = 1
    progress(0.2, f"pop: {parts} sub-problems on {workers} process(es)")
    try:
        if workers <= 1:
            results = [_solve_part(i) for i in range(parts)]
        else:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("fork")) as pool:
                results = list(pool.map(_solve_part, range(parts)))
    finally:
        _JOBS = []
    arc_load = np.zeros(inst.n_arcs)
    carried = np.zeros(inst.n_demands)
    reason = inst.reason.copy()
    splits: list[pd.DataFrame] = []
    stages: list[Stage] = []
    status = Status.OPTIMAL
    timed_out = False
    lp_all: list[np.ndarray] = []
    for i, r in enumerate(results):
        arc_load += r["arc_load"]
        lp = r["lp_demands"]
        lp_all.append(lp)
        carried[lp] = inst.demand_gbps[lp] - r["unmet"]
        mine = part_of == i
        reason[mine] = r["reason"][mine]
        if len(r["splits"]):
            splits.append(r["splits"])
        stages += [dataclasses.replace(s, name=f"part{i + 1}-{s.name}") for s in r["stages"]]
        if r["status"] != Status.OPTIMAL:
            status = Status.FEASIBLE
        timed_out = timed_out or bool(r["timed_out"])
    frame = pd.concat(splits, ignore_index=True) if splits else pd.DataFrame({c: [] for c in SPLIT_COLUMNS})
    lp_demands = np.sort(np.concatenate(lp_all)) if lp_all else np.zeros(0, np.int64)
    bound = None
    if objective == "min-mlu":
        value = float(np.max(arc_load / inst.arc_capacity_gbps, initial=0.0))
        t0 = time.perf_counter()
        pricer = DualPricer(inst)
        bounds = [mlu_lower_bound(inst, lp_demands, r["w"], pricer) for r in results if r["w"] is not None]
        bound = max([*bounds, site_cut_bound(inst, lp_demands)])
        if value > 0 and value - bound > 1e-4 * value:
            progress(0.9, "pop: refining the lower bound")
            w0 = max((r["w"] for r in results if r["w"] is not None),
                     key=lambda w: mlu_lower_bound(inst, lp_demands, w, pricer), default=None)
            bound = max(bound, refine_mlu_bound(inst, lp_demands, w0, deadline=deadline)[0])
        logger.info("pop bound from %d sub-problem(s) in %.2fs", len(bounds), time.perf_counter() - t0)
    else:
        value = float(carried[lp_demands].sum())
    return ScaleOutcome(status, value, arc_load, carried, reason, frame, stages, bound,
                        sum(r["paths_seconds"] for r in results), POPFigures(parts=parts, workers=workers), timed_out)
