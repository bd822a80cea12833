"""Candidate paths: the k lowest-latency loopless paths between site pairs, as sparse incidences.

Formulations (TE, placement, design, failures) never walk graphs themselves: they ask for a
:class:`PathSet` and build their rows from its ``arc_incidence`` / ``link_incidence`` matrices.

Algorithm (exact)
-----------------
The network is an undirected multigraph (parallel links between two sites are distinct paths);
link weights are ``latency_ms`` (one way). For a target ``t`` one ``scipy.sparse.csgraph.dijkstra``
gives the exact distance ``h(v)`` from every site to ``t`` and the shortest-path tree towards
``t``; every source searched towards ``t`` shares them. For a pair ``(s, t)`` we run a
best-first search over *partial loopless paths* from ``s`` keyed by ``g + h(v)`` (``g``: latency
so far). ``h`` is a consistent lower bound for any loopless continuation (forbidding visited
sites can only lengthen a path), so complete paths leave the queue in non-decreasing latency
order and the first ``k`` are the ``k`` lowest-latency loopless paths -- the same set as Yen's
algorithm (ties in any order). Two devices make it fast:

* *Tree completion.* When a popped partial path can follow the shortest-path tree to ``t``
  without revisiting a site, that completion costs exactly the key, so it is emitted at once.
  All its other loopless extensions leave the tree path at some site by a non-tree arc (a
  *deviation*, with reduced cost ``latency + h(head) - h(tail) >= 0``). As in Eppstein's
  algorithm, the deviations of every site on a tree path sit in a persistent heap built once
  per target, so one queue entry stands for all of them and they are expanded lazily in key
  order; a deviation whose head is already on the path is dropped when popped.
* *Block-cut pruning.* A loopless path never leaves the biconnected blocks on the block-cut
  tree path between ``s`` and ``t``; other sites are masked out. Partial paths that are dead
  ends (every way on revisits a site) are detected by a reachability test once a search has
  expanded :data:`DEAD_END_CHECK_AFTER` partial paths, which keeps pairs with fewer than ``k``
  loopless paths from enumerating every partial path.

* Pairs are symmetric on an undirected graph: each unordered pair is searched once and the
  reverse direction gets the reversed paths.
* ``max_latency_ms`` prunes the search (a partial path with ``g + h > limit`` is dropped); a
  pair may end up with zero paths (the TE code reports such demand as "no path within SLO").
* ``disjoint=True`` gives link-disjoint paths by *successive shortest paths*: the shortest path,
  then the shortest path avoiding its links, and so on (up to ``k``). This is the greedy
  scheme used in practice for protection paths; it is not the max-cardinality or min-sum
  disjoint set (Suurballe), and can find fewer than the maximum number of disjoint paths on
  trap topologies.
* Large requests are split over a process pool by target (``workers``; default: up to 2
  processes when more than :data:`PARALLEL_MIN_PAIRS` unordered pairs are asked for).

Caching
-------
Results are kept in a small LRU (:data:`CACHE_SIZE` entries) keyed by a hash of the topology
(site ids and the links' ids, endpoints, latency and length -- *not* demands or capacities, so
scaling demand or upgrading capacity reuses the paths), the pairs, ``k``, ``disjoint`` and
``max_latency_ms``. A failure changes the topology: use :func:`paths_after_failure`, which
filters the cached intact-network paths with :meth:`PathSet.without_links` and recomputes only
the pairs that lost one of their ``k`` paths (a pair that kept all ``k`` keeps exactly the right
set: the failed network's paths are a subset of the intact one's).
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from backbone.errors import Problem, ValidationError
from backbone.model import Network

logger = logging.getLogger(__name__)

CACHE_SIZE = 16
"""Number of path sets kept in the LRU cache."""

PARALLEL_MIN_PAIRS = 4000
"""Unordered pairs above which the search is spread over a process pool by default."""

DEAD_END_CHECK_AFTER = 2000
"""Expansions per pair after which popped partial paths are checked for a way on to the target."""

MAX_EXPANSIONS = 20_000
"""Expansions per pair after which the search stops with the paths found so far.

