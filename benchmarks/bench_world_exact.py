"""The fast min-MLU method side by side with the plain LPs on TopoHub's world backbone (issue 15, item 6).

Same instances as :mod:`benchmarks.bench_world_te` (gravity demand among the ``N`` highest-degree cities,
10 % of the total link capacity). For each size it runs, one at a time, each in its own subprocess under a
wall-clock cap and a resident-memory cap (:func:`benchmarks.memcap.run_capped`; 8 GB by default, the
machine is shared), so an LP that does not fit is reported as ``did not fit`` / ``timeout``:

* ``core``: the fast engine (source-aggregated Frank-Wolfe, :mod:`backbone.solver.te.srcflow`, with its
  duality bound) alone, at every size (``colgen`` runs it above 2,500 demands without SLOs);
* ``auto``: ``backbone te``'s default (``method="auto"``), shown as ``auto>METHOD`` with the method that
  gave the answer (the path LP, followed by column generation when its proven gap is above 1 %);
* ``colgen``: ``--method colgen`` (``method="colgen"``; above 2,500
  demands without SLOs the source-flow Frank-Wolfe engine, below it column generation over every path), with the
  independent checker;
* ``exact``: the plain path LP over ``k`` candidate paths (``--method exact``; its optimum is over those
  paths only, so it is an upper bound on the true optimum);
* ``edge``: the plain edge LP through ``solve_te(formulation="edge", method="exact")``: per-source arc
  flows (one commodity per source), HiGHS interior point without crossover (``lp_method`` auto);
* ``edge-red``: the same source-aggregated edge LP on the *exact reduction* of the instance
  (:mod:`backbone.solver.te.reduce`: transit leaves removed, pendant demand sites merged, transit chains
  and parallel links contracted), whose min-MLU, maxed with the pendant links' fixed utilisation, is the
  min-MLU of the original instance; ``--edge-lp-method`` picks HiGHS's IPM or simplex.

``vs edge opt`` is ``(MLU - OPT) / OPT`` where ``OPT`` is the optimum of an edge LP that solved to
optimality at that size (the true min-MLU over every routing, up to the solver's tolerance); ``gap`` is
the method's own proven gap ``(MLU - bound) / MLU``.

Usage::

    python -m benchmarks.bench_world_exact --sizes 100 200 300 --cap 420 --time-limit 300 --cap-gb 8
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.memcap import run_capped

ROOT = Path(__file__).resolve().parent.parent
METHODS = ("core", "auto", "colgen", "exact", "edge", "edge-red")


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def run_edge(n_cities: int, time_limit: float, reduced: bool, lp_method: str) -> dict[str, Any]:
    """The source-aggregated edge LP (on the exact reduction when ``reduced``); returns the table row."""
    from backbone.solver.core.deadline import TimeLimitReached
    from backbone.solver.te import TEOptions, solve_te
    from backbone.solver.te.formulations import build_formulation
    from backbone.solver.te.instance import build_instance
    from backbone.solver.te.objectives import run_objective
    from backbone.solver.te.reduce import reduce_instance, reduced_te_instance
    from benchmarks.bench_world_te import world_with_demand

    net = world_with_demand(n_cities)
    t0 = time.perf_counter()
    row: dict[str, Any] = {"cities": n_cities, "nodes": len(net.sites), "demands": len(net.demands),
                           "method": "edge-red" if reduced else "edge", "lp_method": lp_method}
    if not reduced:
        s = solve_te(net, TEOptions(objective="min-mlu", formulation="edge", method="exact", time_limit_s=time_limit, lp_method=lp_method)).summary
        row.update(status=s.status, mlu=s.mlu, bound=None, gap=None, lp=s.lp)
    else:
        inst = build_instance(net)
        red = reduce_instance(inst, np.flatnonzero(inst.routable))
        fixed = red.fixed_mlu(inst.arc_capacity_gbps)
        ri = reduced_te_instance(inst, red)
        form = build_formulation(ri, "edge")
        left = max(1.0, time_limit - (time.perf_counter() - t0))
        try:
            out = run_objective(form, ri, "min-mlu", backend="highs", time_limit_s=left, lp_method=lp_method)
        except TimeLimitReached:
            row.update(status="time_limit: no solution", seconds=time.perf_counter() - t0, peak_gb=_peak_gb(),
                       load_avg=os.getloadavg()[0])
            return row
        main = out.stages[0]
        row.update(status="time_limit" if out.timed_out else out.status.value,
                   mlu=max(fixed, float(out.objective_value)), bound=None, gap=None,
                   lp={"rows": main.rows, "cols": main.cols, "nonzeros": main.nonzeros},
                   reduced={"nodes": red.n_nodes, "links": red.n_links, "pairs": len(red.gbps), "pendant_mlu": fixed})
    row.update(seconds=time.perf_counter() - t0, peak_gb=_peak_gb(), load_avg=os.getloadavg()[0])
    return row


def _child(n: int, method: str, args: argparse.Namespace) -> dict[str, Any]:
    if method in ("edge", "edge-red"):
        cmd = [sys.executable, "-m", "benchmarks.bench_world_exact", "--one", str(n), method,
               "--time-limit", str(args.time_limit), "--edge-lp-method", args.edge_lp_method]
    else:
        cmd = [sys.executable, "-m", "benchmarks.bench_world_te", "--one", str(n), method,
               "--time-limit", str(args.time_limit), "--k", str(args.k)]
    c = run_capped(cmd, args.cap, args.cap_gb, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if c.outcome == "ok":
        row: dict[str, Any] = json.loads(c.stdout.strip().splitlines()[-1])
        ran = row.get("method", method)
        row["method"] = method if ran in (method, "core", "edge", "edge-red") else f"{method}>{ran}"
        return row
    why = {"memory": f"did not fit: > {args.cap_gb:g} GB", "timeout": f"timeout: > {args.cap:.0f} s",
           "error": f"error {c.returncode}: {(c.stderr.strip().splitlines() or [''])[-1][:100]}"}[c.outcome]
    return {"cities": n, "method": method, "status": why, "seconds": c.seconds, "peak_gb": c.peak_gb}


def _f(v: Any, spec: str, width: int) -> str:
    return f"{'-' if v is None else format(v, spec):>{width}}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 300])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--k", type=int, default=4, help="candidate paths of the path LP (exact)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="solve time limit per run, seconds")
    ap.add_argument("--cap", type=float, default=420.0, help="wall-clock cap per run (import and checker too), s")
    ap.add_argument("--cap-gb", type=float, default=8.0, help="resident-memory cap per run, GB")
    ap.add_argument("--edge-lp-method", choices=["auto", "ipm", "simplex"], default="auto",
                    help="HiGHS method of the edge LPs (auto: interior point without crossover at this size)")
    ap.add_argument("--one", nargs=2, metavar=("CITIES", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_edge(int(args.one[0]), args.time_limit, args.one[1] == "edge-red", args.edge_lp_method)))
        return
    from benchmarks.bench_world_te import WORLD

    if not WORLD.exists():
        print(f"skipped: {WORLD} is absent")
        return
    rows: list[dict[str, Any]] = []
    for n in args.sizes:
        for method in args.methods:
            rows.append(_child(n, method, args))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print_table(rows, args)


def print_table(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """The side-by-side table (one line per size and method)."""
    opt: dict[int, float] = {}
    for r in rows:
        if r["method"] in ("edge", "edge-red") and r.get("status") == "optimal":
            opt[r["cities"]] = min(opt.get(r["cities"], np.inf), r["mlu"])
    load = os.getloadavg()
    print(f"\nWorld backbone min-MLU: fast method vs the plain LPs (time limit {args.time_limit:g} s, caps "
          f"{args.cap:g} s and {args.cap_gb:g} GB per run, path LP k={args.k}, edge LP {args.edge_lp_method}); "
          f"cpu count {os.cpu_count()}, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    head = (f"{'cities':>6} {'demands':>8} {'method':>12} {'status':>28} {'seconds':>8} {'peak GB':>7} {'MLU':>9} "
            f"{'bound':>9} {'gap':>8} {'vs edge opt':>11}")
    print(head)
    print("-" * len(head))
    for r in rows:
        mlu = r.get("mlu")
        gap = None if r.get("gap") is None else 100 * r["gap"]
        ref = opt.get(r["cities"])
        vs = None if mlu is None or ref is None else 100 * (mlu - ref) / ref
        print(f"{r['cities']:>6} {_f(r.get('demands'), ',', 8)} {r['method']:>12} {r['status'][:28]:>28} "
              f"{r['seconds']:>8.1f} {r['peak_gb']:>7.2f} {_f(mlu, '.5f', 9)} {_f(r.get('bound'), '.5f', 9)} "
              f"{_f(gap, '.3f', 7)}% {_f(vs, '+.3f', 10)}%")
    print("\nseconds: the solve's wall time (not the import) for finished runs, the whole subprocess for capped ones; "
          "peak GB: the run's peak resident set (sampled for capped runs); vs edge opt: relative to the optimum of "
          "an edge LP that solved at that size.")


if __name__ == "__main__":
    main()
