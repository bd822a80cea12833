"""Data exports of a map: KML (Google Earth) and GeoJSON (QGIS, kepler.gl, geojson.io).

KML: a Document with one Folder of links, one of candidate routes (grey, not built) and one of sites.
Each link is a Placemark whose
MultiGeometry holds one LineString per part of its route cut at the antimeridian
(:func:`backbone.geo.split_antimeridian`), with ExtendedData (id, kind, cable system, capacity,
length, latency and every given link value such as utilisation); lines are styled by kind, and
coloured by the chosen value when one is given; built candidates (new routes of a plan) are green
and marked ``built_candidate=1``. Sites are Points styled by role.

GeoJSON is written by :mod:`backbone.io.geojson` (one FeatureCollection of sites and links,
antimeridian-split); the map's values join as properties, failed links get ``failed: 1``, built
candidates ``built_candidate: 1``, and candidate routes not built follow as features with
``feature_type: "candidate"`` and their catalogue fields; the data-gravity layer's workload flows as features with
``feature_type: "workload_flow"`` (src, dst, traffic class, Gbps).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from xml.sax.saxutils import escape, quoteattr

import numpy as np
import pandas as pd

from backbone import geo
from backbone.maps import style
from backbone.maps.values import MapValues
from backbone.model import Network

logger = logging.getLogger(__name__)

KML_NS = "http://www.opengis.net/kml/2.2"

LINK_FIELDS: tuple[tuple[str, str], ...] = (
    ("kind", "Kind"), ("cable_system", "Cable system"), ("site_a", "From"), ("site_b", "To"),
    ("capacity_gbps", "Capacity (Gbps)"), ("length_km", "Length (km)"), ("latency_ms", "Latency one-way (ms)"),
)
SITE_FIELDS: tuple[tuple[str, str], ...] = (
    ("kind", "Role"), ("region", "Region"), ("country", "Country"), ("metro", "Metro"),
    ("gpus_installed", "GPUs installed"), ("gpus_max", "GPUs max"), ("power_available_mw", "Power (MW)"),
)
SITE_ICONS = {"datacenter": "http://maps.google.com/mapfiles/kml/shapes/square.png",
              "landing": "http://maps.google.com/mapfiles/kml/shapes/triangle.png",
              "pop": "http://maps.google.com/mapfiles/kml/shapes/placemark_circle.png"}
"""Google Earth's built-in icon set (resolved by Google Earth itself; the file embeds no data fetch)."""


def kml_color(hex_color: str, alpha: float = 1.0) -> str:
    """``#rrggbb`` -> KML ``aabbggrr``."""
    h = hex_color.lstrip("#")
    r, g, b = h[0:2], h[2:4], h[4:6]
    return f"{round(alpha * 255):02x}{b}{g}{r}"


def _fmt(v: object) -> str:
    if isinstance(v, float | np.floating):
        if not np.isfinite(v):
            return ""
        return f"{float(v):.6g}"
    return str(v)


def _data(name: str, value: object, display: str | None = None) -> str:
    disp = f"<displayName>{escape(display)}</displayName>" if display else ""
    return f"<Data name={quoteattr(name)}>{disp}<value>{escape(_fmt(value))}</value></Data>"


CANDIDATE_FIELDS: tuple[tuple[str, str], ...] = (
    ("kind", "Candidate kind"), ("link_kind", "Link kind"), ("cable_system", "Cable system"), ("site_a", "From"),
    ("site_b", "To"), ("module_gbps", "Module (Gbps)"), ("max_modules", "Max modules"),
    ("module_cost_usd", "Cost per module (USD)"), ("fixed_cost_usd", "Fixed cost (USD)"),
    ("lead_time_quarters", "Lead time (quarters)"), ("available_from", "Available from"),
    ("length_km", "Length (km)"), ("latency_ms", "Latency one-way (ms)"), ("source", "Source"),
)