The search is exact (Yen's set) whenever it finishes within this budget, which every pair of the
shipped and synthetic backbones does in the intact network. A pair with fewer than ``k`` loopless
paths under its latency limit can otherwise enumerate a huge number of partial paths that never
reach the target (seen after a landing-station failure: minutes for one pair); those pairs keep the
lowest-latency paths found, which are still exact as far as they go (paths come out in latency
order), and an info log counts them (routine in failure sweeps)."""

_CACHE: OrderedDict[tuple[Any, ...], PathSet] = OrderedDict()

_CAPPED = [0]
"""Pairs whose search hit :data:`MAX_EXPANSIONS` in this process (reset per search group)."""


# ---------------------------------------------------------------------- the result type
@dataclass(frozen=True, eq=False)
class PathSet:
    """Candidate paths for a list of (src, dst) pairs, with sparse incidences.

    Attributes
    ----------
    link_ids
        ``net.links.index`` at build time (columns of ``link_incidence``; arcs ``j`` and
        ``L + j`` of ``arc_incidence`` are link ``j`` forward (``site_a -> site_b``) and reverse).
    pairs
        One row per pair asked for: columns ``src``, ``dst`` (site ids); RangeIndex.
    path_pair
        ``(n_paths,)`` row of ``pairs`` each path serves. The paths of a pair are contiguous
        and sorted by latency ascending.
    path_latency_ms, path_length_km, path_hops
        One-way latency (sum of link ``latency_ms``), route length and number of links.
    arc_incidence
        ``n_paths x 2L`` CSR, 1 where the path uses an arc (direction-aware).
    link_incidence
        ``n_paths x L`` CSR, 1 where the path uses a link (either direction).
    site_ids
        ``net.sites.index`` at build time.
    """

    link_ids: pd.Index
    site_ids: pd.Index
    pairs: pd.DataFrame
    path_pair: np.ndarray
    path_latency_ms: np.ndarray
    path_length_km: np.ndarray
    path_hops: np.ndarray
    arc_incidence: sp.csr_matrix
    link_incidence: sp.csr_matrix
    _site_seq: np.ndarray  # flat site positions of all paths (hops + 1 per path)
    _site_ptr: np.ndarray  # (n_paths + 1,) offsets into _site_seq
    _arc_seq: np.ndarray  # flat arc positions of all paths, in travel order
    _arc_ptr: np.ndarray  # (n_paths + 1,) offsets into _arc_seq

    @property
    def n_paths(self) -> int:
        """Number of paths."""
        return len(self.path_pair)

    @property
    def pair_ptr(self) -> np.ndarray:
        """``(n_pairs + 1,)`` offsets: the paths of pair ``r`` are ``pair_ptr[r]:pair_ptr[r+1]``."""
        counts = np.bincount(self.path_pair, minlength=len(self.pairs))
        return np.concatenate([[0], np.cumsum(counts)])

    @property
    def paths_per_pair(self) -> np.ndarray:
        """Number of candidate paths of each pair (0 when none exists or none meets the limit)."""
        return np.bincount(self.path_pair, minlength=len(self.pairs))

    @property
    def pair_incidence(self) -> sp.csr_matrix:
        """``n_pairs x n_paths`` CSR, 1 where the path serves the pair."""
        n = self.n_paths
        return sp.csr_matrix((np.ones(n), (self.path_pair, np.arange(n))), shape=(len(self.pairs), n))

    def pair_paths(self, pair_row: int) -> np.ndarray:
        """Indices of the paths of one pair (a row of ``pairs``), lowest latency first."""
        ptr = self.pair_ptr
        return np.arange(ptr[pair_row], ptr[pair_row + 1])

    def path_sites(self, i: int) -> list[str]:
        """Site ids along path ``i``, from ``src`` to ``dst``."""
        seq = self._site_seq[self._site_ptr[i]:self._site_ptr[i + 1]]
        return [str(s) for s in self.site_ids[seq]]

    def path_links(self, i: int) -> list[str]:
        """Link ids along path ``i``, in travel order."""
        arcs = self._arc_seq[self._arc_ptr[i]:self._arc_ptr[i + 1]]
        return [str(x) for x in self.link_ids[arcs % len(self.link_ids)]]

    def path_arcs(self, i: int) -> np.ndarray:
        """Arc positions (``j`` forward, ``L + j`` reverse) along path ``i``, in travel order."""
        return self._arc_seq[self._arc_ptr[i]:self._arc_ptr[i + 1]].copy()

    def _take(self, idx: np.ndarray) -> PathSet:
        """The paths ``idx`` (in that order), same pairs and columns."""
        idx = np.asarray(idx, np.int64)
        site_lens = np.diff(self._site_ptr)[idx]
        arc_lens = np.diff(self._arc_ptr)[idx]
        site_seq = self._site_seq[_ranges(self._site_ptr[:-1][idx], site_lens)]
        arc_seq = self._arc_seq[_ranges(self._arc_ptr[:-1][idx], arc_lens)]
        return PathSet(self.link_ids, self.site_ids, self.pairs, self.path_pair[idx], self.path_latency_ms[idx],
                       self.path_length_km[idx], self.path_hops[idx], self.arc_incidence[idx],
                       self.link_incidence[idx], site_seq, np.concatenate([[0], np.cumsum(site_lens)]),
                       arc_seq, np.concatenate([[0], np.cumsum(arc_lens)]))

    def _subset(self, keep: np.ndarray) -> PathSet:
        return self._take(np.flatnonzero(np.asarray(keep, bool)))

    def restrict(self, max_latency_ms: float | Sequence[float] | np.ndarray) -> PathSet:
        """Keep only paths with ``path_latency_ms <= max_latency_ms`` of their pair.

        ``max_latency_ms`` is a scalar or one value per pair (NaN or inf: no limit). Since a
        pair's paths are its lowest-latency ones, the result is exactly what
        :func:`candidate_paths` would return with that limit.
        """
        limit = _per_pair_limit(max_latency_ms, len(self.pairs))
        return self._subset(self.path_latency_ms <= limit[self.path_pair] + 1e-9)

    def without_links(self, link_ids: Sequence[str] | pd.Index) -> PathSet:
        """Drop the paths that use any of ``link_ids`` (failed links). Columns stay the same."""
        pos = self.link_ids.get_indexer(pd.Index(list(link_ids)))
        if (pos < 0).any():
            from backbone.errors import NotFoundError

            bad = [str(x) for x, p in zip(link_ids, pos, strict=True) if p < 0]
            raise NotFoundError(f"unknown link id(s): {', '.join(bad[:10])}")
        failed = np.zeros(len(self.link_ids))
        failed[pos] = 1.0
        hits = self.link_incidence @ failed
        return self._subset(hits == 0)

    def to_frame(self) -> pd.DataFrame:
        """One row per path: pair, src, dst, latency, length, hops, sites and links (for files)."""
        return pd.DataFrame({
            "pair": self.path_pair,
            "src": self.pairs["src"].to_numpy()[self.path_pair],
            "dst": self.pairs["dst"].to_numpy()[self.path_pair],
            "latency_ms": self.path_latency_ms,
            "length_km": self.path_length_km,
            "hops": self.path_hops,
            "sites": [";".join(self.path_sites(i)) for i in range(self.n_paths)],
            "links": [";".join(self.path_links(i)) for i in range(self.n_paths)],
        })


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for each (s, n), vectorized."""
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return np.arange(total) + offs


def _gather(flat: np.ndarray, starts: np.ndarray, lens: np.ndarray, reverse: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate segments ``flat[start:start+len]``, each reversed where ``reverse``; with offsets."""
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    total = int(ptr[-1])
    if total == 0:
        return np.zeros(0, np.int64), ptr
    seg_start = np.repeat(ptr[:-1], lens)
    pos = np.arange(total, dtype=np.int64) - seg_start
    rev = np.repeat(reverse, lens)
    base = np.repeat(starts + np.where(reverse, lens - 1, 0), lens)
    return flat[np.where(rev, base - pos, base + pos)], ptr


def _per_pair_limit(max_latency_ms: Any, n_pairs: int) -> np.ndarray:
    if max_latency_ms is None:
        return np.full(n_pairs, np.inf)
    lim = np.broadcast_to(np.asarray(max_latency_ms, float), (n_pairs,)).copy()
    lim[np.isnan(lim)] = np.inf
    return lim


# ---------------------------------------------------------------------- topology
@dataclass(frozen=True)
class _Topology:
    """Plain arrays of the link table (what the worker processes need)."""

    n_sites: int
    site_a: np.ndarray
    site_b: np.ndarray
    latency_ms: np.ndarray
    length_km: np.ndarray

    @property
    def n_links(self) -> int:
        return len(self.site_a)

    def adjacency(self) -> list[list[tuple[int, int, float]]]:
        """Per site: list of (neighbour, arc, latency) over every incident link."""
        adj: list[list[tuple[int, int, float]]] = [[] for _ in range(self.n_sites)]
        n_links = self.n_links
        for j, (a, b, w) in enumerate(zip(self.site_a.tolist(), self.site_b.tolist(), self.latency_ms.tolist(),
                                          strict=True)):
            adj[a].append((b, j, w))
            adj[b].append((a, n_links + j, w))
        return adj

    def graph(self) -> sp.csr_matrix:
        """Symmetric site x site matrix of the lowest link latency (for Dijkstra)."""
        n = self.n_sites
        rows = np.concatenate([self.site_a, self.site_b])
        cols = np.concatenate([self.site_b, self.site_a])
        w = np.concatenate([self.latency_ms, self.latency_ms])
        order = np.lexsort((w, cols, rows))  # keep the minimum over parallel links
        rows, cols, w = rows[order], cols[order], w[order]
        first = np.ones(len(rows), bool)
        first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
        # tiny floor so that zero-latency links remain edges in the csgraph sense
        return sp.csr_matrix((np.maximum(w[first], 1e-12), (rows[first], cols[first])), shape=(n, n))


def _topology(net: Network) -> _Topology:
    a, b = net.link_endpoints()
    links = net.links
    lat = links["latency_ms"].to_numpy(float)
    if len(lat) and (np.isnan(lat).any() or (lat < 0).any()):
        bad = links.index[np.isnan(lat) | (lat < 0)]
        raise ValidationError([Problem("latency must be a non-negative number", table="links", record=str(i),
                                       field="latency_ms") for i in bad])
    return _Topology(len(net.sites), np.asarray(a, np.int64), np.asarray(b, np.int64), lat,
                     links["length_km"].to_numpy(float))


def _topology_key(net: Network) -> str:
    """Hash of what paths depend on: sites, and the links' ids, endpoints, latency and length."""
    h = hashlib.sha256()
    h.update(pd.util.hash_pandas_object(pd.Series(net.sites.index, dtype=str), index=False).to_numpy().tobytes())
    cols = net.links[["site_a", "site_b", "latency_ms", "length_km"]]
    h.update(pd.util.hash_pandas_object(cols, index=True).to_numpy().tobytes())
    return h.hexdigest()[:24]


# ---------------------------------------------------------------------- search kernels
def _k_shortest(adj: list[list[tuple[int, int, float]]], h: list[float], s: int, t: int, k: int, limit: float,
                banned: set[int] | None = None, n_links: int = 0, allowed: int = -1,
                budget: int = DEAD_END_CHECK_AFTER) -> list[tuple[float, list[int], list[int]]]:
    """The ``k`` lowest-latency loopless paths from ``s`` to ``t`` (best-first with exact ``h``).

    Returns a list of ``(latency, sites, arcs)``, by latency ascending. ``banned`` holds link
    positions that may not be used (then a closed set is used and ``k`` must be 1). ``allowed``
    is a bit mask of the sites any loopless ``s``-``t`` path can visit (the blocks on the
    block-cut tree path; -1: all). After ``budget`` expansions, popped partial paths are also
    checked for a loopless way on to ``t`` (dead ends are dropped): this keeps pairs with fewer
    than ``k`` paths from enumerating every partial path.
    """
    inf = float("inf")
    if h[s] == inf or h[s] > limit:
        return []
    out: list[tuple[float, list[int], list[int]]] = []
    # partial path records: (site, arc, parent record) in `trail`; heap keys (f, g, record)
    trail: list[tuple[int, int, int]] = [(s, -1, -1)]
    masks: list[int] = [1 << s]
    heap: list[tuple[float, float, int]] = [(h[s], 0.0, 0)]
    closed: set[int] | None = set() if banned is not None else None
    pop, push = heapq.heappop, heapq.heappush
    expanded = 0
    while heap:
        _f, g, rec = pop(heap)
        v = trail[rec][0]
        if v == t:
            sites, arcs = [], []
            r = rec
            while r >= 0:
                node, arc, parent = trail[r]
                sites.append(node)
                if arc >= 0:
                    arcs.append(arc)
                r = parent
            sites.reverse()
            arcs.reverse()
            out.append((g, sites, arcs))
            if len(out) >= k:
                break
            continue
        if closed is not None:
            if v in closed:
                continue
            closed.add(v)
        mask = masks[rec]
        expanded += 1
        if expanded > budget and not _reaches(adj, v, t, mask, allowed):
            continue
        for u, arc, w in adj[v]:
            if (mask >> u) & 1 or not (allowed >> u) & 1:
                continue
            hu = h[u]
            if hu == inf:
                continue
            if banned is not None and (arc % n_links) in banned:
                continue
            gu = g + w
            fu = gu + hu
            if fu > limit:
                continue
            trail.append((u, arc, rec))
            masks.append(mask | (1 << u))
            push(heap, (fu, gu, len(trail) - 1))
    return out


def _reaches(adj: list[list[tuple[int, int, float]]], v: int, t: int, visited: int, allowed: int) -> bool:
    """Whether ``t`` can be reached from ``v`` without entering ``visited`` sites."""
    seen = visited | (1 << v)
    stack = [v]
    while stack:
        x = stack.pop()
        for u, _arc, _w in adj[x]:
            if u == t:
                return True
            bit = 1 << u
            if not seen & bit and allowed & bit:
                seen |= bit
                stack.append(u)
    return False


class _BlockTree:
    """Block-cut tree of the site graph, to bound where a loopless path can go.

    A loopless ``s``-``t`` path only visits sites of the biconnected blocks on the tree path
    between ``s`` and ``t``; :meth:`masks` gives, per source, the bit mask of those sites.
    """

    def __init__(self, topo: _Topology) -> None:
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(topo.n_sites))
        g.add_edges_from(zip(topo.site_a.tolist(), topo.site_b.tolist(), strict=True))
        blocks = [sorted(b) for b in nx.biconnected_components(g)]
        cuts = set(nx.articulation_points(g))
        self.n_sites = topo.n_sites
        self.tree = nx.Graph()
        for i, b in enumerate(blocks):
            self.tree.add_node(("B", i))
            for v in b:
                if v in cuts:
                    self.tree.add_edge(("B", i), ("C", v))
        self.block_mask = [sum(1 << v for v in b) for b in blocks]
        self.home: dict[int, tuple[str, int]] = {}
        for i, b in enumerate(blocks):
            for v in b:
                self.home[v] = ("C", v) if v in cuts else ("B", i)
        # one block holding every site: no restriction needed
        self.trivial = len(blocks) == 1 and len(blocks[0]) == topo.n_sites

    def masks(self, target: int) -> list[int]:
        """Per source site: bit mask of the sites on any loopless path to ``target`` (0: none)."""
        import networkx as nx

        if self.trivial:
            return [-1] * self.n_sites
        masks = [0] * self.n_sites
        if target not in self.home:  # isolated site
            return masks
        root = self.home[target]
        acc = {root: self.block_mask[root[1]] if root[0] == "B" else (1 << target)}
        for parent, child in nx.bfs_edges(self.tree, root):
            acc[child] = acc[parent] | (self.block_mask[child[1]] if child[0] == "B" else 0)
        for v, node in self.home.items():
            masks[v] = acc.get(node, 0)
        return masks


class _FlatPaths:
    """Paths accumulated as flat lists (latency, hops, arcs and sites in travel order)."""

    def __init__(self) -> None:
        self.latency: list[float] = []
        self.hops: list[int] = []
        self.arcs: list[int] = []
        self.sites: list[int] = []

    def add(self, trail: list[tuple[int, int, int]], rec: int, latency: float) -> None:
        sites, arcs = [], []
        while rec >= 0:
            node, arc, rec = trail[rec]
            sites.append(node)
            arcs.append(arc)
        arcs.pop()  # the source's record has no arc
        sites.reverse()
        arcs.reverse()
        self.latency.append(latency)
        self.hops.append(len(arcs))
        self.arcs.extend(arcs)
        self.sites.extend(sites)

    def to_found(self, pair_of: list[int]) -> _Found:
        return _Found(np.array(pair_of, np.int64), np.array(self.latency, float), np.array(self.hops, np.int64),
                      np.array(self.arcs, np.int64), np.array(self.sites, np.int64))

    def add_path(self, latency: float, sites: list[int], arcs: list[int]) -> None:
        self.latency.append(latency)
        self.hops.append(len(arcs))
        self.arcs.extend(arcs)
        self.sites.extend(sites)


class _TargetTree:
    """Per target: the shortest-path tree towards it and its sorted deviations (sidetracks).

    For site ``x``, ``deviations[x]`` lists the arcs out of ``x`` other than its tree arc, as
    ``(r, head, arc, latency)`` sorted by reduced cost ``r = latency + h[head] - h[x] >= 0``:
    leaving the tree path of a path with latency ``F`` at ``x`` by that arc gives partial paths
    whose completions cost at least ``F + r``. ``heap[x]`` is a persistent leftist heap (tuples
    ``(r, x, left, right, rank)``) of the best deviation of every site on the tree path from
    ``x`` to the target (Eppstein's H_T), so all deviations of a tree path are reachable from one
    heap entry, in key order.
    """

    def __init__(self, topo: _Topology, h: list[float], pred: np.ndarray, target: int) -> None:
        n = topo.n_sites
        tail = np.concatenate([topo.site_a, topo.site_b])
        head = np.concatenate([topo.site_b, topo.site_a])
        w = np.concatenate([topo.latency_ms, topo.latency_ms])
        on_tree = np.flatnonzero(head == pred[tail])
        order = on_tree[np.lexsort((w[on_tree], tail[on_tree]))]
        first = np.ones(len(order), bool)
        first[1:] = tail[order][1:] != tail[order][:-1]
        chosen = order[first]
        succ = np.full(n, -1, np.int64)
        succ_arc = np.full(n, -1, np.int64)
        succ_w = np.zeros(n)
        succ[tail[chosen]] = head[chosen]
        succ_arc[tail[chosen]] = chosen
        succ_w[tail[chosen]] = w[chosen]
        hv = np.asarray(h)
        dev = np.ones(len(tail), bool)
        dev[chosen] = False
        dev &= np.isfinite(hv[head]) & np.isfinite(hv[tail])
        idx = np.flatnonzero(dev)
        r = np.maximum(w[idx] + hv[head[idx]] - hv[tail[idx]], 0.0)
        srt = np.lexsort((r, tail[idx]))
        idx, r = idx[srt], r[srt]
        cuts = np.searchsorted(tail[idx], np.arange(n + 1))
        rl, hl, al, wl = r.tolist(), head[idx].tolist(), idx.tolist(), w[idx].tolist()
        self.deviations: list[list[tuple[float, int, int, float]]] = [
            list(zip(rl[cuts[x]:cuts[x + 1]], hl[cuts[x]:cuts[x + 1]], al[cuts[x]:cuts[x + 1]],
                     wl[cuts[x]:cuts[x + 1]], strict=True)) for x in range(n)]
        self.deviations[target] = []  # paths end at the target: nothing deviates there
        self.succ: list[int] = succ.tolist()
        self.succ_arc: list[int] = succ_arc.tolist()
        self.succ_w: list[float] = succ_w.tolist()
        # H_T(x) = insert(H_T(succ x), best deviation of x), built from the target outwards
        heaps: list[Any] = [None] * n
        depth_order = np.argsort(hv, kind="stable")  # tree parents are never farther than children
        done = np.zeros(n, bool)
        for x in depth_order.tolist():
            if not np.isfinite(hv[x]) or done[x]:
                continue
            stack = [x]
            while stack:  # guard against ties in h (zero-latency links): build parents first
                y = stack[-1]
                p = self.succ[y]
                if p >= 0 and not done[p]:
                    stack.append(p)
                    continue
                stack.pop()
                if done[y]:
                    continue
                base = heaps[p] if p >= 0 else None
                devs = self.deviations[y]
                heaps[y] = _heap_merge(base, (devs[0][0], y, None, None, 1)) if devs else base
                done[y] = True
        self.heap = heaps


def _heap_merge(a: Any, b: Any) -> Any:
    """Merge two persistent leftist heaps of tuples ``(key, site, left, right, rank)``."""
    if a is None:
        return b
    if b is None:
        return a
    if b[0] < a[0]:
        a, b = b, a
    left, right = a[2], _heap_merge(a[3], b)
    if left is None or (right is not None and left[4] < right[4]):
        left, right = right, left
    return (a[0], a[1], left, right, (right[4] if right is not None else 0) + 1)


def _k_shortest_eppstein(adj: list[list[tuple[int, int, float]]], h: list[float], tt: _TargetTree, s: int,
                         t: int, k: int, limit: float, out: _FlatPaths, allowed: int = -1,
                         budget: int = DEAD_END_CHECK_AFTER) -> int:
    """Append the ``k`` lowest-latency loopless paths from ``s`` to ``t`` to ``out``; return how many.

    Best-first search over partial loopless paths keyed by a lower bound ``g + h(v)`` (``h``:
    exact distance to ``t`` in the whole graph, consistent). When a popped partial path ``P``
    (ending at ``v``) can follow the shortest-path tree to ``t`` without revisiting a site, that
    completion costs exactly its key, so it is the next path out; every other loopless
    extension of ``P`` leaves that tree path at some site ``x`` by some non-tree arc, and all of
    those deviations are represented by one queue entry (the root of ``tt.heap[v]``), expanded
    lazily in key order (children and next sibling). A deviation becomes a partial path when
    popped, if its head is not already on the path. When the tree completion revisits a site,
    ``P`` is expanded arc by arc. Every loopless extension is generated exactly once, so the
    output is exact (the same set as Yen's algorithm; ties in any order).
    """
    inf = float("inf")
    if h[s] == inf or h[s] > limit:
        return 0
    succ, succ_arc, succ_w, deviations, heaps = tt.succ, tt.succ_arc, tt.succ_w, tt.deviations, tt.heap
    found = 0
    seq = 0
    trail: list[tuple[int, int, int]] = []  # (site, arc into it, parent record)
    walks: list[dict[int, tuple[int, float, int]]] = []  # per emitted path: site -> (record, g, visited)
    # entries: (key, seq, kind, a, b, c, d); kind 0 = partial path (g, parent record, arc, site)
    # with d = parent's visited mask; kind 1 = deviation-heap node (walk, node, -, -);
    # kind 2 = j-th deviation at site (walk, site, j, -)
    heap: list[tuple[Any, ...]] = [(h[s], 0, 0, 0.0, -1, -1, s, 0)]
    pop, push, record = heapq.heappop, heapq.heappush, trail.append
    expanded = 0
    while heap:
        entry = pop(heap)
        key, kind = entry[0], entry[2]
        if kind != 0:
            walk = walks[entry[3]]
            base = entry[6]
            if kind == 1:
                node = entry[4]
                x, j = node[1], 0
                for child in (node[2], node[3]):
                    if child is not None and base + child[0] <= limit:
                        seq += 1
                        push(heap, (base + child[0], seq, 1, entry[3], child, 0, base, 0))
            else:
                x, j = entry[4], entry[5]
            devs = deviations[x]
            if j + 1 < len(devs) and base + devs[j + 1][0] <= limit:
                seq += 1
                push(heap, (base + devs[j + 1][0], seq, 2, entry[3], x, j + 1, base, 0))
            _r, u, arc, w = devs[j]
            rec_x, g_x, mask_x = walk[x]
            if (mask_x >> u) & 1 or not (allowed >> u) & 1:
                continue
            seq += 1
            push(heap, (key, seq, 0, g_x + w, rec_x, arc, u, mask_x))
            continue
        _key, _seq, _kind, g, parent, arc_in, v, pmask = entry
        record((v, arc_in, parent))
        rec = len(trail) - 1
        mask = pmask | (1 << v)
        if v != t:
            x = v
            m = mask
            while x != t:
                x = succ[x]
                if (m >> x) & 1:
                    break
                m |= 1 << x
            else:  # loopless tree completion: emit it, queue its deviations as one entry
                new_walk: dict[int, tuple[int, float, int]] = {}
                x, gx, r, mx = v, g, rec, mask
                while x != t:
                    new_walk[x] = (r, gx, mx)
                    gx += succ_w[x]
                    arc = succ_arc[x]
                    x = succ[x]
                    record((x, arc, r))
                    r = len(trail) - 1
                    mx |= 1 << x
                root = heaps[v]
                if root is not None and key + root[0] <= limit:
                    walks.append(new_walk)
                    seq += 1
                    push(heap, (key + root[0], seq, 1, len(walks) - 1, root, 0, key, 0))
                rec, g, v = r, gx, t
        if v == t:
            out.add(trail, rec, g)
            found += 1
            if found >= k:
                break
            continue
        expanded += 1
        if expanded > MAX_EXPANSIONS:
            _CAPPED[0] += 1
            break
        if expanded > budget and not _reaches(adj, v, t, mask, allowed):
            continue
        for u, arc, w in adj[v]:
            if (mask >> u) & 1 or not (allowed >> u) & 1:
                continue
            fu = g + w + h[u]
            if fu <= limit:
                seq += 1
                push(heap, (fu, seq, 0, g + w, rec, arc, u, mask))
    return found


def _disjoint(adj: list[list[tuple[int, int, float]]], h: list[float], s: int, t: int, k: int, limit: float,
              n_links: int, allowed: int = -1) -> list[tuple[float, list[int], list[int]]]:
    """Successive shortest link-disjoint paths (greedy; see the module docstring)."""
    out: list[tuple[float, list[int], list[int]]] = []
    banned: set[int] = set()
    for _ in range(k):
        found = _k_shortest(adj, h, s, t, 1, limit, banned=banned, n_links=n_links, allowed=allowed)
        if not found:
            break
        out.append(found[0])
        banned.update(a % n_links for a in found[0][2])
    return out


@dataclass(frozen=True)
class _Found:
    """Search output as flat arrays: per path its pair (index into the searched pairs),
    latency, hops; arcs and sites of all paths concatenated in travel order."""

    pair: np.ndarray
    latency: np.ndarray
    hops: np.ndarray
    arcs: np.ndarray
    sites: np.ndarray

    @staticmethod
    def concat(parts: list[_Found], pair_maps: list[np.ndarray]) -> _Found:
        return _Found(np.concatenate([m[p.pair] for p, m in zip(parts, pair_maps, strict=True)]),
                      np.concatenate([p.latency for p in parts]), np.concatenate([p.hops for p in parts]),
                      np.concatenate([p.arcs for p in parts]), np.concatenate([p.sites for p in parts]))


def _search_group(args: tuple[_Topology, np.ndarray, np.ndarray, np.ndarray, int, bool]) -> _Found:
    """Paths for unordered pairs ``(src[i], dst[i])``; pairs are grouped by target."""
    topo, src, dst, limit, k, disjoint = args
    out = _FlatPaths()
    pair_of: list[int] = []
    if len(src) == 0:
        return out.to_found(pair_of)
    adj = topo.adjacency()
    blocks = _BlockTree(topo)
    targets, inverse = np.unique(dst, return_inverse=True)
    dist, pred = dijkstra(topo.graph(), directed=False, indices=targets, return_predecessors=True)
    if dist.ndim == 1:
        dist, pred = dist[None, :], pred[None, :]
    order = np.argsort(inverse, kind="stable")
    n_links = topo.n_links
    current = -1
    h: list[float] = []
    chain: list[int] = []
    tree: _TargetTree | None = None
    for i in order.tolist():
        ti = int(inverse[i])
        if ti != current:
            # h is a lower bound on the remaining latency; the margin absorbs the 1e-12 floor
            # given to zero-latency links in the Dijkstra graph
            h = (np.maximum(dist[ti] - 1e-9, 0.0)).tolist()
            chain = blocks.masks(int(targets[ti]))
            if not disjoint:
                tree = _TargetTree(topo, h, pred[ti], int(targets[ti]))
            current = ti
        s, t = int(src[i]), int(dst[i])
        lim = min(float(limit[i]) + 1e-9, 1e300)  # finite, so `f > lim` also drops unreachable sites
        if disjoint:
            paths = _disjoint(adj, h, s, t, k, lim, n_links, chain[s])
            for lat, sites, arcs in paths:
                out.add_path(lat, sites, arcs)
            n_found = len(paths)
        else:
            assert tree is not None
            n_found = _k_shortest_eppstein(adj, h, tree, s, t, k, lim, out, allowed=chain[s])
        pair_of.extend([i] * n_found)
    if _CAPPED[0]:
        logger.info("%d pair(s) hit the search budget of %d expansions; they keep the paths found so far",
                       _CAPPED[0], MAX_EXPANSIONS)
        _CAPPED[0] = 0
    return out.to_found(pair_of)


# ---------------------------------------------------------------------- public API
def candidate_paths(net: Network, pairs: pd.DataFrame | Sequence[tuple[str, str]], k: int = 4,
                    max_latency_ms: float | Sequence[float] | np.ndarray | None = None, disjoint: bool = False,
                    cache: bool = True, workers: int | None = None) -> PathSet:
    """The ``k`` lowest-latency loopless paths of each (src, dst) pair.

    Parameters
    ----------
    net
        The network (links are undirected, full duplex; weights are ``latency_ms``).
    pairs
        DataFrame with columns ``src``, ``dst`` (site ids), or a list of ``(src, dst)`` tuples.
        Duplicates are allowed (each row gets its own copy of the paths).
    k
        Paths per pair (at most).
    max_latency_ms
        One-way latency limit, scalar or one per pair (NaN: none). Longer paths are not
        candidates; a pair may get zero paths.
    disjoint
        Link-disjoint paths by successive shortest paths (see the module docstring).
    cache
        Reuse / store the result in the module LRU cache.
    workers
        Processes to spread the search over (default: ``min(2, cpu count)`` for large
        requests, else 1).

    Returns
    -------
    PathSet

    Raises
    ------
    ValidationError
        When a pair names an unknown site, has ``src == dst``, or ``k < 1``.

    Example
    -------
    >>> ps = candidate_paths(net, [("A", "C")], k=2)     # doctest: +SKIP
    >>> [ps.path_links(i) for i in ps.pair_paths(0)]     # doctest: +SKIP
    [['AC'], ['AB', 'BC']]
    """
    if k < 1:
        raise ValidationError(f"k must be >= 1, got {k}")
    frame = _pairs_frame(pairs)
    site_pos = pd.Series(np.arange(len(net.sites)), index=net.sites.index)
    src = site_pos.reindex(frame["src"]).to_numpy()
    dst = site_pos.reindex(frame["dst"]).to_numpy()
    problems = [Problem(f"unknown site {s!r}", table="pairs", record=str(r), field=f)
                for f, arr in (("src", src), ("dst", dst))
                for r, s in zip(frame.index[np.isnan(arr)], frame[f].to_numpy()[np.isnan(arr)], strict=True)]
    same = np.flatnonzero(src == dst)
    problems += [Problem("src and dst are the same site", table="pairs", record=str(r), field="dst") for r in same]
    if problems:
        raise ValidationError(problems)
    limit = _per_pair_limit(max_latency_ms, len(frame))
    key: tuple[Any, ...] | None = None
    if cache:
        ph = hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
        ph.update(limit.tobytes())
        key = (_topology_key(net), ph.hexdigest(), int(k), bool(disjoint))
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            logger.debug("candidate paths: cache hit (%d pairs)", len(frame))
            return hit
    topo = _topology(net)
    result = _build(topo, net, frame, src.astype(np.int64), dst.astype(np.int64), limit, int(k), bool(disjoint),
                    workers)
    if key is not None:
        _CACHE[key] = result
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return result


def clear_cache() -> None:
    """Empty the candidate-path cache."""
    _CACHE.clear()


def paths_after_failure(net: Network, failed_links: Sequence[str], pairs: pd.DataFrame | Sequence[tuple[str, str]],
                        k: int = 4, max_latency_ms: float | Sequence[float] | np.ndarray | None = None,
                        cache: bool = True) -> PathSet:
    """Candidate paths of ``net`` with ``failed_links`` down, on the *intact* link index.

    The intact network's (cached) paths are filtered with :meth:`PathSet.without_links`; only
    pairs that lost one of their ``k`` paths are searched again, on the failed network. The
    result is exactly ``candidate_paths(net.fail_links(failed_links), ...)``, but its
    incidences keep the columns of ``net.links.index`` so one formulation can be reused across
    failure scenarios (failed links simply carry no path).
    """
    base = candidate_paths(net, pairs, k=k, max_latency_ms=max_latency_ms, cache=cache)
    kept = base.without_links(failed_links)
    lost = (base.paths_per_pair == k) & (kept.paths_per_pair < k)
    if not lost.any():
        return kept
    failed = net.fail_links(failed_links)
    sub_pairs = base.pairs.loc[lost].reset_index(drop=True)
    limit = _per_pair_limit(max_latency_ms, len(base.pairs))[lost]
    sub = candidate_paths(failed, sub_pairs, k=k, max_latency_ms=limit, cache=False)
    # map the failed network's link positions back onto the intact index
    col_map = base.link_ids.get_indexer(sub.link_ids)
    n_links = len(base.link_ids)
    arc_map = np.concatenate([col_map, col_map + n_links])
    sub_arc = sub.arc_incidence.tocoo()
    arc = sp.csr_matrix((sub_arc.data, (sub_arc.row, arc_map[sub_arc.col])), shape=(sub.n_paths, 2 * n_links))
    sub_link = sub.link_incidence.tocoo()
    link = sp.csr_matrix((sub_link.data, (sub_link.row, col_map[sub_link.col])), shape=(sub.n_paths, n_links))
    lost_rows = np.flatnonzero(lost)
    kept = kept._subset(~lost[kept.path_pair])
    sub_arc_seq = arc_map[sub._arc_seq]
    merged = PathSet(
        base.link_ids, base.site_ids, base.pairs,
        np.concatenate([kept.path_pair, lost_rows[sub.path_pair]]),
        np.concatenate([kept.path_latency_ms, sub.path_latency_ms]),
        np.concatenate([kept.path_length_km, sub.path_length_km]),
        np.concatenate([kept.path_hops, sub.path_hops]),
        sp.vstack([kept.arc_incidence, arc], format="csr"),
        sp.vstack([kept.link_incidence, link], format="csr"),
        np.concatenate([kept._site_seq, sub._site_seq]),
        np.concatenate([kept._site_ptr[:-1], sub._site_ptr + len(kept._site_seq)]),
        np.concatenate([kept._arc_seq, sub_arc_seq]),
        np.concatenate([kept._arc_ptr[:-1], sub._arc_ptr + len(kept._arc_seq)]),
    )
    # both parts are latency-sorted within a pair: a stable sort by pair keeps that order
    return merged._take(np.argsort(merged.path_pair, kind="stable"))


def _pairs_frame(pairs: pd.DataFrame | Sequence[tuple[str, str]]) -> pd.DataFrame:
    if isinstance(pairs, pd.DataFrame):
        if not {"src", "dst"} <= set(pairs.columns):
            raise ValidationError("pairs need columns 'src' and 'dst'")
        frame = pairs[["src", "dst"]]
    else:
        frame = pd.DataFrame(list(pairs), columns=["src", "dst"])
    return pd.DataFrame({"src": frame["src"].astype(str).to_numpy(), "dst": frame["dst"].astype(str).to_numpy()})


def _build(topo: _Topology, net: Network, frame: pd.DataFrame, src: np.ndarray, dst: np.ndarray,
           limit: np.ndarray, k: int, disjoint: bool, workers: int | None) -> PathSet:
    """Search each unordered pair once (vectorised dedup), then assemble the incidences."""
    n_links = topo.n_links
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    # unique (lo, hi, limit) triples; the most permissive limit of duplicates is fine only when
    # equal, so the limit is part of the key
    keys = pd.DataFrame({"lo": lo, "hi": hi, "lim": limit})
    uniq = keys.drop_duplicates().reset_index(drop=True)
    back = pd.MultiIndex.from_frame(uniq).get_indexer(pd.MultiIndex.from_frame(keys))
    u_lo, u_hi, u_lim = (uniq["lo"].to_numpy(np.int64), uniq["hi"].to_numpy(np.int64),
                         uniq["lim"].to_numpy(float))
    n_uniq = len(uniq)
    if workers is None:
        workers = min(2, os.cpu_count() or 1) if n_uniq >= PARALLEL_MIN_PAIRS else 1
    found = _run_search(topo, u_lo, u_hi, u_lim, k, disjoint, workers)
    n_pairs = len(frame)
    n_arcs = max(2 * n_links, 1)
    # per searched path: offsets into the flat arrays; the paths of each unique pair, in order
    f_arc_ptr = np.concatenate([[0], np.cumsum(found.hops)])
    by_pair = np.argsort(found.pair, kind="stable")  # stable: a pair's paths stay latency-sorted
    counts_u = np.bincount(found.pair, minlength=n_uniq)
    first_u = np.concatenate([[0], np.cumsum(counts_u)])
    # requested pair r takes the paths of unique pair back[r], reversed when src > dst
    counts = counts_u[back]
    q = by_pair[_ranges(first_u[back], counts)]  # index into the searched paths, per output path
    path_pair = np.repeat(np.arange(n_pairs, dtype=np.int64), counts)
    rev = np.repeat(src > dst, counts)
    hops = found.hops[q]
    arc_flat, arc_ptr = _gather(found.arcs, f_arc_ptr[:-1][q], hops, rev)
    arc_flat = np.where(np.repeat(rev, hops), (arc_flat + n_links) % n_arcs, arc_flat)  # j <-> L + j
    site_flat, ptr = _gather(found.sites, f_arc_ptr[:-1][q] + q, hops + 1, rev)  # hops + 1 sites per path
    n_paths = len(path_pair)
    arc_inc = sp.csr_matrix((np.ones(len(arc_flat)), arc_flat.copy(), arc_ptr.copy()), shape=(n_paths, 2 * n_links))
    arc_inc.sort_indices()
    link_inc = sp.csr_matrix((np.ones(len(arc_flat)), arc_flat % max(n_links, 1), arc_ptr.copy()),
                             shape=(n_paths, n_links))
    link_inc.sort_indices()
    # latency and length summed from the link table (exact, independent of the search's floats)
    if len(found.arcs):
        link_of = found.arcs % max(n_links, 1)
        lat_f = np.add.reduceat(topo.latency_ms[link_of], f_arc_ptr[:-1])
        len_f = np.add.reduceat(topo.length_km[link_of], f_arc_ptr[:-1])
    else:
        lat_f = len_f = np.zeros(0)
    ps = PathSet(net.links.index.copy(), net.sites.index.copy(), frame, path_pair, lat_f[q], len_f[q], hops,
                 arc_inc, link_inc, site_flat, ptr, arc_flat, arc_ptr)
    logger.info("candidate paths: %d pairs (%d searched), %d paths, k=%d%s", n_pairs, n_uniq, n_paths, k,
                ", disjoint" if disjoint else "")
    return ps


def _run_search(topo: _Topology, lo: np.ndarray, hi: np.ndarray, lim: np.ndarray, k: int, disjoint: bool,
                workers: int) -> _Found:
    """Run the kernel, in one process or split by target over a pool."""
    if workers <= 1 or len(lo) < 2:
        return _search_group((topo, lo, hi, lim, k, disjoint))
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    # split by target so each worker computes each target's Dijkstra once; balance by pair count
    targets, counts = np.unique(hi, return_counts=True)
    bucket_of_target = np.zeros(targets.max() + 1, np.int64)
    loads = np.zeros(workers)
    for t, c in sorted(zip(targets.tolist(), counts.tolist(), strict=True), key=lambda x: -x[1]):
        b = int(np.argmin(loads))
        bucket_of_target[t] = b
        loads[b] += c
    bucket = bucket_of_target[hi]
    groups = [np.flatnonzero(bucket == b) for b in range(workers)]
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        parts = list(pool.map(_search_group, [(topo, lo[g], hi[g], lim[g], k, disjoint) for g in groups]))
    return _Found.concat(parts, groups)
