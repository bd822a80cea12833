"""Exact size reduction of a min-MLU instance, and the source-aggregated edge LP on the reduced graph.

Real backbones are mostly trees and chains: TopoHub's world backbone has 3,815 nodes and 5,189 links,
and with demand among its 300 largest cities 2,177 of the nodes are transit points on a chain. Three
reductions keep the min-MLU *exactly* (no routing of the original graph is lost or gained):

1. *leaves without demand*: a node of degree 1 that no demand starts or ends at carries no flow in a
   routing without cycles; it and its link go;
2. *pendant demand sites*: a node ``v`` of degree 1 with link ``l`` to ``u`` sends all of its demand
   over ``v -> u`` and receives all of its demand over ``u -> v``, whatever the routing; those loads
   are fixed (``fixed_load``), and ``v``'s demands are moved to ``u`` (demand between ``u`` and ``v``
   leaves the network's interior);
3. *chains*: a degree-2 node without demand passes on what enters it, so its two links become one link
   with the smaller capacity (both run at the same load); parallel links become one link with the summed
   capacity (the proportional split gives each the same utilisation).

The min-MLU of the instance is then ``max(max_a fixed_load_a / cap_a, MLU* of the reduced instance)``.
(The inequality ``MLU*(reduced) <= MLU*`` is all the bounds need: any routing of the original graph,
read on the reduced one, puts at most its own MLU on every reduced link.) On the reduced instance the
Lagrangian bound of :mod:`backbone.solver.te.bounds` costs one Dijkstra per source on 1,477 nodes
instead of 3,815 (world backbone, 300 cities), and a chain's price sits on one arc instead of being
spread over every link of the chain, so its ascent climbs much faster (:func:`reduced_mlu_bound`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from backbone.solver.te.instance import TEInstance
from backbone.solver.te.sections import ReducedBoundFigures

logger = logging.getLogger(__name__)


@dataclass
class ReducedInstance:
    """A min-MLU instance after the exact reductions (see the module docstring).

    ``link_a``, ``link_b``, ``link_cap_gbps`` describe the reduced links (undirected, capacity per
    direction) on node positions ``0..n_nodes-1``; ``node_site`` is each node's site position.
    Demands are aggregated per (source, target)
    node pair: ``src``, ``dst``, ``gbps``. ``fixed_load`` is the load per original arc (``2L``) that
    every routing puts on pendant links.
    """

    n_nodes: int
    node_site: np.ndarray
    link_a: np.ndarray
    link_b: np.ndarray
    link_cap_gbps: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    gbps: np.ndarray
    fixed_load: np.ndarray

    @property
    def n_links(self) -> int:
        return len(self.link_a)

    def fixed_mlu(self, cap: np.ndarray) -> float:
        """Utilisation of the most loaded pendant arc (a lower bound on the MLU of every routing)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.where(cap > 0, self.fixed_load / cap, 0.0).max(initial=0.0))


