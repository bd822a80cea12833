"""The roadmap: a multi-period build plan with lead times, budgets and cable systems not yet in service.

**Decomposition (rolling horizon).** One model over every period -- placement, routing and a survivable
design per period with capacity that persists -- is far too large for the shipped scenario (a
survivable design of one period alone is solved by constraint generation over ~100 failure states).
The roadmap therefore decides period by period, in order; each period ``t`` (its first quarter ``q_t``):

1. **demand**: the scenario's demands and metro inference GPUs grown to period ``t``
   (``(1 + rate) ** years since the first period``; rates per region, traffic class and metro);
2. **GPUs**: the placement (:func:`backbone.solver.placement.solve_placement`) of the period's inference
   demand on the GPUs already installed plus new blocks. Blocks online in ``t`` are ordered in
   ``t - ceil(gpu_lead / quarters per period)``; before that is possible no block may be added. When the
   blocks' capex exceeds what the budget of their commit period allows, the placement is solved again to
   serve the most demand within that capex (capex-only cost: the budget forces the cheaper sites first);
3. **backbone**: the survivable design (:func:`backbone.solver.design.survivable.iterate.design_survivable`: upgrades and
   new routes so the intact state fits within the ceiling and every single failure of the kind is
   carried) on the network built so far, with the period's traffic and the placement's. Only what can be
   online in ``t`` is offered: link upgrades when ``t >= ceil(upgrade_lead / qpp)``; candidates whose
   ``lead_time_quarters`` allows an order at or after the first period and whose ``available_from``
   (ready-for-service quarter) is not after ``q_t``. Each build is committed ``ceil(lead / qpp)`` periods
   before ``t`` and its capex charged to that period's budget;
4. **budget** (GPU blocks are funded first, then the backbone): when the design's capex does not fit the
   budgets of the periods it is committed in
   (carry-over included), the period falls back to the cheapest design for the intact state only, then
   to building nothing; the shortfall is reported per period with its reason.

With training jobs (``place.scenario_jobs`` or ``place.training``), step 2 places the jobs running in the period
(their ``start`` to ``end`` quarters) with the inference demand; a dataset replica it builds is a build (``replica``:
storage capex charged to the period) and a home of its dataset in the period's network, and each job the period
could not place is recorded with the placement's reason (:mod:`backbone.solver.roadmap.jobs`).

What is built persists: the next period starts from this period's network (capacity never shrinks; GPUs stay
installed; replicas stay homes of their datasets, so later periods neither buy them again nor read the dataset over
the backbone).

**Bound and gap.** ``lower_bound_usd`` and ``gap`` come from one LP over every period
(:mod:`backbone.solver.roadmap.bound`): a proven lower bound on the discounted backbone capex of every
roadmap with the same GPU placement, lead times, ready-for-service dates and budgets that carries the
periods' intact states and the failure states their designs found binding, with each period's online
capacity costing at least the proven bound of that period's MIP (integer modules and routes). The sum of each
period's design-MIP bound (``step_bounds``) covers only roadmaps that take the same earlier steps; it is
reported apart. Each period's design starts from the failure states the previous period's builds protect.

The period's backbone step (3 and 4) is :func:`backbone.solver.roadmap.design.design_period`; the budget
arithmetic is in :mod:`backbone.solver.roadmap.budget`.

**Objective (reported)**: discounted capex (by commit period) + discounted energy opex of the GPUs added +
penalties for traffic left unmet in the intact state and inference demand left unserved, per period.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from backbone.errors import SolverError
from backbone.model import Network
from backbone.report_roadmap import NETWORK_BUILD_ACTIONS
from backbone.serialize import finite_or_none, json_safe
from backbone.solver.core.options import validate_options
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.failures.pool import sweep_pool
from backbone.solver.plan.states import design_failure_kind
from backbone.solver.roadmap.bound import RoadmapBound, StateSeparation, roadmap_lower_bound
from backbone.solver.roadmap.budget import BUDGET_TOL_USD, budget_ledger, headroom, place_within_budget
from backbone.solver.roadmap.clock import RoadmapClock
from backbone.solver.roadmap.design import (
    PERIOD_DESIGN_BUDGET_FACTOR,
    PeriodOutcome,
    design_period,
    quick_sweep_options,
)
from backbone.solver.roadmap.inputs import check_references, grow_network
from backbone.solver.roadmap.jobs import period_jobs, replica_builds
from backbone.solver.roadmap.options import RoadmapOptions, parse_start, stage_options
from backbone.solver.roadmap.records import (
    GpuBuild,
    JobUnplaced,
    PeriodDesign,
    PeriodRecord,
    PlacedJob,
    ReplicaBuilt,
    RoadmapBuild,
    StartingRisk,
    TimeBudget,
)
from backbone.solver.roadmap.risk import starting_risk, starting_risk_record
from backbone.solver.roadmap.summary import (
    BudgetShortfall,
    GlobalBound,
    LedgerRow,
    ObjectiveTerms,
    RoadmapSummary,
    StepBounds,
    UnplacedJob,
)

logger = logging.getLogger(__name__)

__all__ = ["RoadmapResult", "budget_ledger", "check_references", "design_bound", "grow_network", "network_builds",
           "plan_roadmap", "starting_risk", "starting_risk_record"]


@dataclass
class RoadmapResult:
    """A roadmap: what is committed when, what comes online when, and what each period looks like.

    Attributes
    ----------
    options
        The options it was planned with.
    labels
        Period labels (``2027Q1`` ...).
    periods
        One :class:`~backbone.solver.roadmap.records.PeriodRecord` per period.
    builds
        One row per build: ``id``, ``action`` (``upgrade``, ``new route``, ``gpus``), ``site_a``,
        ``site_b`` (the site for GPUs), ``kind``, ``modules``, ``added_gbps``, ``gpus``, ``cost_usd``,
        ``lead_time_quarters``, ``committed``, ``online`` (period labels), ``committed_index``,
        ``online_index``, ``available_from``.
    networks
        The network of each period: what is built by then, with the period's demand (the placement's
        traffic included) -- each a canonical scenario.
    utilisation
        Per period: link utilisation of the min-MLU routing of its network (the one definition).
    ledger
        One row per period: ``period``, ``budget_usd``, ``available_usd`` (budget plus carry-over),
        ``committed_usd``, ``left_usd``.
    risk
        The starting risk (None when every period carries every failure state).
    clock
        The time limits it ran under and the seconds each part used (None: not recorded).
    """

    options: RoadmapOptions
    labels: list[str]
    periods: list[PeriodRecord]
    builds: pd.DataFrame
    networks: list[Network]
    ledger: pd.DataFrame
    seconds: float
    scenario: str
    fingerprint: str
    notes: list[str] = field(default_factory=list)
    utilisation: list[pd.Series] = field(default_factory=list)
    bound: RoadmapBound | None = None
    risk: StartingRisk | None = None
    clock: TimeBudget | None = None

    def summary(self) -> dict[str, Any]:
        """The summary's JSON document (:meth:`typed_summary` dumped): what ``roadmap.json`` holds."""
        return self.typed_summary().document()

    def typed_summary(self) -> RoadmapSummary:
        """The :class:`~backbone.solver.roadmap.summary.RoadmapSummary`: ``status``, ``gap``, ``total_capex_usd``,
        ``objective_usd``, ``periods`` ..."""
        periods = self.periods
        capex = float(self.builds["cost_usd"].sum()) if len(self.builds) else 0.0
        net_rows = network_builds(self.builds)
        net_capex = float(net_rows["cost_usd"].sum()) if len(net_rows) else 0.0
        storage_capex = float(self.builds.loc[self.builds["action"] == "replica", "cost_usd"].sum()) \
            if len(self.builds) else 0.0
        disc_net = float(sum(periods[int(c)].discount_factor * float(cost) for c, cost in zip(
            net_rows["committed_index"], net_rows["cost_usd"], strict=True))) if len(net_rows) else 0.0
        short = [p for p in periods if p.budget_shortfall_usd > BUDGET_TOL_USD]
        obj = self._objective_terms()
        glob = self._global_bound_record(disc_net, obj)
        bound, gap = glob.lower_bound_usd, _global_gap(glob, disc_net)
        return RoadmapSummary(
            status=_roadmap_status(periods, short),
            scenario=self.scenario,
            scenario_fingerprint=self.fingerprint,
            period=self.options.period,
            start=self.labels[0],
            end=self.labels[-1],
            decomposition="rolling horizon: one period at a time, in order; each period's placement and "
                          "survivable design see the builds of the earlier periods",
            lower_bound_usd=bound,
            gap=gap,
            discounted_network_capex_usd=disc_net,
            bound=glob,
            step_bounds=_step_bounds(periods, net_capex),
            total_capex_usd=capex,
            network_capex_usd=net_capex,
            gpu_capex_usd=capex - net_capex - storage_capex,
            storage_capex_usd=storage_capex,
            jobs_unplaced=[UnplacedJob(period=p.period, **j.model_dump()) for p in periods for j in p.jobs_unplaced],
            total_opex_usd=float(sum(p.opex_usd for p in periods)),
            objective_usd=float(sum(obj.values())),
            objective=ObjectiveTerms.model_validate(obj),
            discount_rate_per_year=self.options.discount_rate_per_year,
            starting_risk=self.risk,
            budget_shortfalls=[BudgetShortfall(period=p.period, shortfall_usd=p.budget_shortfall_usd,
                                               reason=p.budget_note) for p in short],
            periods=periods,
            builds=[RoadmapBuild.model_validate(r) for r in _records(self.builds)],
            map_end=self.map_end(),
            ledger=[LedgerRow.model_validate(r) for r in _records(self.ledger)],
            notes=self.notes,
            seconds=round(self.seconds, 3),
            time_budget=self.clock if self.clock is not None else TimeBudget(
                time_limit_s=None, bound_min_s=0.0, period_seconds=[], bound_s=None),
        )

    def _global_bound_record(self, disc_net: float, obj: dict[str, float]) -> GlobalBound:
        """The global bound's record: :attr:`bound` (or ``skipped``) beside the discounted backbone capex
        ``disc_net`` it bounds and the objective's lower bound (from the objective's terms ``obj``)."""
        lp = self.bound
        bound = lp.lower_bound_usd if lp is not None else None
        objective: dict[str, Any] = {
            "discounted_network_capex_usd": disc_net,
            "objective_lower_bound_usd": None if bound is None else float(
                bound + sum(obj.values()) - obj["unmet_penalty_usd"] - disc_net),
            "objective_covers": "the objective of the roadmaps the bound covers, their GPU terms (capex, opex, "
                                "unserved GPUs) held at this roadmap's placement and unmet traffic counted as zero"}
        if lp is None:
            return GlobalBound.model_validate({"lower_bound_usd": None, "status": "skipped",
                                               "covers": "not computed (bound_time_limit_s 0)", **objective})
        # the LP's figures, every one given: in the document
        return GlobalBound.model_validate({**lp.model_dump(), "unmet_floor_gbps": round(lp.unmet_floor_gbps, 3),
                                           "seconds": round(lp.seconds, 3), **objective})

    def map_end(self) -> dict[str, Any]:
        """The map values of the last period's backbone (``roadmap.json`` ``map_end``, the deck's slide map): link
        ``utilisation`` of its min-MLU routing and the routes the roadmap built (``built_candidates``)."""
        util = self.utilisation[-1] if self.utilisation else pd.Series(dtype=float)
        built = self.builds.loc[self.builds["action"] == "new route", "id"] if len(self.builds) else []
        return {"link_values": {"utilisation": {str(k): float(v) for k, v in util.items()}},
                "built_candidates": sorted({str(x) for x in built}), "failed_links": []}

    def _objective_terms(self) -> dict[str, float]:
        """The objective's discounted terms: capex, GPU opex and the penalties for unmet traffic and unserved GPUs."""
        periods = self.periods
        disc = [p.discount_factor for p in periods]
        return {
            "capex_usd": sum(d * p.capex_usd for d, p in zip(disc, periods, strict=True)),
            "opex_usd": sum(d * p.opex_usd for d, p in zip(disc, periods, strict=True)),
            "unmet_penalty_usd": sum(d * p.unmet_gbps * self.options.unserved_penalty_usd_per_gbps
                                     for d, p in zip(disc, periods, strict=True)),
            "unserved_penalty_usd": sum(d * p.unserved_gpus * self.options.unserved_penalty_usd_per_gpu
                                        for d, p in zip(disc, periods, strict=True)),
        }


