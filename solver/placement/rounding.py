"""A plan from the placement's LP relaxation: the MIP's start, and the safety net when the MIP stops at its limit.

Three steps, each an LP (the integer columns fixed one family at a time):

1. **Training jobs** (:func:`dive_training`): a job the relaxation already places whole keeps its option; a job it
   splits fractionally over several options is fixed, largest job first, to whichever of its options the relaxation
   uses (at most :data:`DIVE_OPTIONS_PER_JOB`, largest share first) gives the cheapest relaxation with it, each trial
   an LP re-solved from the previous basis (a dive). Taking the largest share instead can put a job where the
   inference around it then needs many more blocks: on the shipped scenario with N+1, the 100k-GPU job at its
   largest share (dallas+quincy) makes the relaxation 0.87e9 USD dearer than unfixed, at the dive's ashburn+dallas
   0.21e9 (docs/benchmarks/workloads.md).
2. **Blocks**: the relaxation with the jobs fixed, its blocks rounded up (within the site's limits, at least the
   minimum build); the replicas it leans on at all are built.
3. **The rest** (serving, backups, routing) re-optimised as an LP with the blocks, jobs and replicas fixed.

The plan is feasible (demand that does not fit is the formulation's penalised slack) but not optimal: the MIP starts
from it, and the better of the two is reported with the gap to the best bound (see
:func:`~backbone.solver.placement.result.solve_placement`). All trials share one deadline, the placement's
``time_limit_s`` from the start of the dive; past it the remaining jobs take their largest share.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from backbone.solver.core.problem import Solution, Status, solve
from backbone.solver.placement.formulation import PlacementModel, build_placement
from backbone.solver.placement.inputs import PlacementInputs
from backbone.solver.placement.options import PlaceOptions

__all__ = ["DIVE_OPTIONS_PER_JOB", "dive_training", "round_relaxation"]

logger = logging.getLogger(__name__)

DIVE_OPTIONS_PER_JOB = 8
"""A fractional job's options tried by the dive: the relaxation's largest shares, at most this many."""

SHARE_TOL = 1e-3
"""An option with a relaxation share below this is not tried; a job with a share above ``1 - 1e-6`` is whole."""


def round_relaxation(inp: PlacementInputs, relaxed: Solution, opts: PlaceOptions
                     ) -> tuple[PlacementModel, Solution] | None:
    """A plan from the LP relaxation ``relaxed`` (see the module docstring), or None when its LP finds none.

    Parameters
    ----------
    inp
        The placement inputs the relaxation was built from.
    relaxed
        The optimal solution of the placement's LP relaxation (its ``lp`` is the relaxed program).
    opts
        The placement options (backend, time limit).

    Returns
    -------
    tuple of PlacementModel and Solution, or None
        The program with the blocks, jobs and replicas fixed, and its solution.
    """
    deadline = time.perf_counter() + opts.time_limit_s
    base = relaxed
    fixed: dict[str, np.ndarray] = {}
    if len(inp.work.options):
        train, base = dive_training(inp, relaxed, opts, deadline)
        fixed["train"] = train
    blocks = np.ceil(base.values("blocks").to_numpy() - 1e-6)
    max_blocks = inp.sites["max_blocks"].to_numpy(dtype=float)
    min_blocks = inp.sites["min_blocks"].to_numpy(dtype=float)
    blocks = np.clip(blocks, 0.0, max_blocks)
    fixed["blocks"] = np.where((blocks > 0) & (blocks < min_blocks), np.minimum(min_blocks, max_blocks), blocks)
    if len(inp.work.replicas):  # a replica the relaxation leans on at all is built (storage rows may then bind)
        fixed["replica"] = (base.values("replica").to_numpy() > 1e-6).astype(float)
    model = build_placement(inp, fixed=fixed)
    limit = max(deadline - time.perf_counter(), 0.0) + opts.time_limit_s  # the dive's unused time, plus one solve
    sol = solve(model.lp, backend=opts.backend, time_limit_s=limit, mip_gap=opts.mip_gap)
    return (model, sol) if sol.status.has_solution else None


def dive_training(inp: PlacementInputs, relaxed: Solution, opts: PlaceOptions, deadline: float
                  ) -> tuple[np.ndarray, Solution]:
    """One option per training job, chosen by a dive over the relaxation (see the module docstring).

    Parameters
    ----------
    inp
        The placement inputs.
    relaxed
        The optimal solution of the LP relaxation (its ``lp`` is the relaxed program).
    opts
        Backend and time limit.
    deadline
        ``time.perf_counter()`` past which no trial starts (the remaining jobs take their largest share).

    Returns
    -------
    train
        0/1 per option: the option each job takes.
    solution
        The relaxation with every job at its option (``relaxed`` when no job was fractional; when the dive ran out
        of time, the last relaxation it solved).
    """
    jobs = inp.work.options["job"].to_numpy()
    gpus = inp.work.jobs["gpus"].to_numpy(dtype=float)
    program = relaxed.lp.copy() if relaxed.lp is not None else None
    lower, upper = (program.bounds("train") if program is not None else (np.zeros(len(jobs)), np.ones(len(jobs))))
    lower, upper = lower.copy(), upper.copy()
    current = relaxed
    tried = 0
    stale = False  # a fractional job was fixed without a trial: ``current`` no longer has every job whole
    for j in np.argsort(-gpus, kind="stable"):  # one pass per job (tens); a trial LP only for fractional ones
        mine = np.flatnonzero(jobs == j)
        if len(mine) == 0:
            continue
        share = current.values("train").to_numpy()[mine]
        pick = mine[int(np.argmax(share))]
        if share.max() < 1.0 - 1e-6 and program is not None:
            candidates = mine[np.argsort(-share, kind="stable")][:DIVE_OPTIONS_PER_JOB]
            candidates = candidates[share[np.searchsorted(mine, candidates)] > SHARE_TOL]
            best: Solution | None = None
            for o in candidates:  # a handful of options of one job
                left = deadline - time.perf_counter()
                if left <= 0.1:
                    break
                lo, hi = lower.copy(), upper.copy()
                lo[mine], hi[mine] = 0.0, 0.0
                lo[o], hi[o] = 1.0, 1.0
                program.set_bounds("train", lo, hi)
                trial = solve(program, backend=opts.backend, time_limit_s=left, warm_start=current)
                tried += 1
                if trial.status == Status.OPTIMAL and (best is None or trial.objective < best.objective):
                    best, pick = trial, o
            if best is not None:
                current = best
            else:
                stale = True
        lower[mine], upper[mine] = 0.0, 0.0
        lower[pick], upper[pick] = 1.0, 1.0
    if tried:
        logger.info("placement rounding: %d trial relaxations fixed the fractional training jobs (objective %.6g)",
                    tried, current.objective)
    train = np.zeros(len(jobs))
    train[lower > 0.5] = 1.0
    if stale and program is not None and time.perf_counter() < deadline - 0.1:
        program.set_bounds("train", lower, upper)  # every job fixed: the blocks are rounded from this relaxation
        final = solve(program, backend=opts.backend, time_limit_s=deadline - time.perf_counter(), warm_start=current)
        if final.status == Status.OPTIMAL:
            current = final
    return train, current
