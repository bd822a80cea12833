"""Independent check of a placement, from its OUTPUT TABLES and the network alone.

Nothing here reuses the placement formulation or its inputs: RTTs (networkx Dijkstra over the link
table), candidate sites, residency, demand and the N+1 property are all recomputed from the network and
the options; access sites come from the model's one access rule (:mod:`backbone.access`), which defines
them for the demand generator too.

Checked
-------
* every flow: known metro/class/site, a contiguous path from the metro's access site to the
  serving site, RTT ``2 x (access + path latency)`` within the class SLO (and as reported),
  residency, Gbps = GPUs x ``gbps_per_gpu``;
* demand: served per (period, metro, class) never above demand, and equal to it when the plan
  claims to serve everything;
* sites: GPUs after = before + added; whole blocks; minimum build; GPU maximum; GPUs used in
  every period (inference + training) within GPUs after; power needed within MW after, MW after
  within the cap; capex recomputed;
* network: per period and direction, placement Gbps (both directions) + the scenario demands as
  routed, within link capacity; scenario demands fully routed;
* training: jobs, dataset replicas and workload flows (:mod:`~backbone.solver.checks.workloads`), the
  flows' Gbps added to the network check;
* N+1 (when asked; less the per-failure shortfall a partial plan declares in its ``n_plus_one``
  table): for every candidate site removed, a max-flow from units (each unit's demand
  served in its own peak hour -- the hour the follow-the-sun profile peaks) to surviving sites (their GPUs after minus training) over SLO- and residency-admissible
  edges serves every unit in full -- an exact transport feasibility test per failure.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from backbone.access import access_sites
from backbone.model import Network, access_latency_ms
from backbone.solver.checks import CheckReport, Violation
from backbone.solver.checks.workloads import backbone_latency_ms, check_workloads
from backbone.solver.placement.options import DIURNAL_PROFILE, REGION_UTC_OFFSET_H, PlaceOptions

logger = logging.getLogger(__name__)


@dataclass
class _Facts:
    """What every family of checks shares: the result tables and what is recomputed from the network."""

    net: Network
    opts: PlaceOptions
    tables: dict[str, pd.DataFrame]
    expect_full: bool
    tol: float
    sites_t: pd.DataFrame
    flows: pd.DataFrame
    existing: pd.DataFrame
    training: pd.DataFrame
    candidates: set[str]
    access: dict[str, str]
    access_ms: dict[str, float]
    slo: dict[str, float]
    train_at: pd.Series

    @classmethod
    def gather(cls, net: Network, opts: PlaceOptions, tables: dict[str, pd.DataFrame], expect_full: bool,
               tol: float) -> _Facts:
        """The tables of one placement and the access sites, candidates and SLOs recomputed for it."""
        training = tables.get("training", pd.DataFrame())
        access, access_ms = _access(net)
        return cls(net=net, opts=opts, tables=tables, expect_full=expect_full, tol=tol, sites_t=tables["sites"],
                   flows=tables["flows"], existing=tables.get("existing", pd.DataFrame()), training=training,
                   candidates=_candidates(net, opts), access=access, access_ms=access_ms,
                   slo={c.name: c.slo_rtt_ms for c in opts.classes},
                   train_at=training.groupby("site")["gpus"].sum() if len(training) else pd.Series(dtype=float))


ArcLoad = dict[tuple[int, str, str, str], float]
"""Gbps per (period, link, from site, to site)."""


def check_placement(net: Network, opts: PlaceOptions, tables: dict[str, pd.DataFrame], expect_full: bool = True,
                    tol: float = 1e-5) -> CheckReport:
    """Verify a placement from its tables (``sites``, ``flows``, ``existing``, ``training``).

    One family of checks after another (see the module docstring): flows, demand served, sites, network
    capacity, training jobs and, when asked, N+1.

    Parameters
    ----------
    net
        The network the plan was made for.
    opts
        The placement options used.
    tables
        Result tables as written by the placement task.
    expect_full
        The plan claims to serve all demand (min-cost without infeasibility reasons).
    tol
        Absolute tolerance in GPUs, Gbps and MW (relative 1e-6 is added for large values).

    Returns
    -------
    CheckReport
    """
    rep = CheckReport("placement")
    facts = _Facts.gather(net, opts, tables, expect_full, tol)

    def add(section: str, messages: list[str]) -> None:
        for msg in messages:
            rep.add(Violation(section, section, "", msg))

    flow_violations, arc_load = _check_flows(facts)
    add("flows", flow_violations)
    rep.count("flows", len(facts.flows))
    demand_violations, n_units = _check_demand_served(facts)
    add("demand", demand_violations)
    rep.count("demand_units", n_units)
    add("sites", _check_sites(facts))
    rep.count("sites", len(facts.sites_t))
    work_violations, work_load, n_jobs = check_workloads(net, opts, tables, facts.candidates, expect_full, tol)
    add("training", work_violations)
    rep.count("training_jobs", n_jobs)
    capacity_violations, n_arcs = _check_network_capacity(facts, arc_load, work_load)
    add("network", capacity_violations)
    rep.count("arcs", n_arcs)
    if opts.n_plus_one:
        add("n_plus_one", _check_n_plus_one(facts))
        rep.count("n_plus_one_failures", len(facts.sites_t))
    if rep.violations:
        logger.warning("placement check: %d violation(s), first: %s", rep.n_violations, rep.violations[0].message)
    return rep


def _check_flows(f: _Facts) -> tuple[list[str], ArcLoad]:
    """Every flow: known metro and class, an allowed candidate site, residency, a contiguous path from the
    metro's access site, RTT within the SLO and as reported, Gbps = GPUs x ``gbps_per_gpu``. Also returns
    the placement's load on each directed arc per period (both directions: requests and responses)."""
    net, tol, g = f.net, f.tol, f.opts.gbps_per_gpu
    link_lat = net.links["latency_ms"].astype(float).to_dict()
    out: list[str] = []
    arc_load: ArcLoad = {}
    for row in f.flows.to_dict("records"):
        m, c, s, period = str(row["metro"]), str(row["class"]), str(row["site"]), int(row["period"])
        gpus, gbps = float(row["gpus"]), float(row["gbps"])
        where = f"flow {m}/{c} -> {s} (period {period})"
        if m not in net.metros.index or c not in f.slo:
            out.append(f"{where}: unknown metro or class")
            continue
        if s not in f.candidates:
            out.append(f"{where}: {s} is not an allowed candidate site")
        if not _residency_ok(net, f.opts, m, s):
            out.append(f"{where}: residency forbids serving {m} ({net.metros.at[m, 'country']}) from {s} "
                       f"({net.sites.at[s, 'country'] if s in net.sites.index else '?'})")
        links = [x for x in (row["links"] if isinstance(row["links"], str) else "").split(";") if x]
        walk = _walk(net, f.access[m], links)
        if walk is None or walk[-1][1] != s:
            out.append(f"{where}: links {links} are not a path from access site {f.access[m]} to {s}")
            continue
        rtt = 2.0 * (f.access_ms[m] + sum(link_lat[x] for x in links))
        if rtt > f.slo[c] + 1e-6:
            out.append(f"{where}: RTT {rtt:.2f} ms exceeds the {c} SLO of {f.slo[c]:.0f} ms")
        if abs(rtt - float(row["rtt_ms"])) > 1e-3:
            out.append(f"{where}: reported RTT {float(row['rtt_ms']):.3f} ms, recomputed {rtt:.3f} ms")
        if abs(gbps - gpus * g) > tol * max(1.0, abs(gbps)):
            out.append(f"{where}: {gbps} Gbps for {gpus} GPUs at {g} Gbps/GPU")
        if gpus < -tol:
            out.append(f"{where}: negative GPUs")
        if not links:
            continue
        for lid, (a, b) in zip(links, walk, strict=True):
            for u, v in ((a, b), (b, a)):  # symmetric: requests and responses
                key = (period, lid, u, v)
                arc_load[key] = arc_load.get(key, 0.0) + gbps
    return out, arc_load


