"""The answer a TE solve returns when its time limit stops it before any LP solution exists.

Every demand takes its lowest-latency path (one Dijkstra per source, directed, lowest latency over
parallel arcs); a demand whose lowest-latency path exceeds its SLO is unmet (``no_path_within_slo``,
exactly as in the path and edge formulations, since no path could meet it). That routing is
feasible for min-MLU at whatever MLU it gives. For the capped objectives (max-throughput,
max-min-fair, min-latency) every flow is scaled by ``min(1, ceiling / mlu)``, so no link runs over
the utilisation ceiling. The min-MLU bound is the better of the single-site cut bound and one
Lagrangian bound with prices ``1 / cap`` (:mod:`backbone.solver.te.colgen`): both cost one Dijkstra
round at most.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from backbone.solver.core.problem import Status
from backbone.solver.core.sparse import selector
from backbone.solver.te.bounds import SOURCE_CHUNK, DualPricer, site_cut_bound
from backbone.solver.te.colgen import ScaleOutcome
from backbone.solver.te.colpool import splits_frame
from backbone.solver.te.instance import REASON_SLO, TEInstance
from backbone.solver.te.sections import FallbackFigures
from backbone.utilisation import utilisation

logger = logging.getLogger(__name__)


def shortest_path_columns(inst: TEInstance, demands: np.ndarray, w: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``w``-shortest path of each demand as flat arcs: ``(length, arcs, hops)``.

    ``arcs[ptr[i]:ptr[i + 1]]`` (``ptr = cumsum(hops)``) are the arcs of demand ``demands[i]`` in
    travel order; an unreachable demand gets zero hops and an infinite length. Vectorised per chunk
    of :data:`~backbone.solver.te.bounds.SOURCE_CHUNK` sources.
    """
    from scipy.sparse.csgraph import dijkstra

    from backbone.solver.paths.array_kernels import predecessor_paths

    n = inst.n_sites
    key = inst.arc_tail * n + inst.arc_head
    w = np.maximum(np.asarray(w, float), 0.0)
    order = np.lexsort((np.arange(len(w)), w, key))
    first = np.ones(len(order), bool)
    first[1:] = key[order][1:] != key[order][:-1]
    best = order[first]
    best_key = key[best]
    eps = 1e-12
    graph = selector(inst.arc_tail[best], n, n, cols=inst.arc_head[best], values=w[best] + eps)
    demands = np.asarray(demands, np.int64)
    src, dst = inst.src[demands], inst.dst[demands]
    sources, row = np.unique(src, return_inverse=True)
    by_row = np.argsort(row, kind="stable")
    row_ptr = np.searchsorted(row[by_row], np.arange(len(sources) + 1))
    length = np.full(len(demands), np.inf)
    hops = np.zeros(len(demands), np.int64)
    pieces: list[tuple[np.ndarray, np.ndarray]] = []  # (members, their arcs flat)
    for c0 in range(0, len(sources), SOURCE_CHUNK):
        c1 = min(c0 + SOURCE_CHUNK, len(sources))
        dist, pred = dijkstra(graph, directed=True, indices=sources[c0:c1], return_predecessors=True)
        dist, pred = np.atleast_2d(dist), np.atleast_2d(pred)
        members = by_row[row_ptr[c0]:row_ptr[c1]]
        length[members] = dist[row[members] - c0, dst[members]]
        sel = members[np.isfinite(length[members])]
        if len(sel) == 0:
            continue
        walk = predecessor_paths if predecessor_paths.signatures else walk_predecessors  # never wait for a compile
        sites, ptr = walk(pred, (row[sel] - c0).astype(np.int64), src[sel], dst[sel])
        hops[sel] = np.diff(ptr) - 1
        tail_pos = np.delete(np.arange(len(sites)), ptr[1:] - 1)
        arcs = best[np.searchsorted(best_key, sites[tail_pos] * n + sites[tail_pos + 1])]
        pieces.append((sel, arcs))
    finite = np.isfinite(length)
    length[finite] = np.maximum(length[finite] - eps * n, 0.0)
    # lay the pieces out in demand order
    ptr = np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)
    flat = np.zeros(int(ptr[-1]), np.int64)
    for sel, arcs in pieces:
        from backbone.solver.paths.candidates import csr_ranges

        flat[csr_ranges(ptr[:-1][sel], hops[sel])] = arcs
    return length, flat, hops


