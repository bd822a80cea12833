"""Arrays a TE formulation needs, prepared once from a :class:`~backbone.model.Network`.

Arcs follow docs/CONTRACTS.md: arc ``j < L`` is link ``j`` from ``site_a`` to ``site_b``, arc
``L + j`` the reverse; capacity is per direction. Demands keep their table order; demands that no
formulation can carry are classified up front (``disconnected``: source and destination lie in
different connected components; zero demand is simply carried).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from backbone.model import Network
from backbone.schema import TRAFFIC_CLASSES
from backbone.solver.core.sparse import incidence, selector

REASON_SLO = "no_path_within_slo"
REASON_CAPACITY = "capacity"
REASON_DISCONNECTED = "disconnected"
REASONS = (REASON_SLO, REASON_CAPACITY, REASON_DISCONNECTED)
"""Why demand is unmet, as reported in the per-demand table."""


@dataclass
class TEInstance:
    """Arc and demand arrays of one network.

    Attributes
    ----------
    net
        The network (never modified).
    site_ids, link_ids, demand_ids
        Labels, in table order.
    arc_tail, arc_head
        Site positions of each of the ``2L`` arcs.
    arc_capacity_gbps, arc_latency_ms
        Per-arc capacity (per direction) and one-way latency.
    src, dst
        Site positions of each demand.
    demand_gbps
        Requested traffic per demand.
    class_rank
        Priority of each demand's traffic class (0 = training, highest).
    slo_one_way_ms
        ``slo_rtt_ms / 2`` per demand (inf when the demand has no SLO).
    reason
        Pre-solve reason a demand cannot be carried (``disconnected``) or ``""``.
    """

    net: Network
    site_ids: pd.Index
    link_ids: pd.Index
    demand_ids: pd.Index
    arc_tail: np.ndarray
    arc_head: np.ndarray
    arc_capacity_gbps: np.ndarray
    arc_latency_ms: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    demand_gbps: np.ndarray
    class_rank: np.ndarray
    slo_one_way_ms: np.ndarray
    reason: np.ndarray
    path_provider: Callable[..., Any] | None = None
    """Optional replacement for :func:`backbone.solver.paths.candidates.candidate_paths`, called as
    ``path_provider(net, pairs, k_paths=..., max_latency_ms=..., disjoint=...)``; failure
    sweeps pass one that derives the failed topology's paths from the intact network's."""

    @property
    def n_sites(self) -> int:
        return len(self.site_ids)

    @property
    def n_links(self) -> int:
        return len(self.link_ids)

    @property
    def n_arcs(self) -> int:
        return 2 * len(self.link_ids)

    @property
    def n_demands(self) -> int:
        return len(self.demand_ids)

    @property
    def has_slo(self) -> np.ndarray:
        """Demands with a latency SLO."""
        return np.isfinite(self.slo_one_way_ms)

    @property
    def routable(self) -> np.ndarray:
        """Demands with positive traffic whose endpoints are connected."""
        return (self.demand_gbps > 0) & (self.reason == "")

    def node_arc_incidence(self) -> sp.csr_matrix:
        """Sparse ``N x 2L`` node-arc incidence: ``+1`` at an arc's tail, ``-1`` at its head."""
        return incidence(self.n_sites, self.arc_tail, self.arc_head)


def build_instance(net: Network, path_provider: Callable[..., Any] | None = None) -> TEInstance:
    """Prepare the arc and demand arrays of ``net``.

    Parameters
    ----------
    net
        A validated network.
    path_provider
        Optional candidate-path function (default :func:`backbone.solver.paths.candidates.candidate_paths`).

    Returns
    -------
    TEInstance
    """
    site_pos = pd.Series(np.arange(len(net.sites)), index=net.sites.index)
    a, b = net.link_endpoints()
    links = net.links
    cap = links["capacity_gbps"].to_numpy(float)
    lat = links["latency_ms"].to_numpy(float)
    d = net.demands
    src = site_pos.reindex(d["src"]).to_numpy()
    dst = site_pos.reindex(d["dst"]).to_numpy()
    rank = {c: i for i, c in enumerate(TRAFFIC_CLASSES)}
    class_rank = d["traffic_class"].map(rank).fillna(len(TRAFFIC_CLASSES) - 1).to_numpy(int)
    slo = d["slo_rtt_ms"].to_numpy(float) / 2.0
    slo = np.where(np.isfinite(slo), slo, np.inf)

    n = len(net.sites)
    adj = selector(a, n, n, cols=b)
    _, comp = connected_components(adj, directed=False)
    reason = np.where(comp[src.astype(int)] != comp[dst.astype(int)], REASON_DISCONNECTED, "").astype(object)
    return TEInstance(
        net=net,
        site_ids=net.sites.index,
        link_ids=links.index,
        demand_ids=d.index,
        arc_tail=np.concatenate([a, b]).astype(np.int64),
        arc_head=np.concatenate([b, a]).astype(np.int64),
        arc_capacity_gbps=np.concatenate([cap, cap]),
        arc_latency_ms=np.concatenate([lat, lat]),
        src=src.astype(np.int64),
        dst=dst.astype(np.int64),
        demand_gbps=d["demand_gbps"].to_numpy(float),
        class_rank=class_rank,
        slo_one_way_ms=slo,
        reason=reason,
        path_provider=path_provider,
    )
