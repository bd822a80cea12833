"""Sparse building blocks shared by the formulations: selector (0/1 pattern) and node-arc incidence matrices.

Every constraint family is assembled from a few such matrices (path x link, demand x path, site x demand,
link x arc, ...). Entries given twice are summed, as scipy does for COO input.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["incidence", "row_ranges", "selector"]


def selector(rows: np.ndarray, n_rows: int, n_cols: int, cols: np.ndarray | None = None,
             values: np.ndarray | float = 1.0) -> sp.csr_matrix:
    """``n_rows x n_cols`` CSR matrix with ``values[i]`` (default one) at ``(rows[i], cols[i])``.

    ``cols`` defaults to ``arange(len(rows))``: column ``i`` selects row ``rows[i]`` (for example the
    link x arc matrix ``selector(arc_link, n_links, n_arcs)`` sums the arcs of each link).
    """
    rows = np.asarray(rows)
    cols = np.arange(len(rows)) if cols is None else np.asarray(cols)
    data = np.array(np.broadcast_to(np.asarray(values, float), (len(rows),)))
    return sp.csr_matrix((data, (rows, cols)), shape=(n_rows, n_cols))


def incidence(n_nodes: int, tail: np.ndarray, head: np.ndarray) -> sp.csr_matrix:
    """Node-arc incidence ``n_nodes x n_arcs``: ``+1`` at the tail, ``-1`` at the head (out minus in)."""
    a = len(tail)
    cols = np.arange(a)
    return sp.csr_matrix((np.r_[np.ones(a), -np.ones(a)], (np.r_[tail, head], np.r_[cols, cols])),
                         shape=(n_nodes, a))


def row_ranges(cols: np.ndarray, ptr: np.ndarray, n_cols: int, values: np.ndarray | float = 1.0) -> sp.csr_matrix:
    """``(len(ptr) - 1) x n_cols`` CSR matrix whose row ``i`` has ``values`` at ``cols[ptr[i]:ptr[i + 1]]``.

    The CSR arrays are given directly (no COO round trip): for example the path x arc incidence of paths
    stored as one flat arc sequence with offsets. A column given twice in one row stays two entries.
    """
    cols = np.asarray(cols)
    data = np.array(np.broadcast_to(np.asarray(values, float), (len(cols),)))
    return sp.csr_matrix((data, cols, np.asarray(ptr)), shape=(len(ptr) - 1, n_cols))
