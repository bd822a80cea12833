"""Latency-limited pricing: the resource-constrained shortest path (RCSP) of column generation.

A demand ``d`` with a latency SLO may only use paths whose one-way latency is within ``L_d = slo_rtt_ms / 2``.
Column generation's pricing problem for it is therefore

    min_p  w(p) = sum_{a in p} w_a      subject to   lat(p) = sum_{a in p} lat_a <= L_d,

with arc prices ``w_a >= 0`` (the master's capacity duals). :func:`latency_limited_paths` solves it exactly by
label setting with A* ordering (Aneja, Aggarwal and Nair's bi-criteria labels; see also Irnich and Desaulniers,
"Shortest path problems with resource constraints", 2005):

* a label is a partial path from the source: ``(w so far, latency so far, site)``;
* labels leave the heap by ``w + W_t(v)``, where ``W_t(v)`` is the exact ``w``-distance from ``v`` to the
  target (one reverse Dijkstra per target): a consistent estimate, so the labels of one site leave in
  non-decreasing ``w`` and the first label of the target to leave is the optimum;
* a label is dominated, and dropped, when an earlier label of its site (no more ``w``) had no more latency;
* a label is pruned when ``latency + T_t(v) > L_d`` (``T_t`` the latency-distance to the target: no completion
  meets the SLO) or ``w + W_t(v) >= cutoff`` (no completion prices out).

Dominance drops every label that revisits a site (a cycle adds latency, never removes ``w``), so the paths are
loopless. The answer is exact: the returned length is the optimum when it is below ``cutoff``, and ``inf``
proves that no path within the SLO costs less than ``cutoff``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from backbone.solver.core.deadline import Deadline, call_compiled
from backbone.solver.core.sparse import selector

LATENCY_TOL_MS = 1e-9
"""Latency within ``L_d + LATENCY_TOL_MS`` meets the SLO (the same tolerance as the path filter)."""

TARGETS_PER_CHECK = 16
"""Targets searched between two deadline checks."""


@dataclass(frozen=True)
class LatencyLimitedPaths:
    """What :func:`latency_limited_paths` found, one entry per query.

    ``length[i]`` is the least ``w`` of a path within query ``i``'s latency limit when it is below its cutoff
    (``inf`` proves there is none below the cutoff); ``arcs[i]`` are that path's arcs in travel order (empty when
    ``length[i]`` is ``inf``); ``latency_ms[i]`` its latency.
    """

    length: np.ndarray
    latency_ms: np.ndarray
    arcs: list[np.ndarray]


def min_arc_graph(tail: np.ndarray, head: np.ndarray, values: np.ndarray, n_sites: int) -> sp.csr_matrix:
    """The ``n_sites x n_sites`` CSR graph of the lowest ``values`` over parallel arcs ``tail -> head``
    (a tiny floor keeps zero values as edges)."""
    key = tail.astype(np.int64) * n_sites + head
    order = np.lexsort((values, key))
    first = np.ones(len(order), bool)
    first[1:] = key[order][1:] != key[order][:-1]
    best = order[first]
    return selector(tail[best], n_sites, n_sites, cols=head[best], values=values[best] + 1e-12)


def latency_limited_paths(tail: np.ndarray, head: np.ndarray, w: np.ndarray, latency_ms: np.ndarray, n_sites: int,
                          src: np.ndarray, dst: np.ndarray, limit_ms: np.ndarray, cutoff: np.ndarray,
                          deadline: Deadline | None = None) -> LatencyLimitedPaths:
    """The least-``w`` path of each query ``(src[i], dst[i])`` whose latency is within ``limit_ms[i]``, among the
    paths whose ``w`` is below ``cutoff[i]`` (exact; see the module docstring).

    Parameters
    ----------
    tail, head, w, latency_ms
        The directed arcs (parallel arcs allowed), their prices (``>= 0``) and one-way latencies (``>= 0``).
    n_sites
        Sites (arc ends are ``0 .. n_sites - 1``).
    src, dst, limit_ms, cutoff
        One query per entry: its ends, its latency limit in ms (``inf``: none) and its cutoff (``inf``: none).
    deadline
        Checked between groups of targets (:class:`~backbone.solver.core.deadline.TimeLimitReached`).

    Returns
    -------
    LatencyLimitedPaths

    Example
    -------
    >>> t, h = np.array([0, 0, 2]), np.array([1, 2, 1])
    >>> out = latency_limited_paths(t, h, np.array([5.0, 1.0, 1.0]), np.array([1.0, 2.0, 2.0]), 3,
    ...                             np.array([0]), np.array([1]), np.array([3.0]), np.array([np.inf]))
    >>> float(out.length[0]), out.arcs[0].tolist()
    (5.0, [0])
    """
    from scipy.sparse.csgraph import dijkstra

    tail, head = np.asarray(tail, np.int64), np.asarray(head, np.int64)
    w = np.maximum(np.asarray(w, float), 0.0)
    lat = np.maximum(np.asarray(latency_ms, float), 0.0)
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    n = len(src)
    length, path_lat = np.full(n, np.inf), np.full(n, np.inf)
    arcs_out: list[np.ndarray] = [np.zeros(0, np.int64)] * n
    if n == 0:
        return LatencyLimitedPaths(length, path_lat, arcs_out)
    order = np.argsort(tail, kind="stable")
    ptr = np.searchsorted(tail[order], np.arange(n_sites + 1))
    adjacency = [list(zip(order[ptr[v]:ptr[v + 1]].tolist(), head[order[ptr[v]:ptr[v + 1]]].tolist(),
                          w[order[ptr[v]:ptr[v + 1]]].tolist(), lat[order[ptr[v]:ptr[v + 1]]].tolist(), strict=True))
                 for v in range(n_sites)]
    targets, target_of = np.unique(dst, return_inverse=True)
    # distances *to* each target: Dijkstra from the target over the reversed arcs
    w_to = dijkstra(min_arc_graph(head, tail, w, n_sites), directed=True, indices=targets)
    lat_to = dijkstra(min_arc_graph(head, tail, lat, n_sites), directed=True, indices=targets)
    w_to, lat_to = np.atleast_2d(w_to), np.atleast_2d(lat_to)
    for ti in range(len(targets)):
        if deadline is not None and ti % TARGETS_PER_CHECK == 0:
            deadline.check("latency-limited pricing")
        w_h = np.maximum(w_to[ti] - 1e-9, 0.0).tolist()  # the floor of min_arc_graph, taken back
        lat_h = np.maximum(lat_to[ti] - 1e-9, 0.0).tolist()
        for i in np.flatnonzero(target_of == ti).tolist():
            found = _label_setting(adjacency, w_h, lat_h, int(src[i]), int(dst[i]),
                                   float(limit_ms[i]) + LATENCY_TOL_MS, float(cutoff[i]), n_sites)
            if found is not None:
                length[i], path_lat[i], arcs_out[i] = found[0], found[1], np.asarray(found[2], np.int64)
    return LatencyLimitedPaths(length, path_lat, arcs_out)


def _label_setting(adjacency: list[list[tuple[int, int, float, float]]], w_h: list[float], lat_h: list[float],
                   s: int, t: int, limit: float, cutoff: float, n_sites: int
                   ) -> tuple[float, float, list[int]] | None:
    """One query of :func:`latency_limited_paths`: ``(w, latency, arcs)`` of the optimum, or None."""
    if lat_h[s] > limit or w_h[s] >= cutoff or not np.isfinite(lat_h[s]):
        return None
    best_lat = [np.inf] * n_sites  # least latency of a label of the site that has left the heap
    parent: list[int] = [-1]
    via: list[int] = [-1]
    heap: list[tuple[float, float, int, int, float]] = [(w_h[s], 0.0, 0, s, 0.0)]  # (key, lat, label, site, w)
    while heap:
        _, g_lat, label, v, g_w = heapq.heappop(heap)
        if g_lat >= best_lat[v]:
            continue  # dominated: an earlier label of v had no more w and no more latency
        best_lat[v] = g_lat
        if v == t:
            arcs: list[int] = []
            while via[label] >= 0:
                arcs.append(via[label])
                label = parent[label]
            return g_w, g_lat, arcs[::-1]
        for arc, u, wa, la in adjacency[v]:
            nl = g_lat + la
            nw = g_w + wa
            if nl + lat_h[u] > limit or nw + w_h[u] >= cutoff or nl >= best_lat[u]:
                continue
            parent.append(label)
            via.append(arc)
            heapq.heappush(heap, (nw + w_h[u], nl, len(via) - 1, u, nw))
    return None


def load_pricing_kernel(deadline: Deadline) -> None:
    """Compile (or load from the cache) ``predecessor_paths``, the compiled kernel column generation's pricing
    reads its paths with, on a one-path call with the real calls' types, within ``deadline``
    (:func:`~backbone.solver.core.deadline.call_compiled`: a first compile takes minutes on a loaded machine and no
    deadline check can enter it).

    Raises
    ------
    TimeLimitReached
        ``deadline`` passed while the kernel compiled.
    """
    from backbone.solver.paths.array_kernels import predecessor_paths

    one = np.zeros(1, np.int64)
    call_compiled(predecessor_paths, (np.zeros((1, 1), np.int32), one, one, one), deadline, "column generation pricing")
