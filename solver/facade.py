"""The notebook facade: load a scenario, change it, route, place, sweep and plan in a few calls.

Re-exported lazily by :mod:`backbone` (``import backbone`` stays fast and loads no solver)::

    import backbone

    net = backbone.load_scenario()                        # the shipped global scenario
    r = backbone.solve_te(net, objective="min-mlu", k_paths=4)
    r.links.sort_values("utilisation").tail()             # per-link utilisation
    bigger = net.with_capacity({"lon-nyc-1": 3200.0})      # a new network; net is unchanged
    s = backbone.sweep(bigger, kind="srlg")               # failure sweep, worst first in s.table()
    p = backbone.place(net)                               # GPU placement (PlacementResult)
    backbone.plan(net, out_dir="plan-out")                # the whole pipeline, with its report

Every keyword is a field of the task's options model (:class:`~backbone.solver.te.TEOptions`,
:class:`~backbone.solver.placement.PlaceOptions`, :class:`~backbone.solver.failures.FailureOptions`,
:class:`~backbone.solver.tasks.plan_options.PlanOptions`), validated by the same function as the CLI and the API
(:func:`~backbone.solver.core.options.validate_options`): an unknown or bad option raises
:class:`~backbone.errors.ValidationError` naming it. The names are one vocabulary
(``k_paths``, ``time_limit_s``, ``utilisation_ceiling``, ``survive``), one name per option: an older spelling
(``paths``, ``time_limit``, ``ceiling``) is an unknown option. ``progress=callable(fraction, message)`` follows long
work.

Results are the solver's own objects (:class:`~backbone.solver.te.TEResult`,
:class:`~backbone.solver.placement.result.PlacementResult`, :class:`~backbone.solver.failures.SweepResult`);
``verify=True`` runs the independent checker and raises :class:`~backbone.errors.VerificationError`
when it finds a violation (what exit code 5 is on the CLI).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backbone.errors import InfeasibleError, VerificationError
from backbone.model import Network
from backbone.solver.tasks import ProgressFn, TaskResult, no_progress, run_task, validate_options

if TYPE_CHECKING:
    from backbone.compare import DiffResult
    from backbone.solver.failures import SweepResult
    from backbone.solver.placement.result import PlacementResult
    from backbone.solver.te import TEResult
    from backbone.workload_summary import WorkloadSummary

logger = logging.getLogger(__name__)

__all__ = ["calibrate_latency", "deck", "design", "diff", "place", "plan", "roadmap", "solve_te", "sweep", "workloads"]

def options_for(model: Any, options: Mapping[str, Any]) -> Any:
    """Validate keyword options with ``model`` (each option under its one name).

    Raises
    ------
    ValidationError
        Naming each unknown or bad option.
    """
    return validate_options(model, options)


def solve_te(net: Network, *, progress: ProgressFn | None = None, **options: Any) -> TEResult:
    """Route the network's demands (:class:`~backbone.solver.te.TEOptions` as keywords).

    Returns the :class:`~backbone.solver.te.TEResult`: ``links`` (per link: flows and ``utilisation``),
    ``demands`` (carried, unmet and why, latency), ``paths`` and ``summary``; with the options' defaults
    the summary also holds ``impact`` (the figures ``failures`` and ``plan`` report), as ``backbone te`` does, and
    ``corridors``, the routed Gbps per corridor and traffic class (``corridors.csv``; as a frame:
    :func:`backbone.solver.te.corridor_table`).

    Raises
    ------
    ValidationError
        For an unknown or bad option.
    SolverError
        When the backend fails or finds no solution in time.
    VerificationError
        ``verify=True`` and the independent checker found a violation.

    Example
    -------
    >>> r = backbone.solve_te(net, objective="max-throughput", k_paths=8)  # doctest: +SKIP
    >>> r.links["utilisation"].max()  # doctest: +SKIP
    """
    from backbone.solver.te import solve_te as solve
    from backbone.solver.te.options import TEOptions

    opts = options_for(TEOptions, options)
    progress = progress or no_progress
    t0 = time.perf_counter()
    from backbone.solver.tasks.te import add_bound_and_impact, add_corridors

    result = add_bound_and_impact(net, opts, solve(net, opts, progress=progress), t0)
    result, _ = add_corridors(net, result)
    if opts.verify:
        from backbone.solver.checks.te import check_te

        report = check_te(net, result)
        result = dataclasses.replace(result, verification=report.record())
        if not report.ok:
            raise VerificationError(f"te: independent check failed: {report}")
    return result


def place(net: Network, *, progress: ProgressFn | None = None, **options: Any) -> PlacementResult:
    """Place inference and training GPUs (:class:`~backbone.solver.placement.PlaceOptions` as keywords).

    Returns the :class:`~backbone.solver.placement.result.PlacementResult` (``status``, ``objective``,
    ``totals``, ``tables`` by name, ``infeasibility`` reasons).

    Raises
    ------
    ValidationError
        For an unknown or bad option.
    InfeasibleError
        When min-cost cannot serve all demand and ``allow_partial`` is false.
    SolverError
        When the backend fails or finds no plan in time.
    VerificationError
        ``verify=True`` and the independent checker found a violation.
    """
    from backbone.solver.placement import PlaceOptions
    from backbone.solver.placement.result import solve_placement

    opts = options_for(PlaceOptions, options)
    result = solve_placement(net, opts, progress or no_progress)
    if result.infeasibility and not opts.allow_partial:
        raise InfeasibleError("placement cannot serve all demand", result.infeasibility)
    if opts.verify:
        from backbone.solver.checks.placement import check_placement

        report = check_placement(net, opts, result.tables, expect_full=result.fully_served)
        if not report.ok:
            raise VerificationError(f"place: independent check failed: {report.violations[:10]}")
    return result


def sweep(net: Network, *, progress: ProgressFn | None = None, **options: Any) -> SweepResult:
    """Fail every element of a failure set and route each state
    (:class:`~backbone.solver.failures.FailureOptions` as keywords; ``kind="srlg"`` by default).

    Returns the :class:`~backbone.solver.failures.SweepResult`: ``table()`` (one row per scenario, worst
    first), ``worst_by_link()``, ``summary()``, ``baseline``, and ``scenarios``, one
    :class:`~backbone.solver.failures.ScenarioRecord` each (``record.impact.unmet_gbps``, ``record.to_dict()``). Safe from a plain script: started at the top
    level of one without ``if __name__ == "__main__":``, it runs serially instead of in worker processes.

    Raises
    ------
    ValidationError
        For an unknown or bad option, or a failure set larger than ``max_scenarios``.
    VerificationError
        ``verify=True`` and a scenario's result failed the independent checker.
    """
    from backbone.solver.failures import FailureOptions
    from backbone.solver.failures import sweep as run_sweep

    return run_sweep(net, options_for(FailureOptions, options), progress)


def plan(net: Network, *, out_dir: str | Path | None = None, progress: ProgressFn | None = None,
         **options: Any) -> TaskResult:
    """Run the whole pipeline (:class:`~backbone.solver.tasks.plan_options.PlanOptions` as keywords) through the same
    service as ``backbone plan`` and the API; with ``out_dir`` its report, maps and tables are written there.

    Returns the :class:`~backbone.solver.tasks.TaskResult` (``summary``: what ``plan.json`` holds;
    ``files``: what was written).

    Raises
    ------
    ValidationError
        For an unknown or bad option (nested stage options are named ``te.k_paths`` and so on).
    """
    from backbone.solver.tasks.plan import PlanOptions

    return _task("plan", PlanOptions, net, out_dir, progress, options)


def design(net: Network, *, out_dir: str | Path | None = None, progress: ProgressFn | None = None,
           **options: Any) -> TaskResult:
    """Which links to upgrade and which candidate routes to build so the demand fits, and survives ``survive``
    failures (:class:`~backbone.solver.tasks.design.DesignOptions` as keywords), as ``backbone design`` runs it on
    a scenario.

    Returns the :class:`~backbone.solver.tasks.TaskResult` (``summary``: the typed model of what ``design.json``
    holds: cost, the lower bound and gap, the upgrades, survivability; ``files``: what was written to ``out_dir``).

    Raises
    ------
    ValidationError
        For an unknown or bad option.

    Example
    -------
    >>> r = backbone.design(net, survive="srlg")  # doctest: +SKIP
    >>> r.summary.cost_usd, r.summary.gap  # doctest: +SKIP
    """
    from backbone.solver.tasks.design import DesignOptions

    return _task("design", DesignOptions, net, out_dir, progress, options)


def roadmap(net: Network, *, out_dir: str | Path | None = None, progress: ProgressFn | None = None,
            **options: Any) -> TaskResult:
    """The multi-quarter roadmap (:class:`~backbone.solver.roadmap.options.RoadmapOptions` as keywords): what to buy
    and place in each period, as ``backbone roadmap`` runs it.

    Returns the :class:`~backbone.solver.tasks.TaskResult` (``summary``: what ``roadmap.json`` holds: per period
    the GPUs placed, the builds and survivability, and the global lower bound; ``files``: what was written).

    Raises
    ------
    ValidationError
        For an unknown or bad option (nested stage options are named ``design.time_limit_s`` and so on).
    """
    from backbone.solver.tasks.roadmap import RoadmapOptions

    return _task("roadmap", RoadmapOptions, net, out_dir, progress, options)


def calibrate_latency(net: Network, *, out_dir: str | Path | None = None, progress: ProgressFn | None = None,
                      **options: Any) -> TaskResult:
    """Fit the latency model to measured round trips (:class:`~backbone.solver.tasks.calibrate.CalibrateOptions`
    as keywords: ``measured`` pairs, else the shipped public RTT set), as ``backbone calibrate`` runs it (named
    apart from the model module :mod:`backbone.calibrate`, which it calls).

    Returns the :class:`~backbone.solver.tasks.TaskResult` (``summary``: the fitted parameters, residuals before
    and after; ``calibration``: the :class:`~backbone.calibrate.CalibrationResult`).

    Raises
    ------
    ValidationError
        For an unknown or bad option or measured pair.
    """
    from backbone.solver.tasks.calibrate import CalibrateOptions

    return _task("calibrate", CalibrateOptions, net, out_dir, progress, options)


def _task(kind: str, model: Any, net: Network, out_dir: str | Path | None, progress: ProgressFn | None,
          options: Mapping[str, Any]) -> TaskResult:
    """A planning task through the one service (:func:`~backbone.solver.tasks.run_task`), its keyword options
    validated by ``model`` first (so an error names the option before any work)."""
    opts = options_for(model, options)
    return run_task(kind, net, opts.model_dump(exclude_unset=True, by_alias=True), out_dir, progress)


def diff(a: str | Path | Network, b: str | Path | Network) -> DiffResult:
    """What changed from ``a`` to ``b``: two scenarios (paths or :class:`Network` objects), plan output folders or
    roadmap output folders (:func:`backbone.compare.diff`).

    Returns the :class:`~backbone.compare.DiffResult`: ``structure`` (one row per change: table, id, field,
    before, after, delta, unit), ``capacity_by_cable_system``, ``capacity_by_region``, and between two plans
    ``kpis``, ``placement``, ``failures`` and ``changeover``; ``changed`` is false for identical inputs.

    Raises
    ------
    ValidationError
        When a side is missing or is neither a scenario nor a plan or roadmap folder.

    Example
    -------
    >>> d = backbone.diff("q2-plan", "q3-plan")  # doctest: +SKIP
    >>> d.kpis.set_index("kpi").loc["states_survived", ["before", "after", "delta"]]  # doctest: +SKIP
    """
    from backbone.compare import diff as compare

    return compare(a, b)


def workloads(net: Network, job_sites: Mapping[str, Sequence[str]] | None = None) -> WorkloadSummary:
    """A scenario's training jobs and datasets and the backbone traffic they create, what ``backbone workloads``
    shows (:func:`backbone.workload_summary.summarise_workloads`): ``jobs``, ``datasets``, ``demands`` (the
    workload demands, one row per flow), ``by_class`` and ``by_job`` in Gbps; ``to_dict()`` is the CLI's ``--json``.

    Jobs run at their pinned ``sites`` unless ``job_sites`` (``{job: [sites]}``) puts them elsewhere; a job with no
    sites is not placed and creates no traffic.

    Raises
    ------
    NotFoundError, ValidationError
        For an unknown job or site in ``job_sites``, or more sites than a job's ``max_sites``.

    Example
    -------
    ``backbone.workloads`` is the module of per-flow formulas, so this one is imported from here::

        from backbone.solver.facade import workloads

    >>> w = workloads(net, {"frontier-a": ["ashburn", "dallas"]})  # doctest: +SKIP
    >>> w.by_class["gbps"]  # doctest: +SKIP
    """
    from backbone.workload_summary import summarise_workloads

    return summarise_workloads(net, job_sites)


def deck(folder: str | Path, out: str | Path, *, baseline: str | Path | None = None,
         template: str | Path | None = None, **options: Any) -> Path:
    """Write the editable review deck (``.pptx``) of a plan or roadmap output folder (:func:`backbone.review.build_deck`);
    ``baseline`` (an earlier plan or roadmap folder) adds a comparison slide, ``template`` uses a company's slide
    master and layouts; the keywords are :class:`~backbone.compare.options.DeckOptions`' fields. Returns ``out``.

    Raises
    ------
    ValidationError
        For a folder that is not a plan or roadmap output folder, a bad template or option.
    """
    from backbone.compare.options import DeckOptions
    from backbone.review import build_deck

    build_deck(folder, out, baseline=baseline, template=template, options=options_for(DeckOptions, options))
    return Path(out)
