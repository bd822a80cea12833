"""networkx node-link JSON importer (TopoHub, Teal) and Teal's traffic-matrix CSV loader.

The node-link form is ``{"directed", "multigraph", "graph", "nodes": [...], "links" | "edges": [...]}``
(networkx writes ``links`` before 3.4 and may write ``edges`` after; both are read).
:func:`load_node_link` maps it onto the model:

**Sites** (one per node): id = ``str(node["id"])``; name = ``name`` or ``label`` (else the id);
coordinates from ``pos`` / ``coordinates`` / ``coords`` (``[lon, lat]``, as TopoHub writes them),
else ``lon``/``lat``, ``longitude``/``latitude``, ``Longitude``/``Latitude`` or ``x``/``y``;
region = the node's ``region`` when it is a planning region, else
:func:`backbone.io.graphml.region_from_lonlat`; country = the node's ``country`` as ISO alpha-2.
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
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backbone import geo
from backbone.errors import Problem, ValidationError
from backbone.io.graphml import DEFAULT_CAPACITY_GBPS, country_code, region_from_lonlat
from backbone.io.traffic_matrix import demand_table, load_traffic_matrix_csv
from backbone.model import Network
from backbone.schema import LINK_KINDS, REGIONS, SITE_KINDS
from backbone.validate import build_network

logger = logging.getLogger(__name__)

__all__ = ["NODE_TYPE_KINDS", "SUBMARINE_EDGE_TYPES", "SYNTHETIC_LATENCY_MS", "SYNTHETIC_RADIUS_DEG",
           "collapse_waypoint_chains", "load_node_link", "load_traffic_matrix_csv", "synthetic_layout"]

SYNTHETIC_RADIUS_DEG = 10.0
"""Half-size of the box (or radius of the circle) used for made-up positions."""

SYNTHETIC_LATENCY_MS = 1.0
"""One-way latency of a link in a network without geography whose file gives no weight."""

NODE_TYPE_KINDS: dict[str, str] = {
    "city": "pop", "seacable landing point": "landing", "seacable waypoint": "landing",
    "landing": "landing", "datacenter": "datacenter", "data center": "datacenter", "pop": "pop",
}
"""TopoHub node ``type`` (lower case) -> site kind."""

SUBMARINE_EDGE_TYPES = frozenset({"seacable", "submarine", "sea cable", "subsea"})
"""Edge ``type`` values that mark a submarine link."""

_POS_KEYS = ("pos", "coordinates", "coords")
_LONLAT_KEYS = (("lon", "lat"), ("longitude", "latitude"), ("Longitude", "Latitude"), ("x", "y"))


def _num(v: Any) -> float:
    if isinstance(v, bool):
        return float("nan")
    try:
        x = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return x if np.isfinite(x) else float("nan")


def _node_xy(d: Mapping[str, Any]) -> tuple[float, float]:
    for k in _POS_KEYS:
        v = d.get(k)
        if isinstance(v, list | tuple) and len(v) == 2:
            return _num(v[0]), _num(v[1])
    for kx, ky in _LONLAT_KEYS:
        if kx in d and ky in d:
            return _num(d[kx]), _num(d[ky])
    return float("nan"), float("nan")


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
    xy = np.array([_node_xy(d) for d in raw_nodes], dtype=float).reshape(-1, 2)
    has_xy = np.isfinite(xy).all(axis=1)
    geographic = has_xy & (np.abs(xy[:, 0]) <= 180) & (np.abs(xy[:, 1]) <= 90)
    if not geographic.all() and not allow_missing_coordinates:
        hint = (" (backbone convert --allow-missing-coordinates, or allow_missing_coordinates=True, places the "
                "network on a made-up layout)")
        coordinate_problems: list[Problem] = []
        for j in np.flatnonzero(~geographic).tolist():
            if not has_xy[j]:
                coordinate_problems.append(Problem("node has no coordinates" + hint, file=file, table="sites",
                                                   record=ids[j], field="lon"))
                continue
            if not abs(xy[j, 0]) <= 180:
                coordinate_problems.append(Problem(f"longitude {xy[j, 0]:g} is outside [-180, 180]" + hint,
                                                   file=file, table="sites", record=ids[j], field="lon"))
            if not abs(xy[j, 1]) <= 90:
                coordinate_problems.append(Problem(f"latitude {xy[j, 1]:g} is outside [-90, 90]" + hint,
                                                   file=file, table="sites", record=ids[j], field="lat"))
        raise ValidationError(coordinate_problems)
    if geographic.all():
        layout = "geographic"
        lon, lat = xy[:, 0], xy[:, 1]
        regions = region_from_lonlat(lon, lat) if len(ids) else np.array([], dtype=object)
    else:
        layout = "scaled-planar" if has_xy.all() else "circle"
        lon, lat = synthetic_layout(xy if layout == "scaled-planar" else None, len(ids))
        regions = np.full(len(ids), default_region, dtype=object)
    sites = _site_records(raw_nodes, ids, lon, lat, regions, layout == "geographic")
    links, info = _link_records(raw_edges, directed, layout != "geographic", default_capacity_gbps,
                                capacity_unit_gbps)
    links = _with_ids(links)
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
    files = {"sites": file, "links": file, "demands": file}
    table = graph.get("demands")
    if not isinstance(table, Mapping) or not table:
        return build_network({"sites": sites, "links": links, "demands": []}, name=name, meta=meta, files=files)
    try:
        net = build_network({"sites": sites, "links": links}, name=name, meta=meta, files=files)
    except ValidationError:  # report every problem, the demands' included, as the validator words them
        build_network({"sites": sites, "links": links, "demands": _demand_records(graph, demand_unit_gbps)},
                      name=name, meta=meta, files=files)
        raise
    return net.copy_with(demands=demand_table(table, net, demand_unit_gbps, file))


def synthetic_layout(planar: np.ndarray | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Made-up (lon, lat) for a network without geography (see the module docstring).

    Parameters
    ----------
    planar
        (n, 2) planar drawing coordinates to scale into the box, or None for the circle.
    n
        Number of nodes.

    Returns
    -------
    (lon, lat)
        Arrays of degrees, inside [-10, 10] x [-10, 10].
    """
    r = SYNTHETIC_RADIUS_DEG
    if planar is not None and n:
        lo, hi = planar.min(axis=0), planar.max(axis=0)
        span = float(np.max(hi - lo)) or 1.0
        centred = (planar - (lo + hi) / 2.0) * (2.0 * r / span)
        return np.round(centred[:, 0], 6) + 0.0, np.round(centred[:, 1], 6) + 0.0  # + 0.0: no -0.0
    angle = 2.0 * np.pi * np.arange(n) / max(n, 1)
    return np.round(r * np.cos(angle), 6) + 0.0, np.round(r * np.sin(angle), 6) + 0.0


