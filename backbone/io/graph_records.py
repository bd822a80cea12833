"""The format-neutral core of the graph importers: node and edge attribute mappings -> the model's records.

:mod:`backbone.io.graphml` (Topology Zoo) and :mod:`backbone.io.nodelink` (networkx node-link JSON: TopoHub,
Teal) are thin parsers: each reads its file into a list of node attribute mappings and a list of edges
``(source, target, key, attributes)`` and hands them here. This module owns what the two share:

* **the attribute reading** of each dialect (:class:`Attributes`, :data:`GRAPHML` and :data:`NODE_LINK`):
  where coordinates, names, countries, capacities and kinds are found, and what an unstated value becomes;
* **coordinates** (:func:`node_coordinates`, :func:`coordinate_problems`, :func:`synthetic_layout`) and the
  region / country rules (:func:`region_from_lonlat`, :func:`country_code`);
* **records** (:func:`site_records`, :func:`link_records`): one site per node, one link per undirected edge
  or per pair of opposite arcs in a directed file (the smaller capacity), parallel links ``a-b``, ``a-b~1``,
  ..., self-loops dropped;
* **the network** (:func:`graph_network`): validation of every record, each problem naming file, record and
  field, and the demand table ``{src: {dst: value}}`` built column-wise
  (:func:`backbone.io.traffic_matrix.demand_table`; a world-scale file has 1.55 M entries, docs/scale.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from backbone import geo
from backbone.errors import Problem, ValidationError
from backbone.io.traffic_matrix import demand_table
from backbone.model import Network
from backbone.schema import LINK_KINDS, REGIONS, SITE_KINDS
from backbone.validate import build_network

logger = logging.getLogger(__name__)

Edge = tuple[str, str, str, Mapping[str, Any]]
"""One edge as a parser gives it: ``(source id, target id, parallel-edge key, attributes)``."""

DEFAULT_CAPACITY_GBPS = 100.0
"""Capacity given to a link whose file states none (one 100G wave)."""

SPEED_UNITS_GBPS: dict[str, float] = {"": 1e-9, "K": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3}
"""Topology Zoo ``LinkSpeedUnits`` -> Gbps per unit."""

# US-Mexico border as a polyline of (lon, lat) points, west to east (Tijuana ... Brownsville).
_US_MEXICO_BORDER = np.array([
    (-117.12, 32.53), (-114.72, 32.72), (-111.07, 31.33), (-108.21, 31.33), (-108.21, 31.78),
    (-106.53, 31.78), (-104.50, 29.64), (-103.11, 28.97), (-101.40, 29.77), (-99.51, 27.50),
    (-97.14, 25.96),
])


def region_from_lonlat(lon: Any, lat: Any) -> np.ndarray:
    """Planning region (``NA``, ``LATAM``, ``EMEA``, ``AFRICA``, ``APAC``) of points, by boxes.

    A deliberately simple, documented rule for importers whose files carry coordinates but no
    region. Rules, first match wins (lon/lat in degrees):

    1. **LATAM**: -120 <= lon <= -30 and south of the US-Mexico border (an 11-point polyline
       from Tijuana to Brownsville), south of 25.9N between -97.1 and -86, south of 24N east
       of -86 (Caribbean; Florida and the Keys stay NA).
    2. **NA**: lon < -30 with lat >= 15, or Alaska's Aleutians (lon >= 170, lat >= 50).
    3. **AFRICA**: -30 <= lon <= 60 and lat < 37.4 west of 11.5E (the Maghreb coast; Spain's
       south coast starts at 36.0N west of 2W, so lat < 36 there), lat < 34.5 between 11.5E
       and 34.2E (Libya, Egypt; Sicily, Malta and Crete stay EMEA), lat < 12.5 east of 34.2E
       (the Horn, East Africa, Madagascar, Mauritius; Arabia and Sinai are EMEA).
    4. **EMEA**: -30 <= lon < 60 otherwise (Europe, Middle East), and Russia east of the
       Urals (lon >= 60, lat >= 50).
    5. **APAC**: everything else (Asia, Oceania, the Pacific islands west of -120).

    Sites within a degree of a box edge may land in the neighbouring region; correct them in
    the scenario's ``region`` column when it matters.

    Parameters
    ----------
    lon, lat
        Scalars or arrays of longitude/latitude in degrees (EPSG:4326).

    Returns
    -------
    numpy.ndarray
        Region names (``dtype=object``), one per point.

    Example
    -------
    >>> list(region_from_lonlat([-74.0, -99.1, 2.35, 31.2, 139.7], [40.7, 19.4, 48.9, 30.0, 35.7]))
    ['NA', 'LATAM', 'EMEA', 'AFRICA', 'APAC']
    """
    x = np.atleast_1d(np.asarray(lon, dtype=float))
    y = np.atleast_1d(np.asarray(lat, dtype=float))
    border = np.interp(x, _US_MEXICO_BORDER[:, 0], _US_MEXICO_BORDER[:, 1])
    west = (x >= -120) & (x <= -30)
    latam = west & (
        ((x <= -97.14) & (y < border))
        | ((x > -97.14) & (x <= -86) & (y < 25.9))
        | ((x > -86) & (y < 24.0))
    )
    na = ~latam & (((x < -30) & (y >= 15)) | ((x >= 170) & (y >= 50)))
    mid = (x >= -30) & (x <= 60)
    africa = mid & (
        ((x < -2) & (y < 36.0))
        | ((x >= -2) & (x < 11.5) & (y < 37.4))
        | ((x >= 11.5) & (x < 34.2) & (y < 34.5))
        | ((x >= 34.2) & (y < 12.5))
    )
    emea = ~africa & ((mid & (x < 60)) | ((x >= 60) & (y >= 50)))
    return np.select([latam, na, africa, emea], ["LATAM", "NA", "AFRICA", "EMEA"], "APAC").astype(object)


COUNTRY_CODES: dict[str, str] = {
    "Albania": "AL", "Algeria": "DZ", "Antigua and Barbuda": "AG", "Argentina": "AR", "Armenia": "AM",
    "Australia": "AU", "Austria": "AT", "Bahamas": "BS", "Barbados": "BB", "Belarus": "BY", "Belgium": "BE",
    "Belize": "BZ", "Bolivia": "BO", "Bonaire, Saint Eustatius and Saba": "BQ", "Bosnia and Herzegovina": "BA",
    "Brazil": "BR", "Brunei": "BN", "Bulgaria": "BG", "Canada": "CA", "Cayman Islands": "KY", "Chile": "CL",
    "China": "CN", "Colombia": "CO", "Costa Rica": "CR", "Croatia": "HR", "Curacao": "CW", "Cyprus": "CY",
    "Czech Republic": "CZ", "Czechia": "CZ", "Denmark": "DK", "Dominica": "DM", "Dominican Republic": "DO",
    "Ecuador": "EC", "Egypt": "EG", "El Salvador": "SV", "Estonia": "EE", "Fiji": "FJ", "Finland": "FI",
    "France": "FR", "Gambia": "GM", "Georgia": "GE", "Germany": "DE", "Gibraltar": "GI", "Greece": "GR",
    "Grenada": "GD", "Guadeloupe": "GP", "Guam": "GU", "Guatemala": "GT", "Guyana": "GY", "Honduras": "HN",
    "Hong Kong": "HK", "Hungary": "HU", "Iceland": "IS", "India": "IN", "Indonesia": "ID", "Iran": "IR",
    "Ireland": "IE", "Israel": "IL", "Italy": "IT", "Jamaica": "JM", "Japan": "JP", "Jordan": "JO",
    "Kazakhstan": "KZ", "Kenya": "KE", "Kosovo": "XK", "Latvia": "LV", "Lebanon": "LB", "Libya": "LY",
    "Liechtenstein": "LI", "Lithuania": "LT", "Luxembourg": "LU", "Macau": "MO", "Macedonia": "MK",
    "North Macedonia": "MK", "Malaysia": "MY", "Malta": "MT", "Martinique": "MQ", "Mexico": "MX",
    "Moldova": "MD", "Montenegro": "ME", "Morocco": "MA", "Myanmar [Burma]": "MM", "Myanmar": "MM",
    "Netherlands": "NL", "New Zealand": "NZ", "Nicaragua": "NI", "Nigeria": "NG", "Norway": "NO",
    "Pakistan": "PK", "Panama": "PA", "Peru": "PE", "Philippines": "PH", "Poland": "PL", "Portugal": "PT",
    "Puerto Rico": "PR", "Qatar": "QA", "Romania": "RO", "Russia": "RU", "Saint Martin": "MF",
    "Saint Vincent and the Grenadines": "VC", "Saudi Arabia": "SA", "Serbia": "RS", "Singapore": "SG",
    "Slovakia": "SK", "Slovenia": "SI", "South Africa": "ZA", "South Korea": "KR", "Spain": "ES",
    "Sri Lanka": "LK", "Suriname": "SR", "Svalbard and Jan Mayen": "SJ", "Sweden": "SE", "Switzerland": "CH",
    "Syria": "SY", "Taiwan": "TW", "Thailand": "TH", "Trinidad and Tobago": "TT", "Tunisia": "TN",
    "Turkey": "TR", "Turks and Caicos Islands": "TC", "U.S. Virgin Islands": "VI", "Ukraine": "UA",
    "United Arab Emirates": "AE", "United Kingdom": "GB", "United States": "US", "Uruguay": "UY",
    "Venezuela": "VE", "Vietnam": "VN", "Zambia": "ZM",
}
"""Country names as Topology Zoo spells them -> ISO 3166-1 alpha-2 codes."""


def country_code(name: Any) -> str:
    """ISO 3166-1 alpha-2 code of a country name or code (blank when unknown or missing)."""
    if not isinstance(name, str) or not name.strip():
        return ""
    text = name.strip()
    if len(text) == 2 and text.isalpha():
        return text.upper()
    return COUNTRY_CODES.get(text, "")


SYNTHETIC_RADIUS_DEG = 10.0
"""Half-size of the box (or radius of the circle) used for made-up positions."""

SYNTHETIC_LATENCY_MS = 1.0
"""One-way latency of a link in a network without geography whose file gives no weight."""

NODE_TYPE_KINDS: dict[str, str] = {
    "city": "pop", "seacable landing point": "landing", "seacable waypoint": "landing",
    "landing": "landing", "datacenter": "datacenter", "data center": "datacenter", "pop": "pop",
}
"""TopoHub node ``type`` (lower case) -> site kind."""

SUBMARINE_EDGE_TYPES = frozenset({"seacable", "submarine", "sea cable", "subsea"})
"""Edge ``type`` values that mark a submarine link."""


def number(v: Any) -> float:
    """``v`` as a finite float, else NaN (bools, text and infinities are not numbers here)."""
    if isinstance(v, bool):
        return float("nan")
    try:
        x = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return x if np.isfinite(x) else float("nan")


def speed_gbps(attrs: Mapping[str, Any], unit: float = 1.0) -> float | None:
    """Topology Zoo capacity: ``LinkSpeedRaw`` / 1e9, else ``LinkSpeed`` x ``LinkSpeedUnits``; None when unstated
    (or not a finite number). ``unit`` is unused (Topology Zoo states its units)."""
    raw = attrs.get("LinkSpeedRaw")
    if raw is not None and _finite(raw):
        return float(raw) / 1e9
    speed, units = attrs.get("LinkSpeed"), str(attrs.get("LinkSpeedUnits") or "").strip().upper()
    if speed is not None and _finite(speed) and units in SPEED_UNITS_GBPS:
        return float(speed) * SPEED_UNITS_GBPS[units]
    return None


def edge_capacity(attrs: Mapping[str, Any], unit: float = 1.0) -> Any:
    """Node-link capacity: ``capacity_gbps``, else ``capacity`` x ``unit``, else ``LinkSpeedRaw`` / 1e9; None when
    unstated. A stated value that is not a finite number is returned as given, so validation quotes it."""
    for key, scale in (("capacity_gbps", 1.0), ("capacity", unit)):
        if key in attrs and attrs[key] is not None:
            return float(attrs[key]) * scale if np.isfinite(number(attrs[key])) else attrs[key]
    raw = attrs.get("LinkSpeedRaw")
    if raw is not None:  # bits per second, converted as Topology Zoo's are (bit for bit the same Gbps)
        return float(raw) / 1e9 if np.isfinite(number(raw)) else raw
    return None


def _finite(v: Any) -> bool:
    try:
        return bool(np.isfinite(float(v)))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Attributes:
    """Where a file dialect keeps each fact, and how an unstated one is read.

    Attributes
    ----------
    node_names, countries, link_names
        Attribute keys tried in order (the first non-empty value wins).
    positions
        Keys of a ``[lon, lat]`` pair, tried before ``lonlat``.
    lonlat
        Pairs of keys of separate longitude / latitude values.
    capacity
        ``(edge attributes, capacity unit) -> Gbps`` (None when unstated: the default applies).
    typed
        Read node ``kind`` / ``type`` / ``region`` and edge ``kind`` / ``type`` / ``cable_system`` /
        ``length_km`` / ``dist`` / ``latency_ms`` (node-link); otherwise every site is a ``pop`` and every
        link ``terrestrial`` with derived length and latency (Topology Zoo).
    strip_link_names
        Strip white space around link names.
    unstated_arc_lowers
        In a directed file, an arc without capacity counts as the default capacity when merged with its
        opposite arc (node-link); otherwise it leaves the stated capacity as it is (Topology Zoo).
    """

    node_names: tuple[str, ...]
    countries: tuple[str, ...]
    link_names: tuple[str, ...]
    positions: tuple[str, ...]
    lonlat: tuple[tuple[str, str], ...]
    capacity: Callable[[Mapping[str, Any], float], Any]
    typed: bool
    strip_link_names: bool
    unstated_arc_lowers: bool


GRAPHML = Attributes(node_names=("label",), countries=("Country",), link_names=("LinkLabel",), positions=(),
                     lonlat=(("Longitude", "Latitude"),), capacity=speed_gbps, typed=False, strip_link_names=True,
                     unstated_arc_lowers=False)
"""Topology Zoo GraphML (see :mod:`backbone.io.graphml`)."""

NODE_LINK = Attributes(node_names=("name", "label"), countries=("country", "Country"), link_names=("name", "label"),
                       positions=("pos", "coordinates", "coords"),
                       lonlat=(("lon", "lat"), ("longitude", "latitude"), ("Longitude", "Latitude"), ("x", "y")),
                       capacity=edge_capacity, typed=True, strip_link_names=False, unstated_arc_lowers=True)
"""networkx node-link JSON as TopoHub and Teal write it (see :mod:`backbone.io.nodelink`)."""


def _first(d: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        v = d.get(k)
        if v:
            return v
    return None


def node_coordinates(nodes: Sequence[Mapping[str, Any]], attrs: Attributes) -> np.ndarray:
    """(n, 2) array of each node's (lon, lat) as written (NaN where absent or not a number)."""
    def xy(d: Mapping[str, Any]) -> tuple[float, float]:
        for k in attrs.positions:
            v = d.get(k)
            if isinstance(v, list | tuple) and len(v) == 2:
                return number(v[0]), number(v[1])
        for kx, ky in attrs.lonlat:
            if kx in d and ky in d:
                return number(d[kx]), number(d[ky])
        return float("nan"), float("nan")

    return np.array([xy(d) for d in nodes], dtype=float).reshape(-1, 2)


