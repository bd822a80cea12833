"""Options of one survivable design (:func:`backbone.solver.design.survivable.iterate.design_survivable`), in the project's one
vocabulary (``survive``, ``utilisation_ceiling``, ``k_paths``, ``time_limit_s``), one name per option."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backbone.solver.backends import BackendName
from backbone.solver.core.options import BoundTimeLimitS, FailurePolicyOption, KPaths, MipGap, TimeLimitS

SurviveKind = Literal["link", "srlg", "site", "srlg,link", "none"]
"""Failure kinds a design can survive (every single element of the kind; ``srlg,link`` every single SRLG and every
single link, the union of both sets of states), or ``none`` (the intact state only)."""


class SurviveOptions(BaseModel):
    """Options of :func:`~backbone.solver.design.survivable.iterate.design_survivable`.

    Example
    -------
    >>> SurviveOptions(survive="link", utilisation_ceiling=0.7).failure_utilisation_ceiling
    1.0
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    survive: SurviveKind = Field(
        "srlg",
        description="Failure kind every single element of which the design must carry: link, srlg, site, "
                    "srlg,link (both single-SRLG and single-link states, in one design), or none (the intact "
                    "state only).")
    utilisation_ceiling: float = Field(0.8, gt=0, le=1,
                                       description="Utilisation ceiling in the intact state.")
    failure_utilisation_ceiling: float = Field(
        1.0, gt=0, le=1,
        description="Utilisation ceiling in failure states.")
    k_paths: KPaths = Field(4,
                         description="Candidate paths per demand and state.")
    backend: BackendName = Field("highs", description="MIP backend.")
    time_limit_s: TimeLimitS = Field(60.0,
                                description="Seconds per MIP solve; the whole design stops after "
                                            "DESIGN_BUDGET_FACTOR times that.")
    mip_gap: MipGap = Field(1e-3, description="Relative MIP gap at which a design MIP stops.")
    max_iterations: int = Field(10, ge=1, le=50,
                                description="Most MIP solves (what is still violated after them is reported).")
    max_states: int | None = Field(None, ge=1, le=100_000,
                                   description="Most failure states the working set may hold (default: no cap; "
                                               "capped states are reported as violated).")
    bound_time_limit_s: BoundTimeLimitS = Field(60.0,
        description="Seconds for the true lower bound, the better of two LP relaxations over every candidate route "
                    "and every path (the path LP with the SLOs kept, :mod:`backbone.solver.design.survivable.slo_bound`, "
                    "in at most 3/4 of them, then the arc-flow LP with the SLOs dropped, "
                    ":mod:`backbone.solver.design.survivable.bound`); 0 skips it (no bound, no gap).")
    candidates: bool = Field(True,
                             description="Whether new routes from the candidates table may be built "
                                         "(false: upgrades of existing links only).")
    failure_policy: FailurePolicyOption = None
