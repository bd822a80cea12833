"""Benchmark: all-pairs k lowest-latency loopless paths on synthetic backbones.

Compares, in the same run and on the same graphs:

* ``candidate_paths`` (solver/paths/candidates.py), 1 process and 2 processes, paths + incidences built;
* ``scipy.sparse.csgraph.yen`` (scipy >= 1.14), one call per unordered pair, distances only;
* ``networkx.shortest_simple_paths`` (Yen), per unordered pair, up to ``--nx-max`` sites.

For every reference it also checks that the latency multisets agree pair by pair. Memory is
the tracemalloc peak of a separate single-process ``candidate_paths`` run, plus the size of the
resulting PathSet. Run from the repository root::

    python -m benchmarks.bench_paths               # 50, 100, 200, 400 sites, k = 4
    python -m benchmarks.bench_paths --sizes 200 --k 4 --nx-max 0
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
import tracemalloc

import numpy as np

from backbone.solver.paths.candidates import PathSet, candidate_paths
from benchmarks.report import add_markdown_option, markdown_report
from benchmarks.synthetic import synthetic_backbone


def _pathset_mb(ps: PathSet) -> float:
    arrays = [ps.path_pair, ps.path_latency_ms, ps.path_length_km, ps.path_hops, ps._site_seq, ps._site_ptr,
              ps._arc_seq, ps._arc_ptr]
    total = sum(a.nbytes for a in arrays)
    for m in (ps.arc_incidence, ps.link_incidence):
        total += m.data.nbytes + m.indices.nbytes + m.indptr.nbytes
    return total / 2**20


def _ours_unordered(ps: PathSet, n: int) -> dict[tuple[int, int], np.ndarray]:
    ptr = ps.pair_ptr
    out = {}
    for row, (a, b) in enumerate(itertools.combinations(range(n), 2)):
        out[(a, b)] = np.sort(ps.path_latency_ms[ptr[row]:ptr[row + 1]])
    return out


def _agree(ours: dict[tuple[int, int], np.ndarray], ref: dict[tuple[int, int], np.ndarray]) -> str:
    bad = sum(1 for key, lat in ref.items() if len(lat) != len(ours[key]) or not np.allclose(np.sort(lat), ours[key]))
    return "yes" if bad == 0 else f"NO ({bad} pairs differ)"


def run(sizes: list[int], k: int, nx_max: int, yen_max: int, seed: int) -> None:
    rows = []
    warm = synthetic_backbone(12, seed=seed, demand_pairs="none")  # imports and first-call costs, untimed
    for workers in (1, 2):  # the compiled kernels load (or compile) once per process
        candidate_paths(warm, list(itertools.permutations(warm.sites.index, 2)), k_paths=k, cache=False,
                        workers=workers)
    for n in sizes:
        net = synthetic_backbone(n, seed=seed, demand_pairs="none")
        site_ids = list(net.sites.index)
        ordered = list(itertools.permutations(site_ids, 2))
        unordered = list(itertools.combinations(site_ids, 2))
        times = {}
        for workers in (1, 2):
            t0, c0 = time.perf_counter(), time.process_time()
            ps = candidate_paths(net, ordered, k_paths=k, cache=False, workers=workers)
            times[workers] = time.perf_counter() - t0
            if workers == 1:
                cpu_1p = time.process_time() - c0
        tracemalloc.start()
        ps_u = candidate_paths(net, unordered, k_paths=k, cache=False, workers=1)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        ours = _ours_unordered(ps_u, n)
        yen_s, yen_ok = float("nan"), "-"
        if n <= yen_max:
            from scipy.sparse.csgraph import yen

            graph = _csgraph(net)
            t0 = time.perf_counter()
            ref = {(a, b): yen(graph, a, b, k, directed=False) for a, b in itertools.combinations(range(n), 2)}
            yen_s = time.perf_counter() - t0
            yen_ok = _agree(ours, ref)
        nx_s, nx_ok = float("nan"), "-"
        if n <= nx_max:
            import networkx as nx

            g = nx.Graph()
            for r in net.links.itertuples():
                g.add_edge(site_ids.index(r.site_a), site_ids.index(r.site_b), weight=r.latency_ms)
            t0 = time.perf_counter()
            ref = {}
            for a, b in itertools.combinations(range(n), 2):
                ref[(a, b)] = np.array([nx.path_weight(g, p, "weight") for p in
                                        itertools.islice(nx.shortest_simple_paths(g, a, b, "weight"), k)])
            nx_s = time.perf_counter() - t0
            nx_ok = _agree(ours, ref)
        rows.append((n, len(net.links), len(ordered), ps.n_paths, times[1], cpu_1p, times[2], yen_s, yen_ok, nx_s,
                     nx_ok, peak / 2**20, _pathset_mb(ps)))
        print(f"  done {n} sites", flush=True)
    load = os.getloadavg()
    print(f"\nAll ordered pairs, k = {k}, synthetic backbone seed {seed}; cpu count {os.cpu_count()}, "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (shared machine)")
    head = (f"{'sites':>5} {'links':>5} {'pairs':>7} {'paths':>7} {'ours 1p s':>9} {'1p cpu s':>8} {'ours 2p s':>9} "
            f"{'scipy yen s':>11} {'= yen':>6} {'networkx s':>10} {'= nx':>6} {'peak MB':>8} {'PathSet MB':>10}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r[0]:>5} {r[1]:>5} {r[2]:>7} {r[3]:>7} {r[4]:>9.2f} {r[5]:>8.2f} {r[6]:>9.2f} {r[7]:>11.2f} "
              f"{r[8]:>6} {r[9]:>10.2f} {r[10]:>6} {r[11]:>8.1f} {r[12]:>10.1f}")
    print("\nscipy yen and networkx: one call per unordered pair (distances only; no incidences built); "
          "ours: both directions, incidences included. Peak MB: tracemalloc, unordered pairs, 1 process. "
          "1p cpu s: CPU time of the 1-process run (wall time is inflated when the machine is shared).")


def _csgraph(net):  # type: ignore[no-untyped-def]
    import scipy.sparse as sp

    a, b = net.link_endpoints()
    w = net.links["latency_ms"].to_numpy(float)
    n = len(net.sites)
    return sp.csr_matrix((w, (a, b)), shape=(n, n))


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its table (and write it with ``--markdown``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 400])
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--nx-max", type=int, default=100, help="largest size to run networkx on (slow)")
    parser.add_argument("--yen-max", type=int, default=200, help="largest size to run scipy yen on")
    parser.add_argument("--seed", type=int, default=1)
    add_markdown_option(parser)
    args = parser.parse_args(argv)
    with markdown_report(args.markdown, "Candidate paths: ours against scipy yen and networkx"):
        run(args.sizes, args.k, args.nx_max, args.yen_max, args.seed)


if __name__ == "__main__":
    main()
