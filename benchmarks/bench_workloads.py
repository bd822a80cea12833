"""Seconds per stage of ``backbone plan`` with and without the scenario's training workloads (issue #29).

Runs the plan twice on a scenario (default: the shipped one): with ``place.scenario_jobs`` off (the training jobs
are neither placed nor routed) and with the defaults (``place.scenario_jobs`` on: the jobs placed with inference,
their sync, checkpoint and dataset flows and dataset growth routed, failed and designed for). Prints one table:
wall seconds per stage side by side, each run's total wall and CPU seconds (the process and the failure workers it
waited for: less sensitive to other work on a shared machine), and the workload figures of the second run.

Usage: ``python benchmarks/bench_workloads.py [SCENARIO] [--workers 2] [--markdown PATH]``
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _cpu_s() -> float:
    """CPU seconds of this process and the children it has waited for (the failure workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _run(net, options: dict, out: Path) -> tuple[dict, float, float]:
    from backbone.solver.tasks import run_task

    t0, c0 = time.perf_counter(), _cpu_s()
    res = run_task("plan", net, options, out)
    summary = res.summary  # a typed PlanSummary (pydantic): its plan.json form
    return summary.model_dump(mode="json"), time.perf_counter() - t0, _cpu_s() - c0


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    from backbone.io import load_scenario

    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--markdown", default=None, help="also write the table as Markdown to this file")
    args = ap.parse_args()
    net = load_scenario(args.scenario)
    base = {"failures": {"workers": args.workers}}
    tmp = Path(tempfile.mkdtemp(prefix="bench-workloads-"))
    load = os.getloadavg()
    without, t_without, cpu_without = _run(net, {**base, "place": {"scenario_jobs": False}}, tmp / "without")
    with_jobs, t_with, cpu_with = _run(net, base, tmp / "with")
    load_after = os.getloadavg()
    title = (f"backbone plan on {net.name}: {len(net.training_jobs)} training jobs, {len(net.datasets)} datasets "
             f"(load {load[0]:.1f} before, {load_after[0]:.1f} after)")
    t = Table(title=title)
    for col in ("stage", "without workloads s", "with workloads s", "note (with)"):
        t.add_column(col, justify="left" if col in ("stage", "note (with)") else "right")
    rows = []
    w_stages = {r["stage"]: r for r in with_jobs["stages"]}
    for r in without["stages"]:
        w = w_stages.get(r["stage"], {})
        rows.append((r["stage"], f"{r['seconds']:.1f}", f"{w.get('seconds', float('nan')):.1f}",
                     str(w.get("note") or "")[:80]))
    rows.append(("total", f"{t_without:.1f}", f"{t_with:.1f}", f"status {without['status']} / {with_jobs['status']}"))
    rows.append(("total CPU s (process and its workers)", f"{cpu_without:.1f}", f"{cpu_with:.1f}", ""))
    for row in rows:
        t.add_row(*row)
    console = Console()
    console.print(t)
    place = __import__("json").loads((tmp / "with" / "place.json").read_text())
    by_class = place.get("workload_gbps_by_class") or {}
    console.print("with workloads: jobs placed " + str(len({r["job"] for r in place.get("training", [])}))
                  + "; workload Gbps by class " + ", ".join(f"{k} {v:,.1f}" for k, v in sorted(by_class.items())))
    if args.markdown:
        lines = [f"# {title}", "", "| stage | without workloads s | with workloads s | note (with) |",
                 "|---|---:|---:|---|"] + [f"| {' | '.join(r)} |" for r in rows]
        Path(args.markdown).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