def network_builds(builds: pd.DataFrame) -> pd.DataFrame:
    """The rows of a builds table that add backbone capacity (``action`` in
    :data:`~backbone.report_roadmap.NETWORK_BUILD_ACTIONS`; not GPU blocks, not dataset replicas)."""
    return builds[builds["action"].isin(NETWORK_BUILD_ACTIONS)] if len(builds) else builds


def _global_gap(glob: GlobalBound, disc_net: float) -> float | None:
    """The global bound's gap to the discounted backbone capex ``disc_net``, or None (no bound, or a bound above
    the capex: then ``glob.note`` says why no gap is claimed)."""
    bound = glob.lower_bound_usd
    if bound is None:
        return None
    if bound <= disc_net * (1 + 1e-6) + BUDGET_TOL_USD:
        return max(0.0, disc_net - bound) / disc_net if disc_net > 0 else 0.0
    glob.note = ("the bound exceeds this roadmap's discounted backbone capex: the roadmap leaves traffic of the "
                 "modelled states unmet that other roadmaps carry, so it is outside the set the bound covers (no gap)")
    return None


def _roadmap_status(periods: list[PeriodRecord], short: list[PeriodRecord]) -> str:
    """``budget_limited`` (a budget shortfall), ``partial`` (a violated state, unmet traffic, unserved inference or a
    training job left unplaced) or ``ok``."""
    unsurvived = [p for p in periods if p.survivability.violated]
    return "budget_limited" if short else ("partial" if unsurvived or any(
        (p.served_share or 0) < 1 - 1e-6 or not p.unmet_gbps <= p.unmet_tolerance_gbps
        or p.jobs_unplaced for p in periods) else "ok")


