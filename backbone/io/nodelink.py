"""networkx node-link JSON importer (TopoHub, Teal) and Teal's traffic-matrix CSV loader.

A thin parser over :mod:`backbone.io.graph_records`, the core it shares with the GraphML importer: this
module reads the JSON document into node and edge attribute mappings; the core reads them (its
:data:`~backbone.io.graph_records.NODE_LINK` attributes) into sites, links and demands.

The node-link form is ``{"directed", "multigraph", "graph", "nodes": [...], "links" | "edges": [...]}``
(networkx writes ``links`` before 3.4 and may write ``edges`` after; both are read).
:func:`load_node_link` maps it onto the model:

**Sites** (one per node): id = ``str(node["id"])``; name = ``name`` or ``label`` (else the id);
coordinates from ``pos`` / ``coordinates`` / ``coords`` (``[lon, lat]``, as TopoHub writes them),
else ``lon``/``lat``, ``longitude``/``latitude``, ``Longitude``/``Latitude`` or ``x``/``y``;
region = the node's ``region`` when it is a planning region, else
:func:`backbone.io.graph_records.region_from_lonlat`; country = the node's ``country`` as ISO alpha-2.
TopoHub's node ``type`` sets the kind (``City`` -> ``pop``, ``Seacable Landing Point`` and
``Seacable Waypoint`` -> ``landing``: both sit on a cable) and is kept verbatim in the extra
column ``node_type``.

**Links** (one per edge): ``capacity_gbps``, else ``capacity`` x ``capacity_unit_gbps``, else
``LinkSpeedRaw`` / 1e9, else ``default_capacity_gbps`` (TopoHub files carry no capacities).
Edges with ``type`` ``seacable``/``submarine`` (or ``kind: submarine``) are submarine links.
``length_km`` is used when given; TopoHub's ``dist`` (great-circle km between the two nodes) is
used as the length of submarine edges (their waypoint nodes already trace the cable, so no
route factor applies); terrestrial lengths are derived by the model (geodesic x route factor).
``latency_ms`` is used when given, else derived from the length.
In a *directed* file (Teal) the two arcs ``u->v`` and ``v->u`` become one full-duplex link whose
per-direction capacity is the smaller of the two (the conservative reading; the number of
asymmetric pairs is recorded in ``meta["import"]``). Undirected parallel edges become separate
links (ids ``a-b``, ``a-b~1``, ...). Self-loops are dropped (logged).

With ``collapse_waypoints=True`` TopoHub's degree-2 ``Seacable Waypoint`` nodes are folded into
the submarine links they draw (:func:`collapse_waypoint_chains`): cables become links with
waypoint geometry between landing points, which is how the model represents them.

**Demands**: TopoHub's ``graph["demands"]`` (``{src: {dst: value}}``) as ``src -> dst`` demands of
``value x demand_unit_gbps`` Gbps (TopoHub inherits SNDlib's abstract demand units).

**Missing or non-geographic coordinates.** The model is geographic, so by default a node
without coordinates, or with coordinates outside lon [-180, 180] / lat [-90, 90] (several
SNDlib networks use planar drawing coordinates), is a :class:`~backbone.errors.ValidationError`
naming the file and node. With ``allow_missing_coordinates=True`` the whole network is placed
deterministically instead (never mixing real and made-up positions):

* when every node has planar ``(x, y)``: the drawing is scaled uniformly (aspect kept) into the
  box lon, lat in [-10, 10] around (0, 0);
* otherwise: nodes sit on a circle of radius 10 degrees around (0, 0), in file order, the first
  at (10, 0), counter-clockwise;

every site gets region ``default_region``, and every link an explicit ``latency_ms``: the
edge's ``latency_ms``/``delay_ms``/``weight`` (ms), else the fibre latency of its ``dist`` when
given, else 1 ms. Lengths of such networks come from ``dist`` when given, else from the made-up
geometry (not physical). ``meta["coordinates"]`` says which layout was used
(``"geographic"``, ``"scaled-planar"`` or ``"circle"``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from backbone import geo
from backbone.errors import Problem, ValidationError
from backbone.io.graph_records import (
    DEFAULT_CAPACITY_GBPS,
    NODE_LINK,
    NODE_TYPE_KINDS,
    SUBMARINE_EDGE_TYPES,
    SYNTHETIC_LATENCY_MS,
    SYNTHETIC_RADIUS_DEG,
    coordinate_problems,
    graph_network,
    link_records,
    node_coordinates,
    number,
    region_from_lonlat,
    site_records,
    synthetic_layout,
)
from backbone.io.traffic_matrix import load_traffic_matrix_csv
from backbone.model import Network
from backbone.schema import REGIONS

__all__ = ["NODE_TYPE_KINDS", "SUBMARINE_EDGE_TYPES", "SYNTHETIC_LATENCY_MS", "SYNTHETIC_RADIUS_DEG",
           "collapse_waypoint_chains", "load_node_link", "load_traffic_matrix_csv", "synthetic_layout"]


def _read_json(p: Path) -> dict[str, Any]:
    file = str(p)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = f"line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ValidationError(Problem(f"not valid JSON: {exc}", file=file, record=line)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise ValidationError(Problem("not a node-link document: no 'nodes' list", file=file, field="nodes"))
    key = "links" if "links" in doc else "edges"
    if not isinstance(doc.get(key), list):
        raise ValidationError(Problem("not a node-link document: no 'links' or 'edges' list", file=file,
                                      field="links"))
    return doc


def load_node_link(path: str | Path, allow_missing_coordinates: bool = False,
                   default_capacity_gbps: float = DEFAULT_CAPACITY_GBPS, capacity_unit_gbps: float = 1.0,
                   demand_unit_gbps: float = 1.0, default_region: str = "NA",
                   collapse_waypoints: bool = False) -> Network:
    """Load a networkx node-link JSON file (TopoHub, Teal) as a validated network.

    Parameters
    ----------
    path
        The ``.json`` file.
    allow_missing_coordinates
        Place networks without (geographic) coordinates by the documented layout rule instead
        of failing (see the module docstring).
    default_capacity_gbps
        Capacity of links whose edge states none.
    capacity_unit_gbps
        Gbps per unit of a bare ``capacity`` attribute (Teal's capacities are unit-less; 1.0
        reads them as Gbps).
    demand_unit_gbps
        Gbps per unit of the file's demand values.
    default_region
        Region of every site when positions are made up.
    collapse_waypoints
        Fold chains of TopoHub ``Seacable Waypoint`` nodes into submarine links with waypoint
        geometry (see :func:`collapse_waypoint_chains`); by default every node is a site.

    Returns
    -------
    Network
        ``meta["import"]`` records what was defaulted or merged; ``meta["coordinates"]`` the layout.

    Raises
    ------
    ValidationError
        When the file is not node-link JSON, when nodes lack geographic coordinates (each
        named, unless ``allow_missing_coordinates``), or when a record breaks a model rule.

    Example
    -------
    >>> net = load_node_link("topohub/backbone/world.json")  # doctest: +SKIP
    >>> net.summary()["links_by_kind"]  # doctest: +SKIP
    {'submarine': 2753, 'terrestrial': 2436}
    """
    if default_region not in REGIONS:
        raise ValidationError(f"default_region must be one of {', '.join(REGIONS)}, got {default_region!r}")
    p = Path(path)
    file = str(p)
    doc = _read_json(p)
    directed = bool(doc.get("directed", False))
    raw_nodes = doc["nodes"]
    raw_edges = doc["links"] if "links" in doc else doc["edges"]
    problems: list[Problem] = []
    for i, d in enumerate(raw_nodes):
        if not isinstance(d, dict) or d.get("id") is None:
            problems.append(Problem("node without an 'id'", file=file, table="sites", record=f"node {i}", field="id"))
    for i, e in enumerate(raw_edges):
        if not isinstance(e, dict) or e.get("source") is None or e.get("target") is None:
            problems.append(Problem("edge without 'source' and 'target'", file=file, table="links",
                                    record=f"edge {i}", field="source"))
    if problems:
        raise ValidationError(problems)

    ids = [str(d["id"]) for d in raw_nodes]
    xy = node_coordinates(raw_nodes, NODE_LINK)
    has_xy = np.isfinite(xy).all(axis=1)
    geographic = has_xy & (np.abs(xy[:, 0]) <= 180) & (np.abs(xy[:, 1]) <= 90)
    if not geographic.all() and not allow_missing_coordinates:
        hint = (" (backbone convert --allow-missing-coordinates, or allow_missing_coordinates=True, places the "
                "network on a made-up layout)")
        raise ValidationError(coordinate_problems(ids, xy, file, missing=lambda j: "node has no coordinates" + hint,
                                                  hint=hint))
    if geographic.all():
        layout = "geographic"
        lon, lat = xy[:, 0], xy[:, 1]
        regions = region_from_lonlat(lon, lat) if len(ids) else np.array([], dtype=object)
    else:
        layout = "scaled-planar" if has_xy.all() else "circle"
        lon, lat = synthetic_layout(xy if layout == "scaled-planar" else None, len(ids))
        regions = np.full(len(ids), default_region, dtype=object)
    sites = site_records(raw_nodes, ids, lon, lat, regions, NODE_LINK, geographic=layout == "geographic")
    edges = ((str(e["source"]), str(e["target"]), str(e.get("key", "")), e) for e in raw_edges)
    links, counts = link_records(edges, NODE_LINK, directed, default_capacity_gbps, capacity_unit_gbps,
                                 synthetic=layout != "geographic", file=file)
    info: dict[str, Any] = dict(counts)
    if collapse_waypoints:
        sites, links, folded = collapse_waypoint_chains(sites, links)
        info.update(folded)
    graph_attrs = doc.get("graph")
    graph: dict[str, Any] = graph_attrs if isinstance(graph_attrs, dict) else {}
    name = str(graph.get("name") or p.stem)
    meta = {
        "description": f"node-link network {name}",
        "sources": [{"file": p.name, "format": "node-link"}],
        "coordinates": layout,
        "import": {"default_capacity_gbps": default_capacity_gbps, "capacity_unit_gbps": capacity_unit_gbps,
                   "demand_unit_gbps": demand_unit_gbps, "directed": directed, **info},
    }
    table = graph.get("demands")
    return graph_network(sites, links, name=name, meta=meta, file=file,
                         demands=table if isinstance(table, Mapping) else {}, demand_unit_gbps=demand_unit_gbps)


def collapse_waypoint_chains(sites: list[dict[str, Any]], links: list[dict[str, Any]]
                             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """Fold chains of cable waypoint nodes into links with ``waypoints`` geometry.

    A site whose ``node_type`` is ``Seacable Waypoint`` and that has exactly two links is not a
    place traffic can enter: it only draws the cable. Every maximal chain ``u - w1 - ... - wk - x``
    through such nodes becomes one link ``u -> x`` with waypoints ``w1; ...; wk`` (in order),
    kind ``submarine`` if any piece is, the smallest capacity of its pieces, and the sum of the
    pieces' lengths (latencies) when every piece states one (else the model derives them from the
    waypoint polyline). Waypoint nodes with one or three or more links (branching units, stubs)
    stay as sites. Chains that return to where they started, and closed rings of waypoints,
    carry no traffic and are dropped.

    Links that are not part of a chain keep their ids; a merged chain is named ``u-x`` (with a
    ``~n`` suffix when that id is taken).

    Returns
    -------
    (sites, links, counts)
        The remaining site records, the link records and counts of folded nodes, merged chains,
        dropped loops and links of closed rings.
    """
    incident: dict[str, list[int]] = {}
    for i, rec in enumerate(links):
        incident.setdefault(rec["site_a"], []).append(i)
        incident.setdefault(rec["site_b"], []).append(i)
    fold = {s["id"] for s in sites if str(s.get("node_type", "")).lower() == "seacable waypoint"
            and len(incident.get(s["id"], ())) == 2}
    where = {s["id"]: (float(s["lon"]), float(s["lat"])) for s in sites}
    used = [False] * len(links)
    out: list[dict[str, Any]] = []
    chains = loops = 0
    for i, rec in enumerate(links):
        if used[i]:
            continue
        a, b = rec["site_a"], rec["site_b"]
        if a in fold and b in fold:
            continue  # inside a chain: reached from one of its ends (or part of a closed ring)
        used[i] = True
        if a not in fold and b not in fold:
            out.append(rec)
            continue
        start, current, pieces, points = (a, b, [rec], []) if b in fold else (b, a, [rec], [])
        while current in fold:
            points.append(where[current])
            j = next((k for k in incident[current] if not used[k]), None)
            if j is None:  # both links of this waypoint already walked: a chain back to itself
                break
            used[j] = True
            pieces.append(links[j])
            current = links[j]["site_b"] if links[j]["site_a"] == current else links[j]["site_a"]
        if current == start or current in fold:
            loops += 1
            continue
        chains += 1
        out.append(_merge_pieces(start, current, pieces, points))
    taken = {rec["id"] for rec in out if "id" in rec}
    for rec in out:
        if "id" not in rec:
            base = f"{rec['site_a']}-{rec['site_b']}"
            n = 0
            while (rec_id := base if n == 0 else f"{base}~{n}") in taken:
                n += 1
            rec["id"] = rec_id
            taken.add(rec_id)
    kept = [s for s in sites if s["id"] not in fold]
    return kept, out, {"waypoint_nodes_folded": len(fold), "cable_chains_merged": chains,
                       "waypoint_loops_dropped": loops, "ring_links_dropped": used.count(False)}


def _merge_pieces(start: str, end: str, pieces: list[dict[str, Any]],
                  points: list[tuple[float, float]]) -> dict[str, Any]:
    kind = "submarine" if any(p["kind"] == "submarine" for p in pieces) else "terrestrial"
    caps = [number(p["capacity_gbps"]) for p in pieces]
    rec: dict[str, Any] = {
        "name": next((p["name"] for p in pieces if p.get("name")), ""),
        "site_a": start, "site_b": end, "kind": kind,
        "cable_system": next((p["cable_system"] for p in pieces if p.get("cable_system")), ""),
        "capacity_gbps": min(caps) if all(np.isfinite(caps)) else pieces[0]["capacity_gbps"],
        "waypoints": geo.format_waypoints(points),
    }
    for column in ("length_km", "latency_ms"):
        values = [number(p.get(column)) for p in pieces]
        if all(np.isfinite(values)):
            rec[column] = round(float(sum(values)), 4)
    return rec
