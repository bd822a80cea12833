"""``plan.json``'s summary as a typed model (:class:`PlanSummary`) and its sections, built by the ``plan`` task
(:func:`backbone.solver.tasks.plan.plan_summary`) from the stages' typed results and dumped only at the file and API
edge; the plan's report (:func:`backbone.solver.plan.report_data.report_data`) reads it typed."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from backbone.solver.checks.records import CheckRecord
from backbone.solver.core.summary import TypedSummary
from backbone.solver.design.summary import DesignBound, RestrictedOptimum
from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.failures.summary import SloViolations
from backbone.solver.plan.records import FailureBeforeAfter
from backbone.solver.plan.states import LinkSurvivability

__all__ = ["ComparedWith", "FailuresToday", "PlanSummary", "PlanVerification", "Residency", "StageRow"]


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