def design_bound(design: PeriodDesign | Mapping[str, Any]) -> tuple[float | None, float | None, str]:
    """A period design's bound and gap as shown, with what it is: its true bound (``lower_bound_usd``) when it has
    one, else its MIP's bound restricted to what its restriction names (``restricted_optimum``), else none.
    ``design`` is the period's :class:`~backbone.solver.roadmap.records.PeriodDesign`, or its record in a
    ``roadmap.json`` document (read as one). Returns ``(bound_usd, gap, restriction)``: ``restriction`` empty for
    a true bound."""
    d = design if isinstance(design, PeriodDesign) else PeriodDesign.model_validate(design)
    r = d.restricted_optimum
    if d.lower_bound_usd is not None or r is None:
        return d.lower_bound_usd, d.gap, ""
    return r.bound_usd, r.gap, f"restricted: optimal among {r.restriction}" if r.restriction else "restricted"


def _step_bounds(periods: list[PeriodRecord], net_capex: float) -> StepBounds:
    """The per-period figure: the sum of each period's design bound (restricted where it is:
    :func:`design_bound`) and its gap to ``net_capex``."""
    bounds = [design_bound(p.design)[0] for p in periods]
    step_bound = None if any(b is None for b in bounds) else float(sum(float(b or 0.0) for b in bounds))
    step_gap = None if step_bound is None else (max(0.0, net_capex - step_bound) / net_capex if net_capex > 0
                                                else 0.0)
    return StepBounds(network_capex_lower_bound_usd=step_bound, network_capex_usd=net_capex, gap=step_gap,
                      covers="backbone capex (undiscounted) of each period's step given the builds of the "
                             "earlier periods (sum of each period's design-MIP bound, restricted to the candidates each "
                             "MIP opened and its paths where the period has no true bound); not a bound on "
                             "roadmaps that decide earlier periods differently. GPU capex is solved per "
                             "period to the placement's MIP gap (placement_gap per period).")


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """``df``'s rows as JSON-ready records (NaN and infinity as null: :func:`~backbone.serialize.json_safe`)."""
    return json_safe(df.rename(columns=str).to_dict("records"))