def _check_demand_served(f: _Facts) -> tuple[list[str], int]:
    """Served GPUs per (period, metro, class) never above demand, and equal to it when the plan claims to
    serve everything. Also returns the number of demand units (metro, class)."""
    net, tol, periods = f.net, f.tol, f.opts.periods
    demand = _demand(net, f.opts)  # (metro, class) -> peak GPUs
    flows = f.flows
    served = flows.groupby(["period", "metro", "class"])["gpus"].sum() if len(flows) else pd.Series(dtype=float)
    out: list[str] = []
    for (m, c), d in demand.items():
        region = str(net.metros.at[m, "region"])
        for t in range(periods):
            need = d * _factor(region, t, periods)
            got = float(served.get((t, m, c), 0.0))
            if got > need + tol * max(1.0, need):
                out.append(f"{m}/{c} period {t}: {got:,.3f} GPUs served for a demand of {need:,.3f}")
            if f.expect_full and got < need - tol * max(1.0, need):
                out.append(f"{m}/{c} period {t}: only {got:,.3f} of {need:,.3f} GPUs served")
    return out, len(demand)


def _check_sites(f: _Facts) -> list[str]:
    """Every site row: GPUs after = before + added, whole blocks, minimum build, only at candidates, GPU
    maximum, MW balance, power need and cap, capex recomputed, GPUs in use per period within GPUs after;
    every serving site is in the table."""
    opts, tol, sites, flows = f.opts, f.tol, f.net.sites, f.flows
    mw_per_gpu = opts.kw_per_gpu / 1000.0
    block = max(1, opts.block_gpus)
    used = flows.groupby(["period", "site"])["gpus"].sum() if len(flows) else pd.Series(dtype=float)
    out: list[str] = []
    for sid, r in f.sites_t.iterrows():
        if sid not in sites.index:
            out.append(f"site {sid}: not in the network")
            continue
        src = sites.loc[sid]
        g0 = float(src["gpus_installed"])
        added, after = float(r["gpus_added"]), float(r["gpus_after"])
        if abs(float(r["gpus_before"]) - g0) > tol or abs(after - g0 - added) > tol:
            out.append(f"site {sid}: GPUs before/added/after {r['gpus_before']}/{added}/{after} do not add up "
                       f"(installed {g0:.0f})")
        if added < -tol or abs(added / block - round(added / block)) > 1e-6:
            out.append(f"site {sid}: {added:,.0f} GPUs added is not a whole number of {block}-GPU blocks")
        if tol < added < opts.min_build_gpus - tol:
            out.append(f"site {sid}: {added:,.0f} GPUs added, below the minimum build of {opts.min_build_gpus:,}")
        if added > tol and sid not in f.candidates:
            out.append(f"site {sid}: GPUs added at a site that is not an allowed candidate")
        gmax = max(float(src["gpus_max"]), g0)
        if after > gmax + tol:
            out.append(f"site {sid}: {after:,.0f} GPUs exceed the site maximum of {gmax:,.0f}")
        base = max(float(src["power_available_mw"]), g0 * mw_per_gpu)
        cap_mw = max(float(src["power_max_mw"]), base)
        need_mw = after * mw_per_gpu
        mw_after = float(r["mw_after"])
        if abs(mw_after - base - float(r["mw_built"])) > 1e-4:
            out.append(f"site {sid}: MW before {base:.3f} + built {float(r['mw_built']):.3f} != after {mw_after:.3f}")
        if need_mw > mw_after + 1e-4:
            out.append(f"site {sid}: {after:,.0f} GPUs need {need_mw:,.2f} MW, more than the {mw_after:,.2f} MW "
                       "provided")
        if mw_after > cap_mw + 1e-4:
            out.append(f"site {sid}: {mw_after:,.2f} MW exceeds the power cap of {cap_mw:,.2f} MW")
        capex = added * float(src["capex_per_gpu_usd"]) + float(r["mw_built"]) * float(src["capex_per_mw_usd"])
        capex += opts.site_fixed_cost_usd * (added > tol)
        if abs(capex - float(r["capex_usd"])) > 1e-6 * max(1.0, capex) + 1.0:
            out.append(f"site {sid}: capex {float(r['capex_usd']):,.0f} USD, recomputed {capex:,.0f} USD")
        tr = float(f.train_at.get(sid, 0.0))
        for t in range(opts.periods):
            in_use = float(used.get((t, sid), 0.0)) + tr
            if in_use > after + tol * max(1.0, after):
                out.append(f"site {sid} period {t}: {in_use:,.1f} GPUs in use, only {after:,.0f} after the build")
    for sid in set(flows["site"]) - set(f.sites_t.index) if len(flows) else ():
        out.append(f"site {sid}: serves demand but is missing from the sites table")
    return out


