"""ECMP / shortest-path routing simulation: what the network does today without TE.

Every router forwards traffic for destination ``t`` over all its next hops on a shortest path to
``t``, splitting equally per next-hop arc. Costs are link latency (``metric="latency"``; paths
within ``tolerance_ms`` of the best count as equal cost) or hop count (``metric="hops"``).

Computed per destination on the DAG of shortest paths, vectorized over all destinations at once
(``T x N`` and ``T x 2L`` arrays, one sparse product per propagation step):

* ``dist[t, u]`` -- shortest cost from ``u`` to ``t`` (``scipy.sparse.csgraph.dijkstra``);
* arc ``a = (u -> v)`` is in the DAG of ``t`` when ``w_a + dist[t, v] <= dist[t, u] + tol`` and
  ``dist[t, v] < dist[t, u]`` (strict descent keeps it acyclic);
* ``share[t, a] = 1 / outdeg_t(u)``; node throughput ``Y = D + (Y[:, tail] * share) @ H`` with
  ``H`` the arc -> head incidence, iterated to its fixed point (exact after DAG-depth steps);
* expected and worst one-way latency per (source, destination) by the same propagation with
  sum-of-shares and max.

Latency SLOs are *not* enforced by ECMP (that is the point of comparing with TE): the summary
counts ``slo_violations`` and the checker skips the SLO check (``slo_enforced: false``). Demand
between disconnected sites is unmet (``disconnected``); everything else is carried, so
utilisation may exceed 1 (``overloaded``).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from backbone.model import Network
from backbone.solver.core.sparse import selector
from backbone.solver.te.formulations import SPLIT_COLUMNS
from backbone.solver.te.instance import TEInstance, build_instance
from backbone.solver.te.result import TEResult, assemble_result

logger = logging.getLogger(__name__)

MAX_PATHS_PER_DEMAND = 64
"""ECMP paths listed per demand in the path-split table (more: the table is marked incomplete)."""

MAX_SPLIT_DEMANDS = 20_000
"""Above this many demands the per-path table is skipped (link loads are still exact)."""


def simulate_ecmp(net: Network, metric: str = "latency", tolerance_ms: float = 0.05,
                  instance: TEInstance | None = None) -> TEResult:
    """Route every demand by ECMP over shortest paths.

    Parameters
    ----------
    net
        The network and its demands.
    metric
        ``"latency"`` (link ``latency_ms``) or ``"hops"``.
    tolerance_ms
        Latency metric: next hops whose path is within this of the best are equal cost.

    Returns
    -------
    TEResult
        ``objective="ecmp"``; ``objective_value`` is the MLU.
    """
    if metric not in ("latency", "hops"):
        raise ValueError(f"unknown ECMP metric {metric!r}")
    t0 = time.perf_counter()
    inst = instance or build_instance(net)
    n, n_arcs = inst.n_sites, inst.n_arcs
    w = inst.arc_latency_ms.copy() if metric == "latency" else np.ones(n_arcs)
    tol = tolerance_ms if metric == "latency" else 1e-9
    routed = np.flatnonzero(inst.routable)
    dests, dest_of = np.unique(inst.dst[routed], return_inverse=True)
    n_t = len(dests)
    tail, head = inst.arc_tail, inst.arc_head

    # distances to each destination (undirected: dist(u -> t) == dist(t -> u)); parallel links: min
    edges = pd.DataFrame({"u": tail, "v": head, "w": w}).groupby(["u", "v"])["w"].min().reset_index()
    graph = sp.csr_matrix((edges["w"].to_numpy() + 1e-15, (edges["u"], edges["v"])), shape=(n, n))
    dist = dijkstra(graph, directed=True, indices=dests) if n_t else np.zeros((0, n))

    # DAG membership and equal shares per (destination, arc)
    d_tail, d_head = dist[:, tail], dist[:, head]
    in_dag = (w + d_head <= d_tail + tol) & (d_head < d_tail) & np.isfinite(d_tail)
    order = np.argsort(tail, kind="stable")
    starts = np.searchsorted(tail[order], np.arange(n))
    has_out = starts < np.searchsorted(tail[order], np.arange(n), side="right")
    outdeg = np.zeros((n_t, n))
    if n_t:
        outdeg[:, has_out] = np.add.reduceat(in_dag[:, order].astype(float), starts[has_out], axis=1)
    share = np.where(in_dag, 1.0 / np.maximum(outdeg[:, tail], 1.0), 0.0)
    to_head = selector(np.arange(n_arcs), n_arcs, n, cols=head)

    # traffic entering each node, per destination: Y = D + (Y[:, tail] * share) @ H
    demand = np.zeros((n_t, n))
    np.add.at(demand, (dest_of, inst.src[routed]), inst.demand_gbps[routed])
    y = _fixed_point(lambda y: demand + np.asarray((to_head.T @ (y[:, tail] * share).T).T), demand, n)
    arc_load = (y[:, tail] * share).sum(axis=0) if n_t else np.zeros(n_arcs)

    # expected and worst one-way latency from every node to each destination
    lat = inst.arc_latency_ms
    by_tail = selector(np.arange(n_arcs), n_arcs, n, cols=tail)
    zero = np.zeros((n_t, n))
    expect = _fixed_point(lambda e: np.asarray((by_tail.T @ (share * (lat + e[:, head])).T).T), zero, n)

    def worst_step(wst: np.ndarray) -> np.ndarray:
        vals = np.where(in_dag, lat + wst[:, head], -np.inf)[:, order]
        out = np.full((n_t, n), -np.inf)
        if n_t:
            out[:, has_out] = np.maximum.reduceat(vals, starts[has_out], axis=1)
        return np.where(np.isfinite(out), out, 0.0)

    worst = _fixed_point(worst_step, zero, n)

    carried = np.zeros(inst.n_demands)
    carried[routed] = inst.demand_gbps[routed]
    exp_lat = np.full(inst.n_demands, np.nan)
    worst_lat = np.full(inst.n_demands, np.nan)
    exp_lat[routed] = expect[dest_of, inst.src[routed]]
    worst_lat[routed] = worst[dest_of, inst.src[routed]]

    splits, complete = _enumerate_splits(inst, routed, dest_of, in_dag, share, order, starts, has_out)
    solve_seconds = time.perf_counter() - t0
    slo_miss = inst.has_slo & (2 * worst_lat > 2 * inst.slo_one_way_ms + 1e-9)
    summary: dict[str, Any] = {
        "status": "optimal", "objective": "ecmp", "formulation": "ecmp", "backend": "none",
        "ecmp_metric": metric, "ecmp_tolerance_ms": tolerance_ms if metric == "latency" else None,
        "paths_k": None, "utilisation_ceiling": None, "slo_enforced": False,
        "slo_violations": int(slo_miss.sum()), "paths_complete": complete,
        "paths_seconds": 0.0, "build_seconds": 0.0, "solve_seconds": solve_seconds, "extract_seconds": 0.0,
        "lp": {}, "stages": [], "slo_violating_demands": [str(x) for x in inst.demand_ids[slo_miss][:100]],
    }
    if not complete:  # latency figures from the propagation, not from a partial path table
        tot = float(np.nansum(exp_lat * carried))
        summary.update(weighted_latency_ms=tot / carried.sum() if carried.sum() > 0 else None,
                       weighted_rtt_ms=2 * tot / carried.sum() if carried.sum() > 0 else None,
                       worst_latency_ms=float(np.nanmax(worst_lat)) if len(routed) else None)
    result = assemble_result(inst, arc_load, carried, inst.reason, splits, summary, t0)
    if not complete:  # latency columns from the propagation, not from a partial path table
        result.demands["latency_ms"] = exp_lat
        result.demands["worst_latency_ms"] = worst_lat
        result.demands["rtt_ms"] = 2 * exp_lat
        result.demands["worst_rtt_ms"] = 2 * worst_lat
    return result.with_summary(objective_value=result.summary.mlu)


def _fixed_point(step: Any, start: np.ndarray, n: int) -> np.ndarray:
    """Iterate ``x <- step(x)`` until it stops changing (a DAG propagation: at most ``n`` steps)."""
    x = start
    for _ in range(n + 1):
        nxt = step(x)
        if np.allclose(nxt, x, rtol=1e-13, atol=1e-12):
            return nxt
        x = nxt
    logger.warning("ECMP propagation did not settle in %d steps", n + 1)
    return x


def _enumerate_splits(inst: TEInstance, routed: np.ndarray, dest_of: np.ndarray, in_dag: np.ndarray,
                      share: np.ndarray, order: np.ndarray, starts: np.ndarray,
                      has_out: np.ndarray) -> tuple[pd.DataFrame, bool]:
    """Each demand's ECMP paths with their traffic (product of shares), while small enough."""
    empty = pd.DataFrame({c: [] for c in SPLIT_COLUMNS})
    if len(routed) > MAX_SPLIT_DEMANDS:
        return empty, False
    n_arcs = inst.n_arcs
    ends = np.append(starts[1:], n_arcs)
    names, link_ids, n_links = inst.site_ids.astype(str), inst.link_ids.astype(str), inst.n_links
    rows: list[tuple[int, list[int], float]] = []
    complete = True
    for d, t_idx in zip(routed, dest_of, strict=True):
        dag, sh = in_dag[t_idx], share[t_idx]
        target = inst.dst[d]
        stack: list[tuple[int, list[int], float]] = [(int(inst.src[d]), [], 1.0)]
        found: list[tuple[int, list[int], float]] = []
        while stack:
            node, arcs, p = stack.pop()
            if node == target:
                found.append((d, arcs, p))
                if len(found) > MAX_PATHS_PER_DEMAND:
                    break
                continue
            if not has_out[node]:
                continue
            for a in order[starts[node]:ends[node]]:
                if dag[a]:
                    stack.append((int(inst.arc_head[a]), [*arcs, int(a)], p * sh[a]))
        if len(found) > MAX_PATHS_PER_DEMAND:
            complete = False
            found = found[:MAX_PATHS_PER_DEMAND]
        rows.extend(found)
    if not rows:
        return empty, complete
    h = inst.demand_gbps
    frame = pd.DataFrame({
        "demand_pos": [r[0] for r in rows],
        "path_sites": [">".join(names[[int(inst.src[r[0]])] + [int(inst.arc_head[a]) for a in r[1]]]) for r in rows],
        "path_links": [";".join(link_ids[np.asarray(r[1]) % n_links]) for r in rows],
        "hops": [len(r[1]) for r in rows],
        "latency_ms": [float(inst.arc_latency_ms[r[1]].sum()) for r in rows],
        "gbps": [h[r[0]] * r[2] for r in rows],
    })
    return frame, complete
