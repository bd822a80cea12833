"""Survivability-check benchmark: the independent edge LP over every failure state of a planned backbone.

Reads a plan's output folder (``backbone plan --out DIR``): ``DIR/scenario_after`` and the excused states of
``DIR/plan.json``, runs :func:`backbone.solver.checks.survivability.check_survivability` for the plan's failure
kind (and ``--kind`` others), and prints per kind the total time, the per-state seconds (median, 90th
percentile, max), the violations, and the slowest states.

Usage: ``python benchmarks/bench_verify.py DIR [--kind link] [--top 10]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    from backbone.io import load_scenario
    from backbone.solver.checks.survivability import check_survivability

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plan_dir", type=Path)
    ap.add_argument("--kind", action="append", default=[], help="also check this failure kind (no excuses)")
    ap.add_argument("--top", type=int, default=10, help="slowest states listed")
    args = ap.parse_args()
    plan = json.loads((args.plan_dir / "plan.json").read_text(encoding="utf-8"))
    net = load_scenario(args.plan_dir / "scenario_after")
    sv = plan["survivability"]
    runs = [(sv["failure_kind"], sv["not_survivable"]), *((k, []) for k in args.kind if k != sv["failure_kind"])]
    console = Console()
    table = Table(title=f"independent survivability check of {args.plan_dir}")
    for col in ("kind", "states", "excused", "total s", "median s", "p90 s", "max s", "violations"):
        table.add_column(col, justify="right" if col != "kind" else "left")
    slow: list[tuple[float, str]] = []
    for kind, excused in runs:
        t0 = time.perf_counter()
        report = check_survivability(net, kind, excused)
        total_s = time.perf_counter() - t0
        rows = report.to_dict()["states"]
        secs = np.array([r["seconds"] for r in rows])
        table.add_row(kind, str(len(rows)), str(len(excused)), f"{total_s:.2f}", f"{np.median(secs):.3f}",
                      f"{np.quantile(secs, 0.9):.3f}", f"{secs.max():.3f}", str(report.n_violations))
        slow += [(float(r["seconds"]), r["scenario"]) for r in rows]
    console.print(table)
    for s, sid in sorted(slow, reverse=True)[:args.top]:
        console.print(f"  {s:.3f} s  {sid}")


if __name__ == "__main__":
    main()
