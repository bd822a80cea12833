"""One self-contained interactive HTML map: inline SVG built by inline JS from embedded data.

Nothing is fetched: no script, style sheet, font, tile or data file; the projected basemap, links,
sites and values are embedded as JSON (coordinates pre-projected in Python with the same seam
cutting as the static maps). The page pans (drag) and zooms (wheel, +/- buttons), shows tooltips
(links: name, cable system, capacity, utilisation, latency; sites: name, role, GPUs, MW), toggles
layers (terrestrial, submarine, sites, demands, assignments) and, for world maps, switches between
two pre-projected views (the requested centre and the Pacific-centred one).
"""

from __future__ import annotations

import html
import json
import logging
from typing import Any

import numpy as np

from backbone import geo
from backbone.maps import style
from backbone.maps.basemap import projected_basemap
from backbone.maps.labels import label_candidates, site_sizes
from backbone.maps.layers import build_layers, link_routes
from backbone.maps.projection import BBox, MapView, make_view
from backbone.maps.static import default_subtitle, default_title
from backbone.maps.template import page_template
from backbone.maps.values import MapValues
from backbone.model import Network
from backbone.serialize import finite_or_none

logger = logging.getLogger(__name__)

VIEW_WIDTH = 1000.0
"""Width of the SVG user space every view is scaled to."""
PACIFIC_CENTER_LON = 150.0
MAX_DEMAND_ARCS = 300
"""The largest demands drawn in the (off by default) demand layer."""


def render_html(net: Network, values: MapValues, *, color_by: str = "utilisation", center_lon: float = 0.0,
                region: str | BBox | None = None, title: str | None = None, subtitle: str | None = None,
                size_by: str = "gpus", candidates: bool = True) -> str:
    """The interactive map page as a string (UTF-8 HTML, no external references).

    Parameters are those of :func:`backbone.maps.render_map_bytes`.
    """
    first = make_view(center_lon, region)
    views = [first]
    if first.is_world:
        other = 0.0 if abs(first.center_lon - PACIFIC_CENTER_LON) < 1e-9 else PACIFIC_CENTER_LON
        views.append(make_view(other, None))
    coloring = style.color_links(net.links, values.link_values, color_by)
    routes = link_routes(net)
    demand_arcs, demand_rows = _demand_arcs(net)
    data: dict[str, Any] = {
        "title": title or default_title(net, coloring, values),
        "subtitle": subtitle if subtitle is not None else default_subtitle(net, first),
        "views": [_view_data(net, values, v, routes, demand_arcs, candidates) for v in views],
        "links": _link_table(net, values, coloring),
        "candidates": _candidate_table(net) if candidates else [],
        "sites": _site_table(net, values, size_by),
        "demands": demand_rows,
        "assignments": [{"metro": str(r.metro), "site": str(r.site), "gpus": float(r.gpus)}
                        for r in values.assignments.itertuples()],
        "flows": [{"src": str(r.src), "dst": str(r.dst), "cls": str(r.traffic_class), "gbps": float(r.gbps)}
                  for r in values.workload_flows.itertuples()],
        "legend": _legend(net, values, coloring),
        "labels": _labels(net, values),
        "palette": {"ocean": style.OCEAN, "land": style.LAND, "border": style.BORDER, "coast": style.COAST,
                    "graticule": style.GRATICULE, "outline": style.OUTLINE, "failed": style.FAILED,
                    "assignment": style.ASSIGNMENT, "added": style.ADDED, "removed": style.REMOVED, "demand": "#9b5de5",
                    "rerouted": style.REROUTED, "casing": style.CASING, "novalue": style.NO_VALUE,
                    "candidate": style.CANDIDATE, "built": style.BUILT, "upgraded": style.UPGRADED,
                    "flows": style.WORKLOAD_CLASS_COLORS},
    }
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    page = (page_template().replace("%%TITLE%%", html.escape(data["title"])).replace("%%OCEAN%%", style.OCEAN)
            .replace("%%DATA%%", payload))
    logger.debug("interactive map: %d bytes", len(page))
    return page


