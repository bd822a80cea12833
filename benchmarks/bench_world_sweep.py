"""Link-failure sweep of the world backbone's min-MLU: cold vs warm-started solves, and Dask speed-up.

The network and demand are :func:`benchmarks.bench_world_te.world_with_demand` (TopoHub's world backbone,
gravity demand among the ``N`` highest-degree cities). The intact network is solved once by the
source-aggregated Frank-Wolfe engine (:func:`~backbone.solver.te.srcflow.source_flow_mlu`) to a fifth of the
scenarios' gap target (it is solved once and broadcast, and a warm start is only as close as it); then a random
sample of ``S`` of its 5,189 single-link failures (seed 0) is solved

* serially, cold (from scratch) and warm (from the intact flows: ``warm=``), to the same gap target and
  per-scenario time limit, giving seconds and iterations per scenario;
* warm on a Dask ``LocalCluster`` of 1 and of 2 worker processes (one thread each): the intact instance
  and flows are scattered to every worker once, then one task per scenario; wall time from the first
  submit to the last result, and the speed-up over 1 worker.

A failure that cuts cities off (a bridge) drops the demands it disconnects (``fail_links``); ``cut`` counts
those scenarios. The table also estimates the full sweep (all 5,189 links) from the mean warm seconds.

Usage::

    python -m benchmarks.bench_world_sweep --cities 100 --scenarios 20
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

from benchmarks.bench_world_te import WORLD, world_with_demand

FULL_SWEEP = 5189
"""Single-link failures of the world backbone (its links)."""


def solve_failure(inst: Any, intact: Any, link: int, gap_tol: float, time_limit: float,
                  warm: bool) -> dict[str, Any]:
    """Min-MLU of ``inst`` with link ``link`` failed; warm-started from ``intact`` when ``warm``."""
    from backbone.solver.te.srcflow import fail_links, source_flow_mlu

    t0 = time.perf_counter()
    failed = fail_links(inst, np.array([link]))
    dem = np.flatnonzero(failed.routable)
    sf = source_flow_mlu(failed, dem, t0 + time_limit, gap_tol=gap_tol, warm=intact if warm else None)
    return {"link": link, "seconds": time.perf_counter() - t0, "iterations": sf.iterations, "mlu": sf.mlu,
            "bound": sf.lower_bound, "cut": int(len(dem) < int(inst.routable.sum()))}


def dask_sweep(inst: Any, intact: Any, links: list[int], workers: int, gap_tol: float,
               time_limit: float) -> tuple[float, list[dict[str, Any]]]:
    """Warm-started failures on a local Dask cluster of ``workers`` processes: (wall seconds, results)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit="3GB") as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        t0 = time.perf_counter()
        inst_f, intact_f = client.scatter([inst, intact], broadcast=True)
        futures = [client.submit(solve_failure, inst_f, intact_f, link, gap_tol, time_limit, True, pure=False)
                   for link in links]
        results = client.gather(futures)
        return time.perf_counter() - t0, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cities", type=int, default=100)
    parser.add_argument("--scenarios", type=int, default=12, help="sampled single-link failures (of 5,189)")
    parser.add_argument("--gap", type=float, default=0.01, help="gap target (MLU - bound) / MLU per solve")
    parser.add_argument("--intact-gap", type=float, default=None,
                        help="gap target of the intact solve (default: a fifth of --gap; solved once, broadcast)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-serial", action="store_true",
                        help="skip the serial cold/warm comparison: only the Dask runs (for speed-up on many scenarios)")
    args = parser.parse_args()
    if not WORLD.exists():
        print(f"skipped: {WORLD} is absent")
        return
    from backbone.solver.te.instance import build_instance
    from backbone.solver.te.srcflow import source_flow_mlu

    net = world_with_demand(args.cities)
    inst = build_instance(net)
    t0 = time.perf_counter()
    intact_gap = args.intact_gap if args.intact_gap is not None else args.gap / 5
    intact = source_flow_mlu(inst, np.flatnonzero(inst.routable), t0 + 3 * args.time_limit, gap_tol=intact_gap)
    intact_s = time.perf_counter() - t0
    print(f"intact: {intact_s:.1f} s, {intact.iterations} iterations", file=sys.stderr, flush=True)
    rng = np.random.default_rng(0)
    links = sorted(int(x) for x in rng.choice(inst.n_links, min(args.scenarios, inst.n_links), replace=False))
    cold, warm = [], []
    for link in [] if args.no_serial else links:
        cold.append(solve_failure(inst, intact, link, args.gap, args.time_limit, False))
        warm.append(solve_failure(inst, intact, link, args.gap, args.time_limit, True))
        print(f"link {link}: cold {cold[-1]['seconds']:.1f} s / {cold[-1]['iterations']} it, warm "
              f"{warm[-1]['seconds']:.1f} s / {warm[-1]['iterations']} it", file=sys.stderr, flush=True)
    walls, work = {}, {}
    for w in args.workers:
        walls[w], results = dask_sweep(inst, intact, links, w, args.gap, args.time_limit)
        work[w] = (sum(r["seconds"] for r in results), max((r["seconds"] for r in results), default=0.0))
        print(f"dask {w} workers: {walls[w]:.1f} s", file=sys.stderr, flush=True)

    load = os.getloadavg()
    print(f"\nWorld backbone single-link failure sweep: {args.cities} cities, {len(net.demands):,} demands, "
          f"{len(links)} sampled failures of {inst.n_links:,} (seed 0), gap target {100 * args.gap:g} %, "
          f"{args.time_limit:g} s per solve; cpu count {os.cpu_count()}, load average {load[0]:.1f} / "
          f"{load[1]:.1f} / {load[2]:.1f} (shared machine)")
    print(f"intact: MLU {intact.mlu:.5f}, bound {intact.lower_bound:.5f}, {intact.iterations} iterations, "
          f"{intact_s:.1f} s")
    head = f"{'start':>5} {'mean s':>7} {'max s':>6} {'mean it':>7} {'max gap':>8} {'reached':>7} {'cut':>4}"
    if cold:
        print(head)
        print("-" * len(head))
    for name, rows in (("cold", cold), ("warm", warm)) if cold else ():
        gaps = [(r["mlu"] - r["bound"]) / r["mlu"] if r["mlu"] > 0 else 0.0 for r in rows]
        print(f"{name:>5} {np.mean([r['seconds'] for r in rows]):>7.2f} {max(r['seconds'] for r in rows):>6.2f} "
              f"{np.mean([r['iterations'] for r in rows]):>7.1f} {100 * max(gaps):>7.3f}% "
              f"{sum(g <= args.gap for g in gaps):>3}/{len(rows):<3} {sum(r['cut'] for r in rows):>4}")
    if cold:
        worst = max(abs(c["mlu"] - w["mlu"]) / c["mlu"] for c, w in zip(cold, warm, strict=True) if c["mlu"] > 0)
        print(f"largest |MLU warm - MLU cold| / MLU cold: {100 * worst:.3f} %")
    head = (f"{'workers':>7} {'wall s':>7} {'speed-up':>8} {'efficiency':>10} {'sum s':>7} {'max s':>6} "
            f"{'s/scenario':>10} {'full sweep h':>12}")
    print(head)
    print("-" * len(head))
    base = walls.get(min(walls))
    for w, wall in walls.items():
        per = wall / len(links)
        print(f"{w:>7} {wall:>7.1f} {base / wall:>8.2f} {100 * base / wall * min(walls) / w:>9.0f}% {work[w][0]:>7.1f} "
              f"{work[w][1]:>6.1f} {per:>10.2f} {per * FULL_SWEEP / 3600:>12.2f}")
    print(f"\nreached: scenarios whose gap met the target; cut: failures that disconnect some demand (those "
          f"demands dropped); full sweep h: this wall time per scenario x {FULL_SWEEP:,}; sum s / max s: the scenarios' own seconds summed / the longest; dask wall time includes "
          "scattering the intact instance and flows, not starting the cluster.")


if __name__ == "__main__":
    main()
