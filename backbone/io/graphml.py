"""Topology Zoo GraphML importer: a thin parser over :mod:`backbone.io.graph_records`.

Topology Zoo (Knight et al., IEEE JSAC 2011) ships operator topologies as GraphML: nodes carry
``label``, ``Latitude``, ``Longitude`` and ``Country`` (a country *name*), edges carry
``LinkSpeed`` / ``LinkSpeedUnits`` / ``LinkSpeedRaw`` (bits per second) where the source said.
:func:`load_graphml` turns one file into a validated :class:`~backbone.model.Network`:

* **sites**: one per GraphML node; id = the GraphML node id, name = ``label``; region by
  :func:`region_from_lonlat`; country = ISO 3166-1 alpha-2 code of ``Country``
  (:data:`COUNTRY_CODES`; blank when unknown); kind ``pop``. (The region and country rules live in
  :mod:`backbone.io.graph_records`, shared with the node-link importer, and are re-exported here.)
* **nodes without coordinates**: by default a :class:`~backbone.errors.ValidationError` naming the
  file and every such node. With ``drop_uncoordinated=True`` those nodes are dropped together
  with their edges (Topology Zoo's uncoordinated nodes are mostly ``hyperedge`` helpers and
  customer stubs); the dropped ids are recorded in ``meta["import"]["dropped_nodes"]``.
* **links**: one per GraphML edge, parallel edges included (ids ``a-b``, ``a-b~1``, ...); in a
  directed file the arcs ``u->v`` and ``v->u`` make one full-duplex link with the smaller speed;
  capacity = ``LinkSpeedRaw`` / 1e9, else ``LinkSpeed`` x ``LinkSpeedUnits`` (K/M/G/T), else
  :data:`DEFAULT_CAPACITY_GBPS`; kind ``terrestrial``; length and latency derived by the model
  (geodesic x route factor). Self-loops carry no traffic and are dropped (logged).
* **demands**: none.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from backbone.errors import Problem, ValidationError
from backbone.io.graph_records import (
    COUNTRY_CODES,
    DEFAULT_CAPACITY_GBPS,
    GRAPHML,
    SPEED_UNITS_GBPS,
    coordinate_problems,
    country_code,
    graph_network,
    link_records,
    node_coordinates,
    region_from_lonlat,
    site_records,
)
from backbone.model import Network

logger = logging.getLogger(__name__)

__all__ = ["COUNTRY_CODES", "DEFAULT_CAPACITY_GBPS", "SPEED_UNITS_GBPS", "country_code", "load_graphml",
           "region_from_lonlat"]


def load_graphml(path: str | Path, drop_uncoordinated: bool = False,
                 default_capacity_gbps: float = DEFAULT_CAPACITY_GBPS) -> Network:
    """Load a Topology Zoo GraphML file as a validated network.

    Parameters
    ----------
    path
        A ``.graphml`` file.
    drop_uncoordinated
        Drop nodes lacking ``Latitude``/``Longitude`` (and their edges) instead of failing.
    default_capacity_gbps
        Capacity of links whose speed the file does not state.

    Returns
    -------
    Network
        Sites and links as described in the module docstring; ``meta`` records the source
        file, the network's Topology Zoo name, how many capacities were defaulted and the
        dropped nodes.

    Raises
    ------
    ValidationError
        When the file is not readable GraphML, when nodes lack coordinates (each named, unless
        ``drop_uncoordinated``), or when the result breaks a model rule.

    Example
    -------
    >>> net = load_graphml("Abilene.graphml")  # doctest: +SKIP
    >>> net.summary()["sites"]  # doctest: +SKIP
    11
    """
    import networkx as nx

    p = Path(path)
    file = str(p)
    try:
        graph = nx.read_graphml(p)
    except (nx.NetworkXError, OSError, ValueError, KeyError) as exc:
        raise ValidationError(Problem(f"not readable GraphML: {exc}", file=file)) from None
    except Exception as exc:  # xml.etree.ElementTree.ParseError and friends
        position = getattr(exc, "position", None)  # (line, column) of an XML syntax error
        line = f"line {position[0]}" if isinstance(position, tuple) and position else ""
        hint = " (the file looks truncated)" if "no element found" in str(exc) else ""
        raise ValidationError(Problem(f"not readable GraphML{hint}: {type(exc).__name__}: {exc}", file=file,
                                      record=line)) from None

    nodes = [(str(n), d) for n, d in graph.nodes(data=True)]
    xy = node_coordinates([d for _, d in nodes], GRAPHML)
    lacking = ~np.isfinite(xy).all(axis=1)
    if lacking.any() and not drop_uncoordinated:
        raise ValidationError(coordinate_problems(
            [n for n, _ in nodes], xy, file, check_range=False,
            missing=lambda j: (f"node {nodes[j][1].get('label', '')!r} has no Latitude/Longitude (backbone convert "
                               "--drop-uncoordinated, or drop_uncoordinated=True, drops such nodes and their edges)")))
    gone = {n for (n, _), out in zip(nodes, lacking.tolist(), strict=True) if out}
    kept = [d for (n, d), out in zip(nodes, lacking.tolist(), strict=True) if not out]
    ids = [n for n, _ in nodes if n not in gone]
    lon, lat = xy[~lacking, 0], xy[~lacking, 1]
    regions = region_from_lonlat(lon, lat) if ids else np.array([], dtype=object)
    sites = site_records(kept, ids, lon, lat, regions, GRAPHML)
    edges = graph.edges(keys=True, data=True) if graph.is_multigraph() else (
        (u, v, 0, d) for u, v, d in graph.edges(data=True))
    links, counts = link_records(((str(u), str(v), str(key), d) for u, v, key, d in edges
                                  if str(u) not in gone and str(v) not in gone),
                                 GRAPHML, graph.is_directed(), default_capacity_gbps, file=file)
    if gone:
        logger.info("%s: dropped %d node(s) without coordinates", file, len(gone))
    gattrs = graph.graph
    meta = {
        "description": f"Topology Zoo network {gattrs.get('Network') or gattrs.get('label') or p.stem}",
        "sources": [{"file": p.name, "format": "graphml", "dataset": "Internet Topology Zoo"}],
        "import": {"default_capacity_gbps": default_capacity_gbps,
                   "links_with_default_capacity": counts["links_with_default_capacity"],
                   "self_loops_dropped": counts["self_loops_dropped"], "dropped_nodes": sorted(gone)},
    }
    return graph_network(sites, links, name=p.stem, meta=meta, file=file)