# ---------------------------------------------------------------------- geometry -> SVG paths
class _Scaler:
    def __init__(self, view: MapView) -> None:
        xmin, xmax, ymin, ymax = view.extent()
        self.xmin, self.ymax = xmin, ymax
        self.k = VIEW_WIDTH / (xmax - xmin)
        self.height = (ymax - ymin) * self.k

    def xy(self, pts: np.ndarray) -> np.ndarray:
        out = np.empty_like(pts, dtype=float)
        out[:, 0] = (pts[:, 0] - self.xmin) * self.k
        out[:, 1] = (self.ymax - pts[:, 1]) * self.k
        return np.round(out, 1)

    def path(self, parts: list[np.ndarray], closed: bool = False) -> str:
        chunks = []
        for p in parts:
            if len(p) < 2:
                continue
            q = self.xy(p)
            body = " ".join(f"{x:g} {y:g}" for x, y in q[1:])
            chunks.append(f"M{q[0, 0]:g} {q[0, 1]:g}L{body}{'Z' if closed else ''}")
        return "".join(chunks)


def _simplify(rings: list[np.ndarray], tolerance: float) -> list[np.ndarray]:
    """Drop ring vertices closer than ``tolerance`` (map metres) to the previous kept one."""
    out = []
    for r in rings:
        if len(r) <= 4:
            out.append(r)
            continue
        keep = [0]
        last = r[0]
        for i in range(1, len(r) - 1):
            if abs(r[i, 0] - last[0]) + abs(r[i, 1] - last[1]) >= tolerance:
                keep.append(i)
                last = r[i]
        keep.append(len(r) - 1)
        if len(keep) >= 4:
            out.append(r[keep])
    return out


def _view_data(net: Network, values: MapValues, view: MapView, routes: list[np.ndarray],
               demand_arcs: list[np.ndarray], candidates: bool = True) -> dict[str, Any]:
    sc = _Scaler(view)
    base = projected_basemap(view)
    tol = 0.6 / sc.k  # 0.6 user units: invisible at 1x, still fine when zoomed 4x
    layers = build_layers(net, values, view, routes, candidates=candidates)
    demand_parts = view.project_lines(demand_arcs)
    label = ("Pacific-centred" if abs(view.center_lon - PACIFIC_CENTER_LON) < 1e-9 else
             f"Centred {abs(view.center_lon):g}°{'E' if view.center_lon >= 0 else 'W'}")
    return {
        "name": label if view.is_world else f"Region {view.name}",
        "width": VIEW_WIDTH,
        "height": round(sc.height, 1),
        "world": view.is_world,
        "outline": sc.path([view.outline()], closed=True) if view.is_world else "",
        "graticule": sc.path(view.graticule(30.0 if view.is_world else 10.0)),
        "land": sc.path(_simplify(base.country_rings, tol), closed=True),
        "coast": sc.path(_simplify(base.coast_rings, tol), closed=True),
        "links": [sc.path(parts) for parts in layers.link_parts],
        "candidates": [sc.path(parts) for parts in layers.candidate_parts],
        "sites": [[float(x), float(y)] if v else None
                  for (x, y), v in zip(sc.xy(layers.site_xy) if len(layers.site_xy) else np.zeros((0, 2)),
                                       layers.site_visible, strict=True)],
        "assignments": [sc.path(parts) for parts in layers.assignment_parts],
        "flows": [sc.path(parts) for parts in layers.flow_parts],
        "demands": [sc.path(parts) for parts in demand_parts],
        "metros": [[float(x), float(y)] if v else None
                   for (x, y), v in zip(sc.xy(layers.metro_xy) if len(layers.metro_xy) else np.zeros((0, 2)),
                                        layers.metro_visible, strict=True)],
    }


# ---------------------------------------------------------------------- tables
def _num(v: Any, digits: int = 4) -> float | None:
    return finite_or_none(v, digits)


def _link_table(net: Network, values: MapValues, coloring: style.LinkColoring) -> list[dict[str, Any]]:
    links = net.links
    widths = style.link_widths(links["capacity_gbps"].to_numpy())
    failed = set(values.failed_links)
    built = set(values.built_candidates)
    upgraded = set(values.upgraded_links)
    extra = {name: s.reindex(links.index).to_numpy(dtype=float) for name, s in values.link_values.items()}
    rank = np.empty(len(links), dtype=int)
    rank[coloring.order] = np.arange(len(links))
    rows = []
    for j, (lid, r) in enumerate(zip(links.index, links.to_dict("records"), strict=True)):
        rows.append({
            "id": str(lid), "name": str(r["name"] or lid), "kind": str(r["kind"]),
            "cable": str(r["cable_system"]), "a": str(r["site_a"]), "b": str(r["site_b"]),
            "cap": _num(r["capacity_gbps"], 1), "km": _num(r["length_km"], 0), "ms": _num(r["latency_ms"], 2),
            "color": coloring.colors[j], "w": round(float(widths[j]), 2), "failed": lid in failed,
            "built": lid in built, "upgraded": lid in upgraded,
            "z": int(rank[j]), "values": {k: _num(v[j]) for k, v in extra.items() if np.isfinite(v[j])},
        })
    return rows


