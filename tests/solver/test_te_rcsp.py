"""Latency-limited pricing (:mod:`backbone.solver.te.rcsp`) against brute force over every loopless path."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from backbone.solver.te.rcsp import latency_limited_paths


def _brute_force(tail: np.ndarray, head: np.ndarray, w: np.ndarray, lat: np.ndarray, n: int, s: int, t: int,
                 limit: float) -> float:
    """Least ``w`` over every loopless path s -> t (parallel arcs apart) with latency within ``limit``."""
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(n))
    for a, (u, v) in enumerate(zip(tail.tolist(), head.tolist(), strict=True)):
        g.add_edge(u, v, key=a)
    best = np.inf
    for path in nx.all_simple_edge_paths(g, s, t):
        arcs = [k for _, _, k in path]
        if lat[arcs].sum() <= limit + 1e-9:
            best = min(best, float(w[arcs].sum()))
    return best


def _random_graph(rng: np.random.Generator, n: int, m: int) -> tuple[np.ndarray, ...]:
    """A random digraph with ``m`` arcs (parallel arcs and zero prices included)."""
    tail = rng.integers(0, n, m)
    head = (tail + rng.integers(1, n, m)) % n
    w = np.where(rng.random(m) < 0.2, 0.0, rng.random(m) * 10)
    lat = rng.random(m) * 10
    return tail, head, w, lat


@pytest.mark.parametrize("seed", range(12))
def test_matches_brute_force_on_small_graphs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 8))
    tail, head, w, lat = _random_graph(rng, n, int(rng.integers(n, 3 * n)))
    pairs = [(s, t) for s, t in itertools.product(range(n), range(n)) if s != t]
    src = np.array([p[0] for p in pairs])
    dst = np.array([p[1] for p in pairs])
    limit = rng.random(len(pairs)) * 25
    limit[::5] = np.inf
    out = latency_limited_paths(tail, head, w, lat, n, src, dst, limit, np.full(len(pairs), np.inf))
    for i, (s, t) in enumerate(pairs):
        expect = _brute_force(tail, head, w, lat, n, s, t, limit[i])
        assert out.length[i] == pytest.approx(expect, abs=1e-7), (seed, s, t, limit[i])
        if np.isfinite(expect):  # the path returned is a path s -> t within the limit, of that length
            arcs = out.arcs[i]
            assert tail[arcs[0]] == s and head[arcs[-1]] == t
            assert np.array_equal(head[arcs[:-1]], tail[arcs[1:]])
            assert len(set(tail[arcs].tolist())) == len(arcs)  # loopless
            assert lat[arcs].sum() <= limit[i] + 1e-9
            assert w[arcs].sum() == pytest.approx(out.length[i])


def test_cutoff_proves_no_cheaper_path() -> None:
    rng = np.random.default_rng(7)
    tail, head, w, lat = _random_graph(rng, 7, 18)
    src, dst = np.repeat(np.arange(7), 7), np.tile(np.arange(7), 7)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    limit = np.full(len(src), 12.0)
    exact = latency_limited_paths(tail, head, w, lat, 7, src, dst, limit, np.full(len(src), np.inf)).length
    cutoff = np.where(np.isfinite(exact), exact, 5.0) * rng.choice([0.5, 1.0, 1.5], len(src))
    out = latency_limited_paths(tail, head, w, lat, 7, src, dst, limit, cutoff)
    below = exact < cutoff
    assert np.allclose(out.length[below], exact[below])
    assert np.isinf(out.length[~below]).all()  # none below the cutoff, and it says so


def test_the_slo_changes_the_answer() -> None:
    """A cheap slow route and a dear fast one: the limit decides."""
    tail, head = np.array([0, 1, 0]), np.array([1, 2, 2])
    w, lat = np.array([1.0, 1.0, 5.0]), np.array([10.0, 10.0, 3.0])
    src, dst = np.array([0, 0, 0]), np.array([2, 2, 2])
    out = latency_limited_paths(tail, head, w, lat, 3, src, dst, np.array([25.0, 15.0, 2.0]), np.full(3, np.inf))
    assert out.length.tolist()[:2] == [2.0, 5.0] and np.isinf(out.length[2])
    assert [a.tolist() for a in out.arcs[:2]] == [[0, 1], [2]]
