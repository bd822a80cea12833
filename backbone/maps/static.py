"""Static maps for slides and print: PNG, SVG and PDF with matplotlib (Agg, no pyplot state).

Layers, bottom to top: ocean (inside the globe's outline for world views), graticule, land,
country borders, coastline, placement arcs, candidate routes not built (dotted grey), link casings,
rerouting glow, built-candidate glow, links (sorted so the busiest are on top), failed links (dashed),
workload flow arcs (the data-gravity layer, :mod:`backbone.maps.gravity`), sites, GPUs-added rings, dataset homes
and training sites, labels, legend and colour bar.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from backbone.maps import style
from backbone.maps.basemap import projected_basemap, ring_path
from backbone.maps.gravity import draw_workloads, workload_handles
from backbone.maps.labels import SITE_AREA_PT2, place_labels, site_size_values, site_sizes
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
    gravity = (draw_workloads(ax, net, layers, values, site_sizes(net, opts.size_by, values))
               if values.has_workloads else {})
    if opts.labels:
        place_labels(fig, ax, net, layers, opts.max_labels, halo=halo, values=values, size_by=opts.size_by,
                      always=opts.always_label)
    if header:
        _draw_title(fig, net, values, view, coloring, opts, band)
    _draw_legend(fig, ax, net, values, coloring, widths, site_artists, view, opts.size_by,
                 arcs_shown=_shown_assignments(values, view),
                 candidates_drawn=any(layers.candidate_parts), extra_handles=workload_handles(gravity))
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
                 candidates_drawn: bool = False, extra_handles: list[Any] | None = None) -> None:
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
    handles += extra_handles or []
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
