"""Compiled (numba) kernels of the k-shortest loopless path search.

These are the same algorithm as the reference Python kernel
:func:`backbone.solver.paths.reference._k_shortest_eppstein` (best-first search over partial loopless
paths with exact ``h``, shortest-path-tree completions and Eppstein's persistent deviation heaps),
operation for operation: the same queue keys and insertion counters, the same float arithmetic and
the same tie-breaking, so the paths and their order are identical (tests compare both). The data
structures are flat arrays instead of Python objects:

* the queue is a binary heap of ``(key, seq)``; an entry's payload lives in arrays indexed by
  ``seq`` (kind 0: partial path ``g, parent record, arc, site``; kind 1: deviation-heap node of a
  walk; kind 2: ``j``-th deviation at a site of a walk);
* a partial path is a chain of records (``site, arc, parent``); membership tests mark the chain's
  sites in a stamp array instead of a bit mask;
* the persistent leftist heaps are node arrays (key, site, left, right, rank), path-copied on merge;
* the block-cut pruning tests an *arc*: its link's biconnected block must lie on the block-cut tree
  path between the source and the target (ancestor test on an Euler tour of the tree rooted at the
  target). For arcs between two sites of on-path blocks this is the same test as the reference's
  site masks (two blocks share at most one site, and the tree path is unique), so nothing changes.

Compiled with ``cache=True``: the machine code is stored beside this file in ``__pycache__``, or,
when the package is installed read-only, in numba's user cache directory (``NUMBA_CACHE_DIR``
overrides both). The first call in a fresh environment compiles for a few seconds; later processes
load the cache in well under a second.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_CACHE = True


@njit(cache=_CACHE)
def _reserve(arr: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - compiled
    """``arr``, or a copy grown by doubling, with room for index ``n``."""
    if n < arr.shape[0]:
        return arr
    size = max(16, arr.shape[0])
    while size <= n:
        size *= 2
    new = np.empty(size, arr.dtype)
    new[:arr.shape[0]] = arr
    return new


@njit(cache=_CACHE)
def _heap_push(hkey: np.ndarray, hseq: np.ndarray, hn: int, key: float, seq: int) -> int:  # pragma: no cover
    """Push ``(key, seq)`` on the binary heap of size ``hn`` (arrays large enough); return the size."""
    i = hn
    while i > 0:
        p = (i - 1) >> 1
        pk = hkey[p]
        if pk < key or (pk == key and hseq[p] < seq):
            break
        hkey[i] = pk
        hseq[i] = hseq[p]
        i = p
    hkey[i] = key
    hseq[i] = seq
    return hn + 1


@njit(cache=_CACHE)
def _heap_pop(hkey: np.ndarray, hseq: np.ndarray, hn: int) -> int:  # pragma: no cover - compiled
    """Remove the root of the heap of size ``hn`` (the caller read it); return the new size."""
    hn -= 1
    if hn == 0:
        return 0
    key = hkey[hn]
    seq = hseq[hn]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= hn:
            break
        if c + 1 < hn:
            k1, k2 = hkey[c], hkey[c + 1]
            if k2 < k1 or (k2 == k1 and hseq[c + 1] < hseq[c]):
                c += 1
        ck = hkey[c]
        if key < ck or (key == ck and seq < hseq[c]):
            break
        hkey[i] = ck
        hseq[i] = hseq[c]
        i = c
    hkey[i] = key
    hseq[i] = seq
    return hn


@njit(cache=_CACHE)
def _target_tree(n: int, tail: np.ndarray, head: np.ndarray, w: np.ndarray, h: np.ndarray, pred: np.ndarray,
                 target: int):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Shortest-path tree towards ``target``, sorted deviations and persistent deviation heaps.

    Mirrors :class:`backbone.solver.paths.reference._TargetTree`.
    """
    succ, succ_arc, succ_w, dev_ptr, dev_arc, dev_r = _tree_deviations(n, tail, head, w, h, pred, target)
    hp_key, hp_site, hp_left, hp_right, root = _deviation_heaps(n, h, succ, dev_ptr, dev_r)
    return succ, succ_arc, succ_w, dev_ptr, dev_arc, dev_r, hp_key, hp_site, hp_left, hp_right, root


