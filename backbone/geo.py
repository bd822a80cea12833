"""Geodesy, route geometry and latency.

Lengths are geodesics on the WGS84 ellipsoid (pyproj); a link's route is a polyline through its
endpoints and waypoints, densified along geodesics, with longitudes *unwrapped* so that a route
crossing the antimeridian is one continuous line (longitudes may leave [-180, 180]).
:func:`split_antimeridian` cuts such a line into parts inside [-180, 180] for GeoJSON/KML.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyproj

GEOD = pyproj.Geod(ellps="WGS84")
"""The WGS84 ellipsoid."""

SPEED_OF_LIGHT_KM_PER_MS = 299.792458
"""Speed of light in vacuum, km per millisecond."""

DEFAULT_GROUP_INDEX = 1.468
"""Group index of standard single-mode fibre (G.652) at 1550 nm: ~4.90 us/km one way."""

DEFAULT_EQUIPMENT_DELAY_MS = 0.05
"""Per-hop equipment delay (transponders, ROADM, router), one way."""

DEFAULT_ROUTE_FACTOR = 1.25
"""Terrestrial fibre route length over the geodesic when no route geometry is given.

Long-haul fibre follows roads and rail; published route/geodesic ratios for long-haul
terrestrial routes are typically 1.2-1.4 (used by e.g. Bozkurt et al., "Why is the Internet
so slow?!", PAM 2017, who measure a median 1.5-2x for all paths); 1.25 suits the best backbones.
"""

DENSIFY_KM = 100.0
"""Spacing of intermediate points when densifying geodesic segments."""


def fibre_delay_ms_per_km(group_index: float = DEFAULT_GROUP_INDEX) -> float:
    """One-way propagation delay in fibre, ms per km (``n_g / c``)."""
    return group_index / SPEED_OF_LIGHT_KM_PER_MS


def geodesic_km(lon1: np.ndarray | float, lat1: np.ndarray | float,
                lon2: np.ndarray | float, lat2: np.ndarray | float) -> np.ndarray:
    """Geodesic distance on WGS84 in km (vectorized).

    Example
    -------
    >>> round(float(geodesic_km(-0.1276, 51.5072, 2.3522, 48.8566)), 0)
    344.0
    """
    a = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (lon1, lat1, lon2, lat2)))
    _, _, dist_m = GEOD.inv(a[0], a[1], a[2], a[3])
    return np.asarray(dist_m, dtype=float) / 1000.0


def parse_waypoints(text: str) -> list[tuple[float, float]]:
    """Parse ``'lon lat; lon lat'`` into a list of (lon, lat).

    Raises
    ------
    ValueError
        When a point is not two numbers.
    """
    points: list[tuple[float, float]] = []
    if not isinstance(text, str) or not text.strip():
        return points
    for chunk in text.split(";"):
        chunk = chunk.strip()
        if not chunk:
            continue
        parts = chunk.replace(",", " ").split()
        if len(parts) != 2:
            raise ValueError(f"waypoint {chunk!r} is not 'lon lat'")
        lon, lat = float(parts[0]), float(parts[1])
        if not (-180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0) or not np.isfinite([lon, lat]).all():
            raise ValueError(f"waypoint {chunk!r} is out of range")
        points.append((lon, lat))
    return points


def format_waypoints(points: Sequence[tuple[float, float]]) -> str:
    """Inverse of :func:`parse_waypoints` (longitudes wrapped to [-180, 180])."""
    return "; ".join(f"{_wrap(lon):.4f} {lat:.4f}" for lon, lat in points)


def _wrap(lon: float) -> float:
    return float((lon + 180.0) % 360.0 - 180.0) if not -180.0 <= lon <= 180.0 else float(lon)


def unwrap_lons(lons: np.ndarray) -> np.ndarray:
    """Unwrap longitudes so that consecutive points differ by less than 180 degrees."""
    lons = np.asarray(lons, dtype=float)
    if lons.size < 2:
        return lons.copy()
    # add whole turns only (exact: points that need no shift keep their longitude bit for bit)
    turns = np.round(np.diff(lons) / 360.0)
    return lons - 360.0 * np.concatenate([[0.0], np.cumsum(turns)])


def route_coords(points: Sequence[tuple[float, float]], densify_km: float = DENSIFY_KM) -> np.ndarray:
    """Polyline through ``points`` densified along geodesics, longitudes unwrapped.

    Returns an (n, 2) array of (lon, lat); the first point keeps its longitude in [-180, 180]
    and later longitudes continue it (so a trans-Pacific route may reach beyond 180).
    """
    pts = np.asarray(points, dtype=float)
    out: list[np.ndarray] = [pts[:1]]
    for (lon1, lat1), (lon2, lat2) in zip(pts[:-1], pts[1:], strict=True):
        dist = float(geodesic_km(lon1, lat1, lon2, lat2))
        n = int(dist // densify_km)
        if n > 0:
            mid = np.asarray(GEOD.npts(lon1, lat1, lon2, lat2, n), dtype=float).reshape(-1, 2)
            out.append(mid)
        out.append(np.array([[lon2, lat2]]))
    coords = np.vstack(out)
    coords[:, 0] = unwrap_lons(coords[:, 0])
    return coords


def polyline_km(points: Sequence[tuple[float, float]]) -> float:
    """Geodesic length of a polyline through ``points`` in km."""
    pts = np.asarray(points, dtype=float)
    if len(pts) < 2:
        return 0.0
    return float(geodesic_km(pts[:-1, 0], pts[:-1, 1], pts[1:, 0], pts[1:, 1]).sum())


def split_antimeridian(coords: np.ndarray) -> list[np.ndarray]:
    """Cut an unwrapped polyline into parts whose longitudes lie in [-180, 180].

    At each crossing of a multiple of +-180 degrees the crossing point is interpolated and
    inserted on both sides, so the parts meet exactly at the antimeridian.
    """
    c = np.asarray(coords, dtype=float)
    if len(c) == 0:
        return []
    # shift so the first point is in range
    shift = 360.0 * np.floor((c[0, 0] + 180.0) / 360.0)
    c = c - np.array([shift, 0.0])
    parts: list[np.ndarray] = []
    current: list[np.ndarray] = [c[0]]
    offset = 0.0
    for p, q in zip(c[:-1], c[1:], strict=True):
        lon_p, lon_q = p[0] - offset, q[0] - offset
        while lon_q > 180.0 or lon_q < -180.0:
            edge = 180.0 if lon_q > 180.0 else -180.0
            t = (edge - lon_p) / (lon_q - lon_p)
            lat_x = p[1] + t * (q[1] - p[1])
            current.append(np.array([edge, lat_x]))
            parts.append(np.vstack(current))
            offset += 360.0 if edge > 0 else -360.0
            current = [np.array([-edge, lat_x])]
            lon_p, lon_q = -edge, q[0] - offset
        current.append(np.array([lon_q, q[1]]))
    parts.append(np.vstack(current))
    # a route that starts, ends or turns exactly on the antimeridian yields repeated points and
    # zero-length parts: drop the repeats, then parts with fewer than two distinct points
    parts = [_drop_repeats(part) for part in parts]
    return [part for part in parts if len(part) >= 2] or [np.vstack(current)]


def _drop_repeats(part: np.ndarray) -> np.ndarray:
    keep = np.ones(len(part), dtype=bool)
    keep[1:] = np.any(np.diff(part, axis=0) != 0.0, axis=1)
    return part[keep]


def latency_ms(length_km: np.ndarray | float, group_index: float = DEFAULT_GROUP_INDEX,
               equipment_delay_ms: float = DEFAULT_EQUIPMENT_DELAY_MS) -> np.ndarray:
    """One-way latency of fibre of ``length_km``: length x group delay + equipment delay."""
    return np.asarray(length_km, dtype=float) * fibre_delay_ms_per_km(group_index) + equipment_delay_ms


def nearest_point(lon: float, lat: float, lons: np.ndarray, lats: np.ndarray) -> tuple[int, float]:
    """Index of and geodesic distance in km to the nearest of (lons, lats)."""
    d = geodesic_km(np.full(len(lons), lon), np.full(len(lons), lat), lons, lats)
    i = int(np.argmin(d))
    return i, float(d[i])
