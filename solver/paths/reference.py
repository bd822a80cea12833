"""The reference Python kernels of the candidate path search (:mod:`backbone.solver.paths.search`).

Exact k lowest-latency loopless paths per pair (the set Yen's algorithm returns): a best-first
search over partial paths keyed by an exact lower bound (one Dijkstra per target), emitting a
shortest-path-tree completion directly and queueing its deviations lazily, Eppstein-style; paths
stay inside the chain of biconnected blocks between source and target. See
:func:`_k_shortest_eppstein` and the :mod:`backbone.solver.paths.candidates` docstring.

The compiled port (:mod:`backbone.solver.paths.kernels`) mirrors these kernels step by step and is tested
against them (:func:`search_group_python`); they serve link-disjoint searches themselves.
"""

from __future__ import annotations

import heapq
import logging
from typing import Any

import numpy as np
from scipy.sparse.csgraph import dijkstra

from backbone.solver.core.deadline import Deadline
from backbone.solver.paths.topology import FoundPath, SearchTopology

logger = logging.getLogger(__name__)

__all__ = ["DEAD_END_CHECK_AFTER", "MAX_EXPANSIONS", "PAIRS_PER_CHECK", "FlatPaths", "search_group_python"]

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

_CAPPED = [0]
"""Pairs whose search hit :data:`MAX_EXPANSIONS` in this process (reset per search group)."""



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

    def __init__(self, topo: SearchTopology) -> None:
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


class FlatPaths:
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

    def to_found(self, pair_of: list[int]) -> FoundPath:
        return FoundPath(np.array(pair_of, np.int64), np.array(self.latency, float), np.array(self.hops, np.int64),
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

    def __init__(self, topo: SearchTopology, h: list[float], pred: np.ndarray, target: int) -> None:
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


def _k_shortest_eppstein(adj: list[list[tuple[int, int, float]]], h: list[float], tt: _TargetTree, s: int,  # noqa: C901, PLR0912, PLR0915  the reference the numba kernel mirrors step by step
                         t: int, k: int, limit: float, out: FlatPaths, allowed: int = -1,
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


PAIRS_PER_CHECK = 256
"""Pairs the Python kernels search between two deadline checks."""



def search_group_python(args: tuple[SearchTopology, np.ndarray, np.ndarray, np.ndarray, int, bool],
                         deadline: Deadline | None = None) -> FoundPath:
    """Paths for unordered pairs ``(src[i], dst[i])`` by the reference Python kernels (grouped by target);
    ``deadline`` is checked every :data:`PAIRS_PER_CHECK` pairs."""
    topo, src, dst, limit, k, disjoint = args
    out = FlatPaths()
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
    for step, i in enumerate(order.tolist()):
        if deadline is not None and step % PAIRS_PER_CHECK == 0:
            deadline.check("candidate path search")
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
