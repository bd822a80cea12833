"""Options of the ``plan`` task: :class:`PlanOptions` (the keys of a plan file), the upgrade stage's options, the
YAML plan-file loader that lists every mistake with its line, and each stage's options (:func:`stage_options`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from backbone.errors import Problem, ValidationError
from backbone.solver.backends import BackendName


class PlanOptions(BaseModel):
    """Options of the ``plan`` task; a plan file (YAML) holds the same keys.

    ``place``, ``te``, ``failures`` and ``design`` take the options of those tasks (see
    ``backbone place --help`` etc.); the top-level keys are shortcuts most studies change.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    demand_growth: float = Field(1.0, ge=0, description="Multiply inference and traffic demand by this factor.")
    place: dict[str, Any] = Field(default_factory=dict, description="Placement options (PlaceOptions).")
    te: dict[str, Any] = Field(default_factory=dict, description="Routing options (TEOptions).")
    failures: dict[str, Any] = Field(default_factory=dict, description="Failure sweep options (FailureOptions).")
    design: dict[str, Any] = Field(default_factory=dict, description="Survivable design options: utilisation_ceiling (0.8, "
                                   "intact state), failure_utilisation_ceiling (1.0, failure states), survive (the failure kind: srlg|link|"
                                   "site|none), time_limit_s (60, per MIP solve), mip_gap (0.001), max_iterations (6), "
                                   "max_states (none: no cap), candidates (true: new routes from the candidates table), "
                                   "backend.")
    skip_upgrades: bool = Field(False, description="Skip the upgrade stage.")
    maps: bool = Field(True, description="Draw the maps and charts.")
    verify: bool = Field(False, description="Run every independent check.")
    plan_file: str | None = Field(None, max_length=4096,
                                  description="Path of the plan file (recorded in the report; CLI only).")
    plan_text: str | None = Field(None, max_length=1_000_000,
                                  description="Text of the plan file (recorded in the report).")

    def nested_problems(self) -> list[Problem]:
        """Problems in the stage options (see :func:`stage_options`); the planning service and the
        API check them before a plan is queued or run."""
        try:
            stage_options(self)
        except ValidationError as exc:
            return exc.problems
        return []


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


class PlanUpgradeOptions(BaseModel):
    """The ``design`` options of a plan (the survivable upgrade stage, :mod:`backbone.solver.survive`)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    utilisation_ceiling: float = Field(0.8, gt=0, le=1, validation_alias=AliasChoices("utilisation_ceiling", "ceiling"),
                                       description="Utilisation ceiling in the intact state (also 'ceiling').")
    failure_utilisation_ceiling: float = Field(
        1.0, gt=0, le=1, validation_alias=AliasChoices("failure_utilisation_ceiling", "failure_ceiling"),
        description="Utilisation ceiling in failure states (also 'failure_ceiling').")
    time_limit_s: float = Field(60.0, gt=0, le=86_400, validation_alias=AliasChoices("time_limit_s", "time_limit"),
                                description="Seconds for the design (also 'time_limit').")
    backend: BackendName = "highs"
    mip_gap: float = Field(1e-3, ge=0, lt=1, description="Relative MIP gap at which a design MIP stops.")
    max_iterations: int = Field(6, ge=1, le=50, description="Most design iterations (solve, sweep, add states).")
    max_states: int | None = Field(None, ge=1, le=100_000,
                                   description="Cap on failure states in the design model (default: no cap).")
    candidates: bool = Field(True, description="Build candidate routes as well as upgrading links.")
    survive: Literal["srlg", "link", "site", "none"] | None = Field(
        None, description="Failure kind the design must survive (default: the failures stage's kind).")


DESIGN_KEYS = tuple(PlanUpgradeOptions.model_fields)
"""Keys of a plan's ``design`` section."""


def _stage_options(kind: str, overrides: dict[str, Any], defaults: dict[str, Any]) -> Any:
    from backbone.solver.tasks.service import merge_options, parse_options, task_for

    try:  # an older spelling (te.time_limit) overrides its default (time_limit_s) like the option's own name does
        return parse_options(kind, merge_options(task_for(kind).options_model, defaults, overrides))
    except ValidationError as exc:
        raise ValidationError([Problem(p.message, file=p.file, table="plan", record=kind,
                                       field=f"{kind}.{p.field}" if p.field else kind)
                               for p in exc.problems]) from None


def stage_options(opts: PlanOptions) -> tuple[Any, Any, Any, PlanUpgradeOptions]:
    """The options of the place, route (te), failures and upgrade stages: the plan's defaults
    overridden by ``opts.place`` / ``te`` / ``failures`` / ``design``.

    Raises
    ------
    ValidationError
        Naming every bad stage option as ``<stage>.<option>`` (e.g. ``failures.time_limit_s``).
    """
    from backbone.solver.tasks.service import validate_options

    problems: list[Problem] = []
    out: list[Any] = []
    survive = opts.design.get("survive") or opts.failures.get("kind") or "srlg"
    for kind, overrides, defaults in (
            # inference is placed where its SLO holds in the failure states the plan must survive too
            ("place", opts.place, {"allow_partial": True, "verify": opts.verify, "time_limit_s": 60.0,
                                   "slo_failures": survive if survive in ("link", "srlg") else "none"}),
            ("te", opts.te, {"objective": "min-mlu", "verify": opts.verify, "time_limit_s": 60.0}),
            ("failures", opts.failures, {"kind": "srlg", "verify": False,
                                         "time_limit_s": 30.0})):
        try:
            out.append(_stage_options(kind, overrides, defaults))
        except ValidationError as exc:
            problems += exc.problems
    try:
        upgrade = validate_options(PlanUpgradeOptions, opts.design)
    except ValidationError as exc:
        problems += [Problem(p.message, table="plan", record="design", field=f"design.{p.field}")
                     for p in exc.problems]
    if problems:
        raise ValidationError(problems)
    return out[0], out[1], out[2], upgrade
