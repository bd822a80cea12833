"""A source-flow solution as the warm start of a state derived from its network (a failure sweep's failed network).

:func:`~backbone.solver.te.srcflow.source_flow_mlu` warm-starts from flows on the same sites and arcs; a failed
network built from the model (:meth:`backbone.model.Network.fail_links`, ``fail_sites``) has fewer of them. This
re-indexes the intact solution onto it by site and link id.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from backbone.solver.te.instance import TEInstance
from backbone.solver.te.srcflow import SourceFlows


def warm_on(warm: SourceFlows, old: TEInstance, new: TEInstance) -> SourceFlows:
    """``warm`` (a solution on ``old``) as a warm start on ``new``: a state of the same network with sites or
    links removed, capacities lowered or demands dropped, matched by id (a failure sweep's failed network).

    Flows, prices and pairs are re-indexed onto ``new``'s sites and arcs. A source whose site is gone, or whose
    flow crosses a link ``new`` lacks, is left out (:func:`source_flow_mlu`'s warm start re-routes it: its flow
    without the missing arcs would not conserve); a source that lost destinations keeps only the pairs still
    there (its demand then differs, so it is re-routed as well).
    """
    site_new = pd.Index(new.site_ids).get_indexer(pd.Index(old.site_ids))
    link_new = pd.Index(new.link_ids).get_indexer(pd.Index(old.link_ids))
    arc_new = np.concatenate([link_new, np.where(link_new >= 0, link_new + new.n_links, -1)]).astype(np.int64)
    live = arc_new >= 0
    tol = 1e-9 * max(1.0, float(warm.pair_gbps.max(initial=0.0)))
    src_new = site_new[warm.sources]
    keep = (src_new >= 0) & (warm.flow[:, ~live].max(axis=1, initial=0.0) <= tol)
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(src_new[rows], kind="stable")]
    pair_row = np.repeat(np.arange(len(warm.sources)), np.diff(warm.pair_ptr))
    dst_new = site_new[warm.pair_dst]
    row_pos = np.full(len(warm.sources), -1)
    row_pos[rows] = np.arange(len(rows))
    pair_keep = (row_pos[pair_row] >= 0) & (dst_new >= 0)
    order = np.flatnonzero(pair_keep)
    order = order[np.lexsort((dst_new[order], row_pos[pair_row[order]]))]
    counts = np.bincount(row_pos[pair_row[order]], minlength=len(rows))
    flow = np.zeros((len(rows), new.n_arcs))
    flow[:, arc_new[live]] = warm.flow[rows][:, live]
    prices = np.zeros(new.n_arcs)
    prices[arc_new[live]] = warm.bound_prices[live]
    return SourceFlows(src_new[rows].astype(np.int64), flow, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                       dst_new[order].astype(np.int64), warm.pair_gbps[order], np.zeros(0, np.int64), warm.mlu,
                       warm.lower_bound, warm.iterations, warm.seconds, prices)
