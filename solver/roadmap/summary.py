"""``roadmap.json``'s summary as a typed model (:class:`RoadmapSummary`), built by
:meth:`backbone.solver.roadmap.rolling.RoadmapResult.typed_summary` and dumped only at the file and API edge
(:meth:`RoadmapSummary.document`: NaN becomes null there).

The per-period records, the builds and the starting risk are the typed records of
:mod:`backbone.solver.roadmap.records`, as the rolling horizon made them; the global bound (:class:`GlobalBound`),
the budget ledger's rows (:class:`LedgerRow`) and the figures over the whole roadmap are declared here, with units in
their names. ``map_end`` (map values, the map renderer's input) stays a plain section; ``verification`` is the
checker's typed record (:class:`~backbone.solver.checks.records.CheckRecord`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from backbone.serialize import json_safe
from backbone.solver.checks.records import CheckRecord
from backbone.solver.core.summary import TypedSummary
from backbone.solver.roadmap.bound import RoadmapBound
from backbone.solver.roadmap.records import PeriodRecord, RoadmapBuild, StartingRisk, TimeBudget

__all__ = ["BudgetShortfall", "GlobalBound", "LedgerRow", "ObjectiveTerms", "RoadmapSummary", "StepBounds",
           "UnplacedJob"]


class GlobalBound(RoadmapBound):
    """The global bound's record (``bound``): the LP over every period (its fields:
    :class:`~backbone.solver.roadmap.bound.RoadmapBound`) and, beside it, the discounted backbone capex it bounds
    and the objective's lower bound. When the bound was not computed (``status`` ``skipped``), the LP's own figures
    (``periods`` to ``period_floors_usd``) are not in the document."""

    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = (
        "periods", "failure_states", "unmet_floor_gbps", "seconds", "model", "note", "period_floors_usd",
        "added_states")

    discounted_network_capex_usd: float
    """This roadmap's discounted backbone capex, which the bound bounds."""
    objective_lower_bound_usd: float | None
    """The objective's lower bound (None without a bound)."""
    objective_covers: str
    """The roadmaps the objective's bound covers, in words."""


class LedgerRow(BaseModel):
    """A period of the budget ledger (``ledger``, ``roadmap_budget.csv``); a period without a budget has None."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    period: str
    budget_usd: float | None
    """The period's own budget."""
    available_usd: float | None
    """Its budget plus the carry-over."""
    committed_usd: float
    """Capex committed in it."""
    left_usd: float | None
    """What it leaves."""


class ObjectiveTerms(BaseModel):
    """The roadmap objective's discounted terms (``objective``): their sum is ``objective_usd``."""

    model_config = ConfigDict(extra="forbid")

    capex_usd: float
    """Capex, discounted by commit period."""
    opex_usd: float
    """Energy opex of the GPUs added, discounted."""
    unmet_penalty_usd: float
    """The penalty for traffic left unmet, per Gbps and period, discounted."""
    unserved_penalty_usd: float
    """The penalty for inference GPUs left unserved, per GPU and period, discounted."""


class StepBounds(BaseModel):
    """The per-period figure (``step_bounds``): the sum of each period's design bound and its gap to the backbone
    capex; it covers only roadmaps that take the same earlier steps (``covers`` says so)."""

    model_config = ConfigDict(extra="forbid")

    network_capex_lower_bound_usd: float | None
    """Sum of the periods' design bounds (None when a period has none)."""
    network_capex_usd: float
    """Backbone capex, undiscounted."""
    gap: float | None
    """``(network_capex_usd - bound) / network_capex_usd``."""
    covers: str
    """What the figure bounds, in words."""


class BudgetShortfall(BaseModel):
    """A period whose builds did not fit its budget (``budget_shortfalls``)."""

    model_config = ConfigDict(extra="forbid")

    period: str
    """The period's label."""
    shortfall_usd: float
    """What the period's designs needed beyond the budget."""
    reason: str
    """What the period fell back to, and why."""


