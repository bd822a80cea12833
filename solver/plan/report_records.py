"""The plan report's data as typed records: :class:`PlanReportData` and its blocks, built by
:func:`backbone.solver.plan.report_data.report_data` from the stages' typed summaries and dumped
(:meth:`~backbone.solver.core.summary.TypedSummary.document`) only where the report is rendered
(:func:`backbone.report.render_report` reads the document).

The table rows the report copies from a stage's summary (the placement's sites and metros, a sweep's worst states,
the upgrades) stay the rows of their CSV files: their columns follow the scenario (one per traffic class).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict

from backbone.solver.core.summary import TaskSummary
from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.plan.records import FailureBeforeAfter
from backbone.solver.plan.states import LinkSurvivability
from backbone.solver.plan.summary import StageRow

__all__ = ["BusyLink", "CorridorsBlock", "DatasetHome", "DatasetRow", "FailuresBlock", "GravityMap", "PlanReportData",
           "Provenance", "TbpsByClass", "TrainingSite", "WorkloadFlow", "WorkloadsBlock"]


class _Record(TaskSummary):
    """A frozen record of the report (NaN kept: the report shows it as a dash, as it shows None)."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)


class FailuresBlock(_Record):
    """One sweep as the report shows it: counts, the worst states and the links driven highest."""

    scenarios: int
    """Failure states swept."""
    survived: int
    """States carried."""
    not_survived: int
    """States not carried."""
    worst: list[dict[str, Any]]
    """The worst states (``failures_scenarios.csv``'s first rows)."""
    worst_by_link: list[dict[str, Any]]
    """Per link its worst utilisation and the state that drives it (``failures_links.csv``'s first rows)."""
    notes: list[str]
    """What the sweep's numbers do not cover."""


class BusyLink(_Record):
    """One of the routed network's busiest links."""

    link: str
    """The link's id."""
    cable_system: str
    """Its cable system (``terrestrial`` when it has none)."""
    capacity_gbps: float
    """Its capacity."""
    utilisation: float
    """Its utilisation with the plan's traffic."""


class DatasetRow(_Record):
    """A dataset with its homes (new replicas included), size and residency."""

    dataset: str
    """The dataset's id."""
    size_pb: float
    """Its size."""
    homes: str
    """Its home sites, comma-separated."""
    residency: str
    """Where it may live (``anywhere`` without a rule)."""


class TbpsByClass(_Record):
    """The routed traffic of one class."""

    traffic_class: str
    """The traffic class."""
    tbps: float
    """Its routed traffic (Tbps)."""


class WorkloadsBlock(_Record):
    """The report's workloads: placed training jobs, the datasets and their replicas, the traffic by class."""

    jobs: list[dict[str, Any]]
    """The placement's training rows (``place_training.csv``)."""
    replicas: list[dict[str, Any]]
    """The new dataset replicas (``place_replicas.csv``)."""
    datasets: list[DatasetRow]
    """Every dataset of the routed network."""
    tbps_by_class: list[TbpsByClass]
    """The routed traffic by class."""
    unplaced: list[str]
    """Scenario jobs the placement considered and did not place."""
    not_considered: int
    """Scenario jobs left out (the placement did not read the scenario's jobs)."""


class CorridorsBlock(_Record):
    """The backbone's Tbps by corridor and class: one row per corridor with its lit Tbps, each direction's Tbps,
    utilisation and, per class, ``"east / west"`` Tbps (a column per class)."""

    rows: list[dict[str, Any]]
    """One row per corridor (region pairs, then corridor SRLGs)."""
    classes: list[str]
    """The classes, in the order of their columns."""


class WorkloadFlow(_Record):
    """A routed workload flow (one per class and site pair, as routed)."""

    src: str
    """Its source site."""
    dst: str
    """Its destination site."""
    traffic_class: str
    """Its traffic class."""
    gbps: float
    """Its Gbps."""


class TrainingSite(_Record):
    """A site of a placed training job."""

    job: str
    """The job's id."""
    site: str
    """The site."""
    gpus: float
    """The job's GPUs there."""


class DatasetHome(_Record):
    """A home of a dataset."""

    dataset: str
    """The dataset's id."""
    site: str
    """The home site."""
    new: bool
    """Whether the placement added it (a new replica)."""


class GravityMap(_Record):
    """The data-gravity map's values (a ``map`` object, :mod:`backbone.maps.values`)."""

    workload_flows: list[WorkloadFlow]
    """The routed workload flows."""
    training_sites: list[TrainingSite]
    """The placed jobs' sites."""
    dataset_homes: list[DatasetHome]
    """Every dataset's homes, the new replicas marked."""


class Provenance(_Record):
    """Where the plan came from: the scenario, the software and the plan file."""

    scenario: str
    """The scenario's name."""
    scenario_fingerprint: str
    """The scenario's fingerprint."""
    scenario_version: str
    """The scenario's version (empty when it has none)."""
    software_version: str
    """The software's version."""
    created_utc: str
    """When the plan was made."""
    plan_file: str
    """The plan file (``(none: defaults)`` without one)."""
    plan_text: str
    """The plan file's text."""


class PlanReportData(TaskSummary):
    """Everything ``report.html`` shows (:func:`backbone.report.render_report` documents each section); ``compared``
    (the "compared with" section) is set with a baseline and left out of the document otherwise."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("compared",)

    title: str
    """The page's title."""
    subtitle: str
    """The scenario's size and when the plan was made."""
    kpis: list[tuple[str, str]]
    """The headline figures: (label, value)."""
    notes: list[str]
    """Notes on placement infeasibility, an infeasible design and ``skip_upgrades``."""
    stages: list[StageRow]
    """Per stage: status, backend, gap, seconds, note."""
    placement_sites: list[dict[str, Any]]
    """The placement's sites with GPUs after it."""
    placement_metros: list[dict[str, Any]]
    """The placement's metro rows, each with its worst round trip."""
    busiest_links: list[BusyLink]
    """The 15 busiest links of the routed network."""
    failures_today: FailuresBlock | None
    """The sweep of the scenario as given (None when not run)."""
    failures_with_plan_traffic: FailuresBlock
    """The sweep of today's links with the plan's traffic."""
    upgrades: list[dict[str, Any]]
    """``design_upgrades.csv``'s rows, each with ``protects_text``."""
    upgrade_cost_usd: float | None
    """What the upgrades cost."""
    headline: str
    """The sentence the report opens with."""
    headline_ok: bool
    """Whether every failure is carried (and something was designed)."""
    survivability: Survivability
    """What the plan claims for the failure kind it designed for."""
    link_survivability: LinkSurvivability | None
    """The single-link check (a design that did not target single links)."""
    link_survivability_text: str
    """That check in words."""
    before_after: list[FailureBeforeAfter]
    """Per failure state, before and after the plan."""
    failure_words: str
    """The failure kind in words."""
    design_note: str
    """One sentence on the design."""
    assumptions: list[str]
    """The assumptions paragraph."""
    provenance: Provenance
    """Where the plan came from."""
    files: list[str]
    """The plan folder's files."""
    workloads: WorkloadsBlock | None
    """The placed training jobs and their traffic (None without training jobs)."""
    corridors: CorridorsBlock | None
    """Tbps by corridor and class (None without corridor rows)."""
    compared: dict[str, Any] | None = None
    """What changed from the baseline plan (:func:`backbone.compare.report_section`)."""