@njit(cache=_CACHE)
def _tree_deviations(n: int, tail: np.ndarray, head: np.ndarray, w: np.ndarray, h: np.ndarray, pred: np.ndarray,
                     target: int):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Each site's tree arc (successor, arc, latency) and its deviation arcs (CSR) sorted by reduced cost."""
    n_arcs = tail.shape[0]
    succ = np.full(n, -1, np.int64)
    succ_arc = np.full(n, -1, np.int64)
    succ_w = np.zeros(n)
    for a in range(n_arcs):  # tree arc of each tail: lowest latency, then lowest arc index
        x = tail[a]
        if head[a] == pred[x] and (succ_arc[x] < 0 or w[a] < succ_w[x]):
            succ[x] = head[a]
            succ_arc[x] = a
            succ_w[x] = w[a]
    counts = np.zeros(n + 1, np.int64)
    for a in range(n_arcs):
        x = tail[a]
        if succ_arc[x] != a and np.isfinite(h[head[a]]) and np.isfinite(h[x]) and x != target:
            counts[x + 1] += 1
    dev_ptr = np.cumsum(counts)
    m = dev_ptr[n]
    dev_arc = np.empty(m, np.int64)
    dev_r = np.empty(m)
    fill = dev_ptr[:n].copy()
    for a in range(n_arcs):  # arc order within a tail
        x = tail[a]
        if succ_arc[x] != a and np.isfinite(h[head[a]]) and np.isfinite(h[x]) and x != target:
            dev_arc[fill[x]] = a
            dev_r[fill[x]] = max(w[a] + h[head[a]] - h[x], 0.0)
            fill[x] += 1
    for x in range(n):  # by reduced cost, ties by arc index (stable insertion sort; lists are short)
        lo, hi = dev_ptr[x], dev_ptr[x + 1]
        for i in range(lo + 1, hi):
            r_i = dev_r[i]
            a_i = dev_arc[i]
            p = i
            while p > lo and dev_r[p - 1] > r_i:
                dev_r[p] = dev_r[p - 1]
                dev_arc[p] = dev_arc[p - 1]
                p -= 1
            dev_r[p] = r_i
            dev_arc[p] = a_i
    return succ, succ_arc, succ_w, dev_ptr, dev_arc, dev_r


