"""Peak memory of TE on the synthetic backbones (issue 15: "the 400-site synthetic case should peak at <= 2 GB").

Each (sites, objective, method) runs in its own subprocess (:func:`benchmarks.memcap.run_capped`: a
wall-clock cap and a resident-memory cap, so a run that does not fit is reported, not left to swap the
shared machine). The network is :func:`benchmarks.synthetic.synthetic_backbone` (all-pairs gravity
demand, a quarter of it inference traffic with latency SLOs), the one ``benchmarks/bench_te.py`` uses.

Two modes:

* ``task`` (default): :func:`backbone.solver.tasks.te.run_te_task` with the default
  :class:`~backbone.solver.te.options.TEOptions` except the objective and method -- exactly what
  ``backbone te SCENARIO --json`` runs once the scenario is loaded, including the impact figures
  (a second, max-throughput solve when the MLU is above 1) and the result tables;
* ``solve``: :func:`backbone.solver.te.solve_te` alone (``bench_te.py``'s call, the default time limit).

``peak GB`` is the child's own peak resident set (``ru_maxrss``: the interpreter, imports, network and
solve together); ``base GB`` the same just before the solve (interpreter, imports and the network).

Usage::

    python -m benchmarks.bench_te_memory --sizes 400 --objectives min-mlu max-throughput --methods auto exact
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

from benchmarks.memcap import run_capped

ROOT = Path(__file__).resolve().parent.parent


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _rss_gb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30


def run_one(n: int, objective: str, method: str, mode: str, time_limit_s: float) -> dict[str, Any]:
    """One solve in this process; returns the table row."""
    from backbone.errors import BackboneError
    from backbone.solver.tasks.te import run_te_task
    from backbone.solver.te import TEOptions, solve_te
    from benchmarks.synthetic import synthetic_backbone

    net = synthetic_backbone(n)
    opts = TEOptions(objective=objective, method=method, time_limit_s=time_limit_s)  # type: ignore[arg-type]
    row: dict[str, Any] = {"sites": n, "links": len(net.links), "demands": len(net.demands), "objective": objective,
                           "requested": method, "mode": mode, "base_gb": _peak_gb()}
    phases: list[tuple[str, float, float, float]] = []
    t0 = time.perf_counter()

    def progress(_: float, message: str) -> None:  # resident set and peak so far at each progress step
        phases.append((message, time.perf_counter() - t0, _rss_gb(), _peak_gb()))

    row["phases"] = phases
    try:
        if mode == "task":
            s = run_te_task(net, opts, None, progress).summary
        else:
            s = solve_te(net, opts, progress=progress).summary
    except BackboneError as exc:
        row.update(status=f"error: {exc}", seconds=time.perf_counter() - t0, peak_gb=_peak_gb())
        return row
    impact = s.impact.document() if s.impact is not None else {}  # the section as its JSON
    row.update(status=s.status, method=s.method, seconds=time.perf_counter() - t0, peak_gb=_peak_gb(),
               objective_value=s.objective_value, mlu=s.mlu, bound=s.lower_bound, gap=s.gap,
               impact_status=impact.get("status"), impact_solves=impact.get("solves"),
               load_avg=os.getloadavg()[0])
    return row


def _fmt(v: Any, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[400])
    ap.add_argument("--objectives", nargs="+", default=["min-mlu"])
    ap.add_argument("--methods", nargs="+", default=["auto"], help="auto (the default), exact, colgen, pop")
    ap.add_argument("--mode", choices=["task", "solve"], default="task")
    ap.add_argument("--time-limit", type=float, default=120.0, help="the solve's time limit (TEOptions default 120 s)")
    ap.add_argument("--cap", type=float, default=900.0, help="wall-clock cap per run, seconds")
    ap.add_argument("--cap-gb", type=float, default=8.0, help="resident-memory cap per run, GB")
    ap.add_argument("--one", nargs=3, metavar=("SITES", "OBJECTIVE", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(int(args.one[0]), args.one[1], args.one[2], args.mode, args.time_limit)))
        return
    rows = []
    for n in args.sizes:
        for objective in args.objectives:
            for method in args.methods:
                cmd = [sys.executable, "-m", "benchmarks.bench_te_memory", "--one", str(n), objective, method,
                       "--mode", args.mode, "--time-limit", str(args.time_limit)]
                c = run_capped(cmd, args.cap, args.cap_gb, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
                if c.outcome == "ok":
                    row = json.loads(c.stdout.strip().splitlines()[-1])
                else:
                    why = {"memory": f"did not fit: > {args.cap_gb:g} GB", "timeout": f"> {args.cap:.0f} s",
                           "error": f"exit {c.returncode}: {(c.stderr.strip().splitlines() or [''])[-1][:80]}"}
                    row = {"sites": n, "objective": objective, "requested": method, "status": why[c.outcome],
                           "seconds": c.seconds, "peak_gb": c.peak_gb}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    load = os.getloadavg()
    print(f"\nTE peak memory on synthetic backbones (mode {args.mode}, time limit {args.time_limit:g} s); "
          f"cpu count {os.cpu_count()}, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (shared machine)")
    head = (f"{'sites':>5} {'demands':>8} {'objective':>14} {'method':>13} {'status':>10} {'seconds':>8} "
            f"{'base GB':>7} {'peak GB':>7} {'MLU/value':>11} {'bound':>9} {'gap':>8}  impact")
    print(head)
    print("-" * len(head))
    for r in rows:
        method = f"{r['requested']}>{r['method']}" if r.get("method") else r["requested"]
        gap = None if r.get("gap") is None else 100 * r["gap"]
        impact = "" if not r.get("impact_solves") else f"{'+'.join(r['impact_solves'])} ({r['impact_status']})"
        status = r["status"] if len(r["status"]) <= 10 else r["status"][:60]
        print(f"{r['sites']:>5} {_fmt(r.get('demands'), ','):>8} {r['objective']:>14} {method:>13} {status:>10} "
              f"{r['seconds']:>8.1f} {_fmt(r.get('base_gb'), '.2f'):>7} {r['peak_gb']:>7.2f} "
              f"{_fmt(r.get('objective_value'), '.5f'):>11} {_fmt(r.get('bound'), '.5f'):>9} {_fmt(gap, '.3f'):>7}%"
              f"  {impact}")
    print("\nWhere the peak grows (progress steps of each run: seconds, resident GB, peak GB so far; steps that "
          "raised the peak by >= 0.05 GB, and the last one)")
    for r in rows:
        last = r.get("base_gb", 0.0)
        steps = r.get("phases") or []
        shown = [p for i, p in enumerate(steps) if p[3] - (steps[i - 1][3] if i else last) >= 0.05 or i == len(steps) - 1]
        print(f"  {r['sites']} {r['objective']} {r['requested']}: " + "; ".join(
            f"{m[:48]} @{t:.0f}s {rss:.2f}/{peak:.2f}" for m, t, rss, peak in shown))


if __name__ == "__main__":
    main()
