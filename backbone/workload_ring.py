"""The synchronisation ring of a training job split over several sites: the one rule for its order (issue #29).

A job over ``k`` sites synchronises over a directed ring through them: each site sends its ring share to the next
site, the last back to the first. Of the ``(k - 1)!`` rings that start at the first site (:data:`RING_ORDERS`), the
ring is the one whose summed one-way backbone latency over its ``k`` edges is least; ties (within a relative
``1e-9``, so float rounding does not flip a ring and its reverse) go to the first in :data:`RING_ORDERS`, which is
the sites' own order. A least-latency ring is therefore kept as it is, whichever of its directions is given.

The placement orders every split it considers with :func:`least_latency_rings`, and ``backbone workloads`` orders a
job's pinned (or ``--at``) sites with :func:`ring_order` -- the same rule, so both show the same ring.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import permutations

import numpy as np
import pandas as pd

from backbone.model import Network

__all__ = ["MAX_RING_SITES", "RING_ORDERS", "RING_TIE_REL", "least_latency_rings", "one_way_latency_ms", "ring_order"]

MAX_RING_SITES = 8
"""Rings are ordered for up to this many sites (``7!`` = 5,040 orders); a longer list keeps its given order."""

RING_ORDERS: dict[int, np.ndarray] = {k: np.array([(0, *p) for p in permutations(range(1, k))], dtype=int)
                                      for k in range(1, 5)}
"""Every directed ring through ``k`` sites starting at the first (``(k - 1)!`` orders: 1, 1, 2 and 6), the
identity first (more sites: the same, built when first needed)."""

RING_TIE_REL = 1e-9
"""Rings within this relative latency of the least tie; the first in :data:`RING_ORDERS` wins."""


@cache
def _orders(k: int) -> np.ndarray:
    """:data:`RING_ORDERS` of ``k`` sites, for any ``k`` (built once)."""
    return RING_ORDERS[k] if k in RING_ORDERS else np.array([(0, *p) for p in permutations(range(1, k))], dtype=int)


def least_latency_rings(sets: np.ndarray, latency_ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each set's least-latency ring (its sites in ring order, starting at its first) and the ring's summed one-way
    latency (ms; inf when an edge is unreachable).

    Parameters
    ----------
    sets
        ``sets x k`` site positions (into ``latency_ms``).
    latency_ms
        ``sites x sites`` lowest one-way backbone latency (inf where unreachable, 0 on the diagonal).

    Example
    -------
    Sites 0, 1, 2, 3 on a line 1 ms apart: the set ``(0, 2, 1, 3)`` has the ring ``0 -> 1 -> 3 -> 2 -> 0``
    (1 + 2 + 1 + 2 = 6 ms); the given order would be 2 + 1 + 2 + 3 = 8 ms.
    """
    sets = np.asarray(sets, dtype=int)
    n, k = sets.shape
    if k <= 1 or n == 0:
        return sets.copy(), np.zeros(n)
    ordered = sets[:, _orders(k)]  # sets x orders x k
    ring_ms = latency_ms[ordered, np.roll(ordered, -1, axis=2)].sum(axis=2)
    least = ring_ms.min(axis=1, keepdims=True)
    best = np.argmax(ring_ms <= least * (1.0 + RING_TIE_REL), axis=1)  # the first order within the tie
    rows = np.arange(n)
    return ordered[rows, best], ring_ms[rows, best]


def one_way_latency_ms(net: Network, site_ids: Sequence[str]) -> np.ndarray:
    """``len(site_ids)`` square matrix of the lowest one-way backbone latency between the sites (Dijkstra over the
    links' ``latency_ms``; inf where unreachable)."""
    from scipy.sparse.csgraph import dijkstra

    from backbone.route import min_latency_graph

    graph, _ = min_latency_graph(net)
    pos = net.sites.index.get_indexer(pd.Index(site_ids))
    return np.asarray(dijkstra(graph, directed=False, indices=pos)[:, pos], dtype=float)


def ring_order(net: Network, site_ids: Sequence[str]) -> list[str]:
    """The sites of a job in the order of its least-latency sync ring, starting at the first given site (see the
    module docstring). One or two sites, and more than :data:`MAX_RING_SITES`, keep their order."""
    ids = [str(s) for s in site_ids]
    if len(ids) < 3 or len(ids) > MAX_RING_SITES:
        return ids
    ring, _ = least_latency_rings(np.arange(len(ids))[None, :], one_way_latency_ms(net, ids))
    return [ids[i] for i in ring[0]]