def kml_bytes(net: Network, values: MapValues, color_by: str = "utilisation", title: str | None = None,
              candidates: bool = True) -> bytes:
    """The network (and the map's values) as a KML document, UTF-8 bytes.

    Parameters
    ----------
    net
        The network.
    values
        Link and site values (every link value becomes ExtendedData); failed links are drawn red
        and marked ``failed=1``.
    color_by
        Link colouring as for static maps (``kind`` uses the per-kind styles).
    title
        Document name (default: the network's name).
    candidates
        Add a folder of the candidate routes not built.
    """
    coloring = style.color_links(net.links, values.link_values, color_by)
    out: list[str] = ['<?xml version="1.0" encoding="UTF-8"?>',
                      f'<kml xmlns="{KML_NS}"><Document>',
                      f"<name>{escape(title or net.name)}</name>",
                      f"<description>{escape(_description(net, coloring))}</description>"]
    out += _kml_styles()
    out += _kml_links(net, values, coloring)
    if candidates and len(net.candidates):
        out += _kml_candidates(net)
    out += _kml_sites(net, values)
    out.append("</Folder></Document></kml>")
    return "\n".join(out).encode("utf-8")


def _kml_styles() -> list[str]:
    """The document's shared styles: one per link kind, failed, built and candidate links, one per site kind."""
    out: list[str] = []
    for kind, color in style.KIND_COLORS.items():
        out.append(f'<Style id="link-{kind}"><LineStyle><color>{kml_color(color)}</color><width>2</width>'
                   f"</LineStyle></Style>")
    out.append(f'<Style id="link-failed"><LineStyle><color>{kml_color(style.FAILED)}</color><width>2</width>'
               f"</LineStyle></Style>")
    out.append(f'<Style id="link-built"><LineStyle><color>{kml_color(style.BUILT)}</color><width>4</width>'
               f"</LineStyle></Style>")
    out.append(f'<Style id="candidate"><LineStyle><color>{kml_color(style.CANDIDATE, 0.8)}</color><width>1.5</width>'
               f"</LineStyle></Style>")
    for kind, st in style.SITE_STYLES.items():
        out.append(f'<Style id="site-{kind}"><IconStyle><color>{kml_color(st["color"])}</color><scale>'
                   f'{1.0 if kind == "datacenter" else 0.7}</scale><Icon><href>{SITE_ICONS[kind]}</href></Icon>'
                   f"</IconStyle><LabelStyle><scale>{0.9 if kind == 'datacenter' else 0.0}</scale></LabelStyle></Style>")
    return out


def _kml_lines(parts: Iterable[np.ndarray]) -> str:
    """KML LineStrings of a route's antimeridian-split parts (lon, lat pairs)."""
    return "".join(
        "<LineString><tessellate>1</tessellate><coordinates>"
        + " ".join(f"{lon:.5f},{lat:.5f}" for lon, lat in part) + "</coordinates></LineString>"
        for part in parts)


def _kml_links(net: Network, values: MapValues, coloring: style.LinkColoring) -> list[str]:
    """The Links folder: one placemark per link with its fields and values, styled by state or colour."""
    widths = style.link_widths(net.links["capacity_gbps"].to_numpy())
    failed = set(values.failed_links)
    built = set(values.built_candidates)
    link_vals = {name: s.reindex(net.links.index).to_numpy(dtype=float) for name, s in values.link_values.items()}
    out = ["<Folder><name>Links</name>"]
    links = net.links
    for j, (link_id, row) in enumerate(links.iterrows()):  # one placemark per link: the document is per link
        parts = geo.split_antimeridian(net.link_coords(str(link_id)))
        is_failed = link_id in failed
        fields = [_data("id", link_id)] + [_data(c, row[c], d) for c, d in LINK_FIELDS]
        fields += [_data(name, v[j]) for name, v in link_vals.items() if np.isfinite(v[j])]
        if is_failed:
            fields.append(_data("failed", 1, "Failed"))
        is_built = link_id in built
        if is_built:
            fields.append(_data("built_candidate", 1, "New route (built candidate)"))
        style_url = "#link-failed" if is_failed else "#link-built" if is_built else f"#link-{row['kind']}"
        inline = ""
        if not is_failed and not is_built and coloring.mode != "kind" and np.isfinite(coloring.values[j]):
            inline = (f"<Style><LineStyle><color>{kml_color(coloring.colors[j])}</color>"
                      f"<width>{widths[j]:.1f}</width></LineStyle></Style>")
        lines = _kml_lines(parts)
        name = row["name"] or link_id
        out.append(f"<Placemark><name>{escape(str(name))}</name><styleUrl>{style_url}</styleUrl>{inline}"
                   f"<ExtendedData>{''.join(fields)}</ExtendedData><MultiGeometry>{lines}</MultiGeometry></Placemark>")
    out.append("</Folder>")
    return out


