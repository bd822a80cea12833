"""The shared graph-to-records core (backbone.io.graph_records) under both importers.

The same small graph written as Topology Zoo GraphML and as networkx node-link JSON must give identical
tables: both parsers hand node and edge mappings to one core. The core's own rules (directed arcs, parallel
links, self-loops, the two dialects' reading of an unstated arc capacity) are pinned on plain mappings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from backbone.io.graph_records import GRAPHML, NODE_LINK, coordinate_problems, link_records, node_coordinates
from backbone.io.graphml import load_graphml
from backbone.io.nodelink import load_node_link

NODES: list[tuple[str, dict[str, Any]]] = [
    ("ny", {"label": "New York", "Longitude": -74.01, "Latitude": 40.71, "Country": "United States"}),
    ("chi", {"label": "Chicago", "Longitude": -87.63, "Latitude": 41.88, "Country": "United States"}),
    ("lon", {"label": "London", "Longitude": -0.13, "Latitude": 51.51, "Country": "United Kingdom"}),
    ("mex", {"label": "Mexico City", "Longitude": -99.13, "Latitude": 19.43, "Country": "MX"}),
]
EDGES: list[tuple[str, str, dict[str, Any]]] = [
    ("ny", "chi", {"LinkSpeedRaw": 400e9}),
    ("ny", "chi", {}),  # a parallel edge without a speed: the default capacity
    ("ny", "lon", {"LinkSpeedRaw": 1e12}),
    ("chi", "mex", {"LinkSpeedRaw": 10e9}),
    ("mex", "mex", {"LinkSpeedRaw": 10e9}),  # a self-loop: dropped
]


def write_both(tmp_path: Path, directed: bool) -> tuple[Path, Path]:
    """The graph of NODES / EDGES as GraphML (written by networkx) and as node-link JSON (written by hand)."""
    graph: nx.MultiGraph = nx.MultiDiGraph() if directed else nx.MultiGraph()
    graph.add_nodes_from(NODES)
    edges = list(EDGES)
    if directed:  # the opposite arcs, one slower: the link carries the smaller capacity
        edges += [("chi", "ny", {"LinkSpeedRaw": 100e9}), ("lon", "ny", {"LinkSpeedRaw": 1e12})]
    keys: dict[tuple[str, str], int] = {}
    links = []
    for u, v, d in edges:
        key = keys[u, v] = keys.get((u, v), -1) + 1  # opposite arcs with the same key make one link
        graph.add_edge(u, v, key=key, **d)
        links.append({"source": u, "target": v, "key": key, **d})
    graphml = tmp_path / "g.graphml"
    nx.write_graphml(graph, graphml)
    doc = {"directed": directed, "multigraph": True, "graph": {"name": "g"},
           "nodes": [{"id": n, **d} for n, d in NODES], "links": links}
    node_link = tmp_path / "g.json"
    node_link.write_text(json.dumps(doc), encoding="utf-8")
    return graphml, node_link


@pytest.mark.parametrize("directed", [False, True])
def test_graphml_and_node_link_give_identical_tables(tmp_path: Path, directed: bool) -> None:
    graphml, node_link = write_both(tmp_path, directed)
    a, b = load_graphml(graphml), load_node_link(node_link)
    for table in ("sites", "links", "demands"):
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table), check_exact=True)
    links = a.links
    assert list(links.index) == ["ny-chi", "ny-chi~1", "ny-lon", "chi-mex"]
    expected = [100.0 if directed else 400.0, 100.0, 1000.0, 10.0]
    assert links["capacity_gbps"].tolist() == expected
    assert a.sites.loc["mex", "country"] == "MX" and a.sites.loc["lon", "region"] == "EMEA"
    assert a.sites.loc["mex", "region"] == "LATAM" and a.sites.loc["ny", "name"] == "New York"
    assert a.meta["import"]["self_loops_dropped"] == b.meta["import"]["self_loops_dropped"] == 1
    assert a.meta["import"]["links_with_default_capacity"] == b.meta["import"]["links_with_default_capacity"] == 1


def test_directed_arcs_merge_and_the_dialects_reading_of_an_unstated_arc() -> None:
    edges = [("a", "b", "0", {"LinkSpeedRaw": 400e9, "capacity_gbps": 400.0}), ("b", "a", "0", {})]
    zoo, zoo_counts = link_records(edges, GRAPHML, directed=True, default_capacity_gbps=100.0)
    assert [(r["id"], r["capacity_gbps"]) for r in zoo] == [("a-b", 400.0)]  # an unstated arc leaves it
    assert zoo_counts["asymmetric_capacity_pairs"] == 0
    nl, nl_counts = link_records(edges, NODE_LINK, directed=True, default_capacity_gbps=100.0)
    assert [(r["id"], r["capacity_gbps"]) for r in nl] == [("a-b", 100.0)]  # it counts as the default
    assert nl_counts["asymmetric_capacity_pairs"] == 1
    undirected, counts = link_records([*edges, ("a", "a", "", {})], NODE_LINK, directed=False,
                                      default_capacity_gbps=100.0)
    assert [r["id"] for r in undirected] == ["a-b", "b-a"] and counts["self_loops_dropped"] == 1
    assert counts["links_with_default_capacity"] == 1


def test_coordinates_and_their_problems_name_file_record_and_field() -> None:
    nodes = [{"pos": [1.0, 2.0]}, {"Longitude": 3.0, "Latitude": 4.0}, {"x": 500.0, "y": 95.0}, {"lon": "n/a"}]
    xy = node_coordinates(nodes, NODE_LINK)
    assert xy[:2].tolist() == [[1.0, 2.0], [3.0, 4.0]] and xy[2].tolist() == [500.0, 95.0]
    assert np.isnan(xy[3]).all()
    assert np.isnan(node_coordinates(nodes, GRAPHML)[[0, 2, 3]]).all()  # GraphML reads Longitude/Latitude only
    problems = coordinate_problems(["a", "b", "c", "d"], xy, "f.json", missing=lambda j: f"node {j} has none")
    got = [(p.file, p.record, p.field, p.message) for p in problems]
    assert got == [("f.json", "c", "lon", "longitude 500 is outside [-180, 180]"),
                   ("f.json", "c", "lat", "latitude 95 is outside [-90, 90]"),
                   ("f.json", "d", "lon", "node 3 has none")]
    assert coordinate_problems(["c"], xy[2:3], "f.json", missing=str, check_range=False) == []
