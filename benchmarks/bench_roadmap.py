"""Time per period of ``backbone roadmap`` (placement, survivable design, the rest), model sizes and the gap.

Usage: ``python benchmarks/bench_roadmap.py [SCENARIO] [--periods 8] [--period quarter] [--workers 2]
[--time-limit 20] [--out DIR] [--set OPTION=JSON ...]`` (``--set`` sets any roadmap option, e.g.
``--set bound_time_limit_s=600``). Prints wall and CPU seconds (on a shared machine the wall clock also
counts other processes' time).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _gap(design: Any) -> str:
    """A period design's gap, "(restricted)" beside it where it is the MIP's restricted bound."""
    from backbone.solver.roadmap.rolling import design_bound

    _, gap, restriction = design_bound(design)
    return "-" if gap is None else f"{100 * gap:.2f} %" + (" (restricted)" if restriction else "")


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    from backbone.io import load_scenario
    from backbone.solver.roadmap.summary import RoadmapSummary
    from backbone.solver.tasks import run_task

    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?", default=None)
    ap.add_argument("--periods", type=int, default=8)
    ap.add_argument("--period", default="quarter")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=None, help="design.time_limit_s per period")
    ap.add_argument("--out", default=None)
    ap.add_argument("--set", action="append", default=[], metavar="OPTION=JSON",
                    help="a roadmap option, e.g. --set bound_time_limit_s=600 (repeatable)")
    args = ap.parse_args()
    console = Console(width=220)  # the table is wide; a pipe would fold it to 80 columns
    t0, c0, load0 = time.perf_counter(), _cpu_s(), os.getloadavg()
    net = load_scenario(args.scenario)
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-roadmap-"))
    options: dict[str, object] = {"periods": args.periods, "period": args.period,
                                  "failures": {"workers": args.workers}}
    if args.time_limit is not None:
        options["design"] = {"time_limit_s": args.time_limit}
    for item in args.set:
        name, _, value = item.partition("=")
        options[name] = json.loads(value)
    if args.period == "year":
        options["start"] = "2027"
    last = [0.0]

    def progress(f: float, m: str) -> None:  # a plain line every 15 s (a run stopped early still says where)
        now = time.perf_counter() - t0
        if now - last[0] >= 15.0:
            last[0] = now
            print(f"[{now:7.1f} s] {100 * f:5.1f} % {m}", file=sys.stderr, flush=True)

    res = run_task("roadmap", net, options, out, progress=progress)
    total, cpu = time.perf_counter() - t0, _cpu_s() - c0
    s = res.summary
    assert isinstance(s, RoadmapSummary)  # typed: read its fields (roadmap.json is its document)
    t = Table(title=f"backbone roadmap on {net.name} ({len(net.sites)} sites, {len(net.links)} links, "
                    f"{len(net.demands)} demands, {len(net.srlgs)} SRLGs, {len(net.candidates)} candidates; "
                    f"{args.periods} {args.period}s, {args.workers} workers)")
    for col in ("period", "placement s", "placement rows x cols (int)", "design s", "design", "iterations",
                "design MIP rows x cols (int)", "gap", "builds online", "survives", "excused", "violated",
                "period s"):
        t.add_column(col, justify="left" if col in ("period", "design") else "right")
    for p in s.periods:
        pm, dm, d, sv = p.placement_model, p.design.model, p.design, p.survivability
        t.add_row(p.period, f"{p.placement_seconds:.1f}",
                  f"{pm.get('rows', 0):,} x {pm.get('cols', 0):,} ({pm.get('integer_cols', 0):,})",
                  f"{d.seconds:.1f}", d.mode, str(d.iterations),
                  f"{dm.get('rows', 0):,} x {dm.get('cols', 0):,} ({dm.get('integer_cols', 0):,})" if dm else "-",
                  _gap(d), str(len(p.builds)), f"{sv.survived}/{sv.states}", str(len(sv.not_survivable)),
                  str(len(sv.violated)), f"{p.seconds:.1f}")
    console.print(t)
    b, step = s.bound, s.step_bounds

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.2f} %"

    def musd(v: float | None) -> str:
        return "-" if v is None else f"{v / 1e6:,.1f} M"

    lp = b.model
    console.print(f"status {s.status}; total capex {musd(s.total_capex_usd)} USD (backbone "
                  f"{musd(s.network_capex_usd)}, discounted {musd(s.discounted_network_capex_usd)}); "
                  f"lower bound {musd(b.lower_bound_usd)} ({b.status}, {b.seconds:.1f} s, LP "
                  f"{lp.get('rows', 0):,} x {lp.get('cols', 0):,}, {b.failure_states} failure-state "
                  f"blocks; period floors {', '.join(musd(x) for x in b.period_floors_usd) or '-'}"
                  f"{'; ' + b.note if b.note else ''}), "
                  f"gap {pct(s.gap)}; per-period step bounds "
                  f"{musd(step.network_capex_lower_bound_usd)}, step gap {pct(step.gap)}; planning "
                  f"{s.seconds:.1f} s, total with outputs {total:.1f} s wall, {cpu:.1f} s CPU (this process and its "
                  f"sweep processes); load average (1/5/15 min) at the start {' / '.join(f'{x:.1f}' for x in load0)}, "
                  f"at the end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}; time budget "
                  f"{s.time_budget}; {out}")


if __name__ == "__main__":
    main()
