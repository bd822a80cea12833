"""The column pool of column generation (:mod:`backbone.solver.te.colgen`): the paths in the restricted master,
stored flat (int32 arcs), each (demand, arc sequence) once, deduplicated by vectorised 128-bit keys."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from backbone.solver.paths import csr_ranges
from backbone.solver.sparse import row_ranges

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
