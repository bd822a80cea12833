"""Placement inputs: demand units, candidate sites, metro -> site latency, admissible pairs, routes.

Everything here is plain tables and arrays derived from the :class:`~backbone.model.Network` and
the options; the formulation (:mod:`backbone.solver.placement.formulation`) turns them into rows.

Latency model
-------------
A metro reaches the backbone at its *access site* (the one access rule, :mod:`backbone.access`: a site in
the metro, PoP first, then data center, then landing; else the nearest site) over access fibre of
``geodesic x route_factor`` km (as :func:`backbone.route.shortest_route` treats points),
then rides the backbone to the serving site. The achievable RTT of (metro, site) is
``2 x (access_ms + lowest backbone latency)``; a (metro class, site) pair is *admissible* when that
RTT meets the class SLO, the site is a candidate, and residency allows it. Each admissible pair
gets *routes*: its candidate backbone paths (:func:`backbone.solver.paths.candidates.candidate_paths`, ``k_paths``
lowest-latency) that themselves meet the SLO, or the empty route when the metro's access site is
the serving site.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.access import access_sites as metro_access
from backbone.errors import Problem, ValidationError
from backbone.model import Network, access_latency_ms
from backbone.solver.paths.candidates import PathSet
from backbone.solver.placement.options import PlaceOptions, period_factors
from backbone.solver.placement.workloads import JobInputs, job_inputs

logger = logging.getLogger(__name__)


@dataclass
class PlacementInputs:
    """Tables and arrays the formulation is built from.

    Attributes
    ----------
    units
        Demand units (one per metro and class with demand), index ``metro/class``; columns
        ``metro``, ``klass``, ``slo_rtt_ms``, ``demand_gpus`` (peak), ``access_site``,
        ``access_km``, ``access_ms``, ``region``, ``country``, ``peak_period``.
    factors
        ``(units, periods)`` demand factor per period (peak = 1).
    sites
        Candidate sites (index site id) with ``gpus_installed``, ``gpus_cap`` (max GPUs after
        building), ``max_blocks``, ``min_blocks``, power and cost columns, ``opex_per_gpu_usd``,
        ``cost_per_block_usd``.
    pairs
        Admissible (unit, site) pairs: ``unit``, ``site`` (positions), ``rtt_ms`` (lowest).
    routes
        One row per (pair, path): ``pair``, ``unit``, ``site`` (positions), ``rtt_ms``, ``path``
        (row of ``route_pathset``; -1 for a local route, access site = serving site).
    route_links
        ``routes x L`` CSR link incidence (a local route has an empty row).
    rtt_ms
        ``(metros, sites_all)`` lowest achievable RTT from every metro to every site (inf: none).
    existing
        Scenario demands routed jointly (``baseline="joint"``): ``src``, ``dst``, ``demand_gbps``.
    existing_paths
        Their candidate paths: ``demand`` (position), ``latency_ms`` (row i = path i of
        ``existing_pathset``).
    existing_arcs
        ``existing paths x 2L`` CSR arc incidence.
    work
        Training jobs, their placement options (one site, or an even split over up to four) and the backbone traffic each option makes
        (:class:`~backbone.solver.placement.workloads.JobInputs`).
    notes
        Data issues worth telling the planner (e.g. installed GPUs above power available).
    """

    net: Network
    opts: PlaceOptions
    units: pd.DataFrame
    factors: np.ndarray
    sites: pd.DataFrame
    pairs: pd.DataFrame
    routes: pd.DataFrame
    route_links: sp.csr_matrix
    rtt_ms: pd.DataFrame
    existing: pd.DataFrame
    existing_paths: pd.DataFrame
    existing_arcs: sp.csr_matrix
    work: JobInputs
    route_pathset: PathSet | None = None
    existing_pathset: PathSet | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_periods(self) -> int:
        return int(self.factors.shape[1])


def build_inputs(net: Network, opts: PlaceOptions) -> PlacementInputs:
    """Derive every placement input from the network and options.

    Raises
    ------
    ValidationError
        When options name unknown sites, metros or regions, or the network has no candidate site.
    """
    _check_names(net, opts)
    notes: list[str] = []
    units = demand_units(net, opts)
    sites = candidate_sites(net, opts, notes)
    rtt = metro_site_rtt(net)
    factors = period_factors(units["region"].to_numpy(), opts.periods)
    units["peak_period"] = factors.argmax(axis=1) if len(units) else np.zeros(0, int)
    worst = metro_site_rtt_after_failures(net, opts.slo_failures) if opts.slo_failures != "none" else None
    pairs = admissible_pairs(net, opts, units, sites, rtt, worst, notes)
    routes, route_links, route_ps = pair_routes(net, opts, units, sites, pairs)
    existing, existing_paths, existing_arcs, existing_ps = existing_demand_paths(net, opts)
    work = job_inputs(net, opts, sites)
    notes += work.notes
    if opts.objective != "min-cost":  # min-cost names them among its infeasibility reasons
        notes += list(work.unplaceable.values())
    return PlacementInputs(net, opts, units, factors, sites, pairs, routes, route_links, rtt, existing,
                           existing_paths, existing_arcs, work, route_ps, existing_ps, notes)


def _check_names(net: Network, opts: PlaceOptions) -> None:
    problems: list[Problem] = []
    for fld in ("allow_sites", "deny_sites"):
        for s in getattr(opts, fld):
            if s not in net.sites.index:
                problems.append(Problem(f"unknown site {s!r}", table="options", field=fld))
    from backbone.schema import REGIONS

    for fld in ("allow_regions", "deny_regions"):
        for r in getattr(opts, fld):
            if r not in REGIONS:
                problems.append(Problem(f"unknown region {r!r}", table="options", field=fld))
    for i, job in enumerate(opts.training):
        for s in job.sites:
            if s not in net.sites.index:
                problems.append(Problem(f"unknown site {s!r}", table="options", record=job.id,
                                        field=f"training.{i}.sites"))
    if opts.tokens_per_s:
        for m in opts.tokens_per_s:
            if m not in net.metros.index:
                problems.append(Problem(f"unknown metro {m!r}", table="options", field="tokens_per_s"))
    for i, rule in enumerate(opts.residency_rules):
        for s in rule.allowed_sites:
            if s not in net.sites.index:
                problems.append(Problem(f"unknown site {s!r}", table="options", record=rule.name,
                                        field=f"residency.{i}.allowed_sites"))
    if problems:
        raise ValidationError(problems)


def demand_units(net: Network, opts: PlaceOptions) -> pd.DataFrame:
    """One row per (metro, class) with positive peak demand in GPU-equivalents.

    Demand per metro is ``inference_gpus`` (or ``tokens_per_s / tokens_per_s_per_gpu`` where
    given) x ``demand_growth``, split by class share.
    """
    metros = net.metros
    gpus = metros["inference_gpus"].to_numpy(dtype=float).copy()
    if opts.tokens_per_s:
        tok = pd.Series(opts.tokens_per_s, dtype=float).reindex(metros.index)
        has = tok.notna().to_numpy()
        gpus[has] = tok.to_numpy()[has] / opts.tokens_per_s_per_gpu
    gpus *= opts.demand_growth
    shares = np.zeros((len(metros), len(opts.classes)))
    inter = metros["interactive_share"].to_numpy(dtype=float)
    for j, c in enumerate(opts.classes):
        if c.share is not None:
            shares[:, j] = c.share
        elif j == 0:
            shares[:, j] = inter
        else:
            explicit = sum(cc.share or 0.0 for cc in opts.classes if cc.share is not None)
            n_implicit_rest = sum(1 for cc in opts.classes[1:] if cc.share is None)
            first = inter if opts.classes[0].share is None else 0.0
            shares[:, j] = np.maximum(1.0 - first - explicit, 0.0) / max(n_implicit_rest, 1)
    demand = gpus[:, None] * shares
    mi, ci = np.nonzero(demand > 1e-9)
    access_site, access_km = access_sites(net)
    access_ms = access_latency_ms(access_km, net.parameters)
    klass = np.array([c.name for c in opts.classes])
    slo = np.array([c.slo_rtt_ms for c in opts.classes])
    ids = [f"{m}/{k}" for m, k in zip(metros.index[mi], klass[ci], strict=True)]
    return pd.DataFrame({
        "metro": metros.index[mi].to_numpy(),
        "klass": klass[ci],
        "slo_rtt_ms": slo[ci],
        "demand_gpus": demand[mi, ci],
        "access_site": access_site[mi],
        "access_km": access_km[mi],
        "access_ms": access_ms[mi],
        "region": metros["region"].to_numpy()[mi],
        "country": metros["country"].to_numpy()[mi],
    }, index=pd.Index(ids, name="unit"))


def access_sites(net: Network) -> tuple[np.ndarray, np.ndarray]:
    """Every metro's access site and access fibre length (km), by the one access rule
    (:func:`backbone.access.access_sites`), as arrays in metro order."""
    acc = metro_access(net)
    return acc["site"].to_numpy(dtype=object), acc["access_km"].to_numpy(dtype=float)


def metro_site_rtt(net: Network) -> pd.DataFrame:
    """Lowest achievable RTT (ms) from every metro to every site (inf when unreachable)."""
    from scipy.sparse.csgraph import dijkstra

    from backbone.route import min_latency_graph

    access, km = access_sites(net)
    if len(net.metros) == 0:
        return pd.DataFrame(index=net.metros.index, columns=net.sites.index, dtype=float)
    graph, _ = min_latency_graph(net)
    pos = pd.Series(np.arange(len(net.sites)), index=net.sites.index)
    origins = pos.loc[access].to_numpy()
    uniq, inv = np.unique(origins, return_inverse=True)
    dist = dijkstra(graph, indices=uniq)[inv]
    one_way = access_latency_ms(km, net.parameters)[:, None] + dist
    return pd.DataFrame(2.0 * one_way, index=net.metros.index, columns=net.sites.index)


def metro_site_rtt_after_failures(net: Network, kind: str) -> pd.DataFrame:
    """Worst lowest RTT (ms) from every metro to every site over the single failures of ``kind``
    (``link``, ``srlg`` or ``srlg,link``; the failure sweep's states), on the network with every candidate route built (the routes a plan may
    build). A failure that cuts a metro's own access site off is not counted for that metro
    (nothing placement can do about it); a site the failure cuts off from the metro is ``inf``."""
    from scipy.sparse.csgraph import dijkstra

    from backbone.route import min_latency_graph

    cands = net.candidates
    built = net.with_candidates_built({str(c): int(m) for c, m in cands["max_modules"].items()}) if len(cands) else net
    access, km = access_sites(built)
    pos = pd.Series(np.arange(len(built.sites)), index=built.sites.index)
    uniq, inv = np.unique(pos.loc[access].to_numpy(), return_inverse=True)
    from backbone.solver.failures.scenarios import enumerate_scenarios

    # the failure sweep's own states (links in no SRLG as their own group; srlg,link the union of both kinds)
    failures = [list(s.links) for s in enumerate_scenarios(built, kind, max_scenarios=10**9)]  # type: ignore[arg-type]
    worst = np.zeros((len(uniq), len(built.sites)))
    for failed in failures:  # one Dijkstra batch per failure state (a family loop, not a link loop)
        state = built.fail_links(failed)
        graph, _ = min_latency_graph(state)
        dist = dijkstra(graph, indices=uniq)
        isolated = np.diff(graph.indptr)[uniq] == 0
        dist[isolated] = 0.0  # the metro itself is cut off: not counted
        worst = np.maximum(worst, dist)
    one_way = access_latency_ms(km, built.parameters)[:, None] + worst[inv]
    return pd.DataFrame(2.0 * one_way, index=net.metros.index, columns=built.sites.index).reindex(
        columns=net.sites.index)


def candidate_sites(net: Network, opts: PlaceOptions, notes: list[str]) -> pd.DataFrame:
    """Sites that may host GPUs: datacenters, or any site with ``gpus_max > 0`` or installed GPUs,
    filtered by the allow/deny lists; with derived capacity and cost columns.

    Opex per added GPU = ``kw_per_gpu / 1000`` MW x 8760 h x ``horizon_years`` x (power price +
    carbon kg/MWh / 1000 x carbon price).
    """
    s = net.sites
    mask = (s["kind"] == "datacenter") | (s["gpus_max"] > 0) | (s["gpus_installed"] > 0)
    if opts.allow_sites or opts.allow_regions:
        mask &= s.index.isin(opts.allow_sites) | s["region"].isin(opts.allow_regions)
    mask &= ~(s.index.isin(opts.deny_sites) | s["region"].isin(opts.deny_regions))
    sites = s.loc[mask].copy()
    if len(sites) == 0:
        raise ValidationError(Problem("no candidate site: no datacenter or site with gpus_max > 0 is allowed",
                                      table="sites"))
    b = opts.block
    g0 = sites["gpus_installed"].to_numpy(dtype=float)
    cap = np.maximum(sites["gpus_max"].to_numpy(dtype=float), g0)
    sites["gpus_cap"] = cap
    sites["max_blocks"] = np.floor((cap - g0) / b + 1e-9).astype(int)
    sites["min_blocks"] = int(np.ceil(opts.min_build_gpus / b)) if opts.min_build_gpus else 0
    mw_per_gpu = opts.kw_per_gpu / 1000.0
    need = g0 * mw_per_gpu
    avail = sites["power_available_mw"].to_numpy(dtype=float)
    over = need > avail + 1e-9
    for sid in sites.index[over]:
        notes.append(f"site {sid}: installed GPUs need {need[sites.index.get_loc(sid)]:.1f} MW at "
                     f"{opts.kw_per_gpu} kW/GPU, more than the {sites.at[sid, 'power_available_mw']:.1f} MW available; "
                     f"treated as available")
    sites["power_base_mw"] = np.maximum(avail, need)
    sites["power_cap_mw"] = np.maximum(sites["power_max_mw"].to_numpy(dtype=float), sites["power_base_mw"])
    # blocks beyond what the power cap can feed can never be built: tighten the bound (helps the MIP)
    power_blocks = np.floor((sites["power_cap_mw"].to_numpy() - need) / (mw_per_gpu * b) + 1e-9).astype(int)
    sites["power_limited"] = power_blocks < sites["max_blocks"].to_numpy()
    sites["max_blocks"] = np.minimum(sites["max_blocks"].to_numpy(), np.maximum(power_blocks, 0))
    hours = 8760.0 * opts.horizon_years
    energy_price = (sites["power_price_usd_per_mwh"].to_numpy(dtype=float)
                    + sites["carbon_kg_per_mwh"].to_numpy(dtype=float) / 1000.0 * opts.carbon_price_usd_per_t)
    sites["opex_per_gpu_usd"] = mw_per_gpu * hours * energy_price
    sites["cost_per_block_usd"] = b * (sites["capex_per_gpu_usd"].to_numpy(dtype=float) + sites["opex_per_gpu_usd"])
    return sites


def residency_allowed(net: Network, opts: PlaceOptions, units: pd.DataFrame, sites: pd.DataFrame) -> np.ndarray:
    """``(units, sites)`` boolean: every residency rule that matches a unit's metro allows the site."""
    ok = np.ones((len(units), len(sites)), bool)
    for rule in opts.residency_rules:
        matched = (units["country"].isin(rule.from_countries) | units["region"].isin(rule.from_regions)
                   | units["metro"].isin(rule.from_metros)).to_numpy()
        allowed = (sites.index.isin(rule.allowed_sites) | sites["country"].isin(rule.allowed_countries)
                   | sites["region"].isin(rule.allowed_regions))
        ok[matched] &= np.asarray(allowed)[None, :]
    return ok


