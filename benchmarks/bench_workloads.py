"""Seconds per stage of ``backbone plan`` with and without the scenario's training workloads (issue #29).

Runs the plan twice on a scenario (default: the shipped one): with ``place.scenario_jobs`` off (the training jobs
are neither placed nor routed) and with the defaults (``place.scenario_jobs`` on: the jobs placed with inference,
their sync, checkpoint and dataset flows and dataset growth routed, failed and designed for). Prints one table:
seconds per stage side by side, and the workload figures of the second run.

Usage: ``python benchmarks/bench_workloads.py [SCENARIO] [--workers 2] [--markdown PATH]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if TYPE_CHECKING:
    from backbone.solver.tasks.summaries import PlanSummary


def _run(net, options: dict, out: Path) -> tuple[PlanSummary, float]:
    from backbone.solver.tasks import run_task
    from backbone.solver.tasks.summaries import PlanSummary

    t0 = time.perf_counter()
    res = run_task("plan", net, options, out)
    assert isinstance(res.summary, PlanSummary)  # typed: read its fields (plan.json is its document)
    return res.summary, time.perf_counter() - t0


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
    without, t_without = _run(net, {**base, "place": {"scenario_jobs": False}}, tmp / "without")
    with_jobs, t_with = _run(net, base, tmp / "with")
    load_after = os.getloadavg()
    title = (f"backbone plan on {net.name}: {len(net.training_jobs)} training jobs, {len(net.datasets)} datasets "
             f"(load {load[0]:.1f} before, {load_after[0]:.1f} after)")
    t = Table(title=title)
    for col in ("stage", "without workloads s", "with workloads s", "note (with)"):
        t.add_column(col, justify="left" if col in ("stage", "note (with)") else "right")
    rows = []
    w_stages = {r.stage: r for r in with_jobs.stages}
    for r in without.stages:
        w = w_stages.get(r.stage)
        rows.append((r.stage, f"{r.seconds:.1f}", f"{w.seconds if w else float('nan'):.1f}",
                     ((w.note if w else "") or "")[:80]))
    rows.append(("total", f"{t_without:.1f}", f"{t_with:.1f}", f"status {without.status} / {with_jobs.status}"))
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
