"""Lowest-latency routes between sites or geographic points (Dijkstra on the link table)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from backbone import geo
from backbone.errors import NotFoundError, ValidationError
from backbone.model import Network, access_latency_ms

_POINT = re.compile(r"^\s*(-?\d+(?:\.\d*)?)\s*,\s*(-?\d+(?:\.\d*)?)\s*$")


@dataclass(frozen=True)
class Endpoint:
    """A route end: a site, possibly snapped from a point ``snap_km`` away."""

    site: str
    snap_km: float = 0.0
    point: tuple[float, float] | None = None  # (lat, lon) as given


@dataclass(frozen=True)
class Route:
    """The lowest-latency route between two endpoints (one-way figures)."""

    source: Endpoint
    target: Endpoint
    path: list[str]
    links: list[str]
    length_km: float
    latency_ms: float
    access_km: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rtt_ms(self) -> float:
        """Round-trip time (symmetric routes)."""
        return 2.0 * self.latency_ms

    def to_dict(self) -> dict[str, Any]:
        """JSON form as ``backbone route --json`` prints it."""
        return {
            "from": self.source.site if self.source.point is None else list(self.source.point),
            "to": self.target.site if self.target.point is None else list(self.target.point),
            "from_site": self.source.site, "from_snap_km": round(self.source.snap_km, 3),
            "to_site": self.target.site, "to_snap_km": round(self.target.snap_km, 3),
            "path": self.path, "links": self.links,
            "length_km": round(self.length_km, 3), "access_km": round(self.access_km, 3),
            "latency_ms": round(self.latency_ms, 4), "rtt_ms": round(self.rtt_ms, 4),
        }


def resolve_endpoint(net: Network, text: str) -> Endpoint:
    """A site id, or a ``lat,lon`` point joined to its nearest site.

    Raises
    ------
    NotFoundError
        When ``text`` is neither a site id nor a point.
    """
    if text in net.sites.index:
        return Endpoint(text)
    m = _POINT.match(text)
    if not m:
        raise NotFoundError(f"{text!r} is neither a site id nor a 'lat,lon' point")
    lat, lon = float(m.group(1)), float(m.group(2))
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise ValidationError(f"point {text!r} is out of range (expected 'lat,lon')")
    i, dist = geo.nearest_point(lon, lat, net.sites["lon"].to_numpy(), net.sites["lat"].to_numpy())
    return Endpoint(str(net.sites.index[i]), dist, (lat, lon))


def shortest_route(net: Network, source: str, target: str) -> Route:
    """Lowest-latency route from ``source`` to ``target`` (site ids or ``lat,lon`` points).

    Access distance from a point to its site counts as terrestrial fibre with the scenario's
    route factor and terrestrial latency factor (:func:`backbone.model.access_latency_ms`).

    Raises
    ------
    NotFoundError
        When an endpoint is unknown or no path joins them.
    """
    from scipy.sparse.csgraph import dijkstra

    src, dst = resolve_endpoint(net, source), resolve_endpoint(net, target)
    graph, arc_link = min_latency_graph(net)
    pos = {s: i for i, s in enumerate(net.sites.index)}
    si, ti = pos[src.site], pos[dst.site]
    dist, pred = dijkstra(graph, indices=si, return_predecessors=True)
    if not np.isfinite(dist[ti]):
        raise NotFoundError(f"no path from {src.site!r} to {dst.site!r}")
    nodes = [ti]
    while nodes[-1] != si:
        nodes.append(int(pred[nodes[-1]]))
    nodes.reverse()
    link_ids = [str(net.links.index[arc_link[(u, v)]]) for u, v in zip(nodes[:-1], nodes[1:], strict=True)]
    length = float(net.links.loc[link_ids, "length_km"].sum()) if link_ids else 0.0
    params = net.parameters
    access_km = (src.snap_km + dst.snap_km) * params["route_factor"]
    latency = float(dist[ti]) + float(access_latency_ms(access_km, params))
    return Route(src, dst, [str(net.sites.index[i]) for i in nodes], link_ids, length + access_km, latency,
                 access_km)


def min_latency_graph(net: Network) -> tuple[Any, dict[tuple[int, int], int]]:
    """Symmetric CSR graph of the lowest one-way latency between adjacent sites, and the link
    (row position) realising each arc."""
    from scipy.sparse import csr_matrix

    n = len(net.sites)
    a, b = net.link_endpoints()
    lat = net.links["latency_ms"].to_numpy(dtype=float)
    li = np.arange(len(lat))
    rows, cols = np.concatenate([a, b]), np.concatenate([b, a])
    w, lid = np.concatenate([lat, lat]), np.concatenate([li, li])
    order = np.lexsort((w, cols, rows))  # by (row, col), cheapest first
    rows, cols, w, lid = rows[order], cols[order], w[order], lid[order]
    first = np.ones(len(rows), bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    rows, cols, w, lid = rows[first], cols[first], w[first], lid[first]
    # zero-latency links would vanish from a sparse matrix: floor at a tiny positive weight
    graph = csr_matrix((np.maximum(w, 1e-9), (rows, cols)), shape=(n, n))
    return graph, dict(zip(zip(rows.tolist(), cols.tolist(), strict=True), lid.tolist(), strict=True))