def admissible_pairs(net: Network, opts: PlaceOptions, units: pd.DataFrame, sites: pd.DataFrame,
                     rtt: pd.DataFrame, worst_rtt: pd.DataFrame | None = None,
                     notes: list[str] | None = None) -> pd.DataFrame:
    """(unit, site) pairs within the class SLO and allowed by residency (positions + lowest RTT);
    ``robust``: within the SLO in every failure state too (:func:`metro_site_rtt_after_failures`;
    all True without ``worst_rtt``)."""
    if len(units) == 0:
        return pd.DataFrame({"unit": np.zeros(0, int), "site": np.zeros(0, int), "rtt_ms": np.zeros(0),
                             "robust": np.zeros(0, bool)})
    r = rtt.loc[units["metro"], sites.index].to_numpy()
    slo = units["slo_rtt_ms"].to_numpy()[:, None] + 1e-9
    ok = (r <= slo) & residency_allowed(net, opts, units, sites)
    robust = np.ones_like(ok)
    if worst_rtt is not None:
        robust = worst_rtt.loc[units["metro"], sites.index].to_numpy() <= slo
        fragile = ok & ~robust
        if fragile.any() and notes is not None:
            none = units["metro"].to_numpy()[ok.any(axis=1) & ~(ok & robust).any(axis=1)]
            notes.append(f"slo_failures={opts.slo_failures}: {int(fragile.sum())} of {int(ok.sum())} (demand, site) pairs "
                         f"within the SLO intact are not after some single {opts.slo_failures} failure (even with "
                         "every candidate route built); they serve only what robust sites cannot (at "
                         f"{opts.slo_failures_penalty_usd_per_gpu:,.0f} USD per GPU in the objective)"
                         + (f"; no site keeps the SLO through every failure for {', '.join(sorted(set(none)))}"
                            if len(none) else ""))
    ui, si = np.nonzero(ok)
    return pd.DataFrame({"unit": ui, "site": si, "rtt_ms": r[ui, si], "robust": robust[ui, si]})


