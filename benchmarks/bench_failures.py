"""Failure-sweep benchmark: single-SRLG sweep of a scenario (default: the shipped one).

Measured side by side in one run:

* ``from scratch``: every scenario solved on its own -- fail the SRLG, compute candidate paths
  for the failed network (cache cleared), build and solve (the sum of the per-scenario times);
* ``sweep, serial``: the sweep in one process, reusing the intact network's candidate paths;
* ``sweep, local pool`` and ``sweep, dask`` with 1 and 2 workers (worker start-up included).

Usage: ``python benchmarks/bench_failures.py [SCENARIO] [--kind srlg] [--skip-dask]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    from backbone.io import load_scenario
    from backbone.solver.failures import (
        FailureOptions,
        SweepContext,
        enumerate_scenarios,
        evaluate_scenario,
        sweep,
    )
    from backbone.solver.paths import candidates as paths_mod
    from backbone.solver.te import TEOptions, solve_te

    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?", default=None)
    ap.add_argument("--kind", default="srlg")
    ap.add_argument("--objective", default="max-throughput")
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args()
    console = Console()
    net = load_scenario(args.scenario)
    scenarios = enumerate_scenarios(net, args.kind)
    n = len(scenarios)
    console.print(f"{net.name}: {len(net.sites)} sites, {len(net.links)} links, {len(net.demands)} demands, "
                  f"{n} {args.kind} scenarios")
    rows = []

    # from scratch: each scenario alone (paths recomputed, nothing reused)
    t_scratch = 0.0
    scratch_mlu = {}
    for sc in scenarios:
        paths_mod.clear_cache()
        t0 = time.perf_counter()
        failed = sc.apply(net)
        res = solve_te(failed, TEOptions(objective=args.objective, formulation="path", k_paths=4))
        t_scratch += time.perf_counter() - t0
        scratch_mlu[sc.id] = res.mlu
    rows.append(("from scratch (sum of solves)", 1, t_scratch))

    paths_mod.clear_cache()
    base = FailureOptions(kind=args.kind, objective=args.objective, engine="serial")
    t0 = time.perf_counter()
    ctx = SweepContext.build(net, base)
    recs = [evaluate_scenario(ctx, sc) for sc in scenarios]
    t_serial = time.perf_counter() - t0
    rows.append(("sweep, serial, reuse (incl. baseline)", 1, t_serial))
    worst = max(abs(r.impact.mlu - scratch_mlu[r.scenario]) for r in recs)

    configs = [("local", 2)] + ([] if args.skip_dask else [("dask", 1), ("dask", 2)])
    for engine, workers in configs:
        paths_mod.clear_cache()
        opts = base.model_copy(update={"engine": engine, "workers": workers})
        t0 = time.perf_counter()
        sweep(net, opts)
        rows.append((f"sweep, {engine}", workers, time.perf_counter() - t0))

    t = Table(title=f"{args.kind} failure sweep: {n} scenarios")
    for col in ("run", "workers", "total s", "scenarios/s", "vs from scratch"):
        t.add_column(col, justify="left" if col == "run" else "right")
    for name, workers, secs in rows:
        t.add_row(name, str(workers), f"{secs:.2f}", f"{n / secs:.2f}", f"{secs / t_scratch:.2f}x")
    console.print(t)
    console.print(f"max |MLU(sweep) - MLU(from scratch)| over scenarios: {worst:.2e}")


if __name__ == "__main__":
    main()
