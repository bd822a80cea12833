"""Compiled (numba) kernels of the source-aggregated min-MLU engine (:mod:`backbone.solver.te.srcflow`):
demand pushed up shortest-path trees (:func:`tree_push`) and per-source arc flows decomposed into paths
(:func:`decompose_source_flows`). Cached on disk like :mod:`backbone.solver.paths.array_kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_CACHE = True


@njit(cache=_CACHE)
def tree_push(dist: np.ndarray, pred: np.ndarray, demand: np.ndarray, out_ptr: np.ndarray, out_head: np.ndarray,
              out_arc: np.ndarray, n_arcs: int):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Push every source's demand up its shortest-path tree.

    Row ``i`` of ``dist`` / ``pred`` is a Dijkstra tree (scipy; ``pred < 0`` at the root and at unreached
    nodes), ``demand[i, v]`` the traffic from that source to node ``v``. The tree arc into ``v`` is the
    arc ``(pred[i, v], v)`` found in the tail's adjacency (``out_ptr`` CSR over tails, ``out_head``,
    ``out_arc``: one arc per node pair, the one the Dijkstra graph was built from).

    Returns ``(tree_arc (S, N) int32, subtree (S, N) float64, total (n_arcs,) float64)``: the arc into each
    node (``-1`` at roots and unreached nodes), the traffic it carries (the demand of the node's subtree)
    and the arc loads summed over all sources.
    """
    n_src, n = dist.shape
    tree_arc = np.full((n_src, n), -1, np.int32)
    subtree = np.zeros((n_src, n), np.float64)
    total = np.zeros(n_arcs, np.float64)
    for i in range(n_src):
        order = np.argsort(dist[i])
        sub = subtree[i]
        for v in range(n):
            sub[v] = demand[i, v]
        for j in range(n - 1, -1, -1):  # farthest first: a node's subtree is complete when it is reached
            v = order[j]
            p = pred[i, v]
            if p < 0:
                continue
            a = -1
            for q in range(out_ptr[p], out_ptr[p + 1]):
                if out_head[q] == v:
                    a = out_arc[q]
                    break
            tree_arc[i, v] = a
            s = sub[v]
            if s != 0.0:
                sub[p] += s
                total[a] += s
    return tree_arc, subtree, total


@njit(cache=_CACHE)
def decompose_source_flows(flow: np.ndarray, src: np.ndarray, pair_ptr: np.ndarray, pair_dst: np.ndarray,  # noqa: C901  numba kernel: one loop nest compiled as a unit
                           pair_gbps: np.ndarray, arc_tail: np.ndarray, in_ptr: np.ndarray, in_arc: np.ndarray,
                           n_nodes: int, tol: float):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Decompose per-source arc flows into paths (standard flow decomposition, cycles cancelled).

    ``flow[i]`` is the arc flow of source ``src[i]``; its pairs are ``pair_ptr[i]:pair_ptr[i + 1]`` with
    destination ``pair_dst`` and traffic ``pair_gbps``. For each pair the walk goes backwards from the
    destination along the incoming arc (``in_ptr`` CSR over heads, ``in_arc``) with the most remaining
    flow until it reaches the source; the path's bottleneck (at most the pair's remaining traffic) is
    taken off its arcs. A walk that meets itself closes a cycle, whose smallest flow is taken off its
    arcs (cycles only add load). The flow ``flow`` is consumed.

    Returns ``(path_pair int64, path_gbps float64, arc_ptr int64, arcs int32)``: the paths in travel order
    (arcs ``arcs[arc_ptr[p]:arc_ptr[p + 1]]``) with the pair they serve and their traffic.
    """
    cap_paths = max(16, 2 * pair_dst.shape[0])
    path_pair = np.empty(cap_paths, np.int64)
    path_gbps = np.empty(cap_paths, np.float64)
    arc_ptr = np.zeros(cap_paths + 1, np.int64)
    cap_arcs = max(64, 8 * cap_paths)
    arcs = np.empty(cap_arcs, np.int32)
    n_paths = 0
    walk = np.empty(n_nodes + 1, np.int64)
    on_walk = np.full(n_nodes, -1, np.int64)
    for i in range(flow.shape[0]):
        x = flow[i]
        s = src[i]
        for k in range(pair_ptr[i], pair_ptr[i + 1]):
            t = pair_dst[k]
            rest = pair_gbps[k]
            guard = 0
            while rest > tol and guard < 100000:
                guard += 1
                # walk back from t
                v = t
                m = 0
                on_walk[v] = 0
                stuck = False
                cycled = False
                while v != s:
                    best = -1
                    bx = 0.0
                    for q in range(in_ptr[v], in_ptr[v + 1]):
                        a = in_arc[q]
                        if x[a] > bx:
                            bx = x[a]
                            best = a
                    if best < 0 or bx <= tol * 1e-3:
                        stuck = True
                        break
                    walk[m] = best
                    m += 1
                    u = arc_tail[best]
                    if on_walk[u] >= 0:  # a cycle: arcs walk[on_walk[u]:m]
                        c = x[walk[on_walk[u]]]
                        for r in range(on_walk[u], m):
                            if x[walk[r]] < c:
                                c = x[walk[r]]
                        for r in range(on_walk[u], m):
                            x[walk[r]] -= c
                        cycled = True
                        break
                    on_walk[u] = m
                    v = u
                # clear the walk marks
                on_walk[t] = -1
                for r in range(m):
                    on_walk[arc_tail[walk[r]]] = -1
                if cycled:
                    continue
                if stuck:
                    break
                b = rest
                for r in range(m):
                    if x[walk[r]] < b:
                        b = x[walk[r]]
                for r in range(m):
                    x[walk[r]] -= b
                rest -= b
                if n_paths == cap_paths:
                    cap_paths *= 2
                    pp = np.empty(cap_paths, np.int64)
                    pp[:n_paths] = path_pair[:n_paths]
                    path_pair = pp
                    pg = np.empty(cap_paths, np.float64)
                    pg[:n_paths] = path_gbps[:n_paths]
                    path_gbps = pg
                    ap = np.zeros(cap_paths + 1, np.int64)
                    ap[:n_paths + 1] = arc_ptr[:n_paths + 1]
                    arc_ptr = ap
                start = arc_ptr[n_paths]
                while start + m > cap_arcs:
                    cap_arcs *= 2
                    na = np.empty(cap_arcs, np.int32)
                    na[:start] = arcs[:start]
                    arcs = na
                for r in range(m):  # travel order: the walk went backwards
                    arcs[start + r] = walk[m - 1 - r]
                path_pair[n_paths] = k
                path_gbps[n_paths] = b
                arc_ptr[n_paths + 1] = start + m
                n_paths += 1
    return path_pair[:n_paths], path_gbps[:n_paths], arc_ptr[:n_paths + 1], arcs[:arc_ptr[n_paths]]
