"""Site marker sizes and label placement for the static maps: which sites and metros are labelled, in what
order, and where each label goes so it touches its marker and overlaps no other label or marker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from backbone.maps import style
from backbone.maps.layers import Layers
from backbone.maps.values import MapValues
from backbone.model import Network

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
        training = training_labels(net, values)
        if len(training):
            hosts = sites.index.isin(training.index)
            pri = np.where(hosts, 5e9 + sites["gpus_installed"].to_numpy(dtype=float), pri)
            weight = np.where(hosts, 2e12 + weight, weight)  # placed first, as forced labels
            names = names.where(~hosts, names + ": " + training.reindex(sites.index).fillna(""))
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


def training_labels(net: Network, values: MapValues | None) -> pd.Series:
    """Per site running training jobs (``values.training_sites``), what its label adds: the job and its GPUs there
    (``llm 4,096 GPUs``), or with several jobs their number and GPUs (``3 jobs 12,288 GPUs``); indexed by site."""
    if values is None or len(values.training_sites) == 0:
        return pd.Series(dtype=str)
    t = values.training_sites
    by_site = t.groupby("site", sort=False).agg(jobs=("job", "nunique"), first=("job", "first"), gpus=("gpus", "sum"))
    text = [f"{j} {g:,.0f} GPUs" if n == 1 else f"{n} jobs {g:,.0f} GPUs"
            for n, j, g in zip(by_site["jobs"], by_site["first"], by_site["gpus"], strict=True)]
    return pd.Series(text, index=by_site.index.astype(str), dtype=str)


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


def place_labels(fig: Any, ax: Any, net: Network, layers: Layers, max_labels: int, halo: bool = True,
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
    if values is not None and len(values.training_sites):
        gained |= net.sites.index.isin(values.training_sites["site"])
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
