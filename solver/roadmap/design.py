"""One period's backbone step of the roadmap: the survivable design within what can be online and what the
budget allows (:func:`design_period`), with its fallbacks (the intact-state design, then nothing).

Only what can be online in period ``t`` is offered: link upgrades when ``t >= ceil(upgrade_lead / qpp)``;
candidates whose ``lead_time_quarters`` allows an order at or after the first period and whose
``available_from`` (ready-for-service quarter) is not after the period's first quarter. Each build is
committed ``ceil(lead / qpp)`` periods before ``t`` and its capex charged to that period's budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from backbone.errors import InfeasibleError, SolverError
from backbone.model import Network
from backbone.quarters import quarter_number
from backbone.solver.core.progress import ProgressFn
from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.roadmap.budget import adds_no_overshoot, affordable
from backbone.solver.roadmap.options import RoadmapOptions
from backbone.solver.roadmap.records import PeriodDesign, RestrictedBound, RoadmapBuild

__all__ = ["PERIOD_DESIGN_BUDGET_FACTOR", "SOLVER_RETRY_FACTORS", "PeriodOutcome", "design_period", "period_bounds",
           "quick_sweep_options", "restore_network", "sweep_survivability"]

PERIOD_DESIGN_BUDGET_FACTOR = 4.0
"""Wall-clock budget of a period's survivable design in multiples of ``design.time_limit_s``. Every iteration
sweeps all the states (8 s on an idle 2-core machine, 20-30 s on a busy one); four times the 15 s default
lets a period whose new routes move TE's paths onto a state not yet modelled run its second iteration."""

SOLVER_RETRY_FACTORS = (1.0, 4.0)
"""A period's design that finds no solution within ``time_limit_s`` is tried again with 4 x the limit; if that
fails too, the period builds the intact-state design (or nothing) and says why (``design.solver_note``)."""


@dataclass
class _Offer:
    """What the period's design may build: its network (upgrades capped, unready candidates dropped)."""

    network: Network
    offered: list[str]
    withheld: int
    upgrades: bool

    @property
    def buildable(self) -> bool:
        return self.upgrades or bool(self.offered)


def _offer(routed: Network, opts: RoadmapOptions, t: int) -> _Offer:
    """Upgrades only once one ordered in the first period can be online; candidates after their lead time and
    not before their ready-for-service quarter."""
    links0 = routed.links
    up_c = t - opts.lead_periods(opts.upgrade_lead_quarters)
    dnet = routed
    if up_c < 0:  # no upgrade can be online yet
        dnet = replace(dnet, links=links0.assign(max_capacity_gbps=links0["capacity_gbps"]))
    cands = routed.candidates
    offered: list[str] = []
    if len(cands):
        lead_p = cands["lead_time_quarters"].map(opts.lead_periods)
        rfs_ok = cands["available_from"].map(
            lambda q: not str(q).strip() or quarter_number(str(q)) <= opts.first_quarter(t))
        ok = (t - lead_p >= 0) & rfs_ok
        offered = [str(c) for c in cands.index[ok]]
        dnet = dnet.drop_candidates([str(c) for c in cands.index[~ok]])
    return _Offer(dnet, offered, len(cands) - len(offered), up_c >= 0)


def _run_design(dnet: Network, survive: str, fail_opts: Any, design_opts: Any, progress: ProgressFn,
                notes: list[str], warm_states: Sequence[str] = (),
                budget_factor: float = PERIOD_DESIGN_BUDGET_FACTOR) -> Any | None:
    """The survivable design (``survive``: a failure kind or ``none``), retried with a longer time limit
    (:data:`SOLVER_RETRY_FACTORS`); each failure is noted in ``notes``, and ``None`` when every try failed.
    ``warm_states`` start its working set (the states the previous period's design found binding); its wall-clock
    budget is ``budget_factor`` times ``design.time_limit_s`` (the roadmap's clock sets it)."""
    from backbone.solver.design.survivable.iterate import design_survivable

    limit = float(design_opts.time_limit_s)
    sweeps: dict[str, Any] = {}  # a retry sweeps the same network: the first try's sweeps are reused
    for factor in SOLVER_RETRY_FACTORS:
        try:
            return design_survivable(
                dnet, design_opts.survive_options(survive, fail_opts.k_paths, time_limit_s=limit * factor).model_copy(
                    update={"bound_time_limit_s": 0.0}),  # the roadmap's own bound covers every period
                sweep_options=fail_opts, initial_states=warm_states, budget_factor=budget_factor / factor,
                progress=progress, sweeps=sweeps)
        except SolverError as exc:
            notes.append(f"{survive} design with {limit * factor:g} s per solve: {exc}")
    return None


