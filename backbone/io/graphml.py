"""Topology Zoo GraphML importer, and the region / country rules importers share.

Topology Zoo (Knight et al., IEEE JSAC 2011) ships operator topologies as GraphML: nodes carry
``label``, ``Latitude``, ``Longitude`` and ``Country`` (a country *name*), edges carry
``LinkSpeed`` / ``LinkSpeedUnits`` / ``LinkSpeedRaw`` (bits per second) where the source said.
:func:`load_graphml` turns one file into a validated :class:`~backbone.model.Network`:

* **sites**: one per GraphML node; id = the GraphML node id, name = ``label``; region by
  :func:`region_from_lonlat`; country = ISO 3166-1 alpha-2 code of ``Country``
  (:data:`COUNTRY_CODES`; blank when unknown); kind ``pop``.
* **nodes without coordinates**: by default a :class:`~backbone.errors.ValidationError` naming the
  file and every such node. With ``drop_uncoordinated=True`` those nodes are dropped together
  with their edges (Topology Zoo's uncoordinated nodes are mostly ``hyperedge`` helpers and
  customer stubs); the dropped ids are recorded in ``meta["import"]["dropped_nodes"]``.
* **links**: one per GraphML edge, parallel edges included (ids ``a-b``, ``a-b~1``, ...); in a
  directed file the arcs ``u->v`` and ``v->u`` make one full-duplex link with the smaller speed;
  capacity = ``LinkSpeedRaw`` / 1e9, else ``LinkSpeed`` x ``LinkSpeedUnits`` (K/M/G/T), else
  :data:`DEFAULT_CAPACITY_GBPS`; kind ``terrestrial``; length and latency derived by the model
  (geodesic x route factor). Self-loops carry no traffic and are dropped (logged).
* **demands**: none.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.validate import build_network

logger = logging.getLogger(__name__)

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


def _speed_gbps(attrs: dict[str, Any]) -> float | None:
    raw = attrs.get("LinkSpeedRaw")
    if raw is not None and _finite(raw):
        return float(raw) / 1e9
    speed, unit = attrs.get("LinkSpeed"), str(attrs.get("LinkSpeedUnits") or "").strip().upper()
    if speed is not None and _finite(speed) and unit in SPEED_UNITS_GBPS:
        return float(speed) * SPEED_UNITS_GBPS[unit]
    return None


def _finite(v: Any) -> bool:
    try:
        return bool(np.isfinite(float(v)))
    except (TypeError, ValueError):
        return False


def load_graphml(path: str | Path, drop_uncoordinated: bool = False,
                 default_capacity_gbps: float = DEFAULT_CAPACITY_GBPS) -> Network:
    """Load a Topology Zoo GraphML file as a validated network.

    Parameters
    ----------
    path
        A ``.graphml`` file.
    drop_uncoordinated
        Drop nodes lacking ``Latitude``/``Longitude`` (and their edges) instead of failing.
    default_capacity_gbps
        Capacity of links whose speed the file does not state.

    Returns
    -------
    Network
        Sites and links as described in the module docstring; ``meta`` records the source
        file, the network's Topology Zoo name, how many capacities were defaulted and the
        dropped nodes.

    Raises
    ------
    ValidationError
        When the file is not readable GraphML, when nodes lack coordinates (each named, unless
        ``drop_uncoordinated``), or when the result breaks a model rule.

    Example
    -------
    >>> net = load_graphml("Abilene.graphml")  # doctest: +SKIP
    >>> net.summary()["sites"]  # doctest: +SKIP
    11
    """
    import networkx as nx

    p = Path(path)
    file = str(p)
    try:
        graph = nx.read_graphml(p)
    except (nx.NetworkXError, OSError, ValueError, KeyError) as exc:
        raise ValidationError(Problem(f"not readable GraphML: {exc}", file=file)) from None
    except Exception as exc:  # xml.etree.ElementTree.ParseError and friends
        position = getattr(exc, "position", None)  # (line, column) of an XML syntax error
        line = f"line {position[0]}" if isinstance(position, tuple) and position else ""
        hint = " (the file looks truncated)" if "no element found" in str(exc) else ""
        raise ValidationError(Problem(f"not readable GraphML{hint}: {type(exc).__name__}: {exc}", file=file,
                                      record=line)) from None

    nodes = list(graph.nodes(data=True))
    lacking = [str(n) for n, d in nodes if not (_finite(d.get("Longitude")) and _finite(d.get("Latitude")))]
    if lacking and not drop_uncoordinated:
        labels = {str(n): d.get("label", "") for n, d in nodes}
        raise ValidationError([
            Problem(f"node {labels[n]!r} has no Latitude/Longitude (backbone convert --drop-uncoordinated, "
                    "or drop_uncoordinated=True, drops such nodes and their edges)", file=file, table="sites", record=n,
                    field="lon") for n in lacking])
    gone = set(lacking)
    kept = [(str(n), d) for n, d in nodes if str(n) not in gone]
    lon = np.array([float(d["Longitude"]) for _, d in kept], dtype=float)
    lat = np.array([float(d["Latitude"]) for _, d in kept], dtype=float)
    regions = region_from_lonlat(lon, lat) if kept else np.array([], dtype=object)
    sites = [
        {"id": n, "name": str(d.get("label") or n), "lon": x, "lat": y, "region": r,
         "country": country_code(d.get("Country")), "kind": "pop"}
        for (n, d), x, y, r in zip(kept, lon.tolist(), lat.tolist(), regions.tolist(), strict=True)
    ]

    links: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    arcs: dict[tuple[str, str, Any], dict[str, Any]] = {}  # directed files: unordered pair -> its link
    defaulted = self_loops = 0
    edges = graph.edges(keys=True, data=True) if graph.is_multigraph() else (
        (u, v, 0, d) for u, v, d in graph.edges(data=True))
    for u, v, key, d in edges:
        a, b = str(u), str(v)
        if a in gone or b in gone:
            continue
        if a == b:
            self_loops += 1
            continue
        cap = _speed_gbps(d)
        pair = (min(a, b), max(a, b), key)
        if graph.is_directed() and pair in arcs:  # the opposite arc of a link already made
            if cap is not None:
                arcs[pair]["capacity_gbps"] = min(arcs[pair]["capacity_gbps"], cap)
            continue
        if cap is None:
            defaulted += 1
            cap = default_capacity_gbps
        base = f"{a}-{b}"
        n = seen.get(base, 0)
        seen[base] = n + 1
        label = str(d.get("LinkLabel") or "").strip()
        links.append({"id": base if n == 0 else f"{base}~{n}", "name": label, "site_a": a, "site_b": b,
                      "capacity_gbps": cap, "kind": "terrestrial"})
        arcs[pair] = links[-1]
    if self_loops:
        logger.info("%s: dropped %d self-loop edge(s)", file, self_loops)
    if gone:
        logger.info("%s: dropped %d node(s) without coordinates", file, len(gone))
    gattrs = graph.graph
    meta = {
        "description": f"Topology Zoo network {gattrs.get('Network') or gattrs.get('label') or p.stem}",
        "sources": [{"file": p.name, "format": "graphml", "dataset": "Internet Topology Zoo"}],
        "import": {"default_capacity_gbps": default_capacity_gbps, "links_with_default_capacity": defaulted,
                   "self_loops_dropped": self_loops, "dropped_nodes": sorted(gone)},
    }
    return build_network({"sites": sites, "links": links}, name=p.stem, meta=meta,
                         files={"sites": file, "links": file})