def _kml_candidates(net: Network) -> list[str]:
    """The folder of candidate routes not built."""
    from backbone.maps.layers import candidate_routes

    out = ["<Folder><name>Candidate routes (not built)</name>"]
    for route, (cand_id, row) in zip(candidate_routes(net), net.candidates.iterrows(), strict=True):
        fields = [_data("id", cand_id)] + [_data(c, row[c], d) for c, d in CANDIDATE_FIELDS]
        fields.append(_data("srlgs", ";".join(row["srlgs"]), "SRLGs"))
        lines = _kml_lines(geo.split_antimeridian(route))
        out.append(f"<Placemark><name>{escape(str(row['name'] or cand_id))}</name><styleUrl>#candidate</styleUrl>"
                   f"<ExtendedData>{''.join(fields)}</ExtendedData><MultiGeometry>{lines}</MultiGeometry>"
                   "</Placemark>")
    out.append("</Folder>")
    return out


def _kml_sites(net: Network, values: MapValues) -> list[str]:
    """The Sites folder: one point placemark per site with its fields and values."""
    out = ["<Folder><name>Sites</name>"]
    site_vals = {name: s.reindex(net.sites.index).to_numpy(dtype=float) for name, s in values.site_values.items()}
    for j, (site_id, row) in enumerate(net.sites.iterrows()):
        fields = [_data("id", site_id)] + [_data(c, row[c], d) for c, d in SITE_FIELDS]
        fields += [_data(name, v[j]) for name, v in site_vals.items() if np.isfinite(v[j])]
        out.append(f"<Placemark><name>{escape(str(row['name'] or site_id))}</name>"
                   f"<styleUrl>#site-{row['kind']}</styleUrl><ExtendedData>{''.join(fields)}</ExtendedData>"
                   f"<Point><coordinates>{row['lon']:.5f},{row['lat']:.5f}</coordinates></Point></Placemark>")
    return out


def _description(net: Network, coloring: style.LinkColoring) -> str:
    s = f"{len(net.sites)} sites, {len(net.links)} links"
    if coloring.mode != "kind":
        s += f"; links coloured by {coloring.value_name}"
    return s


def geojson_bytes(net: Network, values: MapValues, candidates: bool = True) -> bytes:
    """Sites, links and candidate routes as one GeoJSON FeatureCollection (antimeridian-split), UTF-8 bytes.

    Link values join as link properties, site values as site properties; failed links carry
    ``failed = 1``, built candidates ``built_candidate = 1``; candidate routes not built (unless
    ``candidates`` is false) are features with ``feature_type = "candidate"``; workload flows
    (:func:`workload_flow_features`) with ``feature_type = "workload_flow"``.
    """
    from backbone.io.geojson import geojson_dict

    link_values: dict[str, pd.Series] = dict(values.link_values)
    if values.failed_links:
        link_values["failed"] = pd.Series(1.0, index=list(values.failed_links))
    if values.built_candidates:
        link_values["built_candidate"] = pd.Series(1.0, index=list(values.built_candidates))
    doc = geojson_dict(net, link_values or None, dict(values.site_values) or None, candidates=candidates)
    doc["features"].extend(workload_flow_features(net, values.workload_flows))
    return json.dumps(doc, ensure_ascii=False, allow_nan=False).encode("utf-8")


def workload_flow_features(net: Network, flows: pd.DataFrame) -> list[dict[str, object]]:
    """The data-gravity layer's flows as GeoJSON features (``feature_type = "workload_flow"``, ``src``, ``dst``,
    ``traffic_class``, ``gbps``): the geodesic between the two sites, cut at the antimeridian."""
    features: list[dict[str, object]] = []
    for r in flows.itertuples():
        a, b = net.sites.loc[r.src], net.sites.loc[r.dst]
        route = geo.route_coords([(float(a["lon"]), float(a["lat"])), (float(b["lon"]), float(b["lat"]))],
                                 densify_km=200.0)
        parts = [np.round(p, 5).tolist() for p in geo.split_antimeridian(route)]
        geometry = ({"type": "LineString", "coordinates": parts[0]} if len(parts) == 1 else
                    {"type": "MultiLineString", "coordinates": parts})
        features.append({"type": "Feature", "geometry": geometry,
                         "properties": {"feature_type": "workload_flow", "src": str(r.src), "dst": str(r.dst),
                                        "traffic_class": str(r.traffic_class), "gbps": float(r.gbps)}})
    return features