def _build_rows(upgrades: pd.DataFrame, cands: pd.DataFrame, opts: RoadmapOptions, t: int,
                labels: list[str]) -> list[RoadmapBuild]:
    """The design's upgrades as roadmap builds: online in ``t``, committed their lead time earlier."""
    rows = []
    for r in upgrades.to_dict("records"):
        new = r["action"] == "new route"
        lead = int(cands.at[r["link"], "lead_time_quarters"]) if new else opts.upgrade_lead_quarters
        c = t - opts.lead_periods(lead)
        rows.append(RoadmapBuild(
            id=str(r["link"]), action=str(r["action"]), site_a=str(r["site_a"]), site_b=str(r["site_b"]),
            kind=str(r["kind"]), modules=int(r["modules"]), added_gbps=float(r["added_gbps"]), gpus=0.0,
            cost_usd=float(r["cost_usd"]), lead_time_quarters=lead, committed=labels[c], online=labels[t],
            committed_index=c, online_index=t,
            available_from=str(cands.at[r["link"], "available_from"]) if new else ""))
    return rows


def _fits(rows: list[RoadmapBuild], budgets: list[float], committed: list[float], carry: float) -> bool:
    trial = list(committed)
    for b in rows:
        trial[b.committed_index] += b.cost_usd
    return adds_no_overshoot(budgets, committed, trial, carry)


def _survivability_of(res: Any, withheld: int, label: str) -> Survivability:
    """The period design's survivability, its excuses naming the candidates that cannot be online yet."""
    sv: Survivability = res.survivability()
    if withheld:  # "even with every candidate built" means every candidate that can be online by now
        note = f"; {withheld} candidate route(s) cannot be online by {label} (lead time or ready-for-service date)"
        sv = sv.model_copy(update={"not_survivable": [x.model_copy(update={"reason": x.reason + note})
                                                      for x in sv.not_survivable]})
    return sv


@dataclass(frozen=True)
class PeriodOutcome:
    """A period's backbone step (:func:`design_period`): what it built, the network after, its survivability and
    the figures of its record (:meth:`record`).

    Attributes
    ----------
    network
        The network after the builds.
    survivability
        The failure states that network carries, excuses and violates.
    mode
        What was built: ``survivable``, ``intact only (budget)``, ``nothing buildable``, ``nothing built (budget)`` ...
    builds
        The roadmap builds, online in the period.
    candidates_offered, upgrades_offered
        The candidate routes that could be online in the period, and whether link upgrades could.
    working_set
        The failure states the survivable design modelled; ``binding_states`` those its builds protect.
    shortfall_usd, budget_note, solver_note
        What the budget or the solver left undone, and why.
    """

    network: Network
    survivability: Survivability
    mode: str
    status: str
    cost_usd: float
    lower_bound_usd: float | None
    gap: float | None
    candidates_offered: int
    upgrades_offered: bool
    restricted_optimum: RestrictedBound | None = None
    builds: list[RoadmapBuild] = field(default_factory=list)
    shortfall_usd: float = 0.0
    budget_note: str = ""
    solver_note: str = ""
    states_added: int = 0
    iterations: int = 0
    working_set: list[str] = field(default_factory=list)
    binding_states: list[str] = field(default_factory=list)
    model: dict[str, int] = field(default_factory=dict)

    def record(self, seconds: float, budget_s: float) -> PeriodDesign:
        """The period record's ``design``, with the design's wall-clock ``seconds`` and the clock's ``budget_s``."""
        return PeriodDesign(
            mode=self.mode, status=self.status, cost_usd=self.cost_usd, lower_bound_usd=self.lower_bound_usd,
            gap=self.gap, restricted_optimum=self.restricted_optimum, iterations=self.iterations,
            states_added=self.states_added, working_set=self.working_set, binding_states=self.binding_states,
            candidates_offered=self.candidates_offered, upgrades_offered=self.upgrades_offered, model=self.model,
            seconds=seconds, budget_s=budget_s, solver_note=self.solver_note)


