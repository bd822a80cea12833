"""Candidate paths: exactness against networkx (Yen), incidences, limits, disjointness, failures, cache."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from backbone.errors import ValidationError
from backbone.model import Network
from backbone.solver.paths.candidates import PathSet, candidate_paths, clear_cache, paths_after_failure
from benchmarks.synthetic import synthetic_backbone
from tests.nets import make_network, random_connected


def _random_net(n: int, m: int, seed: int, parallel: int = 0) -> Network:
    """A connected random graph (spanning tree + extra edges) with integer-ish latencies (ties)."""
    rng = np.random.default_rng(seed)
    sites, edges = random_connected(rng, n, m)
    edges_list = list(edges)
    for j in range(parallel):
        edges_list.append(edges_list[j])
    links = [{"id": f"l{j}", "site_a": f"s{a}", "site_b": f"s{b}", "capacity_gbps": 100, "length_km": 10.0 + j,
              "latency_ms": float(rng.integers(1, 6))} for j, (a, b) in enumerate(edges_list)]
    rng.shuffle(links)  # link order must not matter
    # random orientation: half the links written b -> a
    for rec in links[::2]:
        rec["site_a"], rec["site_b"] = rec["site_b"], rec["site_a"]
    return make_network(sites, links, name=f"random-{seed}")


def _check_incidences(net: Network, ps: PathSet) -> None:
    """Independent residual checks: every path is a walk from src to dst matching its arcs."""
    n_links = len(net.links)
    a, b = net.link_endpoints()
    n_sites = len(net.sites)
    # node-arc incidence: +1 at tail, -1 at head
    tails = np.concatenate([a, b])
    heads = np.concatenate([b, a])
    arcs = np.arange(2 * n_links)
    node_arc = sp.csr_matrix((np.r_[np.ones(2 * n_links), -np.ones(2 * n_links)],
                              (np.r_[tails, heads], np.r_[arcs, arcs])), shape=(n_sites, 2 * n_links))
    net_out = (node_arc @ ps.arc_incidence.T).T.toarray()  # paths x sites
    pos = pd.Series(np.arange(n_sites), index=net.sites.index)
    src = pos.loc[ps.pairs["src"].to_numpy()[ps.path_pair]].to_numpy()
    dst = pos.loc[ps.pairs["dst"].to_numpy()[ps.path_pair]].to_numpy()
    expected = np.zeros_like(net_out)
    expected[np.arange(ps.n_paths), src] += 1
    expected[np.arange(ps.n_paths), dst] -= 1
    np.testing.assert_array_equal(net_out, expected)
    link_from_arcs = ps.arc_incidence[:, :n_links] + ps.arc_incidence[:, n_links:]
    assert (link_from_arcs != ps.link_incidence).nnz == 0
    assert ps.link_incidence.max() <= 1 if ps.n_paths else True
    np.testing.assert_allclose(ps.link_incidence @ net.links["latency_ms"].to_numpy(), ps.path_latency_ms)
    np.testing.assert_allclose(ps.link_incidence @ net.links["length_km"].to_numpy(), ps.path_length_km)
    np.testing.assert_array_equal(np.asarray(ps.link_incidence.sum(axis=1)).ravel(), ps.path_hops)
    ends = dict(zip(net.links.index, zip(net.links["site_a"], net.links["site_b"], strict=True), strict=True))
    src_ids, dst_ids = ps.pairs["src"].tolist(), ps.pairs["dst"].tolist()
    for i in range(ps.n_paths):
        sites = ps.path_sites(i)
        links = ps.path_links(i)
        assert len(set(sites)) == len(sites), "path is not loopless"
        assert sites[0] == src_ids[int(ps.path_pair[i])]
        assert sites[-1] == dst_ids[int(ps.path_pair[i])]
        for u, v, link in zip(sites[:-1], sites[1:], links, strict=True):
            assert {u, v} == set(ends[link])
    # contiguous per pair, latency ascending
    assert np.all(np.diff(ps.path_pair) >= 0)
    same = np.diff(ps.path_pair) == 0
    assert np.all(np.diff(ps.path_latency_ms)[same] >= -1e-9)


def test_triangle_two_paths_both_directions(triangle: Network) -> None:
    ps = candidate_paths(triangle, [("A", "C"), ("C", "A")], k_paths=4, cache=False)
    assert ps.paths_per_pair.tolist() == [2, 2]
    assert [ps.path_links(i) for i in ps.pair_paths(0)] == [["AC"], ["AB", "BC"]]
    assert [ps.path_sites(i) for i in ps.pair_paths(1)] == [["C", "A"], ["C", "B", "A"]]
    assert ps.path_latency_ms.tolist() == [1.0, 2.0, 1.0, 2.0]
    n_links = len(triangle.links)
    ac = triangle.links.index.get_loc("AC")
    assert ps.arc_incidence[0, ac] == 1 and ps.arc_incidence[2, n_links + ac] == 1  # forward, then reverse
    _check_incidences(triangle, ps)


@pytest.mark.parametrize("seed", range(8))
def test_same_latencies_as_networkx_yen(seed: int) -> None:
    net = _random_net(n=9 + seed, m=14 + 2 * seed, seed=seed)
    g = nx.Graph()
    for r in net.links.itertuples():
        g.add_edge(r.site_a, r.site_b, weight=r.latency_ms)
    pairs = list(itertools.permutations(net.sites.index, 2))
    k = 4
    ps = candidate_paths(net, pairs, k_paths=k, cache=False)
    _check_incidences(net, ps)
    for row, (s, t) in enumerate(pairs):
        ref = [nx.path_weight(g, p, "weight") for p in itertools.islice(nx.shortest_simple_paths(g, s, t, "weight"), k)]
        got = ps.path_latency_ms[ps.pair_paths(row)]
        np.testing.assert_allclose(np.sort(got), np.sort(ref), err_msg=f"{s}->{t}")


def test_parallel_links_are_distinct_paths() -> None:
    net = _random_net(n=6, m=8, seed=3, parallel=3)
    pairs = list(itertools.permutations(net.sites.index, 2))
    ps = candidate_paths(net, pairs, k_paths=6, cache=False)
    _check_incidences(net, ps)
    # reference: networkx on a simple graph where each parallel link gets its own midpoint node
    g = nx.Graph()
    for r in net.links.itertuples():
        g.add_edge(r.site_a, r.Index, weight=r.latency_ms / 2)
        g.add_edge(r.Index, r.site_b, weight=r.latency_ms / 2)
    for row, (s, t) in enumerate(pairs):
        ref = [nx.path_weight(g, p, "weight") for p in itertools.islice(nx.shortest_simple_paths(g, s, t, "weight"), 6)]
        np.testing.assert_allclose(np.sort(ps.path_latency_ms[ps.pair_paths(row)]), np.sort(ref))
    # some pair uses two parallel links as two distinct one-hop paths
    one_hop = ps.path_hops == 1
    assert (np.bincount(ps.path_pair[one_hop], minlength=len(pairs)) >= 2).any()


@pytest.mark.slow
def test_pairs_with_fewer_than_k_paths_terminate_fast() -> None:
    """A tree with a ring at the end: most pairs have 1 or 2 loopless paths (no enumeration blow-up)."""
    n = 60
    sites = [{"id": f"s{i}", "lon": float(i % 10), "lat": float(i // 10), "region": "NA"} for i in range(n)]
    links = [{"id": f"t{i}", "site_a": f"s{(i - 1) // 2}", "site_b": f"s{i}", "capacity_gbps": 10, "latency_ms": 1.0}
             for i in range(1, n)]
    links += [{"id": "ring1", "site_a": "s50", "site_b": "s59", "capacity_gbps": 10, "latency_ms": 1.0}]
    net = make_network(sites, links)
    pairs = list(itertools.permutations(net.sites.index, 2))
    ps = candidate_paths(net, pairs, k_paths=4, cache=False)
    assert ps.paths_per_pair.min() == 1 and ps.paths_per_pair.max() == 2
    _check_incidences(net, ps)


def test_latency_limit_scalar_and_per_pair(triangle: Network) -> None:
    ps = candidate_paths(triangle, [("A", "C"), ("A", "B"), ("B", "C")], k_paths=4, max_latency_ms=1.5, cache=False)
    assert ps.paths_per_pair.tolist() == [1, 1, 1]
    ps = candidate_paths(triangle, [("A", "C"), ("A", "B")], k_paths=4, max_latency_ms=[np.nan, 0.5], cache=False)
    assert ps.paths_per_pair.tolist() == [2, 0]  # B unreachable within 0.5 ms: zero candidates
    full = candidate_paths(triangle, [("A", "C"), ("A", "B")], k_paths=4, cache=False)
    limited = full.restrict([1.0, 5.0])
    assert limited.paths_per_pair.tolist() == [1, 2]
    _check_incidences(triangle, limited)


def test_restrict_matches_search_limit() -> None:
    net = _random_net(n=12, m=22, seed=11)
    pairs = list(itertools.permutations(net.sites.index, 2))
    limits = np.random.default_rng(0).uniform(2, 9, len(pairs))
    a = candidate_paths(net, pairs, k_paths=3, cache=False).restrict(limits)
    b = candidate_paths(net, pairs, k_paths=3, max_latency_ms=limits, cache=False)
    np.testing.assert_array_equal(a.paths_per_pair, b.paths_per_pair)
    np.testing.assert_allclose(a.path_latency_ms, b.path_latency_ms)


def test_disjoint_paths_share_no_link() -> None:
    net = _random_net(n=12, m=24, seed=5)
    pairs = list(itertools.permutations(net.sites.index, 2))
    ps = candidate_paths(net, pairs, k_paths=3, disjoint=True, cache=False)
    _check_incidences(net, ps)
    shortest = candidate_paths(net, pairs, k_paths=1, cache=False)
    for row in range(0, len(pairs), 7):  # a sample: each check below re-solves on a reduced network
        idx = ps.pair_paths(row)
        use = ps.link_incidence[idx].toarray()
        assert use.sum(axis=0).max() <= 1, "paths of a pair share a link"
        assert ps.path_latency_ms[idx[0]] == pytest.approx(shortest.path_latency_ms[row])
        # successive: path j is the shortest avoiding the links of paths < j
        for j in range(1, len(idx)):
            used = net.links.index[use[:j].sum(axis=0) > 0]
            rest = net.fail_links(used)
            ref = candidate_paths(rest, [pairs[row]], k_paths=1, cache=False)
            assert ps.path_latency_ms[idx[j]] == pytest.approx(ref.path_latency_ms[0])


def test_failures_without_links_and_top_up(submarine_cut: Network) -> None:
    net = _random_net(n=14, m=24, seed=7)
    pairs = list(itertools.permutations(net.sites.index, 2))
    failed = list(net.links.index[:3])
    got = paths_after_failure(net, failed, pairs, k_paths=4)
    ref = candidate_paths(net.fail_links(failed), pairs, k_paths=4, cache=False)
    assert got.link_ids.equals(net.links.index)
    np.testing.assert_array_equal(got.paths_per_pair, ref.paths_per_pair)
    np.testing.assert_allclose(got.path_latency_ms, ref.path_latency_ms)
    fail_cols = net.links.index.get_indexer(failed)
    assert got.link_incidence[:, fail_cols].nnz == 0
    _check_incidences(net, got)
    cut = candidate_paths(submarine_cut, [("NY", "LON")], k_paths=4).without_links(["tat-1", "tat-2"])
    assert cut.paths_per_pair.tolist() == [0]


def test_cache_hits_and_topology_changes(triangle: Network) -> None:
    clear_cache()
    a = candidate_paths(triangle, [("A", "C")], k_paths=2)
    assert candidate_paths(triangle, [("A", "C")], k_paths=2) is a
    assert candidate_paths(triangle.scale_demand(2.0), [("A", "C")], k_paths=2) is a  # demand is not topology
    b = candidate_paths(triangle.fail_links(["AC"]), [("A", "C")], k_paths=2)
    assert b is not a and b.paths_per_pair.tolist() == [1]
    assert candidate_paths(triangle, [("A", "C")], k_paths=2, cache=False) is not a


def test_bad_pairs_raise_validation_error(triangle: Network) -> None:
    with pytest.raises(ValidationError) as err:
        candidate_paths(triangle, [("A", "X"), ("B", "B")], cache=False)
    assert len(err.value.problems) == 2
    with pytest.raises(ValidationError):
        candidate_paths(triangle, [("A", "B")], k_paths=0)


def test_dataframe_pairs_and_disconnected_sites() -> None:
    sites = [{"id": x, "lon": i, "lat": 0, "region": "NA"} for i, x in enumerate("ABCD")]
    links = [{"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 1, "latency_ms": 1},
             {"id": "CD", "site_a": "C", "site_b": "D", "capacity_gbps": 1, "latency_ms": 1}]
    net = make_network(sites, links)
    ps = candidate_paths(net, pd.DataFrame({"src": ["A", "A", "D"], "dst": ["B", "C", "C"]}), cache=False)
    assert ps.paths_per_pair.tolist() == [1, 0, 1]
    frame = ps.to_frame()
    assert frame["links"].tolist() == ["AB", "CD"]


def test_synthetic_backbone_paths_match_networkx_sample() -> None:
    net = synthetic_backbone(40, seed=3, demand_pairs="none")
    rng = np.random.default_rng(1)
    sites = net.sites.index.to_numpy()
    pairs = [tuple(rng.choice(sites, 2, replace=False)) for _ in range(40)]
    ps = candidate_paths(net, pairs, k_paths=4, cache=False, workers=2)
    _check_incidences(net, ps)
    g = nx.Graph()
    for r in net.links.itertuples():
        g.add_edge(r.site_a, r.site_b, weight=r.latency_ms)
    for row, (s, t) in enumerate(pairs):
        ref = [nx.path_weight(g, p, "weight") for p in itertools.islice(nx.shortest_simple_paths(g, s, t, "weight"), 4)]
        np.testing.assert_allclose(np.sort(ps.path_latency_ms[ps.pair_paths(row)]), np.sort(ref))


@pytest.mark.parametrize("seed", range(6))
def test_compiled_kernel_matches_reference_kernel_exactly(seed: int) -> None:
    """The numba kernel returns the reference Python kernel's paths, in the same order, bit for bit."""
    from backbone.solver.paths import reference as path_reference
    from backbone.solver.paths import search as path_search
    from backbone.solver.paths import topology as path_topology

    net = _random_net(n=10 + 3 * seed, m=16 + 5 * seed, seed=seed, parallel=seed % 3)
    if seed % 2:  # pendant sites and a pendant triangle: several biconnected blocks, so block pruning is active
        n = len(net.sites)
        sites = [{"id": str(i), "lon": 0.0, "lat": 0.0, "region": "NA"} for i in net.sites.index]
        sites += [{"id": f"q{i}", "lon": 1.0, "lat": float(i), "region": "NA"} for i in range(4)]
        links = [{"id": str(r.Index), "site_a": r.site_a, "site_b": r.site_b, "capacity_gbps": 10,
                  "latency_ms": r.latency_ms} for r in net.links.itertuples()]
        links += [{"id": "p0", "site_a": "s0", "site_b": "q0", "capacity_gbps": 10, "latency_ms": 1.0},
                  {"id": "p1", "site_a": f"s{n - 1}", "site_b": "q1", "capacity_gbps": 10, "latency_ms": 2.0},
                  {"id": "p2", "site_a": "q1", "site_b": "q2", "capacity_gbps": 10, "latency_ms": 1.0},
                  {"id": "p3", "site_a": "q2", "site_b": "q3", "capacity_gbps": 10, "latency_ms": 1.0},
                  {"id": "p4", "site_a": "q3", "site_b": "q1", "capacity_gbps": 10, "latency_ms": 1.0}]
        net = make_network(sites, links)
    topo = path_topology.build_topology(net)
    lo, hi = (np.array(x, np.int64) for x in zip(*itertools.combinations(range(topo.n_sites), 2), strict=True))
    for k, limit in ((4, np.inf), (9, 7.0)):
        lim = np.full(len(lo), limit)
        ref = path_reference.search_group_python((topo, lo, hi, lim, k, False))
        got = path_search._search_group_compiled(topo, lo, hi, lim, k)
        for field in ("pair", "latency", "hops", "arcs", "sites"):
            np.testing.assert_array_equal(getattr(got, field), getattr(ref, field), err_msg=field)
    synthetic = synthetic_backbone(60, seed=seed, demand_pairs="none")
    topo = path_topology.build_topology(synthetic)
    lo, hi = (np.array(x, np.int64) for x in zip(*itertools.combinations(range(topo.n_sites), 2), strict=True))
    lim = np.full(len(lo), np.inf)
    ref = path_reference.search_group_python((topo, lo, hi, lim, 4, False))
    got = path_search._search_group_compiled(topo, lo, hi, lim, 4)
    for field in ("pair", "latency", "hops", "arcs", "sites"):
        np.testing.assert_array_equal(getattr(got, field), getattr(ref, field), err_msg=field)
