"""Options of a failure sweep (the ``failures`` task's options; CLI flags and API body use the same names)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backbone.solver.backends import BackendName
from backbone.solver.core.options import FailurePolicyOption, KPaths, TimeLimitS

FailureKind = Literal["link", "srlg", "site", "srlg-pairs", "list", "srlg,link"]
"""``srlg,link`` is the union of the single-SRLG and the single-link states (a link state whose cut is already an
SRLG state's is not repeated)."""

SINGLE_FAILURE_KINDS = ("link", "srlg", "site", "srlg,link")
"""Failure kinds whose states are single failures (of an element or, for ``srlg,link``, of either kind): the kinds
a survivable design can be asked to survive."""

DEFAULT_MAX_SCENARIOS = 5000
"""Bound on the number of scenarios (``srlg-pairs`` grows quadratically); a larger sweep is refused with a
message saying how to raise it (``--max-scenarios N``; the API server caps it at its ``max_scenarios``)."""

FailureMethod = Literal["auto", "path", "srcflow"]

DEFAULT_GAP_TOL = 0.01
"""``method="srcflow"``: a scenario's solve stops when ``(MLU - bound) / MLU`` is at most this (1 %). Measured
on the world backbone (100 cities, 9,900 demands): warm-started failure solves reach 1 % in 5-15 iterations,
about 5 s each (``benchmarks/bench_world_sweep.py``)."""


class FailureOptions(BaseModel):
    """Options of the ``failures`` task (CLI flags and API body use the same names)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: FailureKind = Field("srlg", description="Failure set: link, srlg, site, srlg-pairs, list, or srlg,link (both single-SRLG "
                                                     "and single-link states). A link in no SRLG is swept as its own "
                                                     "group in srlg sweeps.")
    derate: float | None = Field(None, gt=0, lt=1, description="Derate to this fraction instead of failing.")
    scenarios: list[dict[str, Any]] | None = Field(None, description="For kind=list: scenario records.")
    k_paths: KPaths = Field(4,
                         description="Candidate paths per demand.")
    backend: BackendName = Field("highs", description="Solver backend.")
    time_limit_s: TimeLimitS = Field(60.0,
                                description="Time limit per scenario solve, seconds.")
    engine: Literal["local", "dask", "serial"] = Field("local", description="Where scenarios run.")
    workers: int | None = Field(None, ge=1, le=256, description="Worker processes (default: CPU count; the API server caps it).")
    scheduler: str | None = Field(None, description="Dask scheduler address (engine=dask).")
    scheduler_timeout_s: float = Field(10.0, gt=0, le=300,
                                       description="engine=dask with a scheduler: seconds to connect to it and for "
                                                   "it to have a worker; past them the sweep fails.")
    batch_size: int | None = Field(None, ge=1, description="Scenarios per task (default: balanced).")
    max_scenarios: int = Field(DEFAULT_MAX_SCENARIOS, ge=1, description="Refuse larger sweeps.")
    reuse: bool = Field(True, description="Reuse the intact network's candidate paths across scenarios.")
    verify: bool = Field(False, description="Run the independent TE checker on every scenario's result.")
    method: FailureMethod = Field(
        "auto", description="Min-MLU engine per state: path (the path LP over k_paths candidates; max-throughput "
                            "measures an overloaded state's shortfall); srcflow (source-aggregated Frank-Wolfe over "
                            "every path, warm-started from the intact state's flows, each state's MLU with a proven "
                            "lower bound and gap; no latency SLOs; an overloaded state's unmet traffic is unknown); "
                            "auto: srcflow from 50,000 routable demands when no demand has a latency SLO, else path. "
                            "path's min-MLU is te's auto: column generation over every admissible path follows "
                            "a path LP whose proven gap is above 1 %, in a failure state only when the path LP leaves "
                            "it overloaded (see exact_mlu).")
    exact_mlu: bool = Field(False, description="path: column generation for every failure state whose path LP gap "
                                               "is above 1 %, so each state's MLU is the optimum over every admissible "
                                               "path. False (the default): only for states the path LP leaves above "
                                               "100 %, where column generation can change the verdict; a state within "
                                               "capacity keeps the path LP's MLU with its proven gap (shown).")
    gap_tol: float = Field(DEFAULT_GAP_TOL, gt=0, lt=1,
                           description="srcflow: stop each scenario's solve when (MLU - bound) / MLU is at most this "
                                       "(the intact state is solved to a fifth of it).")
    shortfall: bool = Field(True, description="Measure the shortfall of overloaded states per class (max-throughput "
                                              "at 100 %); false only flags them (unmet null, not survived).")
    failure_policy: FailurePolicyOption = None
