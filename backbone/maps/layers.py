"""Geometry of the drawable layers in one view: link routes, sites, metros, assignment arcs.

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
    """

    link_parts: list[list[np.ndarray]]
    site_xy: np.ndarray
    site_visible: np.ndarray
    metro_xy: np.ndarray
    metro_visible: np.ndarray
    assignment_parts: list[list[np.ndarray]]
    candidate_parts: list[list[np.ndarray]] = field(default_factory=list)


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
    return Layers(link_parts, np.column_stack([sx, sy]), svis, np.column_stack([mx, my]), mvis,
                  view.project_lines(arcs), cands)


def assignment_arcs(net: Network, assignments: pd.DataFrame) -> list[np.ndarray]:
    """Geodesic metro -> site arcs (unwrapped lon/lat) for each assignment row."""
    if len(assignments) == 0:
        return []
    m = net.metros.loc[assignments["metro"], ["lon", "lat"]].to_numpy(dtype=float)
    s = net.sites.loc[assignments["site"], ["lon", "lat"]].to_numpy(dtype=float)
    return [geo.route_coords([(a[0], a[1]), (b[0], b[1])], densify_km=200.0) for a, b in zip(m, s, strict=True)]