# ------------------------------------------------------------------ the rolling horizon
@dataclass
class _Horizon:
    """What the rolling horizon carries from period to period: the builds, the commitments per period (the
    budgets' ledger), each period's record and network, and the GPUs the roadmap added so far. ``state`` is the
    network built so far: its links, its GPUs installed and its datasets' homes (new replicas included) carry into
    the next period, whose demand is grown afresh from ``base``."""

    opts: RoadmapOptions
    stages: tuple[Any, Any, Any, Any]  # place, te, failures, design options
    kind: str
    state: Network
    base: Network
    labels: list[str]
    budgets: list[float]
    committed: list[float]
    gpus: pd.Series
    builds: list[RoadmapBuild] = field(default_factory=list)
    periods: list[PeriodRecord] = field(default_factory=list)
    networks: list[Network] = field(default_factory=list)
    utilisation: list[pd.Series] = field(default_factory=list)
    clock: RoadmapClock = field(default_factory=lambda: RoadmapClock(0.0, 0.0, 1))


@dataclass
class _Placed:
    """A period's GPU stage: the placement, its note and shortfall, the GPUs added and the routed network."""

    result: Any
    note: str
    shortfall_usd: float
    added: pd.Series
    routed: Network
    seconds: float
    jobs_placed: list[PlacedJob] = field(default_factory=list)
    jobs_unplaced: list[JobUnplaced] = field(default_factory=list)