@njit(cache=_CACHE)
def _deviation_heaps(n: int, h: np.ndarray, succ: np.ndarray, dev_ptr: np.ndarray,
                     dev_r: np.ndarray):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Persistent leftist heaps H_T(x) = insert(H_T(succ x), best deviation of x): node arrays and roots."""
    cap = 4 * n + 16
    hp_key = np.empty(cap)
    hp_site = np.empty(cap, np.int64)
    hp_left = np.empty(cap, np.int64)
    hp_right = np.empty(cap, np.int64)
    hp_rank = np.empty(cap, np.int64)
    nn = 0
    root = np.full(n, -1, np.int64)
    done = np.zeros(n, np.bool_)
    depth_order = np.argsort(h, kind="mergesort")
    stack = np.empty(n + 1, np.int64)
    spine = np.empty(n + 64, np.int64)
    for x in depth_order:
        if not np.isfinite(h[x]) or done[x]:
            continue
        sp_n = 1
        stack[0] = x
        while sp_n > 0:
            y = stack[sp_n - 1]
            p = succ[y]
            if p >= 0 and not done[p]:
                stack[sp_n] = p
                sp_n += 1
                continue
            sp_n -= 1
            if done[y]:
                continue
            base = root[p] if p >= 0 else -1
            if dev_ptr[y + 1] > dev_ptr[y]:
                # new singleton node, then merge(base, singleton) by path copying
                if nn + 2 * (n + 64) >= hp_key.shape[0]:
                    size = 2 * hp_key.shape[0] + 2 * (n + 64)
                    hp_key = np.concatenate((hp_key, np.empty(size - hp_key.shape[0])))
                    hp_site = np.concatenate((hp_site, np.empty(size - hp_site.shape[0], np.int64)))
                    hp_left = np.concatenate((hp_left, np.empty(size - hp_left.shape[0], np.int64)))
                    hp_right = np.concatenate((hp_right, np.empty(size - hp_right.shape[0], np.int64)))
                    hp_rank = np.concatenate((hp_rank, np.empty(size - hp_rank.shape[0], np.int64)))
                b = nn
                hp_key[b] = dev_r[dev_ptr[y]]
                hp_site[b] = y
                hp_left[b] = -1
                hp_right[b] = -1
                hp_rank[b] = 1
                nn += 1
                a = base
                depth = 0
                while a >= 0 and b >= 0:
                    if hp_key[b] < hp_key[a]:
                        a, b = b, a
                    if depth >= spine.shape[0]:
                        spine = np.concatenate((spine, np.empty(spine.shape[0], np.int64)))
                    spine[depth] = a
                    depth += 1
                    a = hp_right[a]
                res = a if a >= 0 else b
                for i in range(depth - 1, -1, -1):
                    xn = spine[i]
                    left = hp_left[xn]
                    right = res
                    if left < 0 or (right >= 0 and hp_rank[left] < hp_rank[right]):
                        left, right = right, left
                    hp_key[nn] = hp_key[xn]
                    hp_site[nn] = hp_site[xn]
                    hp_left[nn] = left
                    hp_right[nn] = right
                    hp_rank[nn] = (hp_rank[right] if right >= 0 else 0) + 1
                    res = nn
                    nn += 1
                root[y] = res
            else:
                root[y] = base
            done[y] = True
    return hp_key, hp_site, hp_left, hp_right, root


@njit(cache=_CACHE)
def _euler(n_nodes: int, tree_ptr: np.ndarray, tree_adj: np.ndarray, root: int):  # type: ignore[no-untyped-def]
    """Entry / exit times of a DFS of the block-cut tree from ``root`` (-1: another component)."""  # pragma: no cover
    tin = np.full(n_nodes, -1, np.int64)
    tout = np.full(n_nodes, -1, np.int64)
    if root < 0:
        return tin, tout
    stack = np.empty(n_nodes + 1, np.int64)
    it = np.empty(n_nodes + 1, np.int64)
    clock = 0
    stack[0] = root
    it[0] = tree_ptr[root]
    tin[root] = clock
    clock += 1
    depth = 1
    while depth > 0:
        x = stack[depth - 1]
        i = it[depth - 1]
        if i < tree_ptr[x + 1]:
            it[depth - 1] = i + 1
            y = tree_adj[i]
            if tin[y] < 0:
                tin[y] = clock
                clock += 1
                stack[depth] = y
                it[depth] = tree_ptr[y]
                depth += 1
        else:
            tout[x] = clock
            clock += 1
            depth -= 1
    return tin, tout


@njit(cache=_CACHE)
def _reserve_queue(hkey: np.ndarray, hseq: np.ndarray, p_kind: np.ndarray, p_g: np.ndarray, p_a: np.ndarray,
                   p_b: np.ndarray, p_c: np.ndarray, n: int):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The queue's heap and payload arrays with room above index ``n``. They grow together: the heap never
    holds more entries than were created, so its capacity follows the payload's."""
    return (_reserve(hkey, n), _reserve(hseq, n), _reserve(p_kind, n), _reserve(p_g, n), _reserve(p_a, n),
            _reserve(p_b, n), _reserve(p_c, n))


@njit(cache=_CACHE)
def _push(hkey: np.ndarray, hseq: np.ndarray, hn: int, p_kind: np.ndarray, p_g: np.ndarray, p_a: np.ndarray,
          p_b: np.ndarray, p_c: np.ndarray, seq: int, kind: int, g: float, a: int, b: int, c: int,
          key: float) -> int:  # pragma: no cover - compiled
    """Queue entry ``seq`` (payload ``kind, g, a, b, c``) with ``key`` (room reserved); return the heap size."""
    p_kind[seq] = kind
    p_g[seq] = g
    p_a[seq] = a
    p_b[seq] = b
    p_c[seq] = c
    return _heap_push(hkey, hseq, hn, key, seq)


@njit(cache=_CACHE)
def _arc_allowed(arc: int, trivial: bool, arc_block: np.ndarray, tin: np.ndarray, tout: np.ndarray, hs_in: int,
                 hs_out: int) -> bool:  # pragma: no cover - compiled
    """Block-cut pruning: the arc's block lies on the block-cut tree path between source and target."""
    if trivial:
        return True
    b = arc_block[arc]
    return tin[b] <= hs_in and hs_out <= tout[b] and tin[b] >= 0


@njit(cache=_CACHE)
def _on_chain(rec: int, site: int, tr_site: np.ndarray, tr_parent: np.ndarray) -> bool:  # pragma: no cover
    """Whether ``site`` is on the partial path ending in record ``rec``."""
    r = rec
    while r >= 0:
        if tr_site[r] == site:
            return True
        r = tr_parent[r]
    return False


