"""Default ``backbone te`` on the shipped scenario (whose demands have latency SLOs): with and without the SLO
escalation.

Rows (each run through the planning task ``backbone te`` and the API call, with its default options):

* ``auto`` (the default): the path LP over 4 candidates per demand, then, when its proven gap is above 1 %, column
  generation over every admissible path (latency-limited pricing for SLO-bound demands);
* ``exact``: the path LP alone (what the default did before SLO-bound demands could escalate);
* ``colgen``: column generation alone.

Columns: method that ran, MLU, proven lower bound, gap ``(MLU - bound) / MLU``, the routing's seconds and the
whole task's seconds (``run_te_task``: the routing again, impact included; run apart), and the machine's load (``os.getloadavg``) when the row ran. The first
run in a fresh environment also compiles the path kernels (numba): a warm-up solve runs before the rows. The rows
repeat in one process, so after the warm-up the candidate paths come from the path cache (the seconds are the
LPs, pricing and tables; ``backbone te``'s own ``time`` line shows the path search of a fresh process).

Usage: ``python benchmarks/bench_te_slo.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> None:
    """Print the table."""
    from backbone.io import load_scenario
    from backbone.solver.core.progress import no_progress
    from backbone.solver.tasks.te import run_te_task
    from backbone.solver.te import solve_te
    from backbone.solver.te.options import TEOptions

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per row (the median seconds is shown)")
    args = ap.parse_args()
    net = load_scenario()
    solve_te(net, TEOptions(k_paths=1, method="exact"))  # warm-up: path kernels compiled or loaded
    print(f"shipped scenario: {len(net.sites)} sites, {len(net.links)} links, {len(net.demands)} demands "
          f"({int(net.demands['slo_rtt_ms'].notna().sum())} with a latency SLO)")
    print(f"{'method asked':<13}{'ran':<8}{'MLU':>10}{'bound':>10}{'gap':>9}{'routing s':>11}{'task s':>9}"
          f"{'load':>7}")
    for method in ("auto", "exact", "colgen"):
        routing, task = [], []
        for _ in range(args.repeat):
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            solve_te(net, TEOptions(method=method))
            t1 = time.perf_counter()
            s = run_te_task(net, TEOptions(method=method), None, no_progress).summary
            routing.append(t1 - t0)
            task.append(time.perf_counter() - t1)
        gap = s.gap
        print(f"{method:<13}{s['method']:<8}{s['mlu']:>10.4%}{s['lower_bound']:>10.4%}"
              f"{'' if gap is None else f'{gap:.2%}':>9}{statistics.median(routing):>11.2f}"
              f"{statistics.median(task):>9.2f}{load:>7.1f}")


if __name__ == "__main__":
    main()
