"""Internet-scale TE benchmark: min-MLU on TopoHub's world backbone (3,815 nodes, 5,189 links).

Demand: all ordered pairs among the ``N`` highest-degree cities (ties by id), gravity by node degree
(``vol_ij ~ deg_i deg_j``), scaled to 10 % of the total link capacity (every link 100 Gbps, the
importer's default; TopoHub gives no capacities). Each (size, method) runs in its own subprocess
under a wall-clock cap, so ``peak GB`` is that run's own peak RSS; a run over the cap prints
``> cap``. Methods: ``exact`` (the path LP over k=4 candidates: the plain LP), ``colgen``
(column generation over every path; above 2,500 demands without SLOs the source-aggregated Frank-Wolfe engine of
:mod:`backbone.solver.te.srcflow`), ``core`` (that engine alone, without the path decomposition and the
result tables) and ``pop`` (4 random sub-problems in 2 processes; peak GB is
the largest of the run and its worker processes, each on its own). The run's own peak includes
the independent checker and the result tables. ``bound`` is the proven lower bound on the MLU over every routing and
``gap = (MLU - bound) / MLU``; every finished result is checked by the independent TE checker.

Usage::

    python -m benchmarks.bench_world_te --sizes 300 600 1246 --methods exact colgen pop --cap 600
    python -m benchmarks.bench_world_te --sizes 1246 --methods colgen --cap 900 --time-limit 420
    python -m benchmarks.bench_world_te --sizes 40 --methods colgen --slo-rtt-ms 150 --cap 300 --no-check
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
WORLD = ROOT.parent / "shared" / "conformance" / "topohub" / "backbone" / "world.json"


def world_with_demand(n_cities: int, share_of_capacity: float = 0.10, slo_rtt_ms: float | None = None) -> Any:
    """The world backbone with gravity demand among its ``n_cities`` highest-degree cities (every demand with
    the RTT SLO ``slo_rtt_ms`` when given)."""
    from backbone.io.nodelink import load_node_link

    net = load_node_link(WORLD)
    deg = pd.concat([net.links["site_a"], net.links["site_b"]]).value_counts().reindex(net.sites.index,
                                                                                     fill_value=0)
    cities = net.sites.index[net.sites["node_type"] == "City"]
    ranked = pd.DataFrame({"deg": deg.loc[cities].to_numpy(), "name": cities.astype(str)})
    chosen = cities.to_numpy()[ranked.sort_values(["deg", "name"], ascending=[False, True]).index[:n_cities]]
    n = len(chosen)
    i, j = np.where(~np.eye(n, dtype=bool))
    mass = deg.loc[chosen].to_numpy(float)
    vol = mass[i] * mass[j]
    total = share_of_capacity * float(net.links["capacity_gbps"].sum())
    demands = pd.DataFrame({"src": chosen[i], "dst": chosen[j], "demand_gbps": total * vol / vol.sum(),
                            "traffic_class": "bulk", "slo_rtt_ms": np.nan if slo_rtt_ms is None else slo_rtt_ms},
                           index=pd.Index([f"d{x}" for x in range(len(i))], name="id"))
    return net.copy_with(demands=demands)


def run_one(n_cities: int, method: str, time_limit: float, check: bool = True,
            slo_rtt_ms: float | None = None, k: int = 4) -> dict[str, Any]:
    """One solve in this process; returns the table row."""
    from backbone.solver.checks.te import check_te
    from backbone.solver.te import TEOptions, solve_te
    from backbone.solver.te.sections import SourceFlowFigures

    t0 = time.perf_counter()
    net = world_with_demand(n_cities, slo_rtt_ms=slo_rtt_ms)
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    r = solve_te(net, TEOptions(objective="min-mlu", formulation="path", k_paths=k, method=method, time_limit_s=time_limit, pop_parts=4))
    seconds = time.perf_counter() - t1
    s = r.summary
    ok = check_te(net, r).ok if check else None
    return {"cities": n_cities, "nodes": len(net.sites), "demands": len(net.demands), "method": s.method,
            "status": s.status, "load_s": load_s, "seconds": seconds, "paths_s": s.paths_seconds,
            "solve_s": s.solve_seconds,
            "peak_gb": max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
            / 2**20,
            "mlu": s.mlu, "bound": s.lower_bound, "gap": s.gap, "checked": ok,
            "columns": s.colgen.columns if s.colgen is not None else s.path_variables,
            "table": len(r.paths),
            "iterations": s.colgen.source_flows.iterations if isinstance(s.colgen, SourceFlowFigures) else None,
            "masters": len(s.stages or []), "build_s": s.build_seconds,
            "load_avg": os.getloadavg()[0]}


def run_core(n_cities: int, time_limit: float) -> dict[str, Any]:
    """``colgen``'s min-MLU engine above its master threshold without the path decomposition and the result
    tables: :func:`~backbone.solver.te.srcflow.source_flow_mlu` (Frank-Wolfe on per-source arc flows with its
    duality bound) for the whole time limit."""
    from backbone.solver.te.bounds import site_cut_bound
    from backbone.solver.te.instance import build_instance
    from backbone.solver.te.srcflow import source_flow_mlu

    t0 = time.perf_counter()
    net = world_with_demand(n_cities)
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    inst = build_instance(net)
    dem = np.flatnonzero(inst.routable)
    sf = source_flow_mlu(inst, dem, t1 + time_limit)
    bound = max(sf.lower_bound, site_cut_bound(inst, dem))
    seconds = time.perf_counter() - t1
    return {"cities": n_cities, "nodes": len(net.sites), "demands": len(net.demands), "method": "core",
            "status": "feasible", "load_s": load_s, "seconds": seconds, "paths_s": sf.seconds, "solve_s": 0,
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "mlu": sf.mlu, "bound": bound,
            "gap": (sf.mlu - bound) / sf.mlu if sf.mlu > 0 else 0.0, "checked": None, "columns": 0, "table": 0,
            "iterations": sf.iterations, "masters": 0, "build_s": 0.0, "load_avg": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 600, 1246])
    parser.add_argument("--methods", nargs="+", default=["exact", "colgen", "pop"])
    parser.add_argument("--cap", type=float, default=600.0, help="wall-clock cap per run, seconds")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="solve time limit per run, seconds (default: the cap less 60 s)")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the independent checker (its path tables grow with the result's paths)")
    parser.add_argument("--slo-rtt-ms", type=float, default=None,
                        help="give every demand this RTT SLO (colgen then solves its masters from the start)")
    parser.add_argument("--k", type=int, default=4, help="candidate paths per demand (exact, pop)")
    parser.add_argument("--one", nargs=2, metavar=("CITIES", "METHOD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    limit = args.time_limit if args.time_limit is not None else max(10.0, args.cap - 60)
    if args.one:
        if args.one[1] == "core":
            row = run_core(int(args.one[0]), time_limit=limit)
        else:
            row = run_one(int(args.one[0]), args.one[1], time_limit=limit, check=not args.no_check,
                          slo_rtt_ms=args.slo_rtt_ms, k=args.k)
        print(json.dumps(row))
        return
    if not WORLD.exists():
        print(f"skipped: {WORLD} is absent")
        return
    rows = []
    for n in args.sizes:
        for method in args.methods:
            cmd = [sys.executable, "-m", "benchmarks.bench_world_te", "--one", str(n), method, "--cap", str(args.cap),
                   "--time-limit", str(limit), "--k", str(args.k), *(["--no-check"] if args.no_check else []),
                   *([] if args.slo_rtt_ms is None else ["--slo-rtt-ms", str(args.slo_rtt_ms)])]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.cap, cwd=ROOT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
                if p.returncode == 0:
                    rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
                else:
                    rows.append({"cities": n, "method": method, "status": f"error {p.returncode}",
                                 "error": p.stderr.strip().splitlines()[-1:]})
            except subprocess.TimeoutExpired:
                rows.append({"cities": n, "method": method, "status": f"> {args.cap:.0f} s"})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    load = os.getloadavg()
    slo = "" if args.slo_rtt_ms is None else f", every demand with a {args.slo_rtt_ms:g} ms RTT SLO"
    print(f"\nWorld backbone min-MLU, gravity demand among the N highest-degree cities{slo}; cpu count {os.cpu_count()}, "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (shared machine)")
    head = (f"{'cities':>6} {'nodes':>5} {'demands':>9} {'method':>7} {'status':>9} {'seconds':>8} {'paths s':>7} "
            f"{'peak GB':>7} {'MLU':>9} {'bound':>9} {'gap':>8} {'paths':>9} {'table':>7} {'checked':>7} {'load':>4} "
            f"{'masters':>7} {'build s':>7}")
    print(head)
    print("-" * len(head))
    for r in rows:
        if "seconds" not in r:
            print(f"{r['cities']:>6} {'':>5} {'':>9} {r['method']:>7} {r['status']:>9}")
            continue
        bound = "-" if r["bound"] is None else f"{r['bound']:.5f}"
        gap = "-" if r["gap"] is None else f"{100 * r['gap']:.3f}%"
        print(f"{r['cities']:>6} {r['nodes']:>5} {r['demands']:>9,} {r['method']:>7} {r['status']:>9} "
              f"{r['seconds']:>8.1f} {r['paths_s']:>7.1f} {r['peak_gb']:>7.2f} {r['mlu']:>9.5f} {bound:>9} {gap:>8} "
              f"{r['columns']:>9,} {r.get('table', 0):>7,} {({True: 'yes', False: 'NO', None: 'skipped'})[r['checked']]:>7} "
              f"{r.get('load_avg', float('nan')):>4.1f} {r.get('masters', 0):>7} {r.get('build_s', 0.0):>7.2f}")
    print("\nseconds: solve_te wall time (paths, build, solve, extract; not the import); paths: LP path "
          "variables (colgen: columns in the final master, or the paths of the source-flow decomposition); table: "
          "rows of the result's paths table; load: the 1-minute load average when the run ended; masters: LP stages "
          "solved (colgen: restricted masters); build s: seconds building (colgen: building and extending) them.")


if __name__ == "__main__":
    main()