@njit(cache=_CACHE)
def _mark_chain(rec: int, tr_site: np.ndarray, tr_parent: np.ndarray, mark: np.ndarray,
                epoch: int) -> None:  # pragma: no cover - compiled
    """Stamp the sites of the partial path ending in record ``rec`` with ``epoch``."""
    r = rec
    while r >= 0:
        mark[tr_site[r]] = epoch
        r = tr_parent[r]


@njit(cache=_CACHE)
def _completion_loopless(v: int, t: int, succ: np.ndarray, mark: np.ndarray, epoch: int, mark2: np.ndarray,
                         epoch2: int) -> bool:  # pragma: no cover - compiled
    """Whether the tree completion from ``v`` to ``t`` avoids the marked partial path (and itself)."""
    x = v
    while x != t:
        x = succ[x]
        if mark[x] == epoch or mark2[x] == epoch2:
            return False
        mark2[x] = epoch2
    return True


@njit(cache=_CACHE)
def _record_completion(v: int, t: int, g: float, rec: int, succ: np.ndarray, succ_arc: np.ndarray,
                       succ_w: np.ndarray, wk_site: np.ndarray, wk_rec: np.ndarray, wk_g: np.ndarray, nq: int,
                       tr_site: np.ndarray, tr_arc: np.ndarray, tr_parent: np.ndarray,
                       n_tr: int):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Write the tree completion of partial path ``rec`` (at ``v``, latency ``g``) as walk entries from ``nq``
    (site, record, latency there) and as path records (room reserved); return ``(nq, last record, latency at
    t, n_tr)``."""
    x = v
    gx = g
    r = rec
    while x != t:
        wk_site[nq] = x
        wk_rec[nq] = r
        wk_g[nq] = gx
        nq += 1
        gx += succ_w[x]
        arc = succ_arc[x]
        x = succ[x]
        tr_site[n_tr] = x
        tr_arc[n_tr] = arc
        tr_parent[n_tr] = r
        r = n_tr
        n_tr += 1
    return nq, r, gx, n_tr


@njit(cache=_CACHE)
def _emit_path(rec: int, g: float, pid: int, tr_site: np.ndarray, tr_arc: np.ndarray, tr_parent: np.ndarray,
               chain: np.ndarray, out_pair: np.ndarray, out_lat: np.ndarray, out_hops: np.ndarray,
               out_arcs: np.ndarray, out_sites: np.ndarray, n_out: int, n_out_arcs: int,
               n_out_sites: int):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Append the path of record ``rec`` (latency ``g``, pair ``pid``) to the output (room reserved): its
    sites and arcs in travel order; return the new ``(n_out, n_out_arcs, n_out_sites)``."""
    length = 0
    r = rec
    while r >= 0:
        chain[length] = r
        length += 1
        r = tr_parent[r]
    out_pair[n_out] = pid
    out_lat[n_out] = g
    out_hops[n_out] = length - 1
    for i in range(length - 1, -1, -1):
        out_sites[n_out_sites] = tr_site[chain[i]]
        n_out_sites += 1
        if i < length - 1:
            out_arcs[n_out_arcs] = tr_arc[chain[i]]
            n_out_arcs += 1
    return n_out + 1, n_out_arcs, n_out_sites


@njit(cache=_CACHE)
def _reaches_target(v: int, t: int, adj_ptr: np.ndarray, adj_arc: np.ndarray, head: np.ndarray, mark: np.ndarray,
                    epoch: int, mark2: np.ndarray, epoch2: int, stack: np.ndarray, trivial: bool,
                    arc_block: np.ndarray, tin: np.ndarray, tout: np.ndarray, hs_in: int,
                    hs_out: int) -> bool:  # pragma: no cover - compiled
    """Whether ``t`` can be reached from ``v`` without entering the marked partial path (depth-first)."""
    top = 1
    stack[0] = v
    mark2[v] = epoch2
    while top > 0:
        top -= 1
        y = stack[top]
        for q in range(adj_ptr[y], adj_ptr[y + 1]):
            a2 = adj_arc[q]
            u = head[a2]
            if u == t:
                return True
            if mark[u] == epoch or mark2[u] == epoch2:
                continue
            if not _arc_allowed(a2, trivial, arc_block, tin, tout, hs_in, hs_out):
                continue
            mark2[u] = epoch2
            stack[top] = u
            top += 1
    return False


