"""The options of a plan's stages, shared by the ``plan`` task and every period of the roadmap: the upgrade stage's
options (:class:`PlanUpgradeOptions`, the survivable design's section ``design``), the options model of each stage
section (:data:`STAGE_MODELS`), the plan's defaults for each stage (:func:`plan_stage_defaults`) and the merge of a
section's given options over them (:func:`with_stage_defaults`).

The task-level :class:`~backbone.solver.tasks.plan_options.PlanOptions` nests these sections; the algorithm modules
(the roadmap) use them without importing the planning tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backbone.solver.backends import BackendName
from backbone.solver.core.options import BoundTimeLimitS, MipGap, TimeLimitS
from backbone.solver.design.survivable.options import SurviveOptions
from backbone.solver.failures.options import SINGLE_FAILURE_KINDS, FailureOptions
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.plan.states import placement_slo_failures
from backbone.solver.te.options import TEOptions

PLAN_FAILURE_CEILING = 0.95
"""The plan's (and roadmap's) utilisation ceiling in failure states. A failure state is planned to run links at
most 95 % full, not 100 %: after a cut, traffic reroutes before TE re-optimises (transient flows ride longer
paths for seconds to minutes), and bursts above the hourly peak the demands model have nowhere to go on a full
link, so a state planned at 100 % drops traffic in practice. 5 % is the margin such transients need on a
backbone of 400G waves (one wave on a 20-wave route); it costs the shipped default plan 1.4 M USD (154.4 M
against 153.0 M at 1.0, the same states carried and excused) and no measurable time (626 s and 632 s wall side
by side at load 9-13). The lower-level survivable design keeps 1.0 (:class:`SurviveOptions`): a designer who
calls it states the ceiling."""

__all__ = ["DESIGN_KEYS", "STAGE_MODELS", "PlanUpgradeOptions", "plan_stage_default", "plan_stage_defaults",
           "with_stage_defaults"]


class PlanUpgradeOptions(BaseModel):
    """The ``design`` options of a plan (the survivable upgrade stage, :mod:`backbone.solver.design.survivable.iterate`)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    utilisation_ceiling: float = Field(0.8, gt=0, le=1,
                                       description="Utilisation ceiling in the intact state.")
    failure_utilisation_ceiling: float = Field(
        PLAN_FAILURE_CEILING, gt=0, le=1,
        description="Utilisation ceiling in failure states; the plan's default 0.95 keeps 5 % "
                    "headroom for bursts and rerouting transients after a cut.")
    time_limit_s: TimeLimitS = Field(60.0,
                                description="Seconds for the design.")
    backend: BackendName = "highs"
    mip_gap: MipGap = Field(1e-3, description="Relative MIP gap at which a design MIP stops.")
    max_iterations: int = Field(6, ge=1, le=50, description="Most design iterations (solve, sweep, add states).")
    max_states: int | None = Field(None, ge=1, le=100_000,
                                   description="Cap on failure states in the design model (default: no cap).")
    candidates: bool = Field(True, description="Build candidate routes as well as upgrading links.")
    bound_time_limit_s: BoundTimeLimitS = Field(60.0,
        description="Seconds for the design's true lower bound (an LP relaxation over every candidate route and "
                    "path); 0 skips it.")
    survive: Literal["srlg", "link", "site", "srlg,link", "none"] | None = Field(
        None, description="Failure kind the design must survive: srlg, link, site, srlg,link (both single-SRLG "
                          "and single-link states in one design) or none (default: the failures stage's kind).")


    def survive_options(self, survive: str, k_paths: int, time_limit_s: float | None = None) -> SurviveOptions:
        """These options as one survivable design's (:class:`~backbone.solver.design.survivable.options.SurviveOptions`):
        surviving ``survive`` over ``k_paths`` candidate paths (the failures stage's), ``time_limit_s`` per MIP
        solve when given (a retry with a longer limit), else this section's."""
        return SurviveOptions.model_validate({
            **self.model_dump(exclude={"survive", "time_limit_s"}), "survive": survive, "k_paths": k_paths,
            "time_limit_s": self.time_limit_s if time_limit_s is None else time_limit_s})


DESIGN_KEYS = tuple(PlanUpgradeOptions.model_fields)
"""Keys of a plan's ``design`` section."""


STAGE_MODELS: dict[str, type[BaseModel]] = {"place": PlaceOptions, "te": TEOptions, "failures": FailureOptions,
                                          "design": PlanUpgradeOptions}
"""The options model of each stage section of a plan."""


def _given(options: Any, name: str) -> Any:
    """The value ``options`` (a stage's raw section) gives option ``name``, or None."""
    if isinstance(options, BaseModel):
        return getattr(options, name, None) if name in options.model_fields_set else None
    if not isinstance(options, Mapping):
        return None
    return options.get(name)


def plan_stage_defaults(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The plan's defaults for each stage, where they differ from the stage task's own, from the plan's raw
    options ``data``: partial placement whose inference SLO holds in the failure states the plan must survive
    too (``slo_failures`` follows the design's ``survive``, else the failures stage's ``kind``), min-MLU routing,
    the sweep of the design's ``survive`` kind (else SRLGs), 60 s placement/routing and 30 s sweep time limits, and the plan's ``verify``."""
    verify = data.get("verify", False)
    verify = verify if isinstance(verify, bool) else False  # a bad value is refused by the model itself
    survive = _given(data.get("design"), "survive")
    return {
        # inference is placed where its SLO holds in the failure states the plan must survive too
        "place": {"allow_partial": True, "verify": verify, "time_limit_s": 60.0,
                  "slo_failures": placement_slo_failures(survive, _given(data.get("failures"), "kind"))},
        "te": {"objective": "min-mlu", "verify": verify, "time_limit_s": 60.0},
        # the sweep before the design covers the states the design must survive (srlg unless it is told otherwise)
        "failures": {"kind": survive if survive in SINGLE_FAILURE_KINDS else "srlg", "verify": False,
                     "time_limit_s": 30.0},
        "design": {},
    }


def with_stage_defaults(data: Mapping[str, Any], defaults: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``data`` (raw options) with each stage section in ``defaults`` given over its defaults option by option; a
    typed section contributes the options it was given. Anything that is not a mapping is left for the model to
    refuse."""
    out = dict(data)
    for stage, stage_defaults in defaults.items():
        given = out.get(stage)
        if isinstance(given, BaseModel):  # a typed stage: what it was given, over the defaults
            given = given.model_dump(exclude_unset=True, by_alias=True)
        if given is None:
            given = {}
        if isinstance(given, Mapping):
            out[stage] = {**stage_defaults, **given}
    return out


def plan_stage_default(stage: str) -> Any:
    """A stage's options with the plan's defaults alone (a ``PlanOptions()`` built without the validator)."""
    return STAGE_MODELS[stage].model_validate(plan_stage_defaults({})[stage])
