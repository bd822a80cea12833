"""The ``te`` planning task: options in, TE tables and the JSON summary out (``backbone te`` and the API call it).

Files (in the output folder): ``te_links``, ``te_demands``, ``te_paths`` as CSV and Parquet, ``corridors.csv``
(Gbps per corridor and traffic class, :func:`backbone.solver.te.corridor_table`); the planning service adds
``te.json`` (the summary, with the same rows as ``corridors``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from backbone.artifacts import ArtifactWriter
from backbone.corridors import UNLISTED_CLASS
from backbone.model import Network
from backbone.solver.checks.records import CheckRecord
from backbone.solver.core.progress import ProgressFn
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.summaries import TESummary, UnmetDemand
from backbone.solver.te import TEResult, corridor_table, solve_te
from backbone.solver.te.options import Objective, TEOptions
from backbone.solver.te.sections import CorridorRow

__all__ = ["MAX_UNMET_LISTED", "MIN_EXTRA_S", "Objective", "TEOptions", "TETaskResult", "add_bound_and_impact",
           "add_corridors", "edge_gap", "run_te_task", "te_summary"]

MAX_UNMET_LISTED = 100
"""Unmet demands listed in the JSON summary (largest first; te_demands.csv has all)."""

def edge_gap(objective: str, value: float, bound: float) -> float | None:
    """Relative gap of a path result to the edge bound (>= 0 when the bound holds)."""
    if not (np.isfinite(value) and np.isfinite(bound)):
        return None
    denom = max(abs(bound), 1e-9)
    gap = (value - bound) / denom if objective in ("min-mlu", "min-latency") else (bound - value) / denom
    return 0.0 if abs(gap) < 1e-9 else gap  # solver round-off, not a gap


MIN_EXTRA_S = 1.0
"""The edge bound and the impact need at least this many seconds of ``time_limit_s`` left; otherwise they are
skipped (with a note): ``--time-limit-s`` bounds the whole command, not each solve."""


def add_bound_and_impact(net: Network, opts: TEOptions, result: TEResult, t0: float,
                         progress: ProgressFn | None = None, weight: float = 1.0) -> TEResult:
    """``result`` with the edge bound (``opts.bound``) and the impact figures (``opts.impact``) added to its record
    (a new :class:`TEResult`; ``result`` is left as it is).

    Both run in what is left of ``opts.time_limit_s`` since ``t0`` (the routing's start), so the time limit
    bounds the whole ``te`` run; a step with less than :data:`MIN_EXTRA_S` left is skipped and a note says so.
    """
    def left() -> float:
        return opts.time_limit_s - (time.perf_counter() - t0)

    if opts.bound and opts.objective != "ecmp" and opts.formulation == "path":
        result = _with_edge_bound(net, opts, result, left(), progress)
    if opts.impact and opts.objective != "ecmp":
        from backbone.solver.failures.impact import apply_impact_unmet, assess_state

        reuse = opts.objective == "min-mlu" and opts.formulation == "path" and not opts.disjoint
        solves = not reuse or float(result.mlu) > 1  # a reused, not overloaded routing needs no solve
        if solves and left() < MIN_EXTRA_S:
            return result.with_summary(notes=[*result.summary.notes,
                                              "impact not measured: the time limit was spent on the routing"])
        if progress:
            progress(0.9 * weight, "impact: traffic that cannot be carried at <= 100 % utilisation")
        # a fresh state takes up to two solves (min-MLU, then max-throughput): each gets half of what is left
        t_impact = time.perf_counter()
        assessment = assess_state(net, opts.k_paths, opts.backend, max(MIN_EXTRA_S, left() / (1 if reuse else 2)),
                                  routing=result if reuse else None, lp_method=opts.lp_method)
        # one meaning of unmet in the demand table and the record
        record = assessment.summary().updated(stages_skipped=list(assessment.stages_skipped))
        result = apply_impact_unmet(result.with_summary(impact=record), assessment)
        notes = [] if assessment.unmet_known else [
            "impact: the traffic that cannot be carried at <= 100 % utilisation is unknown: the impact's min-MLU "
            "routing came from the source-flow engine, at a scale where no max-throughput LP measures it"]
        result = result.with_summary(impact_seconds=time.perf_counter() - t_impact,
                                     notes=[*result.summary.notes, *notes])
    return result


def _with_edge_bound(net: Network, opts: TEOptions, result: TEResult, left_s: float,
                     progress: ProgressFn | None) -> TEResult:
    """``result`` with the edge formulation's optimum as its bound (``edge_bound``, ``gap_to_edge_bound``) when it is
    proven in ``left_s`` seconds; notes say why not otherwise."""
    s = result.summary
    if left_s < MIN_EXTRA_S:
        return result.with_summary(notes=[*s.notes, "edge bound not computed: the time limit was spent on the routing"])
    if progress:
        progress(0.8, "edge bound")
    edge = solve_te(net, opts.model_copy(update={"formulation": "edge", "time_limit_s": left_s,
                                                 "latency_tiebreak": False, "method": "auto"})).summary
    notes = [*s.notes, *(f"edge bound: {n}" for n in edge.notes)]
    if edge.status != "optimal":  # a stopped edge solve's value is not a bound
        return result.with_summary(edge_seconds=edge.total_seconds,
                                   notes=[*notes, f"edge bound not proven in the time left (edge LP {edge.status})"])
    value = float("nan") if s.objective_value is None else float(s.objective_value)
    bound = float("nan") if edge.objective_value is None else float(edge.objective_value)
    return result.with_summary(edge_seconds=edge.total_seconds, edge_bound=edge.objective_value,
                               gap_to_edge_bound=edge_gap(opts.objective, value, bound), notes=notes)


def add_corridors(net: Network, result: TEResult) -> tuple[TEResult, pd.DataFrame]:
    """``result`` with the routed Gbps per corridor and traffic class (:func:`backbone.solver.te.corridor_table`)
    in its record as ``corridors`` (records), with a note when some link load is in no listed path (class
    ``unlisted``), and the table (``corridors.csv``). ``backbone te``, the plan's route stage and the facade's
    ``solve_te`` call it; ``result`` is left as it is."""
    corridors = corridor_table(net, result)
    unlisted = corridors.loc[(corridors["view"] == "region") & (corridors["traffic_class"] == UNLISTED_CLASS), "gbps"]
    notes = [f"corridors: {float(unlisted.sum()):,.1f} Gbps of link load is in no listed path; corridors.csv shows it "
             f"as class {UNLISTED_CLASS!r} (the classes add up to the link loads)"] if len(unlisted) else []
    rows = [CorridorRow.model_validate(r) for r in corridors.to_dict("records")]
    result = result.with_summary(corridors=rows, notes=[*result.summary.notes, *notes])
    return result, corridors


@dataclass(kw_only=True)
class TETaskResult(TaskResult[TESummary]):
    """The ``te`` task's outcome: the summary (:class:`TESummary`), the files, and the :class:`TEResult` with its
    tables."""

    te: TEResult


def run_te_task(net: Network, opts: TEOptions, out_dir: Path | None, progress: ProgressFn) -> TETaskResult:
    """The ``te`` planning task: solve, optionally bound and verify, write the tables.

    Files (in ``out_dir``): ``te_links``, ``te_demands``, ``te_paths`` as CSV and Parquet and ``corridors.csv``
    (the routed Gbps per corridor and class, both directions, with each corridor's lit capacity and utilisation;
    the summary's ``corridors`` holds the same rows); the planning service adds ``te.json`` (the summary).
    """
    t0 = time.perf_counter()
    weight = 0.8 if opts.bound and opts.objective != "ecmp" and opts.formulation == "path" else 1.0

    def main_progress(f: float, m: str) -> None:
        progress(f * weight, m)

    result = add_bound_and_impact(net, opts, solve_te(net, opts, progress=main_progress), t0, progress, weight)
    verification = None
    if opts.verify:
        from backbone.solver.checks.te import check_te

        progress(0.95, "verifying")
        verification = check_te(net, result).record()
    result, corridors = add_corridors(net, result)
    writer = ArtifactWriter(out_dir)
    result.save(writer)
    writer.csv("corridors.csv", corridors)
    summary = te_summary(result, time.perf_counter() - t0, verification)
    progress(1.0, "done: time limit reached, the best answer found is reported" if summary.status == "time_limit"
             else "done")
    return TETaskResult("te", summary, writer.files, te=result)


def te_summary(result: TEResult, total_seconds: float, verification: CheckRecord | None = None) -> TESummary:
    """The ``te`` summary: the routing's record (:attr:`TEResult.summary`, with the edge bound and the impact
    :func:`add_bound_and_impact` added), the largest unmet demands (:data:`MAX_UNMET_LISTED`), the run's
    ``total_seconds`` and the checker's ``verification``."""
    unmet = result.demands[result.demands["unmet_gbps"] > 0].sort_values("unmet_gbps", ascending=False)
    unmet_demands = [
        UnmetDemand(id=str(i), src=r["src"], dst=r["dst"], traffic_class=r["traffic_class"],
                    demand_gbps=float(r["demand_gbps"]), unmet_gbps=float(r["unmet_gbps"]), reason=r["reason"])
        for i, r in unmet.head(MAX_UNMET_LISTED).iterrows()]
    record = {**result.summary.given(), "total_seconds": total_seconds}
    return TESummary(**record, unmet_demands=unmet_demands, unmet_demands_total=len(unmet), verification=verification)

