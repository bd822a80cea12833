"""The search behind :func:`backbone.solver.paths.candidates.candidate_paths`: :func:`search_group`.

Exact k lowest-latency loopless paths per pair (the set Yen's algorithm returns); the algorithm is described with
its reference Python kernels in :mod:`backbone.solver.paths.reference`.

:func:`search_group` runs the compiled port (:mod:`backbone.solver.paths.kernels`) for plain
searches; the Python kernels are the reference it is tested against, and serve link-disjoint
searches.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from scipy.sparse.csgraph import dijkstra

from backbone.solver.core.deadline import Deadline, call_compiled
from backbone.solver.paths.reference import (
    DEAD_END_CHECK_AFTER,
    MAX_EXPANSIONS,
    FlatPaths,
    search_group_python,
)
from backbone.solver.paths.topology import FoundPath, SearchTopology

logger = logging.getLogger(__name__)


def search_group(args: tuple[Any, ...]) -> FoundPath:
    """Paths for unordered pairs ``(src[i], dst[i])``: the compiled kernel, or the Python one for
    link-disjoint paths (successive shortest paths).

    ``args`` is ``(topo, src, dst, limit, k, disjoint)`` with an optional seventh element, a
    :class:`~backbone.solver.core.deadline.Deadline` checked between chunks of work (raises
    :class:`~backbone.solver.core.deadline.TimeLimitReached`).
    """
    topo, src, dst, limit, k, disjoint = args[:6]
    deadline = args[6] if len(args) > 6 else None
    if disjoint or len(src) == 0:
        return search_group_python((topo, src, dst, limit, k, disjoint), deadline)
    return _search_group_compiled(topo, src, dst, limit, k, deadline)


TARGET_CHUNK = 128
"""Targets whose Dijkstra rows are computed together (bounds the dense ``chunk x sites`` arrays)."""

PAIRS_PER_CALL = 4096
"""Pairs per call of the compiled kernel at most (whole targets; a deadline is checked between calls)."""


class _CompiledGraph:
    """The arrays the compiled kernel needs: arcs, adjacency in the reference order, block-cut tree."""

    def __init__(self, topo: SearchTopology) -> None:
        import networkx as nx

        n, n_links = topo.n_sites, topo.n_links
        self.tail = np.concatenate([topo.site_a, topo.site_b]).astype(np.int64)
        self.head = np.concatenate([topo.site_b, topo.site_a]).astype(np.int64)
        self.w = np.concatenate([topo.latency_ms, topo.latency_ms]).astype(float)
        # adjacency: per site, its arcs in link order, forward arc j before reverse arc L + j
        inter = np.empty(2 * n_links, np.int64)
        inter[0::2] = np.arange(n_links)
        inter[1::2] = np.arange(n_links) + n_links
        order = np.argsort(self.tail[inter], kind="stable")
        self.adj_arc = inter[order]
        self.adj_ptr = np.searchsorted(self.tail[self.adj_arc], np.arange(n + 1)).astype(np.int64)
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from(zip(topo.site_a.tolist(), topo.site_b.tolist(), strict=True))
        g.remove_edges_from(nx.selfloop_edges(g))
        block_edges = list(nx.biconnected_component_edges(g))
        n_blocks = len(block_edges)
        block_sites = [{v for e in edges for v in e} for edges in block_edges]
        cuts = sorted(nx.articulation_points(g))
        cut_node = {v: n_blocks + i for i, v in enumerate(cuts)}
        self.trivial = n_blocks == 1 and len(block_sites[0]) == n
        edge_block: dict[tuple[int, int], int] = {}
        tree_edges: list[tuple[int, int]] = []
        home = np.full(n, -1, np.int64)
        for i, (edges, sites) in enumerate(zip(block_edges, block_sites, strict=True)):
            for a, b in edges:
                edge_block[(min(a, b), max(a, b))] = i
            for v in sites:
                if v in cut_node:
                    tree_edges.append((i, cut_node[v]))
                else:
                    home[v] = i
        for v, node in cut_node.items():
            home[v] = node
        lo = np.minimum(topo.site_a, topo.site_b).tolist()
        hi = np.maximum(topo.site_a, topo.site_b).tolist()
        link_block = np.array([edge_block.get((a, b), 0) for a, b in zip(lo, hi, strict=True)], np.int64)
        self.arc_block = np.concatenate([link_block, link_block])
        self.site_home = home
        n_tree = n_blocks + len(cuts)
        te = np.array(tree_edges, np.int64).reshape(-1, 2)
        rows = np.concatenate([te[:, 0], te[:, 1]])
        cols = np.concatenate([te[:, 1], te[:, 0]])
        order = np.argsort(rows, kind="stable")
        self.tree_adj = cols[order].astype(np.int64)
        self.tree_ptr = np.searchsorted(rows[order], np.arange(n_tree + 1)).astype(np.int64)


def _call_slices(pair_ptr: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Split targets ``0..len(pair_ptr)-2`` into runs of whole targets with about ``budget`` pairs each."""
    n = len(pair_ptr) - 1
    out: list[tuple[int, int]] = []
    a = 0
    while a < n:
        b = int(np.searchsorted(pair_ptr, pair_ptr[a] + budget, side="right")) - 1
        b = min(n, max(b, a + 1))
        out.append((a, b))
        a = b
    return out