def plan_roadmap(net: Network, options: RoadmapOptions | dict[str, Any] | None = None,
                 progress: ProgressFn | None = None) -> RoadmapResult:
    """Plan a roadmap period by period (see the module doc).

    Parameters
    ----------
    net
        The scenario today (its ``candidates`` table lists the routes that may be built, with lead
        times and ready-for-service quarters).
    options
        :class:`RoadmapOptions` or a mapping of them (default: 8 quarters from 2027Q1).

    Raises
    ------
    ValidationError
        For bad options or options naming unknown sites or metros.
    SolverError
        When a placement or design finds no solution within its time limit.

    Example
    -------
    >>> r = plan_roadmap(load_scenario(), {"periods": 4})  # doctest: +SKIP
    >>> r.summary()["total_capex_usd"]  # doctest: +SKIP
    """
    progress = progress or no_progress
    opts = options if isinstance(options, RoadmapOptions) else validate_options(RoadmapOptions, options or {})
    if "upgrade_lead_quarters" not in opts.model_fields_set:  # one default with the plan: the scenario's parameter
        opts = opts.model_copy(update={"upgrade_lead_quarters": round(float(net.parameters["upgrade_lead_quarters"]))})
    check_references(net, opts)
    stages = stage_options(opts)
    fail_opts, design_opts = stages[2], stages[3]
    kind = design_failure_kind(design_opts.survive, fail_opts.kind)
    t_start = time.perf_counter()
    labels = opts.labels()
    h = _Horizon(opts, stages, kind, net, net, labels, opts.budgets(), [0.0] * len(labels),
                 pd.Series(0.0, index=net.sites.index),
                 clock=RoadmapClock(opts.time_limit_s, opts.bound_time_limit_s, len(labels), t_start))
    with sweep_pool(fail_opts.workers if fail_opts.engine == "local" else 1):  # one pool for every period's sweeps
        for t, label in enumerate(labels):

            def sub(f: float, m: str, t: int = t, label: str = label) -> None:
                progress(min(0.999, (t + f) / len(labels)), f"{label}: {m}")

            _plan_period(h, t, sub)
        return _finish(h, net, t_start, progress)  # in the pool: the global bound sweeps its period MIPs' designs


def _period_network(h: _Horizon, t: int) -> Network:
    """The network built so far with today's demand grown to period ``t`` and the power steps arrived by then."""
    opts = h.opts
    work = grow_network(replace(h.state, demands=h.base.demands, metros=h.base.metros), opts, t)
    sites = work.sites.copy()
    for step in opts.power_steps:
        if parse_start(step.from_period, opts.period) <= opts.first_quarter(t):
            sites.at[step.site, "power_max_mw"] = max(float(step.power_max_mw),
                                                      float(sites.at[step.site, "power_available_mw"]))
    return replace(work, sites=sites)