def _site_records(raw_nodes: list[dict[str, Any]], ids: list[str], lon: np.ndarray, lat: np.ndarray,
                  regions: np.ndarray, geographic: bool) -> list[dict[str, Any]]:
    has_type = any("type" in d for d in raw_nodes)
    sites = []
    for d, i, x, y, r in zip(raw_nodes, ids, lon.tolist(), lat.tolist(), regions.tolist(), strict=True):
        node_type = str(d.get("type") or "")
        kind = d.get("kind") if d.get("kind") in SITE_KINDS else NODE_TYPE_KINDS.get(node_type.lower(), "pop")
        region = d.get("region") if geographic and d.get("region") in REGIONS else r
        rec = {"id": i, "name": str(d.get("name") or d.get("label") or i), "lon": x, "lat": y, "region": region,
               "country": country_code(d.get("country") or d.get("Country")), "kind": kind}
        if has_type:
            rec["node_type"] = node_type
        sites.append(rec)
    return sites


def _edge_capacity(e: Mapping[str, Any], default: float, unit: float) -> tuple[float, bool]:
    for key, scale in (("capacity_gbps", 1.0), ("capacity", unit), ("LinkSpeedRaw", 1e-9)):
        if key in e and e[key] is not None:
            return float(e[key]) * scale if np.isfinite(_num(e[key])) else e[key], False
    return default, True


def _link_records(raw_edges: list[dict[str, Any]], directed: bool, synthetic: bool, default_capacity: float,
                  unit: float) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One record (without id) per undirected edge (or per pair of opposite arcs in a directed file)."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    order: list[tuple[str, str, str]] = []
    asymmetric = defaulted = self_loops = 0
    for e in raw_edges:
        a, b = str(e["source"]), str(e["target"])
        if a == b:
            self_loops += 1
            continue
        cap, was_default = _edge_capacity(e, default_capacity, unit)
        key = str(e.get("key", ""))
        if directed:
            pair = (min(a, b), max(a, b), key)
            if pair in merged:
                rec = merged[pair]
                if _num(rec["capacity_gbps"]) != _num(cap):
                    asymmetric += 1
                    rec["capacity_gbps"] = min(_num(rec["capacity_gbps"]), _num(cap))
                continue
        else:
            pair = (a, b, str(len(order)))
        defaulted += was_default
        merged[pair] = _link_record(e, a, b, cap, synthetic)
        order.append(pair)
    links = [merged[pair] for pair in order]
    if self_loops:
        logger.info("dropped %d self-loop edge(s)", self_loops)
    return links, {"links_with_default_capacity": defaulted, "asymmetric_capacity_pairs": asymmetric,
                   "self_loops_dropped": self_loops}