def _candidate_table(net: Network) -> list[dict[str, Any]]:
    """One row per candidate route (tooltips): kind, ends, module, cost, lead time, availability."""
    return [{"id": str(cid), "name": str(r["name"] or cid), "kind": str(r["kind"]), "cable": str(r["cable_system"]),
             "a": str(r["site_a"]), "b": str(r["site_b"]), "module": _num(r["module_gbps"], 1),
             "max": int(r["max_modules"]), "cost": _num(r["module_cost_usd"], 0), "fixed": _num(r["fixed_cost_usd"], 0),
             "lead": int(r["lead_time_quarters"]), "from": str(r["available_from"]), "ms": _num(r["latency_ms"], 2)}
            for cid, r in zip(net.candidates.index, net.candidates.to_dict("records"), strict=True)]


def _site_table(net: Network, values: MapValues, size_by: str) -> list[dict[str, Any]]:
    sites = net.sites
    radius = np.sqrt(site_sizes(net, size_by, values)) / 2.0 * 1.1 if len(sites) else np.zeros(0)
    extra = {name: s.reindex(sites.index).to_numpy(dtype=float) for name, s in values.site_values.items()}
    rows = []
    for j, (sid, r) in enumerate(zip(sites.index, sites.to_dict("records"), strict=True)):
        st = style.SITE_STYLES.get(str(r["kind"]), style.SITE_STYLES["pop"])
        rows.append({
            "id": str(sid), "name": str(r["name"] or sid), "kind": str(r["kind"]), "region": str(r["region"]),
            "gpus": int(r["gpus_installed"]), "mw": _num(r["power_available_mw"], 1), "r": round(float(radius[j]), 2),
            "color": st["color"], "values": {k: _num(v[j]) for k, v in extra.items() if np.isfinite(v[j])},
        })
    return rows


def _demand_arcs(net: Network) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    d = net.demands
    if d.empty:
        return [], []
    top = d.sort_values("demand_gbps", ascending=False).head(MAX_DEMAND_ARCS)
    a = net.sites.loc[top["src"], ["lon", "lat"]].to_numpy(dtype=float)
    b = net.sites.loc[top["dst"], ["lon", "lat"]].to_numpy(dtype=float)
    arcs = [geo.route_coords([(p[0], p[1]), (q[0], q[1])], densify_km=250.0) for p, q in zip(a, b, strict=True)]
    rows = [{"id": str(i), "src": str(r.src), "dst": str(r.dst), "gbps": _num(r.demand_gbps, 1),
             "cls": str(r.traffic_class)} for i, r in zip(top.index, top.itertuples(), strict=True)]
    return arcs, rows


def _legend(net: Network, values: MapValues, coloring: style.LinkColoring) -> dict[str, Any]:
    from matplotlib.colors import to_hex

    legend: dict[str, Any] = {"mode": coloring.mode, "label": coloring.label, "value": coloring.value_name,
                              "categories": coloring.categories, "sites": {
                                  k: {"color": s["color"], "label": s["label"]} for k, s in style.SITE_STYLES.items()
                                  if (net.sites["kind"] == k).any()}}
    if coloring.cmap is not None:
        ticks = np.linspace(0.0, 1.0, 9)
        legend["ramp"] = [to_hex(coloring.cmap(t)) for t in ticks]  # type: ignore[operator]
        norm = coloring.norm
        legend["min"] = float(norm.vmin)  # type: ignore[attr-defined]
        legend["max"] = float(norm.vmax)  # type: ignore[attr-defined]
        legend["over"] = style.OVERLOAD if coloring.extend == "max" else ""
    return legend


def _labels(net: Network, values: MapValues | None = None) -> list[dict[str, Any]]:
    cands = label_candidates(net, 40, values)
    return [{"name": str(r.name), "kind": str(r.kind), "pos": int(r.pos)} for r in cands.itertuples()]
