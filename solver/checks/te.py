"""Independent checker for TE results.

Everything is recomputed from the result's tables (``links``, ``demands``, ``paths``) and the
input network -- never from solver internals -- so a bug in a formulation, an extraction or a
backend shows up here:

* ``balance`` -- ``carried + unmet == demand``, both non-negative, for every demand;
* ``paths`` -- every path split is a contiguous walk from its demand's ``src`` to ``dst`` over
  existing links (``path_sites`` and ``path_links`` agree), its ``latency_ms`` equals the sum of
  its links' latencies. With splits summing to carried (next item) this is flow conservation
  per demand at every node (in the edge formulation the splits are the flow decomposition);
* ``conservation`` -- path splits of a demand sum to its carried traffic;
* ``capacity`` -- arc loads recomputed from the splits equal the link table's
  ``flow_ab_gbps`` / ``flow_ba_gbps``; ``utilisation`` equals ``max(ab, ba) / capacity``; and
  stays under the result's ``utilisation_ceiling`` when it has one;
* ``slo`` -- every path used by a demand with an SLO has ``2 * latency <= slo_rtt_ms``;
* ``reasons`` -- unmet demand has a reason; ``disconnected`` demands really are (components),
  ``no_path_within_slo`` demands really have no path within their SLO (Dijkstra);
* ``objective`` -- the summary's mlu, carried, unmet and weighted latency, and the objective
  value (MLU, carried traffic, weighted latency, or the smallest fair fraction) match the tables.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, dijkstra

from backbone.model import Network
from backbone.solver.checks import CheckReport, Violation

if TYPE_CHECKING:
    from backbone.solver.te.summary import TERecord

logger = logging.getLogger(__name__)

REL_TOL = 1e-6


def check_te(net: Network, result: Any, rel_tol: float = REL_TOL) -> CheckReport:
    """Check a TE result against its network.

    Parameters
    ----------
    net
        The network the result was computed on.
    result
        A :class:`backbone.solver.te.TEResult` (anything with ``links``, ``demands``, ``paths`` frames and a
        ``summary`` :class:`~backbone.solver.te.summary.TERecord`).
    rel_tol
        Relative tolerance; Gbps comparisons use ``rel_tol * max(1, largest demand or capacity)``.

    Returns
    -------
    CheckReport
        ``ok`` when nothing is violated; else one :class:`~solver.checks.Violation` per problem.
    """
    report = CheckReport("te")
    links, demands, paths, summary = result.links, result.demands, result.paths, result.summary
    scale = max(1.0, float(net.demands["demand_gbps"].max() if len(net.demands) else 0.0), float(net.links["capacity_gbps"].max() if len(net.links) else 0.0))
    tol = rel_tol * scale * 10
    complete = summary.paths_complete is not False

    _check_balance(net, demands, report, tol)
    arc_load = _check_paths(net, demands, paths, report, tol, complete)
    _check_capacity(net, links, arc_load, summary, report, tol, rel_tol)
    if summary.slo_enforced is not False:
        _check_slo(net, paths, report, rel_tol)
    else:  # ECMP: SLO misses are findings of the simulation, not result errors
        report.checked.append("slo (not enforced: skipped)")
    _check_reasons(net, demands, report, tol)
    _check_objective(demands, links, paths, summary, report, tol, rel_tol)
    return report


def _bad(report: CheckReport, check: str, table: str, ids: Any, message: str, values: Any = None,
         limits: Any = None) -> None:
    ids = list(ids)
    vals = [None] * len(ids) if values is None else list(np.asarray(values, float))
    lims = [None] * len(ids) if limits is None else list(np.broadcast_to(np.asarray(limits, float), (len(ids),)))
    for i, v, lim in zip(ids, vals, lims, strict=True):
        report.add(Violation(check, table, str(i), message, None if v is None else float(v),
                             None if lim is None else float(lim)))


def _check_balance(net: Network, demands: pd.DataFrame, report: CheckReport, tol: float) -> None:
    report.checked.append("balance")
    d = net.demands
    missing = d.index.difference(demands.index)
    _bad(report, "balance", "demands", missing, "demand missing from the result")
    demands = demands.reindex(d.index)
    h = d["demand_gbps"].to_numpy(float)
    c = demands["carried_gbps"].to_numpy(float)
    u = demands["unmet_gbps"].to_numpy(float)
    off = np.abs(c + u - h)
    bad = np.flatnonzero(~(off <= tol))
    _bad(report, "balance", "demands", d.index[bad], "carried + unmet != demand", (c + u)[bad], h[bad])
    neg = np.flatnonzero((c < -tol) | (u < -tol))
    _bad(report, "balance", "demands", d.index[neg], "negative carried or unmet traffic", np.minimum(c, u)[neg], 0.0)


def _explode(paths: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """One row per (split, hop): ``split``, ``hop``, ``link``, ``from_site``, ``to_site``."""
    links = paths["path_links"].astype(str).str.split(";").explode()
    sites = paths["path_sites"].astype(str).str.split(">").explode()
    n_links = links.groupby(level=0).size().reindex(paths.index, fill_value=0).to_numpy()
    n_sites = sites.groupby(level=0).size().reindex(paths.index, fill_value=0).to_numpy()
    ok = n_sites == n_links + 1
    s = sites.to_frame("site")
    s["pos"] = s.groupby(level=0).cumcount()
    s["n"] = np.repeat(n_sites, n_sites)
    frm = s[s["pos"] < s["n"] - 1]["site"]
    to = s[s["pos"] > 0]["site"]
    good_split = np.repeat(ok, n_links)
    hops = pd.DataFrame({"split": np.repeat(np.arange(len(paths)), n_links), "link": links.to_numpy()})
    hops = hops[good_split].reset_index(drop=True)
    frm = frm[np.repeat(ok, np.maximum(n_sites - 1, 0))]
    to = to[np.repeat(ok, np.maximum(n_sites - 1, 0))]
    hops["from_site"] = frm.to_numpy()
    hops["to_site"] = to.to_numpy()
    return hops, ok


def _check_paths(net: Network, demands: pd.DataFrame, paths: pd.DataFrame, report: CheckReport, tol: float,
                 complete: bool) -> np.ndarray:
    """Validate splits as walks; return arc loads (2L,) recomputed from them."""
    report.checked += ["paths", "conservation"]
    n_links = len(net.links)
    arc_load: np.ndarray = np.zeros(2 * n_links)
    if len(paths) == 0:
        carried = demands["carried_gbps"].to_numpy(float)
        bad = np.flatnonzero(carried > tol)
        if complete:
            _bad(report, "conservation", "demands", demands.index[bad], "carried traffic but no path split",
                 carried[bad], 0.0)
        return arc_load
    paths = paths.reset_index(drop=True)
    hops, ok = _explode(paths)
    _bad(report, "paths", "paths", paths.index[~ok], "path_sites and path_links disagree in length")
    link_pos = net.links.index.get_indexer(hops["link"])
    unknown = link_pos < 0
    _bad(report, "paths", "paths", hops["split"][unknown].unique(), "path uses an unknown link")
    hops = hops[~unknown]
    link_pos = link_pos[~unknown]
    sa = net.links["site_a"].to_numpy()[link_pos]
    sb = net.links["site_b"].to_numpy()[link_pos]
    fwd = (hops["from_site"].to_numpy() == sa) & (hops["to_site"].to_numpy() == sb)
    rev = (hops["from_site"].to_numpy() == sb) & (hops["to_site"].to_numpy() == sa)
    broken = ~(fwd | rev)
    _bad(report, "paths", "paths", hops["split"][broken].unique(), "a link does not join consecutive path sites")
    # endpoints of each walk
    first = paths["path_sites"].astype(str).str.split(">").str[0]
    last = paths["path_sites"].astype(str).str.split(">").str[-1]
    dem = demands.reindex(paths["demand"])
    wrong = np.flatnonzero((first.to_numpy() != dem["src"].to_numpy()) | (last.to_numpy() != dem["dst"].to_numpy()))
    _bad(report, "paths", "paths", paths.index[wrong], "path does not run from the demand's src to its dst")
    # latency of each split from link latencies
    lat_link = net.links["latency_ms"].to_numpy(float)[link_pos]
    lat = np.bincount(hops["split"].to_numpy(), weights=lat_link, minlength=len(paths))
    off = np.flatnonzero(np.abs(lat - paths["latency_ms"].to_numpy(float)) > 1e-6 * np.maximum(1.0, lat))
    _bad(report, "paths", "paths", paths.index[off], "latency_ms differs from the sum of its links' latencies",
         paths["latency_ms"].to_numpy(float)[off], lat[off])
    neg = np.flatnonzero(paths["gbps"].to_numpy(float) < -tol)
    _bad(report, "paths", "paths", paths.index[neg], "negative path flow", paths["gbps"].to_numpy(float)[neg], 0.0)
    # conservation: splits sum to carried (to routed, above capacity, for a routing that overloads links)
    if complete:
        split_sum = paths.groupby("demand")["gbps"].sum().reindex(demands.index, fill_value=0.0)
        carried = demands["routed_gbps" if "routed_gbps" in demands else "carried_gbps"]
        diff = (split_sum - carried).abs()
        bad = diff.index[~(diff <= tol)]
        _bad(report, "conservation", "demands", bad, "path splits do not sum to carried traffic",
             split_sum.loc[bad], carried.loc[bad])
    arcs = link_pos + np.where(rev & ~fwd, n_links, 0)
    g = paths["gbps"].to_numpy(float)[hops["split"].to_numpy()]
    arc_load = np.bincount(arcs[~broken], weights=g[~broken], minlength=2 * n_links)
    return arc_load


def _check_capacity(net: Network, links: pd.DataFrame, arc_load: np.ndarray, summary: TERecord,
                    report: CheckReport, tol: float, rel_tol: float) -> None:
    report.checked.append("capacity")
    n_links = len(net.links)
    missing = net.links.index.difference(links.index)
    _bad(report, "capacity", "links", missing, "link missing from the result")
    lk = links.reindex(net.links.index)
    cap = net.links["capacity_gbps"].to_numpy(float)
    ab, ba = lk["flow_ab_gbps"].to_numpy(float), lk["flow_ba_gbps"].to_numpy(float)
    if summary.paths_complete is not False:
        for name, table, recomputed in (("flow_ab_gbps", ab, arc_load[:n_links]),
                                        ("flow_ba_gbps", ba, arc_load[n_links:])):
            bad = np.flatnonzero(~(np.abs(table - recomputed) <= tol))
            _bad(report, "capacity", "links", net.links.index[bad], f"{name} differs from the load of the path splits",
                 table[bad], recomputed[bad])
    util = np.maximum(ab, ba) / cap
    bad = np.flatnonzero(~(np.abs(util - lk["utilisation"].to_numpy(float)) <= rel_tol * np.maximum(1, util)))
    _bad(report, "capacity", "links", net.links.index[bad], "utilisation != max(flow_ab, flow_ba) / capacity",
         lk["utilisation"].to_numpy(float)[bad], util[bad])
    ceiling = summary.utilisation_ceiling
    if ceiling is not None:
        over = np.flatnonzero(util > ceiling + max(rel_tol * 10, tol / cap.min(initial=1.0)))
        _bad(report, "capacity", "links", net.links.index[over], "utilisation above the ceiling", util[over], ceiling)


def _check_slo(net: Network, paths: pd.DataFrame, report: CheckReport, rel_tol: float) -> None:
    report.checked.append("slo")
    if len(paths) == 0:
        return
    slo = net.demands["slo_rtt_ms"].reindex(paths["demand"]).to_numpy(float)  # the input's SLO, not the result's
    rtt = 2 * paths["latency_ms"].to_numpy(float)
    bad = np.flatnonzero(np.isfinite(slo) & (rtt > slo * (1 + rel_tol) + 1e-9)
                         & (paths["gbps"].to_numpy(float) > 0))
    _bad(report, "slo", "paths", paths.index[bad],
         "path RTT exceeds the demand's SLO (demand " + ", ".join(map(str, paths["demand"].iloc[bad][:3])) + ")",
         rtt[bad], slo[bad])


def _check_reasons(net: Network, demands: pd.DataFrame, report: CheckReport, tol: float) -> None:
    report.checked.append("reasons")
    d = demands.reindex(net.demands.index)
    unmet = d["unmet_gbps"].to_numpy(float)
    reason = d["reason"].fillna("").astype(str).to_numpy()
    bad = np.flatnonzero((unmet > tol) & (reason == ""))
    _bad(report, "reasons", "demands", d.index[bad], "unmet demand without a reason", unmet[bad])
    site_pos = pd.Series(np.arange(len(net.sites)), index=net.sites.index)
    a = site_pos.loc[net.links["site_a"]].to_numpy()
    b = site_pos.loc[net.links["site_b"]].to_numpy()
    n = len(net.sites)
    lat = net.links["latency_ms"].to_numpy(float)
    edges = pd.DataFrame({"u": np.concatenate([a, b]), "v": np.concatenate([b, a]),
                          "w": np.concatenate([lat, lat]) + 1e-12}).groupby(["u", "v"])["w"].min().reset_index()
    graph = sp.csr_matrix((edges["w"].to_numpy(), (edges["u"].to_numpy(), edges["v"].to_numpy())), shape=(n, n))
    src = site_pos.reindex(net.demands["src"]).to_numpy()
    dst = site_pos.reindex(net.demands["dst"]).to_numpy()
    _, comp = connected_components(graph, directed=False)
    disc = reason == "disconnected"
    wrong = np.flatnonzero(disc & (comp[src] == comp[dst]))
    _bad(report, "reasons", "demands", d.index[wrong], "reason 'disconnected' but src and dst are connected")
    slo_r = np.flatnonzero(reason == "no_path_within_slo")
    if len(slo_r):
        srcs, inv = np.unique(src[slo_r], return_inverse=True)
        dist = dijkstra(graph, directed=True, indices=srcs)
        best = dist[inv, dst[slo_r]]
        slo = net.demands["slo_rtt_ms"].to_numpy(float)[slo_r]
        wrong = np.flatnonzero(~(2 * best > slo * (1 - 1e-9)))
        _bad(report, "reasons", "demands", d.index[slo_r[wrong]],
             "reason 'no_path_within_slo' but the shortest path meets the SLO", 2 * best[wrong], slo[wrong])


def _check_objective(demands: pd.DataFrame, links: pd.DataFrame, paths: pd.DataFrame, summary: TERecord,
                     report: CheckReport, tol: float, rel_tol: float) -> None:
    report.checked.append("objective")

    def near(a: float, b: float, t: float) -> bool:
        return bool(abs(a - b) <= t * max(1.0, abs(b)))

    mlu = float(links["utilisation"].max()) if len(links) else 0.0
    carried = float(demands["carried_gbps"].sum())
    routed = float(demands["routed_gbps"].sum()) if "routed_gbps" in demands else carried
    figures = {"mlu": (mlu, rel_tol * 10), "carried_gbps": (carried, rel_tol * 10),
               "unmet_gbps": (float(demands["unmet_gbps"].sum()), rel_tol * 10)}
    if summary.paths_complete is not False and routed > 0 and summary.weighted_latency_ms is not None:
        figures["weighted_latency_ms"] = (float((paths["gbps"] * paths["latency_ms"]).sum()) / routed, 1e-5)
    for key, (value, t) in figures.items():
        claimed_figure = getattr(summary, key)
        if claimed_figure is not None and not near(float(claimed_figure), value, t):
            report.add(Violation("objective", "summary", key, f"summary {key} does not match the tables",
                                 float(claimed_figure), value))
    objective = summary.objective
    claimed = summary.objective_value
    if claimed is None or objective is None:
        return
    expected: float | None = None
    if objective in ("min-mlu", "ecmp"):
        expected = mlu
    elif objective == "max-throughput":
        expected = carried
    elif objective == "min-latency":
        expected = figures["weighted_latency_ms"][0] if "weighted_latency_ms" in figures else None
    elif objective == "max-min-fair":
        routed = demands[(demands["demand_gbps"] > 0) & demands["reason"].isin(["", "capacity"])]
        frac = routed["carried_gbps"] / routed["demand_gbps"]
        expected = float(frac.min()) if len(frac) else 1.0
    if expected is not None and not near(float(claimed), expected, 1e-5):
        report.add(Violation("objective", "summary", "objective_value",
                             f"{objective} objective does not match the tables", float(claimed), expected))