def _check_network_capacity(f: _Facts, arc_load: ArcLoad, work_load: dict[tuple[str, str, str], float]
                            ) -> tuple[list[str], int]:
    """Per period and direction, placement Gbps plus the scenario demands as routed plus the workload flows
    within link capacity; scenario demands fully routed (joint baseline, full plan). Also returns the number of
    arcs checked."""
    net, tol, existing = f.net, f.tol, f.existing
    out: list[str] = []
    base_load: dict[tuple[str, str, str], float] = dict(work_load)
    if len(existing):
        routed = existing.groupby("demand")["gbps"].sum()
        for row in existing.itertuples(index=False):
            links = [x for x in str(row.links).split(";") if x]
            walk = _walk(net, str(row.src), links)
            if walk is None or walk[-1][1] != str(row.dst):
                out.append(f"scenario demand {row.demand}: links {links} are not a path {row.src} -> {row.dst}")
                continue
            for lid, (a, b) in zip(links, walk, strict=True):
                base_load[(lid, a, b)] = base_load.get((lid, a, b), 0.0) + float(row.gbps)
    else:
        routed = pd.Series(dtype=float)
    if f.opts.baseline == "joint" and f.expect_full:
        d = net.demands[(net.demands["demand_gbps"] > 0) & (net.demands["src"] != net.demands["dst"])]
        for did, need in d["demand_gbps"].items():
            got = float(routed.get(did, 0.0))
            if abs(got - need) > tol * max(1.0, need):
                out.append(f"scenario demand {did}: {got:,.3f} of {need:,.3f} Gbps routed")
    keys = {(t, lid, a, b) for (t, lid, a, b) in arc_load} | {(t, lid, a, b) for (lid, a, b) in base_load
                                                              for t in range(f.opts.periods)}
    cap = net.links["capacity_gbps"].astype(float).to_dict()
    for t, lid, a, b in sorted(keys):
        load = arc_load.get((t, lid, a, b), 0.0) + base_load.get((lid, a, b), 0.0)
        if load > cap[lid] + tol * max(1.0, cap[lid]):
            out.append(f"link {lid} {a} -> {b} period {t}: {load:,.2f} Gbps over its {cap[lid]:,.0f} Gbps capacity")
    return out, len(keys)


