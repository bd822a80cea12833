"""Solver backends side by side on the programs the tool really builds: why each backend exists.

Usage::

    python -m benchmarks.bench_backends                       # every program, every installed backend, 60 s each
    python -m benchmarks.bench_backends --time-limit 20 --programs te,design-lp --markdown docs/benchmarks/backends.md

The programs are captured at the backend seam while the tool runs its own default commands on the shipped
scenario (so they are exactly what HiGHS is given in production), plus one SNDlib design from
``../shared/conformance`` when it is present:

- ``te``: the largest LP of ``backbone te --objective min-mlu --k-paths 4 --method exact`` on the shipped
  scenario (its stage is named in the table: the min-MLU LP, or a later stage such as the latency tie-break);
- ``te-200``: the same on the 200-site synthetic backbone (39,800 demands, 5x the default demand so it is
  overloaded), the size where the choice of LP method starts to matter;
- ``place``: the GPU placement MIP of ``backbone place``;
- ``design``: SNDlib ``polska`` U-U-M-N-C-A-N-N (modular capacity, single-link survivability), a MIP;
- ``design-lp``: its LP relaxation.

Each program is then solved by every installed backend under the same wall-clock limit, one after the other,
and the table gives status, objective, proven bound, gap and seconds beside HiGHS's. The objective column is
recomputed from the returned x (``LinearProgram.evaluate``) with its worst row violation, so a backend that
returns a wrong answer shows it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.report import add_markdown_option, markdown_report

ROOT = Path(__file__).resolve().parent.parent
SNDLIB = ROOT.parent / "shared" / "conformance" / "sndlib" / "native"
PROGRAMS = ("te", "te-200", "place", "design", "design-lp")


def capture(run: Any) -> list[Any]:
    """The programs HiGHS is given while ``run()`` runs, in order (copies)."""
    from backbone.solver.backends.highs import HighsBackend

    seen: list[Any] = []
    original = HighsBackend.solve

    def spy(self: Any, lp: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(lp.copy())
        return original(self, lp, *args, **kwargs)

    HighsBackend.solve = spy  # type: ignore[method-assign]
    try:
        run()
    finally:
        HighsBackend.solve = original  # type: ignore[method-assign]
    return seen


def largest(programs: list[Any], mip: bool) -> Any:
    """The largest captured program (by nonzeros) that is (or is not) a MIP."""
    pool = [p for p in programs if p.is_mip == mip]
    return max(pool, key=lambda p: p.A.nnz) if pool else None


def build_programs(names: list[str]) -> dict[str, Any]:
    """name -> LinearProgram, captured from the tool's own runs."""
    import backbone

    out: dict[str, Any] = {}
    net = backbone.load_scenario()
    if "te" in names:
        progs = capture(lambda: backbone.solve_te(net, objective="min-mlu", k_paths=4, method="exact",
                                                  time_limit_s=600))
        out["te"] = largest(progs, mip=False)
    if "te-200" in names:
        from benchmarks.synthetic import synthetic_backbone

        big = synthetic_backbone(200, seed=0)
        big = big.copy_with(demands=big.demands.assign(demand_gbps=big.demands["demand_gbps"] * 5.0))
        progs = capture(lambda: backbone.solve_te(big, objective="min-mlu", k_paths=4, method="exact",
                                                  time_limit_s=600))
        out["te-200"] = largest(progs, mip=False)
    if "place" in names:
        out["place"] = largest(capture(lambda: backbone.place(net)), mip=True)
    if {"design", "design-lp"} & set(names):
        path = SNDLIB / "polska" / "polska.txt"
        if not path.exists():
            print(f"skip design: {path} not found (../shared/conformance is absent)", file=sys.stderr)
        else:
            from backbone.io.sndlib import parse_model_code, parse_sndlib
            from backbone.solver.design.formulation import build_design_lp
            from backbone.solver.design.sndlib import build_instance

            lp = build_design_lp(build_instance(parse_sndlib(path), parse_model_code("U-U-M-N-C-A-N-N"))).lp
            if "design" in names:
                out["design"] = lp
            if "design-lp" in names:
                out["design-lp"] = lp.relaxed()
    return {k: v for k, v in out.items() if v is not None}


def run_one(lp: Any, backend: str, time_limit_s: float) -> dict[str, Any]:
    """Solve ``lp`` with ``backend``; one table row."""
    import numpy as np

    from backbone.errors import BackboneError
    from backbone.solver.core.problem import solve

    t0 = time.perf_counter()
    try:
        sol = solve(lp, backend=backend, time_limit_s=time_limit_s, mip_gap=1e-4)
    except BackboneError as exc:
        return {"status": f"error: {str(exc)[:60]}", "seconds": time.perf_counter() - t0}
    row: dict[str, Any] = {"status": sol.status.value, "seconds": time.perf_counter() - t0,
                           "bound": sol.bound, "gap": sol.gap}
    if sol.x is not None and np.all(np.isfinite(sol.x)):
        row["objective"] = lp.evaluate(sol.x)
        row["violation"] = lp.max_violation(sol.x)
    return row


def table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown table lines."""
    def num(v: Any, fmt: str) -> str:
        return "" if v is None else format(v, fmt)

    lines = ["| program | rows x cols (integer) | backend | status | objective | bound | gap | max row violation | "
             "seconds | vs HiGHS |", "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['program']} | {r['size']} | {r['backend']} | {r['status']} | {num(r.get('objective'), '.6g')} "
                     f"| {num(r.get('bound'), '.6g')} | {num(r.get('gap'), '.2%')} | {num(r.get('violation'), '.1e')} "
                     f"| {r['seconds']:.1f} | {num(r.get('ratio'), '.1f')}x |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table."""
    from backbone.solver.backends import BACKENDS, get_backend

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve")
    ap.add_argument("--programs", default=",".join(PROGRAMS), help=f"comma-separated, of {', '.join(PROGRAMS)}")
    ap.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated backend names")
    add_markdown_option(ap)
    args = ap.parse_args(argv)
    names = [n for n in args.programs.split(",") if n]
    backends = [b for b in args.backends.split(",") if b]
    with markdown_report(args.markdown, "Solver backends side by side", preformatted=False):
        programs = build_programs(names)
        rows: list[dict[str, Any]] = []
        for name, lp in programs.items():
            stats = lp.stats()
            size = f"{stats['rows']:,} x {stats['cols']:,} ({int(lp.integrality.sum()):,})"
            highs_s = None
            for backend in backends:
                ok, why = get_backend(backend).available()
                if not ok:
                    rows.append({"program": name, "size": size, "backend": backend, "status": f"unavailable: {why}",
                                 "seconds": 0.0})
                    continue
                if lp.is_mip and not get_backend(backend).supports_mip:
                    continue
                row = {"program": f"{name} ({lp.name})", "size": size, "backend": backend, **run_one(lp, backend, args.time_limit)}
                if backend == "highs":
                    highs_s = row["seconds"]
                if highs_s:
                    row["ratio"] = row["seconds"] / highs_s
                rows.append(row)
                print(f"{name} {backend}: {row['status']} {row['seconds']:.1f} s", file=sys.stderr)
        print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
