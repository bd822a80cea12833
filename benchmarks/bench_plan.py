"""Time per stage of ``backbone plan`` on a scenario (default: the shipped one), and per design iteration.

Usage: ``python benchmarks/bench_plan.py [SCENARIO] [--workers 2] [--out DIR]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    from backbone.io import load_scenario
    from backbone.solver.tasks import run_task
    from backbone.solver.tasks.summaries import PlanSummary

    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    console = Console()
    t0 = time.perf_counter()
    net = load_scenario(args.scenario)
    load_s = time.perf_counter() - t0
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-plan-"))
    res = run_task("plan", net, {"failures": {"workers": args.workers}}, out)
    total = time.perf_counter() - t0
    s = res.summary
    assert isinstance(s, PlanSummary)  # typed: read its fields (plan.json is its document)
    t = Table(title=f"backbone plan on {net.name} ({len(net.sites)} sites, {len(net.links)} links, "
                    f"{len(net.demands)} demands, {len(net.srlgs)} SRLGs; {args.workers} workers)")
    t.add_column("stage")
    t.add_column("seconds", justify="right")
    t.add_column("status")
    t.add_column("note")
    t.add_row("load scenario", f"{load_s:.1f}", "", "")
    for row in s.stages:
        t.add_row(row.stage, f"{row.seconds:.1f}", str(row.status), (row.note or "")[:70])
    t.add_row("planned backbone", f"{s.stage_seconds.get('after', 0.0):.1f}", "",
              "assess, scenario_after/, --verify check")
    t.add_row("report", f"{s.stage_seconds.get('report', 0.0):.1f}", "", "maps, charts, report.html")
    t.add_row("[bold]total[/]", f"[bold]{total:.1f}[/]", s.status, str(out))
    console.print(t)
    console.print(s.headline)
    design = json.loads((out / "design.json").read_text()) if (out / "design.json").exists() else {}
    it = Table(title="design iterations (sweep: every state of the design before; MIP: the working set)")
    for col in ("iteration", "states in model", "added", "violated", "routes open", "sweep s", "MIP s",
                "cost USD", "restricted bound USD", "MIP rows x cols"):
        it.add_column(col, justify="right")
    for r in design.get("iterations", []):
        m = r.get("model") or {}
        it.add_row(str(r["iteration"]), str(r["working_states"]), str(r["added"]), str(r["violated"]),
                   ",".join(str(d.get("candidates_open", "")) for d in r.get("designs_tried", [])), f"{r['sweep_seconds']:.1f}", f"{r['mip_seconds']:.1f}",
                   f"{r['cost_usd']:,.0f}", "-" if r["restricted_bound_usd"] is None else f"{r['restricted_bound_usd']:,.0f}",
                   f"{m.get('rows', 0):,} x {m.get('cols', 0):,}")
    console.print(it)
    if design:
        b, r = design.get("bound") or {}, design.get("restricted_optimum") or {}
        bt = Table(title="design cost, its true lower bound (LP over every candidate and path) and the restricted "
                         "optimum")
        for col in ("cost USD", "lower bound USD", "gap", "bound status", "bound s", "LP states", "restricted "
                    "optimum USD", "restricted bound USD", "restriction"):
            bt.add_column(col, justify="right")
        lb, gap = design.get("lower_bound_usd"), design.get("gap")
        bt.add_row(f"{design['cost_usd']:,.0f}", "-" if lb is None else f"{lb:,.0f}",
                   "-" if gap is None else f"{100 * gap:.1f} %", str(b.get("status")), f"{b.get('seconds', 0):.1f}",
                   str(b.get("states")), f"{r.get('cost_usd', 0):,.0f}",
                   "-" if r.get("bound_usd") is None else f"{r['bound_usd']:,.0f}", str(r.get("restriction")))
        console.print(bt)
        if b.get("note"):
            console.print(f"bound: {b['note']}")


if __name__ == "__main__":
    main()
