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
* The search runs in compiled code (:mod:`backbone.solver.paths.kernels`, numba, cached on disk):
  the same algorithm as the reference Python kernel in :mod:`backbone.solver.paths.reference`, with
  identical paths, order and tie-breaking (tests compare the two). Link-disjoint searches use the
  Python kernel.
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
import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.solver.core.deadline import Deadline, call_compiled
from backbone.solver.core.sparse import selector
from backbone.solver.paths.search import search_group
from backbone.solver.paths.topology import FoundPath, SearchTopology, build_topology, topology_key

logger = logging.getLogger(__name__)

CACHE_SIZE = 16
"""Number of path sets kept in the LRU cache."""

PARALLEL_MIN_PAIRS = 4000
"""Unordered pairs above which the search is spread over a process pool by default."""

_CACHE: OrderedDict[tuple[Any, ...], PathSet] = OrderedDict()

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
        return selector(self.path_pair, len(self.pairs), n)

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
        site_seq = self._site_seq[csr_ranges(self._site_ptr[:-1][idx], site_lens)]
        arc_seq = self._arc_seq[csr_ranges(self._arc_ptr[:-1][idx], arc_lens)]
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

    def reindex_links(self, link_ids: Sequence[str] | pd.Index) -> PathSet:
        """The same paths on another link index, a subset of this one (e.g. the links a failure
        leaves): arc ``j`` (``L + j``) moves to the new position of link ``j`` (plus ``L'``).

        Raises
        ------
        ValueError
            When a path uses a link missing from ``link_ids``.
        """
        ids = pd.Index(link_ids)
        n_new = len(ids)
        new_pos = ids.get_indexer(self.link_ids)
        arc_map = np.concatenate([new_pos, np.where(new_pos >= 0, new_pos + n_new, -1)])
        arc = self.arc_incidence.tocoo()
        link = self.link_incidence.tocoo()
        if (arc_map[arc.col] < 0).any():
            raise ValueError("a path uses a link that is not in the new index")
        n = self.n_paths
        arc_new = sp.csr_matrix((arc.data, (arc.row, arc_map[arc.col])), shape=(n, 2 * n_new))
        link_new = sp.csr_matrix((link.data, (link.row, new_pos[link.col])), shape=(n, n_new))
        return PathSet(ids, self.site_ids, self.pairs, self.path_pair, self.path_latency_ms, self.path_length_km,
                       self.path_hops, arc_new, link_new, self._site_seq, self._site_ptr, arc_map[self._arc_seq],
                       self._arc_ptr)

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