def coordinate_problems(ids: Sequence[str], xy: np.ndarray, file: str, missing: Callable[[int], str],
                        hint: str = "", check_range: bool = True) -> list[Problem]:
    """One problem per node without coordinates (``missing(i)`` words it) and, with ``check_range``, per
    longitude outside [-180, 180] or latitude outside [-90, 90] (``hint`` appended); each names the file, the
    node and the field."""
    out: list[Problem] = []
    for j in range(len(ids)):
        x, y = float(xy[j, 0]), float(xy[j, 1])
        if not (np.isfinite(x) and np.isfinite(y)):
            out.append(Problem(missing(j), file=file, table="sites", record=ids[j], field="lon"))
            continue
        if check_range and not abs(x) <= 180:
            out.append(Problem(f"longitude {x:g} is outside [-180, 180]" + hint, file=file, table="sites",
                               record=ids[j], field="lon"))
        if check_range and not abs(y) <= 90:
            out.append(Problem(f"latitude {y:g} is outside [-90, 90]" + hint, file=file, table="sites",
                               record=ids[j], field="lat"))
    return out


def synthetic_layout(planar: np.ndarray | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Made-up (lon, lat) for a network without geography.

    When every node has planar ``(x, y)`` the drawing is scaled uniformly (aspect kept) into the box lon, lat
    in [-10, 10] around (0, 0); otherwise nodes sit on a circle of radius 10 degrees around (0, 0), in order,
    the first at (10, 0), counter-clockwise.

    Parameters
    ----------
    planar
        (n, 2) planar drawing coordinates to scale into the box, or None for the circle.
    n
        Number of nodes.

    Returns
    -------
    (lon, lat)
        Arrays of degrees, inside [-10, 10] x [-10, 10].
    """
    r = SYNTHETIC_RADIUS_DEG
    if planar is not None and n:
        lo, hi = planar.min(axis=0), planar.max(axis=0)
        span = float(np.max(hi - lo)) or 1.0
        centred = (planar - (lo + hi) / 2.0) * (2.0 * r / span)
        return np.round(centred[:, 0], 6) + 0.0, np.round(centred[:, 1], 6) + 0.0  # + 0.0: no -0.0
    angle = 2.0 * np.pi * np.arange(n) / max(n, 1)
    return np.round(r * np.cos(angle), 6) + 0.0, np.round(r * np.sin(angle), 6) + 0.0


def site_records(nodes: Sequence[Mapping[str, Any]], ids: Sequence[str], lon: np.ndarray, lat: np.ndarray,
                 regions: np.ndarray, attrs: Attributes, geographic: bool = True) -> list[dict[str, Any]]:
    """One site record per node: id, name, position, region (a typed node's own ``region`` when it is a
    planning region and the position is geographic, else ``regions``), country (ISO alpha-2) and kind (a typed
    node's ``kind``, else its ``type`` through :data:`NODE_TYPE_KINDS`, else ``pop``). When any typed node has
    a ``type`` it is kept verbatim in the extra column ``node_type``."""
    has_type = attrs.typed and any("type" in d for d in nodes)
    sites = []
    for d, i, x, y, r in zip(nodes, ids, lon.tolist(), lat.tolist(), regions.tolist(), strict=True):
        kind: Any = "pop"
        region, node_type = r, ""
        if attrs.typed:
            node_type = str(d.get("type") or "")
            kind = d.get("kind") if d.get("kind") in SITE_KINDS else NODE_TYPE_KINDS.get(node_type.lower(), "pop")
            region = d.get("region") if geographic and d.get("region") in REGIONS else r
        rec = {"id": i, "name": str(_first(d, attrs.node_names) or i), "lon": x, "lat": y, "region": region,
               "country": country_code(_first(d, attrs.countries)), "kind": kind}
        if has_type:
            rec["node_type"] = node_type
        sites.append(rec)
    return sites


def link_records(edges: Iterable[Edge], attrs: Attributes, directed: bool, default_capacity_gbps: float,
                 capacity_unit_gbps: float = 1.0, synthetic: bool = False, file: str = ""
                 ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """One link record per undirected edge, or per pair of opposite arcs of a directed file.

    In a directed file the arcs ``u->v`` and ``v->u`` (same key) make one full-duplex link whose capacity is
    the smaller of the two (pairs whose capacities differ are counted). Parallel links get ids ``a-b``,
    ``a-b~1``, ... in edge order. Self-loops carry no traffic and are dropped (counted and logged).

    Returns
    -------
    (records, counts)
        The link records (with ids) and ``links_with_default_capacity``, ``asymmetric_capacity_pairs`` and
        ``self_loops_dropped``.
    """
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    order: list[tuple[str, str, str]] = []
    asymmetric = defaulted = self_loops = 0
    for a, b, key, e in edges:
        if a == b:
            self_loops += 1
            continue
        cap = attrs.capacity(e, capacity_unit_gbps)
        if directed:
            pair = (min(a, b), max(a, b), key)
            if pair in merged:
                rec = merged[pair]
                if cap is None and not attrs.unstated_arc_lowers:
                    continue
                cap = default_capacity_gbps if cap is None else cap
                if number(rec["capacity_gbps"]) != number(cap):
                    asymmetric += 1
                    rec["capacity_gbps"] = min(number(rec["capacity_gbps"]), number(cap))
                continue
        else:
            pair = (a, b, str(len(order)))
        if cap is None:
            defaulted += 1
            cap = default_capacity_gbps
        merged[pair] = _link_record(e, a, b, cap, attrs, synthetic)
        order.append(pair)
    if self_loops:
        logger.info("%s: dropped %d self-loop edge(s)", file, self_loops)
    seen: dict[str, int] = {}
    links = []
    for pair in order:
        rec = merged[pair]
        base = f"{rec['site_a']}-{rec['site_b']}"
        n = seen.get(base, 0)
        seen[base] = n + 1
        links.append({"id": base if n == 0 else f"{base}~{n}", **rec})
    return links, {"links_with_default_capacity": defaulted, "asymmetric_capacity_pairs": asymmetric,
                   "self_loops_dropped": self_loops}


def _link_record(e: Mapping[str, Any], a: str, b: str, cap: Any, attrs: Attributes,
                 synthetic: bool) -> dict[str, Any]:
    name = str(_first(e, attrs.link_names) or "")
    if attrs.strip_link_names:
        name = name.strip()
    if not attrs.typed:
        return {"name": name, "site_a": a, "site_b": b, "capacity_gbps": cap, "kind": "terrestrial"}
    etype = str(e.get("type") or "").strip().lower()
    kind = e.get("kind") if e.get("kind") in LINK_KINDS else (
        "submarine" if etype in SUBMARINE_EDGE_TYPES else "terrestrial")
    rec: dict[str, Any] = {"name": name, "site_a": a, "site_b": b, "kind": kind,
                           "cable_system": str(e.get("cable_system") or ""), "capacity_gbps": cap}
    dist = number(e.get("dist"))
    if e.get("length_km") is not None:
        rec["length_km"] = e["length_km"]
    elif np.isfinite(dist) and (kind == "submarine" or synthetic):
        rec["length_km"] = dist
    if e.get("latency_ms") is not None:
        rec["latency_ms"] = e["latency_ms"]
    elif synthetic:
        weight = next((number(e[k]) for k in ("delay_ms", "weight") if k in e), float("nan"))
        if np.isfinite(weight):
            rec["latency_ms"] = weight
        elif np.isfinite(dist):
            rec["latency_ms"] = round(float(geo.latency_ms(dist)), 4)
        else:
            rec["latency_ms"] = SYNTHETIC_LATENCY_MS
    return rec


def graph_network(sites: list[dict[str, Any]], links: list[dict[str, Any]], name: str, meta: dict[str, Any],
                  file: str, demands: Mapping[str, Any] | None = None, demand_unit_gbps: float = 1.0) -> Network:
    """Validate the records (every problem named by file, record and field) and build the network.

    ``demands`` is a ``{src: {dst: value}}`` table (None: the network has no demand table of the file's own).
    Demands of ``value x demand_unit_gbps`` Gbps are built column-wise by
    :func:`backbone.io.traffic_matrix.demand_table`; when the sites or links are invalid, the problems of the
    demands are reported with theirs.
    """
    if demands is None:
        return build_network({"sites": sites, "links": links}, name=name, meta=meta,
                             files={"sites": file, "links": file})
    files = {"sites": file, "links": file, "demands": file}
    if not demands:
        return build_network({"sites": sites, "links": links, "demands": []}, name=name, meta=meta, files=files)
    try:
        net = build_network({"sites": sites, "links": links}, name=name, meta=meta, files=files)
    except ValidationError:  # report every problem, the demands' included, as the validator words them
        build_network({"sites": sites, "links": links, "demands": demand_records(demands, demand_unit_gbps)},
                      name=name, meta=meta, files=files)
        raise
    return net.copy_with(demands=demand_table(demands, net, demand_unit_gbps, file))


def demand_records(table: Mapping[str, Any], unit: float) -> pd.DataFrame | list[dict[str, Any]]:
    """A ``{src: {dst: value}}`` table as a raw demands frame for the validator, built per source row
    (vectorised: a world-scale table has millions of entries). Values that are not finite numbers are kept as
    given, so validation reports them with their record."""
    srcs: list[np.ndarray] = []
    dsts: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for src, row in table.items():
        if not isinstance(row, Mapping) or not row:
            continue
        dst = np.asarray([str(d) for d in row], dtype=object)
        srcs.append(np.full(len(dst), str(src), dtype=object))
        dsts.append(dst)
        values.append(np.asarray(list(row.values()), dtype=object))
    if not srcs:
        return []
    src_all, dst_all, raw = np.concatenate(srcs), np.concatenate(dsts), np.concatenate(values)
    keep = src_all != dst_all
    src_all, dst_all, raw = src_all[keep], dst_all[keep], raw[keep]
    if len(raw) == 0:
        return []
    num = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(float)
    good = np.isfinite(num) & np.fromiter((not isinstance(v, bool) for v in raw), bool, len(raw))
    gbps: np.ndarray = num * unit
    if not good.all():
        gbps = gbps.astype(object)
        gbps[~good] = raw[~good]
    ids = pd.Series(src_all, dtype=object) + "-" + pd.Series(dst_all, dtype=object)
    return pd.DataFrame({"id": ids.to_numpy(), "src": src_all, "dst": dst_all, "demand_gbps": gbps})
