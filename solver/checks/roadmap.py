"""Independent check of a roadmap: lead times, ready-for-service dates, budgets, capacity, demand, survival.

The check reads only the scenario as it is today, the roadmap's options, the roadmap's summary
(``roadmap.json``: its builds, ledger and per-period claims) and the per-period scenarios
(``periods/<period>/scenario``, or the networks in memory). It recomputes from them, never from the
planner's internals:

- ``lead_time``: every build is committed in a period of the roadmap (not before the first) and online
  at least ``ceil(lead / quarters per period)`` periods later (lead from the candidates table, or the
  options' upgrade / GPU lead), and a candidate not before its ``available_from`` quarter;
- ``build_cost``: each backbone build's cost from the scenario's module and fixed costs;
- ``budget``: capex per commit period within its budget plus the carried-over share of what the period
  before left;
- ``capacity_never_shrinks``: no link, capacity or GPU of one period is gone in the next;
- ``capacity_matches_builds``: each period's capacity is today's plus the builds online by then;
- ``demand``: each period's scenario carries today's demands grown to the period;
- ``replicas_persist``: a dataset replica built in a period is a home of its dataset in every later period;
- ``survivability``: each period's scenario re-swept from scratch by the plan's independent checker
  (:func:`backbone.solver.checks.survivability.check_survivability`, its own arc-flow LP over every path,
  :mod:`backbone.solver.checks.edge_flow`): every state the roadmap claims survived is carried; every state it
  excuses loses exactly the Gbps it excuses, and its stated reason holds on the most any roadmap could have
  online in that period (:func:`online_limit`: every candidate route the period may have -- lead time from the
  first period and ready-for-service date, read from today's candidates table -- at its ``max_modules``, every
  link at its ``max_capacity_gbps`` once an upgrade can be online, at today's capacity before); a state the
  roadmap admits *violated* is re-measured but not held to an excuse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pydantic

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.quarters import quarter_number
from backbone.solver.checks import CheckReport, Violation
from backbone.solver.core.progress import ProgressFn, no_progress
from backbone.solver.design.survivable.survivability import Survivability
from backbone.solver.roadmap.records import RoadmapBuild

if TYPE_CHECKING:
    from backbone.solver.roadmap.summary import RoadmapSummary

__all__ = ["check_roadmap", "online_limit"]

TOL_USD = 1.0
TOL_REL = 1e-6


def check_roadmap(net: Network, options: Any, summary: RoadmapSummary | Mapping[str, Any],
                  networks: Sequence[Network] | str | Path, survivability: bool = True,
                  progress: ProgressFn | None = None) -> CheckReport:
    """Check a roadmap (see the module doc).

    Parameters
    ----------
    net
        The scenario the roadmap was planned from.
    options
        Its :class:`~backbone.solver.roadmap.options.RoadmapOptions` (or a mapping of them).
    summary
        The roadmap's summary: its ``roadmap.json`` document, or the
        :class:`~backbone.solver.roadmap.summary.RoadmapSummary` it is dumped from. Only its builds and each
        period's survivability are read (as :class:`~backbone.solver.roadmap.records.RoadmapBuild` and
        :class:`~backbone.solver.design.survivable.survivability.Survivability` records).
    networks
        The per-period networks, or the roadmap's output folder (``periods/<period>/scenario`` is read).
    survivability
        Re-sweep every period's scenario (the slow part).

    Returns
    -------
    CheckReport
        ``ok`` when nothing is violated.

    Raises
    ------
    ValidationError
        When a document's builds or survivability records are malformed (each problem names the record and field).
    """
    progress = progress or no_progress
    opts = _options(options)
    labels = opts.labels()
    nets = _networks(networks, labels)
    report = CheckReport("roadmap")
    builds, claims = _claims(summary)
    index = {label: i for i, label in enumerate(labels)}
    committed = _check_lead_times(report, net, opts, builds, index)
    _check_build_costs(report, net, builds)
    _check_budgets(report, opts, committed)
    _check_capacity(report, net, nets, builds, labels, index)
    _check_demand(report, net, nets, opts)
    _check_replicas(report, builds, nets, labels, index)
    if survivability:
        _check_survivability(report, net, nets, opts, claims, progress)
    progress(1.0, "checked")
    return report


def _options(options: Any) -> Any:
    from backbone.solver.roadmap.options import RoadmapOptions

    try:
        return options if isinstance(options, RoadmapOptions) else RoadmapOptions.model_validate(dict(options or {}))
    except pydantic.ValidationError as exc:
        raise ValidationError([Problem(e["msg"], table="options", field=".".join(str(x) for x in e["loc"]))
                               for e in exc.errors()]) from None


def _claims(summary: RoadmapSummary | Mapping[str, Any]) -> tuple[list[RoadmapBuild], list[Survivability]]:
    """The summary's builds and each period's survivability, read from a document as typed records.

    Raises
    ------
    ValidationError
        Naming each malformed record (``builds`` and its id or row, ``periods`` and its label) and field.
    """
    from backbone.solver.roadmap.summary import RoadmapSummary

    if isinstance(summary, RoadmapSummary):
        return list(summary.builds), [p.survivability for p in summary.periods]
    problems: list[Problem] = []

    def read(model: Any, data: Any, table: str, record: str, prefix: str = "") -> Any:
        try:
            return model.model_validate(data)
        except pydantic.ValidationError as exc:
            problems.extend(Problem(e["msg"], file="roadmap.json", table=table, record=record,
                                    field=".".join(([prefix] if prefix else []) + [str(x) for x in e["loc"]]))
                            for e in exc.errors())
            return None

    builds = [read(RoadmapBuild, b, "builds", str(b.get("id", f"row {i}")) if isinstance(b, Mapping) else f"row {i}")
              for i, b in enumerate(summary.get("builds") or [])]
    claims = [read(Survivability, p.get("survivability") if isinstance(p, Mapping) else None, "periods",
                   str(p.get("period", f"row {i}")) if isinstance(p, Mapping) else f"row {i}", "survivability")
              for i, p in enumerate(summary.get("periods") or [])]
    if problems:
        raise ValidationError(problems)
    return builds, claims


def _networks(networks: Sequence[Network] | str | Path, labels: list[str]) -> list[Network]:
    if isinstance(networks, str | Path):
        from backbone.io import load_scenario

        root = Path(networks)
        return [load_scenario(root / "periods" / label / "scenario") for label in labels]
    return list(networks)


def _check_lead_times(report: CheckReport, net: Network, opts: Any, builds: list[RoadmapBuild],
                      index: dict[str, int]) -> list[float]:
    """``lead_time`` and ``rfs``; returns the capex committed per period (for the budgets)."""
    labels = opts.labels()
    cands = net.candidates
    report.checked.append("lead_time")
    committed = [0.0] * len(labels)
    for b in builds:
        bid, action = str(b.id), str(b.action)
        c, o = index.get(str(b.committed)), index.get(str(b.online))
        if c is None or o is None:
            report.add(Violation("lead_time", "builds", bid, f"committed {b.committed} / online {b.online}: "
                                 f"not periods of the roadmap ({labels[0]} .. {labels[-1]})"))
            continue
        committed[c] += float(b.cost_usd)
        if action == "new route":
            if bid not in cands.index:
                report.add(Violation("lead_time", "builds", bid, "not a candidate of the scenario"))
                continue
            lead = int(cands.at[bid, "lead_time_quarters"])
            rfs = str(cands.at[bid, "available_from"] or "").strip()
            if rfs and opts.first_quarter(o) < quarter_number(rfs):
                report.add(Violation("rfs", "builds", bid, f"online {labels[o]} before its ready-for-service "
                                     f"quarter {rfs}"))
        elif action == "upgrade":
            lead = opts.upgrade_lead_quarters
        elif action == "replica":  # storage for a dataset replica: bought by the placement, no lead time
            lead = 0
        else:
            lead = opts.gpu_lead_quarters
        need = math.ceil(lead / opts.quarters_per_period)
        if o - c < need:
            report.add(Violation("lead_time", "builds", bid, f"committed {labels[c]}, online {labels[o]}: "
                                 f"{o - c} period(s) < lead time {lead} quarter(s)", value=o - c, limit=need))
    return committed


def _check_build_costs(report: CheckReport, net: Network, builds: list[RoadmapBuild]) -> None:
    """``build_cost``: each backbone build's cost from the scenario's own costs (a dataset replica's: its PB at the
    site's storage cost)."""
    report.checked.append("build_cost")
    links, cands = net.links, net.candidates
    for b in builds:
        bid, action = str(b.id), str(b.action)
        if action == "new route" and bid in cands.index:
            cost = float(cands.at[bid, "fixed_cost_usd"]) + int(b.modules) * float(cands.at[bid, "module_cost_usd"])
        elif action == "upgrade" and bid in links.index:
            cost = int(b.modules) * float(links.at[bid, "module_cost_usd"])
        elif action == "upgrade" and bid in cands.index:  # a route built earlier in the roadmap, upgraded
            cost = int(b.modules) * float(cands.at[bid, "module_cost_usd"])
        elif action == "replica" and b.site_b in net.datasets.index and b.site_a in net.sites.index:
            cost = float(net.datasets.at[b.site_b, "size_pb"]) * float(
                net.sites.at[b.site_a, "storage_cost_usd_per_pb"])
        else:
            continue
        if abs(cost - float(b.cost_usd)) > TOL_USD + TOL_REL * cost:
            report.add(Violation("build_cost", "builds", bid, f"costs {cost:,.0f} USD from the scenario's costs, "
                                 f"the roadmap says {float(b.cost_usd):,.0f}", value=float(b.cost_usd),
                                 limit=cost))


def _check_budgets(report: CheckReport, opts: Any, committed: list[float]) -> None:
    """``budget``: capex per commit period within its budget plus the carried-over share."""
    report.checked.append("budget")
    left = 0.0
    for t, (label, budget) in enumerate(zip(opts.labels(), opts.budgets(), strict=True)):
        available = budget + opts.carry_over * left
        if committed[t] > available + TOL_USD:
            report.add(Violation("budget", "ledger", label, f"{committed[t]:,.0f} USD committed, "
                                 f"{available:,.0f} USD available", value=committed[t], limit=available))
        left = max(0.0, available - committed[t]) if math.isfinite(available) else math.inf


def _check_capacity(report: CheckReport, net: Network, nets: list[Network], builds: list[RoadmapBuild],
                    labels: list[str], index: dict[str, int]) -> None:
    """``capacity_never_shrinks`` and ``capacity_matches_builds`` (today's plus the builds online by then)."""
    report.checked += ["capacity_never_shrinks", "capacity_matches_builds"]
    prev = net
    for t, (label, cur) in enumerate(zip(labels, nets, strict=True)):
        _check_shrink(report, prev, cur, label)
        expect, gpus = _expected_capacity(net, builds, index, t)
        have = cur.links["capacity_gbps"].astype(float)
        both = expect.index.union(have.index)
        diff = have.reindex(both).fillna(0.0) - expect.reindex(both).fillna(0.0)
        for lid, v in diff[diff.abs() > 1e-3].items():
            report.add(Violation("capacity_matches_builds", "links", f"{label}:{lid}",
                                 f"capacity {have.get(lid, 0.0):,.1f} Gbps, today's plus the builds online by "
                                 f"{label} give {expect.get(lid, 0.0):,.1f}", value=float(v)))
        gdiff = cur.sites["gpus_installed"].astype(float) - gpus.reindex(cur.sites.index).fillna(0.0)
        for sid, v in gdiff[gdiff.abs() > 0.5].items():
            report.add(Violation("capacity_matches_builds", "sites", f"{label}:{sid}",
                                 f"{v:+,.0f} GPUs against today's plus the blocks online by {label}"))
        prev = cur


def _check_shrink(report: CheckReport, prev: Network, cur: Network, label: str) -> None:
    gone = prev.links.index.difference(cur.links.index)
    for lid in gone[:20]:
        report.add(Violation("capacity_never_shrinks", "links", f"{label}:{lid}", "link removed"))
    common = prev.links.index.intersection(cur.links.index)
    drop = prev.links.loc[common, "capacity_gbps"] - cur.links.loc[common, "capacity_gbps"]
    for lid, v in drop[drop > 1e-6].items():
        report.add(Violation("capacity_never_shrinks", "links", f"{label}:{lid}",
                             f"capacity falls by {v:,.1f} Gbps", value=float(v)))
    g = prev.sites["gpus_installed"] - cur.sites["gpus_installed"].reindex(prev.sites.index).fillna(0)
    for sid, v in g[g > 0].items():
        report.add(Violation("capacity_never_shrinks", "sites", f"{label}:{sid}", f"{v:,.0f} GPUs removed"))


def _expected_capacity(net: Network, builds: list[RoadmapBuild], index: dict[str, int],
                       t: int) -> tuple[pd.Series, pd.Series]:
    """Link capacity and GPUs of today's scenario plus the builds online by period ``t``."""
    cands = net.candidates
    expect = net.links["capacity_gbps"].astype(float).copy()
    gpus = net.sites["gpus_installed"].astype(float).copy()
    for b in builds:
        o = index.get(str(b.online))
        if o is None or o > t:
            continue
        if b.action == "replica":  # storage, no capacity (_check_replicas)
            continue
        if b.action == "gpus":
            gpus[str(b.site_a)] = gpus.get(str(b.site_a), 0.0) + float(b.gpus)
        elif b.action == "new route" and str(b.id) in cands.index:
            expect[str(b.id)] = expect.get(str(b.id), 0.0) + int(b.modules) * float(
                cands.at[str(b.id), "module_gbps"])
        else:
            expect[str(b.id)] = expect.get(str(b.id), 0.0) + float(b.added_gbps)
    return expect, gpus


def _check_demand(report: CheckReport, net: Network, nets: list[Network], opts: Any) -> None:
    """``demand``: each period's scenario carries today's demands grown to the period."""
    report.checked.append("demand")
    base = net.demands
    region = net.sites["region"].reindex(base["src"]).to_numpy()
    for t, (label, cur) in enumerate(zip(opts.labels(), nets, strict=True)):
        years = t * opts.years_per_period
        rate = np.array([opts.growth_per_year.get(str(r), 0.0) * opts.class_growth_factor.get(str(c), 1.0)
                         for r, c in zip(region, base["traffic_class"], strict=True)])
        want = base["demand_gbps"].to_numpy(float) * (1.0 + rate) ** years
        have = cur.demands["demand_gbps"].reindex(base.index).to_numpy(float)
        bad = ~(np.abs(np.nan_to_num(have, nan=-1.0) - want) <= 1e-6 + 1e-6 * want)
        for i in np.flatnonzero(bad)[:20]:
            report.add(Violation("demand", "demands", f"{label}:{base.index[i]}",
                                 f"{have[i]:,.3f} Gbps in the period's scenario, today's grown to {label} is "
                                 f"{want[i]:,.3f}", value=float(np.nan_to_num(have[i])), limit=float(want[i])))


def _check_replicas(report: CheckReport, builds: list[RoadmapBuild], nets: list[Network], labels: list[str],
                    index: dict[str, int]) -> None:
    """``replicas_persist``: a dataset replica built in period ``t`` is a home of its dataset in the scenario of
    every period from ``t`` on (built once, kept: later periods read the dataset there)."""
    report.checked.append("replicas_persist")
    for b in builds:
        o = index.get(str(b.online))
        if b.action != "replica" or o is None:
            continue
        dataset, site = str(b.site_b), str(b.site_a)
        for t in range(o, len(nets)):  # the periods after the replica's (a handful)
            homes = nets[t].datasets["home_sites"].get(dataset, ()) if len(nets[t].datasets) else ()
            if site not in tuple(homes):
                report.add(Violation("replicas_persist", "datasets", f"{labels[t]}:{dataset}",
                                     f"the replica built at {site} in {labels[o]} is not a home of {dataset} in "
                                     f"{labels[t]} (homes: {', '.join(map(str, homes)) or 'none'})"))


def online_limit(net: Network, today: Network, opts: Any, t: int) -> Network:
    """Period ``t``'s network ``net`` restricted to what any roadmap could have online then: the candidate routes
    of ``today`` whose lead time (ordered no earlier than the first period) and ready-for-service quarter allow
    period ``t`` (the others dropped), and, before an upgrade ordered in the first period can be online, every
    link's ``max_capacity_gbps`` held at its capacity. Read from today's candidates table and the options alone."""
    from dataclasses import replace

    cands = net.candidates
    if len(cands):
        lead = today.candidates["lead_time_quarters"].reindex(cands.index).fillna(
            cands["lead_time_quarters"]).astype(int)
        rfs = today.candidates["available_from"].reindex(cands.index).fillna(cands["available_from"])
        late = [str(c) for c, q, r in zip(cands.index, lead, rfs, strict=True)
                if t < math.ceil(int(q) / opts.quarters_per_period)
                or (str(r or "").strip() and opts.first_quarter(t) < quarter_number(str(r)))]
        net = net.drop_candidates(late)
    if t < math.ceil(opts.upgrade_lead_quarters / opts.quarters_per_period):
        net = replace(net, links=net.links.assign(max_capacity_gbps=net.links["capacity_gbps"].astype(float)))
    return net


def _check_survivability(report: CheckReport, today: Network, nets: list[Network], opts: Any,
                         claims: list[Survivability], progress: ProgressFn) -> None:
    """``survivability``: every period's scenario re-swept by the independent edge LP; every state claimed survived
    is carried, every excused state loses exactly its excused Gbps and its reason holds on what the period could
    have online (:func:`online_limit`); violated states are re-measured, not held to an excuse."""
    from backbone.solver.checks.survivability import check_survivability

    report.checked.append("survivability")
    labels = opts.labels()
    n_excused = 0
    for t, (label, cur, sv) in enumerate(zip(labels, nets, claims, strict=True)):
        progress(t / len(labels), f"re-sweeping {label}")
        violated = set(sv.violated)
        excused = [x.model_dump() for x in sv.not_survivable]  # records {scenario, reason, gbps}
        n_excused += len(excused)
        sub = check_survivability(online_limit(cur, today, opts, t), sv.failure_kind,
                                  excused + sorted(violated))
        for v in sub.violations:
            if v.id in violated and v.check == "excuse_reason":  # admitted violated: a design could carry it
                continue
            report.add(Violation("survivability" if v.check == "state_carried" else v.check, "scenarios",
                                 f"{label}:{v.id}", v.message, v.value, v.limit))
    report.count("excused_states", n_excused)
