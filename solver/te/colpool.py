"""The column pool of column generation (:mod:`backbone.solver.te.colgen`): the paths in the restricted master,
stored flat (int32 arcs), each (demand, arc sequence) once, deduplicated by vectorised 128-bit keys; and the
helpers that move columns between a pool, another objective's pool and the path-split table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.solver.core.sparse import row_ranges
from backbone.solver.paths.candidates import csr_ranges
from backbone.solver.te.formulations import SPLIT_COLUMNS, path_strings

if TYPE_CHECKING:
    from backbone.solver.te.instance import TEInstance

_HASH_MULTIPLIERS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (a bijection of uint64, vectorised): arc ids enter the hashes non-linearly."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def column_keys(demand: np.ndarray, arcs_flat: np.ndarray, hops: np.ndarray) -> np.ndarray:
    """One 128-bit key (numpy ``V16``) per column, vectorised over the columns: two polynomial hashes (mod 2**64,
    different multipliers) of its mixed arc ids in travel order, plus its LP-demand row and hop count.

    Equal columns get equal keys. Different columns get the same key only by a hash collision (not an exact
    guarantee: a collision would keep a priced column out of the pool; column generation's bound is computed
    independently, so it stays valid)."""
    hops = np.asarray(hops, np.int64)
    ptr = np.zeros(len(hops) + 1, np.int64)
    np.cumsum(hops, out=ptr[1:])
    pos = np.arange(int(ptr[-1]), dtype=np.int64) - np.repeat(ptr[:-1], hops)
    x = _mix(np.asarray(arcs_flat, np.int64).astype(np.uint64))
    lead = _mix((np.asarray(demand, np.int64).astype(np.uint64) << np.uint64(32)) | hops.astype(np.uint64))
    out = np.empty((len(hops), 2), np.uint64)
    with np.errstate(over="ignore"):
        for col, mult in enumerate(_HASH_MULTIPLIERS):  # two hash families, not a loop over columns
            powers = np.cumprod(np.full(int(hops.max(initial=0)) + 1, mult, np.uint64))
            cum = np.zeros(len(x) + 1, np.uint64)
            np.cumsum(x * powers[pos], out=cum[1:])
            out[:, col] = cum[ptr[1:]] - cum[ptr[:-1]] + lead * mult  # fixed per family, not per batch
    return np.ascontiguousarray(out).view("V16").ravel()


@dataclass
class ColumnPool:
    """Paths in the master: per column its LP-demand row and arcs (flat, int32)."""

    n_arcs: int
    demand: list[np.ndarray] = field(default_factory=list)
    arcs: list[np.ndarray] = field(default_factory=list)
    hops: list[np.ndarray] = field(default_factory=list)
    seen: np.ndarray = field(default_factory=lambda: np.zeros(0, "V16"))
    """Sorted 128-bit keys (:func:`column_keys`) of the columns in the pool."""

    def add(self, demand: np.ndarray, arcs_flat: np.ndarray, hops: np.ndarray) -> int:
        """Add columns not already in the pool (nor earlier in this batch); returns how many were added."""
        demand = np.asarray(demand, np.int64)
        hops = np.asarray(hops, np.int64)
        keys = column_keys(demand, arcs_flat, hops)
        _, first = np.unique(keys, return_index=True)
        first = np.sort(first)
        if len(self.seen):  # ``seen`` is sorted: a binary search per new key
            at = np.minimum(np.searchsorted(self.seen, keys[first]), len(self.seen) - 1)
            idx = first[self.seen[at] != keys[first]]
        else:
            idx = first
        if not len(idx):
            return 0
        self.seen = np.sort(np.concatenate([self.seen, keys[idx]]))
        starts = np.concatenate([[0], np.cumsum(hops)])[:-1][idx]
        lens = hops[idx]
        flat = np.asarray(arcs_flat)[csr_ranges(starts, lens)]
        self.demand.append(demand[idx])
        self.arcs.append(flat.astype(np.int32))
        self.hops.append(lens.astype(np.int32))
        return len(idx)

    @property
    def n(self) -> int:
        return int(sum(len(d) for d in self.demand))

    def arrays(self, start: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(demand row, flat arcs, hops) of the columns from ``start`` on."""
        demand = np.concatenate(self.demand) if self.demand else np.zeros(0, np.int64)
        arcs = np.concatenate(self.arcs) if self.arcs else np.zeros(0, np.int32)
        hops = np.concatenate(self.hops) if self.hops else np.zeros(0, np.int32)
        if start:
            arcs = arcs[int(hops[:start].sum()):]
            demand, hops = demand[start:], hops[start:]
        return demand, arcs, hops

    def arc_map(self, start: int = 0) -> sp.csr_matrix:
        """``2L x n_columns`` arc-load map (``P^T``) of the columns from ``start`` on."""
        _, arcs, hops = self.arrays(start)
        ptr = np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)
        return row_ranges(arcs, ptr, self.n_arcs).T.tocsr()


