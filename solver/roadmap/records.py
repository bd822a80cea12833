"""The roadmap's records as typed models: each build, each period's record (its builds, jobs, survivability and
design) and the starting risk.

They are built where the data is made (:mod:`backbone.solver.roadmap.rolling`, :mod:`~backbone.solver.roadmap.design`,
:mod:`~backbone.solver.roadmap.jobs`, :mod:`~backbone.solver.roadmap.risk`), passed typed inside the solver and
dumped only at the file and API edge (``roadmap.json`` through
:meth:`~backbone.solver.roadmap.summary.RoadmapSummary.document`). Each model's fields are in ``roadmap.json``'s
order; every field is declared (``extra`` is forbidden) and the records are frozen (a later figure makes a new
record: ``model_copy(update=...)``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from backbone.solver.design.survivable.survivability import Survivability

__all__ = ["GpuBuild", "JobUnplaced", "PeriodBuild", "PeriodDesign", "PeriodRecord", "PlacedJob", "ReplicaBuilt",
           "RestrictedBound", "RiskPeriod", "RoadmapBuild", "StartingRisk", "TimeBudget"]


class _Record(BaseModel):
    """A frozen record with every field declared."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RoadmapBuild(_Record):
    """One build of the roadmap (a row of ``roadmap_builds.csv``, ``roadmap.json``'s ``builds``)."""

    id: str
    """The link or candidate route (``upgrade``, ``new route``), ``gpus:<site>:<period>`` or
    ``replica:<dataset>:<site>``."""
    action: str
    """``upgrade``, ``new route``, ``gpus`` or ``replica``."""
    site_a: str
    """The link's first site; the site of GPUs or a replica."""
    site_b: str
    """The link's second site; the dataset of a replica; empty for GPUs."""
    kind: str
    """The link kind, ``gpu block`` or ``dataset replica (<size> PB)``."""
    modules: int
    """Capacity modules (GPU blocks for GPUs; 0 for a replica)."""
    added_gbps: float
    """Capacity added."""
    gpus: float
    """GPUs added (0 for backbone builds and replicas)."""
    cost_usd: float
    """Its capex, charged in the commit period."""
    lead_time_quarters: int
    """Quarters from order to service."""
    committed: str
    """The period it is ordered (and paid) in."""
    online: str
    """The period it is in service from."""
    committed_index: int
    """The commit period's index (0 the first)."""
    online_index: int
    """The online period's index."""
    available_from: str
    """A candidate route's ready-for-service quarter (empty otherwise)."""

    def view(self) -> PeriodBuild:
        """The build as a period record lists it (:class:`PeriodBuild`)."""
        return PeriodBuild.model_validate(self.model_dump(include=set(PeriodBuild.model_fields)))


class PeriodBuild(_Record):
    """A backbone build online in a period (the period record's ``builds``)."""

    id: str
    action: str
    kind: str
    site_a: str
    site_b: str
    modules: int
    added_gbps: float
    cost_usd: float
    lead_time_quarters: int
    committed: str
    online: str


class GpuBuild(_Record):
    """GPU blocks online in a period at one site (the period record's ``gpu_builds``)."""

    site: str
    gpus: float
    cost_usd: float
    committed: str
    online: str


class ReplicaBuilt(_Record):
    """A dataset replica built in a period (the period record's ``replicas_built``)."""

    dataset: str
    site: str
    cost_usd: float
    """Its storage capex."""


class PlacedJob(_Record):
    """A training job the period's placement placed (``jobs_placed``)."""

    job: str
    sites: str
    """Its sites, ``+``-joined."""
    gpus: float


class JobUnplaced(_Record):
    """A training job the period's placement left unplaced (``jobs_unplaced``)."""

    job: str
    gpus: float
    reason: str
    """Why: the placement's diagnosis (residency, power, GPUs, the backbone) or the period's budget."""


class RestrictedBound(_Record):
    """A period design MIP's own dual bound, a bound only among the designs its ``restriction`` names (the
    candidates it opened, its paths, its working set); the design's cost is the period design's ``cost_usd``."""

    bound_usd: float | None
    gap: float | None
    status: str
    restriction: str