def _place_gpus(h: _Horizon, work: Network, t: int) -> _Placed:
    """The period's GPU stage: blocks ordered ``gpu_lead`` earlier (none before that is possible), charged to
    the commit period; returns the placement and the network carrying its traffic."""
    from backbone.solver.plan.pipeline import network_after_placement, placement_demands
    from backbone.solver.plan.workloads import jobs_in_period, with_workload_demands

    opts, label = h.opts, h.labels[t]
    place_opts = h.stages[0].model_copy(update={"time_limit_s": h.clock.place_limit_s(t, h.stages[0].time_limit_s)})
    sites = work.sites
    gpu_c = t - opts.lead_periods(opts.gpu_lead_quarters)
    place_net = work if gpu_c >= 0 else replace(work, sites=sites.assign(gpus_max=sites["gpus_installed"]))
    if place_opts.scenario_jobs:  # the jobs running in this period (their start and end quarters)
        place_net = jobs_in_period(place_net, opts.first_quarter(t), opts.first_quarter(t + 1) - 1)
    t_place = time.perf_counter()
    place_res, gpu_note, gpu_short = place_within_budget(place_net, place_opts, gpu_c, h.budgets, h.committed,
                                                          opts)
    seconds = time.perf_counter() - t_place
    sites_t = place_res.tables["sites"]
    added = sites_t["gpus_added"][sites_t["gpus_added"] > 0]
    if len(added):
        h.committed[gpu_c] += float(sites_t["capex_usd"].sum())
        for site, g in added.items():
            h.builds.append(RoadmapBuild(
                id=f"gpus:{site}:{label}", action="gpus", site_a=str(site), site_b="", kind="gpu block",
                modules=int(sites_t.at[site, "blocks"]), added_gbps=0.0, gpus=float(g),
                cost_usd=float(sites_t.at[site, "capex_usd"]), lead_time_quarters=opts.gpu_lead_quarters,
                committed=h.labels[gpu_c], online=label, committed_index=gpu_c, online_index=t, available_from=""))
        h.gpus = h.gpus.add(added.astype(float), fill_value=0.0)
    replicas = place_res.tables.get("replicas", pd.DataFrame())
    h.builds.extend(replica_builds(replicas, label, t))
    storage_usd = float(replicas["cost_usd"].sum()) if len(replicas) else 0.0
    room = headroom(h.budgets, h.committed, opts.carry_over, t)
    if storage_usd > room + BUDGET_TOL_USD:  # replicas are the placement's choice, paid in their period: said when short
        gpu_short += storage_usd - room
        gpu_note = "; ".join(x for x in (gpu_note, f"the new dataset replicas' storage needs {storage_usd / 1e6:,.1f} "
                                         f"M USD, the budget of {label} has {room / 1e6:,.1f} M USD left") if x)
    h.committed[t] += storage_usd
    extra = placement_demands(place_res.tables["flows"], {c.name: c.slo_rtt_ms for c in place_opts.classes})
    if place_opts.scenario_jobs or place_opts.training:  # the period's training flows and dataset growth
        work, extra = with_workload_demands(work, place_res.tables, extra)
    routed = network_after_placement(work, sites_t, extra)
    placed_jobs, unplaced_jobs = period_jobs(place_net, place_opts, place_res, gpu_note)
    return _Placed(place_res, gpu_note, gpu_short, added, routed, seconds, placed_jobs, unplaced_jobs)


def _plan_period(h: _Horizon, t: int, sub: ProgressFn) -> None:
    """One step of the rolling horizon: demand, GPUs, backbone, then the period's figures."""
    from backbone.solver.failures.impact import assess_state

    t0 = time.perf_counter()
    work = _period_network(h, t)
    sub(0.02, "placing GPUs")
    placed = _place_gpus(h, work, t)
    sub(0.25, "designing the backbone")
    t_design = time.perf_counter()
    _, _, fail_opts, design_opts = h.stages
    warm = h.periods[-1].design.binding_states if h.periods else []
    factor = h.clock.design_factor(t, t0, design_opts.time_limit_s, PERIOD_DESIGN_BUDGET_FACTOR)
    design = design_period(placed.routed, h.opts, t, h.labels, h.kind, fail_opts, design_opts, h.budgets,
                           h.committed, lambda f, m: sub(0.25 + 0.6 * f, m), warm_states=warm, budget_factor=factor)
    record = design.record(seconds=round(time.perf_counter() - t_design, 3),
                           budget_s=round(factor * float(design_opts.time_limit_s), 3))  # the clock's share
    after = design.network
    for b in design.builds:
        h.committed[b.committed_index] += b.cost_usd
        h.builds.append(b)
    # the period's figures (one definition of utilisation and unmet: assess_state)
    sub(0.9, "assessing the built network")
    te_opts = h.stages[1]
    st = assess_state(after, te_opts.k_paths, te_opts.backend, te_opts.time_limit_s)
    h.periods.append(_period_record(h, t, work, after, placed, design, record, st, t0))
    h.networks.append(after)
    h.utilisation.append(st.link_utilisation.astype(float))
    h.state = after
    h.clock.spent_s.append(time.perf_counter() - t0)
    logger.info("roadmap %s: %s, %d builds, %.1f s", h.labels[t], design.mode, len(design.builds),
                time.perf_counter() - t0)