@njit(cache=_CACHE)
def _push_neighbours(v: int, g: float, rec: int, limit: float, h: np.ndarray, w: np.ndarray, head: np.ndarray,  # noqa: PLR0913  numba kernel: flat arrays, no objects in nopython mode
                     adj_ptr: np.ndarray, adj_arc: np.ndarray, mark: np.ndarray, epoch: int, hkey: np.ndarray,
                     hseq: np.ndarray, hn: int, p_kind: np.ndarray, p_g: np.ndarray, p_a: np.ndarray,
                     p_b: np.ndarray, p_c: np.ndarray, seq: int, trivial: bool, arc_block: np.ndarray,
                     tin: np.ndarray, tout: np.ndarray, hs_in: int,
                     hs_out: int):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Expand the partial path ``rec`` at ``v`` (latency ``g``): queue each extension by an arc to a site off the
    path, in an on-path block, within ``limit`` (room reserved); return ``(hn, seq)``."""
    for q in range(adj_ptr[v], adj_ptr[v + 1]):
        a2 = adj_arc[q]
        u = head[a2]
        if mark[u] == epoch or not _arc_allowed(a2, trivial, arc_block, tin, tout, hs_in, hs_out):
            continue
        gu = g + w[a2]
        fu = gu + h[u]
        if fu <= limit:
            seq += 1
            hn = _push(hkey, hseq, hn, p_kind, p_g, p_a, p_b, p_c, seq, 0, gu, rec, a2, u, fu)
    return hn, seq


@njit(cache=_CACHE)
def _push_deviation(sq: int, key: float, limit: float, hkey: np.ndarray, hseq: np.ndarray, hn: int,  # noqa: PLR0913  numba kernel: flat arrays, no objects in nopython mode
                    p_kind: np.ndarray, p_g: np.ndarray, p_a: np.ndarray, p_b: np.ndarray, p_c: np.ndarray, seq: int,
                    hp_key: np.ndarray, hp_site: np.ndarray, hp_left: np.ndarray, hp_right: np.ndarray,
                    dev_ptr: np.ndarray, dev_arc: np.ndarray, dev_r: np.ndarray, head: np.ndarray, w: np.ndarray,
                    wk_ptr: np.ndarray, wk_site: np.ndarray, wk_rec: np.ndarray, wk_g: np.ndarray,
                    tr_site: np.ndarray, tr_parent: np.ndarray, trivial: bool, arc_block: np.ndarray,
                    tin: np.ndarray, tout: np.ndarray, hs_in: int,
                    hs_out: int):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """A popped deviation entry ``sq`` (kind 1: a node of a walk's deviation heap; kind 2: the ``j``-th deviation
    at a site of a walk): queue what follows it (the node's children, the site's next deviation) and the partial
    path that takes the deviation, unless it loops or leaves the on-path blocks (room reserved); return
    ``(hn, seq)``."""
    wi = p_a[sq]
    base = p_g[sq]
    if p_kind[sq] == 1:
        node = p_b[sq]
        x = hp_site[node]
        j = 0
        for side in range(2):
            child = hp_left[node] if side == 0 else hp_right[node]
            if child >= 0 and base + hp_key[child] <= limit:
                seq += 1
                hn = _push(hkey, hseq, hn, p_kind, p_g, p_a, p_b, p_c, seq, 1, base, wi, child, 0,
                           base + hp_key[child])
    else:
        x = p_b[sq]
        j = p_c[sq]
    d0 = dev_ptr[x]
    if j + 1 < dev_ptr[x + 1] - d0 and base + dev_r[d0 + j + 1] <= limit:
        seq += 1
        hn = _push(hkey, hseq, hn, p_kind, p_g, p_a, p_b, p_c, seq, 2, base, wi, x, j + 1, base + dev_r[d0 + j + 1])
    arc = dev_arc[d0 + j]
    u = head[arc]
    rec_x = -1  # walk wi at x: its record and latency
    g_x = 0.0
    for q in range(wk_ptr[wi], wk_ptr[wi + 1]):
        if wk_site[q] == x:
            rec_x = wk_rec[q]
            g_x = wk_g[q]
            break
    if _on_chain(rec_x, u, tr_site, tr_parent) or not _arc_allowed(arc, trivial, arc_block, tin, tout, hs_in, hs_out):
        return hn, seq
    seq += 1
    hn = _push(hkey, hseq, hn, p_kind, p_g, p_a, p_b, p_c, seq, 0, g_x + w[arc], rec_x, arc, u, key)
    return hn, seq


@njit(cache=_CACHE)
def search_targets(n: int, n_links: int, tail: np.ndarray, head: np.ndarray, w: np.ndarray,  # noqa: C901, PLR0912, PLR0913, PLR0915  numba kernel mirroring path_search's loop
                   adj_ptr: np.ndarray, adj_arc: np.ndarray, arc_block: np.ndarray, site_home: np.ndarray,
                   tree_ptr: np.ndarray, tree_adj: np.ndarray, trivial: bool,
                   targets: np.ndarray, dist: np.ndarray, pred: np.ndarray,
                   pair_ptr: np.ndarray, pair_src: np.ndarray, pair_lim: np.ndarray, pair_id: np.ndarray,
                   k: int, budget: int, max_expansions: int):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The ``k`` lowest-latency loopless paths of every pair, for a chunk of targets.

    Target ``targets[i]`` (``dist[i]``, ``pred[i]``: scipy Dijkstra rows) serves the pairs
    ``pair_ptr[i]:pair_ptr[i+1]`` (sources ``pair_src``, limits ``pair_lim``, ids ``pair_id``).
    Returns per path its pair id, latency and hops, the arcs and sites of all paths in travel
    order, and the number of pairs that hit ``max_expansions``.

    Scratch and output arrays grow before each popped entry is handled, by what one entry can add at
    most (queue: its pushes; records and walks: one tree completion; output: one path), so the helpers
    write into room already there.
    """
    out_pair, out_lat, out_hops = np.empty(1024, np.int64), np.empty(1024), np.empty(1024, np.int64)
    out_arcs, out_sites = np.empty(4096, np.int64), np.empty(4096, np.int64)
    n_out = n_out_arcs = n_out_sites = capped = 0
    n_tree = tree_ptr.shape[0] - 1
    room = max(4, np.max(adj_ptr[1:] - adj_ptr[:-1]) if n > 0 else 0) + 1  # most pushes of one popped entry
    # per pair scratch (reset by counters, grown on demand)
    hkey, hseq = np.empty(1024), np.empty(1024, np.int64)
    p_kind, p_g, p_a, p_b, p_c = (np.empty(1024, np.int64), np.empty(1024), np.empty(1024, np.int64),
                                  np.empty(1024, np.int64), np.empty(1024, np.int64))
    tr_site, tr_arc, tr_parent = np.empty(1024, np.int64), np.empty(1024, np.int64), np.empty(1024, np.int64)
    wk_ptr = np.empty(256, np.int64)
    wk_site, wk_rec, wk_g = np.empty(1024, np.int64), np.empty(1024, np.int64), np.empty(1024)
    mark, mark2 = np.zeros(n, np.int64), np.zeros(n, np.int64)
    epoch = epoch2 = 0
    stack, chain = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
    for ti in range(targets.shape[0]):
        t = targets[ti]
        h = np.maximum(dist[ti] - 1e-9, 0.0)
        succ, succ_arc, succ_w, dev_ptr, dev_arc, dev_r, hp_key, hp_site, hp_left, hp_right, hroot = \
            _target_tree(n, tail, head, w, h, pred[ti], t)
        if trivial:
            tin, tout = np.zeros(1, np.int64), np.zeros(1, np.int64)
        else:
            tin, tout = _euler(n_tree, tree_ptr, tree_adj, site_home[t])
        for pi in range(pair_ptr[ti], pair_ptr[ti + 1]):
            s, limit, pid = pair_src[pi], pair_lim[pi], pair_id[pi]
            if not np.isfinite(h[s]) or h[s] > limit:
                continue
            hs_in = hs_out = 0
            if not trivial:
                hs = site_home[s]
                if hs < 0 or tin[hs] < 0:
                    continue  # cannot happen with finite h; kept for safety
                hs_in, hs_out = tin[hs], tout[hs]
            found = seq = expanded = n_tr = n_wk = 0
            wk_ptr[0] = 0
            # initial entry: partial path (s), g = 0
            hn = _push(hkey, hseq, 0, p_kind, p_g, p_a, p_b, p_c, 0, 0, 0.0, -1, -1, s, h[s])
            while hn > 0:
                key, sq = hkey[0], hseq[0]
                hn = _heap_pop(hkey, hseq, hn)
                if seq + room >= p_kind.shape[0]:
                    hkey, hseq, p_kind, p_g, p_a, p_b, p_c = _reserve_queue(hkey, hseq, p_kind, p_g, p_a, p_b, p_c,
                                                                            seq + room)
                if p_kind[sq] != 0:
                    hn, seq = _push_deviation(sq, key, limit, hkey, hseq, hn, p_kind, p_g, p_a, p_b, p_c, seq,
                                              hp_key, hp_site, hp_left, hp_right, dev_ptr, dev_arc, dev_r, head, w,
                                              wk_ptr, wk_site, wk_rec, wk_g, tr_site, tr_parent, trivial, arc_block,
                                              tin, tout, hs_in, hs_out)
                    continue
                if n_tr + n + 1 >= tr_site.shape[0]:  # one record and one tree completion
                    tr_site, tr_arc, tr_parent = (_reserve(tr_site, n_tr + n + 1), _reserve(tr_arc, n_tr + n + 1),
                                                  _reserve(tr_parent, n_tr + n + 1))
                nq = wk_ptr[n_wk]
                if nq + n >= wk_site.shape[0]:
                    wk_site, wk_rec, wk_g = _reserve(wk_site, nq + n), _reserve(wk_rec, nq + n), _reserve(wk_g, nq + n)
                if n_wk + 2 >= wk_ptr.shape[0]:
                    wk_ptr = _reserve(wk_ptr, n_wk + 2)
                g, v, rec = p_g[sq], p_c[sq], n_tr
                tr_site[rec], tr_arc[rec], tr_parent[rec] = v, p_b[sq], p_a[sq]
                n_tr += 1
                epoch += 1
                _mark_chain(rec, tr_site, tr_parent, mark, epoch)
                if v != t:
                    epoch2 += 1
                    if _completion_loopless(v, t, succ, mark, epoch, mark2, epoch2):
                        # emit the tree completion; queue its deviations as one entry
                        nq, last, gt, n_tr = _record_completion(v, t, g, rec, succ, succ_arc, succ_w, wk_site, wk_rec,
                                                                wk_g, nq, tr_site, tr_arc, tr_parent, n_tr)
                        hr = hroot[v]
                        if hr >= 0 and key + hp_key[hr] <= limit:
                            n_wk += 1
                            wk_ptr[n_wk] = nq
                            seq += 1
                            hn = _push(hkey, hseq, hn, p_kind, p_g, p_a, p_b, p_c, seq, 1, key, n_wk - 1, hr, 0,
                                       key + hp_key[hr])
                        rec, g, v = last, gt, t
                if v == t:  # emit the path of record rec
                    out_pair, out_lat, out_hops = (_reserve(out_pair, n_out), _reserve(out_lat, n_out),
                                                   _reserve(out_hops, n_out))
                    out_sites, out_arcs = _reserve(out_sites, n_out_sites + n), _reserve(out_arcs, n_out_arcs + n)
                    n_out, n_out_arcs, n_out_sites = _emit_path(rec, g, pid, tr_site, tr_arc, tr_parent, chain,
                                                                out_pair, out_lat, out_hops, out_arcs, out_sites,
                                                                n_out, n_out_arcs, n_out_sites)
                    found += 1
                    if found >= k:
                        break
                    continue
                expanded += 1
                if expanded > max_expansions:
                    capped += 1
                    break
                if expanded > budget:  # dead end unless t can be reached without entering the path's sites
                    epoch2 += 1
                    if not _reaches_target(v, t, adj_ptr, adj_arc, head, mark, epoch, mark2, epoch2, stack, trivial,
                                           arc_block, tin, tout, hs_in, hs_out):
                        continue
                hn, seq = _push_neighbours(v, g, rec, limit, h, w, head, adj_ptr, adj_arc, mark, epoch, hkey, hseq,
                                           hn, p_kind, p_g, p_a, p_b, p_c, seq, trivial, arc_block, tin, tout, hs_in,
                                           hs_out)
    return (out_pair[:n_out].copy(), out_lat[:n_out].copy(), out_hops[:n_out].copy(),
            out_arcs[:n_out_arcs].copy(), out_sites[:n_out_sites].copy(), capped)
