"""The data-gravity layer of static maps: training jobs drawn to their datasets.

Workload flows (``values.workload_flows``: gradient sync, checkpoints, remote dataset reads, replication) are arcs
between sites coloured by traffic class and wide by Gbps, with an arrowhead at the receiving site; sites running
training jobs get a red ring (their label names the jobs' GPUs, :func:`backbone.maps.labels.label_candidates`);
dataset homes a dark green square round the site, dashed for a replica the placement adds. Each mark drawn has a
legend entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from backbone.maps import style
from backbone.maps.layers import Layers
from backbone.maps.values import MapValues
from backbone.model import Network

__all__ = ["FLOW_WIDTH_PT", "draw_workloads", "flow_widths", "workload_handles"]

FLOW_WIDTH_PT = (1.0, 6.0)
"""Width of a workload flow arc, points: the smallest flow to the largest (square root of Gbps)."""


def flow_widths(gbps: np.ndarray) -> np.ndarray:
    """Arc widths (points) for flows of ``gbps``: ``lo + (hi - lo) * sqrt(gbps / max)`` with :data:`FLOW_WIDTH_PT`."""
    g = np.clip(np.asarray(gbps, dtype=float), 0.0, None)
    top = float(g.max()) if g.size and g.max() > 0 else 1.0
    lo, hi = FLOW_WIDTH_PT
    return lo + (hi - lo) * np.sqrt(g / top)


def class_order(classes: pd.Series) -> list[str]:
    """The traffic classes present, in the order of :data:`backbone.maps.style.WORKLOAD_CLASS_COLORS` (others after,
    by name)."""
    present = set(map(str, classes))
    known = [c for c in style.WORKLOAD_CLASS_COLORS if c in present]
    return known + sorted(present - set(known))


def draw_workloads(ax: Any, net: Network, layers: Layers, values: MapValues, sizes: np.ndarray) -> dict[str, Any]:
    """Draw the flow arcs, the training-site rings and the dataset-home squares; returns what was drawn (for
    :func:`workload_handles`): ``arcs`` (number of flows drawn), ``classes`` (class -> (flows, Gbps, flows in
    view)),
    ``training``, ``homes``, ``new_homes`` (numbers of sites marked) and ``widest_gbps``."""
    drawn: dict[str, Any] = {"arcs": 0, "classes": {}, "training": 0, "homes": 0, "new_homes": 0, "widest_gbps": 0.0}
    flows = values.workload_flows
    if len(flows) and layers.flow_parts:
        radius_pt = np.sqrt(sizes[net.sites.index.get_indexer(flows["dst"])]) / 2.0
        drawn.update(_draw_arcs(ax, layers, flows, radius_pt))
    site_pos = net.sites.index
    xy = layers.site_xy
    if len(values.dataset_homes):
        homes = values.dataset_homes
        for new in (False, True):
            sel = np.unique(site_pos.get_indexer(homes.loc[homes["new"] == new, "site"]))
            sel = sel[(sel >= 0) & layers.site_visible[sel]]
            if sel.size:
                ax.scatter(xy[sel, 0], xy[sel, 1], s=sizes[sel] + 230.0, marker="s", facecolors="none",
                           edgecolors=style.DATASET_HOME, linewidths=1.9, linestyles="--" if new else "-",
                           zorder=6.4)
                drawn["new_homes" if new else "homes"] = int(sel.size)
    if len(values.training_sites):
        sel = np.unique(site_pos.get_indexer(values.training_sites["site"]))
        sel = sel[(sel >= 0) & layers.site_visible[sel]]
        if sel.size:
            ax.scatter(xy[sel, 0], xy[sel, 1], s=sizes[sel] + 110.0, facecolors="none", edgecolors=style.TRAINING_SITE,
                       linewidths=2.4, zorder=6.45)
            drawn["training"] = int(sel.size)
    return drawn


def _draw_arcs(ax: Any, layers: Layers, flows: pd.DataFrame, radius_pt: np.ndarray) -> dict[str, Any]:
    """The flow arcs, one LineCollection per class, smallest on top; an arrowhead at each arc's receiving end, just
    outside the receiving site's marker (``radius_pt``: its radius per flow, points)."""
    from matplotlib.collections import LineCollection

    gbps = flows["gbps"].to_numpy(dtype=float)
    widths = flow_widths(gbps)
    classes: dict[str, tuple[int, float, int]] = {}
    arcs = 0
    for cls in class_order(flows["traffic_class"]):
        rows = np.flatnonzero((flows["traffic_class"].astype(str) == cls).to_numpy())
        rows = rows[np.argsort(-gbps[rows], kind="stable")]
        segs = [p for i in rows for p in layers.flow_parts[i]]
        seg_w = [widths[i] for i in rows for _ in layers.flow_parts[i]]
        color = style.WORKLOAD_CLASS_COLORS.get(cls, style.NO_VALUE)
        if segs:
            ax.add_collection(LineCollection(segs, colors=style.CASING, linewidths=np.asarray(seg_w) + 1.6,
                                             alpha=0.7, zorder=5.75, capstyle="round"))
            ax.add_collection(LineCollection(segs, colors=color, linewidths=seg_w, alpha=0.9, zorder=5.8,
                                             capstyle="round"))
        for i in rows:
            parts = layers.flow_parts[i]
            if parts and len(parts[-1]) >= 2:
                end = parts[-1]
                back = end[max(0, len(end) - 1 - max(2, len(end) // 5))]
                ax.annotate("", xy=end[-1], xytext=back, zorder=6.5, annotation_clip=False,
                            arrowprops={"arrowstyle": "-|>", "color": color, "lw": 0.0,
                                        "mutation_scale": 9.0 + 2.0 * widths[i], "shrinkA": 0.0,
                                        "shrinkB": float(radius_pt[i]) + 1.5})
        shown = sum(1 for i in rows if layers.flow_parts[i])
        arcs += shown
        classes[cls] = (len(rows), float(gbps[rows].sum()), shown)
    return {"arcs": arcs, "classes": classes, "widest_gbps": float(gbps.max()) if gbps.size else 0.0}


def workload_handles(drawn: dict[str, Any]) -> list[Any]:
    """Legend entries of the data-gravity layer: one per traffic class (its flows and total Gbps, and how many of its
    flows are in view when not all are), the arc width, the training-site ring and the dataset-home squares."""
    from matplotlib.lines import Line2D

    handles: list[Any] = []
    for cls, (n, total, shown) in drawn.get("classes", {}).items():
        count = f"{n} flow{'s' if n != 1 else ''}" if shown == n else f"{shown} of {n} flows in view"
        handles.append(Line2D([], [], color=style.WORKLOAD_CLASS_COLORS.get(cls, style.NO_VALUE), lw=3.2,
                              label=f"{cls}: {style.format_gbps(total)} ({count})"))
    if drawn.get("classes"):
        handles.append(Line2D([], [], color="#52606d", lw=FLOW_WIDTH_PT[1],
                              label=f"Flow width ∝ √Gbps (widest {style.format_gbps(drawn['widest_gbps'])})"))
    if drawn.get("training"):
        handles.append(Line2D([], [], ls="none", marker="o", markersize=12, markerfacecolor="none",
                              markeredgecolor=style.TRAINING_SITE, markeredgewidth=2.4,
                              label="Training job site (labelled with job GPUs)"))
    if drawn.get("homes"):
        handles.append(Line2D([], [], ls="none", marker="s", markersize=13, markerfacecolor="none",
                              markeredgecolor=style.DATASET_HOME, markeredgewidth=1.9, label="Dataset home"))
    if drawn.get("new_homes"):
        handles.append(Line2D([], [], ls="--", lw=1.2, marker="s", markersize=13, markerfacecolor="none",
                              color=style.DATASET_HOME, markeredgecolor=style.DATASET_HOME, markeredgewidth=1.9,
                              label="New dataset replica (placed)"))
    return handles
