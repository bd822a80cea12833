"""Options of the ``design`` task (:class:`DesignOptions`, with the new links routing ``edge`` may build,
:class:`CandidateLink`): beside the algorithms, importable without them (CLI flags and API body use the same
names; :mod:`backbone.solver.tasks.design` runs the task)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backbone.errors import ValidationError
from backbone.solver.backends import BackendName
from backbone.solver.core.options import BoundTimeLimitS, FailurePolicyOption, MipGap, TimeLimitS


class CandidateLink(BaseModel):
    """A new link the design may build (modules only; no capacity today)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    site_a: str
    site_b: str
    id: str | None = None
    module_gbps: float = Field(400.0, gt=0)
    module_cost_usd: float = Field(ge=0)
    max_modules: int = Field(16, ge=1)



class DesignOptions(BaseModel):
    """Options of the ``design`` task.

    SNDlib mode (``model`` given): solve the SNDlib model on the scenario's own data (modules,
    pre-installed capacity, routing and setup costs are carried in the scenario, see
    :func:`backbone.io.sndlib.sndlib_from_network`; nothing is read from a file) and write
    ``design.sol.txt`` (SNDlib native solution format). Otherwise: plan the backbone's upgrades
    (``survive``, ``utilisation_ceiling``, ``candidate_links``). A model file is read by the caller
    (the CLI's ``--model-file``) and passed on as its code.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    model: str | None = Field(None, max_length=32, description="SNDlib model code, e.g. U-U-M-N-C-A-N-N")
    survive: Literal["none", "link", "srlg", "srlg,link"] = Field(
        "none",
        description="Upgrade mode: failures to survive with rerouting -- none (the intact state: every admissible "
                    "path priced in, a true lower bound), every single link, every SRLG, or srlg,link (every SRLG "
                    "and every link, in one design).")
    utilisation_ceiling: float = Field(
        0.8, gt=0, le=1,
        description="Upgrade mode: utilisation ceiling in the intact state.")
    failure_utilisation_ceiling: float = Field(
        1.0, gt=0, le=1,
        description="Utilisation ceiling in failure states, routing 'paths'.")
    routing: Literal["auto", "paths", "edge"] = Field(
        "auto", description="Upgrade mode: 'paths' -- the survivable design over TE's latency-admissible candidate "
                            "paths, upgrades and the scenario's candidate routes jointly, every failure state "
                            "(backbone.solver.design.survivable.iterate); 'edge' -- multicommodity flow, every path admissible, "
                            "candidate_links as new links (SNDlib-style). 'auto': edge for SNDlib network files, "
                            "else paths.")
    candidate_links: list[CandidateLink] = Field(default_factory=list,
                                                 description="New links for routing 'edge' (routing 'paths' builds "
                                                             "from the scenario's candidates table)")
    max_iterations: int = Field(6, ge=1, le=50, description="Routing 'paths': most design iterations")
    bound_time_limit_s: BoundTimeLimitS = Field(60.0,
        description="Routing 'paths': seconds for the true lower bound (survive none: column generation over "
                    "every admissible path and candidate route, then metric-inequality MIPs for whole modules; "
                    "otherwise an LP relaxation over every candidate route and path); 0 skips it")
    time_limit_s: TimeLimitS = Field(60.0,
                                description="Seconds for the whole solve.")
    backend: BackendName = Field("highs", description="MIP backend (highs, ortools-scip, pulp-cbc, ...).")
    mip_gap: MipGap = Field(1e-4, description="Relative MIP gap to stop at.")
    cuts: bool = Field(True, description="SNDlib mode: add the cut-set inequalities.")
    verify: bool = Field(False, description="Check the design with the independent checker.")
    failure_policy: FailurePolicyOption = None

    @field_validator("model")
    @classmethod
    def _known_model(cls, code: str | None) -> str | None:
        from backbone.solver.design.sndlib import parse_model_code

        if code is not None:
            try:
                parse_model_code(code)
            except ValidationError as exc:
                raise ValueError("; ".join(p.message for p in exc.problems)) from None
        return code
