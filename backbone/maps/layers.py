"""Geometry of the drawable layers in one view: link routes, sites, metros, assignment arcs, workload flow arcs.

Static and interactive maps share it, so a link is cut and projected the same way everywhere.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from backbone import geo
from backbone.maps.projection import MapView
from backbone.maps.values import MapValues
from backbone.model import Network, link_route


@dataclass(frozen=True)
class Layers:
    """Projected geometry of a network in a view.

    Attributes
    ----------
    link_parts
        For each link (``net.links`` order), its projected polyline parts (cut at the seam).
    site_xy
        (n_sites, 2) projected positions; ``site_visible`` marks those inside the view.
    metro_xy, metro_visible
        The same for metros.
    assignment_parts
        For each row of ``values.assignments``, the projected parts of its metro -> site arc.
    candidate_parts
        For each candidate route (``net.candidates`` order), its projected polyline parts.
    flow_parts
        For each row of ``values.workload_flows``, the projected parts of its src -> dst arc
        (:func:`workload_arcs`).
    """

    link_parts: list[list[np.ndarray]]
    site_xy: np.ndarray
    site_visible: np.ndarray
    metro_xy: np.ndarray
    metro_visible: np.ndarray
    assignment_parts: list[list[np.ndarray]]
    candidate_parts: list[list[np.ndarray]] = field(default_factory=list)
    flow_parts: list[list[np.ndarray]] = field(default_factory=list)


_ROUTES: weakref.WeakKeyDictionary[Network, list[np.ndarray]] = weakref.WeakKeyDictionary()
_CANDIDATE_ROUTES: weakref.WeakKeyDictionary[Network, list[np.ndarray]] = weakref.WeakKeyDictionary()


def link_routes(net: Network) -> list[np.ndarray]:
    """Unwrapped (lon, lat) route of every link, in ``net.links`` order.

    Cached per Network instance (a Network is never mutated), so drawing several views or
    formats of one network densifies its geodesics once.
    """
    routes = _ROUTES.get(net)
    if routes is None:
        routes = [net.link_coords(i) for i in net.links.index]
        _ROUTES[net] = routes
    return routes


def candidate_routes(net: Network) -> list[np.ndarray]:
    """Unwrapped (lon, lat) route of every candidate, in ``net.candidates`` order (cached like
    :func:`link_routes`)."""
    routes = _CANDIDATE_ROUTES.get(net)
    if routes is None:
        routes = [link_route(row, net.sites) for row in net.candidates.to_dict("records")]
        _CANDIDATE_ROUTES[net] = routes
    return routes


def build_layers(net: Network, values: MapValues, view: MapView,
                 routes: list[np.ndarray] | None = None, candidates: bool = True) -> Layers:
    """Cut, clip and project every layer of ``net`` for ``view`` (candidate routes unless
    ``candidates`` is false)."""
    link_parts = view.project_lines(routes if routes is not None else link_routes(net))
    sx, sy, svis = view.project_points(net.sites["lon"].to_numpy(), net.sites["lat"].to_numpy())
    mx, my, mvis = view.project_points(net.metros["lon"].to_numpy(), net.metros["lat"].to_numpy())
    arcs = assignment_arcs(net, values.assignments)
    cands = view.project_lines(candidate_routes(net)) if candidates and len(net.candidates) else []
    flows = workload_arcs(net, values.workload_flows)
    return Layers(link_parts, np.column_stack([sx, sy]), svis, np.column_stack([mx, my]), mvis,
                  view.project_lines(arcs), cands, view.project_lines(flows) if flows else [])


def assignment_arcs(net: Network, assignments: pd.DataFrame) -> list[np.ndarray]:
    """Geodesic metro -> site arcs (unwrapped lon/lat) for each assignment row."""
    if len(assignments) == 0:
        return []
    m = net.metros.loc[assignments["metro"], ["lon", "lat"]].to_numpy(dtype=float)
    s = net.sites.loc[assignments["site"], ["lon", "lat"]].to_numpy(dtype=float)
    return [geo.route_coords([(a[0], a[1]), (b[0], b[1])], densify_km=200.0) for a, b in zip(m, s, strict=True)]


FLOW_BOW = 0.12
"""How far a workload flow arc bows off its great circle, as a share of its length (at most :data:`FLOW_BOW_MAX_DEG`):
to the left of its direction of travel, so the two directions of a flow (training sync each way) and the links under
it stay apart."""
FLOW_BOW_MAX_DEG = 4.0
"""The largest bow of a flow arc, degrees (long arcs stay near their great circle and off the poles)."""


def workload_arcs(net: Network, flows: pd.DataFrame) -> list[np.ndarray]:
    """Site -> site arcs (unwrapped lon/lat) for each row of ``flows`` (``src``, ``dst``): the geodesic between the
    two sites, bowed by :data:`FLOW_BOW` of its length to the left of travel (a flow and its reverse are two arcs)."""
    if len(flows) == 0:
        return []
    a = net.sites.loc[flows["src"], ["lon", "lat"]].to_numpy(dtype=float)
    b = net.sites.loc[flows["dst"], ["lon", "lat"]].to_numpy(dtype=float)
    arcs = []
    for p, q in zip(a, b, strict=True):
        line = geo.route_coords([(p[0], p[1]), (q[0], q[1])], densify_km=200.0)
        arcs.append(_bowed(line))
    return arcs


def _bowed(line: np.ndarray) -> np.ndarray:
    """``line`` (lon, lat) offset sideways by ``min(FLOW_BOW x chord, FLOW_BOW_MAX_DEG) x sin(pi t)`` (t: share of
    the way along), to the left of travel; longitude distances scaled by cos(mid latitude)."""
    if len(line) < 2:
        return line
    mid_lat = np.radians(float(line[:, 1].mean()))
    k = max(np.cos(mid_lat), 0.2)
    xy = np.column_stack([line[:, 0] * k, line[:, 1]])
    chord = xy[-1] - xy[0]
    length = float(np.hypot(*chord))
    if length == 0.0:
        return line
    normal = np.array([-chord[1], chord[0]]) / length
    step = np.r_[0.0, np.cumsum(np.hypot(*np.diff(xy, axis=0).T))]
    t = step / step[-1] if step[-1] > 0 else np.linspace(0.0, 1.0, len(line))
    if len(line) < 9:  # short arcs: enough points for a visible curve
        t_new = np.linspace(0.0, 1.0, 17)
        xy = np.column_stack([np.interp(t_new, t, xy[:, 0]), np.interp(t_new, t, xy[:, 1])])
        t = t_new
    xy = xy + np.outer(min(FLOW_BOW * length, FLOW_BOW_MAX_DEG) * np.sin(np.pi * t), normal)
    return np.column_stack([xy[:, 0] / k, np.clip(xy[:, 1], -89.5, 89.5)])
