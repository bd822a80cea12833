"""The shipped Natural Earth basemap, loaded once and projected once per view.

Land and borders come from ``data/basemap/ne_110m_countries.geojson`` (public domain, see
``data/README.md``); nothing is downloaded at run time.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely

from backbone.errors import NotFoundError
from backbone.maps.projection import MapView
from backbone.paths import basemap_path

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProjectedBasemap:
    """The basemap in one view's map coordinates.

    Attributes
    ----------
    country_rings
        Every ring (exterior and holes) of every country piece, (n, 2) arrays of map x/y.
    coast_rings
        Rings of the union of all land (the coastline), (n, 2) arrays.
    """

    country_rings: list[np.ndarray]
    coast_rings: list[np.ndarray]


@functools.lru_cache(maxsize=1)
def load_countries(path: str | None = None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Country geometries (lon/lat, shapely array) and names from the shipped basemap.

    Raises
    ------
    NotFoundError
        When the basemap file is missing from the installation.
    """
    import json

    file = Path(path) if path else basemap_path()
    if not file.exists():
        raise NotFoundError(f"basemap not found at {file} (the package data is incomplete)")
    features = json.loads(file.read_text(encoding="utf-8"))["features"]
    geoms = shapely.from_geojson([json.dumps(f["geometry"]) for f in features])
    names = tuple(str(f["properties"].get("name", "")) for f in features)
    logger.debug("loaded %d basemap countries from %s", len(names), file)
    return geoms, names


@functools.lru_cache(maxsize=16)
def projected_basemap(view: MapView) -> ProjectedBasemap:
    """Cut the basemap at the view's seam, clip it to the view and project it (cached per view)."""
    geoms, _ = load_countries()
    projected = view.project_polygons(geoms)
    polygons = _polygons(projected)
    land = shapely.union_all(shapely.buffer(polygons, 0)) if len(polygons) else shapely.Polygon()
    return ProjectedBasemap(_rings(polygons), _rings(_polygons(np.array([land], dtype=object))))


def _polygons(geoms: np.ndarray) -> np.ndarray:
    """Flatten (multi)polygons and collections into an array of non-empty Polygons."""
    parts = shapely.get_parts(geoms)
    while True:
        nested = shapely.get_type_id(parts) >= 4  # multi-geometries and collections
        if not nested.any():
            break
        parts = np.concatenate([parts[~nested], shapely.get_parts(parts[nested])])
    keep = (shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)
    return parts[keep]


def _rings(polygons: np.ndarray) -> list[np.ndarray]:
    if len(polygons) == 0:
        return []
    rings = shapely.get_rings(polygons)
    coords, index = shapely.get_coordinates(rings, return_index=True)
    cuts = np.flatnonzero(np.diff(index)) + 1
    return [c for c in np.split(coords, cuts) if len(c) >= 4]


def ring_path(rings: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and matplotlib path codes of closed rings, for one compound ``Path``."""
    from matplotlib.path import Path as MplPath

    if not rings:
        return np.zeros((0, 2)), np.zeros(0, dtype=np.uint8)
    vertices = np.vstack(rings)
    codes = np.full(len(vertices), MplPath.LINETO, dtype=np.uint8)
    starts = np.concatenate([[0], np.cumsum([len(r) for r in rings])[:-1]])
    ends = starts + np.array([len(r) for r in rings]) - 1
    codes[starts] = MplPath.MOVETO
    codes[ends] = MplPath.CLOSEPOLY
    return vertices, codes