def _period_record(h: _Horizon, t: int, work: Network, after: Network, placed: _Placed, design: PeriodOutcome,
                   record: PeriodDesign, st: Any, t0: float) -> PeriodRecord:
    """The record of period ``t`` (its capex committed is filled from the ledger at the end: :func:`_finish`)."""
    from backbone.solver.failures.impact import survive_tolerance_gbps

    opts, place_res = h.opts, placed.result
    metros_t = place_res.tables["metros"]
    period_builds = [b for b in h.builds if b.online_index == t]
    gpu_note, gpu_short = placed.note, placed.shortfall_usd
    return PeriodRecord(
        period=h.labels[t],
        index=t,
        capex_usd=0.0,  # filled from the ledger (capex is charged when committed)
        capex_online_usd=float(sum(b.cost_usd for b in period_builds)),
        opex_usd=_gpu_opex_per_year(after, h.gpus, h.stages[0]) * opts.years_per_period,
        served_share=finite_or_none(place_res.totals.get("served_share")),
        unserved_gpus=float(metros_t["unserved_gpus"].sum()) if len(metros_t) else 0.0,
        mlu=finite_or_none(st.mlu),
        unmet_gbps=float(st.unmet_total_gbps),  # NaN when not measured: never read as 0
        unmet_tolerance_gbps=survive_tolerance_gbps(after),
        demand_gbps=float(after.demands["demand_gbps"].sum()),
        inference_gpus_demand=float(work.metros["inference_gpus"].sum()) if len(work.metros) else 0.0,
        gpus_installed=float(after.sites["gpus_installed"].sum()),
        gpus_added_by_site={str(k): float(v) for k, v in placed.added.items()},
        gpu_note=gpu_note,
        builds=[b.view() for b in period_builds if b.action in NETWORK_BUILD_ACTIONS],
        gpu_builds=[GpuBuild(site=b.site_a, gpus=b.gpus, cost_usd=b.cost_usd, committed=b.committed, online=b.online)
                    for b in period_builds if b.action == "gpus"],
        replicas_built=[ReplicaBuilt(dataset=b.site_b, site=b.site_a, cost_usd=b.cost_usd)
                        for b in period_builds if b.action == "replica"],
        jobs_placed=placed.jobs_placed,
        jobs_unplaced=placed.jobs_unplaced,
        survivability=design.survivability,
        design=record,
        placement_model=dict(place_res.stats),
        placement_seconds=round(placed.seconds, 3),
        placement_status=str(place_res.status),
        placement_gap=finite_or_none(place_res.gap),
        budget_shortfall_usd=float(design.shortfall_usd + gpu_short),
        budget_note="; ".join(x for x in (gpu_note if gpu_short > 0 else "", design.budget_note) if x),
        discount_factor=(1.0 + opts.discount_rate_per_year) ** (-t * opts.years_per_period),
        seconds=round(time.perf_counter() - t0, 3),
    )


