"""Summary models: the documented shape of each task's JSON summary (``<kind>.json``, ``--json``, the API's job
result).

Each model declares the fields a reader may rely on, with their types; a summary may carry more (``extra`` is
allowed: per-stage details, notes, tables). :meth:`TaskResult.typed_summary
<backbone.solver.tasks.base.TaskResult.typed_summary>` validates a result's summary against its model, and the
tests check every shipped task's summary against it, so the contract and the code cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Summary(BaseModel):
    """Base of the summary models (and the model of a task that declares none): fields beyond the declared
    ones are allowed."""

    model_config = ConfigDict(extra="allow", frozen=True)


class TESummary(Summary):
    """``te``: how the traffic flows (utilisation, carried and unmet traffic, latency) and how it was solved."""

    status: str
    objective: str
    objective_value: float | None = None
    formulation: str | None = None
    method: str | None = None
    backend: str | None = None
    mlu: float | None
    demand_gbps: float
    carried_gbps: float
    unmet_gbps: float
    weighted_latency_ms: float | None = None
    paths_k: int | None = None
    lower_bound: float | None = None
    gap: float | None = None
    impact: dict[str, Any] | None = None
    unmet_demands: list[dict[str, Any]]
    unmet_demands_total: int
    notes: list[str] = []
    map: dict[str, Any]
    total_seconds: float
    verification: dict[str, Any] | None = None


class PlaceSummary(Summary):
    """``place``: where the GPUs go, at what cost, which demand is served (``status`` ``partial`` when not all)."""

    status: str
    solver_status: str
    objective: float | None
    gap: float | None
    lp_bound: float | None
    backend: str
    cost_usd: float | None
    capex_usd: float | None
    opex_usd: float | None
    served_share: float | None
    totals: dict[str, Any]
    gpus_by_site: dict[str, float]
    gpus_added_by_site: dict[str, float]
    assignments: list[dict[str, Any]]
    sites: list[dict[str, Any]]
    metros: list[dict[str, Any]]
    training: list[dict[str, Any]] = []
    replicas: list[dict[str, Any]] = []
    workload_gbps_by_class: dict[str, float | None] = {}
    infeasibility: list[str]
    unserved_metros: list[dict[str, Any]]
    options: dict[str, Any]
    map: dict[str, Any]
    verification: dict[str, Any] | None = None


class FailuresSummary(Summary):
    """``failures``: every scenario's impact, the worst ones and the per-link worst utilisation."""

    status: str
    scenarios_run: int
    survived: int
    not_survived: int
    overloaded: int
    seconds: float
    scenarios_per_second: float | None
    baseline: dict[str, Any]
    worst: list[dict[str, Any]]
    scenarios: list[dict[str, Any]]
    worst_by_link: list[dict[str, Any]]
    map: dict[str, Any]
    options: dict[str, Any]


class DesignSummary(Summary):
    """``design``: what to buy (``mode``: ``survivable`` over TE's paths, ``upgrade`` edge-based, or ``sndlib``)."""

    status: str
    mode: str
    map: dict[str, Any]
    verification: dict[str, Any] | None = None


class CalibrateSummary(Summary):
    """``calibrate``: the fitted latency parameters and the errors before, after and left out."""

    pairs: int
    fitted: list[str]
    parameters: dict[str, float]
    previous_parameters: dict[str, float]
    converged: bool
    errors: dict[str, Any]
    pairs_table: list[dict[str, Any]]


class PlanSummary(Summary):
    """``plan``: the planner's headline figures before and after the plan, per stage, with provenance."""

    status: str
    scenario: str
    scenario_fingerprint: str
    software_version: str
    created_utc: str
    plan_file: str | None
    headline: str
    gpus_added: float
    placement_cost_usd: float | None
    placement_gap: float | None
    served_share: float | None
    mlu: float | None
    mlu_after: float | None
    carried_gbps: float | None
    unmet_gbps: float | None
    unmet_gbps_after: float | None
    unmet_by_class_gbps: dict[str, float] | None = None
    unmet_by_class_gbps_after: dict[str, float] | None = None
    slo_violations: dict[str, Any] | None = None
    slo_violations_after: dict[str, Any] | None = None
    residency: dict[str, Any] | None = None
    weighted_latency_ms: float | None
    failure_kind: str
    failure_scenarios: int | None
    worst_failure: str | None
    failures_with_unmet_demand: int
    failures_with_unmet_demand_after: int
    survivability: dict[str, Any]
    upgrade_cost_usd: float | None
    upgrade_lower_bound_usd: float | None
    upgrade_gap: float | None
    upgrade_bound: dict[str, Any] | None = None
    upgrade_restricted_optimum: dict[str, Any] | None = None
    links_upgraded: int
    routes_built: int
    scenario_after: str | None
    stage_seconds: dict[str, float]
    stages: list[dict[str, Any]]
    before_after: list[dict[str, Any]]
    map: dict[str, Any]
    map_after: dict[str, Any]
    total_seconds: float
    verification: dict[str, Any] | None = None
