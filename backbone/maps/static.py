"""Static maps for slides and print: PNG, SVG and PDF with matplotlib (Agg, no pyplot state).

Layers, bottom to top: ocean (inside the globe's outline for world views), graticule, land,
country borders, coastline, placement arcs, candidate routes not built (dotted grey), link casings,
rerouting glow, built-candidate glow, links (sorted so the busiest are on top), failed links (dashed),
sites, GPUs-added rings, labels, legend and colour bar.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from backbone.maps import style
from backbone.maps.basemap import projected_basemap, ring_path
from backbone.maps.layers import Layers, build_layers, link_routes
from backbone.maps.projection import MapView
from backbone.maps.rings import draw_gpu_rings, gpu_ring_handles
from backbone.maps.values import MapValues
from backbone.model import Network

logger = logging.getLogger(__name__)

TITLE_BAND = 0.115
"""Fraction of the figure height kept for the title and subtitle."""


@dataclass(frozen=True)
class StaticOptions:
    """What to draw and how (see :func:`backbone.maps.export_map` for the meaning of each)."""

    color_by: str = "utilisation"
    size: tuple[int, int] = (1920, 1080)
    title: str | None = None
    subtitle: str | None = None
    size_by: str = "gpus"
    labels: bool = True
    max_labels: int = 36
    graticule: bool = True
    always_label: int = 16
    candidates: bool = True
    scale: float = 1.0
    """Size of everything measured in points (text, line widths, markers, legend) relative to the map: the figure is
    ``SLIDE_WIDTH_IN / scale`` inches wide, so ``scale=2`` draws text twice as large against the same map (a map
    shown small on a slide). A title and subtitle both ``""`` leave the title band out (the slide has its own)."""


RC_PARAMS: dict[str, Any] = {"svg.fonttype": "none", "svg.hashsalt": "backbone", "pdf.fonttype": 42,
                             "font.family": "DejaVu Sans", "path.simplify": True}
"""matplotlib settings of every static map (text stays text in SVG, TrueType in PDF, stable ids)."""


def build_figure(net: Network, values: MapValues, view: MapView, options: StaticOptions | None = None,
                 halo: bool = True) -> Any:
    """Draw the map into a new matplotlib ``Figure`` (Agg canvas, no pyplot state).

    Call it inside ``matplotlib.rc_context(RC_PARAMS)``, as :func:`render_static` does.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    opts = options or StaticOptions()
    width_px, height_px = opts.size
    fig_w = style.SLIDE_WIDTH_IN / opts.scale
    fig_h = fig_w * height_px / width_px
    fig = Figure(figsize=(fig_w, fig_h), dpi=width_px / fig_w, facecolor=style.BACKGROUND)
    FigureCanvasAgg(fig)
    header = not (opts.title == "" and opts.subtitle == "")
    band = TITLE_BAND * 9.0 / fig_h * (fig_w / 16.0) * opts.scale if header else 0.0
    ax = fig.add_axes((0.006, 0.008, 0.988, 0.992 - band))
    ax.set_axis_off()
    ax.set_facecolor(style.BACKGROUND)
    box = ax.get_position()
    aspect = (box.width * fig_w) / (box.height * fig_h)
    xmin, xmax, ymin, ymax = view.extent(aspect)
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_aspect("equal", adjustable="box")

    layers = build_layers(net, values, view, link_routes(net), candidates=opts.candidates)
    coloring = style.color_links(net.links, values.link_values, opts.color_by)
    _draw_basemap(ax, view, opts.graticule)
    _draw_assignments(ax, layers, values, view)
    _draw_candidates(ax, layers)
    widths = style.link_widths(net.links["capacity_gbps"].to_numpy())
    _draw_links(ax, net, layers, values, coloring, widths)
    site_artists = _draw_sites(ax, net, layers, values, opts.size_by)
    if opts.labels:
        _place_labels(fig, ax, net, layers, opts.max_labels, halo=halo, values=values, size_by=opts.size_by,
                      always=opts.always_label)
    if header:
        _draw_title(fig, net, values, view, coloring, opts, band)
    _draw_legend(fig, ax, net, values, coloring, widths, site_artists, view, opts.size_by,
                 arcs_shown=_shown_assignments(values, view),
                 candidates_drawn=any(layers.candidate_parts))
    return fig