def walk_predecessors(pred: np.ndarray, rows: np.ndarray, src: np.ndarray, dst: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~backbone.solver.paths.array_kernels.predecessor_paths` in numpy (vectorised over the paths, one step
    per hop): the fallback runs when the time limit stopped a solve, possibly while that kernel still compiles.

    Returns the flat site sequences (travel order) of the paths ``src[i] -> dst[i]`` read from predecessor row
    ``pred[rows[i]]``, and their offsets.
    """
    cur = np.asarray(dst, np.int64).copy()
    steps = [cur]
    active = cur != src
    while active.any():
        cur = cur.copy()
        cur[active] = pred[rows[active], cur[active]]
        steps.append(cur)
        active = cur != src
    back = np.stack(steps, axis=1)  # per path: dst, ..., src, then src repeated
    sizes = (back != np.asarray(src)[:, None]).sum(axis=1) + 1
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    path = np.repeat(np.arange(len(sizes)), sizes)
    offset = np.arange(int(ptr[-1])) - ptr[:-1][path]
    return back[path, sizes[path] - 1 - offset].astype(np.int64), ptr


def shortest_path_outcome(inst: TEInstance, objective: str, utilisation_ceiling: float | None, stopped_during: str
                          ) -> ScaleOutcome:
    """Route every routable demand on its lowest-latency path (see the module docstring).

    ``stopped_during`` names the step the time limit stopped (it goes into ``extra``).
    """
    t0 = time.perf_counter()
    reason = inst.reason.copy()
    cand = np.flatnonzero(inst.routable)
    lat, arcs, hops = shortest_path_columns(inst, cand, inst.arc_latency_ms)
    ok = np.isfinite(lat) & (lat <= inst.slo_one_way_ms[cand] + 1e-9)
    reason[cand[~ok]] = REASON_SLO
    ptr = np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)
    from backbone.solver.paths.candidates import csr_ranges

    keep_arcs = arcs[csr_ranges(ptr[:-1][ok], hops[ok])]
    routed, routed_hops = cand[ok], hops[ok]
    h = inst.demand_gbps[routed]
    load = np.bincount(keep_arcs, weights=np.repeat(h, routed_hops), minlength=inst.n_arcs)
    cap = inst.arc_capacity_gbps
    n_links = inst.n_links
    mlu = float(utilisation(load[:n_links], load[n_links:], cap[:n_links]).max(initial=0.0))
    scale = 1.0
    bound = None
    if objective == "min-mlu":
        bound = site_cut_bound(inst, routed)
        w = 1.0 / np.maximum(cap, 1e-9)
        w /= float(w @ cap)
        length, _, _ = DualPricer(inst).shortest(w, routed)
        bound = max(bound, float(h @ np.where(np.isfinite(length), length, 0.0)))
        value = mlu
    else:
        ceiling = utilisation_ceiling
        top = 0.8 if objective == "min-latency" and ceiling is None else (1.0 if ceiling is None else ceiling)
        scale = min(1.0, top / mlu) if mlu > 0 else 1.0
        if objective == "max-min-fair":
            value = scale  # every demand gets this share
        elif objective == "min-latency":
            carried_total = float(h.sum())
            value = float(h @ lat[ok]) / carried_total if carried_total > 0 else 0.0  # traffic-weighted latency
        else:
            value = float(h.sum() * scale)
    f = h * scale
    carried = np.zeros(inst.n_demands)
    carried[routed] = f
    splits = splits_frame(inst, routed, keep_arcs.astype(np.int32), routed_hops.astype(np.int32), f, 0.0)
    logger.info("time limit during %s: lowest-latency routing of %d demands in %.2fs", stopped_during,
                len(routed), time.perf_counter() - t0)
    return ScaleOutcome(Status.FEASIBLE, value, load * scale, carried, reason, splits, [], bound, 0.0,
                        FallbackFigures(fallback="lowest-latency paths", stopped_during=stopped_during,
                                        scale=scale))
