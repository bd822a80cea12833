"""Summary models: each task's summary (``<kind>.json``, ``--json``, the API's job result) as a typed model.

Every task builds its summary as the model itself (a :class:`~backbone.solver.core.summary.TypedSummary`: every
field declared, units in the names, ``extra`` forbidden) and the model is dumped only at the file and API edge
(:meth:`TaskResult.to_dict <backbone.solver.tasks.base.TaskResult.to_dict>`). The models live where their data
does and are re-exported here: :class:`TESummary`, :class:`PlaceSummary`, :class:`CalibrateSummary` and
:class:`PlanSummary` here (the tasks build them), :class:`FailuresSummary` in :mod:`backbone.solver.failures.summary`,
the design's three modes (:data:`DesignSummary`) in :mod:`backbone.solver.design.summary`, :class:`RoadmapSummary`
in :mod:`backbone.solver.roadmap.summary`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from backbone.solver.checks.records import CheckRecord
from backbone.solver.core.summary import TaskSummary, TypedSummary
from backbone.solver.design.summary import (
    DesignBound,
    DesignIteration,
    DesignSummary,
    RestrictedOptimum,
    SndlibDesignSummary,
    SurvivableDesignSummary,
    UpgradeDesignSummary,
)
from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.failures.summary import FailuresSummary, SloViolations
from backbone.solver.plan.records import FailureBeforeAfter
from backbone.solver.plan.states import LinkSurvivability
from backbone.solver.roadmap.summary import RoadmapSummary
from backbone.solver.te.summary import TERecord

__all__ = ["CalibrateSummary", "CalibrationErrors", "ComparedWith", "DesignBound", "DesignIteration",
           "DesignSummary", "FailureBeforeAfter", "FailuresSummary", "FailuresToday", "PlaceSummary", "PlanSummary",
           "PlanVerification", "Residency", "RestrictedOptimum", "RoadmapSummary", "SloViolations",
           "SndlibDesignSummary", "StageRow", "SurvivableDesignSummary", "TESummary", "TypedSummary",
           "UpgradeDesignSummary"]


class TESummary(TERecord):
    """``te``: how the traffic flows (utilisation, carried and unmet traffic, latency) and how it was solved.

    The routing's record (:class:`~backbone.solver.te.summary.TERecord`: :attr:`TEResult.summary
    <backbone.solver.te.result.TEResult.summary>`, with the edge bound, the impact and the corridors the task adds)
    plus the task's figures (the largest unmet demands, ``verification``), built by the ``te`` task
    (:func:`backbone.solver.tasks.te.te_summary`); ``total_seconds`` is the whole run's. The record's fields only
    some runs report are in the document only when they were given, ``verification`` only when it ran.
    """

    model_config = ConfigDict(frozen=False, validate_assignment=True)

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification",)

    unmet_demands: list[dict[str, Any]]
    """The largest unmet demands (at most 100; ``te_demands.csv`` has all): id, ends, class, Gbps, reason."""
    unmet_demands_total: int
    """Demands with unmet traffic."""
    verification: CheckRecord | None = None
    """The independent checker's record (with ``verify``)."""


class PlaceSummary(TaskSummary):
    """``place``: where the GPUs go, at what cost, which demand is served (``status`` ``partial`` when not all).

    Built by the ``place`` task as this model (:func:`backbone.solver.tasks.place.placement_summary`), fields in
    ``place.json``'s order; ``verification`` is left out of the document when it was not run.
    """

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification",)

    status: str
    """The solver's status, or ``partial`` when not all demand is served."""
    solver_status: str
    """The MIP's own status (``optimal``, ``time_limit``, ...)."""
    objective: float | None
    """The MIP's objective value (USD for min-cost)."""
    gap: float | None
    """The MIP's relative gap."""
    lp_bound: float | None
    """The LP relaxation's bound (with ``lp_bound``)."""
    solve_seconds: float
    """Seconds the solve took."""
    backend: str
    """The solver backend."""
    cost_usd: float | None
    """Capex plus opex of the placement."""
    capex_usd: float | None
    """Capex of the GPUs, power and sites built."""
    opex_usd: float | None
    """Opex over the horizon."""
    served_share: float | None
    """Share of peak inference demand served."""
    totals: dict[str, Any]
    """Every total of the placement (costs, GPUs before/added/after, MW, demand and served GPUs, ...)."""
    gpus_by_site: dict[str, float]
    """GPUs after the placement, per site that has any."""
    gpus_added_by_site: dict[str, float]
    """GPUs added, per site that gains any."""
    assignments: list[dict[str, Any]]
    """Metro demand served from each site in its peak period: ``metro``, ``class``, ``site``, ``period``,
    ``gpus``, ``rtt_ms``, ``share``."""
    sites: list[dict[str, Any]]
    """``place_sites.csv``'s rows."""
    metros: list[dict[str, Any]]
    """``place_metros.csv``'s rows."""
    training: list[dict[str, Any]] = Field(default_factory=list)
    """``place_training.csv``'s rows."""
    replicas: list[dict[str, Any]] = Field(default_factory=list)
    """``place_replicas.csv``'s rows."""
    workload_gbps_by_class: dict[str, float | None] = Field(default_factory=dict)
    """Gbps the placed workloads put on the backbone, per traffic class."""
    infeasibility: list[str]
    """Why not all demand could be served (empty when it is)."""
    unserved_metros: list[dict[str, Any]]
    """Metro demand units left (partly) unserved, largest shortfall first."""
    notes: list[str]
    """What a planner should know about the solve."""
    model: dict[str, Any]
    """The MIP's size (rows, columns, nonzeros, integer columns)."""
    options: dict[str, Any]
    """The options it ran with."""
    map: dict[str, Any]
    """Map values: GPUs per site, utilisation and placement Gbps per link, the serving arcs."""
    verification: CheckRecord | None = None
    """The independent checker's record (with ``verify``)."""


class CalibrationErrors(BaseModel):
    """``calibrate``'s ``errors``: :func:`~backbone.calibrate.error_stats` of the model before the fit, after it and of
    the leave-one-out predictions (median and worst absolute error, in % and ms)."""

    model_config = ConfigDict(extra="forbid")

    before: dict[str, float]
    """The input model's errors."""
    after: dict[str, float]
    """The calibrated model's errors."""
    leave_one_out: dict[str, float]
    """Each pair predicted by a fit without it."""


class CalibrateSummary(TaskSummary):
    """``calibrate``: the fitted latency parameters and the errors before, after and left out.

    Built by the ``calibrate`` task as this model from the
    :class:`~backbone.calibrate.CalibrationResult`, fields in the order ``scenario.yaml``'s ``calibration`` record
    and ``backbone calibrate --json`` use.
    """

    date: str
    """When the fit ran (ISO date)."""
    pairs: int
    """Measured pairs fitted."""
    loss: str
    """The robust loss."""
    fitted: list[str]
    """The parameters fitted."""
    parameters: dict[str, float]
    """Their fitted values."""
    previous_parameters: dict[str, float]
    """Their values before the fit."""
    iterations: int
    """Fit / re-route rounds run."""
    converged: bool
    """Whether the paths stopped changing."""
    errors: CalibrationErrors
    """Errors before, after and left out."""
    notes: list[str]
    """What a planner should know about the fit."""
    pairs_table: list[dict[str, Any]]
    """One record per measured pair (``calibration_pairs.csv`` without ``path``)."""


class StageRow(BaseModel):
    """One row of ``plan.json``'s ``stages``: a stage's status, backend, gap, time and a note."""

    model_config = ConfigDict(extra="forbid")

    stage: str
    """The stage (``place``, ``route``, ``failures``, ``today``, ``upgrades``)."""
    status: str | None
    """The stage's own status (its summary's ``status``)."""
    backend: str | None
    """The solver backend it used."""
    gap: float | None
    """Its relative MIP gap, where it solved a MIP."""
    seconds: float
    """Wall-clock seconds it took."""
    note: str
    """What a planner should know about it (one line)."""


class FailuresToday(BaseModel):
    """``plan.json``'s ``failures_today``: what ``backbone failures`` finds on the scenario as given (today's
    network and traffic)."""

    model_config = ConfigDict(extra="forbid")

    scenarios: int
    """Failure states swept."""
    survived: int
    """States today's network carries."""
    not_survived: int
    """States it does not carry."""
    worst_failure: str | None
    """The worst state (by the one impact order), None when nothing was swept."""
    worst_failure_impact_gbps: float | None
    """Its impact (Gbps)."""


class Residency(BaseModel):
    """``plan.json``'s ``residency``: the placement's assignments a residency rule forbids."""

    model_config = ConfigDict(extra="forbid")

    rules: int
    """Residency rules in force."""
    violations: int
    """Assignments that break one (all counted)."""
    gpus: float
    """GPUs those assignments carry."""
    examples: list[dict[str, Any]]
    """The first few of them (the placement's assignment records)."""


class PlanVerification(BaseModel):
    """``plan.json``'s ``verification`` (with ``verify``): each independent check passed (None: not run)."""

    model_config = ConfigDict(extra="forbid")

    place: bool | None
    """The placement checker's verdict."""
    route: bool | None
    """The TE checker's verdict."""
    survivability: bool | None
    """The survivability checker's verdict on the planned backbone (None when nothing was designed)."""


class ComparedWith(TypedSummary):
    """``plan.json``'s ``compared_with``: the earlier plan this one was compared with (``baseline``) and what changed
    (:func:`backbone.compare.diff`)."""

    baseline: str | None
    """The baseline plan's folder, as given."""
    kind: str
    """What the baseline is: ``scenario``, ``plan`` or ``roadmap``."""
    changed: bool
    """Whether anything changed."""
    counts: dict[str, int]
    """Rows per table of the diff (KPIs: those that changed)."""


class PlanSummary(TypedSummary):
    """``plan``: the planner's headline figures before and after the plan, per stage, with provenance.

    Built by the plan task as this model (every field declared: ``extra`` is forbidden) and dumped
    (:meth:`~backbone.solver.core.summary.TypedSummary.document`) only where it leaves the task: ``plan.json``,
    ``--json``, the API's job result, the report. The fields are in ``plan.json``'s order; ``verification``,
    ``survivability_check`` and ``compared_with`` are left out of the document when they are None (the plan ran
    without ``verify``, without a design, or without a ``baseline``).
    """

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification", "survivability_check", "compared_with")

    status: str
    """``ok`` or ``partial`` (:func:`~backbone.solver.plan.pipeline.overall_status`)."""
    scenario: str
    """The scenario's name."""
    scenario_fingerprint: str
    """The scenario's content fingerprint (provenance)."""
    software_version: str
    """The ``backbone`` version that planned it."""
    created_utc: str
    """When (ISO 8601, UTC, seconds)."""
    plan_file: str | None
    """The plan file the options came from, if any."""
    headline: str
    """The report's opening sentence."""
    gpus_added: float
    """GPUs the placement adds."""
    placement_cost_usd: float | None
    """The placement's cost (capex + opex)."""
    placement_gap: float | None
    """The placement MIP's relative gap."""
    served_share: float | None
    """Share of inference demand served."""
    mlu: float | None
    """Maximum link utilisation with the plan's traffic, before the upgrades."""
    mlu_after: float | None
    """Maximum link utilisation of the planned backbone (min-MLU)."""
    carried_gbps: float | None
    """Traffic carried before the upgrades (Gbps)."""
    unmet_gbps: float | None
    """Traffic unmet before the upgrades (Gbps; None when overloaded and not measured)."""
    unmet_gbps_after: float | None
    """Traffic unmet on the planned backbone (Gbps)."""
    unmet_by_class_gbps: dict[str, float] | None = None
    """Unmet traffic per class before the upgrades (Gbps)."""
    unmet_by_class_gbps_after: dict[str, float] | None = None
    """Unmet traffic per class after them (Gbps)."""
    slo_violations: SloViolations | None = None
    """Latency-SLO violations over the failure states before the upgrades."""
    slo_violations_after: SloViolations | None = None
    """The same after them."""
    residency: Residency | None = None
    """Assignments a residency rule forbids."""
    weighted_latency_ms: float | None
    """Demand-weighted one-way latency before the upgrades (ms)."""
    failure_kind: str
    """The failures stage's kind."""
    failure_scenarios: int | None
    """Failure states it swept."""
    worst_failure: str | None
    """The worst of them (by the one impact order)."""
    worst_failure_impact_gbps: float | None = None
    """Its impact (Gbps)."""
    worst_failure_unmet_gbps: float | None = None
    """Its unmet traffic (Gbps)."""
    failures_with_unmet_demand: int
    """Failure states not survived before the upgrades."""
    failures_with_unmet_demand_after: int
    """Failure states not survived after them."""
    worst_failure_after: str | None = None
    """The worst failure state of the planned backbone."""
    worst_failure_after_impact_gbps: float | None = None
    """Its impact (Gbps)."""
    survivability: Survivability
    """The design's kind: survived, excused (with reasons) and violated states."""
    link_survivability: LinkSurvivability | None = None
    """The single-link check when the design did not target single links."""
    links_swept_as_own_group: list[str]
    """Links in no SRLG, swept as their own group after the plan."""
    upgrade_cost_usd: float | None
    """What the upgrades cost (None when the design was infeasible)."""
    upgrade_lower_bound_usd: float | None
    """The design cost's true lower bound."""
    upgrade_gap: float | None
    """``(cost - lower bound) / cost``."""
    upgrade_bound: DesignBound | None = None
    """How the lower bound was proven (what it covers)."""
    upgrade_restricted_optimum: RestrictedOptimum | None = None
    """The last MIP's optimum among designs with its restriction, named with it."""
    links_upgraded: int
    """Links the plan upgrades."""
    routes_built: int
    """New routes it builds."""
    design_iterations: int = 0
    """Iterations of the survivable design."""
    states_examined: int | None = None
    """Failure states the design examined."""
    states_added: int | None = None
    """States it added to its model."""
    states_needed: int | None = None
    """States some purchase is needed for."""
    scenario_after: str | None
    """The folder of the planned backbone as a scenario (None without an output folder)."""
    stage_seconds: dict[str, float]
    """Seconds per stage."""
    stages: list[StageRow]
    """Per stage: status, backend, gap, seconds, note."""
    before_after: list[FailureBeforeAfter]
    """Per failure state: impact, unmet traffic, utilisation and survival before and after the plan."""
    map: dict[str, Any]
    """Map values before the upgrades (utilisation per link, GPUs per site)."""
    map_after: dict[str, Any]
    """Map values of the planned backbone (utilisation, added Gbps, built routes, GPUs)."""
    verification: PlanVerification | None = None
    """Each independent check's verdict (with ``verify``)."""
    survivability_check: CheckRecord | None = None
    """The survivability checker's record (with ``verify``, when a design ran)."""
    failures_today: FailuresToday
    """What breaks on today's network with today's traffic."""
    compared_with: ComparedWith | None = None
    """What changed from the ``baseline`` plan (with ``baseline``)."""
    total_seconds: float | None = None
    """Seconds the whole plan took (None until it has finished)."""
