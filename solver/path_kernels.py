"""Compiled (numba) kernels of the k-shortest loopless path search.

These are the same algorithm as the reference Python kernel
:func:`backbone.solver.path_search._k_shortest_eppstein` (best-first search over partial loopless
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
def _grow_i(arr: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - compiled
    if n < arr.shape[0]:
        return arr
    new = np.empty(max(16, 2 * arr.shape[0]), arr.dtype)
    new[:arr.shape[0]] = arr
    return new


@njit(cache=_CACHE)
def _grow_f(arr: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - compiled
    if n < arr.shape[0]:
        return arr
    new = np.empty(max(16, 2 * arr.shape[0]), arr.dtype)
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

    Mirrors :class:`backbone.solver.path_search._TargetTree`.
    """
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
    # persistent leftist heaps H_T(x) = insert(H_T(succ x), best deviation of x)
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
    return succ, succ_arc, succ_w, dev_ptr, dev_arc, dev_r, hp_key, hp_site, hp_left, hp_right, root


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
def search_targets(n: int, n_links: int, tail: np.ndarray, head: np.ndarray, w: np.ndarray,
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
    """
    out_pair = np.empty(1024, np.int64)
    out_lat = np.empty(1024)
    out_hops = np.empty(1024, np.int64)
    out_arcs = np.empty(4096, np.int64)
    out_sites = np.empty(4096, np.int64)
    n_out = 0
    n_out_arcs = 0
    n_out_sites = 0
    capped = 0
    n_tree = tree_ptr.shape[0] - 1
    # per pair scratch (reset by counters, grown on demand)
    hkey = np.empty(1024)
    hseq = np.empty(1024, np.int64)
    p_kind = np.empty(1024, np.int64)
    p_g = np.empty(1024)
    p_a = np.empty(1024, np.int64)
    p_b = np.empty(1024, np.int64)
    p_c = np.empty(1024, np.int64)
    tr_site = np.empty(1024, np.int64)
    tr_arc = np.empty(1024, np.int64)
    tr_parent = np.empty(1024, np.int64)
    wk_ptr = np.empty(256, np.int64)
    wk_site = np.empty(1024, np.int64)
    wk_rec = np.empty(1024, np.int64)
    wk_g = np.empty(1024)
    mark = np.zeros(n, np.int64)
    mark2 = np.zeros(n, np.int64)
    epoch = 0
    epoch2 = 0
    stack = np.empty(n + 1, np.int64)
    chain = np.empty(n + 1, np.int64)
    for ti in range(targets.shape[0]):
        t = targets[ti]
        h = np.maximum(dist[ti] - 1e-9, 0.0)
        succ, succ_arc, succ_w, dev_ptr, dev_arc, dev_r, hp_key, hp_site, hp_left, hp_right, hroot = \
            _target_tree(n, tail, head, w, h, pred[ti], t)
        if trivial:
            tin = np.zeros(1, np.int64)
            tout = np.zeros(1, np.int64)
        else:
            tin, tout = _euler(n_tree, tree_ptr, tree_adj, site_home[t])
        for pi in range(pair_ptr[ti], pair_ptr[ti + 1]):
            s = pair_src[pi]
            limit = pair_lim[pi]
            pid = pair_id[pi]
            if not np.isfinite(h[s]) or h[s] > limit:
                continue
            hs_in = 0
            hs_out = 0
            if not trivial:
                hs = site_home[s]
                if hs < 0 or tin[hs] < 0:
                    continue  # cannot happen with finite h; kept for safety
                hs_in = tin[hs]
                hs_out = tout[hs]
            found = 0
            seq = 0
            expanded = 0
            n_tr = 0
            n_wk = 0
            wk_ptr[0] = 0
            hn = 0
            # initial entry: partial path (s), g = 0
            p_kind[0] = 0
            p_g[0] = 0.0
            p_a[0] = -1
            p_b[0] = -1
            p_c[0] = s
            hn = _heap_push(hkey, hseq, hn, h[s], 0)
            while hn > 0:
                key = hkey[0]
                sq = hseq[0]
                hn = _heap_pop(hkey, hseq, hn)
                kind = p_kind[sq]
                if kind != 0:
                    wi = p_a[sq]
                    base = p_g[sq]
                    if kind == 1:
                        node = p_b[sq]
                        x = hp_site[node]
                        j = 0
                        for side in range(2):
                            child = hp_left[node] if side == 0 else hp_right[node]
                            if child >= 0 and base + hp_key[child] <= limit:
                                seq += 1
                                if seq >= p_kind.shape[0]:
                                    p_kind = _grow_i(p_kind, seq)
                                    p_g = _grow_f(p_g, seq)
                                    p_a = _grow_i(p_a, seq)
                                    p_b = _grow_i(p_b, seq)
                                    p_c = _grow_i(p_c, seq)
                                if hn >= hkey.shape[0]:
                                    hkey = _grow_f(hkey, hn)
                                    hseq = _grow_i(hseq, hn)
                                p_kind[seq] = 1
                                p_g[seq] = base
                                p_a[seq] = wi
                                p_b[seq] = child
                                hn = _heap_push(hkey, hseq, hn, base + hp_key[child], seq)
                    else:
                        x = p_b[sq]
                        j = p_c[sq]
                    d0 = dev_ptr[x]
                    nd = dev_ptr[x + 1] - d0
                    if j + 1 < nd and base + dev_r[d0 + j + 1] <= limit:
                        seq += 1
                        if seq >= p_kind.shape[0]:
                            p_kind = _grow_i(p_kind, seq)
                            p_g = _grow_f(p_g, seq)
                            p_a = _grow_i(p_a, seq)
                            p_b = _grow_i(p_b, seq)
                            p_c = _grow_i(p_c, seq)
                        if hn >= hkey.shape[0]:
                            hkey = _grow_f(hkey, hn)
                            hseq = _grow_i(hseq, hn)
                        p_kind[seq] = 2
                        p_g[seq] = base
                        p_a[seq] = wi
                        p_b[seq] = x
                        p_c[seq] = j + 1
                        hn = _heap_push(hkey, hseq, hn, base + dev_r[d0 + j + 1], seq)
                    arc = dev_arc[d0 + j]
                    u = head[arc]
                    # walk wi at x: its record and g
                    rec_x = -1
                    g_x = 0.0
                    for q in range(wk_ptr[wi], wk_ptr[wi + 1]):
                        if wk_site[q] == x:
                            rec_x = wk_rec[q]
                            g_x = wk_g[q]
                            break
                    on_path = False
                    r = rec_x
                    while r >= 0:
                        if tr_site[r] == u:
                            on_path = True
                            break
                        r = tr_parent[r]
                    if on_path:
                        continue
                    if not trivial:
                        b = arc_block[arc]
                        if not (tin[b] <= hs_in and hs_out <= tout[b] and tin[b] >= 0):
                            continue
                    seq += 1
                    if seq >= p_kind.shape[0]:
                        p_kind = _grow_i(p_kind, seq)
                        p_g = _grow_f(p_g, seq)
                        p_a = _grow_i(p_a, seq)
                        p_b = _grow_i(p_b, seq)
                        p_c = _grow_i(p_c, seq)
                    if hn >= hkey.shape[0]:
                        hkey = _grow_f(hkey, hn)
                        hseq = _grow_i(hseq, hn)
                    p_kind[seq] = 0
                    p_g[seq] = g_x + w[arc]
                    p_a[seq] = rec_x
                    p_b[seq] = arc
                    p_c[seq] = u
                    hn = _heap_push(hkey, hseq, hn, key, seq)
                    continue
                g = p_g[sq]
                parent = p_a[sq]
                v = p_c[sq]
                if n_tr >= tr_site.shape[0]:
                    tr_site = _grow_i(tr_site, n_tr)
                    tr_arc = _grow_i(tr_arc, n_tr)
                    tr_parent = _grow_i(tr_parent, n_tr)
                tr_site[n_tr] = v
                tr_arc[n_tr] = p_b[sq]
                tr_parent[n_tr] = parent
                rec = n_tr
                n_tr += 1
                # mark the sites of this partial path
                epoch += 1
                r = rec
                while r >= 0:
                    mark[tr_site[r]] = epoch
                    r = tr_parent[r]
                if v != t:
                    epoch2 += 1
                    x = v
                    loopless = True
                    while x != t:
                        x = succ[x]
                        if mark[x] == epoch or mark2[x] == epoch2:
                            loopless = False
                            break
                        mark2[x] = epoch2
                    if loopless:  # emit the tree completion; queue its deviations as one entry
                        wi = n_wk
                        q0 = wk_ptr[wi]
                        x = v
                        gx = g
                        r = rec
                        nq = q0
                        while x != t:
                            if nq >= wk_site.shape[0]:
                                wk_site = _grow_i(wk_site, nq)
                                wk_rec = _grow_i(wk_rec, nq)
                                wk_g = _grow_f(wk_g, nq)
                            wk_site[nq] = x
                            wk_rec[nq] = r
                            wk_g[nq] = gx
                            nq += 1
                            gx += succ_w[x]
                            arc = succ_arc[x]
                            x = succ[x]
                            if n_tr >= tr_site.shape[0]:
                                tr_site = _grow_i(tr_site, n_tr)
                                tr_arc = _grow_i(tr_arc, n_tr)
                                tr_parent = _grow_i(tr_parent, n_tr)
                            tr_site[n_tr] = x
                            tr_arc[n_tr] = arc
                            tr_parent[n_tr] = r
                            r = n_tr
                            n_tr += 1
                        hr = hroot[v]
                        if hr >= 0 and key + hp_key[hr] <= limit:
                            n_wk += 1
                            if n_wk + 1 >= wk_ptr.shape[0]:
                                wk_ptr = _grow_i(wk_ptr, n_wk + 1)
                            wk_ptr[n_wk] = nq
                            seq += 1
                            if seq >= p_kind.shape[0]:
                                p_kind = _grow_i(p_kind, seq)
                                p_g = _grow_f(p_g, seq)
                                p_a = _grow_i(p_a, seq)
                                p_b = _grow_i(p_b, seq)
                                p_c = _grow_i(p_c, seq)
                            if hn >= hkey.shape[0]:
                                hkey = _grow_f(hkey, hn)
                                hseq = _grow_i(hseq, hn)
                            p_kind[seq] = 1
                            p_g[seq] = key
                            p_a[seq] = wi
                            p_b[seq] = hr
                            hn = _heap_push(hkey, hseq, hn, key + hp_key[hr], seq)
                        rec = r
                        g = gx
                        v = t
                if v == t:
                    # emit the path of record rec
                    length = 0
                    r = rec
                    while r >= 0:
                        chain[length] = r
                        length += 1
                        r = tr_parent[r]
                    if n_out >= out_pair.shape[0]:
                        out_pair = _grow_i(out_pair, n_out)
                        out_lat = _grow_f(out_lat, n_out)
                        out_hops = _grow_i(out_hops, n_out)
                    while n_out_sites + length >= out_sites.shape[0]:
                        out_sites = _grow_i(out_sites, out_sites.shape[0])
                    while n_out_arcs + length >= out_arcs.shape[0]:
                        out_arcs = _grow_i(out_arcs, out_arcs.shape[0])
                    out_pair[n_out] = pid
                    out_lat[n_out] = g
                    out_hops[n_out] = length - 1
                    n_out += 1
                    for i in range(length - 1, -1, -1):
                        out_sites[n_out_sites] = tr_site[chain[i]]
                        n_out_sites += 1
                        if i < length - 1:
                            out_arcs[n_out_arcs] = tr_arc[chain[i]]
                            n_out_arcs += 1
                    found += 1
                    if found >= k:
                        break
                    continue
                expanded += 1
                if expanded > max_expansions:
                    capped += 1
                    break
                if expanded > budget:
                    # dead end unless t can be reached without entering the path's sites
                    epoch2 += 1
                    reach = False
                    top = 1
                    stack[0] = v
                    mark2[v] = epoch2
                    while top > 0 and not reach:
                        top -= 1
                        y = stack[top]
                        for q in range(adj_ptr[y], adj_ptr[y + 1]):
                            a2 = adj_arc[q]
                            u = head[a2]
                            if u == t:
                                reach = True
                                break
                            if mark[u] == epoch or mark2[u] == epoch2:
                                continue
                            if not trivial:
                                b = arc_block[a2]
                                if not (tin[b] <= hs_in and hs_out <= tout[b] and tin[b] >= 0):
                                    continue
                            mark2[u] = epoch2
                            stack[top] = u
                            top += 1
                    if not reach:
                        continue
                for q in range(adj_ptr[v], adj_ptr[v + 1]):
                    a2 = adj_arc[q]
                    u = head[a2]
                    if mark[u] == epoch:
                        continue
                    if not trivial:
                        b = arc_block[a2]
                        if not (tin[b] <= hs_in and hs_out <= tout[b] and tin[b] >= 0):
                            continue
                    gu = g + w[a2]
                    fu = gu + h[u]
                    if fu <= limit:
                        seq += 1
                        if seq >= p_kind.shape[0]:
                            p_kind = _grow_i(p_kind, seq)
                            p_g = _grow_f(p_g, seq)
                            p_a = _grow_i(p_a, seq)
                            p_b = _grow_i(p_b, seq)
                            p_c = _grow_i(p_c, seq)
                        if hn >= hkey.shape[0]:
                            hkey = _grow_f(hkey, hn)
                            hseq = _grow_i(hseq, hn)
                        p_kind[seq] = 0
                        p_g[seq] = gu
                        p_a[seq] = rec
                        p_b[seq] = a2
                        p_c[seq] = u
                        hn = _heap_push(hkey, hseq, hn, fu, seq)
    return (out_pair[:n_out].copy(), out_lat[:n_out].copy(), out_hops[:n_out].copy(),
            out_arcs[:n_out_arcs].copy(), out_sites[:n_out_sites].copy(), capped)