def _finish(h: _Horizon, net: Network, t_start: float, progress: ProgressFn) -> RoadmapResult:
    """The ledger, the builds table, the notes and the global bound: the roadmap as a result."""
    opts, labels, periods, committed = h.opts, h.labels, h.periods, h.committed
    available = budget_ledger(h.budgets, committed, opts.carry_over)
    ledger = pd.DataFrame({"period": labels, "budget_usd": h.budgets, "available_usd": available,
                           "committed_usd": committed,
                           "left_usd": [a - c for a, c in zip(available, committed, strict=True)]})
    cols = ["id", "action", "site_a", "site_b", "kind", "modules", "added_gbps", "gpus", "cost_usd",
            "lead_time_quarters", "committed", "online", "committed_index", "online_index", "available_from"]
    table = pd.DataFrame([b.model_dump() for b in h.builds], columns=cols)
    by_commit = {what: np.bincount(table.loc[rows, "committed_index"].to_numpy(np.int64),
                                   weights=table.loc[rows, "cost_usd"].to_numpy(float), minlength=len(labels))
                 for what, rows in (("gpu", table["action"] == "gpus"),
                                    ("network", table["action"].isin(NETWORK_BUILD_ACTIONS)),
                                    ("storage", table["action"] == "replica"))}
    periods = [p.model_copy(update={  # GPU blocks, replica storage and the backbone, committed in this period
        "capex_usd": float(c), "gpu_capex_usd": float(by_commit["gpu"][t]),
        "network_capex_usd": float(by_commit["network"][t]), "storage_capex_usd": float(by_commit["storage"][t])})
        for t, (p, c) in enumerate(zip(periods, committed, strict=True))]
    notes = [f"{p.period}: design {p.design.mode}: {p.design.solver_note}" for p in periods if p.design.solver_note]
    up = opts.lead_periods(opts.upgrade_lead_quarters)
    why = (f"a link upgrade takes {opts.upgrade_lead_quarters} quarter(s) from order to service and nothing may be "
           f"ordered before {labels[0]}") if up > 0 else ""
    risk = starting_risk_record(labels, [p.survivability for p in periods], labels[:up], why)
    if risk is not None:
        notes.append(risk.text)
    if up > 0 and (risk is None or not risk.nothing_online):
        notes.append(f"Nothing can be online before {labels[min(len(labels) - 1, up)]}: {why}.")
    limit_s = h.clock.bound_limit_s()
    progress(0.99, f"bounding the whole roadmap (one LP over every period; time limit {limit_s:.0f} s)")
    bound = _global_bound(net, opts, h.networks, periods, table, h.kind, h.stages[2], h.stages[3], limit_s)
    progress(1.0, "roadmap planned")
    return RoadmapResult(opts, labels, periods, table, h.networks, ledger, time.perf_counter() - t_start,
                         net.name, net.fingerprint(), notes, h.utilisation, bound, risk,
                         h.clock.time_budget(None if bound is None else bound.seconds))


def _global_bound(net: Network, opts: RoadmapOptions, networks: list[Network], periods: list[PeriodRecord],
                  builds: pd.DataFrame, kind: str, fail_opts: Any, design_opts: Any,
                  bound_s: float) -> RoadmapBound | None:
    """The LP bound over every period (:mod:`backbone.solver.roadmap.bound`) within ``bound_s`` s; None when off."""
    if opts.bound_time_limit_s <= 0:
        return None
    gpu = builds[~builds["action"].isin(NETWORK_BUILD_ACTIONS)]  # the placement's: GPU blocks and replica storage
    gpu_committed = np.bincount(gpu["committed_index"].to_numpy(np.int64), weights=gpu["cost_usd"].to_numpy(float),
                                minlength=len(networks)) if len(gpu) else np.zeros(len(networks))
    # the period MIPs add states this roadmap carries, never its excused or violated ones (the bound must cover it)
    not_carried = [frozenset([*(e.scenario for e in p.survivability.not_survivable), *p.survivability.violated])
                   for p in periods]
    separation = StateSeparation(kind, quick_sweep_options(fail_opts, kind), not_carried)
    try:
        return roadmap_lower_bound(
            net, opts, networks, [p.design.working_set for p in periods], gpu_committed.tolist(), kind,
            int(fail_opts.k_paths), float(design_opts.utilisation_ceiling), float(design_opts.failure_utilisation_ceiling),
            use_candidates=bool(design_opts.candidates), backend=str(design_opts.backend),
            time_limit_s=float(bound_s), separation=separation)
    except SolverError as exc:
        return RoadmapBound(lower_bound_usd=None, status="error", covers="not computed: the solver failed",
                            note=str(exc))


def _gpu_opex_per_year(net: Network, gpus: pd.Series, place_opts: Any) -> float:
    """Energy (and carbon) cost per year of the GPUs the roadmap added so far."""
    s = net.sites.reindex(gpus.index)
    mwh_per_gpu_year = place_opts.kw_per_gpu / 1000.0 * 8760.0
    price = s["power_price_usd_per_mwh"].to_numpy(float) + \
        place_opts.carbon_price_usd_per_t * s["carbon_kg_per_mwh"].to_numpy(float) / 1000.0
    return float((gpus.to_numpy(float) * mwh_per_gpu_year * price).sum())