class PeriodDesign(_Record):
    """A period's backbone step as its record holds it (``design``): what was built and why, its bounds, its
    working set and the seconds it took."""

    mode: str
    """``survivable``, ``intact only (budget)``, ``nothing buildable``, ``nothing built (budget)`` ..."""
    status: str
    """The design's status (``optimal``, ``feasible``, ``time_limit``, ``skipped``, ``budget_limited`` ...)."""
    cost_usd: float
    """What the period's builds cost."""
    lower_bound_usd: float | None
    """The design's true bound (None when not computed: the roadmap's global bound covers every period)."""
    gap: float | None
    """Its gap."""
    restricted_optimum: RestrictedBound | None
    """The MIP's own bound, restricted (None without a MIP)."""
    iterations: int
    """The survivable design's iterations."""
    states_added: int
    """Failure states its working set holds."""
    working_set: list[str]
    """The failure states the design modelled."""
    binding_states: list[str]
    """Those its builds protect (the next period's warm start)."""
    candidates_offered: int
    """Candidate routes that could be online in the period."""
    upgrades_offered: bool
    """Whether link upgrades could be online in the period."""
    model: dict[str, int]
    """The MIP's size."""
    seconds: float
    """Wall-clock seconds of the design."""
    budget_s: float
    """The roadmap clock's share for it."""
    solver_note: str
    """What the solver could not do (retries, time limits)."""


class PeriodRecord(_Record):
    """One period of the roadmap (``roadmap.json``'s ``periods``; ``roadmap_periods.csv`` flattens them)."""

    period: str
    """The period's label (``2027Q1``)."""
    index: int
    capex_usd: float
    """Capex committed in the period (GPU blocks, replica storage and the backbone)."""
    capex_online_usd: float
    """Capex of the builds online from the period."""
    opex_usd: float
    """Energy opex of the GPUs the roadmap added by then, for the period."""
    served_share: float | None
    """Share of the inference demand served."""
    unserved_gpus: float
    mlu: float | None
    """Maximum link utilisation of the min-MLU routing of the period's network."""
    unmet_gbps: float
    """Intact-state traffic left unmet (NaN when not measured: never read as 0; null in the document)."""
    unmet_tolerance_gbps: float
    demand_gbps: float
    inference_gpus_demand: float
    gpus_installed: float
    gpus_added_by_site: dict[str, float]
    gpu_note: str
    builds: list[PeriodBuild]
    """The backbone builds online from the period."""
    gpu_builds: list[GpuBuild]
    replicas_built: list[ReplicaBuilt]
    jobs_placed: list[PlacedJob]
    jobs_unplaced: list[JobUnplaced]
    survivability: Survivability
    """The failure states the period's backbone carries, excuses and violates."""
    design: PeriodDesign
    placement_model: dict[str, int]
    placement_seconds: float
    placement_status: str
    placement_gap: float | None
    budget_shortfall_usd: float
    budget_note: str
    discount_factor: float
    seconds: float
    gpu_capex_usd: float = 0.0
    """GPU capex committed in the period (from the builds, at the end)."""
    network_capex_usd: float = 0.0
    """Backbone capex committed in the period."""
    storage_capex_usd: float = 0.0
    """Replica storage capex committed in the period."""


class RiskPeriod(_Record):
    """A period at risk: its label and the number of failure states it violates."""

    period: str
    violated: int


class StartingRisk(_Record):
    """The roadmap's starting risk, said once (``starting_risk``): the periods with violated failure states before
    the earliest period from which every later period carries every state it is not excused from."""

    failure_kind: str
    periods: list[RiskPeriod]
    safe_from: str | None
    """The first period from which every state is carried (None when even the last period violates some)."""
    nothing_online: bool
    """Whether every period at risk is one in which nothing can be online yet (lead times)."""
    text: str
    """The note, one sentence."""


class TimeBudget(_Record):
    """The time limits the roadmap ran under and the seconds each part used (``time_budget``)."""

    time_limit_s: float | None
    """The whole roadmap's wall-clock limit (None without one)."""
    bound_min_s: float
    """The seconds kept back for the global bound."""
    period_seconds: list[float]
    """Wall-clock seconds each period took."""
    bound_s: float | None
    """Seconds the global bound took (None when it was not computed)."""