def render_static(net: Network, values: MapValues, view: MapView, fmt: str,
                  options: StaticOptions | None = None) -> bytes:
    """Render a PNG, SVG or PDF map and return its bytes."""
    import matplotlib as mpl

    opts = options or StaticOptions()
    with mpl.rc_context(RC_PARAMS):  # type: ignore[arg-type]
        fig = build_figure(net, values, view, opts, halo=fmt != "svg")
        buf = io.BytesIO()
        save_kw: dict[str, Any] = {"format": fmt, "facecolor": fig.get_facecolor()}
        if fmt == "pdf":
            save_kw["dpi"] = style.PRINT_DPI
            save_kw["metadata"] = {"Title": opts.title or net.name, "Creator": "backbone", "CreationDate": None}
        elif fmt == "svg":
            save_kw["metadata"] = {"Title": opts.title or net.name, "Date": None}
        else:
            save_kw["dpi"] = fig.dpi
            save_kw["metadata"] = {"Title": opts.title or net.name, "Software": "backbone"}
        fig.savefig(buf, **save_kw)
    return buf.getvalue()


# ---------------------------------------------------------------------- basemap
def _draw_basemap(ax: Any, view: MapView, graticule: bool) -> None:
    from matplotlib.collections import LineCollection
    from matplotlib.patches import PathPatch, Polygon
    from matplotlib.path import Path as MplPath

    if view.is_world:
        outline = view.outline()
        ax.add_artist(Polygon(outline, closed=True, facecolor=style.OCEAN, edgecolor="none", zorder=0))
        ax.add_artist(Polygon(outline, closed=True, facecolor="none", edgecolor=style.OUTLINE, lw=0.8, zorder=3.5))
    else:
        from matplotlib.patches import Rectangle

        ax.add_artist(Rectangle((0, 0), 1, 1, transform=ax.transAxes, facecolor=style.OCEAN, edgecolor="none",
                               zorder=0))
    if graticule:
        ax.add_collection(LineCollection(view.graticule(30.0 if view.is_world else 10.0), colors=style.GRATICULE,
                                         linewidths=0.45, zorder=1))
    base = projected_basemap(view)
    vertices, codes = ring_path(base.country_rings)
    if len(vertices):
        land = MplPath(vertices, codes)
        ax.add_artist(PathPatch(land, facecolor=style.LAND, edgecolor="none", zorder=2))
        ax.add_artist(PathPatch(land, facecolor="none", edgecolor=style.BORDER, lw=0.35, zorder=2.5,
                               joinstyle="round"))
    cv, cc = ring_path(base.coast_rings)
    if len(cv):
        ax.add_artist(PathPatch(MplPath(cv, cc), facecolor="none", edgecolor=style.COAST, lw=0.5, zorder=2.6,
                               joinstyle="round"))


