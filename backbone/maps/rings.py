"""The GPU change rings of static maps: GPUs added at a site (a solid orange ring) and GPUs removed (a diff's losses:
a dashed blue ring), each scaled to the largest change of either sign, with legend entries in GPUs."""

from __future__ import annotations

from typing import Any

import numpy as np

from backbone.maps import style
from backbone.maps.layers import Layers
from backbone.maps.values import MapValues
from backbone.model import Network

__all__ = ["GPU_RINGS", "draw_gpu_rings", "gpu_ring_handles", "gpu_ring_values"]


GPU_RINGS: tuple[tuple[str, str, str, str], ...] = (("added", "gpus_added", "ADDED", "-"),
                                                   ("removed", "gpus_removed", "REMOVED", "--"))
"""The GPU change rings: (artist name, ``site_values`` key, :mod:`style` colour name, line style). Added GPUs a solid
orange ring, removed GPUs (a diff's losses) a dashed blue one, both scaled to the largest change of either sign."""


def gpu_ring_values(net: Network, values: MapValues) -> dict[str, np.ndarray]:
    """Per ring kind present (``added``, ``removed``): GPUs per site (aligned to ``net.sites``, NaN when none)."""
    out = {}
    for name, key, _color, _ls in GPU_RINGS:
        given = values.site_values.get(key)
        if given is not None and len(given):
            out[name] = given.reindex(net.sites.index).to_numpy(dtype=float)
    return out


def draw_gpu_rings(ax: Any, net: Network, layers: Layers, values: MapValues, sizes: np.ndarray) -> dict[str, Any]:
    """Draw the rings of the sites whose GPUs changed round their markers (``sizes``: marker areas, points^2);
    returns the artists by ring kind and ``<kind>_max``, the largest change of that kind (for the legend)."""
    rings = gpu_ring_values(net, values)
    tops = [float(np.nanmax(v[np.isfinite(v) & (v > 0)])) for v in rings.values() if (np.isfinite(v) & (v > 0)).any()]
    artists: dict[str, Any] = {}
    xy = layers.site_xy
    for name, _key, color, ls in GPU_RINGS:
        a = rings.get(name)
        if a is None:
            continue
        sel = np.flatnonzero(np.isfinite(a) & (a > 0) & layers.site_visible)
        if sel.size:
            ring = sizes[sel] + 60.0 + 700.0 * a[sel] / max(tops)
            artists[name] = ax.scatter(xy[sel, 0], xy[sel, 1], s=ring, facecolors="none",
                                       edgecolors=getattr(style, color), linewidths=1.8, linestyles=ls,
                                       zorder=6.3)
            artists[f"{name}_max"] = float(a[sel].max())
    return artists


def gpu_ring_handles(site_artists: dict[str, Any]) -> list[Any]:
    """Legend entries of the rings drawn (:func:`draw_gpu_rings`), each with the largest change in GPUs."""
    from matplotlib.lines import Line2D

    handles = []
    for name, _key, color, ls in GPU_RINGS:
        if name in site_artists:
            sign = "+" if name == "added" else "−"
            handles.append(Line2D([], [], ls=ls, lw=1.8, color=getattr(style, color), marker="o", markersize=11,
                                  markerfacecolor="none", markeredgecolor=getattr(style, color),
                                  markeredgewidth=1.8,
                                  label=f"GPUs {name} (ring; largest {sign}{site_artists[f'{name}_max']:,.0f} GPUs)"))
    return handles
