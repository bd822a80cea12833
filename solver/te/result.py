"""The TE result: per-link, per-demand and path-split tables plus a JSON summary.

Results are their own objects (never written back into the network). The tables are what the
independent checker (:mod:`backbone.solver.checks.te`) reads, what ``--out`` writes (CSV + Parquet) and
what the API serves.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from backbone.artifacts import ArtifactWriter
from backbone.corridors import UNLISTED_CLASS, corridor_traffic
from backbone.model import Network
from backbone.schema import TRAFFIC_CLASSES
from backbone.solver.checks.records import CheckRecord
from backbone.solver.te.instance import REASON_CAPACITY, TEInstance
from backbone.solver.te.sections import PathsTable
from backbone.solver.te.solve import NO_DEMAND_NOTE
from backbone.solver.te.summary import TERecord
from backbone.utilisation import utilisation

logger = logging.getLogger(__name__)

LINK_COLUMNS = ("site_a", "site_b", "capacity_gbps", "flow_ab_gbps", "flow_ba_gbps", "utilisation")
DEMAND_COLUMNS = ("src", "dst", "traffic_class", "demand_gbps", "carried_gbps", "unmet_gbps", "reason",
                  "slo_rtt_ms", "latency_ms", "worst_latency_ms", "rtt_ms", "worst_rtt_ms", "paths_used")
PATH_COLUMNS = ("demand", "src", "dst", "path_sites", "path_links", "hops", "latency_ms", "rtt_ms", "gbps")


@dataclass
class TEResult:
    """A traffic-engineering result.

    Attributes
    ----------
    links
        Indexed by link id: ``site_a``, ``site_b``, ``capacity_gbps``, ``flow_ab_gbps``,
        ``flow_ba_gbps``, ``utilisation`` (larger direction / capacity).
    demands
        Indexed by demand id: endpoints, class, ``demand_gbps``, ``carried_gbps``,
        ``unmet_gbps``, ``reason`` (``""``, ``capacity``, ``no_path_within_slo``,
        ``disconnected``), ``slo_rtt_ms``, traffic-weighted one-way ``latency_ms`` and
        ``worst_latency_ms`` over the paths used, the same as RTT, ``paths_used``. ``unmet_gbps`` has the
        impact's one meaning (traffic that cannot be carried at <= 100 % utilisation): for a min-MLU routing that
        overloads links, :func:`backbone.solver.failures.impact.apply_impact_unmet` sets it (``te`` and ``solve_te`` with
        the impact) and adds ``routed_gbps``, what the routing puts on its paths.
    paths
        One row per (demand, path) carrying traffic: ``demand``, ``src``, ``dst``,
        ``path_sites`` (``A>B>C``), ``path_links`` (``l1;l2``), ``hops``, ``latency_ms``,
        ``rtt_ms``, ``gbps``.
    summary
        The routing's record (:class:`~backbone.solver.te.summary.TERecord`): status, objective, figures, timings,
        LP stats and the ``map`` object; frozen (:meth:`with_summary` makes a result with a changed one).
    verification
        The independent checker's record (:meth:`backbone.solver.checks.CheckReport.record`) when the
        result was verified (``verify=True``), else None; :meth:`to_dict` gives its document as ``verification``.
    """

    links: pd.DataFrame
    demands: pd.DataFrame
    paths: pd.DataFrame
    summary: TERecord
    verification: CheckRecord | None = None
    model: Any = field(default=None, repr=False, compare=False)
    """The exact path routing's instance and formulation (:class:`backbone.solver.te.TEModel`), kept in memory so
    :func:`backbone.solver.te.resolve_te` reuses them; never saved nor pickled."""

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without ``model`` (its closures do not pickle; another process rebuilds what it needs)."""
        return {**self.__dict__, "model": None}

    @property
    def mlu(self) -> float:
        """The routing's maximum link utilisation (0.0 when the record has none)."""
        return float(self.summary.mlu or 0.0)

    def with_summary(self, **changes: Any) -> TEResult:
        """This result with its record changed by ``changes`` (:meth:`TERecord.updated
        <backbone.solver.te.summary.TERecord.updated>`); the tables and the kept model are shared, not copied."""
        return replace(self, summary=self.summary.updated(**changes))

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON document (:meth:`TERecord.document <backbone.solver.te.summary.TERecord.document>`),
        with ``verification`` when the result was verified."""
        if self.verification is None:
            return self.summary.document()
        return {**self.summary.document(), "verification": self.verification.document()}

    def write(self, out_dir: str | Path, parquet: bool = True) -> list[str]:
        """Write ``te_links``, ``te_demands``, ``te_paths`` as CSV (and Parquet) into ``out_dir``.

        Returns
        -------
        list of str
            File names written, relative to ``out_dir``.
        """
        writer = ArtifactWriter(out_dir)
        self.save(writer, parquet)
        return writer.files

    def save(self, writer: ArtifactWriter, parquet: bool = True) -> None:
        """Write the tables through ``writer`` (``te_links``, ``te_demands``, ``te_paths``: CSV, and Parquet when
        a Parquet engine is installed)."""
        for name, df, index in (("te_links", self.links, "link"), ("te_demands", self.demands, "demand"),
                                ("te_paths", self.paths, None)):
            frame = df.rename_axis(index).reset_index() if index else df
            writer.csv(f"{name}.csv", frame)
            if parquet:
                writer.parquet(f"{name}.parquet", frame)


@dataclass
class DemandPathStats:
    """Per-demand path figures of a routing whose ``paths`` table lists only part of its paths.

    ``demands`` are instance demand positions; ``latency_ms`` is each one's traffic-weighted one-way latency
    over all its paths, ``worst_latency_ms`` the largest, ``paths_used`` how many paths it has. The table holds
    ``table_rows`` of ``total_rows`` path splits: every path of the ``demands_listed`` largest demands
    (``traffic_share`` of the traffic).
    """

    demands: np.ndarray
    latency_ms: np.ndarray
    worst_latency_ms: np.ndarray
    paths_used: np.ndarray
    table_rows: int
    total_rows: int
    demands_listed: int
    traffic_share: float

    @property
    def complete(self) -> bool:
        return self.table_rows >= self.total_rows


def assemble_result(inst: TEInstance, arc_load: np.ndarray, carried: np.ndarray, reason: np.ndarray,
                    splits: pd.DataFrame, summary: dict[str, Any], t_start: float, tol: float = 1e-6,
                    path_stats: DemandPathStats | None = None) -> TEResult:
    """Build the result tables from solver output (all arrays over the instance's arcs/demands).

    Parameters
    ----------
    arc_load
        ``(2L,)`` Gbps per arc (forward arcs first).
    carried
        ``(D,)`` carried Gbps per demand.
    reason
        ``(D,)`` structural reason per demand (``""`` where routable); unmet traffic of
        routable demands is labelled ``capacity``.
    splits
        Frame with ``demand_pos, path_sites, path_links, hops, latency_ms, gbps``.
    summary
        The solver's fields of the record (status, objective, timings, ...; :class:`~backbone.solver.te.summary.TERecord`
        field names), added to the figures computed from the tables (a figure given here wins).
    t_start
        When the solve started (``time.perf_counter()``): the record's ``total_seconds`` runs to the end of this.
    path_stats
        Per-demand path figures over every path, when ``splits`` lists only some paths: the demand table's
        latency columns and ``paths_used`` and the summary's latencies come from it, and the summary's
        ``paths_complete`` is false when the table is partial (with ``paths_table`` saying what it lists).
    """
    net = inst.net
    n_links = inst.n_links
    cap = inst.arc_capacity_gbps[:n_links]
    ab, ba = arc_load[:n_links], arc_load[n_links:]
    util = utilisation(ab, ba, cap)
    links = pd.DataFrame({"site_a": net.links["site_a"].to_numpy(), "site_b": net.links["site_b"].to_numpy(),
                          "capacity_gbps": cap, "flow_ab_gbps": ab, "flow_ba_gbps": ba, "utilisation": util},
                         index=inst.link_ids.rename("id"))
    h = inst.demand_gbps
    carried = np.clip(carried, 0.0, h)
    unmet = h - carried
    unmet[unmet <= tol * np.maximum(1.0, h)] = 0.0
    carried = h - unmet  # carried + unmet == demand exactly
    reason = np.asarray(reason, object).copy()
    reason[(reason == "") & (unmet > 0)] = REASON_CAPACITY
    reason[unmet == 0] = ""

    pos = splits["demand_pos"].to_numpy(np.int64) if len(splits) else np.zeros(0, np.int64)
    gbps = splits["gbps"].to_numpy(float) if len(splits) else np.zeros(0)
    plat = splits["latency_ms"].to_numpy(float) if len(splits) else np.zeros(0)
    flow_sum = np.bincount(pos, weights=gbps, minlength=inst.n_demands)
    lat_sum = np.bincount(pos, weights=gbps * plat, minlength=inst.n_demands)
    worst = np.full(inst.n_demands, np.nan)
    if len(pos):
        w = np.full(inst.n_demands, -np.inf)
        np.maximum.at(w, pos, plat)
        worst = np.where(np.isfinite(w), w, np.nan)
    weighted = np.where(flow_sum > 0, lat_sum / np.where(flow_sum > 0, flow_sum, 1.0), np.nan)
    paths_used = np.bincount(pos, minlength=inst.n_demands)
    if path_stats is not None:
        weighted[path_stats.demands] = path_stats.latency_ms
        worst[path_stats.demands] = path_stats.worst_latency_ms
        paths_used[path_stats.demands] = path_stats.paths_used
    d = net.demands
    demands = pd.DataFrame({
        "src": d["src"].to_numpy(), "dst": d["dst"].to_numpy(), "traffic_class": d["traffic_class"].to_numpy(),
        "demand_gbps": h, "carried_gbps": carried, "unmet_gbps": unmet, "reason": reason.astype(str),
        "slo_rtt_ms": d["slo_rtt_ms"].to_numpy(float), "latency_ms": weighted, "worst_latency_ms": worst,
        "rtt_ms": 2 * weighted, "worst_rtt_ms": 2 * worst,
        "paths_used": paths_used,
    }, index=inst.demand_ids.rename("id"))
    ids = inst.demand_ids.to_numpy()
    paths = pd.DataFrame({
        "demand": ids[pos], "src": d["src"].to_numpy()[pos], "dst": d["dst"].to_numpy()[pos],
        "path_sites": splits["path_sites"].to_numpy() if len(splits) else [],
        "path_links": splits["path_links"].to_numpy() if len(splits) else [],
        "hops": splits["hops"].to_numpy(np.int64) if len(splits) else np.zeros(0, np.int64),
        "latency_ms": plat, "rtt_ms": 2 * plat, "gbps": gbps,
    })
    s = summarize(links, demands, paths)
    if path_stats is not None:
        c = demands["carried_gbps"].to_numpy(float)
        served = (c > 0) & np.isfinite(weighted)
        total = float(c[served].sum())
        weighted_ms = float((c[served] * weighted[served]).sum()) / total if total > 0 else None
        s.update(weighted_latency_ms=weighted_ms, weighted_rtt_ms=None if weighted_ms is None else 2 * weighted_ms,
                 worst_latency_ms=float(np.nanmax(worst)) if np.isfinite(worst).any() else None,
                 paths_complete=path_stats.complete,
                 paths_table=PathsTable(rows=path_stats.table_rows, paths=path_stats.total_rows,
                                        demands_listed=path_stats.demands_listed, demands=len(path_stats.demands),
                                        traffic_share=path_stats.traffic_share))
    s.update(summary)
    notes = list(s.get("notes", []))
    if path_stats is not None and not path_stats.complete:
        notes.append(f"the paths table lists {path_stats.table_rows:,} of {path_stats.total_rows:,} path splits: "
                     f"every path of the {path_stats.demands_listed:,} largest of {len(path_stats.demands):,} "
                     f"demands ({100 * path_stats.traffic_share:.1f} % of the traffic); link loads, MLU, bound "
                     "and latencies cover every path")
    if not s["demand_gbps"] > 0:
        notes.insert(0, NO_DEMAND_NOTE)
    record = TERecord(**{**s, "notes": notes}, total_seconds=time.perf_counter() - t_start)
    return TEResult(links, demands, paths, record)


def summarize(links: pd.DataFrame, demands: pd.DataFrame, paths: pd.DataFrame) -> dict[str, Any]:
    """Figures every TE summary carries, computed from the tables."""
    carried = float(demands["carried_gbps"].sum())
    by_class = {}
    grouped = demands.groupby("traffic_class")[["demand_gbps", "carried_gbps", "unmet_gbps"]].sum()
    for cls in TRAFFIC_CLASSES:
        if cls in grouped.index:
            r = grouped.loc[cls]
            by_class[cls] = {"demand_gbps": float(r["demand_gbps"]), "carried_gbps": float(r["carried_gbps"]),
                             "unmet_gbps": float(r["unmet_gbps"])}
    unmet_reason = demands[demands["unmet_gbps"] > 0].groupby("reason")["unmet_gbps"].agg(["sum", "count"])
    lat_total = float((paths["gbps"] * paths["latency_ms"]).sum())
    mlu = float(links["utilisation"].max()) if len(links) else 0.0
    util = links["utilisation"]
    return {
        "mlu": mlu,
        "overloaded": bool(mlu > 1 + 1e-9),
        "demand_gbps": float(demands["demand_gbps"].sum()),
        "carried_gbps": carried,
        "unmet_gbps": float(demands["unmet_gbps"].sum()),
        "by_class": by_class,
        "unmet_by_reason": {str(k): {"gbps": float(v["sum"]), "demands": int(v["count"])}
                            for k, v in unmet_reason.iterrows()},
        "weighted_latency_ms": lat_total / carried if carried > 0 else None,
        "worst_latency_ms": float(paths["latency_ms"].max()) if len(paths) else None,
        "weighted_rtt_ms": 2 * lat_total / carried if carried > 0 else None,
        "links_over_80pct": int((util > 0.8 + 1e-9).sum()),
        "map": {"link_values": {"utilisation": {str(k): float(v) for k, v in util.items()}}},
    }


def class_link_flows(result: TEResult) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Gbps each traffic class puts on each link, per direction, from the routing's path splits.

    With ``X`` the path x link incidence of the ``paths`` table split by the direction each path crosses the link
    (``X_ab[p, l] = 1`` when path ``p`` crosses ``l`` from ``site_a`` to ``site_b``, ``X_ba`` the other way) and
    ``C[k, p]`` the Gbps of path ``p`` when its demand is of class ``k``: ``flow_ab = (C X_ab)^T`` and
    ``flow_ba = (C X_ba)^T`` (two sparse products, no loop over paths).

    The link loads (``links.flow_ab_gbps`` / ``flow_ba_gbps``) cover every path; where the paths table lists only
    some (``summary.paths_complete`` false) or its splits do not add up to the loads, the difference is the
    column :data:`backbone.corridors.UNLISTED_CLASS` (differences within round-off, ``1e-6`` relative, are 0), so
    the columns always add up to the link loads.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        ``flow_ab_gbps`` and ``flow_ba_gbps``: indexed by link id (the ``links`` table's order), one column per
        traffic class routed (priority order), plus ``unlisted`` when some load is not in the paths table.
    """
    links, paths = result.links, result.paths[result.paths["hops"] > 0]
    present = set(result.demands["traffic_class"].unique())
    classes = [c for c in TRAFFIC_CLASSES if c in present]
    cls = pd.Categorical(result.demands["traffic_class"].reindex(paths["demand"].to_numpy()), categories=classes)
    link_lists = paths["path_links"].astype(str).str.split(";")
    site_lists = paths["path_sites"].astype(str).str.split(">")
    hops = link_lists.str.len().to_numpy(np.int64)
    row = np.repeat(np.arange(len(paths)), hops)
    hop_in_path = np.arange(int(hops.sum())) - np.repeat(np.cumsum(hops) - hops, hops)
    col = links.index.get_indexer(link_lists.explode().to_numpy())
    sites = site_lists.explode().to_numpy()
    site_start = np.cumsum(site_lists.str.len().to_numpy(np.int64)) - site_lists.str.len().to_numpy(np.int64)
    from_site = sites[site_start[row] + hop_in_path] if len(row) else np.zeros(0, object)
    forward = (from_site == links["site_a"].to_numpy()[col]).astype(float)
    shape = (len(paths), len(links))
    x_ab = sparse.csr_matrix((forward, (row, col)), shape=shape)
    x_ba = sparse.csr_matrix((1.0 - forward, (row, col)), shape=shape)
    c = sparse.csr_matrix((paths["gbps"].to_numpy(float), (cls.codes, np.arange(len(paths)))),
                          shape=(len(classes), len(paths)))
    ab = pd.DataFrame((c @ x_ab).T.toarray(), index=links.index, columns=classes)
    ba = pd.DataFrame((c @ x_ba).T.toarray(), index=links.index, columns=classes)
    for frame, total in ((ab, links["flow_ab_gbps"]), (ba, links["flow_ba_gbps"])):
        rest = total.to_numpy(float) - frame.sum(axis=1).to_numpy()
        frame[UNLISTED_CLASS] = np.where(np.abs(rest) <= 1e-6 * np.maximum(1.0, total.to_numpy(float)), 0.0, rest)
    if not (ab[UNLISTED_CLASS].any() or ba[UNLISTED_CLASS].any()):
        ab, ba = ab.drop(columns=UNLISTED_CLASS), ba.drop(columns=UNLISTED_CLASS)
    return ab, ba


def corridor_table(net: Network, result: TEResult) -> pd.DataFrame:
    """The routing's Gbps per (corridor, traffic class) in each direction, with each corridor's lit capacity and
    utilisation (:func:`backbone.corridors.corridor_traffic` of :func:`class_link_flows`): what ``corridors.csv``
    holds. ``net`` is the network ``result`` routed."""
    ab, ba = class_link_flows(result)
    return corridor_traffic(net, ab, ba)
