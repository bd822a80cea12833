"""Start-up cost of a failure sweep's process pool: ``--sweeps`` sweeps of the shipped scenario's first ``--states``
SRLG states, each starting its own pool, then the same inside one :func:`~backbone.solver.failures.pool.sweep_pool`
block; and the intact baseline's solve, then the shortfall measurement's context of the same network (the baseline
reused). Prints wall and CPU seconds (the pool's processes as children) and the load average, and checks the
records' verdicts are the same.

Usage: ``python benchmarks/bench_sweep_pool.py [--sweeps 3] [--states 8] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _children_cpu_s() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    from backbone.io import load_scenario
    from backbone.solver.failures import FailureOptions, SweepContext, enumerate_scenarios
    from backbone.solver.failures.engines import execute_sweep
    from backbone.solver.failures.pool import sweep_pool

    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps", type=int, default=3)
    ap.add_argument("--states", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    net = load_scenario()
    opts = FailureOptions(kind="srlg", shortfall=False, method="path", workers=a.workers)
    table = Table(title=f"failure sweeps: {a.sweeps} x {len(enumerate_scenarios(net, 'srlg')[:a.states])} SRLG states, "
                        f"{a.workers} workers")
    for col in ("run", "wall s", "CPU s", "load average (1/5/15 min)"):
        table.add_column(col, justify="left" if col == "run" else "right")

    def load() -> str:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())

    t, c = time.perf_counter(), time.process_time()
    ctx = SweepContext.build(net, opts)
    table.add_row("quick sweep's context (intact baseline solved)", f"{time.perf_counter() - t:.1f}",
                  f"{time.process_time() - c:.2f}", load())
    t, c = time.perf_counter(), time.process_time()
    SweepContext.build(net, opts.model_copy(update={"shortfall": True}))
    table.add_row("shortfall measurement's context (baseline reused)", f"{time.perf_counter() - t:.1f}",
                  f"{time.process_time() - c:.2f}", load())
    states = enumerate_scenarios(net, "srlg")[:a.states]
    verdicts = {}
    for mode in ("a pool per sweep", "one shared pool"):
        t, c0 = time.perf_counter(), _children_cpu_s()
        if mode == "one shared pool":
            with sweep_pool(a.workers):
                runs = [execute_sweep(net, states, opts, None, ctx)[0] for _ in range(a.sweeps)]
        else:
            runs = [execute_sweep(net, states, opts, None, ctx)[0] for _ in range(a.sweeps)]
        verdicts[mode] = [(r.scenario, r.impact.survived, r.impact.overloaded) for rs in runs for r in rs]
        table.add_row(f"{mode} (CPU: the pool's processes)", f"{time.perf_counter() - t:.1f}",
                      f"{_children_cpu_s() - c0:.2f}", load())
    table.caption = f"same verdicts in both modes: {len(set(map(tuple, verdicts.values()))) == 1}"
    Console().print(table)


if __name__ == "__main__":
    main()