@dataclass
class _Trial:
    """What a period's design tried before its fallback: the survivable design's working set and binding states,
    the budget's shortfall and note, and the solver's notes."""

    offer: _Offer
    working_set: list[str] = field(default_factory=list)
    binding_states: list[str] = field(default_factory=list)
    shortfall_usd: float = 0.0
    budget_note: str = ""
    notes: list[str] = field(default_factory=list)


def design_period(routed: Network, opts: RoadmapOptions, t: int, labels: list[str], kind: str, fail_opts: Any,
                  design_opts: Any, budgets: list[float], committed: list[float],
                  progress: ProgressFn, warm_states: Sequence[str] = (),
                  budget_factor: float = PERIOD_DESIGN_BUDGET_FACTOR) -> PeriodOutcome:
    """The period's backbone step: survivable design within what can be online and what the budget allows.

    ``warm_states`` (the failure states the previous period's builds protect: capacity persists and demand grows,
    so where capacity was tight then it likely is again) are in the design's working set from its first MIP on,
    which saves iterations (each a sweep of every state); any working set gives a valid bound. ``budget_factor``:
    the design's wall-clock budget in multiples of ``design.time_limit_s`` (the roadmap's clock's share).

    Returns the :class:`PeriodOutcome`: ``mode``, ``status``, ``cost_usd``, the bounds, ``builds`` (roadmap
    builds), ``network`` (after the builds), ``survivability``, ``working_set`` (the failure states the survivable
    design modelled), ``binding_states`` (those its builds protect), ``shortfall_usd``, ``budget_note`` and
    ``solver_note``.
    """
    offer = _offer(routed, opts, t)
    if not offer.buildable:
        return PeriodOutcome(routed, sweep_survivability(routed, kind, fail_opts), "nothing buildable", "skipped",
                             0.0, 0.0, 0.0, len(offer.offered), offer.upgrades)
    trial = _Trial(offer)
    res: Any = None
    try:
        res = _run_design(offer.network, kind, fail_opts, design_opts, progress, trial.notes, warm_states,
                          budget_factor)
    except InfeasibleError as exc:
        trial.budget_note = f"survivable design infeasible: {exc}"
    if res is not None:
        trial.working_set = list(res.working_set)  # binding whether or not the budget lets the design be built
        # the states the design's builds protect: the next period's warm start (its capacity is tight in them)
        trial.binding_states = sorted({str(x) for p in res.upgrades["protects"] for x in p} - {"intact"}) \
            if len(res.upgrades) else []
        rows = _build_rows(res.upgrades, routed.candidates, opts, t, labels)
        if _fits(rows, budgets, committed, opts.carry_over):
            # the mode says what was built, and never "survivable" for a design that stopped with violated states
            mode = "survivable" if res.status in ("optimal", "feasible") else f"survivable, {res.status.replace('_', ' ')}"
            lower, gap, restricted = period_bounds(res)
            return PeriodOutcome(
                restore_network(res.network_after, routed), _survivability_of(res, offer.withheld, labels[t]), mode,
                res.status, res.cost_usd, lower, gap, len(offer.offered), offer.upgrades, restricted, rows,
                solver_note="; ".join(trial.notes), states_added=len(res.working_set),
                iterations=len(res.iterations), working_set=trial.working_set, binding_states=trial.binding_states,
                model=dict(res.model))
        need = res.cost_usd
        trial.shortfall_usd = need - affordable(budgets, committed, opts.carry_over, rows)
        trial.budget_note = (f"{labels[t]}: the survivable design costs {need / 1e6:,.1f} M USD; the budgets of "
                             f"its commit periods ({', '.join(sorted({b.committed for b in rows}))}) allow "
                             f"{(need - trial.shortfall_usd) / 1e6:,.1f} M USD")
    return _intact_fallback(trial, routed, opts, t, labels, kind, fail_opts, design_opts, budgets, committed,
                            progress, why="budget" if res is not None else "solver")


