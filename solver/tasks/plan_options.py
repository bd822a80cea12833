"""Options of the ``plan`` task: :class:`PlanOptions` (the keys of a plan file; each stage's options a typed
sub-model with the plan's defaults) and the YAML plan-file loader that lists every mistake with its line.

The stage sections themselves (the upgrade stage's :class:`PlanUpgradeOptions`, :func:`plan_stage_defaults`,
:func:`with_stage_defaults`) live in :mod:`backbone.solver.plan.stage_options`, which the roadmap shares; they are
importable from here as before."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backbone.solver.failures.options import FailureOptions
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.plan.stage_options import (
    DESIGN_KEYS,
    STAGE_MODELS,
    PlanUpgradeOptions,
    plan_stage_default,
    plan_stage_defaults,
    with_stage_defaults,
)
from backbone.solver.te.options import TEOptions

__all__ = ["DESIGN_KEYS", "STAGE_MODELS", "PlanOptions", "PlanUpgradeOptions", "load_plan_file",
           "plan_stage_defaults", "stage_options", "with_stage_defaults"]


class PlanOptions(BaseModel):
    """Options of the ``plan`` task; a plan file (YAML) holds the same keys.

    ``place``, ``te``, ``failures`` and ``design`` are the options of those stages, each its own typed model
    (:class:`PlaceOptions`, :class:`TEOptions`, :class:`FailureOptions`, :class:`PlanUpgradeOptions`; see
    ``backbone place --help`` etc.) with the plan's stage defaults (:func:`plan_stage_defaults`) under what is
    given; the top-level keys are shortcuts most studies change. A bad stage option is refused under its dotted
    name (``place.time_limit_s``).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    demand_growth: float = Field(1.0, ge=0, description="Multiply inference and traffic demand by this factor.")
    place: PlaceOptions = Field(default_factory=lambda: plan_stage_default("place"),
                                description="Placement options (PlaceOptions).")
    te: TEOptions = Field(default_factory=lambda: plan_stage_default("te"), description="Routing options (TEOptions).")
    failures: FailureOptions = Field(default_factory=lambda: plan_stage_default("failures"),
                                     description="Failure sweep options (FailureOptions).")
    design: PlanUpgradeOptions = Field(
        default_factory=lambda: plan_stage_default("design"),
        description="Survivable design options: utilisation_ceiling (0.8, intact state), failure_utilisation_ceiling "
                    "(0.95, failure states), survive (the failure kind: srlg|link|site|none), time_limit_s (60, per "
                    "MIP solve), mip_gap (0.001), max_iterations (6), max_states (none: no cap), candidates (true: "
                    "new routes from the candidates table), backend.")
    skip_upgrades: bool = Field(False, description="Skip the upgrade stage.")
    maps: bool = Field(True, description="Draw the maps and charts.")
    verify: bool = Field(False, description="Run every independent check.")
    plan_file: str | None = Field(None, max_length=4096,
                                  description="Path of the plan file (recorded in the report; CLI only).")
    baseline: str | None = Field(None, max_length=4096,
                                 description="An earlier plan output folder: the report gains a 'compared with' "
                                             "section (backbone diff BASELINE this-plan; CLI and Python only).")
    plan_text: str | None = Field(None, max_length=1_000_000,
                                  description="Text of the plan file (recorded in the report).")

    @model_validator(mode="before")
    @classmethod
    def _stage_defaults(cls, data: Any) -> Any:
        """Each stage's options: the plan's defaults (:func:`plan_stage_defaults`) with what is given over them,
        option by option."""
        return with_stage_defaults(data, plan_stage_defaults(data)) if isinstance(data, Mapping) else data


def load_plan_file(path: str | Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a YAML plan file into plan options (``plan_file``/``plan_text`` recorded), ``overrides`` over it:
    :func:`backbone.solver.tasks.options_file.load_options_file` for kind ``plan``.

    Raises
    ------
    ValidationError
        When the file is missing, not YAML, not a mapping, or names unknown or bad options (every one, with its
        line and a did-you-mean hint).
    """
    from backbone.solver.tasks.options_file import load_options_file

    return load_options_file(path, "plan", overrides)


def stage_options(opts: PlanOptions) -> tuple[PlaceOptions, TEOptions, FailureOptions, PlanUpgradeOptions]:
    """The options of the place, route (te), failures and upgrade stages (``opts.place`` / ``te`` / ``failures``
    / ``design``, the plan's defaults already applied when ``opts`` was validated)."""
    return opts.place, opts.te, opts.failures, opts.design
