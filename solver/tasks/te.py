"""The ``te`` planning task: options in, TE tables and the JSON summary out (``backbone te`` and the API call it).

Files (in the output folder): ``te_links``, ``te_demands``, ``te_paths`` as CSV and Parquet; the planning
service adds ``te.json`` (the summary).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from backbone.artifacts import ArtifactWriter
from backbone.model import Network
from backbone.solver.backends import BackendName
from backbone.solver.progress import ProgressFn
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.summaries import Summary, TESummary
from backbone.solver.te import TEResult, note_missing_demand, solve_te

MAX_UNMET_LISTED = 100
"""Unmet demands listed in the JSON summary (largest first; te_demands.csv has all)."""

Objective = Literal["min-mlu", "max-throughput", "max-min-fair", "min-latency", "ecmp"]


class TEOptions(BaseModel):
    """Options of the ``te`` task (CLI flags and API body use the same names)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    objective: Objective = Field("min-mlu", description="What to optimise; 'ecmp' simulates shortest-path ECMP.")
    formulation: Literal["path", "edge"] = Field("path", description="Candidate paths or edge-based flow.")
    k_paths: int = Field(4, ge=1, le=64, validation_alias=AliasChoices("k_paths", "paths"),
                         description="Candidate paths per demand (path formulation). Also accepted as 'paths'.")
    disjoint: bool = Field(False, description="Link-disjoint candidate paths (successive shortest paths).")
    backend: BackendName = Field("highs", description="Solver backend (see `backbone.solver.backends.available_backends`).")
    time_limit_s: float = Field(120.0, gt=0, le=86_400, validation_alias=AliasChoices("time_limit_s", "time_limit"),
                                description="Hard time limit over path search, model building and every LP stage, "
                                            "seconds; when it stops the solve, the best feasible answer found is "
                                            "returned with status 'time_limit'.")
    utilisation_ceiling: float | None = Field(
        None, gt=0, le=1, validation_alias=AliasChoices("utilisation_ceiling", "ceiling"),
        description="Max link utilisation for max-throughput / max-min-fair (default 1.0) and min-latency "
                    "(default 0.8); ignored by min-mlu. Also accepted as 'ceiling'.")
    latency_tiebreak: bool = Field(False, description="After the objective, minimise latency holding it optimal.")
    bound: bool = Field(False, description="Also solve the edge formulation and report gap_to_edge_bound.")
    verify: bool = Field(False, description="Run the independent checker on the result.")
    impact: bool = Field(True, description="Also report the state's impact figures (backbone.solver.impact): "
                                           "utilisation the traffic needs (min-MLU) and the traffic that cannot be "
                                           "carried at <= 100 % utilisation, per class -- the figures failures and "
                                           "plan report.")
    ecmp_metric: Literal["latency", "hops"] = Field("latency", description="ECMP path cost.")
    ecmp_tolerance_ms: float = Field(0.05, ge=0, description="ECMP: latency difference treated as equal cost.")
    lp_method: Literal["auto", "simplex", "ipm"] = Field(
        "auto", description="HiGHS LP method; auto: interior point for large LPs, else HiGHS' choice.")
    method: Literal["auto", "exact", "colgen", "pop"] = Field(
        "auto", description="exact: the path LP over k candidates; colgen: column generation over every "
                            "admissible path; pop: random demand split into parts solved in parallel; auto: "
                            "exact up to 50,000 routable demands, else colgen (min-mlu and max-throughput).")
    pop_parts: int = Field(4, ge=1, le=64, description="POP: number of random demand sub-problems.")


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

    result = solve_te(net, opts.objective, opts.formulation, opts.k_paths, opts.backend, opts.time_limit_s,
                      opts.utilisation_ceiling, opts.disjoint, opts.latency_tiebreak, opts.ecmp_metric,
                      opts.ecmp_tolerance_ms, main_progress, lp_method=opts.lp_method, method=opts.method,
                      pop_parts=opts.pop_parts)
    summary = result.summary
    note_missing_demand(summary)
    if weight < 1.0:
        progress(0.8, "edge bound")
        left = max(1.0, opts.time_limit_s - (time.perf_counter() - t0))
        edge = solve_te(net, opts.objective, "edge", opts.k_paths, opts.backend, left, opts.utilisation_ceiling,
                        opts.disjoint, False, lp_method=opts.lp_method)
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

