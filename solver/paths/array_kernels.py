"""Compiled (numba) helpers over path and shortest-path-tree arrays: searched paths gathered into output
order (:func:`gather_paths`, for :mod:`backbone.solver.paths.candidates`), paths read out of Dijkstra predecessor rows
(:func:`predecessor_paths`) and demand summed up shortest-path trees (:func:`subtree_sums`, both for the TE
bounds). Cached on disk like :mod:`backbone.solver.paths.kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_CACHE = True


@njit(cache=_CACHE)
def gather_paths(found_arcs: np.ndarray, found_sites: np.ndarray, arc_start: np.ndarray, site_start: np.ndarray,
                 hops: np.ndarray, reverse: np.ndarray, n_links: int):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Copy searched paths into output order, reversed (arcs ``j <-> L + j``) where ``reverse``.

    Output path ``i`` takes ``hops[i]`` arcs from ``found_arcs[arc_start[i]:]`` and ``hops[i] + 1``
    sites from ``found_sites[site_start[i]:]``. Returns the arcs and sites in travel order with their
    offsets, and per path its arc and link positions sorted ascending (CSR column indices, int32).
    """
    n = hops.shape[0]
    arc_ptr = np.zeros(n + 1, np.int64)
    site_ptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        arc_ptr[i + 1] = arc_ptr[i] + hops[i]
        site_ptr[i + 1] = site_ptr[i] + hops[i] + 1
    arcs = np.empty(arc_ptr[n], np.int64)
    sites = np.empty(site_ptr[n], np.int64)
    arc_cols = np.empty(arc_ptr[n], np.int32)
    link_cols = np.empty(arc_ptr[n], np.int32)
    n_arcs = max(2 * n_links, 1)
    for i in range(n):
        a0 = arc_start[i]
        s0 = site_start[i]
        m = hops[i]
        o = arc_ptr[i]
        so = site_ptr[i]
        if reverse[i]:
            for j in range(m):
                arcs[o + j] = (found_arcs[a0 + m - 1 - j] + n_links) % n_arcs
            for j in range(m + 1):
                sites[so + j] = found_sites[s0 + m - j]
        else:
            for j in range(m):
                arcs[o + j] = found_arcs[a0 + j]
            for j in range(m + 1):
                sites[so + j] = found_sites[s0 + j]
        for j in range(m):  # insertion sort of the row's columns (rows are short)
            a = arcs[o + j]
            lk = a % max(n_links, 1)
            p = j
            while p > 0 and arc_cols[o + p - 1] > a:
                arc_cols[o + p] = arc_cols[o + p - 1]
                p -= 1
            arc_cols[o + p] = a
            p = j
            while p > 0 and link_cols[o + p - 1] > lk:
                link_cols[o + p] = link_cols[o + p - 1]
                p -= 1
            link_cols[o + p] = lk
    return arcs, arc_ptr, sites, site_ptr, arc_cols, link_cols


@njit(cache=_CACHE)
def predecessor_paths(pred: np.ndarray, rows: np.ndarray, src: np.ndarray, dst: np.ndarray
                      ):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Site sequences (travel order) of the shortest paths ``src[i] -> dst[i]`` read from Dijkstra
    predecessor row ``pred[rows[i]]`` (a tree rooted at ``src[i]``); returns flat sites and offsets."""
    n_p = rows.shape[0]
    ptr = np.zeros(n_p + 1, np.int64)
    for i in range(n_p):
        x = dst[i]
        m = 1
        while x != src[i]:
            x = pred[rows[i], x]
            m += 1
        ptr[i + 1] = ptr[i] + m
    sites = np.empty(ptr[n_p], np.int64)
    for i in range(n_p):
        x = dst[i]
        j = ptr[i + 1] - 1
        sites[j] = x
        while x != src[i]:
            x = pred[rows[i], x]
            j -= 1
            sites[j] = x
    return sites, ptr


@njit(cache=_CACHE)
def subtree_sums(pred: np.ndarray, dist: np.ndarray, node_demand: np.ndarray
                 ) -> np.ndarray:  # pragma: no cover - compiled
    """Per shortest-path tree (row ``c``, rooted at its source): the demand delivered at or below each
    node, i.e. the flow on the tree arc into it when each destination's demand follows the tree."""
    rows = node_demand.shape[0]
    out = node_demand.copy()
    for c in range(rows):
        order = np.argsort(-dist[c])
        for v in order:
            p = pred[c, v]
            if p >= 0 and np.isfinite(dist[c, v]):
                out[c, p] += out[c, v]
    return out