def reduce_instance(inst: TEInstance, demands: np.ndarray) -> ReducedInstance:
    """Apply the exact reductions of the module docstring to ``demands`` of ``inst`` (no SLOs)."""
    n, n_links = inst.n_sites, inst.n_links
    a = inst.arc_tail[:n_links].copy()
    b = inst.arc_head[:n_links].copy()
    cap = inst.arc_capacity_gbps[:n_links]
    alive = cap > 0
    demands = np.asarray(demands, np.int64)
    src, dst, h = inst.src[demands].copy(), inst.dst[demands].copy(), inst.demand_gbps[demands]
    keep = (src != dst) & (h > 0)
    src, dst, h = src[keep], dst[keep], h[keep]
    fixed = np.zeros(2 * n_links)
    while True:  # rounds of leaf removal (1) and pendant merging (2); each round removes every current leaf
        inner = src != dst
        term = np.zeros(n, bool)
        term[src[inner]] = True
        term[dst[inner]] = True
        deg = np.bincount(a[alive], minlength=n) + np.bincount(b[alive], minlength=n)
        leaf_link = alive & ((deg[a] == 1) | (deg[b] == 1))
        if not leaf_link.any():
            break
        # the leaf end of each leaf link (when both ends are leaves, the link is a component of its own:
        # its larger end is the leaf, merged into the smaller one)
        a_leaf = (deg[a] == 1) & ((deg[b] != 1) | (a > b))
        leaf = np.where(a_leaf, a, b)[leaf_link]
        other = np.where(a_leaf, b, a)[leaf_link]
        lk = np.flatnonzero(leaf_link)
        out_d = np.bincount(src[inner], weights=h[inner], minlength=n)
        in_d = np.bincount(dst[inner], weights=h[inner], minlength=n)
        # the arc leaf -> other is arc lk when the leaf is the link's site_a, else the reverse arc
        fwd = np.where(a_leaf[lk], lk, lk + n_links)
        fixed[fwd] += out_d[leaf]
        fixed[np.where(a_leaf[lk], lk + n_links, lk)] += in_d[leaf]
        move = np.arange(n)
        move[leaf[term[leaf]]] = other[term[leaf]]
        src, dst = move[src], move[dst]
        alive[lk] = False
    inner = src != dst
    src, dst, h = src[inner], dst[inner], h[inner]
    term = np.zeros(n, bool)
    term[src] = True
    term[dst] = True
    # (3) chains: merge the two links of every degree-2 node without demand
    la, lb, lcap = _contract_chains(a, b, cap.astype(float), alive, term)
    # parallel links (either orientation) -> one link of summed capacity
    lo, hi = np.minimum(la, lb), np.maximum(la, lb)
    pair, inv = np.unique(lo * n + hi, return_inverse=True)
    new_cap = np.bincount(inv, weights=lcap, minlength=len(pair))
    nodes = np.unique(np.concatenate([pair // n, pair % n, src, dst]))
    pos = np.full(n, -1)
    pos[nodes] = np.arange(len(nodes))
    key = pos[src] * len(nodes) + pos[dst]
    pk, pinv = np.unique(key, return_inverse=True)
    red = ReducedInstance(len(nodes), nodes, pos[pair // n], pos[pair % n], new_cap,
                          pk // len(nodes), pk % len(nodes), np.bincount(pinv, weights=h, minlength=len(pk)), fixed)
    logger.info("reduced instance: %d nodes, %d links, %d demand pairs (from %d sites, %d links)", red.n_nodes,
                red.n_links, len(red.gbps), n, n_links)
    return red


def _contract_chains(a: np.ndarray, b: np.ndarray, cap: np.ndarray, alive: np.ndarray, term: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reduction (3) on the links ``alive``: every maximal chain through degree-2 nodes that are not
    demand ends (``term``) becomes one link between its two ends with the chain's smallest capacity; a
    chain that closes on itself (both ends one node, or no end at all) carries nothing and goes.

    The chains are the connected components of the interior nodes (scipy), so no loop runs over links
    or nodes. Returns the remaining links ``(site_a, site_b, capacity)``.
    """
    from scipy.sparse.csgraph import connected_components

    from backbone.solver.core.sparse import selector

    n = len(term)
    la, lb, lc = a[alive], b[alive], cap[alive]
    deg = np.bincount(la, minlength=n) + np.bincount(lb, minlength=n)
    interior = (deg == 2) & ~term
    interior[la[la == lb]] = False  # a self-loop is not a chain
    inner = interior[la] & interior[lb]
    graph = selector(la[inner], n, n, cols=lb[inner])
    _, label = connected_components(graph, directed=False)
    in_a, in_b = interior[la], interior[lb]
    chained = in_a | in_b
    chain = np.where(in_a, label[la], label[lb])[chained]
    n_labels = int(label.max(initial=-1)) + 1
    min_cap = np.full(n_labels, np.inf)
    np.minimum.at(min_cap, chain, lc[chained])
    # a chain's ends: the endpoint of each of its links that is not interior (two per open chain)
    end_link = chained & (in_a != in_b)
    end_chain = np.where(in_a, label[la], label[lb])[end_link]
    end_node = np.where(in_a, lb, la)[end_link]
    order = np.argsort(end_chain, kind="stable")
    end_chain, end_node = end_chain[order], end_node[order]
    first = np.flatnonzero(np.r_[True, end_chain[1:] != end_chain[:-1]]) if len(end_chain) else np.zeros(0, int)
    x, y, c = end_node[first], end_node[first + 1], end_chain[first]
    keep = x != y  # a chain closing on one node carries nothing
    return (np.concatenate([la[~chained], x[keep]]), np.concatenate([lb[~chained], y[keep]]),
            np.concatenate([lc[~chained], min_cap[c[keep]]]))


def reduced_te_instance(inst: TEInstance, red: ReducedInstance) -> TEInstance:
    """The reduced instance as a :class:`TEInstance` (arc ``j`` / ``m + j`` are reduced link ``j`` forward /
    reverse; one demand per aggregated pair; no SLOs), for the bound routines of
    :mod:`backbone.solver.te.bounds`, which then run on far fewer nodes and arcs. Its min-MLU is at most
    the original's (module docstring), so every bound on it is a bound on the original."""
    import pandas as pd

    m, k = red.n_links, len(red.gbps)
    return TEInstance(
        net=inst.net, site_ids=inst.site_ids[red.node_site], link_ids=pd.RangeIndex(m),
        demand_ids=pd.RangeIndex(k), arc_tail=np.concatenate([red.link_a, red.link_b]).astype(np.int64),
        arc_head=np.concatenate([red.link_b, red.link_a]).astype(np.int64),
        arc_capacity_gbps=np.concatenate([red.link_cap_gbps, red.link_cap_gbps]),
        arc_latency_ms=np.ones(2 * m), src=red.src.astype(np.int64), dst=red.dst.astype(np.int64),
        demand_gbps=red.gbps.astype(float), class_rank=np.zeros(k, int), slo_one_way_ms=np.full(k, np.inf),
        reason=np.full(k, "", dtype=object))


def reduced_mlu_bound(inst: TEInstance, demands: np.ndarray, target: float, deadline: float
                      ) -> tuple[float, ReducedBoundFigures]:
    """A lower bound on the min-MLU of ``demands`` (no SLOs): the pendant-link utilisation of the reduction
    and the Lagrangian bound of the reduced instance raised by Polyak steps until ``deadline``
    (:func:`backbone.solver.te.bounds.polyak_mlu_bound`, from prices ``1 / cap``, aiming at ``target``,
    e.g. the best routing's MLU). Returns the bound and its figures for the summary."""
    from backbone.solver.te.bounds import polyak_mlu_bound

    t0 = time.perf_counter()
    red = reduce_instance(inst, demands)
    fixed = red.fixed_mlu(inst.arc_capacity_gbps)
    lagrangian, steps = 0.0, 0
    if len(red.gbps) and red.n_links:
        ri = reduced_te_instance(inst, red)
        lagrangian, _, steps = polyak_mlu_bound(ri, np.arange(ri.n_demands), 1.0 / ri.arc_capacity_gbps, target,
                                                deadline)
    figures = ReducedBoundFigures(nodes=red.n_nodes, links=red.n_links, pendant_mlu=fixed, lagrangian=lagrangian,
                                  steps=steps, seconds=time.perf_counter() - t0)
    logger.info("reduced bound: %d nodes, %d links, pendant %.6g, Lagrangian %.6g after %d steps, %.1fs",
                red.n_nodes, red.n_links, fixed, lagrangian, steps, figures.seconds)
    return max(fixed, lagrangian), figures
