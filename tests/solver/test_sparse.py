"""The shared sparse builders: selector and node-arc incidence matrices against dense references."""

from __future__ import annotations

import numpy as np

from backbone.solver.core.sparse import incidence, selector


def test_selector_default_columns_sum_rows() -> None:
    arc_link = np.array([0, 1, 2, 0, 1, 2])
    m = selector(arc_link, 3, 6)
    dense = np.zeros((3, 6))
    dense[arc_link, np.arange(6)] = 1.0
    assert m.format == "csr" and m.shape == (3, 6)
    assert np.array_equal(m.toarray(), dense)
    assert np.array_equal(m @ np.arange(6.0), [3.0, 5.0, 7.0])  # both arcs of each link


def test_selector_columns_values_and_duplicates() -> None:
    m = selector(np.array([0, 0, 1]), 2, 3, cols=np.array([2, 2, 0]), values=np.array([1.5, 2.0, -1.0]))
    assert np.array_equal(m.toarray(), [[0.0, 0.0, 3.5], [-1.0, 0.0, 0.0]])  # repeated entries add up
    scalar = selector(np.array([1, 0]), 2, 2, values=4.0)
    assert np.array_equal(scalar.toarray(), [[0.0, 4.0], [4.0, 0.0]])
    empty = selector(np.zeros(0, int), 3, 0)
    assert empty.shape == (3, 0) and empty.nnz == 0


def test_incidence_is_out_minus_in() -> None:
    tail, head = np.array([0, 1, 2, 0]), np.array([1, 2, 0, 2])
    inc = incidence(3, tail, head).toarray()
    assert inc.shape == (3, 4)
    assert np.array_equal(inc.sum(axis=0), np.zeros(4))  # every arc leaves one node and enters another
    assert np.array_equal(inc[:, 3], [1.0, 0.0, -1.0])
    flow = np.array([2.0, 2.0, 0.0, 1.0])  # 3 units 0 -> 2: two via node 1, one direct
    assert np.array_equal(inc @ flow, [3.0, 0.0, -3.0])
