"""An independent arc-flow LP for what a network state can carry: the survivability check's own model.

Nothing here comes from the code it checks: no candidate paths, no TE formulation, no
:class:`~backbone.solver.core.problem.LinearProgram`, no :func:`~backbone.solver.failures.impact.assess_state`. The model is
built from the network's tables with scipy.sparse and solved by HiGHS (highspy) directly.

The formulation (one commodity per source site, so it scales with sites, not demands)
----------------------------------------------------------------------------------------
Sites ``V``; links are full duplex, so link ``j`` gives arc ``j`` (``site_a -> site_b``) and arc ``L + j``
(``site_b -> site_a``), each with capacity ``c_a = capacity_gbps`` of its link. ``S`` is the set of sources
(sites with demand to carry); ``H[k, v]`` the demand from source ``k`` to site ``v`` the LP may carry in the
state. Variables: ``x[k, a] >= 0`` the flow of source ``k`` on arc ``a``; ``0 <= t[k, v] <= H[k, v]`` what is
carried from ``k`` to ``v``.

* conservation, every ``k in S``, ``v in V \\ {k}``: ``sum_{a in in(v)} x[k, a] - sum_{a in out(v)} x[k, a] =
  t[k, v]`` (the row of ``v = k`` is free: the source sends what the others receive);
* capacity, every arc ``a``: ``sum_k x[k, a] <= c_a`` (``<= 100 %`` utilisation, per direction); a failed
  arc has ``c_a = 0``;
* objective: ``max sum_{k, v} t[k, v]`` (maximum throughput).

``carried = sum t`` is the maximum any routing can carry at ``<= 100 %`` utilisation over *every* path, not
only the ``k`` shortest (the edge LP is the all-path LP: a path flow is an arc flow and an arc flow decomposes
into paths and cycles), so it is never above what path-restricted routings carry.

Latency SLOs are not in the LP
------------------------------
An SLO limits the paths of a demand; the arc-flow LP cannot express it per demand. It is checked apart, per
demand, by shortest latency (Dijkstra): a demand whose source and destination are disconnected in the state
is *cut*; a connected demand with ``2 * shortest_latency_ms > slo_rtt_ms`` has *no path within its SLO*;
neither is offered to the LP (``H`` excludes them) and both count as not carried. A demand whose SLO some
path meets is offered to the LP over every path, so the LP's shortfall is a lower bound on an SLO-respecting
routing's (exact for demands without SLOs). Demands to or from failed sites are *lost*: not offered, not
counted as unmet.

The model is built once per network; each state only changes bounds (capacity rows of failed arcs to 0,
``H`` of the demands the state takes out) and HiGHS re-solves from the previous basis.

Example
-------
>>> model = EdgeFlowModel(net)                                   # doctest: +SKIP
>>> model.solve(model.link_mask(["ab"])).unmet_gbps              # doctest: +SKIP
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, dijkstra

from backbone.errors import SolverError
from backbone.model import Network
from backbone.solver.backends._stdio import stdout_to_stderr

logger = logging.getLogger(__name__)

__all__ = ["EdgeFlowModel", "StateFlow"]

LATENCY_FLOOR_MS = 1e-9
"""A zero-latency arc still joins its sites (sparse graphs drop explicit zero weights)."""

SLO_TOL_MS = 1e-9
"""Round-off allowed in ``2 * latency <= slo_rtt_ms``."""


@dataclass(frozen=True)
class StateFlow:
    """What one state carries by the independent model (every figure in Gbps, over the demands offered).

    Attributes
    ----------
    demand_gbps
        Demand of the state (every demand but those lost with failed sites).
    carried_gbps
        Carried by the arc-flow LP at ``<= 100 %`` utilisation.
    cut_gbps
        Demand whose endpoints the state cuts apart (no path at all).
    isolated_gbps
        The part of ``cut_gbps`` to or from a site that has no working link left.
    slo_gbps
        Connected demand with no path within its latency SLO.
    short_gbps
        Offered to the LP but not carried (capacity).
    lost_gbps
        Demand to or from the failed sites (not counted as unmet).
    paused_gbps
        Demand the state does not offer because its class pauses in a failure state (not counted as unmet).
    isolated_sites
        Sites with demand and no working link left.
    seconds
        Wall time of the state (graph tests and LP).
    """

    demand_gbps: float
    carried_gbps: float
    cut_gbps: float
    isolated_gbps: float
    slo_gbps: float
    short_gbps: float
    lost_gbps: float
    isolated_sites: tuple[str, ...]
    seconds: float
    paused_gbps: float = 0.0

    @property
    def unmet_gbps(self) -> float:
        """Everything the state does not carry: cut apart, outside its SLO, or short of capacity."""
        return self.cut_gbps + self.slo_gbps + self.short_gbps


class EdgeFlowModel:
    """The arc-flow max-throughput LP of one network, re-solved per state by changing bounds.

    Parameters
    ----------
    net
        The network (its links, sites and demands; candidates are not links and are ignored).
    time_limit_s
        Time limit of each LP solve.

    Raises
    ------
    SolverError
        When highspy is missing or a solve does not reach an optimum.
    """

    def __init__(self, net: Network, time_limit_s: float = 60.0) -> None:
        self.net = net
        self.time_limit_s = float(time_limit_s)
        sites, links, d = net.sites, net.links, net.demands
        self.site_ids = pd.Index(sites.index)
        self.link_ids = pd.Index(links.index)
        pos = pd.Series(np.arange(len(sites)), index=sites.index)
        a = pos.loc[links["site_a"]].to_numpy(np.int64)
        b = pos.loc[links["site_b"]].to_numpy(np.int64)
        self.n_sites, self.n_links = len(sites), len(links)
        self.link_a, self.link_b = a, b
        self.tail, self.head = np.concatenate([a, b]), np.concatenate([b, a])
        cap = links["capacity_gbps"].to_numpy(float)
        self.arc_capacity_gbps = np.concatenate([cap, cap])
        lat = np.maximum(np.nan_to_num(links["latency_ms"].to_numpy(float), nan=0.0), LATENCY_FLOOR_MS)
        self.arc_latency_ms = np.concatenate([lat, lat])
        self.src = pos.loc[d["src"]].to_numpy(np.int64)
        self.dst = pos.loc[d["dst"]].to_numpy(np.int64)
        self.gbps = d["demand_gbps"].to_numpy(float)
        self.slo_rtt_ms = d["slo_rtt_ms"].to_numpy(float)
        self.demand_ids = pd.Index(d.index)
        offered = (self.gbps > 0) & (self.src != self.dst)
        self.sources = np.unique(self.src[offered])
        self._highs: object | None = None
        self._build(offered)

    # ---------------------------------------------------------------- masks
    def link_mask(self, link_ids: Iterable[str]) -> np.ndarray:
        """Boolean mask over the links of the given ids (ids not in the network are ignored)."""
        return self.link_ids.isin(list(link_ids))

    def site_mask(self, site_ids: Iterable[str]) -> np.ndarray:
        """Boolean mask over the sites of the given ids (ids not in the network are ignored)."""
        return self.site_ids.isin(list(site_ids))

    # ---------------------------------------------------------------- model
    def _build(self, offered: np.ndarray) -> None:
        """Assemble the LP (see the module doc) as one column-wise sparse matrix and pass it to HiGHS."""
        n, n_arcs = self.n_sites, 2 * self.n_links
        k_of_site = np.full(n, -1, np.int64)
        k_of_site[self.sources] = np.arange(len(self.sources))
        n_k = len(self.sources)
        # t columns: one per (source, destination) pair with demand
        pair = k_of_site[self.src] * n + self.dst
        pair[~offered] = -1
        self.pairs = np.unique(pair[pair >= 0])
        self.pair_of_demand = np.full(len(self.gbps), -1, np.int64)
        self.pair_of_demand[offered] = np.searchsorted(self.pairs, pair[offered])
        n_x, n_t = n_k * n_arcs, len(self.pairs)
        self.n_x, self.n_t = n_x, n_t
        # conservation rows k * n + v: x[k, a] is +1 at head(a), -1 at tail(a); t[k, v] is -1 at (k, v)
        k_rep = np.repeat(np.arange(n_k), n_arcs)
        a_tile = np.tile(np.arange(n_arcs), n_k)
        x_cols = np.arange(n_x)
        rows = np.concatenate([k_rep * n + self.head[a_tile], k_rep * n + self.tail[a_tile], self.pairs,
                               n_k * n + a_tile])
        cols = np.concatenate([x_cols, x_cols, n_x + np.arange(n_t), x_cols])
        vals = np.concatenate([np.ones(n_x), -np.ones(n_x), -np.ones(n_t), np.ones(n_x)])
        n_rows = n_k * n + n_arcs
        matrix = sp.csc_matrix((vals, (rows, cols)), shape=(n_rows, n_x + n_t))
        self.capacity_row0 = n_k * n
        row_lower = np.zeros(n_rows)
        row_upper = np.zeros(n_rows)
        free = np.arange(n_k) * n + self.sources  # a source's own row
        row_lower[free], row_upper[free] = -np.inf, np.inf
        row_lower[self.capacity_row0:] = -np.inf
        row_upper[self.capacity_row0:] = self.arc_capacity_gbps
        self.pair_gbps = np.bincount(self.pair_of_demand[offered], weights=self.gbps[offered], minlength=n_t)
        cost = np.concatenate([np.zeros(n_x), -np.ones(n_t)])
        col_upper = np.concatenate([np.full(n_x, np.inf), self.pair_gbps])
        self._pass(matrix, cost, np.zeros(n_x + n_t), col_upper, row_lower, row_upper)

    def _pass(self, matrix: sp.csc_matrix, cost: np.ndarray, col_lower: np.ndarray, col_upper: np.ndarray,
              row_lower: np.ndarray, row_upper: np.ndarray) -> None:
        try:
            import highspy
        except ImportError as exc:  # pragma: no cover - highspy is a dependency
            raise SolverError("the survivability check needs highspy (pip install highspy)") from exc
        with stdout_to_stderr(discard=True):  # the licence banner, printed on construction (--json owns stdout)
            h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", "simplex")  # dual simplex re-solves from the last basis after bound changes
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = matrix.shape[1], matrix.shape[0]
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, col_lower, col_upper
        lp.row_lower_, lp.row_upper_ = row_lower, row_upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = matrix.indptr.astype(np.int32)
        lp.a_matrix_.index_ = matrix.indices.astype(np.int32)
        lp.a_matrix_.value_ = matrix.data.astype(float)
        h.passModel(lp)
        self._highs = h

    def _max_throughput(self, arc_alive: np.ndarray, pair_upper: np.ndarray) -> float:
        """Solve the LP with the state's bounds; the carried Gbps."""
        import highspy

        h = self._highs
        assert h is not None
        n_arcs = len(arc_alive)
        arc_rows = np.arange(self.capacity_row0, self.capacity_row0 + n_arcs, dtype=np.int32)
        h.changeRowsBounds(n_arcs, arc_rows, np.full(n_arcs, -np.inf),  # type: ignore[attr-defined]
                           np.where(arc_alive, self.arc_capacity_gbps, 0.0))
        t_cols = np.arange(self.n_x, self.n_x + self.n_t, dtype=np.int32)
        h.changeColsBounds(self.n_t, t_cols, np.zeros(self.n_t), pair_upper)  # type: ignore[attr-defined]
        h.setOptionValue("time_limit", self.time_limit_s)  # type: ignore[attr-defined]
        h.run()  # type: ignore[attr-defined]
        status = h.getModelStatus()  # type: ignore[attr-defined]
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolverError(f"the survivability check's edge LP ended {h.modelStatusToString(status)}"  # type: ignore[attr-defined]
                              " (not optimal)")
        return float(-h.getInfo().objective_function_value)  # type: ignore[attr-defined]

    # ---------------------------------------------------------------- states
    def solve(self, link_down: np.ndarray | None = None, site_down: np.ndarray | None = None,
              drop_demands: np.ndarray | None = None, paused: np.ndarray | None = None) -> StateFlow:
        """What the state with ``link_down`` links and ``site_down`` sites failed carries.

        Parameters
        ----------
        link_down, site_down
            Boolean masks over the links and sites (None: none failed). A failed site takes its links down and
            its demands out (lost).
        drop_demands
            Boolean mask of demands left out of the state (treated as lost), e.g. to measure the intact
            network over the demands a site failure leaves.
        paused
            Boolean mask of demands the state does not offer (their class pauses in a failure state): neither
            unmet nor lost, reported as ``paused_gbps``.
        """
        t0 = time.perf_counter()
        link_down = np.zeros(self.n_links, bool) if link_down is None else np.asarray(link_down, bool)
        site_down = np.zeros(self.n_sites, bool) if site_down is None else np.asarray(site_down, bool)
        link_alive = ~link_down & ~site_down[self.link_a] & ~site_down[self.link_b]
        lost = site_down[self.src] | site_down[self.dst]
        if drop_demands is not None:
            lost |= np.asarray(drop_demands, bool)
        held = ~lost & (np.zeros(len(self.gbps), bool) if paused is None else np.asarray(paused, bool))
        active = ~lost & ~held & (self.gbps > 0) & (self.src != self.dst)
        n = self.n_sites
        graph = sp.csr_matrix((np.ones(int(link_alive.sum())), (self.link_a[link_alive], self.link_b[link_alive])),
                              shape=(n, n))
        _, label = connected_components(graph, directed=False)
        cut = active & (label[self.src] != label[self.dst])
        degree = np.bincount(np.concatenate([self.link_a[link_alive], self.link_b[link_alive]]), minlength=n)
        alone = (degree == 0) & ~site_down
        isolated = cut & (alone[self.src] | alone[self.dst])
        slo_out = active & ~cut & self._slo_unreachable(active & ~cut, np.concatenate([link_alive, link_alive]))
        offered = active & ~cut & ~slo_out
        upper = np.bincount(self.pair_of_demand[offered], weights=self.gbps[offered], minlength=self.n_t)
        carried = self._max_throughput(np.concatenate([link_alive, link_alive]), upper) if upper.sum() > 0 else 0.0
        offered_gbps = float(upper.sum())
        carried = min(carried, offered_gbps)
        sites_alone = np.unique(np.concatenate([self.src[isolated], self.dst[isolated]]))
        return StateFlow(
            demand_gbps=float(self.gbps[~lost & ~held].sum()), carried_gbps=carried, cut_gbps=float(self.gbps[cut].sum()),
            isolated_gbps=float(self.gbps[isolated].sum()), slo_gbps=float(self.gbps[slo_out].sum()),
            short_gbps=max(0.0, offered_gbps - carried), lost_gbps=float(self.gbps[lost].sum()),
            isolated_sites=tuple(str(self.site_ids[i]) for i in sites_alone if alone[i]),
            seconds=time.perf_counter() - t0, paused_gbps=float(self.gbps[held].sum()))

    def _slo_unreachable(self, candidates: np.ndarray, arc_alive: np.ndarray) -> np.ndarray:
        """Demands (of ``candidates``) with an SLO that no path of the state meets: ``2 * d(src, dst) > slo``."""
        has_slo = candidates & np.isfinite(self.slo_rtt_ms)
        out = np.zeros(len(self.gbps), bool)
        if not has_slo.any():
            return out
        n = self.n_sites
        tail, head, lat = self.tail[arc_alive], self.head[arc_alive], self.arc_latency_ms[arc_alive]
        order = np.argsort(lat, kind="stable")  # parallel arcs: keep the fastest (a sparse matrix would add them)
        _, first = np.unique(tail[order] * n + head[order], return_index=True)
        keep = order[first]
        graph = sp.csr_matrix((lat[keep], (tail[keep], head[keep])), shape=(n, n))
        srcs, inverse = np.unique(self.src[has_slo], return_inverse=True)
        dist = dijkstra(graph, directed=True, indices=srcs)
        shortest_ms = dist[inverse, self.dst[has_slo]]
        out[has_slo] = ~(2.0 * shortest_ms <= self.slo_rtt_ms[has_slo] + SLO_TOL_MS)
        return out