def _intact_fallback(trial: _Trial, routed: Network, opts: RoadmapOptions, t: int, labels: list[str], kind: str,
                     fail_opts: Any, design_opts: Any, budgets: list[float], committed: list[float],
                     progress: ProgressFn, why: str) -> PeriodOutcome:
    """The cheapest design for the intact state when the survivable one does not fit (``why``: budget or
    solver); nothing when that does not fit either or finds no solution."""
    offer, notes = trial.offer, trial.notes
    intact = _run_design(offer.network, "none", fail_opts, design_opts, progress, notes)

    def outcome(network: Network, **figures: Any) -> PeriodOutcome:
        """The fallback's outcome on ``network`` (swept for its survivability) with what the trial found."""
        tried = PeriodOutcome(network, sweep_survivability(network, kind, fail_opts), "", "", 0.0, None, None,
                              len(offer.offered), offer.upgrades, shortfall_usd=trial.shortfall_usd,
                              budget_note=trial.budget_note, solver_note="; ".join(notes),
                              working_set=trial.working_set, binding_states=trial.binding_states)
        return replace(tried, **figures)

    if intact is None:
        return outcome(routed, mode="nothing built (solver)", status="time_limit")
    rows = _build_rows(intact.upgrades, routed.candidates, opts, t, labels)
    if _fits(rows, budgets, committed, opts.carry_over):
        lower, gap, restricted = period_bounds(intact)
        return outcome(restore_network(intact.network_after, routed), mode=f"intact only ({why})",
                       status=intact.status, cost_usd=intact.cost_usd, lower_bound_usd=lower, gap=gap,
                       restricted_optimum=restricted, builds=rows, iterations=len(intact.iterations),
                       model=dict(intact.model),
                       budget_note=trial.budget_note + ("; built the cheapest design for the intact state only"
                                                        if why == "budget" else ""))
    return outcome(routed, mode="nothing built (budget)", status="budget_limited", lower_bound_usd=0.0, gap=0.0,
                   shortfall_usd=max(trial.shortfall_usd, intact.cost_usd),
                   budget_note=trial.budget_note + (f"; even the intact-state design ({intact.cost_usd / 1e6:,.1f} M "
                                                    "USD) does not fit: nothing built"))


def period_bounds(res: Any) -> tuple[float | None, float | None, RestrictedBound]:
    """A period design's bounds, each named for what it is: ``(lower_bound_usd, gap, restricted_optimum)``; the
    first two the design's true bound (over every candidate and path; None when not computed: the roadmap's global
    bound covers every period), the third the MIP's own dual bound (:class:`RestrictedBound`), a bound only among
    the designs its restriction names (the candidates it opened, its ``k`` paths, its working set)."""
    r = res.restricted_optimum
    return res.lower_bound_usd, res.gap, RestrictedBound(bound_usd=r.bound_usd, gap=r.gap, status=r.status,
                                                         restriction=r.restriction)


def restore_network(after: Network, before: Network) -> Network:
    """``after`` with the pre-design ``max_capacity_gbps`` of existing links (the design may have capped
    it to forbid upgrades that cannot be online yet) and every candidate not built (the design saw only
    those that could be online in its period)."""
    links0 = before.links
    links = after.links.copy()
    common = links.index.intersection(links0.index)
    links.loc[common, "max_capacity_gbps"] = np.maximum(links0.loc[common, "max_capacity_gbps"].to_numpy(float),
                                                        links.loc[common, "capacity_gbps"].to_numpy(float))
    cands = before.candidates
    return replace(after, links=links, candidates=cands.loc[~cands.index.isin(links.index)])


def quick_sweep_options(fail_opts: Any, kind: str) -> Any:
    """The failure options of a quick sweep of ``kind`` (verdicts only: no shortfall, derate, scenario list or
    verification), from the roadmap's ``failures`` stage options."""
    return fail_opts.model_copy(update={"kind": kind, "shortfall": False, "derate": None, "scenarios": None,
                                        "verify": False})


def sweep_survivability(net: Network, kind: str, fail_opts: Any) -> Survivability:
    """The :class:`~backbone.solver.design.survivable.survivability.Survivability` of a network nothing was designed
    for: ``failure_kind``, ``states``, ``survived``, ``not_survivable``, ``violated``."""
    from backbone.solver.failures import SweepContext, enumerate_scenarios, run_sweep

    if kind == "none":  # the intact state only: no failure state to sweep
        return Survivability(failure_kind="none", states=0, survived=0, not_survivable=[], violated=[])
    sopts = quick_sweep_options(fail_opts, kind)
    scenarios = enumerate_scenarios(net, kind)  # type: ignore[arg-type]
    records = run_sweep(net, scenarios, sopts, None, SweepContext.build(net, sopts))
    from backbone.solver.plan.states import survivability_summary

    return survivability_summary(kind, None, records)