def _check_n_plus_one(f: _Facts) -> list[str]:
    """N+1: each unit's served demand in its own peak hour (the first hour of maximum profile factor) can be
    re-served by the surviving sites after any one site is lost (see :func:`_n_plus_one`)."""
    net, flows, periods, sites_t = f.net, f.flows, f.opts.periods, f.sites_t
    per = flows.groupby(["metro", "class", "period"])["gpus"].sum() if len(flows) else pd.Series(dtype=float)
    peak_hour = {m: int(np.argmax([_factor(str(net.metros.at[m, "region"]), t, periods) for t in range(periods)]))
                 for m in net.metros.index}
    peak_served = pd.Series({(m, c): float(v) for (m, c, t), v in per.items() if t == peak_hour[m]}, dtype=float)
    capacity = (sites_t["gpus_after"] - f.train_at.reindex(sites_t.index).fillna(0.0)).clip(lower=0.0)
    declared = f.tables.get("n_plus_one")
    allowed = (declared["shortfall_gpus"] if declared is not None and len(declared) and not f.expect_full
               else pd.Series(dtype=float))
    dist = backbone_latency_ms(net, sorted(set(f.access.values())))
    return _n_plus_one(net, f.opts, peak_served, capacity, f.candidates, f.access, f.access_ms, dist, f.slo, f.tol,
                       allowed)


