"""The ``te`` planning task: options in, TE tables and the JSON summary out (``backbone te`` and the API call it).

Files (in the output folder): ``te_links``, ``te_demands``, ``te_paths`` as CSV and Parquet; the planning
service adds ``te.json`` (the summary).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from backbone.artifacts import ArtifactWriter
from backbone.model import Network
from backbone.solver.progress import ProgressFn
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.summaries import Summary, TESummary
from backbone.solver.te import TEResult, note_missing_demand, solve_te
from backbone.solver.te.options import Objective, TEOptions

__all__ = ["MAX_UNMET_LISTED", "Objective", "TEOptions", "TETaskResult", "edge_gap", "run_te_task"]

MAX_UNMET_LISTED = 100
"""Unmet demands listed in the JSON summary (largest first; te_demands.csv has all)."""

def edge_gap(objective: str, value: float, bound: float) -> float | None:
    """Relative gap of a path result to the edge bound (>= 0 when the bound holds)."""
    if not (np.isfinite(value) and np.isfinite(bound)):
        return None
    denom = max(abs(bound), 1e-9)
    gap = (value - bound) / denom if objective in ("min-mlu", "min-latency") else (bound - value) / denom
    return 0.0 if abs(gap) < 1e-9 else gap  # solver round-off, not a gap


@dataclass(kw_only=True)
class TETaskResult(TaskResult):
    """The ``te`` task's outcome: the JSON summary, the files, and the :class:`TEResult` with its tables."""

    summary_model: ClassVar[type[Summary]] = TESummary

    te: TEResult


def run_te_task(net: Network, opts: TEOptions, out_dir: Path | None, progress: ProgressFn) -> TETaskResult:
    """The ``te`` planning task: solve, optionally bound and verify, write the tables.

    Files (in ``out_dir``): ``te_links``, ``te_demands``, ``te_paths`` as CSV and Parquet; the
    planning service adds ``te.json`` (the summary).
    """
    t0 = time.perf_counter()
    weight = 0.8 if opts.bound and opts.objective != "ecmp" and opts.formulation == "path" else 1.0

    def main_progress(f: float, m: str) -> None:
        progress(f * weight, m)

    result = solve_te(net, opts, progress=main_progress)
    summary = result.summary
    note_missing_demand(summary)
    if weight < 1.0:
        progress(0.8, "edge bound")
        left = max(1.0, opts.time_limit_s - (time.perf_counter() - t0))
        edge = solve_te(net, opts.model_copy(update={"formulation": "edge", "time_limit_s": left,
                                                     "latency_tiebreak": False, "method": "auto"}))
        summary["edge_bound"] = edge.summary["objective_value"]
        summary.setdefault("notes", []).extend(f"edge bound: {n}" for n in edge.summary.get("notes", []))
        summary["edge_seconds"] = edge.summary["total_seconds"]
        summary["gap_to_edge_bound"] = edge_gap(opts.objective, summary["objective_value"], summary["edge_bound"])
    if opts.impact and opts.objective != "ecmp":
        from backbone.solver.impact import assess_state

        progress(0.9 * weight, "impact: traffic that cannot be carried at <= 100 % utilisation")
        reuse = opts.objective == "min-mlu" and opts.formulation == "path" and not opts.disjoint
        assessment = assess_state(net, opts.k_paths, opts.backend, opts.time_limit_s,
                                  routing=result if reuse else None, lp_method=opts.lp_method)
        summary["impact"] = assessment.summary()
    unmet = result.demands[result.demands["unmet_gbps"] > 0].sort_values("unmet_gbps", ascending=False)
    summary["unmet_demands"] = [
        {"id": str(i), "src": r["src"], "dst": r["dst"], "traffic_class": r["traffic_class"],
         "demand_gbps": float(r["demand_gbps"]), "unmet_gbps": float(r["unmet_gbps"]), "reason": r["reason"]}
        for i, r in unmet.head(MAX_UNMET_LISTED).iterrows()]
    summary["unmet_demands_total"] = len(unmet)
    if opts.verify:
        from backbone.solver.checks.te import check_te

        progress(0.95, "verifying")
        summary["verification"] = check_te(net, result).to_dict()
    writer = ArtifactWriter(out_dir)
    result.save(writer)
    summary["total_seconds"] = time.perf_counter() - t0
    progress(1.0, "done")
    return TETaskResult("te", summary, writer.files, te=result)