def _search_group_compiled(topo: SearchTopology, src: np.ndarray, dst: np.ndarray, limit: np.ndarray,
                           k: int, deadline: Deadline | None = None) -> FoundPath:
    """The compiled kernel over target chunks; output in the reference kernel's order.

    Each Dijkstra chunk of :data:`TARGET_CHUNK` targets is searched in calls of about
    :data:`PAIRS_PER_CALL` pairs; ``deadline`` is checked before each call.
    """
    from backbone.solver.paths.kernels import search_targets

    cg = _CompiledGraph(topo)
    graph = topo.graph()
    targets, inverse = np.unique(dst, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    pair_ptr_all = np.searchsorted(inverse[order], np.arange(len(targets) + 1)).astype(np.int64)
    lim = np.minimum(np.asarray(limit, float) + 1e-9, 1e300)
    parts: list[tuple[np.ndarray, ...]] = []
    capped = 0
    for c0 in range(0, len(targets), TARGET_CHUNK):
        if deadline is not None:
            deadline.check("candidate path search")
        c1 = min(c0 + TARGET_CHUNK, len(targets))
        chunk = targets[c0:c1].astype(np.int64)
        dist, pred = dijkstra(graph, directed=False, indices=chunk, return_predecessors=True)
        dist, pred = np.atleast_2d(dist), np.atleast_2d(pred)
        for a, b in _call_slices(pair_ptr_all[c0:c1 + 1], PAIRS_PER_CALL):
            if deadline is not None:
                deadline.check("candidate path search")
            sel = order[pair_ptr_all[c0 + a]:pair_ptr_all[c0 + b]]
            ptr = pair_ptr_all[c0 + a:c0 + b + 1] - pair_ptr_all[c0 + a]
            out = call_compiled(search_targets, (
                topo.n_sites, topo.n_links, cg.tail, cg.head, cg.w, cg.adj_ptr, cg.adj_arc, cg.arc_block,
                cg.site_home, cg.tree_ptr, cg.tree_adj, cg.trivial, chunk[a:b], np.ascontiguousarray(dist[a:b]),
                np.ascontiguousarray(pred[a:b]), ptr, src[sel].astype(np.int64), lim[sel], sel.astype(np.int64),
                int(k), DEAD_END_CHECK_AFTER, MAX_EXPANSIONS), deadline, "candidate path search")
            parts.append(out[:5])
            capped += int(out[5])
    if capped:
        logger.info("%d pair(s) hit the search budget of %d expansions; they keep the paths found so far",
                    capped, MAX_EXPANSIONS)
    if not parts:
        return FlatPaths().to_found([])
    return FoundPath(*(np.concatenate([p[i] for p in parts]) for i in range(5)))
