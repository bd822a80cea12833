"""``solve_te``: one TE solve, dispatched by objective, formulation and method (see :mod:`backbone.solver.te`).

``auto`` picks the path LP or column generation by size and follows a path LP with a wide proven gap by column
generation (:data:`AUTO_ESCALATE_GAP`); the time limit covers every step; :func:`resolve_te` re-solves a routing's
model with another objective.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, get_args

from backbone.solver.core.deadline import Deadline, TimeLimitReached
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.te.options import Objective, TEOptions
from backbone.solver.te.sections import AutoFigures, FallbackFigures, LPSize

if TYPE_CHECKING:  # imported when used, so the options (and ``backbone te --help``) load without numpy or scipy
    from backbone.model import Network
    from backbone.solver.te.result import TEResult
    from backbone.solver.te.summary import TERecord

logger = logging.getLogger(__name__)

ALL_OBJECTIVES: tuple[str, ...] = get_args(Objective)
"""Every objective: the LP objectives (:data:`~backbone.solver.te.objectives.OBJECTIVES`) and ``ecmp``."""


def solve_te(net: Network, options: TEOptions | None = None, *, progress: ProgressFn | None = None,
             path_provider: Callable[..., Any] | None = None, escalate_above_mlu: float | None = None,
             overloaded_above_mlu: float | None = None) -> TEResult:
    """Solve one TE problem: route ``net``'s demands as ``options`` say.

    The algorithm takes its options model; :func:`backbone.solve_te` (the notebook facade) is the keyword-friendly
    layer, which also adds the bound and impact figures ``backbone te`` reports.

    Parameters
    ----------
    net
        The network with its demands.
    options
        A :class:`~backbone.solver.te.options.TEOptions` (default: its defaults, min-MLU over 4 paths, ``auto``):
        the objective, formulation, ``k_paths``, backend, ``time_limit_s`` (a hard limit over path search, model
        building and every LP stage; the summary status is ``time_limit`` when it stopped the solve),
        ``utilisation_ceiling`` and ``method`` (``exact``, ``colgen``, ``pop`` or ``auto``: :func:`choose_method`).
        Its ``verify``, ``bound`` and ``impact`` are the task's (:mod:`backbone.solver.tasks.te`), not read here.
    progress
        Progress callback ``(fraction, message)``.
    path_provider
        Optional candidate-path function with :func:`backbone.solver.paths.candidates.candidate_paths`'s signature
        (failure sweeps reuse the intact network's paths through it).
    escalate_above_mlu
        ``auto``, min-MLU only: column generation follows the path LP only when the path LP's MLU is above this as
        well as its gap above :data:`AUTO_ESCALATE_GAP` (a caller that decides on "MLU within this" already has a
        routing that settles it; the summary keeps the path LP's MLU, bound and gap, and says so). None: by the gap
        alone.
    overloaded_above_mlu
        ``auto``, min-MLU only: no column generation after the path LP when the path LP's proven lower bound on the
        MLU over every admissible routing is already above this (a caller that decides on "MLU within this" has its
        answer: no routing gets within it; the summary keeps the path LP's MLU, bound and gap, and says so). None:
        by the gap alone.

    Returns
    -------
    TEResult
        The summary reports the method that ran, ``lower_bound`` (min-MLU: a proven bound on the MLU over every
        admissible routing) and ``gap``.

    Raises
    ------
    SolverError
        Backend missing or failing, or no feasible solution within the time limit.
    TypeError
        ``options`` is not a :class:`~backbone.solver.te.options.TEOptions`.

    Example
    -------
    >>> r = solve_te(net, TEOptions(objective="min-mlu", k_paths=4))    # doctest: +SKIP
    >>> r.summary.mlu                                                  # doctest: +SKIP
    0.75
    """
    o = options if options is not None else TEOptions.model_validate({})
    if not isinstance(o, TEOptions):
        raise TypeError(f"solve_te: options must be a TEOptions, not {type(o).__name__} "
                        "(backbone.solve_te takes the options as keywords)")
    return _solve(net, o, progress, path_provider, escalate_above_mlu, overloaded_above_mlu)


def _solve(net: Network, o: TEOptions, progress: ProgressFn | None, path_provider: Callable[..., Any] | None,
           escalate_above_mlu: float | None, overloaded_above_mlu: float | None = None) -> TEResult:
    """:func:`solve_te` once its options are resolved."""
    from backbone.solver.te.instance import build_instance
    from backbone.solver.te.objectives import OBJECTIVES

    objective, formulation, k_paths, backend = o.objective, o.formulation, o.k_paths, o.backend
    utilisation_ceiling, disjoint, lp_method = o.utilisation_ceiling, o.disjoint, o.lp_method
    method: str = o.method
    progress = progress or no_progress
    t_start = time.perf_counter()
    inst = build_instance(net, path_provider)
    if objective == "ecmp":
        from backbone.solver.te.ecmp import simulate_ecmp

        return simulate_ecmp(net, metric=o.ecmp_metric, tolerance_ms=o.ecmp_tolerance_ms, instance=inst)
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}")
    if disjoint and method == "auto":
        method = "exact"  # the scalable methods search plain (not link-disjoint) paths
    requested, method = method, choose_method(inst, objective, formulation, method)
    deadline = Deadline(t_start + o.time_limit_s)
    if method in ("colgen", "pop"):
        try:
            return _solve_scalable(inst, objective, method, k_paths, backend, deadline.at, utilisation_ceiling,
                                   lp_method, o.pop_parts, progress, t_start)
        except TimeLimitReached as stop:
            return _time_limit_result(inst, objective, "path", method, k_paths, backend, utilisation_ceiling, False,
                                      lp_method, str(stop), t_start, progress)
    may_escalate = requested == "auto" and _may_escalate(inst, objective, formulation, disjoint, o.latency_tiebreak)
    first = _scaled(progress, 0.0, 0.5) if may_escalate else progress
    result = _solve_exact(inst, objective, formulation, k_paths, backend, deadline, utilisation_ceiling, disjoint,
                          o.latency_tiebreak, lp_method, first, t_start)
    if may_escalate:
        s, gap = result.summary, result.summary.gap
        if gap is not None and math.isfinite(gap) and gap > AUTO_ESCALATE_GAP:
            if escalate_above_mlu is not None and result.mlu <= escalate_above_mlu:
                result = _keep_path_lp(result, gap, "escalate_above_mlu", escalate_above_mlu, (
                    f"auto: the path LP over {k_paths} candidate paths per demand reached MLU {result.mlu:.6g}, "
                    f"within {escalate_above_mlu:.6g}: no column generation (its proven gap to the optimum over "
                    f"every admissible path is {100 * gap:.1f} %)"))
            elif overloaded_above_mlu is not None and _bound_above(s, overloaded_above_mlu):
                result = _keep_path_lp(result, gap, "overloaded_above_mlu", overloaded_above_mlu, (
                    f"auto: the path LP over {k_paths} candidate paths per demand reached MLU {result.mlu:.6g}; "
                    f"its proven bound over every admissible path, {float(s.lower_bound or 0.0):.6g}, is above "
                    f"{overloaded_above_mlu:.6g}: no column generation (no routing gets within it; the MLU's "
                    f"proven gap is {100 * gap:.1f} %)"))
            else:
                result = _escalate(inst, result, k_paths, backend, deadline, lp_method, _scaled(progress, 0.5, 1.0),
                                   t_start)
        progress(1.0, "done")
    return result


def _keep_path_lp(result: TEResult, gap: float, rule: str, threshold: float, note: str) -> TEResult:
    """The path LP's routing kept without column generation, with why (``rule`` and its ``threshold``) and its gap."""
    s = result.summary
    auto = AutoFigures.model_validate({"path_lp_mlu": s.mlu, "path_lp_lower_bound": s.lower_bound,
                                       "path_lp_gap": gap, "column_generation_skipped": True, rule: threshold})
    return result.with_summary(auto=auto, notes=[*s.notes, note])


def _bound_above(summary: TERecord, threshold: float | None) -> bool:
    """Whether the summary's proven lower bound on the MLU over every admissible routing is above ``threshold``."""
    bound = summary.lower_bound
    return threshold is not None and bound is not None and math.isfinite(float(bound)) and float(bound) > threshold


AUTO_ESCALATE_GAP = 0.01
"""``method="auto"``, min-MLU: when the path LP's proven gap ``(MLU - bound) / MLU`` (its MLU over the ``k_paths``
candidates against the bound over every admissible path) is above this, column generation over every admissible
path runs and the lower MLU is reported (on sparse graphs the ``k`` lowest-latency paths share their bottlenecks:
on TopoHub's world backbone the path LP was 4-7x above the optimum; on the shipped scenario, whose demands have
latency SLOs, 7.05 % above its bound). Demands with latency SLOs are priced by the exact latency-limited search
(:mod:`backbone.solver.te.rcsp`), so their routing stays within the SLO and the escalation's optimum is proven."""

ESCALATE_MIN_S = 30.0
ESCALATE_PATH_LP_FACTOR = 20.0
ESCALATE_SHARE = 0.5
"""The escalation's time: ``max(ESCALATE_MIN_S, ESCALATE_PATH_LP_FACTOR x the path LP's seconds)``, at most
``ESCALATE_SHARE`` of the time left (the rest stays for what follows: impact figures, other failure states)."""


def _may_escalate(inst: Any, objective: str, formulation: str, disjoint: bool, latency_tiebreak: bool) -> bool:
    """Whether ``auto`` may follow the path LP with column generation (see :data:`AUTO_ESCALATE_GAP`)."""
    return objective == "min-mlu" and formulation == "path" and not disjoint and not latency_tiebreak


def _scaled(progress: ProgressFn, lo: float, hi: float) -> ProgressFn:
    """``progress`` mapped onto ``[lo, hi]`` (so a two-part solve never moves the bar backwards)."""
    return lambda f, m: progress(lo + (hi - lo) * min(1.0, max(0.0, f)), m)


def _escalate(inst: Any, exact: TEResult, k_paths: int, backend: str, deadline: Deadline, lp_method: str,
              progress: ProgressFn, t_start: float) -> TEResult:
    """Column generation after a path LP whose gap is above :data:`AUTO_ESCALATE_GAP`: its result when its MLU is
    lower, else the path LP's; either way with the better of the two bounds, a note and the ``auto`` block."""
    from backbone.errors import InfeasibleError, SolverError

    s = exact.summary
    mlu, gap, lower_bound = float(s.mlu or 0.0), float(s.gap or 0.0), float(s.lower_bound or 0.0)
    said = (f"auto: the path LP over {k_paths} candidate paths per demand reached MLU {mlu:.6g} with a proven "
            f"gap (MLU - bound) / MLU of {100 * gap:.1f} % (above {100 * AUTO_ESCALATE_GAP:g} %)")
    auto = AutoFigures(path_lp_mlu=s.mlu, path_lp_lower_bound=s.lower_bound, path_lp_gap=s.gap,
                       path_lp_seconds=s.total_seconds)
    budget = min(ESCALATE_SHARE * deadline.remaining(),
                 max(ESCALATE_MIN_S, ESCALATE_PATH_LP_FACTOR * s.total_seconds))
    if budget < 1.0:
        return exact.with_summary(
            notes=[*s.notes, f"{said}; no time was left for column generation over every admissible path"], auto=auto)
    t0 = time.perf_counter()
    try:
        better = _solve_scalable(inst, "min-mlu", "colgen", k_paths, backend, t0 + budget, None, lp_method, 0,
                                 progress, t0)
    except (SolverError, InfeasibleError) as err:  # TimeLimitReached included: the path LP's answer stands
        logger.warning("auto: column generation after the path LP failed: %s", err)
        return exact.with_summary(
            notes=[*s.notes, f"{said}; column generation over every admissible path found no routing ({err})"],
            auto=auto.updated(colgen_seconds=time.perf_counter() - t0))
    b = better.summary
    auto = auto.updated(colgen_mlu=b.mlu, colgen_status=b.status, colgen_seconds=time.perf_counter() - t0,
                        colgen_time_limit_s=budget)
    bound = max(lower_bound, float(b.lower_bound or 0.0))
    if better.mlu < mlu * (1 - 1e-6):
        return better.with_summary(
            **_bound_entries("min-mlu", math.nan if b.objective_value is None else b.objective_value, bound),
            notes=[f"{said}: column generation over every admissible path ran ({budget:.0f} s at most) and its "
                   f"routing (MLU {better.mlu:.6g}) is reported", *s.notes, *b.notes],
            auto=auto, total_seconds=time.perf_counter() - t_start)
    return exact.with_summary(
        **_bound_entries("min-mlu", math.nan if s.objective_value is None else s.objective_value, bound),
        notes=[*s.notes, f"{said}; column generation over every admissible path found no lower MLU "
                         f"({better.mlu:.6g}), so the path LP's routing stands"],
        auto=auto, total_seconds=time.perf_counter() - t_start)


def _solve_exact(inst: Any, objective: str, formulation: str, k_paths: int, backend: str, deadline: Deadline,
                 utilisation_ceiling: float | None, disjoint: bool, latency_tiebreak: bool, lp_method: str,
                 progress: ProgressFn, t_start: float, form: Any = None) -> TEResult:
    """The exact path (``k_paths`` candidates) or edge formulation: build (unless ``form`` is given: built for
    ``inst`` already, its paths and build not timed again), run the objective's LP stages, extract the tables; the
    best answer with status ``time_limit`` when the deadline stops it."""
    import numpy as np

    from backbone.solver.te.formulations import block_values, build_formulation
    from backbone.solver.te.objectives import run_objective
    from backbone.solver.te.result import assemble_result

    progress(0.02, f"{formulation} formulation: building")
    t0 = time.perf_counter()
    reused = form is not None
    try:
        if form is None:
            form = build_formulation(inst, formulation, k_paths=k_paths, disjoint=disjoint, deadline=deadline)
        build_seconds = 0.0 if reused else time.perf_counter() - t0 - form.paths_seconds
        progress(0.15, f"{objective}: solving ({backend})")
        left = max(0.05, deadline.remaining())  # path search and building count
        outcome = run_objective(form, inst, objective, backend=backend, time_limit_s=left,
                                utilisation_ceiling=utilisation_ceiling, latency_tiebreak=latency_tiebreak,
                                progress=progress, lp_method=lp_method)
    except TimeLimitReached as stop:
        return _time_limit_result(inst, objective, formulation, "exact", k_paths, backend, utilisation_ceiling,
                                  disjoint, lp_method, str(stop), t_start, progress)
    progress(0.9, "extracting result tables")
    t1 = time.perf_counter()
    sol = outcome.solution
    if objective == "min-mlu" and formulation == "path" and outcome.status.value == "optimal" and not outcome.timed_out:
        form.routed = sol  # every demand carried: lends a later max-throughput its test of which classes fit
    arc_load, splits = form.extract(sol)
    carried = np.zeros(inst.n_demands)
    unmet = block_values(sol, "unmet", len(form.lp_demands))
    carried[form.lp_demands] = inst.demand_gbps[form.lp_demands] - unmet
    carried[inst.demand_gbps <= 0] = 0.0
    extract_seconds = time.perf_counter() - t1
    main = outcome.stages[0] if outcome.stages else None
    summary: dict[str, Any] = {
        "status": TIME_LIMIT_STATUS if outcome.timed_out else outcome.status.value,
        "objective": objective,
        "objective_value": outcome.objective_value,
        "formulation": formulation,
        "backend": backend,
        "paths_k": k_paths if formulation == "path" or form.n_paths else None,
        "disjoint": disjoint,
        "utilisation_ceiling": None if objective == "min-mlu" else (
            utilisation_ceiling or (0.8 if objective == "min-latency" else 1.0)),
        "paths_seconds": 0.0 if reused else form.paths_seconds,
        "build_seconds": build_seconds + outcome.build_seconds,
        "model_reused": reused,
        "solve_seconds": outcome.solve_seconds,
        "extract_seconds": extract_seconds,
        "lp": LPSize(rows=main.rows, cols=main.cols, nonzeros=main.nonzeros) if main else LPSize(),
        "lp_method": lp_method,
        "path_variables": form.n_paths,
        "stages": [s.to_dict() for s in outcome.stages],
        "stages_skipped": list(outcome.skipped),
        "notes": ([TIME_LIMIT_NOTE] if outcome.timed_out else [])
                 + [f"LP stage {s.name!r}: {s.note}" for s in outcome.stages if s.note],
    }
    summary["method"] = "exact"
    lower_bound = None
    if objective == "min-mlu" and formulation == "path" and not latency_tiebreak:
        from backbone.solver.te.bounds import lp_mlu_bound

        t_bound = time.perf_counter()
        lower_bound = lp_mlu_bound(inst, sol, form.lp_demands)
        summary["bound_seconds"] = time.perf_counter() - t_bound
    summary.update(_bound_entries(objective, outcome.objective_value, lower_bound))
    if outcome.fraction is not None:
        frac = np.full(inst.n_demands, np.nan)
        frac[form.lp_demands] = outcome.fraction
    result = assemble_result(inst, arc_load, carried, form.reason, splits, summary, t_start)
    if formulation == "path" and not disjoint:
        result.model = TEModel(inst, form, k_paths)
    if outcome.fraction is not None:
        result.demands["fair_fraction"] = frac
    progress(1.0, "done")
    return result


class TEModel:
    """What a routing was solved on, kept in memory (not saved, not pickled) for a later objective on the same
    instance: an exact path routing's built formulation (``form``: the same candidate paths, no path search nor
    model building again), or a column-generation routing's columns carrying flow (``columns``: they seed the
    next column generation's pool)."""

    def __init__(self, inst: Any, form: Any, k_paths: int, columns: Any = None) -> None:
        self.inst, self.form, self.k_paths, self.columns = inst, form, k_paths, columns


def resolve_te(routing: TEResult, objective: str, *, backend: str = "highs", time_limit_s: float = 120.0,
               utilisation_ceiling: float | None = None, lp_method: str = "auto",
               progress: ProgressFn | None = None) -> TEResult | None:
    """``objective`` on the same instance as ``routing``, reusing what it was solved on: an exact path routing's
    built model (no path search, no model building; as :func:`solve_te` with ``method="exact"`` would give on the
    same network and ``k_paths``), or a column-generation routing's columns (column generation over every path,
    its pool seeded with them; as ``method="colgen"``). None when ``routing`` keeps neither (another method, the
    edge formulation, disjoint paths, or a routing read back from a file or another process)."""
    model = getattr(routing, "model", None)
    if model is None:
        return None
    t_start = time.perf_counter()
    if model.form is None:  # column generation over every path, its pool seeded with the routing's columns
        from backbone.solver.te.colgen import run_colgen

        try:
            out = run_colgen(model.inst, objective, k_paths=model.k_paths, backend=backend,
                             utilisation_ceiling=utilisation_ceiling, lp_method=lp_method, progress=progress,
                             deadline=t_start + time_limit_s, columns=model.columns)
        except TimeLimitReached as stop:
            return _time_limit_result(model.inst, objective, "path", "colgen", model.k_paths, backend,
                                      utilisation_ceiling, False, lp_method, str(stop), t_start,
                                      progress or no_progress)
        return _scalable_result(model.inst, objective, "colgen", out, model.k_paths, backend, utilisation_ceiling,
                                lp_method, progress or no_progress, t_start)
    return _solve_exact(model.inst, objective, "path", model.k_paths, backend, Deadline(t_start + time_limit_s),
                        utilisation_ceiling, False, False, lp_method, progress or no_progress, t_start,
                        form=model.form)


TIME_LIMIT_STATUS = "time_limit"
"""Summary status when the time limit stopped the solve: the answer is the best feasible one found, with
its bound (``lower_bound``, ``gap``; min-MLU)."""

TIME_LIMIT_NOTE = "the time limit stopped the solve: the best feasible answer found is reported, with its bound"

NO_DEMAND_NOTE = ("no demand: the scenario has no traffic to route, so utilisation and latency figures are "
                  "all zero (add a traffic matrix with `backbone demand SCENARIO --out DIR`)")
"""What a TE result says when there is nothing to route (e.g. a Topology Zoo graph without traffic)."""


AUTO_COLGEN_MIN_DEMANDS = 50_000
"""``method="auto"``: column generation from this many routable demands up (min-mlu, max-throughput); failure
sweeps' ``method="auto"`` switches to the source-flow engine at the same size."""

SCALABLE_OBJECTIVES = ("min-mlu", "max-throughput")


def choose_method(inst: Any, objective: str, formulation: str, method: str = "auto") -> str:
    """The method that runs: ``exact`` | ``colgen`` | ``pop`` (``auto`` picks by problem size).

    Raises
    ------
    ValidationError
        ``colgen`` or ``pop`` asked for with another objective or the edge formulation.
    """
    from backbone.errors import Problem, ValidationError

    if method == "auto":
        big = int(inst.routable.sum()) >= AUTO_COLGEN_MIN_DEMANDS
        return "colgen" if big and objective in SCALABLE_OBJECTIVES and formulation == "path" else "exact"
    if method in ("colgen", "pop"):
        if objective not in SCALABLE_OBJECTIVES:
            raise ValidationError(Problem(f"method {method!r} supports objectives {', '.join(SCALABLE_OBJECTIVES)}",
                                          field="method"))
        if formulation != "path":
            raise ValidationError(Problem(f"method {method!r} works on the path formulation", field="method"))
        return method
    if method != "exact":
        raise ValidationError(Problem(f"unknown method {method!r}", field="method"))
    return method


def _bound_entries(objective: str, value: float, lower_bound: float | None) -> dict[str, Any]:
    """``lower_bound`` and ``gap = (mlu - lower_bound) / mlu`` (min-mlu; None where no bound is proven)."""
    if objective != "min-mlu" or lower_bound is None or not math.isfinite(value):
        return {"lower_bound": None, "gap": None}
    lb = min(float(lower_bound), float(value))  # solver round-off can put the bound a hair above
    return {"lower_bound": lb, "gap": (value - lb) / value if value > 0 else 0.0}


def _solve_scalable(inst: Any, objective: str, method: str, k_paths: int, backend: str, deadline: float,
                    utilisation_ceiling: float | None, lp_method: str, pop_parts: int, progress: ProgressFn,
                    t_start: float) -> TEResult:
    """Column generation or POP, reported in the same tables and summary as the exact path LP."""
    progress(0.05, f"{objective}: {method}")
    if method == "colgen":
        from backbone.solver.te.colgen import run_colgen

        out = run_colgen(inst, objective, k_paths=k_paths, backend=backend, utilisation_ceiling=utilisation_ceiling,
                         lp_method=lp_method, progress=progress, deadline=deadline)
    else:
        from backbone.solver.te.pop import run_pop

        out = run_pop(inst, objective, k_paths=k_paths, parts=pop_parts, backend=backend,
                      time_limit_s=max(0.1, deadline - time.perf_counter()), utilisation_ceiling=utilisation_ceiling,
                      lp_method=lp_method, progress=progress, deadline=deadline)
    return _scalable_result(inst, objective, method, out, k_paths, backend, utilisation_ceiling, lp_method, progress,
                            t_start)


def _scalable_result(inst: Any, objective: str, method: str, out: Any, k_paths: int, backend: str,
                     utilisation_ceiling: float | None, lp_method: str, progress: ProgressFn,
                     t_start: float) -> TEResult:
    """A :class:`~backbone.solver.te.colgen.ScaleOutcome` in the same tables and summary as the exact path LP."""
    from backbone.solver.te.result import assemble_result

    main = out.stages[-1] if out.stages else None
    summary: dict[str, Any] = {
        "status": TIME_LIMIT_STATUS if out.timed_out else out.status.value,
        "objective": objective,
        "objective_value": out.objective_value,
        "formulation": "path",
        "method": method,
        "backend": backend,
        "paths_k": k_paths or None,
        "disjoint": False,
        "utilisation_ceiling": None if objective == "min-mlu" else (utilisation_ceiling or 1.0),
        "paths_seconds": out.paths_seconds,
        "build_seconds": sum(s.build_seconds for s in out.stages),
        "solve_seconds": sum(s.solve_seconds for s in out.stages),
        "extract_seconds": 0.0,
        "lp": LPSize(rows=main.rows, cols=main.cols, nonzeros=main.nonzeros) if main else LPSize(),
        "lp_method": lp_method,
        "path_variables": main.cols if main else 0,
        "stages": [s.to_dict() for s in out.stages],
        method: out.extra,
        "notes": [TIME_LIMIT_NOTE] if out.timed_out else [],
    }
    summary.update(_bound_entries(objective, out.objective_value, out.lower_bound))
    result = assemble_result(inst, out.arc_load, out.carried, out.reason, out.splits, summary, t_start,
                             path_stats=out.path_stats)
    if method == "colgen" and getattr(out, "columns", None) is not None:
        result.model = TEModel(inst, None, k_paths, out.columns)
    progress(1.0, "done")
    return result


def solve_source_flows(net: Network, time_limit_s: float = 120.0, *, warm: Any = None, warm_instance: Any = None,
                       gap_tol: float | None = None, keep_flows: bool = False,
                       progress: ProgressFn | None = None) -> tuple[TEResult, Any]:
    """Min-MLU of ``net`` by the source-aggregated Frank-Wolfe engine (:mod:`backbone.solver.te.srcflow`), in the
    tables and summary of :func:`solve_te` (``method`` ``srcflow``; ``lower_bound`` and ``gap`` proven).

    Every routable demand is routed over any path (no candidate limit); the answer is within ``gap_tol`` of the
    optimum unless the time limit stops it first (status ``time_limit``, its gap reported).

    Parameters
    ----------
    net
        The state to route; no routable demand may have a latency SLO (the engine does not route within SLOs).
    time_limit_s
        Seconds for the whole solve (iterations, path decomposition and tables).
    warm, warm_instance
        The per-source flows of a solution of a network ``net`` derives from (fewer links, sites, demands or
        less capacity; matched by id), and that network's instance: the start
        (:func:`~backbone.solver.te.srcflow_warm.warm_on`).
    gap_tol
        Stop when ``(MLU - bound) / MLU`` is at most this (default
        :data:`~backbone.solver.te.srcflow.GAP_TOL`).
    keep_flows
        Also return this solution's per-source flows and instance (a warm start for states derived from ``net``).

    Returns
    -------
    tuple
        The :class:`TEResult` and, with ``keep_flows``, ``(flows, instance)`` (else ``None``).

    Raises
    ------
    ValidationError
        A routable demand has a latency SLO.
    """
    import numpy as np

    from backbone.errors import Problem, ValidationError
    from backbone.solver.te.instance import build_instance
    from backbone.solver.te.srcflow import GAP_TOL, run_source_flows
    from backbone.solver.te.srcflow_warm import warm_on

    progress = progress or no_progress
    t_start = time.perf_counter()
    inst = build_instance(net)
    cand = np.flatnonzero(inst.routable)
    slo = inst.has_slo[cand]
    if slo.any():
        raise ValidationError(Problem(f"method 'srcflow' routes demands without latency SLOs; {int(slo.sum())} "
                                      "demands have one (use the path method)", table="demands",
                                      record=str(inst.demand_ids[cand[slo][0]]), field="slo_rtt_ms"))
    if not float(inst.demand_gbps[cand].sum()) > 0:  # nothing to route (e.g. every demand lost with its sites)
        result = solve_te(net, TEOptions.model_validate(dict(objective="min-mlu", formulation="path", k_paths=1,
                                                             time_limit_s=time_limit_s)))
        return result.with_summary(notes=[*result.summary.notes, "srcflow: no demand to route"]), None
    start = warm_on(warm, warm_instance, inst) if warm is not None and warm_instance is not None else None
    out = run_source_flows(inst, cand, t_start + time_limit_s, progress, warm=start,
                           gap_tol=GAP_TOL if gap_tol is None else gap_tol, keep_flows=keep_flows)
    result = _scalable_result(inst, "min-mlu", "srcflow", out, 0, "none", None, "none", progress, t_start)
    return result, ((out.flows, inst) if keep_flows else None)


def _time_limit_result(inst: Any, objective: str, formulation: str, method: str, k_paths: int, backend: str,
                       utilisation_ceiling: float | None, disjoint: bool, lp_method: str, stopped: str, t_start: float,
                       progress: ProgressFn) -> TEResult:
    """The answer when the time limit stops a solve before any LP solution: every demand on its
    lowest-latency path (:mod:`backbone.solver.te.fallback`), status ``time_limit``, with its bound."""
    from backbone.solver.te.fallback import shortest_path_outcome
    from backbone.solver.te.result import assemble_result

    progress(0.9, "time limit: lowest-latency routing")
    out = shortest_path_outcome(inst, objective, utilisation_ceiling, stopped)
    scale = out.extra.scale if isinstance(out.extra, FallbackFigures) else 1.0
    summary: dict[str, Any] = {
        "status": TIME_LIMIT_STATUS,
        "objective": objective,
        "objective_value": out.objective_value,
        "formulation": formulation,
        "method": method,
        "backend": backend,
        "paths_k": k_paths,
        "disjoint": disjoint,
        "utilisation_ceiling": None if objective == "min-mlu" else (
            utilisation_ceiling or (0.8 if objective == "min-latency" else 1.0)),
        "paths_seconds": 0.0,
        "build_seconds": 0.0,
        "solve_seconds": 0.0,
        "extract_seconds": 0.0,
        "lp": LPSize(),
        "lp_method": lp_method,
        "path_variables": 0,
        "stages": [],
        "fallback": out.extra,
        "notes": [f"{stopped}: every demand is routed on its lowest-latency path"
                  + ("" if objective == "min-mlu" else f", all scaled by {scale:.4g} to stay under "
                                                       "the utilisation ceiling")],
    }
    summary.update(_bound_entries(objective, out.objective_value, out.lower_bound))
    result = assemble_result(inst, out.arc_load, out.carried, out.reason, out.splits, summary, t_start)
    progress(1.0, "done")
    return result