class UnplacedJob(BaseModel):
    """A training job a period could not place (``jobs_unplaced``)."""

    model_config = ConfigDict(extra="forbid")

    period: str
    """The period's label (``2027Q2``)."""
    job: str
    """The training job's id."""
    gpus: float
    """Its GPUs."""
    reason: str
    """Why: the placement's diagnosis (residency, power, GPUs, the backbone) or the period's budget."""


class RoadmapSummary(TypedSummary):
    """``roadmap``: per period what is committed, what comes online, the capex, the survivability and the
    bounds; over the roadmap the capex, the objective and its lower bound.

    Every field is declared (``extra`` is forbidden); the fields are in ``roadmap.json``'s order; ``verification``
    is left out of the document when the checker did not run."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification",)

    status: str
    """``ok``, ``partial`` (a violated state or unmet traffic) or ``budget_limited`` (a budget shortfall)."""
    scenario: str
    """The scenario's name."""
    scenario_fingerprint: str
    """Its content fingerprint (provenance)."""
    period: str
    """The period length (``quarter`` or ``year``)."""
    start: str
    """The first period's label."""
    end: str
    """The last period's label."""
    decomposition: str
    """How the roadmap was solved, in words (rolling horizon)."""
    lower_bound_usd: float | None
    """The global bound on the discounted backbone capex (None when not computed)."""
    gap: float | None
    """Its gap to ``discounted_network_capex_usd`` (None when no gap is claimed: ``bound.note`` says why)."""
    discounted_network_capex_usd: float
    """Backbone capex, discounted by commit period."""
    bound: GlobalBound
    """The global bound's record: status, what it covers, the objective's lower bound."""
    step_bounds: StepBounds
    """The per-period bounds' sum and gap."""
    total_capex_usd: float
    """Capex of every build (backbone, GPUs and dataset replica storage), undiscounted."""
    network_capex_usd: float
    """Backbone capex, undiscounted."""
    gpu_capex_usd: float
    """GPU capex, undiscounted."""
    storage_capex_usd: float = 0.0
    """Storage capex of the dataset replicas the roadmap's placements built (each charged once, in the period it is
    built), undiscounted."""
    jobs_unplaced: list[UnplacedJob] = Field(default_factory=list)
    """Every (period, training job) left unplaced: ``period``, ``job``, ``gpus``, ``reason`` (the placement's
    diagnosis); empty when every job running in a period was placed."""
    total_opex_usd: float
    """Energy opex of the GPUs added, undiscounted."""
    objective_usd: float
    """The objective: the sum of :attr:`objective`'s terms."""
    objective: ObjectiveTerms
    """The objective's discounted terms."""
    discount_rate_per_year: float
    """The discount rate the objective uses."""
    starting_risk: StartingRisk | None
    """The periods with violated failure states before anything can be online (None when there are none)."""
    budget_shortfalls: list[BudgetShortfall]
    """The periods short of budget."""
    periods: list[PeriodRecord]
    """One record per period (``roadmap_periods.csv`` flattens them)."""
    builds: list[RoadmapBuild]
    """One record per build (``roadmap_builds.csv``)."""
    map_end: dict[str, Any]
    """The map values of the last period's backbone."""
    ledger: list[LedgerRow]
    """The budget ledger, one record per period (``roadmap_budget.csv``)."""
    notes: list[str]
    """What a planner should know, one sentence each."""
    seconds: float
    """Wall-clock seconds the roadmap took."""
    time_budget: TimeBudget
    """The time limits the roadmap ran under and the seconds each part used."""
    verification: CheckRecord | None = None
    """The independent checker's record (with ``verify``)."""

    def document(self) -> dict[str, Any]:
        """The JSON document (:meth:`TypedSummary.document`) with every non-finite number null
        (:func:`~backbone.serialize.json_safe`): a period's unmet traffic that was not measured is NaN in the
        record and null in ``roadmap.json``, ``--json`` and the API."""
        return json_safe(super().document())  # type: ignore[no-any-return]