# ---------------------------------------------------------------------- network
def _segments(parts: list[list[np.ndarray]], idx: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Flatten the parts of the links ``idx`` (in that order); also return each part's link."""
    segs: list[np.ndarray] = []
    owner: list[int] = []
    for i in idx:
        for p in parts[i]:
            segs.append(p)
            owner.append(int(i))
    return segs, np.asarray(owner, dtype=int)


def _draw_links(ax: Any, net: Network, layers: Layers, values: MapValues, coloring: style.LinkColoring,
                widths: np.ndarray) -> None:
    from matplotlib.collections import LineCollection

    failed = net.links.index.isin(values.failed_links)
    order = np.asarray([i for i in coloring.order if not failed[i]], dtype=int)
    segs, owner = _segments(layers.link_parts, order)
    if segs:
        w = widths[owner]
        ax.add_collection(LineCollection(segs, colors=style.CASING, linewidths=w + 1.4, alpha=0.75, zorder=4.5,
                                         capstyle="round", joinstyle="round"))
        delta = values.link_values.get("delta_utilisation")
        if delta is not None and coloring.value_name != "delta_utilisation":
            d = delta.reindex(net.links.index).to_numpy(dtype=float)
            hot = np.isfinite(d[owner]) & (d[owner] > 0.02)
            if hot.any():
                ax.add_collection(LineCollection([s for s, h in zip(segs, hot, strict=True) if h],
                                                 colors=style.REROUTED, linewidths=w[hot] + 5.0, alpha=0.45,
                                                 zorder=4.6, capstyle="round"))
        upgraded = net.links.index.isin(values.upgraded_links)[owner]
        if upgraded.any():
            ax.add_collection(LineCollection([s for s, u in zip(segs, upgraded, strict=True) if u],
                                             colors=style.UPGRADED, linewidths=w[upgraded] + 6.0, alpha=0.7,
                                             linestyles=(0, (1.6, 0.8)), zorder=4.65, capstyle="butt"))
        built = net.links.index.isin(values.built_candidates)[owner]
        if built.any():
            ax.add_collection(LineCollection([s for s, b in zip(segs, built, strict=True) if b],
                                             colors=style.BUILT, linewidths=w[built] + 6.0, alpha=0.55,
                                             zorder=4.65, capstyle="round"))
        colors = [coloring.colors[i] for i in owner]
        ax.add_collection(LineCollection(segs, colors=colors, linewidths=w, zorder=5, capstyle="round",
                                         joinstyle="round"))
    fsegs, fowner = _segments(layers.link_parts, np.flatnonzero(failed))
    if fsegs:
        ax.add_collection(LineCollection(fsegs, colors=style.CASING, linewidths=widths[fowner] + 1.4, alpha=0.8,
                                         zorder=5.4))
        ax.add_collection(LineCollection(fsegs, colors=style.FAILED, linewidths=np.maximum(widths[fowner], 1.4),
                                         linestyles=(0, (2.5, 1.6)), zorder=5.5))


WORLD_ARC_SHARE = 0.8
"""On a world view, draw the largest metro -> site arcs that together carry this share of the GPUs
(the many small ones would swamp the map); regional views draw every arc."""


def _shown_assignments(values: MapValues, view: MapView) -> np.ndarray:
    """Rows of ``values.assignments`` drawn as arcs in ``view`` (see :data:`WORLD_ARC_SHARE`)."""
    gpus = values.assignments["gpus"].to_numpy(dtype=float) if len(values.assignments) else np.zeros(0)
    if not view.is_world or gpus.size == 0 or gpus.sum() <= 0:
        return np.arange(gpus.size)
    order = np.argsort(-gpus, kind="stable")
    cum = np.cumsum(gpus[order]) / gpus.sum()
    n = int(np.searchsorted(cum, WORLD_ARC_SHARE - 1e-12) + 1)
    return np.sort(order[:n])


def _draw_candidates(ax: Any, layers: Layers) -> None:
    """Candidate routes not built: thin dotted grey lines under the links."""
    from matplotlib.collections import LineCollection

    segs = [p for parts in layers.candidate_parts for p in parts]
    if segs:
        ax.add_collection(LineCollection(segs, colors=style.CANDIDATE, linewidths=1.3, linestyles=(0, (1.2, 1.8)),
                                         alpha=0.95, zorder=4.3, capstyle="round"))


def _draw_assignments(ax: Any, layers: Layers, values: MapValues, view: MapView) -> None:
    from matplotlib.collections import LineCollection

    if not layers.assignment_parts:
        return
    gpus = values.assignments["gpus"].to_numpy(dtype=float)
    top = gpus.max() if gpus.size and gpus.max() > 0 else 1.0
    shown = _shown_assignments(values, view)
    world = view.is_world
    w = (0.3 if world else 0.5) + (1.2 if world else 2.0) * np.sqrt(np.clip(gpus, 0, None) / top)
    segs, owner = _segments(layers.assignment_parts, shown)
    if segs:
        ax.add_collection(LineCollection(segs, colors=style.ASSIGNMENT, linewidths=w[owner],
                                         alpha=0.3 if world else 0.45, zorder=4, capstyle="round"))


SITE_AREA_PT2 = 240.0
"""Marker area (points^2) added for the largest site; area is proportional to GPUs or MW."""


def site_size_values(net: Network, size_by: str = "gpus", values: MapValues | None = None) -> tuple[np.ndarray, str]:
    """What site markers are sized by: GPUs (a result's ``site_values.gpus_after`` when given, so a
    placement map shows the sites after the build, else ``gpus_installed``) or MW
    (``site_values.mw_after`` when given, else ``power_available_mw``); returns ``(values, unit)``."""
    by_mw = size_by in ("mw", "power", "power_mw")
    key, col, unit = ("mw_after", "power_available_mw", "MW") if by_mw else ("gpus_after", "gpus_installed", "GPUs")
    base = net.sites[col].to_numpy(dtype=float)
    after = values.site_values.get(key) if values is not None else None
    if after is not None and len(after):
        given = after.reindex(net.sites.index).to_numpy(dtype=float)
        base = np.where(np.isfinite(given), given, base)
    return base, unit


def site_sizes(net: Network, size_by: str = "gpus", values: MapValues | None = None) -> np.ndarray:
    """Marker areas (points^2) of sites: area proportional to GPUs (or MW), see :func:`site_size_values`."""
    v, _ = site_size_values(net, size_by, values)
    top = v.max() if v.size and v.max() > 0 else 1.0
    base = np.where(net.sites["kind"].to_numpy() == "datacenter", 22.0, 12.0)
    return base + SITE_AREA_PT2 * np.clip(v, 0, None) / top


def _draw_sites(ax: Any, net: Network, layers: Layers, values: MapValues, size_by: str) -> dict[str, Any]:
    artists: dict[str, Any] = {}
    if len(net.sites) == 0:
        return artists
    sizes = site_sizes(net, size_by, values)
    kinds = net.sites["kind"].to_numpy()
    xy = layers.site_xy
    order = np.argsort(-sizes, kind="stable")  # big markers below small ones
    for kind in ("pop", "landing", "datacenter"):
        sel = order[(kinds[order] == kind) & layers.site_visible[order]]
        if sel.size == 0:
            continue
        st = style.SITE_STYLES[kind]
        artists[kind] = ax.scatter(xy[sel, 0], xy[sel, 1], s=sizes[sel] if kind == "datacenter" else sizes[sel] * 0.6,
                                   c=st["color"], marker=st["marker"], edgecolors="white", linewidths=0.8,
                                   alpha=0.82 if kind == "datacenter" else 0.95,
                                   zorder={"datacenter": 6.2, "landing": 6.1, "pop": 6.0}[kind])
    artists.update(draw_gpu_rings(ax, net, layers, values, sizes))
    return artists


# ---------------------------------------------------------------------- labels
def label_candidates(net: Network, max_labels: int, values: MapValues | None = None) -> pd.DataFrame:
    """Sites and metros worth a label, most important first (columns name, lon, lat, priority, kind,
    pos, size). Sites that gained GPUs (``values.gpus_added``) come first, labelled with what they gained
    (``Lagos-Ikeja +3,072 GPUs``), then data centres by size (GPUs installed + 50 x MW), then metros without a
    site, then PoPs and landings. Names drop a parenthetical detail and an alternative after `` / ``
    (``Tokyo (Inzai)`` -> ``Tokyo``, ``London / Slough`` -> ``London``)."""
    sites = net.sites
    rows = []
    if len(sites):
        weight = sites["gpus_installed"].to_numpy(dtype=float) + 50.0 * sites["power_available_mw"].to_numpy(dtype=float)
        is_dc = (sites["kind"] == "datacenter").to_numpy()
        pri = np.where(is_dc, 2e9 + weight, np.where(sites["kind"].to_numpy() == "pop", 1e9, 0.0) + weight)
        names = _names(sites)
        if values is not None and len(values.gpus_added):
            added = values.gpus_added.reindex(sites.index).to_numpy(dtype=float)
            gained = np.isfinite(added) & (added > 0)
            pri = np.where(gained, 4e9 + np.nan_to_num(added), pri)
            weight = np.where(gained, 1e12 + np.nan_to_num(added), weight)  # placed first, as forced labels
            names = names.where(~gained, names + pd.Series([f" +{a:,.0f} GPUs" for a in np.nan_to_num(added)],
                                                           index=sites.index))
        rows.append(pd.DataFrame({"name": names, "lon": sites["lon"], "lat": sites["lat"],
                                  "priority": pri, "kind": "site", "pos": np.arange(len(sites)), "size": weight}))
    if len(net.metros):
        m = net.metros[~net.metros.index.isin(set(sites["metro"]))]  # a site there already names the metro
        pri = 1.5e9 + m["population_m"].to_numpy(dtype=float) * 1e6 + m["gdp_usd_bn"].to_numpy(dtype=float)
        rows.append(pd.DataFrame({"name": _names(m), "lon": m["lon"], "lat": m["lat"], "priority": pri,
                                  "kind": "metro", "pos": net.metros.index.get_indexer(m.index), "size": 0.0}))
    if not rows:
        return pd.DataFrame(columns=["name", "lon", "lat", "priority", "kind", "pos", "size"])
    table = pd.concat(rows).sort_values("priority", ascending=False, kind="stable")
    table = table.drop_duplicates("name")
    return table.head(max_labels * 3)


def _names(df: pd.DataFrame) -> pd.Series:
    names = df["name"].astype(str).str.strip()
    short = names.str.replace(r"\s*\([^)]*\)\s*$", "", regex=True).str.split(" / ").str[0].str.strip()
    short = short.where(short != "", names)
    return short.where(short != "", pd.Series(df.index, index=df.index))


LABEL_GAP_PT = 2.5
"""Gap between a marker's edge and its label, points."""


Box = tuple[float, float, float, float]
"""A box in display coordinates: x0, y0, x1, y1."""


@dataclass
class _LabelCanvas:
    """What placing labels needs from the drawn figure: renderer, transforms, marker boxes, placed boxes."""

    ax: Any
    renderer: Any
    axbox: Any
    effects: list[Any]
    markers: list[Box]
    marker_dc: list[bool]
    marker_pos: list[int]
    labels: list[Box] = field(default_factory=list)


def _place_labels(fig: Any, ax: Any, net: Network, layers: Layers, max_labels: int, halo: bool = True,
                  values: MapValues | None = None, size_by: str = "gpus", always: int = 16) -> None:
    """Greedy placement beside each label's own marker; labels never overlap each other.

    The ``always`` largest data centres in view are placed first and avoid other labels and
    data-centre markers (where a squeezed map edge leaves no such room, other labels only), so they
    are labelled whenever any room is left; every other label, by priority, also
    avoids every marker and is dropped when none of eight positions round its dot is free.
    ``halo`` draws a white halo (a path effect, which turns text into outlines); SVG output skips
    it so labels stay editable text.
    """
    import matplotlib.patheffects as pe

    cands = label_candidates(net, max_labels, values)
    if cands.empty:
        return
    renderer = fig.canvas.get_renderer()
    radius_pt = np.sqrt(site_sizes(net, size_by, values)) / 2.0
    is_dc = (net.sites["kind"] == "datacenter").to_numpy()
    markers, marker_dc, marker_pos = _marker_boxes(ax, layers, radius_pt * fig.dpi / 72.0, is_dc)
    effects = [pe.withStroke(linewidth=2.6, foreground="white", alpha=0.85)] if halo else []
    canvas = _LabelCanvas(ax, renderer, ax.get_window_extent(renderer), effects, markers, marker_dc, marker_pos)
    in_view = [row for row in cands.itertuples() if _label_visible(row, layers, ax.transData, canvas.axbox)]
    gained = np.zeros(len(is_dc), dtype=bool)
    if values is not None and len(values.gpus_added):
        gained = net.sites.index.isin(values.gpus_added.index)
    ordered, must = _label_order(in_view, is_dc | gained, always + int(gained.sum()))
    placed = 0
    for row in ordered:
        forced = row.kind == "site" and row.pos in must
        if placed >= max_labels and not forced:
            break
        xy = layers.site_xy[row.pos] if row.kind == "site" else layers.metro_xy[row.pos]
        gap = (radius_pt[row.pos] if row.kind == "site" else 2.0) + LABEL_GAP_PT
        if _place_one_label(canvas, row, xy, gap, forced):
            placed += 1


def _marker_boxes(ax: Any, layers: Layers, radius_px: np.ndarray,
                  is_dc: np.ndarray) -> tuple[list[Box], list[bool], list[int]]:
    """Display boxes of the visible site markers, whether each is a data centre, and each one's site position."""
    vis = layers.site_visible
    if not vis.any():
        return [], [], []
    pts = ax.transData.transform(layers.site_xy[vis])
    r = radius_px[vis]
    markers = [(float(x - rr), float(y - rr), float(x + rr), float(y + rr)) for (x, y), rr in zip(pts, r, strict=True)]
    return markers, is_dc[vis].tolist(), np.flatnonzero(vis).tolist()


def _label_order(in_view: list[Any], is_dc: np.ndarray, always: int) -> tuple[list[Any], set[int]]:
    """Labels in placing order (the ``always`` largest data centres in view first) and those forced ones' positions."""
    sites_in_view = [row for row in in_view if row.kind == "site" and is_dc[row.pos]]
    must = {row.pos for row in sorted(sites_in_view, key=lambda r: -r.size)[:max(always, 0)]}
    ordered = ([row for row in in_view if row.kind == "site" and row.pos in must]
               + [row for row in in_view if not (row.kind == "site" and row.pos in must)])
    return ordered, must


def _place_one_label(canvas: _LabelCanvas, row: Any, xy: Any, gap: float, forced: bool) -> bool:
    """Try the eight positions round one dot; keep the first free one (True) or draw nothing (False)."""
    own = canvas.marker_pos.index(row.pos) if row.kind == "site" and row.pos in canvas.marker_pos else -1
    markers = canvas.markers
    # a forced label first avoids data-centre dots, and in a crowd (a squeezed map edge) only other labels
    tiers = ([[m for j, m in enumerate(markers) if j != own and canvas.marker_dc[j]], []] if forced
             else [[m for j, m in enumerate(markers) if j != own]])
    for obstacles in tiers:
        for dx, dy, ha, va in _label_offsets(gap):
            text = canvas.ax.annotate(str(row.name), xy=xy, xytext=(dx, dy), textcoords="offset points", ha=ha,
                                      va=va, fontsize=9.5, color=style.TEXT, zorder=8, path_effects=canvas.effects,
                                      fontweight="bold" if row.kind == "site" else "normal", annotation_clip=True)
            bb = text.get_window_extent(canvas.renderer).expanded(1.06, 1.12)
            box = (bb.x0, bb.y0, bb.x1, bb.y1)
            if _label_fits(box, canvas.axbox, canvas.labels, obstacles):
                canvas.labels.append(box)
                return True
            text.remove()
    return False


def _label_fits(box: Box, axbox: Any, labels: list[Box], obstacles: list[Box]) -> bool:
    """Whether ``box`` lies inside the axes and overlaps no placed label and no obstacle."""
    inside = axbox.x0 <= box[0] and box[2] <= axbox.x1 and axbox.y0 <= box[1] and box[3] <= axbox.y1
    return inside and not any(_overlap(box, t) for t in labels) and not any(_overlap(box, m) for m in obstacles)


def _label_visible(row: Any, layers: Layers, to_disp: Any, axbox: Any) -> bool:
    xy = layers.site_xy[row.pos] if row.kind == "site" else layers.metro_xy[row.pos]
    visible = layers.site_visible[row.pos] if row.kind == "site" else layers.metro_visible[row.pos]
    if not visible:
        return False
    d = to_disp.transform(np.asarray(xy, dtype=float).reshape(1, 2))[0]
    return bool(axbox.x0 <= d[0] <= axbox.x1 and axbox.y0 <= d[1] <= axbox.y1)


def _label_offsets(gap: float) -> tuple[tuple[float, float, str, str], ...]:
    """Eight label positions round a dot, nearest first: right, left, the four corners, above, below."""
    c = gap * 0.72
    return ((gap, 0.0, "left", "center"), (-gap, 0.0, "right", "center"), (c, c, "left", "bottom"),
            (c, -c, "left", "top"), (-c, c, "right", "bottom"), (-c, -c, "right", "top"),
            (0.0, gap, "center", "bottom"), (0.0, -gap, "center", "top"))


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# ---------------------------------------------------------------------- title, legend
def default_title(net: Network, coloring: style.LinkColoring, values: MapValues) -> str:
    """A title saying what the map shows."""
    what = {"kind": "links by kind", "utilisation": "link utilisation", "impact": "failure impact",
            "diverging": coloring.label.lower(), "sequential": coloring.label.lower()}[coloring.mode]
    if values.failed_links and coloring.mode != "impact":
        what += f" with {len(values.failed_links)} link{'s' if len(values.failed_links) != 1 else ''} failed"
    return f"{net.name}: {what}"


def default_subtitle(net: Network, view: MapView) -> str:
    """Counts and totals of the network, one line."""
    links = net.links
    n_sub = int((links["kind"] == "submarine").sum())
    n_dc = int((net.sites["kind"] == "datacenter").sum())
    parts = [f"{len(net.sites)} sites ({n_dc} data centres)", f"{len(links)} links ({n_sub} submarine)",
             f"{style.format_gbps(float(links['capacity_gbps'].sum()))} lit"]
    gpus = int(net.sites["gpus_installed"].sum())
    if gpus:
        parts.append(f"{gpus:,} GPUs")
    mw = float(net.sites["power_available_mw"].sum())
    if mw:
        parts.append(f"{mw:,.0f} MW")
    return "  ·  ".join(parts)


def _draw_title(fig: Any, net: Network, values: MapValues, view: MapView, coloring: style.LinkColoring,
                opts: StaticOptions, band: float) -> None:
    title = opts.title or default_title(net, coloring, values)
    subtitle = opts.subtitle if opts.subtitle is not None else default_subtitle(net, view)
    top = 1.0 - band * 0.26
    fig.text(0.014, top, title, ha="left", va="center", fontsize=22, fontweight="bold", color=style.TEXT)
    fig.text(0.014, top - band * 0.42, subtitle, ha="left", va="center", fontsize=12.5, color=style.SUBTEXT)
    where = "world" if view.is_world else f"region {view.name}"
    centre = f"{abs(view.center_lon):g}°{'E' if view.center_lon >= 0 else 'W'}"
    proj = "Equal Earth" if "eqearth" in view.proj4 else "Lambert azimuthal equal-area"
    fig.text(0.986, top - band * 0.42, f"{proj}, {where} centred {centre}  ·  basemap: Natural Earth",
             ha="right", va="center", fontsize=9, color=style.SUBTEXT, alpha=0.9)


def _link_mark_handles(values: MapValues, coloring: style.LinkColoring, candidates_drawn: bool) -> list[Any]:
    """Legend entries of the marks drawn on links: failed, new routes, upgraded, candidates, rerouted load."""
    from matplotlib.lines import Line2D

    handles: list[Any] = []
    if values.failed_links:
        handles.append(Line2D([], [], color=style.FAILED, lw=1.8, ls=(0, (2.5, 1.6)), label="Failed link"))
    if values.built_candidates:
        n = len(values.built_candidates)
        handles.append(Line2D([], [], color=style.BUILT, lw=6, alpha=0.6,
                              label=f"New route (built candidate): {n}"))
    if values.upgraded_links:
        n = len(values.upgraded_links)
        handles.append(Line2D([], [], color=style.UPGRADED, lw=6, alpha=0.7, ls=(0, (1.6, 0.8)),
                              label=f"Upgraded link (modules added): {n}"))
    if candidates_drawn:
        handles.append(Line2D([], [], color=style.CANDIDATE, lw=1.3, ls=(0, (1.2, 1.8)),
                              label="Candidate route (not built)"))
    if "delta_utilisation" in values.link_values and coloring.value_name != "delta_utilisation":
        handles.append(Line2D([], [], color=style.REROUTED, lw=6, alpha=0.5, label="Rerouted load"))
    return handles


def _draw_legend(fig: Any, ax: Any, net: Network, values: MapValues, coloring: style.LinkColoring,
                 widths: np.ndarray, site_artists: dict[str, Any], view: MapView, size_by: str = "gpus",
                 arcs_shown: np.ndarray | None = None,
                 candidates_drawn: bool = False) -> None:
    from matplotlib.lines import Line2D

    handles: list[Any] = []
    for label, color in coloring.categories.items():
        handles.append(Line2D([], [], color=color, lw=2.6, label=label))
    caps = net.links["capacity_gbps"].to_numpy(dtype=float)
    for cap in style.capacity_legend_values(caps):
        w = float(np.interp(np.log10(cap), [np.log10(max(caps.min(), 1.0)), np.log10(max(caps.max(), 1.0)) + 1e-12],
                            [widths.min(), widths.max()])) if len(caps) else 1.0
        handles.append(Line2D([], [], color="#323f4b", lw=w, label=style.format_gbps(cap)))
    if coloring.mode != "kind" and not np.isfinite(coloring.values).all():
        handles.append(Line2D([], [], color=style.NO_VALUE, lw=1.6, label="No value"))
    handles += _link_mark_handles(values, coloring, candidates_drawn)
    if len(values.assignments):
        n_shown = len(values.assignments) if arcs_shown is None else len(arcs_shown)
        label = "Metro → site" if n_shown == len(values.assignments) else (
            f"Metro → site (largest {n_shown} of {len(values.assignments)}, {WORLD_ARC_SHARE:.0%} of GPUs)")
        handles.append(Line2D([], [], color=style.ASSIGNMENT, lw=1.6, alpha=0.6, label=label))
    for kind in ("datacenter", "landing", "pop"):
        if kind in site_artists:
            st = style.SITE_STYLES[kind]
            handles.append(Line2D([], [], ls="none", marker=st["marker"], markersize=8 if kind == "datacenter" else 6,
                                  markerfacecolor=st["color"], markeredgecolor="white", label=st["label"]))
    if "datacenter" in site_artists:
        size_values, unit = site_size_values(net, size_by, values)
        top = float(size_values.max())
        if top > 0:
            for v in sorted({style.nice_number(top / 5.0), style.nice_number(top)}):
                area = 22.0 + SITE_AREA_PT2 * v / top
                handles.append(Line2D([], [], ls="none", marker="o", markersize=float(np.sqrt(area)),
                                      markerfacecolor="none", markeredgecolor=style.SITE_STYLES["datacenter"]["color"],
                                      markeredgewidth=0.9, label=f"{v:,.0f} {unit}"))
    handles += gpu_ring_handles(site_artists)
    if handles:
        leg = ax.legend(handles=handles, loc="lower left", ncol=2 if len(handles) > 6 else 1, fontsize=9.5,
                        frameon=True, framealpha=0.88, facecolor="white", edgecolor="#d9e2ec", borderpad=0.8,
                        handlelength=2.4, columnspacing=1.4, labelcolor=style.TEXT,
                        bbox_to_anchor=(0.005, 0.01) if view.is_world else (0.01, 0.015))
        leg.set_zorder(10)
    _draw_colorbar(fig, ax, coloring, view)


def _draw_colorbar(fig: Any, ax: Any, coloring: style.LinkColoring, view: MapView) -> None:
    """The link colour scale with its title (the value and its unit), lower right."""
    if coloring.cmap is not None:
        from matplotlib.cm import ScalarMappable

        scale = style.SLIDE_WIDTH_IN / float(fig.get_figwidth())  # StaticOptions.scale: wider for larger text
        width = min(0.17 * scale, 0.3)
        cax = ax.inset_axes((0.94 - width, 0.045, width, 0.022 * scale))
        cax.set_zorder(10)
        sm = ScalarMappable(norm=coloring.norm, cmap=coloring.cmap)  # type: ignore[arg-type]
        cb = fig.colorbar(sm, cax=cax, orientation="horizontal", extend=coloring.extend)
        cb.outline.set_edgecolor("#9aa5b1")
        cb.outline.set_linewidth(0.6)
        cb.ax.tick_params(labelsize=9, colors=style.SUBTEXT, length=2.5, width=0.6)
        if coloring.mode == "diverging":  # -1500 ... 1500 in five ticks, not seven that run into each other
            from matplotlib.ticker import MaxNLocator

            cb.ax.xaxis.set_major_locator(MaxNLocator(4, symmetric=True))
        if coloring.mode == "utilisation":
            cb.set_ticks([0, 0.25, 0.5, 0.75, 1.0])
            cb.set_ticklabels(["0%", "25%", "50%", "75%", "100%"])
        cb.ax.set_title(coloring.label, fontsize=10, color=style.TEXT, loc="left", pad=5)
        if coloring.extend == "max":
            cb.ax.text(1.07, 0.5, "> 100%", transform=cb.ax.transAxes, ha="left", va="center", fontsize=9,
                       color=style.OVERLOAD, fontweight="bold")
        if not view.is_world:
            from matplotlib.patches import FancyBboxPatch

            ax.add_patch(FancyBboxPatch((0.928 - width, 0.012), width + 0.058, 0.098 * scale,
                                        boxstyle="round,pad=0,rounding_size=0.006",
                                        transform=ax.transAxes, facecolor="white", edgecolor="#d9e2ec",
                                        alpha=0.88, zorder=9))
