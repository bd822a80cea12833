"""GeoJSON export of sites and links (geopandas), split at the antimeridian.

:func:`network_to_geodataframes` gives two GeoDataFrames in EPSG:4326: sites as Points with every
site column, links as LineStrings along their route (endpoints, waypoints and geodesic
densification, as :meth:`~backbone.model.Network.link_coords` draws them). A route that crosses
the antimeridian is cut there by :func:`backbone.geo.split_antimeridian` and becomes a
MultiLineString whose parts meet at lon = +-180, so every longitude lies in [-180, 180] and no
line is drawn across the whole map. Per-link and per-site values (utilisation, GPUs added, ...)
join as extra properties.

:func:`save_geojson` writes one RFC 7946 FeatureCollection holding both layers; the property
``feature_type`` (``"site"`` or ``"link"``) tells them apart (QGIS opens the file as one layer
per geometry type and can filter on it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pandas as pd

from backbone import geo
from backbone.artifacts import json_text, write_text_atomic
from backbone.errors import Problem, ValidationError
from backbone.model import Network

if TYPE_CHECKING:
    import geopandas as gpd

logger = logging.getLogger(__name__)

LINK_PROPERTIES: tuple[str, ...] = ("id", "name", "site_a", "site_b", "kind", "cable_system", "capacity_gbps",
                                    "length_km", "latency_ms")
"""Link columns carried as GeoJSON properties (plus ``srlgs`` and any given values)."""

COORDINATE_DECIMALS = 5
"""Decimal places kept in written coordinates (1e-5 degree is about 1 m)."""

Values: TypeAlias = Mapping[str, Mapping[str, float] | pd.Series] | pd.DataFrame | None
"""Per-element values: ``{name: {element_id: value}}`` or a DataFrame indexed by element id."""


def _values_frame(values: Values, index: pd.Index, what: str, taken: set[str]) -> pd.DataFrame:
    if values is None:
        return pd.DataFrame(index=index)
    frame = values.copy() if isinstance(values, pd.DataFrame) else pd.DataFrame(
        {str(k): pd.Series(v, dtype=float) if not isinstance(v, pd.Series) else v for k, v in values.items()})
    clash = sorted(set(map(str, frame.columns)) & taken)
    if clash:
        raise ValidationError([Problem(f"{what} value {c!r} would overwrite a {what} column", field=c)
                               for c in clash])
    frame.index = frame.index.map(str)
    unknown = frame.index.difference(index)
    if len(unknown):
        logger.debug("ignoring %s values for %d unknown id(s), e.g. %s", what, len(unknown), unknown[0])
    return frame.reindex(index)


def link_geometries(net: Network) -> list[Any]:
    """One shapely geometry per link (table order): a LineString, or a MultiLineString when
    the route crosses the antimeridian; longitudes in [-180, 180].

    Links without waypoints (most of them) are densified along their geodesic in one
    vectorized pass (points every :data:`backbone.geo.DENSIFY_KM` at most, as
    :func:`backbone.geo.route_coords` places them); links with waypoints go through
    :func:`~backbone.geo.route_coords` one by one.
    """
    from shapely.geometry import LineString, MultiLineString

    n = len(net.links)
    if n == 0:
        return []
    a, b = net.link_endpoints()
    lon, lat = net.sites["lon"].to_numpy(float), net.sites["lat"].to_numpy(float)
    waypoints = net.links["waypoints"].to_numpy(str)
    routes: list[np.ndarray] = [np.empty((0, 2))] * n
    plain = np.flatnonzero(np.char.strip(waypoints) == "")
    if len(plain):
        lon1, lat1, lon2, lat2 = lon[a[plain]], lat[a[plain]], lon[b[plain]], lat[b[plain]]
        az, _, dist_m = geo.GEOD.inv(lon1, lat1, lon2, lat2)
        inner = (np.asarray(dist_m) / 1000.0 // geo.DENSIFY_KM).astype(int)  # intermediate points per link
        owner = np.repeat(np.arange(len(plain)), inner)
        k = np.arange(len(owner)) - np.repeat(np.cumsum(inner) - inner, inner) + 1
        step = np.asarray(dist_m)[owner] * k / (inner[owner] + 1)
        mid_lon, mid_lat, _ = geo.GEOD.fwd(lon1[owner], lat1[owner], np.asarray(az)[owner], step)
        mids = np.column_stack([mid_lon, mid_lat]).reshape(-1, 2)
        bounds = np.concatenate([[0], np.cumsum(inner)])
        for j, i in enumerate(plain.tolist()):
            pts = np.vstack([[lon1[j], lat1[j]], mids[bounds[j]:bounds[j + 1]], [lon2[j], lat2[j]]])
            pts[:, 0] = geo.unwrap_lons(pts[:, 0])
            routes[i] = pts
    for i in np.flatnonzero(np.char.strip(waypoints) != "").tolist():  # explicit geometry: few links
        points = [(lon[a[i]], lat[a[i]]), *geo.parse_waypoints(waypoints[i]), (lon[b[i]], lat[b[i]])]
        routes[i] = geo.route_coords(points)
    out: list[Any] = []
    for route in routes:
        parts = [np.round(p, COORDINATE_DECIMALS) for p in geo.split_antimeridian(route)]
        out.append(LineString(parts[0]) if len(parts) == 1 else MultiLineString(parts))
    return out


def network_to_geodataframes(net: Network, link_values: Values = None,
                             site_values: Values = None) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    """Sites and links as GeoDataFrames in EPSG:4326.

    Parameters
    ----------
    net
        The network.
    link_values, site_values
        Extra per-link / per-site values, ``{name: {id: value}}`` or a DataFrame indexed by id
        (as a result's ``"map"`` object carries them); ids not in the network are ignored,
        elements without a value get NaN.

    Returns
    -------
    (sites, links)
        ``sites``: every site column plus ``id``, Point geometry. ``links``:
        :data:`LINK_PROPERTIES`, ``srlgs`` (member SRLG ids joined by ``;``) and the values,
        LineString/MultiLineString geometry.

    Raises
    ------
    ValidationError
        When a value name collides with a table column.
    """
    import geopandas as gpd

    sites = net.sites.reset_index()
    sites = sites.join(_values_frame(site_values, net.sites.index, "site", set(sites.columns)), on="id")
    sites_gdf = gpd.GeoDataFrame(sites, geometry=gpd.points_from_xy(sites["lon"], sites["lat"]), crs="EPSG:4326")

    links = net.links.reset_index()[list(LINK_PROPERTIES)]
    members = net.srlg_members()
    srlgs_of = members.groupby("link")["srlg"].agg(";".join).to_dict() if len(members) else {}
    links["srlgs"] = [srlgs_of.get(i, "") for i in links["id"]]
    links = links.join(_values_frame(link_values, net.links.index, "link", set(links.columns)), on="id")
    links_gdf = gpd.GeoDataFrame(links, geometry=link_geometries(net), crs="EPSG:4326")
    return sites_gdf, links_gdf


def geojson_dict(net: Network, link_values: Values = None, site_values: Values = None,
                 candidates: bool = True) -> dict[str, Any]:
    """The FeatureCollection :func:`save_geojson` writes, as a dict (sites, then links, then the candidate
    routes not built with ``feature_type: "candidate"`` unless ``candidates`` is false)."""
    sites, links = network_to_geodataframes(net, link_values, site_values)
    features: list[dict[str, Any]] = []
    for layer, gdf in (("site", sites), ("link", links)):
        if len(gdf) == 0:
            continue
        gdf = gdf.assign(feature_type=layer)
        text_columns = [c for c in gdf.columns if c != "geometry" and pd.api.types.is_string_dtype(gdf[c].dtype)]
        gdf = gdf.astype(dict.fromkeys(text_columns, object))  # Arrow-backed strings iterate slowly
        features += gdf.to_geo_dict(na="null", drop_id=True, show_bbox=False)["features"]
    if candidates:
        features += candidate_features(net)
    return {"type": "FeatureCollection", "name": net.name, "features": features}


def candidate_features(net: Network) -> list[dict[str, Any]]:
    """The candidate routes (not built) as GeoJSON features: ``feature_type: "candidate"``, ``id`` and the
    candidate's columns (``srlgs`` joined by ``;``), LineString/MultiLineString geometry."""
    from shapely.geometry import LineString, MultiLineString, mapping

    from backbone.model import link_route

    features: list[dict[str, Any]] = []
    for cid, row in zip(net.candidates.index, net.candidates.to_dict("records"), strict=True):
        route = link_route(row, net.sites)
        parts = [np.round(p, COORDINATE_DECIMALS) for p in geo.split_antimeridian(route)]
        shape = LineString(parts[0]) if len(parts) == 1 else MultiLineString(parts)
        props: dict[str, Any] = {"id": str(cid)}
        for k, v in row.items():
            if isinstance(v, tuple):
                v = ";".join(v)
            elif isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, float) and not np.isfinite(v):
                v = None
            props[str(k)] = v
        props["feature_type"] = "candidate"
        features.append({"type": "Feature", "properties": props, "geometry": mapping(shape)})
    return features


def save_geojson(net: Network, path: str | Path, link_values: Values = None,
                 site_values: Values = None) -> Path:
    """Write sites and links as one GeoJSON FeatureCollection (written atomically).

    Parameters
    ----------
    net
        The network.
    path
        Destination ``.geojson`` (or ``.json``) file.
    link_values, site_values
        Extra properties, as for :func:`network_to_geodataframes`.

    Returns
    -------
    pathlib.Path
        The written file.

    Example
    -------
    >>> save_geojson(net, "backbone.geojson", link_values={"utilisation": {"tat-1": 0.8}})  # doctest: +SKIP
    """
    p = Path(path)
    doc = geojson_dict(net, link_values, site_values)
    write_text_atomic(p, json_text(doc, indent=None, ensure_ascii=False))
    logger.info("wrote %d features to %s", len(doc["features"]), p)
    return p