def pair_routes(net: Network, opts: PlaceOptions, units: pd.DataFrame, sites: pd.DataFrame,
                pairs: pd.DataFrame) -> tuple[pd.DataFrame, sp.csr_matrix, PathSet | None]:
    """Routes of every admissible pair: its SLO-meeting candidate paths, or the local route."""
    from backbone.solver.paths.candidates import candidate_paths

    n_links = len(net.links)
    acc = units["access_site"].to_numpy()[pairs["unit"].to_numpy()]
    dst = sites.index.to_numpy()[pairs["site"].to_numpy()]
    local = acc == dst
    # one-way backbone budget of each pair: SLO / 2 - access latency
    budget = (units["slo_rtt_ms"].to_numpy() / 2.0 - units["access_ms"].to_numpy())[pairs["unit"].to_numpy()]
    frames = []
    mats = []
    ps = None
    lp = np.flatnonzero(local)
    if len(lp):
        frames.append(pd.DataFrame({"pair": lp, "rtt_ms": pairs["rtt_ms"].to_numpy()[lp], "path": -1}))
        mats.append(sp.csr_matrix((len(lp), n_links)))
    rp = np.flatnonzero(~local)
    if len(rp):
        # ask once per distinct (access, site) pair with the loosest budget, then filter per unit
        key = pd.DataFrame({"src": acc[rp], "dst": dst[rp], "budget": budget[rp]})
        uniq = key.groupby(["src", "dst"], sort=False)["budget"].max().reset_index()
        ps = candidate_paths(net, uniq[["src", "dst"]], k_paths=opts.k_paths,
                             max_latency_ms=uniq["budget"].to_numpy() + 1e-6)
        upos = pd.Series(np.arange(len(uniq)), index=pd.MultiIndex.from_frame(uniq[["src", "dst"]]))
        which = upos.loc[pd.MultiIndex.from_arrays([acc[rp], dst[rp]])].to_numpy()
        ptr = ps.pair_ptr
        counts = ptr[which + 1] - ptr[which]
        rep_pair = np.repeat(np.arange(len(rp)), counts)
        starts = np.repeat(ptr[which] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        path_idx = starts + np.arange(int(counts.sum()))
        lat = ps.path_latency_ms[path_idx]
        keep = lat <= budget[rp][rep_pair] + 1e-6
        rep_pair, path_idx, lat = rep_pair[keep], path_idx[keep], lat[keep]
        acc_ms = units["access_ms"].to_numpy()[pairs["unit"].to_numpy()[rp[rep_pair]]]
        frames.append(pd.DataFrame({"pair": rp[rep_pair], "rtt_ms": 2.0 * (acc_ms + lat), "path": path_idx}))
        mats.append(ps.link_incidence[path_idx])
    if not frames:
        routes = pd.DataFrame({"pair": np.zeros(0, int), "rtt_ms": np.zeros(0), "path": np.zeros(0, int)})
        return _route_columns(routes, pairs), sp.csr_matrix((0, n_links)), ps
    routes = pd.concat(frames, ignore_index=True)
    mat = sp.vstack(mats, format="csr")
    order = np.argsort(routes["pair"].to_numpy(), kind="stable")
    routes = routes.iloc[order].reset_index(drop=True)
    return _route_columns(routes, pairs), mat[order], ps


def _route_columns(routes: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    p = routes["pair"].to_numpy()
    routes["unit"] = pairs["unit"].to_numpy()[p]
    routes["site"] = pairs["site"].to_numpy()[p]
    return routes[["pair", "unit", "site", "rtt_ms", "path"]]


def existing_demand_paths(net: Network, opts: PlaceOptions
                          ) -> tuple[pd.DataFrame, pd.DataFrame, sp.csr_matrix, PathSet | None]:
    """The scenario's demands and their candidate paths (within their own SLO), for joint routing."""
    n_arcs = 2 * len(net.links)
    d = net.demands
    d = d[(d["demand_gbps"] > 0) & (d["src"] != d["dst"])] if opts.baseline == "joint" else d.iloc[:0]
    existing = d[["src", "dst", "demand_gbps", "traffic_class", "slo_rtt_ms"]].copy()
    if len(existing) == 0:
        return existing, pd.DataFrame({"demand": np.zeros(0, int), "latency_ms": np.zeros(0)}), \
            sp.csr_matrix((0, n_arcs)), None
    from backbone.solver.paths.candidates import candidate_paths

    limit = (existing["slo_rtt_ms"].to_numpy(dtype=float) / 2.0)
    ps = candidate_paths(net, existing[["src", "dst"]], k_paths=opts.k_paths, max_latency_ms=limit)
    paths = pd.DataFrame({"demand": ps.path_pair, "latency_ms": ps.path_latency_ms})
    return existing, paths, ps.arc_incidence, ps