def csr_ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for each (s, n), vectorized."""
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return np.arange(total) + offs


def _per_pair_limit(max_latency_ms: Any, n_pairs: int) -> np.ndarray:
    if max_latency_ms is None:
        return np.full(n_pairs, np.inf)
    lim = np.broadcast_to(np.asarray(max_latency_ms, float), (n_pairs,)).copy()
    lim[np.isnan(lim)] = np.inf
    return lim


# ---------------------------------------------------------------------- public API
def candidate_paths(net: Network, pairs: pd.DataFrame | Sequence[tuple[str, str]], k_paths: int = 4,
                    max_latency_ms: float | Sequence[float] | np.ndarray | None = None, disjoint: bool = False,
                    cache: bool = True, workers: int | None = None, deadline: Deadline | None = None) -> PathSet:
    """The ``k_paths`` lowest-latency loopless paths of each (src, dst) pair.

    Parameters
    ----------
    net
        The network (links are undirected, full duplex; weights are ``latency_ms``).
    pairs
        DataFrame with columns ``src``, ``dst`` (site ids), or a list of ``(src, dst)`` tuples.
        Duplicates are allowed (each row gets its own copy of the paths).
    k_paths
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
    deadline
        Optional :class:`~backbone.solver.core.deadline.Deadline`, checked between chunks of targets
        (also in worker processes); nothing is cached when it stops the search.

    Returns
    -------
    PathSet

    Raises
    ------
    ValidationError
        When a pair names an unknown site, has ``src == dst``, or ``k_paths < 1``.
    TimeLimitReached
        When ``deadline`` passes during the search.

    Example
    -------
    >>> ps = candidate_paths(net, [("A", "C")], k_paths=2)     # doctest: +SKIP
    >>> [ps.path_links(i) for i in ps.pair_paths(0)]     # doctest: +SKIP
    [['AC'], ['AB', 'BC']]
    """
    if k_paths < 1:
        raise ValidationError(f"k_paths must be >= 1, got {k_paths}")
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
        key = (topology_key(net), ph.hexdigest(), k_paths, bool(disjoint))
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            logger.debug("candidate paths: cache hit (%d pairs)", len(frame))
            return hit
    topo = build_topology(net)
    result = _build(topo, net.links.index, net.sites.index, frame, src.astype(np.int64), dst.astype(np.int64), limit,
                    k_paths, bool(disjoint), workers, deadline)
    if key is not None:
        _CACHE[key] = result
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return result


def clear_cache() -> None:
    """Empty the candidate-path cache."""
    _CACHE.clear()


def paths_after_failure(net: Network, failed_links: Sequence[str], pairs: pd.DataFrame | Sequence[tuple[str, str]],
                        k_paths: int = 4, max_latency_ms: float | Sequence[float] | np.ndarray | None = None,
                        cache: bool = True) -> PathSet:
    """Candidate paths of ``net`` with ``failed_links`` down, on the *intact* link index.

    The intact network's (cached) paths are filtered with :meth:`PathSet.without_links`; only
    pairs that lost one of their ``k_paths`` paths are searched again, on the failed network. The
    result is exactly ``candidate_paths(net.fail_links(failed_links), ...)``, but its
    incidences keep the columns of ``net.links.index`` so one formulation can be reused across
    failure scenarios (failed links simply carry no path).
    """
    base = candidate_paths(net, pairs, k_paths=k_paths, max_latency_ms=max_latency_ms, cache=cache)
    kept = base.without_links(failed_links)
    lost = (base.paths_per_pair == k_paths) & (kept.paths_per_pair < k_paths)
    if not lost.any():
        return kept
    # the lost pairs searched again on the failed topology: the intact one's arrays without the failed links (what
    # build_topology(net.fail_links(failed_links)) gives, without copying the network and checking its pairs again)
    up = np.ones(len(base.link_ids), bool)
    up[base.link_ids.get_indexer(pd.Index(list(failed_links)))] = False
    topo = build_topology(net)
    failed = SearchTopology(topo.n_sites, topo.site_a[up], topo.site_b[up], topo.latency_ms[up], topo.length_km[up])
    sub_pairs = base.pairs.loc[lost].reset_index(drop=True)
    limit = _per_pair_limit(max_latency_ms, len(base.pairs))[lost]
    src = base.site_ids.get_indexer(sub_pairs["src"]).astype(np.int64)
    dst = base.site_ids.get_indexer(sub_pairs["dst"]).astype(np.int64)
    sub = _build(failed, base.link_ids[up], base.site_ids, sub_pairs, src, dst, limit, k_paths, False, None)
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


def _build(topo: SearchTopology, link_ids: pd.Index, site_ids: pd.Index, frame: pd.DataFrame, src: np.ndarray,
           dst: np.ndarray, limit: np.ndarray, k: int, disjoint: bool, workers: int | None,
           deadline: Deadline | None = None) -> PathSet:
    """Search each unordered pair once (vectorised dedup), then assemble the incidences (``link_ids`` and
    ``site_ids``: the ids of ``topo``'s links and sites, in its order)."""
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
    found = _run_search(topo, u_lo, u_hi, u_lim, k, disjoint, workers, deadline)
    n_pairs = len(frame)
    # per searched path: offsets into the flat arrays; the paths of each unique pair, in order
    f_arc_ptr = np.concatenate([[0], np.cumsum(found.hops)])
    by_pair = np.argsort(found.pair, kind="stable")  # stable: a pair's paths stay latency-sorted
    counts_u = np.bincount(found.pair, minlength=n_uniq)
    first_u = np.concatenate([[0], np.cumsum(counts_u)])
    # requested pair r takes the paths of unique pair back[r], reversed when src > dst
    counts = counts_u[back]
    q = by_pair[csr_ranges(first_u[back], counts)]  # index into the searched paths, per output path
    path_pair = np.repeat(np.arange(n_pairs, dtype=np.int64), counts)
    rev = np.repeat(src > dst, counts)
    hops = found.hops[q]
    from backbone.solver.paths.array_kernels import gather_paths

    arc_flat, arc_ptr, site_flat, ptr, arc_cols, link_cols = call_compiled(gather_paths, (
        found.arcs, found.sites, f_arc_ptr[:-1][q], f_arc_ptr[:-1][q] + q, hops, rev, n_links), deadline,
        "candidate path assembly")
    n_paths = len(path_pair)
    ones = np.ones(len(arc_flat))
    arc_inc = sp.csr_matrix((ones, arc_cols, arc_ptr.copy()), shape=(n_paths, 2 * n_links))
    arc_inc.has_sorted_indices = True
    link_inc = sp.csr_matrix((ones.copy(), link_cols, arc_ptr.copy()), shape=(n_paths, n_links))
    link_inc.has_sorted_indices = True
    # latency and length summed from the link table (exact, independent of the search's floats)
    if len(found.arcs):
        link_of = found.arcs % max(n_links, 1)
        lat_f = np.add.reduceat(topo.latency_ms[link_of], f_arc_ptr[:-1])
        len_f = np.add.reduceat(topo.length_km[link_of], f_arc_ptr[:-1])
    else:
        lat_f = len_f = np.zeros(0)
    ps = PathSet(link_ids.copy(), site_ids.copy(), frame, path_pair, lat_f[q], len_f[q], hops,
                 arc_inc, link_inc, site_flat, ptr, arc_flat, arc_ptr)
    logger.info("candidate paths: %d pairs (%d searched), %d paths, k=%d%s", n_pairs, n_uniq, n_paths, k,
                ", disjoint" if disjoint else "")
    return ps


def _run_search(topo: SearchTopology, lo: np.ndarray, hi: np.ndarray, lim: np.ndarray, k: int, disjoint: bool,
                workers: int, deadline: Deadline | None = None) -> FoundPath:
    """Run the kernel, in one process or split by target over a pool."""
    from backbone.solver.core.processes import capped_workers, pool_initializer

    workers = capped_workers(workers)
    if workers <= 1 or len(lo) < 2:
        return search_group((topo, lo, hi, lim, k, disjoint, deadline))
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
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=pool_initializer) as pool:
        parts = list(pool.map(search_group, [(topo, lo[g], hi[g], lim[g], k, disjoint, deadline) for g in groups]))
    return FoundPath.concat(parts, groups)