# ---------------------------------------------------------------------- helpers (independent of the model)
def _candidates(net: Network, opts: PlaceOptions) -> set[str]:
    out = set()
    for sid, r in net.sites.iterrows():
        ok = r["kind"] == "datacenter" or r["gpus_max"] > 0 or r["gpus_installed"] > 0
        if opts.allow_sites or opts.allow_regions:
            ok = ok and (sid in opts.allow_sites or r["region"] in opts.allow_regions)
        ok = ok and sid not in opts.deny_sites and r["region"] not in opts.deny_regions
        if ok:
            out.add(str(sid))
    return out


def _access(net: Network) -> tuple[dict[str, str], dict[str, float]]:
    """Each metro's access site and access latency by the model's one access rule (:mod:`backbone.access`)."""
    acc = access_sites(net)
    ms = access_latency_ms(acc["access_km"].to_numpy(float), net.parameters)
    return ({str(m): str(s) for m, s in acc["site"].items()},
            {str(m): float(x) for m, x in zip(acc.index, ms, strict=True)})


def _walk(net: Network, start: str, links: list[str]) -> list[tuple[str, str]] | None:
    """The (from, to) sites of each link walked from ``start``; None when not contiguous.
    An empty path is the local route [(start, start)]."""
    if not links:
        return [(start, start)]
    ends = _endpoints(net)
    at, out = start, []
    for lid in links:
        if lid not in ends:
            return None
        a, b = ends[lid]
        if at == a:
            out.append((a, b))
            at = b
        elif at == b:
            out.append((b, a))
            at = a
        else:
            return None
    return out


_ENDPOINTS: dict[int, tuple[Network, dict[str, tuple[str, str]]]] = {}


def _endpoints(net: Network) -> dict[str, tuple[str, str]]:
    """``{link id: (site_a, site_b)}``, memoised for the network object being checked."""
    hit = _ENDPOINTS.get(id(net))
    if hit is None or hit[0] is not net:
        links = net.links
        table = dict(zip(links.index, zip(links["site_a"], links["site_b"], strict=True), strict=True))
        _ENDPOINTS.clear()
        _ENDPOINTS[id(net)] = (net, table)
        return table
    return hit[1]


def _residency_ok(net: Network, opts: PlaceOptions, metro: str, site: str) -> bool:
    m = net.metros.loc[metro]
    if site not in net.sites.index:
        return False
    s = net.sites.loc[site]
    for rule in opts.residency_rules:
        applies = m["country"] in rule.from_countries or m["region"] in rule.from_regions or metro in rule.from_metros
        if applies and not (site in rule.allowed_sites or s["country"] in rule.allowed_countries
                            or s["region"] in rule.allowed_regions):
            return False
    return True


def _demand(net: Network, opts: PlaceOptions) -> dict[tuple[str, str], float]:
    out = {}
    for mid, r in net.metros.iterrows():
        gpus = float(r["inference_gpus"])
        if opts.tokens_per_s and mid in opts.tokens_per_s:
            gpus = opts.tokens_per_s[mid] / opts.tokens_per_s_per_gpu
        gpus *= opts.demand_growth
        inter = float(r["interactive_share"])
        explicit = sum(c.share for c in opts.classes if c.share is not None)
        rest = [c for c in opts.classes[1:] if c.share is None]
        first = inter if opts.classes[0].share is None else 0.0
        for j, c in enumerate(opts.classes):
            if c.share is not None:
                share = c.share
            elif j == 0:
                share = inter
            else:
                share = max(1.0 - first - explicit, 0.0) / max(len(rest), 1)
            if gpus * share > 1e-9:
                out[(str(mid), c.name)] = gpus * share
    return out