def splits_frame(inst: TEInstance, col_demand: np.ndarray, arcs: np.ndarray, hops: np.ndarray, f: np.ndarray,
                 tol: float) -> pd.DataFrame:
    """Path-split rows (:data:`SPLIT_COLUMNS`) of the columns carrying more than ``tol`` Gbps.

    Column ``i`` routes ``f[i]`` of instance demand ``col_demand[i]`` over arcs
    ``arcs[ptr[i]:ptr[i + 1]]`` (``ptr = cumsum(hops)``, travel order).
    """
    from backbone.solver.paths.candidates import PathSet, csr_ranges

    used = np.flatnonzero(f > tol)
    if len(used) == 0:
        return pd.DataFrame({c: [] for c in SPLIT_COLUMNS})
    ptr = np.concatenate([[0], np.cumsum(hops)]).astype(np.int64)
    lens = hops[used].astype(np.int64)
    arc_seq = arcs[csr_ranges(ptr[:-1][used], lens)].astype(np.int64)
    arc_ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    first = arc_seq[arc_ptr[:-1]]
    site_seq = np.insert(inst.arc_head[arc_seq], arc_ptr[:-1], inst.arc_tail[first])
    site_ptr = arc_ptr + np.arange(len(used) + 1)
    n_links = inst.n_links
    link_of = arc_seq % n_links
    lat = np.add.reduceat(inst.arc_latency_ms[arc_seq], arc_ptr[:-1]) if len(arc_seq) else np.zeros(0)
    n = len(used)
    inc = row_ranges(arc_seq, arc_ptr, 2 * n_links)
    link_inc = row_ranges(link_of, arc_ptr, n_links)
    pairs = pd.DataFrame({"src": inst.site_ids[inst.src[col_demand[used]]].astype(str),
                          "dst": inst.site_ids[inst.dst[col_demand[used]]].astype(str)})
    ps = PathSet(inst.link_ids, inst.site_ids, pairs, np.arange(n), lat, np.zeros(n), lens, inc, link_inc,
                 site_seq, site_ptr, arc_seq, arc_ptr)
    sites, links = path_strings(ps, np.arange(n), inst)
    return pd.DataFrame({"demand_pos": col_demand[used], "path_sites": sites, "path_links": links,
                         "hops": lens, "latency_ms": lat, "gbps": f[used]})


def used_columns(demand: np.ndarray, arcs: np.ndarray, hops: np.ndarray, used: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The columns ``used`` of ``(demand, arcs flat, hops)``, in the same form."""
    from backbone.solver.paths.candidates import csr_ranges

    hops = np.asarray(hops, np.int64)
    starts = np.concatenate([[0], np.cumsum(hops)])[:-1]
    flat = np.asarray(arcs, np.int64)[csr_ranges(starts[used], hops[used])]
    return np.asarray(demand, np.int64)[used], flat, hops[used]


def seed_pool(pool: ColumnPool, lp_demands: np.ndarray, n_demands: int,
              columns: tuple[np.ndarray, np.ndarray, np.ndarray]) -> int:
    """Add ``columns`` (instance demand per column, arcs flat, hops) of demands in the master to ``pool``; returns
    how many were new."""
    demand, arcs, hops = columns
    pos = np.full(n_demands, -1)
    pos[lp_demands] = np.arange(len(lp_demands))
    keep = pos[demand] >= 0
    sub = used_columns(demand, arcs, hops, keep)
    return pool.add(pos[sub[0]], sub[1], sub[2]) if len(sub[0]) else 0
