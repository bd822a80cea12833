"""Options of one TE solve: the fields of :func:`backbone.solver.te.solve_te` and of the ``te`` task
(CLI flags and API body use the same names; :mod:`backbone.solver.tasks.te` runs the task)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backbone.solver.backends import BackendName
from backbone.solver.core.options import KPaths, TimeLimitS

Objective = Literal["min-mlu", "max-throughput", "max-min-fair", "min-latency", "ecmp"]


class TEOptions(BaseModel):
    """Options of the ``te`` task (CLI flags and API body use the same names)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    objective: Objective = Field("min-mlu", description="What to optimise; 'ecmp' simulates shortest-path ECMP.")
    formulation: Literal["path", "edge"] = Field("path", description="Candidate paths or edge-based flow.")
    k_paths: KPaths = Field(4,
                         description="Candidate paths per demand (path formulation).")
    disjoint: bool = Field(False, description="Link-disjoint candidate paths (successive shortest paths).")
    backend: BackendName = Field("highs", description="Solver backend (see `backbone.solver.backends.available_backends`).")
    time_limit_s: TimeLimitS = Field(120.0,
                                description="Hard time limit over path search, model building and every LP stage, "
                                            "seconds; when it stops the solve, the best feasible answer found is "
                                            "returned with status 'time_limit'.")
    utilisation_ceiling: float | None = Field(
        None, gt=0, le=1,
        description="Max link utilisation for max-throughput / max-min-fair (default 1.0) and min-latency "
                    "(default 0.8); ignored by min-mlu.")
    latency_tiebreak: bool = Field(False, description="After the objective, minimise latency holding it optimal.")
    bound: bool = Field(False, description="Also solve the edge formulation and report gap_to_edge_bound.")
    verify: bool = Field(False, description="Run the independent checker on the result.")
    impact: bool = Field(True, description="Also report the state's impact figures (backbone.solver.failures.impact): "
                                           "utilisation the traffic needs (min-MLU) and the traffic that cannot be "
                                           "carried at <= 100 % utilisation, per class -- the figures failures and "
                                           "plan report.")
    ecmp_metric: Literal["latency", "hops"] = Field("latency", description="ECMP path cost.")
    ecmp_tolerance_ms: float = Field(0.05, ge=0, description="ECMP: latency difference treated as equal cost.")
    lp_method: Literal["auto", "simplex", "ipm"] = Field(
        "auto", description="HiGHS LP method; auto: interior point for large LPs, else HiGHS' choice "
                    "(max-throughput's class stages: dual simplex, each from the last stage's basis).")
    method: Literal["auto", "exact", "colgen", "pop"] = Field(
        "auto", description="exact: the path LP over k candidates; colgen: column generation over every "
                            "admissible path; pop: random demand split into parts solved in parallel; auto: "
                            "exact up to 50,000 routable demands, else colgen (min-mlu and max-throughput); min-mlu: "
                            "exact, then colgen when its proven gap is above 1 % (latency-limited pricing keeps "
                            "SLO-bound demands within their SLO).")
    pop_parts: int = Field(4, ge=1, le=64, description="POP: number of random demand sub-problems.")
