"""The whole default ``te`` (routing, bound and impact) against a bare HiGHS solve of its routing LP (issue #32).

For each case (one subprocess each, so one case's memory and JIT warm-up do not colour the next) it runs the
planning task ``backbone te`` runs (:func:`backbone.solver.tasks.te.run_te_task`, default options: min-MLU,
``k_paths=4``, ``method=auto``, impact on) and prints one row:

* stage times: the path LP ``auto`` ran before escalating to column generation (when it did), then the routing
  reported: candidate paths, model build, LP solve, result extraction (the routing), impact (the traffic that
  cannot be carried at <= 100 %: max-throughput when overloaded) and bound (the routing's MLU lower bound);
* the whole task (``total``), and a bare HiGHS solve of the *same* routing LP (the min-MLU path LP over the same
  ``k_paths`` candidates, read from an MPS file by a fresh HiGHS, same method options:
  :func:`benchmarks.bench_te.bare_solve`), run back to back in the same process, and their ratio (target: at
  most 2x) in wall-clock and in CPU seconds (``time.process_time``: on a shared, loaded machine the wall clock
  moves with the other processes, the CPU seconds much less);
* the MLU, its proven gap, the impact's unmet Gbps, the max-throughput class stages the min-MLU routing proved
  without an LP (``stages skipped``) and the method that ran.

Cases: ``synthetic-200`` (200 sites, 39,800 all-pairs demands, SLOs on inference, overloaded),
``synthetic-200-noslo`` (the same without latency SLOs: ``auto`` escalates to column generation, issue #32's
case) and ``shipped`` (the shipped global scenario).

Usage: ``python benchmarks/bench_te_overhead.py [--cases synthetic-200 synthetic-200-noslo shipped]``. Say the
machine's load (``uptime``) beside any figure quoted: the ratio is measured side by side, the seconds are not
comparable across loads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES = ("synthetic-200", "synthetic-200-noslo", "shipped")


def network(case: str) -> Any:
    """The case's network."""
    import numpy as np

    from backbone.io import load_scenario
    from benchmarks.synthetic import synthetic_backbone

    if case == "shipped":
        return load_scenario()
    net = synthetic_backbone(int(case.split("-")[1]))
    if case.endswith("-noslo"):
        d = net.demands.copy()
        d["slo_rtt_ms"] = np.nan
        net = net.copy_with(demands=d)
    return net


def run_case(case: str, time_limit_s: float) -> dict[str, Any]:
    """The default ``te`` task on the case (``time_limit_s`` over the whole task), then the bare solve of its
    routing LP, in this process."""
    from backbone.solver.tasks.te import run_te_task
    from backbone.solver.te.options import TEOptions
    from benchmarks.bench_te import bare_solve
    from benchmarks.synthetic import synthetic_backbone

    opts = TEOptions(time_limit_s=time_limit_s)
    run_te_task(synthetic_backbone(12), opts, None, lambda f, m: None)  # JIT-compile the path kernels first
    net = network(case)
    t0, c0 = time.perf_counter(), time.process_time()
    task = run_te_task(net, opts, None, lambda f, m: None)
    total, total_cpu = time.perf_counter() - t0, time.process_time() - c0
    s = task.summary
    auto = s.auto.document() if s.auto is not None else {}  # the record's sections as their JSON
    impact = s.impact.document() if s.impact is not None else {}
    out: dict[str, Any] = {
        "case": case, "sites": len(net.sites), "demands": len(net.demands), "method": s.method,
        "paths_s": s.paths_seconds,
        "build_s": s.build_seconds, "solve_s": s.solve_seconds,
        "extract_s": s.extract_seconds, "routing_s": task.te.summary.total_seconds,
        "path_lp_s": auto.get("path_lp_seconds"), "colgen_s": auto.get("colgen_seconds"),
        "impact_s": s.impact_seconds or 0.0, "bound_s": s.bound_seconds,
        "total_s": total, "total_cpu_s": total_cpu, "mlu": s.mlu, "gap": s.gap, "status": s.status,
        "impact_unmet_gbps": impact.get("unmet_gbps"), "impact_status": impact.get("status"),
        "impact_solves": impact.get("solves"), "stages_skipped": impact.get("stages_skipped"),
    }
    out.update(bare_solve(net, opts.k_paths))
    return out


def python_path() -> str:
    """The child's ``PYTHONPATH``: this one's first (a checkout's namespace farm, ``.ci/namespace-farm``, so the child
    runs the same ``backbone`` as this process), then the repository root (``benchmarks``)."""
    return os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)


def child(case: str, timeout: float, time_limit_s: float) -> dict[str, Any] | None:
    """One case in a subprocess printing one JSON line; None on timeout."""
    try:
        p = subprocess.run([sys.executable, "benchmarks/bench_te_overhead.py", "--one", case,
                            "--time-limit", str(time_limit_s)], capture_output=True,
                           text=True, timeout=timeout, cwd=ROOT, env={**os.environ, "PYTHONPATH": python_path()})
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        raise RuntimeError(f"{case} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(v: Any, spec: str = ".2f") -> str:
    """A figure, or ``-`` when not measured."""
    return "-" if v is None else format(v, spec)


def skipped(stages: list[str] | None, solves: list[str] | None) -> str:
    """The skipped max-throughput class stages (``none`` when every stage ran; ``-`` when no max-throughput ran)."""
    if not solves or "max-throughput" not in solves:
        return "-"
    return ", ".join(s.removeprefix("max-throughput-") for s in stages or []) or "none"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per case")
    ap.add_argument("--time-limit", type=float, default=120.0,
                    help="the te task's time limit (default: the te default; on a loaded machine the impact may "
                         "hit it: its status column then says time_limit/feasible)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one, args.time_limit), default=str))
        return
    load = os.getloadavg()
    rows = []
    for case in args.cases:
        print(f"... {case}", file=sys.stderr, flush=True)
        rows.append((case, child(case, args.timeout, args.time_limit)))
    print(f"\nDefault `te` (min-MLU, k=4, auto, impact on; time limit {args.time_limit:g} s) vs a bare HiGHS solve of its routing LP "
          f"({os.cpu_count()} cores; load average before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})\n")
    head = ("case", "demands", "method", "path LP s (auto)", "paths s", "build s", "solve s", "extract s", "impact s", "bound s",
            "total s", "bare s", "total/bare", "total CPU s", "bare CPU s", "CPU total/bare", "MLU", "gap",
            "unmet Gbps (impact)", "impact status", "stages skipped")
    print(" | ".join(head))
    print("|".join("---" for _ in head))
    for case, o in rows:
        if o is None:
            print(f"{case} | > {args.timeout:.0f} s (timed out)")
            continue
        print(" | ".join([
            case, f"{o['demands']:,}", str(o["method"]), fmt(o["path_lp_s"]), fmt(o["paths_s"]), fmt(o["build_s"]), fmt(o["solve_s"]),
            fmt(o["extract_s"]), fmt(o["impact_s"]), fmt(o["bound_s"]), fmt(o["total_s"]), fmt(o["bare_s"]),
            f"{o['total_s'] / o['bare_s']:.2f}x" if o.get("bare_s") else "-", fmt(o["total_cpu_s"]),
            fmt(o.get("bare_cpu_s")), f"{o['total_cpu_s'] / o['bare_cpu_s']:.2f}x" if o.get("bare_cpu_s") else "-",
            fmt(o["mlu"], ".6g"), fmt(o["gap"], ".2e"), fmt(o["impact_unmet_gbps"], ",.1f"), str(o["impact_status"]),
            skipped(o.get("stages_skipped"), o.get("impact_solves"))]))
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