def _factor(region: str, t: int, periods: int) -> float:
    if periods == 1:
        return 1.0
    return DIURNAL_PROFILE[(t + REGION_UTC_OFFSET_H.get(region, 0)) % 24]


def _n_plus_one(net: Network, opts: PlaceOptions, peak_served: pd.Series, capacity: pd.Series,
                candidates: set[str], access: dict[str, str], access_ms: dict[str, float],
                dist: dict[str, dict[str, float]], slo: dict[str, float], tol: float,
                declared_shortfall: pd.Series) -> list[str]:
    """Max-flow per removed site: can the survivors re-serve every unit's served peak within SLO
    (less the shortfall the plan itself declares for that failure, when it does not claim full service)?"""
    out = []
    units = [(m, c, float(v)) for (m, c), v in peak_served.items() if v > tol]
    edges = []
    for m, c, _ in units:
        for s in capacity.index:
            if s not in candidates or not _residency_ok(net, opts, m, s):
                continue
            rtt = 2.0 * (access_ms[m] + dist[access[m]].get(s, np.inf))
            if rtt <= slo[c] + 1e-6:
                edges.append(((m, c), s))
    total = sum(v for _, _, v in units)
    for failed in capacity.index:
        g = nx.DiGraph()
        for m, c, v in units:
            g.add_edge("source", ("unit", m, c), capacity=v)
        for (m, c), s in edges:
            if s != failed:
                g.add_edge(("unit", m, c), ("site", s))
        for s, cap in capacity.items():
            if s != failed:
                g.add_edge(("site", s), "sink", capacity=float(cap))
        value = 0.0 if "sink" not in g or "source" not in g else nx.maximum_flow_value(g, "source", "sink")
        need = total - float(declared_shortfall.get(failed, 0.0))
        if value < need - tol * max(1.0, total) - 1e-6 * total:
            out.append(f"N+1: after losing site {failed}, the other sites can re-serve only {value:,.1f} of "
                       f"{need:,.1f} GPUs within SLO")
    return out


RESIDENCY_COLUMNS = ["metro", "class", "site", "period", "gpus", "metro_country", "site_country"]
"""Columns of :func:`residency_violations`."""


def residency_violations(net: Network, opts: PlaceOptions, assignments: pd.DataFrame) -> pd.DataFrame:
    """The assignments (``place.json`` ``assignments``: ``metro, class, site, period, gpus``) that a residency rule
    forbids, by the rule the verification applies per flow (a rule matching the metro's country, region or id
    must allow the site by id, country or region). Cheap (one vectorised pass per rule), so every plan runs it;
    ``plan.json`` ``residency`` holds the result. An assignment to a site not in ``net`` is a violation."""
    a = pd.DataFrame(assignments, columns=["metro", "class", "site", "period", "gpus"])
    metros = net.metros.reindex(a["metro"].astype(str))
    sites = net.sites.reindex(a["site"].astype(str))
    bad = sites["country"].isna().to_numpy(copy=True)
    for rule in opts.residency_rules:  # a loop over rules, never over assignments
        applies = (metros["country"].isin(rule.from_countries) | metros["region"].isin(rule.from_regions)
                   | pd.Series(metros.index.isin(rule.from_metros), index=metros.index)).to_numpy()
        allowed = (pd.Series(sites.index.isin(rule.allowed_sites), index=sites.index)
                   | sites["country"].isin(rule.allowed_countries) | sites["region"].isin(rule.allowed_regions))
        bad |= applies & ~allowed.to_numpy()
    out = a[bad].assign(metro_country=metros["country"].to_numpy()[bad], site_country=sites["country"].to_numpy()[bad])
    return out.reset_index(drop=True)[RESIDENCY_COLUMNS]
