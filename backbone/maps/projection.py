"""Map views: a projection, a centre longitude, a clip box and an extent.

Every layer goes through the same three steps before it is drawn:

1. longitudes are taken *relative to the view's centre* (``lon - center_lon``), so the view's
   seam (``center_lon +- 180``) sits at relative longitude +-180;
2. lines and polygons are **cut at the seam** (lines with :func:`backbone.geo.split_antimeridian`
   on their unwrapped route, polygons by intersecting shifted copies with the clip box), so nothing
   smears across the map;
3. the pieces are projected with a projection whose ``lon_0`` is 0 (the relative longitudes already
   carry the centre), all coordinates of a layer in one vectorized ``pyproj`` call.

A world view uses Equal Earth (``+proj=eqearth``); regional views use a Lambert azimuthal
equal-area projection centred on the region, or Equal Earth centred on it for boxes wider than
95 degrees (an azimuthal projection distorts too much that far from its centre).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyproj
import shapely

from backbone import geo
from backbone.errors import Problem, ValidationError

logger = logging.getLogger(__name__)

BBox = tuple[float, float, float, float]
"""(lon_min, lat_min, lon_max, lat_max) in degrees."""

REGION_BBOXES: dict[str, BBox] = {
    "na": (-128.0, 14.0, -58.0, 58.0),
    "latam": (-95.0, -56.0, -32.0, 24.0),
    "emea": (-22.0, 8.0, 62.0, 64.0),
    "africa": (-20.0, -37.0, 55.0, 38.0),
    "apac": (66.0, -46.0, 180.0, 50.0),
}
"""Named regional views (keys accepted by ``region=``), sized for a 16:9 slide."""

SEAM_EPSILON_DEG = 1e-9


@dataclass(frozen=True)
class MapView:
    """How geographic coordinates become map coordinates.

    Attributes
    ----------
    name
        ``world``, a region key of :data:`REGION_BBOXES`, or ``bbox``.
    center_lon
        Centre longitude; the seam is at ``center_lon +- 180``.
    proj4
        PROJ string of the projection applied to *relative* longitudes (its ``lon_0`` is 0).
    clip
        Clip box in relative longitude / latitude: data outside is dropped before projecting.
    bbox
        The area the view must show, in relative longitude / latitude.
    """

    name: str
    center_lon: float
    proj4: str
    clip: BBox
    bbox: BBox

    @property
    def is_world(self) -> bool:
        """True for the whole-globe view (drawn inside the projection's outline)."""
        return self.name == "world"

    # ------------------------------------------------------------------ points
    def relative_lons(self, lons: np.ndarray) -> np.ndarray:
        """Longitudes relative to the centre, wrapped to [-180, 180)."""
        rel = np.asarray(lons, dtype=float) - self.center_lon
        return (rel + 180.0) % 360.0 - 180.0

    def project_relative(self, rel_lons: np.ndarray, lats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Project relative longitudes and latitudes (vectorized) to map metres."""
        x, y = _transformer(self.proj4).transform(np.asarray(rel_lons, float), np.asarray(lats, float))
        return np.asarray(x, float), np.asarray(y, float)

    def project_points(self, lons: np.ndarray, lats: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Project points; returns ``(x, y, visible)`` where ``visible`` marks points in the clip box."""
        rel = self.relative_lons(lons)
        lats = np.asarray(lats, dtype=float)
        x, y = self.project_relative(rel, lats)
        lo_lon, lo_lat, hi_lon, hi_lat = self.clip
        visible = (rel >= lo_lon) & (rel <= hi_lon) & (lats >= lo_lat) & (lats <= hi_lat) & np.isfinite(x)
        return x, y, visible

    # ------------------------------------------------------------------ lines
    def project_lines(self, lines: Sequence[np.ndarray]) -> list[list[np.ndarray]]:
        """Cut unwrapped (lon, lat) polylines at the seam, clip them and project them.

        Parameters
        ----------
        lines
            One (n, 2) array per line; longitudes may be unwrapped (leave [-180, 180]), as
            :meth:`backbone.model.Network.link_coords` returns them.

        Returns
        -------
        list of list of ndarray
            For each input line, its projected parts (each an (m, 2) array of map x/y); an empty
            list when the line lies outside the view.
        """
        pieces: list[list[np.ndarray]] = []
        for coords in lines:
            rel = np.asarray(coords, dtype=float) - np.array([self.center_lon, 0.0])
            parts = [p for p in geo.split_antimeridian(rel) if len(p) >= 2]
            pieces.append([np.clip(p, [-180.0, -90.0], [180.0, 90.0]) for p in parts])
        if not self.is_world:
            pieces = self._clip_lines(pieces)
        return self._project_pieces(pieces)

    def _clip_lines(self, pieces: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        owner = [i for i, parts in enumerate(pieces) for _ in parts]
        flat = [p for parts in pieces for p in parts]
        out: list[list[np.ndarray]] = [[] for _ in pieces]
        if not flat:
            return out
        lengths = np.array([len(p) for p in flat])
        lines = shapely.linestrings(np.vstack(flat), indices=np.repeat(np.arange(len(flat)), lengths))
        clipped = shapely.intersection(lines, shapely.box(*self.clip))
        for i, geom in zip(owner, clipped, strict=True):
            for part in shapely.get_parts(geom):
                if part.geom_type == "LineString" and not part.is_empty:
                    out[i].append(np.asarray(part.coords, dtype=float)[:, :2])
        return out

    def _project_pieces(self, pieces: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        flat = [p for parts in pieces for p in parts]
        if not flat:
            return [[] for _ in pieces]
        allc = np.vstack(flat)
        x, y = self.project_relative(allc[:, 0], allc[:, 1])
        xy = np.column_stack([x, y])
        split = np.split(xy, np.cumsum([len(p) for p in flat])[:-1])
        out: list[list[np.ndarray]] = []
        k = 0
        for parts in pieces:
            out.append(split[k:k + len(parts)])
            k += len(parts)
        return out

    # ------------------------------------------------------------------ polygons
    def project_polygons(self, geoms: np.ndarray, segment_deg: float = 2.0) -> np.ndarray:
        """Cut (multi)polygons in lon/lat [-180, 180] at the seam, clip and project them.

        Each geometry is shifted to relative longitude and intersected, together with copies
        shifted by +-360 degrees, with the clip box, so a country straddling the seam is split
        into a piece on each edge of the map. Edges are densified to ``segment_deg`` before
        projecting, so cut edges follow the curved map outline.

        Returns
        -------
        ndarray of shapely geometries
            Projected pieces (map metres), same order as ``geoms`` (empty where out of view).
        """
        geoms = np.asarray(geoms, dtype=object)
        box = shapely.box(*self.clip)
        pieces = []
        for shift in (-360.0, 0.0, 360.0):
            moved = shapely.transform(geoms, lambda c, s=shift: c + np.array([s - self.center_lon, 0.0]))
            pieces.append(shapely.intersection(shapely.make_valid(moved), box))
        merged = shapely.union(shapely.union(pieces[0], pieces[1]), pieces[2])
        polys = shapely.segmentize(merged, segment_deg)

        def _proj(c: np.ndarray) -> np.ndarray:
            x, y = self.project_relative(np.clip(c[:, 0], -180.0, 180.0), np.clip(c[:, 1], -90.0, 90.0))
            return np.column_stack([x, y])

        return shapely.transform(polys, _proj)

    # ------------------------------------------------------------------ frame
    def outline(self, step_deg: float = 1.0) -> np.ndarray:
        """The projected boundary of the clip box (the globe's outline in a world view), (n, 2)."""
        lo_lon, lo_lat, hi_lon, hi_lat = self.clip
        lats = np.arange(lo_lat, hi_lat + step_deg / 2, step_deg)
        lons = np.arange(lo_lon, hi_lon + step_deg / 2, step_deg)
        ring = np.vstack([
            np.column_stack([np.full(len(lats), hi_lon), lats]),
            np.column_stack([lons[::-1], np.full(len(lons), hi_lat)]),
            np.column_stack([np.full(len(lats), lo_lon), lats[::-1]]),
            np.column_stack([lons, np.full(len(lons), lo_lat)]),
        ])
        x, y = self.project_relative(ring[:, 0], ring[:, 1])
        return np.column_stack([x, y])

    def extent(self, aspect: float | None = None) -> tuple[float, float, float, float]:
        """Map-coordinate limits ``(xmin, xmax, ymin, ymax)`` showing :attr:`bbox`.

        Parameters
        ----------
        aspect
            Width / height of the drawing area; the extent is widened in one direction to fill
            it exactly (so regional maps fill a slide edge to edge).
        """
        lo_lon, lo_lat, hi_lon, hi_lat = self.bbox
        n = 90
        lons = np.concatenate([np.linspace(lo_lon, hi_lon, n), np.full(n, hi_lon),
                               np.linspace(hi_lon, lo_lon, n), np.full(n, lo_lon)])
        lats = np.concatenate([np.full(n, lo_lat), np.linspace(lo_lat, hi_lat, n),
                               np.full(n, hi_lat), np.linspace(hi_lat, lo_lat, n)])
        x, y = self.project_relative(lons, lats)
        xmin, xmax, ymin, ymax = float(x.min()), float(x.max()), float(y.min()), float(y.max())
        if not self.is_world:
            pad = 0.03 * max(xmax - xmin, ymax - ymin)
            xmin, xmax, ymin, ymax = xmin - pad, xmax + pad, ymin - pad, ymax + pad
        if aspect:
            w, h = xmax - xmin, ymax - ymin
            if w / h < aspect:
                grow = (h * aspect - w) / 2
                xmin, xmax = xmin - grow, xmax + grow
            else:
                grow = (w / aspect - h) / 2
                ymin, ymax = ymin - grow, ymax + grow
        return xmin, xmax, ymin, ymax

    def graticule(self, step_deg: float = 30.0) -> list[np.ndarray]:
        """Meridians and parallels every ``step_deg`` degrees (projected polylines)."""
        lo_lon, lo_lat, hi_lon, hi_lat = self.clip
        lines: list[np.ndarray] = []
        lat_line = np.arange(max(lo_lat, -90.0), min(hi_lat, 90.0) + 0.5, 1.0)
        first = math.ceil((lo_lon + self.center_lon) / step_deg) * step_deg
        for lon in np.arange(first, hi_lon + self.center_lon + 1e-9, step_deg):
            rel = float(lon - self.center_lon)
            if lo_lon + SEAM_EPSILON_DEG < rel < hi_lon - SEAM_EPSILON_DEG:
                lines.append(np.column_stack([np.full(len(lat_line), rel), lat_line]))
        lon_line = np.arange(lo_lon, hi_lon + 0.5, 1.0).clip(lo_lon, hi_lon)
        for lat in np.arange(-90.0 + step_deg, 90.0, step_deg):
            if lo_lat < lat < hi_lat:
                lines.append(np.column_stack([lon_line, np.full(len(lon_line), lat)]))
        if not lines:
            return []
        allc = np.vstack(lines)
        x, y = self.project_relative(allc[:, 0], allc[:, 1])
        xy = np.column_stack([x, y])
        return list(np.split(xy, np.cumsum([len(c) for c in lines])[:-1]))


@functools.lru_cache(maxsize=32)
def _transformer(proj4: str) -> pyproj.Transformer:
    return pyproj.Transformer.from_crs("EPSG:4326", pyproj.CRS.from_proj4(proj4), always_xy=True)


def make_view(center_lon: float = 0.0, region: str | BBox | None = None) -> MapView:
    """Build the view for a world map (``region=None``), a named region or a bounding box.

    Parameters
    ----------
    center_lon
        Centre longitude of a world view (``150`` gives a Pacific-centred map with continuous
        trans-Pacific cables). Ignored for regional views, which centre on their box.
    region
        ``None``/``"world"``, a key of :data:`REGION_BBOXES` (``na``, ``emea``, ``apac``,
        ``latam``, ``africa``), a ``"lon_min,lat_min,lon_max,lat_max"`` string or a 4-tuple.
        A box with ``lon_min > lon_max`` crosses the antimeridian.

    Raises
    ------
    ValidationError
        When ``center_lon`` or ``region`` is not valid (the problem names the option).

    Example
    -------
    >>> make_view(150).center_lon
    150.0
    """
    if not (isinstance(center_lon, int | float) and math.isfinite(center_lon) and -360 <= center_lon <= 360):
        raise ValidationError(Problem(f"center_lon must be a longitude in [-360, 360], got {center_lon!r}",
                                      field="center_lon"))
    center = float((center_lon + 180.0) % 360.0 - 180.0)
    if center_lon == 180.0:
        center = 180.0
    if region is None or (isinstance(region, str) and region.strip().lower() in ("", "world")):
        return MapView("world", center, "+proj=eqearth +lon_0=0 +datum=WGS84 +units=m +no_defs",
                       (-180.0, -90.0, 180.0, 90.0), (-180.0, -90.0, 180.0, 90.0))
    name, box = _parse_region(region)
    lon_min, lat_min, lon_max, lat_max = box
    width = (lon_max - lon_min) % 360.0 or 360.0
    centre_lon = lon_min + width / 2.0
    centre_lat = (lat_min + lat_max) / 2.0
    height = lat_max - lat_min
    rel_box = (-width / 2.0, lat_min, width / 2.0, lat_max)
    if width <= 95.0 and height <= 90.0:
        proj4 = f"+proj=laea +lon_0=0 +lat_0={centre_lat:.4f} +datum=WGS84 +units=m +no_defs"
        pad_lon, pad_lat = max(30.0, 0.6 * width), max(20.0, 0.5 * height)
        clip = (max(-180.0, -width / 2.0 - pad_lon), max(-90.0, lat_min - pad_lat),
                min(180.0, width / 2.0 + pad_lon), min(90.0, lat_max + pad_lat))
    else:
        proj4 = "+proj=eqearth +lon_0=0 +datum=WGS84 +units=m +no_defs"
        clip = (-180.0, -90.0, 180.0, 90.0)
    center = float((centre_lon + 180.0) % 360.0 - 180.0)
    return MapView(name, center, proj4, clip, rel_box)


def _parse_region(region: str | BBox) -> tuple[str, BBox]:
    if isinstance(region, str):
        key = region.strip().lower()
        if key in REGION_BBOXES:
            return key, REGION_BBOXES[key]
        parts = key.split(",")
        if len(parts) != 4:
            raise ValidationError(Problem(
                f"region must be one of {', '.join(['world', *REGION_BBOXES])} or 'lon_min,lat_min,lon_max,lat_max', "
                f"got {region!r}", field="region"))
        try:
            values = tuple(float(p) for p in parts)
        except ValueError:
            raise ValidationError(Problem(f"region bbox must be four numbers, got {region!r}",
                                          field="region")) from None
    else:
        values = tuple(float(v) for v in region)
        if len(values) != 4:
            raise ValidationError(Problem(f"region bbox must have four numbers, got {region!r}", field="region"))
    lon_min, lat_min, lon_max, lat_max = values
    problems = []
    if not all(math.isfinite(v) for v in values):
        problems.append("values must be finite")
    if not (-180.0 <= lon_min <= 180.0 and -180.0 <= lon_max <= 180.0):
        problems.append("longitudes must lie in [-180, 180]")
    if not (-90.0 <= lat_min < lat_max <= 90.0):
        problems.append("latitudes must satisfy -90 <= lat_min < lat_max <= 90")
    if lon_min == lon_max:
        problems.append("lon_min and lon_max must differ")
    if problems:
        raise ValidationError([Problem(f"region bbox {region!r}: {p}", field="region") for p in problems])
    return "bbox", (lon_min, lat_min, lon_max, lat_max)