def _with_ids(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Link ids ``a-b``, then ``a-b~1``, ``a-b~2`` for parallel links, in record order."""
    seen: dict[str, int] = {}
    out = []
    for rec in records:
        base = f"{rec['site_a']}-{rec['site_b']}"
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append({"id": base if n == 0 else f"{base}~{n}", **rec})
    return out


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
    caps = [_num(p["capacity_gbps"]) for p in pieces]
    rec: dict[str, Any] = {
        "name": next((p["name"] for p in pieces if p.get("name")), ""),
        "site_a": start, "site_b": end, "kind": kind,
        "cable_system": next((p["cable_system"] for p in pieces if p.get("cable_system")), ""),
        "capacity_gbps": min(caps) if all(np.isfinite(caps)) else pieces[0]["capacity_gbps"],
        "waypoints": geo.format_waypoints(points),
    }
    for column in ("length_km", "latency_ms"):
        values = [_num(p.get(column)) for p in pieces]
        if all(np.isfinite(values)):
            rec[column] = round(float(sum(values)), 4)
    return rec


def _link_record(e: Mapping[str, Any], a: str, b: str, cap: Any, synthetic: bool) -> dict[str, Any]:
    etype = str(e.get("type") or "").strip().lower()
    kind = e.get("kind") if e.get("kind") in LINK_KINDS else (
        "submarine" if etype in SUBMARINE_EDGE_TYPES else "terrestrial")
    rec: dict[str, Any] = {"name": str(e.get("name") or e.get("label") or ""), "site_a": a, "site_b": b,
                           "kind": kind, "cable_system": str(e.get("cable_system") or ""), "capacity_gbps": cap}
    dist = _num(e.get("dist"))
    if e.get("length_km") is not None:
        rec["length_km"] = e["length_km"]
    elif np.isfinite(dist) and (kind == "submarine" or synthetic):
        rec["length_km"] = dist
    if e.get("latency_ms") is not None:
        rec["latency_ms"] = e["latency_ms"]
    elif synthetic:
        weight = next((_num(e[k]) for k in ("delay_ms", "weight") if k in e), float("nan"))
        if np.isfinite(weight):
            rec["latency_ms"] = weight
        elif np.isfinite(dist):
            rec["latency_ms"] = round(float(geo.latency_ms(dist)), 4)
        else:
            rec["latency_ms"] = SYNTHETIC_LATENCY_MS
    return rec


def _demand_records(graph: Mapping[str, Any], unit: float) -> pd.DataFrame | list[dict[str, Any]]:
    """``graph["demands"]`` as a demands frame, built per source row (vectorised: a world-scale
    table has millions of entries). Values that are not finite numbers are kept as given, so
    validation reports them with their record."""
    table = graph.get("demands")
    if not isinstance(table, Mapping):
        return []
    srcs: list[np.ndarray] = []
    dsts: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for src, row in table.items():
        if not isinstance(row, Mapping) or not row:
            continue
        dst = np.asarray([str(d) for d in row], dtype=object)
        srcs.append(np.full(len(dst), str(src), dtype=object))
        dsts.append(dst)
        values.append(np.asarray(list(row.values()), dtype=object))
    if not srcs:
        return []
    src_all, dst_all, raw = np.concatenate(srcs), np.concatenate(dsts), np.concatenate(values)
    keep = src_all != dst_all
    src_all, dst_all, raw = src_all[keep], dst_all[keep], raw[keep]
    if len(raw) == 0:
        return []
    num = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(float)
    good = np.isfinite(num) & np.fromiter((not isinstance(v, bool) for v in raw), bool, len(raw))
    gbps: np.ndarray = num * unit
    if not good.all():
        gbps = gbps.astype(object)
        gbps[~good] = raw[~good]
    ids = pd.Series(src_all, dtype=object) + "-" + pd.Series(dst_all, dtype=object)
    return pd.DataFrame({"id": ids.to_numpy(), "src": src_all, "dst": dst_all, "demand_gbps": gbps})
