"""The map of a diff: the backbone after, coloured by the change of each link's capacity.

Links upgraded or cut back are coloured on a diverging scale of ``delta_capacity_gbps`` (red more, blue less),
links added are highlighted as new routes (the built-route glow) and links removed are drawn dashed (the
failed-link style) with their capacity as a negative change. Site markers are sized by the GPUs installed after;
sites that gained GPUs get a solid orange ring and sites that lost GPUs a dashed blue ring, each scaled to the
change (the plans' placement, else the scenarios' installed GPUs), with the largest of each sign in the legend.
Drawn by :func:`backbone.maps.render_map_bytes` (PNG, SVG, PDF or the offline HTML page).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from backbone.compare.result import DiffResult
from backbone.model import Network

__all__ = ["diff_map_values", "render_diff_map", "save_diff_map"]

logger = logging.getLogger(__name__)


def _union_network(before: Network, after: Network) -> Network:
    """``after`` with ``before``'s removed links (and the sites they need) added back, so they can be drawn."""
    removed = before.links.index.difference(after.links.index, sort=False)
    if not len(removed):
        return after
    links = before.links.loc[removed]
    ends = pd.Index(links["site_a"]).union(pd.Index(links["site_b"]))
    missing = ends.difference(after.sites.index, sort=False)
    sites = pd.concat([pd.DataFrame(after.sites), pd.DataFrame(before.sites.loc[missing])])
    return after.copy_with(sites=sites, links=pd.concat([pd.DataFrame(after.links), pd.DataFrame(links)]))


def _gpu_delta(result: DiffResult, net: Network) -> pd.Series:
    placement = result.placement
    if len(placement):
        sites = placement[placement["level"] == "site"].set_index("id")["gpus_delta"]
    else:
        b = result.before.network.sites["gpus_installed"].astype(float)
        a = result.after.network.sites["gpus_installed"].astype(float)
        sites = a.sub(b, fill_value=0.0)
    return sites.reindex(net.sites.index).fillna(0.0)


def diff_map_values(result: DiffResult) -> tuple[Network, dict[str, Any]]:
    """The network to draw and its ``map`` object: ``link_values.delta_capacity_gbps``, ``built_candidates``
    (links added), ``failed_links`` (links removed) and ``site_values``: ``gpus_added`` and ``gpus_removed`` (each
    a positive number of GPUs, drawn as the solid and the dashed ring) and ``gpus_delta`` (the signed change).
    Markers are sized by the GPUs installed after (the drawn network's ``gpus_installed``)."""
    before, after = result.before.network, result.after.network
    net = _union_network(before, after)
    cap_b = before.links["capacity_gbps"].astype(float).reindex(net.links.index).fillna(0.0)
    cap_a = after.links["capacity_gbps"].astype(float).reindex(net.links.index).fillna(0.0)
    delta = cap_a - cap_b
    added = after.links.index.difference(before.links.index, sort=False)
    removed = before.links.index.difference(after.links.index, sort=False)
    gpus = _gpu_delta(result, net)
    doc = {"link_values": {"delta_capacity_gbps": {str(k): float(v) for k, v in delta.items()}},
           "site_values": {"gpus_added": {str(k): float(v) for k, v in gpus.clip(lower=0.0).items()},
                           "gpus_removed": {str(k): float(v) for k, v in (-gpus).clip(lower=0.0).items()},
                           "gpus_delta": {str(k): float(v) for k, v in gpus.items()}},
           "built_candidates": [str(k) for k in added], "failed_links": [str(k) for k in removed]}
    return net, doc


def render_diff_map(result: DiffResult, fmt: str = "png", size: str = "1600x900") -> bytes:
    """The diff map as ``fmt`` bytes (``png``, ``svg``, ``pdf`` or ``html``)."""
    from backbone.maps import render_map_bytes

    net, doc = diff_map_values(result)
    delta = pd.Series(doc["link_values"]["delta_capacity_gbps"], dtype=float)
    up, down = int((delta > 1e-9).sum()), int((delta < -1e-9).sum())
    gpus = pd.Series(doc["site_values"]["gpus_delta"], dtype=float)
    subtitle = (f"links: {up} more capacity ({len(doc['built_candidates'])} new), {down} less "
                f"({len(doc['failed_links'])} removed) · sites: {int((gpus > 0.5).sum())} gained GPUs, "
                f"{int((gpus < -0.5).sum())} lost GPUs · marker size: GPUs after")
    return render_map_bytes(net, fmt, {"map": doc}, color_by="delta_capacity_gbps", size=size,
                            title=f"What changed: {result.before.label} → {result.after.label}", subtitle=subtitle)


def save_diff_map(result: DiffResult, path: str | Path) -> Path:
    """Write the diff map to ``path``; its suffix (``.png``, ``.svg``, ``.pdf``, ``.html``) picks the format."""
    from backbone.maps import format_from, write_atomic

    fmt = format_from(path, None)
    return write_atomic(path, render_diff_map(result, fmt))
